#!/usr/bin/env python3
"""A stand-in for an agent CLI, for inbox tests: reads the terminal in raw mode with bracketed
paste on, like the real CLIs, and logs every submitted message byte-exact.

    fake_agent.py LOG [WORK_SECONDS]

Screen: a prompt row `fake> ` followed by a preview of the text typed or pasted so far (its
first line, control characters shown as `?`). Enter submits: the text (pasted bytes with the
paste markers removed, typed bytes as they came) is appended to LOG as one JSON line
`{"hex": ...}`, synced to disk, then `working on it...` is shown for WORK_SECONDS (default 0.2),
then the answer, `answer: ` and the message's first line reversed, and `done` (input that
arrived meanwhile is logged as `{"input_during_work": true}`). With FAKE_TRUST=1 in the
environment it starts with a folder-trust dialog, `Trust this folder? (Enter)`, that Enter
closes (logged as `{"trusted": true}`). A message starting with `ASK` opens a dialog instead, `Allow? (y/n)`, which
only `y` or `n` closes; any other key pressed in the dialog is logged as `{"dialog_key": ...}`.
A message `FLOOD N ...` prints N bytes of 70-byte lines while it works (a build's output), then
answers as any message.
"""

import json
import os
import select
import sys
import termios
import time
import tty

PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"


def out(text):
    os.write(1, text.encode())


def preview(buffer):
    first = buffer.split(b"\n")[0].split(b"\r")[0]
    text = first.decode("utf-8", "replace")
    return "".join(c if c.isprintable() else "?" for c in text)[:60]


def main():
    log_path = sys.argv[1]
    work = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
    fd = 0
    old = termios.tcgetattr(fd)
    tty.setraw(fd)
    out("\x1b[?2004h")
    out("FAKE AGENT v1\r\n")
    log = open(log_path, "a")

    def record(entry):
        log.write(json.dumps(entry) + "\n")
        log.flush()
        os.fsync(log.fileno())

    if os.environ.get("FAKE_TRUST") == "1":
        out("Trust this folder? (Enter)")
        while os.read(fd, 1) not in (b"\r", b"\n"):
            pass
        record({"trusted": True})
        out("\r\n")

    buffer = bytearray()
    pending = bytearray()
    in_paste = False
    out("fake> ")
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            while pending:
                if in_paste:
                    end = pending.find(PASTE_END)
                    if end < 0:
                        # Keep a possible partial marker for the next read.
                        keep = len(PASTE_END) - 1
                        cut = max(0, len(pending) - keep)
                        buffer += pending[:cut]
                        del pending[:cut]
                        break
                    buffer += pending[:end]
                    del pending[: end + len(PASTE_END)]
                    in_paste = False
                    out("\r\x1b[Kfake> " + preview(buffer))
                    continue
                if pending.startswith(PASTE_START):
                    del pending[: len(PASTE_START)]
                    in_paste = True
                    continue
                if PASTE_START.startswith(bytes(pending)):
                    break  # a partial marker: wait for more
                key = pending[0]
                del pending[0]
                if key in (0x0D, 0x0A):
                    if not buffer:
                        continue
                    message = bytes(buffer)
                    buffer.clear()
                    if message.startswith(b"ASK"):
                        dialog(fd, message, record)
                    else:
                        record({"hex": message.hex()})
                        out("\r\nworking on it...")
                        time.sleep(work)
                        if message.startswith(b"FLOOD "):
                            flood(int(message.split()[1]))
                        # Anything typed while working is a delivery that did not wait.
                        if select.select([fd], [], [], 0)[0]:
                            record({"input_during_work": True})
                        out("\r\nanswer: " + preview(message)[::-1])
                        out("\r\ndone\r\n")
                    out("fake> ")
                elif key == 0x03:
                    return
                else:
                    buffer.append(key)
                    out("\r\x1b[Kfake> " + preview(buffer))
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def flood(size):
    line = b"\r\n" + b"0123456789" * 6 + b"flood!!!"
    block = line * 1024
    while size > 0:
        chunk = block[:size]
        written = 0
        while written < len(chunk):
            written += os.write(1, chunk[written:])
        size -= len(chunk)


def dialog(fd, message, record):
    record({"hex": message.hex()})
    out("\r\n\u256d\u2500 Allow? (y/n) \u2500\u256e\r\n")
    while True:
        key = os.read(fd, 1)
        if key in (b"y", b"n"):
            record({"dialog_answer": key.decode()})
            out("\r\nanswered " + key.decode() + "\r\n")
            return
        record({"dialog_key": key.hex()})


if __name__ == "__main__":
    main()
