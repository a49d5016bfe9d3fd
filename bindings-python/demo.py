"""demo.sh's body: mint IDs through the installed snowmint wheel.

    demo.py CASE.json   one case in the tests/vectors/generate.json format, with its scripted clock:
                        prints every minted ID in decimal, one per line; a failing step prints `error CODE`
    demo.py --live N    N IDs from the host clock (layout twitter, node 7)
"""

from __future__ import annotations

import array
import json
import sys
from pathlib import Path
from typing import Any

import snowmint

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
import vectors  # noqa: E402  (the conformance runner's case reader: same layouts, same clock)


def run_case(case: dict[str, Any]) -> int:
    where = f"demo:{case.get('name', '?')}"
    vectors.check_generate_shape(where, case, need_outcome=False)
    clock = vectors.ScriptedClock()
    try:
        gen = vectors.generator_for(where, case, clock)
    except snowmint.SnowmintError as e:
        print(f"error {e.code}")
        return 0
    for i, step in enumerate(case["steps"]):
        clock.script([vectors.u64(f"{where}.steps[{i}]", r) for r in step["clock"]])
        n = step["count"]
        try:
            if step["op"] == "next":
                for _ in range(n):
                    print(gen.next_id())
            else:
                buf = array.array("Q", bytes(8 * n))
                gen.next_ids_into(buf)
                print("\n".join(map(str, buf)))
        except snowmint.SnowmintError as e:
            print(f"error {e.code}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--live":
        n = int(argv[1])
        if n < 0:
            raise SystemExit("N must be >= 0")
        gen = snowmint.Generator(7, "twitter")
        for _ in range(n):
            print(gen.next_id())
        return 0
    if len(argv) != 1:
        raise SystemExit("usage: demo.sh CASE.json | demo.sh --live N")
    doc = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    if isinstance(doc, dict) and set(doc) == {"cases"}:
        if len(doc["cases"]) != 1:
            raise SystemExit(f"{argv[0]}: holds {len(doc['cases'])} cases; give a file with one case")
        doc = doc["cases"][0]
    return run_case(doc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
