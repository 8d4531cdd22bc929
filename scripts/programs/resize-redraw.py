#!/usr/bin/env python3
"""A program that keeps printing while its window is resized: coloured lines of every length
(many wider than the pane, so they wrap and reflow), wide characters and emoji, a status line
redrawn in place. Prints `resize-redraw done` after SECONDS and then waits for input.

Usage: resize-redraw.py SECONDS
"""
import sys
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
out = sys.stdout
end = time.monotonic() + seconds
n = 0
words = ["alpha", "日本語", "\x1b[31mred\x1b[39m", "\x1b[1mbold\x1b[22m", "👍", "e\u0301", "\x1b[44m  \x1b[49m"]
while time.monotonic() < end:
    n += 1
    line = " ".join(words[(n + i) % len(words)] for i in range(n % 37))
    out.write(f"\x1b[38;5;{n % 200}m{n:5}\x1b[m {line}\r\n")
    if n % 5 == 0:
        out.write(f"\x1b7\x1b[1;1H\x1b[7m status {n} \x1b[m\x1b[K\x1b8")
    out.flush()
    time.sleep(0.004)
out.write("resize-redraw done\r\n")
out.flush()
sys.stdin.readline()
