"""The shipped type stubs: mypy --strict accepts a typed program, rejects a wrong one, and stubtest
finds the stubs consistent with the runtime module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import snowmint

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "typed_usage.py"


def _mypy(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPY_CACHE_DIR": str(cwd / ".mypy_cache")}
    return subprocess.run(
        [sys.executable, "-m", "mypy", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_package_ships_stubs_and_py_typed() -> None:
    pkg = Path(snowmint.__file__).parent
    assert (pkg / "py.typed").exists()
    assert (pkg / "__init__.pyi").exists()


def test_mypy_strict_accepts_typed_example(tmp_path: Path) -> None:
    r = _mypy("--strict", str(EXAMPLE), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_rejects_wrong_types(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import snowmint\n"
        "g = snowmint.Generator(1)\n"
        "s: str = g.next_id()\n"
        "snowmint.decode(b'12')\n"
        "snowmint.Generator(1, policy='sometimes')\n"
    )
    r = _mypy("--strict", str(bad), cwd=tmp_path)
    assert r.returncode != 0
    assert r.stdout.count("error:") >= 3, r.stdout


def test_example_runs() -> None:
    r = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "NODE_ID_OUT_OF_RANGE" in r.stdout and "TOO_FAR_AHEAD" in r.stdout


def test_stubtest(tmp_path: Path) -> None:
    allow = tmp_path / "allow.txt"
    allow.write_text(
        "# the base class has no code of its own (None); every raised instance carries a str\n"
        "snowmint.SnowmintError.code\n"
        "# the same class as the private client module imports it (older mypy, as on CPython 3.9, checks it)\n"
        "snowmint._client.SnowmintError.code\n"
        "# type aliases that exist only in the stubs\n"
        "snowmint.PresetName\nsnowmint.OrderName\nsnowmint.PolicyName\nsnowmint.EncodingName\n"
        "snowmint.LayoutLike\nsnowmint.ClockFn\nsnowmint.GeneratorState\nsnowmint.DecodedDict\n"
        "snowmint.MonotonicMsFn\nsnowmint.ClientStats\n"
        "# the native module is an implementation detail, typed through the package stubs\n"
        "snowmint._snowmint\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "snowmint", "--allowlist", str(allow), "--ignore-unused-allowlist"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, "MYPY_CACHE_DIR": str(tmp_path / ".mypy_cache")},
    )
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
