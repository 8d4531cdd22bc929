#!/usr/bin/env python3
"""Renders the README's picture of the tmux plugin from a real tmux: an isolated server with the
plugin loaded and four fake agents in different states, a real client attached in a pseudo
terminal, the agents board opened with its key; the client's screen, status line and popup
included, is drawn into a PNG.

    python3 -m venv /tmp/shot && /tmp/shot/bin/pip install pillow pyte
    /tmp/shot/bin/python scripts/screenshot.py target/debug/panectl docs/plugin.png

Needs tmux and python3; touches no tmux server but its own.
"""

import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pyte
from PIL import Image, ImageDraw, ImageFont

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIDTH, HEIGHT = 132, 30
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
PALETTE = {
    "black": (40, 42, 54), "red": (255, 85, 85), "green": (80, 250, 123),
    "brown": (241, 250, 140), "yellow": (241, 250, 140), "blue": (98, 114, 164),
    "magenta": (255, 121, 198), "cyan": (139, 233, 253), "white": (248, 248, 242),
}
DEFAULT_FG, DEFAULT_BG = (230, 230, 230), (30, 31, 41)


def colour(name, default):
    if name == "default":
        return default
    if name in PALETTE:
        return PALETTE[name]
    if len(name) == 6:
        try:
            return tuple(int(name[i:i + 2], 16) for i in (0, 2, 4))
        except ValueError:
            pass
    return default


def main():
    panectl, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    work = tempfile.mkdtemp(prefix="panectl-shot-")
    socket = f"panectl-shot-{os.getpid()}"
    env = dict(os.environ, HOME=work, XDG_RUNTIME_DIR=f"{work}/run", XDG_STATE_HOME=f"{work}/state",
               XDG_CONFIG_HOME=f"{work}/config", TMUX_TMPDIR=work, TERM="xterm-256color",
               LC_ALL="C.UTF-8")
    env.pop("TMUX", None)
    os.makedirs(f"{work}/config/panectl/providers")
    shutil.copy(f"{ROOT}/scripts/programs/fake_agent.toml", f"{work}/config/panectl/providers/")
    agent = f"{ROOT}/scripts/programs/fake_agent.py"
    with open(f"{work}/tmux.conf", "w") as conf:
        conf.write(f"""set -g default-shell /bin/sh
set -g status-style 'bg=#44475a,fg=#f8f8f2'
set -g status-right ' agents: #{{panectl_summary}} '
set -g status-right-length 80
set -g @panectl-bin '{panectl}'
set -g @panectl-window-status on
run-shell '{ROOT}/panectl.tmux'
""")

    def tmux(*args):
        return subprocess.run(["tmux", "-L", socket, *args], env=env, check=True,
                               capture_output=True, text=True).stdout

    subprocess.run(["tmux", "-L", socket, "-f", f"{work}/tmux.conf", "new-session", "-d", "-s", "work",
                    "-n", "reviewer", "-x", str(WIDTH), "-y", str(HEIGHT),
                    f"exec python3 {agent} {work}/log 0.3"], env=env, check=True)
    try:
        tmux("new-window", "-d", "-n", "tests", f"exec python3 {agent} {work}/log 600")
        tmux("new-window", "-d", "-n", "docs", f"exec python3 {agent} {work}/log 0.3")
        tmux("new-window", "-d", "-n", "refactor", f"exec python3 {agent} {work}/log 0.3")
        tmux("new-window", "-d", "-n", "shell")
        tmux("run-shell", f"{ROOT}/panectl.tmux")
        time.sleep(3)

        def send(window, text):
            subprocess.run([panectl, "-L", socket, "input", f"work:{window}", text], env=env, check=True)

        send("reviewer", "ASK may I run the migrations?")
        send("tests", "run the test suite")
        send("docs", "update the API reference")
        time.sleep(4)

        screen = pyte.Screen(WIDTH, HEIGHT)
        stream = pyte.ByteStream(screen)
        pid, fd = pty.fork()
        if pid == 0:
            os.execvpe("tmux", ["tmux", "-L", socket, "attach", "-t", "work"], env)
        import fcntl, struct, termios
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", HEIGHT, WIDTH, 0, 0))
        stop = threading.Event()

        def pump():
            while not stop.is_set():
                ready, _, _ = select.select([fd], [], [], 0.1)
                if ready:
                    try:
                        stream.feed(os.read(fd, 65536))
                    except OSError:
                        return

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        time.sleep(2)
        os.write(fd, b"\x02A")  # prefix A: the agents board
        time.sleep(2.5)
        stop.set()
        reader.join()
        render(screen, out)
        os.write(fd, b"q\n")
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], env=env, capture_output=True)
        time.sleep(1)
        shutil.rmtree(work, ignore_errors=True)


def render(screen, out):
    font, bold = ImageFont.truetype(FONT, 15), ImageFont.truetype(BOLD, 15)
    cell_w, cell_h = 9, 19
    image = Image.new("RGB", (screen.columns * cell_w + 16, screen.lines * cell_h + 16), DEFAULT_BG)
    draw = ImageDraw.Draw(image)
    for y in range(screen.lines):
        row = screen.buffer[y]
        for x in range(screen.columns):
            char = row[x]
            fg, bg = colour(char.fg, DEFAULT_FG), colour(char.bg, DEFAULT_BG)
            if char.reverse:
                fg, bg = bg, fg
            left, top = 8 + x * cell_w, 8 + y * cell_h
            if bg != DEFAULT_BG:
                draw.rectangle([left, top, left + cell_w - 1, top + cell_h - 1], fill=bg)
            if char.data.strip():
                draw.text((left, top), char.data, font=bold if char.bold else font, fill=fg)
    image.save(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
