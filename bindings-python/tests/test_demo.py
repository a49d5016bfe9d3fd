"""demo.py (behind demo.sh) prints exactly the IDs / error codes a generate.json case expects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import vectors as v

DEMO = Path(__file__).resolve().parents[1] / "demo.py"


def _expected(case: dict) -> list[str] | None:  # type: ignore[type-arg]
    if "error" in case:
        return [f"error {case['error']}"]
    lines: list[str] = []
    for step in case["steps"]:
        if "ids" in step:
            lines += step["ids"]
        elif "error" in step:
            lines.append(f"error {step['error']}")
        else:
            return None  # first/last only: checked by the conformance runner
    return lines


def test_demo_prints_cases(tmp_path: Path) -> None:
    cases = v.load(v.VECTORS / "generate.json")
    checked = 0
    for case in cases[:: max(1, len(cases) // 25)]:
        want = _expected(case)
        if want is None:
            continue
        f = tmp_path / "case.json"
        f.write_text(json.dumps(case))
        r = subprocess.run([sys.executable, str(DEMO), str(f)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == [w for line in want for w in line.split()], case["name"]
        checked += 1
    assert checked >= 10


def test_demo_live() -> None:
    r = subprocess.run([sys.executable, str(DEMO), "--live", "5"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    ids = [int(x) for x in r.stdout.split()]
    assert len(ids) == 5 and ids == sorted(set(ids))
