#!/usr/bin/env python3
"""Moves a random part of the new screens in fixtures/incoming/ to fixtures/holdout/.

Per provider and CLI version, the screens (a screen is the .txt/.ansi/.json triple of one
`<status>--<scenario>` name) are shuffled with a fixed seed and about 30% of them, at least 2 where
there are 4 or more (at least 1 where there are 2 or 3), are moved to
fixtures/holdout/<provider>/<version>/. The choice looks at names only, never at a screen's content
or at any status rule. Run once, after all recording:

    scripts/split-holdout.py

A later batch recorded elsewhere (same layout) is split the same way with `--incoming DIR`: the
chosen part goes to fixtures/holdout/, the rest is moved into fixtures/incoming/, and DIR is
removed once empty. A name that already exists in fixtures/incoming/ or fixtures/holdout/ stops
the script before anything is moved:

    scripts/split-holdout.py --incoming fixtures/incoming2
"""

import argparse
import math
import random
import shutil
import sys
from pathlib import Path

SEED = 20261201
SHARE = 0.30
EXTENSIONS = ("txt", "ansi", "json")

repo = Path(__file__).resolve().parent.parent
root = repo / "fixtures"
incoming, holdout = root / "incoming", root / "holdout"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--incoming", type=Path, help="a later batch to split (default: fixtures/incoming)")
args = parser.parse_args()
source = incoming
if args.incoming is not None:
    source = args.incoming if args.incoming.is_absolute() else Path.cwd() / args.incoming
    source = source.resolve()
rest = incoming if source != incoming else None

version_dirs = sorted(p for p in source.glob("*/*") if p.is_dir())
if rest is not None:
    clashes = [
        str((target / version_dir.relative_to(source) / name).relative_to(repo))
        for version_dir in version_dirs
        for name in (f.name for f in version_dir.iterdir())
        for target in (incoming, holdout)
        if (target / version_dir.relative_to(source) / name).exists()
    ]
    if clashes:
        sys.exit("already there, nothing moved:\n  " + "\n  ".join(clashes))

rng = random.Random(SEED)
for version_dir in version_dirs:
    names = sorted({f.name.rsplit(".", 1)[0] for f in version_dir.glob("*.json")})
    count = math.floor(len(names) * SHARE + 0.5)
    if len(names) >= 4:
        count = max(count, 2)
    elif len(names) >= 2:
        count = max(count, 1)
    chosen = set(rng.sample(names, count))
    relative = version_dir.relative_to(source)
    for name in names:
        target = holdout if name in chosen else rest
        if target is None:
            continue
        (target / relative).mkdir(parents=True, exist_ok=True)
        for ext in EXTENSIONS:
            shutil.move(str(version_dir / f"{name}.{ext}"), str(target / relative / f"{name}.{ext}"))
    print(f"{relative}: {len(names)} screens, {count} to the hold-out")

if rest is not None:
    for directory in sorted((p for p in source.rglob("*") if p.is_dir()), reverse=True):
        if not any(directory.iterdir()):
            directory.rmdir()
    if not any(source.iterdir()):
        source.rmdir()
    else:
        print(f"left in {source}: files that are not screens", file=sys.stderr)
