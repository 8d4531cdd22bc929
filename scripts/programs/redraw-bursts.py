#!/usr/bin/env python3
"""A full-screen program that redraws the alternate screen in bursts, then settles.

Used by the transcript recordings and the live tests: it behaves like an agent TUI during a
redraw storm (many whole-screen frames back to back, with colours and wide characters), then
shows a final frame and waits. Pressing a key leaves the alternate screen and exits.

usage: redraw-bursts.py [BURSTS [FRAMES_PER_BURST [PAUSE_SECONDS]]]
"""

import os
import shutil
import sys
import termios
import time
import tty


def frame(n: int, cols: int, rows: int, label: str) -> bytes:
    out = ["\x1b[H"]
    out.append(f"\x1b[1;37;44m {label} frame {n:5d} \x1b[0m".ljust(cols + 11))
    glyphs = "─│┌┐└┘日本語😀é"
    for row in range(1, rows - 1):
        text = f"{row:3d} " + "".join(glyphs[(row + n + i) % len(glyphs)] for i in range(cols // 3))
        colour = 31 + (row + n) % 7
        out.append(f"\x1b[{row + 1};1H\x1b[{colour}m{text}\x1b[0m\x1b[K")
    out.append(f"\x1b[{rows};1H\x1b[7m status: frame {n} \x1b[0m\x1b[K")
    return "".join(out).encode()


def main() -> None:
    bursts = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    per_burst = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    pause = float(sys.argv[3]) if len(sys.argv) > 3 else 0.2
    cols, rows = shutil.get_terminal_size()
    out = sys.stdout.buffer
    out.write(b"\x1b[?1049h\x1b[?25l\x1b[2J")
    n = 0
    for _ in range(bursts):
        for _ in range(per_burst):
            n += 1
            out.write(frame(n, cols, rows, "burst"))
            out.flush()
        time.sleep(pause)
    out.write(b"\x1b[2J" + frame(n, cols, rows, "settled"))
    out.flush()
    saved = termios.tcgetattr(0) if os.isatty(0) else None
    try:
        if saved is not None:
            tty.setcbreak(0)  # one key press ends it, no Enter needed
        os.read(0, 1)
    except KeyboardInterrupt:
        pass
    finally:
        if saved is not None:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
    out.write(b"\x1b[?25h\x1b[?1049l")
    out.flush()


if __name__ == "__main__":
    main()
