#!/usr/bin/env python3
"""Adds a runtime's state-file figures (SPEC §4a) to its bench summary and prints them.

Usage: bench_statefile.py RUNTIME OUTPUT_FILE [JSON]

OUTPUT_FILE holds lines `STATEFILE <key> <ns per ID> <name ...>` written by the runtime's state-file
bench, any number of rounds; the best (lowest) figure per key is kept. Keys:
  memory      single ID from the in-process shared generator      (kind snowmint, what single)
  file        single ID from a generator on a state file          (kind snowmint, what single)
  threads2    2 threads minting from one generator, wall time per ID
  processes2  2 processes minting from one state file, wall time per ID
The rows go to the end of JSON (the bench summary of scripts/bench-all.sh; its headline rows stay
first) with a "statefile" key naming the measurement; bench_report.py tabulates them.
"""

from __future__ import annotations

import json
import sys

KEYS = ["memory", "file", "threads2", "processes2"]


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    runtime, lines = sys.argv[1], sys.argv[2]
    best: dict[str, tuple[float, str]] = {}
    for line in open(lines, encoding="utf-8"):
        parts = line.split(maxsplit=3)
        if len(parts) == 4 and parts[0] == "STATEFILE":
            key, ns, name = parts[1], float(parts[2]), parts[3].strip()
            if key not in KEYS:
                raise SystemExit(f"bench_statefile.py: unknown key {key!r}")
            if key not in best or ns < best[key][0]:
                best[key] = (ns, name)
    missing = [k for k in KEYS if k not in best]
    if missing:
        raise SystemExit(f"bench_statefile.py: no figure for {missing} in {lines}")
    for key in KEYS:
        print(f"{best[key][1]:<62} {best[key][0]:>9.2f} ns/ID")
    ratio = best["file"][0] / best["memory"][0]
    print(f"state file ÷ in-process shared generator, single ID: {ratio:.2f}x (target <= 1.10x)")
    print(f"2 processes on one file ÷ 2 threads on one generator: {best['processes2'][0] / best['threads2'][0]:.2f}x")
    if len(sys.argv) == 4:
        path = sys.argv[3]
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        doc["rows"] = [r for r in doc["rows"] if "statefile" not in r]
        for key in KEYS:
            ns, name = best[key]
            doc["rows"].append({"name": name, "kind": "snowmint", "what": "single", "ns_per_id": ns, "statefile": key})
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
