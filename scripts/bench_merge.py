#!/usr/bin/env python3
"""Appends the rows of an extra bench summary (a JSON list of rows, e.g. the opaque-ID rows, which carry
"group": "opaque") to a runtime's summary written for scripts/bench-all.sh.

Usage: bench_merge.py SUMMARY.json EXTRA_ROWS.json   (nothing to do when SUMMARY.json is not there)
"""

import json
import sys

summary, extra = sys.argv[1], sys.argv[2]
try:
    with open(summary, encoding="utf-8") as f:
        doc = json.load(f)
except FileNotFoundError:
    sys.exit(0)
with open(extra, encoding="utf-8") as f:
    rows = json.load(f)
assert isinstance(rows, list) and rows, "no rows to merge"
doc["rows"].extend(rows)
with open(summary, "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
