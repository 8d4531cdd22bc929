#!/usr/bin/env python3
"""Generates src/screen/width_table.rs: the width of every code point as glibc's wcwidth()
gives it in a UTF-8 locale, which is what tmux built without utf8proc (Debian's and Ubuntu's
packages) measures characters with. tmux's own rules on top (its always-wide emoji, what it
does with -1) are the screen model's dialects (src/screen/dialect.rs).

Usage: scripts/width-table.py > src/screen/width_table.rs
Run it on the glibc of the tmux the table should follow (Debian 12: glibc 2.36); the
differential tests (tests/integration/fidelity.rs) check the result against tmux itself.
"""
import ctypes
import ctypes.util
import sys

LC_CTYPE = 0
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.setlocale.restype = ctypes.c_char_p
if not libc.setlocale(LC_CTYPE, b"C.UTF-8"):
    sys.exit("no C.UTF-8 locale")
libc.wcwidth.argtypes = [ctypes.c_int32]
libc.wcwidth.restype = ctypes.c_int

# Ranges whose width is not 1; ASCII controls are left to the parser.
ranges = []
for cp in range(0x80, 0x110000):
    width = libc.wcwidth(cp)
    width = -1 if width < 0 else width
    if width == 1:
        continue
    if ranges and ranges[-1][1] == cp - 1 and ranges[-1][2] == width:
        ranges[-1][1] = cp
    else:
        ranges.append([cp, cp, width])

out = sys.stdout
out.write(
    "//! Character widths as tmux 3.3a on Debian 12 computes them: glibc 2.36's `wcwidth()` in a UTF-8\n"
    "//! locale (tmux built without utf8proc), generated from that `wcwidth()` for every code point by\n"
    "//! `scripts/width-table.py`. The differential tests (tests/integration/fidelity) check widths\n"
    "//! against tmux itself.\n"
    "\n"
    "/// Code point ranges whose width is not 1, as `(first, last, width)`; width -1 means tmux drops\n"
    "/// the character (`wcwidth()` is -1: unassigned, control, or a surrogate). Sorted, disjoint.\n"
    "#[rustfmt::skip]\n"
    "pub(super) const NOT_ONE: &[(u32, u32, i8)] = &[\n"
)
line = "   "
for first, last, width in ranges:
    item = f" ({first:#x}, {last:#x}, {width}),"
    if len(line) + len(item) > 100:
        out.write(line + "\n")
        line = "   "
    line += item
out.write(line + "\n];\n")
