#!/usr/bin/env python3
"""Scores the built-in status rules on recorded screens: how many are classified as recorded.

    cargo build && scripts/score-screens.py fixtures/holdout --counts-only [--binary PATH]
    scripts/score-screens.py fixtures --as-provider generic --ready-as-one

`--as-provider ID` classifies every screen with that provider's rules instead of its own (the
`generic` provider's accuracy: every provider's recordings with their own rules switched off).
`--ready-as-one` counts `idle` and `completed` as one status: a single screen does not say
whether a turn ended before it (the daemon tells them apart by the turn it saw).

For every `<status>--<scenario>.json` under the directory, runs `panectl detect --json` on its
`.txt` and its `.ansi` capture with the provider and title the `.json` names, and compares the
status with the recorded one. Prints each miss (with the rule that decided), a line per provider
and version, and the total. Exit status 1 when anything is missed.
"""

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("--binary", default="target/debug/panectl")
    parser.add_argument(
        "--counts-only",
        action="store_true",
        help="print no miss, only the counts (for a hold-out that must stay unseen)",
    )
    parser.add_argument("--as-provider", help="classify every screen with this provider's rules")
    parser.add_argument(
        "--ready-as-one",
        action="store_true",
        help="count idle and completed as one status (ready)",
    )
    args = parser.parse_args()

    def same(classified: str, recorded: str) -> bool:
        ready = ("idle", "completed")
        if args.ready_as_one and classified in ready and recorded in ready:
            return True
        return classified == recorded

    totals = defaultdict(lambda: [0, 0])
    misses = []
    for meta_path in sorted(args.directory.rglob("*.json")):
        meta = json.loads(meta_path.read_text())
        for extension in ("txt", "ansi"):
            capture = meta_path.with_suffix("." + extension)
            output = subprocess.run(
                [
                    args.binary,
                    "detect",
                    "--json",
                    "--provider",
                    args.as_provider or meta["provider"],
                    str(capture),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(output.stdout.splitlines()[0])
            key = f'{meta["provider"]} {meta["cli_version"]}'
            totals[key][1] += 1
            if same(result["status"], meta["status"]):
                totals[key][0] += 1
            else:
                misses.append(
                    f'{capture.relative_to(args.directory)}: recorded {meta["status"]}, '
                    f'classified {result["status"]} (rule {result.get("rule")})'
                )
    for miss in [] if args.counts_only else misses:
        print("miss:", miss)
    right = sum(r for r, _ in totals.values())
    total = sum(t for _, t in totals.values())
    for key, (r, t) in sorted(totals.items()):
        print(f"{key}: {r}/{t}")
    print(f"total: {right}/{total} = {100.0 * right / max(total, 1):.1f}%")
    return 0 if right == total else 1


if __name__ == "__main__":
    sys.exit(main())
