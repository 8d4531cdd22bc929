#!/usr/bin/env python3
"""Writes numbered marker lines and logs when each was written, for latency benchmarks.

usage: marker.py LOG COUNT INTERVAL_MS

Each line is `mark NNNNNN` and a newline, written with one write(2); the terminal turns the
newline into CR LF, so marker i occupies bytes [13*i, 13*(i+1)) of the pane's output. LOG gets
one line per marker: `i monotonic_ns` (CLOCK_MONOTONIC, comparable across processes). After the
last marker the program sleeps, so the pane stays open.
"""

import os
import sys
import time


def main() -> None:
    log_path, count, interval = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) / 1000.0
    times = []
    for i in range(count):
        line = f"mark {i:06d}\n".encode()
        times.append(time.monotonic_ns())
        os.write(1, line)
        time.sleep(interval)
    with open(log_path, "w") as log:
        for i, t in enumerate(times):
            log.write(f"{i} {t}\n")
    time.sleep(3600)


if __name__ == "__main__":
    main()
