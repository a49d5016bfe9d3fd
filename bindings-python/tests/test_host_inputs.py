"""The host-input vectors (tests/host-inputs/host_inputs.json): Python must give the one result each
value's case names, as Node and WASM must (tests/host-inputs/README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

import snowmint

FILE = Path(__file__).resolve().parents[2] / "tests" / "host-inputs" / "host_inputs.json"
CASES: list[dict[str, Any]] = json.loads(FILE.read_text())["cases"]
SOME_MS = 1_750_000_000_000


class HostError(Exception):
    """The clock's own exception (must propagate unchanged)."""


def py_value(v: dict[str, Any]) -> Any:
    ((kind, raw),) = v.items()
    if kind in ("int", "bigint"):
        return int(raw)
    if kind == "float":
        return float(raw)
    if kind in ("string", "bool", "null"):
        return raw
    if kind == "throw":
        return HostError(raw)
    if kind == "layout":
        # A custom layout's fields, each a typed value, by the Python (and C) names.
        return {field: py_value(v) for field, v in raw.items()}
    raise AssertionError(f"unknown value type {kind}")


def call(arg: str, value: Any) -> object:
    if arg == "node_id":
        return snowmint.Generator(value, "twitter")
    if arg == "random_seed":
        return snowmint.Generator(1, "twitter", random_start=True, random_seed=value)
    if arg == "random_seed_no_random_start":
        return snowmint.Generator(1, "twitter", random_start=False, random_seed=value)
    if arg == "max_ahead_ms":
        return snowmint.Generator(1, "twitter", max_ahead_ms=value)
    if arg == "clock":
        if isinstance(value, HostError):
            def clock() -> Any:
                raise value
        else:
            def clock() -> Any:
                return value
        return snowmint.Generator(1, "twitter", clock=clock).next_id()
    if arg == "count":
        return snowmint.Generator(1, "twitter", clock=lambda: SOME_MS).next_ids(value)
    if arg == "decode":
        return snowmint.decode(value, "twitter")
    if arg == "parse_encoding":
        return snowmint.parse("1", value)
    if arg == "layout":
        return snowmint.Layout(**value)
    raise AssertionError(f"unknown arg {arg}")


def test_vectors_are_there() -> None:
    assert len(CASES) > 40
    assert len({c["name"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_host_input(case: dict[str, Any]) -> None:
    expect = case.get("python", case["expect"])
    value = py_value(case["value"])
    thrown: BaseException | None = None
    result: object = None
    try:
        result = call(case["arg"], value)
    except BaseException as e:  # noqa: BLE001 (the case says what must come out)
        thrown = e
    if expect == "ok":
        assert thrown is None, f"{case['name']}: {thrown!r}"
        # What the result must be, field by field (a layout's defaults), as decimal or literal text.
        for field, want in case.get("fields", {}).items():
            got = getattr(result, field)
            shown = str(got).lower() if isinstance(got, bool) else str(got)
            assert shown == want, f"{case['name']}: {field} is {got!r}, not {want}"
    elif expect == "HOST":
        assert thrown is value, f"{case['name']}: the clock's own exception, got {thrown!r}"
    elif expect == "TYPE":
        assert type(thrown) is TypeError, f"{case['name']}: TypeError, got {thrown!r}"
    else:
        assert isinstance(thrown, snowmint.SnowmintError), f"{case['name']}: {expect}, got {thrown!r}"
        assert thrown.code == expect, f"{case['name']}: {expect}, got {thrown.code}: {thrown}"
    if "secret" in case:
        # A password in the input never reaches what the error shows.
        for shown in (str(thrown), repr(thrown), str(getattr(thrown, "args", ""))):
            assert case["secret"] not in shown, f"{case['name']}: the secret in {shown!r}"
