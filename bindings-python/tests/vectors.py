"""Loading and validating the conformance corpus in tests/vectors/ (format: tests/vectors/README.md).

Every case is checked against the format (unknown fields and duplicate names are errors) before it runs.
"""

from __future__ import annotations

import array
import json
import math
import os
from pathlib import Path
from typing import Any

import snowmint

VECTORS = Path(os.environ.get("SNOWMINT_VECTORS", Path(__file__).resolve().parents[2] / "tests" / "vectors"))

KNOWN_FILES = {"layouts", "generate", "clock_readings", "decode", "compose", "encodings", "opaque", "node_sources"}


class FormatError(AssertionError):
    """A case does not follow tests/vectors/README.md."""


def vector_files() -> list[Path]:
    return sorted(VECTORS.glob("*.json"))


def load(path: Path) -> list[dict[str, Any]]:
    """All cases of one file; a file must be {"cases": [...]} with at least one case and unique names."""

    def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k, v in pairs:
            if k in d:
                raise FormatError(f"{path.name}: duplicate key {k!r}")
            d[k] = v
        return d

    doc = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=no_duplicate_keys)
    if not isinstance(doc, dict) or set(doc) != {"cases"} or not isinstance(doc["cases"], list):
        raise FormatError(f"{path.name}: the top level must be exactly {{\"cases\": [...]}}")
    cases = doc["cases"]
    if not cases:
        raise FormatError(f"{path.name}: no cases")
    seen: set[str] = set()
    for c in cases:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not c["name"]:
            raise FormatError(f"{path.name}: every case needs a non-empty string name: {c!r:.200}")
        if c["name"] in seen:
            raise FormatError(f"{path.name}: duplicate case name {c['name']!r}")
        seen.add(c["name"])
    return cases


def check_keys(where: str, obj: Any, required: set[str], optional: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    if not isinstance(obj, dict):
        raise FormatError(f"{where}: expected an object, got {obj!r:.100}")
    keys = set(obj)
    missing = required - keys
    unknown = keys - required - optional
    if missing:
        raise FormatError(f"{where}: missing field(s) {sorted(missing)}")
    if unknown:
        raise FormatError(f"{where}: unknown field(s) {sorted(unknown)}")


def u64(where: str, v: Any) -> int:
    """A u64 written as a decimal string."""
    if not isinstance(v, str) or not v.isdigit() or (len(v) > 1 and v[0] == "0"):
        raise FormatError(f"{where}: expected a u64 as a decimal string, got {v!r}")
    n = int(v)
    if n >= 1 << 64:
        raise FormatError(f"{where}: {v} does not fit 64 bits")
    return n


def small(where: str, v: Any) -> int:
    """A small integer written as a JSON number."""
    if not isinstance(v, int) or isinstance(v, bool):
        raise FormatError(f"{where}: expected a JSON integer, got {v!r}")
    return v


CUSTOM_REQUIRED = {"timestamp_bits", "node_bits", "sequence_bits", "order", "tick_ns", "epoch_ms"}
CUSTOM_OPTIONAL = {"node_id_offset", "use_sign_bit"}
PRESETS = {"twitter", "discord", "instagram", "sonyflake", "hazelcast", "js53", "decimal", "snowcast"}


def layout(where: str, spec: Any) -> snowmint.Layout | str:
    """The layout a spec names: a preset name (passed to the API as a string) or a snowmint.Layout.

    Building it may raise the error a case expects (e.g. an invalid custom layout)."""
    where = f"{where}.layout"
    if isinstance(spec, dict) and "preset" in spec:
        name = spec["preset"]
        if not isinstance(name, str):
            raise FormatError(f"{where}: preset must be a string")
        if name == "snowcast" and set(spec) != {"preset"}:
            check_keys(where, spec, {"preset", "epoch_ms", "node_count"})
            return snowmint.Layout.snowcast(u64(where, spec["epoch_ms"]), u64(where, spec["node_count"]))
        if name == "hazelcast" and "node_id_offset" in spec:
            check_keys(where, spec, {"preset", "node_id_offset"})
            return snowmint.Layout.hazelcast(u64(where, spec["node_id_offset"]))
        check_keys(where, spec, {"preset"})
        return name
    check_keys(where, spec, CUSTOM_REQUIRED, CUSTOM_OPTIONAL)
    use_sign_bit = spec.get("use_sign_bit", False)
    if not isinstance(use_sign_bit, bool):
        raise FormatError(f"{where}: use_sign_bit must be a boolean")
    return snowmint.Layout(
        timestamp_bits=small(where, spec["timestamp_bits"]),
        node_bits=small(where, spec["node_bits"]),
        sequence_bits=small(where, spec["sequence_bits"]),
        order=spec["order"],
        tick_ns=u64(where, spec["tick_ns"]),
        epoch_ms=u64(where, spec["epoch_ms"]),
        node_id_offset=u64(where, spec.get("node_id_offset", "0")),
        use_sign_bit=use_sign_bit,
    )


def as_layout(l: snowmint.Layout | str) -> snowmint.Layout:
    return l if isinstance(l, snowmint.Layout) else snowmint.Layout.preset(l)


def reading(where: str, v: Any) -> float:
    """A clock reading of clock_readings.json, as the float a Python clock would return."""
    if isinstance(v, str):
        if v not in ("NaN", "Infinity", "-Infinity"):
            raise FormatError(f"{where}: reading string must be NaN, Infinity or -Infinity, got {v!r}")
        x = float(v)
        assert math.isnan(x) or math.isinf(x)
        return x
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FormatError(f"{where}: reading must be a number or NaN/Infinity/-Infinity, got {v!r}")
    return float(v)


ERROR_CLASSES = {
    "INVALID_LAYOUT": snowmint.InvalidLayoutError,
    "NODE_ID_OUT_OF_RANGE": snowmint.NodeIdOutOfRangeError,
    "CLOCK_MOVED_BACKWARDS": snowmint.ClockMovedBackwardsError,
    "CLOCK_BEFORE_EPOCH": snowmint.ClockBeforeEpochError,
    "TOO_FAR_AHEAD": snowmint.TooFarAheadError,
    "LAYOUT_EXHAUSTED": snowmint.LayoutExhaustedError,
    "PARSE": snowmint.ParseError,
    "LEASE_LOST": snowmint.LeaseLostError,
    "INVALID_CLOCK": snowmint.InvalidClockError,
    "INVALID_ID": snowmint.InvalidIdError,
    "INVALID_ARGUMENT": snowmint.InvalidArgumentError,
    "FORKED": snowmint.ForkedError,
    "NODE_IDS_EXHAUSTED": snowmint.NodeIdsExhaustedError,
    "SEQUENCER_CONFLICT": snowmint.SequencerConflictError,
    "SEQUENCER_DESTROYED": snowmint.SequencerDestroyedError,
    "SEQUENCER_NOT_FOUND": snowmint.SequencerNotFoundError,
    "STORE_NOT_FOUND": snowmint.StoreNotFoundError,
    "STORE_UNAVAILABLE": snowmint.StoreUnavailableError,
}


def error_code(where: str, v: Any) -> str:
    if v not in ERROR_CLASSES:
        raise FormatError(f"{where}: unknown error code {v!r}")
    return str(v)


class ScriptedClock:
    """The injected clock of generate.json: each step's readings in order, then the last one repeats."""

    def __init__(self) -> None:
        self.pending: list[int] = []
        self.last: int | None = None
        self.reads = 0

    def script(self, readings: list[int]) -> None:
        self.pending = list(readings)

    def __call__(self) -> int:
        self.reads += 1
        if self.reads > 100_000:
            raise RuntimeError("scripted clock read 100000 times: a runaway loop")
        if self.pending:
            self.last = self.pending.pop(0)
        if self.last is None:
            raise RuntimeError("scripted clock read before any step gave readings")
        return self.last


GENERATE_REQUIRED = {"name", "layout", "node_id"}
GENERATE_OPTIONAL = {"policy", "max_ahead_ms", "random_seed"}
STEP_REQUIRED = {"clock", "op", "count"}


def generator_for(where: str, case: dict[str, Any], clock: ScriptedClock) -> snowmint.Generator:
    """Builds the case's generator (may raise the error a case expects)."""
    kwargs: dict[str, Any] = {"clock": clock}
    if "policy" in case:
        if case["policy"] not in ("wait", "fail", "strict"):
            raise FormatError(f"{where}: unknown policy {case['policy']!r}")
        kwargs["policy"] = case["policy"]
    if "max_ahead_ms" in case:
        kwargs["max_ahead_ms"] = u64(where, case["max_ahead_ms"])
    if "random_seed" in case:
        kwargs["random_seed"] = u64(where, case["random_seed"])
    return snowmint.Generator(u64(where, case["node_id"]), layout(where, case["layout"]), **kwargs)


def check_generate_shape(where: str, case: dict[str, Any], need_outcome: bool = True) -> None:
    """Checks a generate.json case. `need_outcome=False` (demo.sh) also accepts steps that state no
    expected outcome (no ids, first/last or error)."""
    if "error" in case:
        check_keys(where, case, GENERATE_REQUIRED | {"error"}, GENERATE_OPTIONAL)
        error_code(where, case["error"])
        return
    check_keys(where, case, GENERATE_REQUIRED | {"steps"}, GENERATE_OPTIONAL)
    if not isinstance(case["steps"], list) or not case["steps"]:
        raise FormatError(f"{where}: steps must be a non-empty list")
    for i, step in enumerate(case["steps"]):
        w = f"{where}.steps[{i}]"
        if step.get("op") in ("state", "restore"):
            check_keys(w, step, {"op", "state"})
            u64(w, step["state"])
            continue
        if "ids" in step:
            check_keys(w, step, STEP_REQUIRED | {"ids"})
        elif "first" in step or "last" in step:
            check_keys(w, step, STEP_REQUIRED | {"first", "last"})
        elif "error" in step or need_outcome:
            check_keys(w, step, STEP_REQUIRED | {"error"})
            error_code(w, step["error"])
        else:
            check_keys(w, step, STEP_REQUIRED)
        if step["op"] not in ("next", "batch"):
            raise FormatError(f"{w}: op must be next or batch")
        if not isinstance(step["clock"], list) or not step["clock"]:
            raise FormatError(f"{w}: clock must be a non-empty list of readings")
        small(w, step["count"])


def run_generate(case: dict[str, Any], batch: str = "list") -> list[str]:
    """Runs one generate.json case through the public API and checks it. Returns the printed lines
    (decimal IDs, or `error CODE`), as demo.sh prints them. `batch` picks the batch API: "list"
    (next_ids), "array" (next_ids_array) or "into" (next_ids_into a new array('Q'))."""
    where = f"generate.json:{case['name']}"
    check_generate_shape(where, case)
    lines: list[str] = []
    clock = ScriptedClock()
    try:
        gen = generator_for(where, case, clock)
    except snowmint.SnowmintError as e:
        if "error" not in case:
            raise
        expect_error(where, e, case["error"])
        return [f"error {e.code}"]
    if "error" in case:
        raise AssertionError(f"{where}: expected {case['error']}, but the generator was built")
    for i, step in enumerate(case["steps"]):
        w = f"{where}.steps[{i}]"
        if step["op"] == "state":
            mark = gen.high_water_mark()
            assert type(mark) is int and mark == u64(w, step["state"]), f"{w}: mark {mark} != {step['state']}"
            continue
        if step["op"] == "restore":
            # Alternate the two input types: int, and the decimal str a file would hold.
            gen.restore(u64(w, step["state"]) if i % 2 else step["state"])
            continue
        clock.script([u64(w, r) for r in step["clock"]])
        n = step["count"]
        ids: list[int] = []
        try:
            if step["op"] == "next":
                for _ in range(n):
                    ids.append(gen.next_id())
            elif batch == "array":
                arr = gen.next_ids_array(n)
                assert arr.typecode == "Q" and len(arr) == n
                ids = list(arr)
            elif batch == "into":
                buf = array.array("Q", bytes(8 * n))
                gen.next_ids_into(buf)
                ids = list(buf)
            else:
                ids = gen.next_ids(n)
                assert isinstance(ids, list) and len(ids) == n
        except snowmint.SnowmintError as e:
            lines.extend(str(x) for x in ids)
            lines.append(f"error {e.code}")
            if "error" not in step:
                raise AssertionError(f"{w}: unexpected {type(e).__name__} {e.code}: {e}") from e
            if step["op"] == "next":
                assert not ids, f"{w}: the first call must fail, but {len(ids)} succeeded"
            expect_error(w, e, step["error"])
            continue
        lines.extend(str(x) for x in ids)
        if "error" in step:
            raise AssertionError(f"{w}: expected {step['error']}, got {len(ids)} IDs")
        assert all(type(x) is int for x in ids)
        if "ids" in step:
            want = [u64(w, x) for x in step["ids"]]
            assert len(want) == n, f"{w}: count {n} but {len(want)} ids listed"
            assert ids == want, f"{w}: got {ids[:5]}…, want {want[:5]}…"
        else:
            assert len(ids) == n
            assert ids[0] == u64(w, step["first"]), f"{w}: first {ids[0]} != {step['first']}"
            assert ids[-1] == u64(w, step["last"]), f"{w}: last {ids[-1]} != {step['last']}"
            assert all(a < b for a, b in zip(ids, ids[1:])), f"{w}: IDs do not strictly increase"
    return lines


def expect_error(where: str, e: BaseException, code: str) -> None:
    assert isinstance(e, snowmint.SnowmintError), f"{where}: {e!r} is not a SnowmintError"
    assert isinstance(e, ValueError)
    assert e.code == code, f"{where}: got {e.code} ({e}), want {code}"
    assert type(e) is ERROR_CLASSES[code], f"{where}: {type(e).__name__} for {code}"
    assert str(e), f"{where}: empty message"
