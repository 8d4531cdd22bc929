#!/usr/bin/env python3
"""Moves a random part of the new screens in fixtures/incoming/ to fixtures/holdout/.

Per provider and CLI version, the screens (a screen is the .txt/.ansi/.json triple of one
`<status>--<scenario>` name) are shuffled with a fixed seed and about 30% of them, at least 2 where
there are 4 or more, are moved to fixtures/holdout/<provider>/<version>/. The choice looks at
names only, never at a screen's content or at any status rule. Run once, after all recording:

    scripts/split-holdout.py
"""

import math
import random
import shutil
from pathlib import Path

SEED = 20261201
SHARE = 0.30

root = Path(__file__).resolve().parent.parent / "fixtures"
incoming, holdout = root / "incoming", root / "holdout"
rng = random.Random(SEED)
for version_dir in sorted(p for p in incoming.glob("*/*") if p.is_dir()):
    names = sorted({f.name.rsplit(".", 1)[0] for f in version_dir.glob("*.json")})
    count = math.floor(len(names) * SHARE + 0.5)
    if len(names) >= 4:
        count = max(count, 2)
    chosen = rng.sample(names, count)
    target = holdout / version_dir.relative_to(incoming)
    target.mkdir(parents=True, exist_ok=True)
    for name in sorted(chosen):
        for ext in ("txt", "ansi", "json"):
            shutil.move(str(version_dir / f"{name}.{ext}"), str(target / f"{name}.{ext}"))
    print(f"{version_dir.relative_to(incoming)}: {len(names)} screens, {count} to the hold-out")
