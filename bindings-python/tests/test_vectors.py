"""Every case of every file in tests/vectors/*.json, through the public Python API."""

from __future__ import annotations

import os
from typing import Any, Callable

import pytest

import snowmint
import vectors as v
from vectors import FormatError, check_keys, error_code, expect_error, small, u64

FILES = v.vector_files()


def test_corpus_present() -> None:
    names = {p.stem for p in FILES}
    assert FILES, f"no vector files in {v.VECTORS}"
    unknown = names - v.KNOWN_FILES
    assert not unknown, f"vector files this runner cannot run: {sorted(unknown)}"
    assert names == v.KNOWN_FILES, f"missing vector files: {sorted(v.KNOWN_FILES - names)}"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_file_well_formed(path: Any) -> None:
    """At least one case, unique names, no duplicate keys (checked by vectors.load)."""
    assert v.load(path)


# ---------------------------------------------------------------------------------------------------


def run_layouts(c: dict[str, Any]) -> None:
    w = f"layouts.json:{c['name']}"
    if "error" in c:
        check_keys(w, c, {"name", "layout", "error", "field"})
        code = error_code(w, c["error"])
        with pytest.raises(snowmint.SnowmintError) as info:
            v.as_layout(v.layout(w, c["layout"]))
        expect_error(w, info.value, code)
        assert c["field"] in str(info.value), f"{w}: message {str(info.value)!r} does not name {c['field']}"
        return
    check_keys(w, c, {"name", "layout", "expect"})
    e = c["expect"]
    check_keys(
        f"{w}.expect",
        e,
        set(),
        {"total_bits", "node_count", "ids_per_tick", "max_node_id", "max_tick", "lifespan_end_ms",
         "lifespan_end_iso", "clock_unit"},
    )
    if not e:
        raise FormatError(f"{w}: empty expect")
    layout = v.as_layout(v.layout(w, c["layout"]))
    for key, want in e.items():
        got = getattr(layout, key)
        if key == "total_bits":
            assert got == small(w, want), f"{w}: {key} {got} != {want}"
        elif key in ("lifespan_end_iso", "clock_unit"):
            assert got == want, f"{w}: {key} {got!r} != {want!r}"
        else:
            assert got == u64(w, want), f"{w}: {key} {got} != {want}"
    if "lifespan_end_ms" in e and layout.lifespan_end_ms < 253402300800000:  # datetime's year 9999
        dt = layout.lifespan_end
        assert dt.tzinfo is not None and int(dt.timestamp() * 1000) == layout.lifespan_end_ms


def run_generate(c: dict[str, Any]) -> None:
    lists = v.run_generate(c, batch="list")
    assert v.run_generate(c, batch="array") == lists, "next_ids and next_ids_array disagree"
    assert v.run_generate(c, batch="into") == lists, "next_ids and next_ids_into disagree"


def run_clock_readings(c: dict[str, Any]) -> None:
    w = f"clock_readings.json:{c['name']}"
    if "error" in c:
        check_keys(w, c, {"name", "layout", "reading", "error"})
    else:
        check_keys(w, c, {"name", "layout", "reading", "ns"})
    r = v.reading(w, c["reading"])
    spec = v.layout(w, c["layout"])
    layout = v.as_layout(spec)
    gen = snowmint.Generator(0, spec, clock=lambda: r)
    if "error" in c:
        code = error_code(w, c["error"])
        with pytest.raises(snowmint.SnowmintError) as info:
            layout.reading_to_ns(r)
        expect_error(w, info.value, code)
        with pytest.raises(snowmint.SnowmintError) as info:
            gen.next_id()
        expect_error(w, info.value, code)
        return
    ns = u64(w, c["ns"])
    assert layout.reading_to_ns(r) == ns
    # Through a generator: the reading is accepted, and the ID lands in the reading's tick.
    try:
        first = gen.next_id()
    except (snowmint.ClockBeforeEpochError, snowmint.LayoutExhaustedError):
        epoch_ns = layout.epoch_ms * 1_000_000
        assert ns < epoch_ns or ns >= layout.lifespan_end_ms * 1_000_000, w
        return
    d = snowmint.decode(first, layout)
    assert d.unix_ns is not None and d.unix_ns <= ns < d.unix_ns + layout.tick_ns, w


def run_decode(c: dict[str, Any]) -> None:
    w = f"decode.json:{c['name']}"
    if "error" in c:
        check_keys(w, c, {"name", "layout", "id", "error"})
        code = error_code(w, c["error"])
        spec = v.layout(w, c["layout"])
        with pytest.raises(snowmint.SnowmintError) as info:
            snowmint.decode(u64(w, c["id"]), spec)
        expect_error(w, info.value, code)
        return
    check_keys(w, c, {"name", "layout", "id", "expect"})
    e = c["expect"]
    check_keys(f"{w}.expect", e, {"timestamp_ticks", "unix_ms", "sub_ms_ns", "node", "sequence", "iso"})
    d = snowmint.decode(u64(w, c["id"]), v.layout(w, c["layout"]))
    assert d.id == u64(w, c["id"])
    assert d.timestamp_ticks == u64(w, e["timestamp_ticks"]), w
    assert d.timestamp_ms == u64(w, e["unix_ms"]), w
    assert d.sub_ms_ns == small(w, e["sub_ms_ns"]), w
    assert d.node_id == u64(w, e["node"]), w
    assert d.sequence == u64(w, e["sequence"]), w
    assert d.iso == e["iso"], f"{w}: {d.iso} != {e['iso']}"
    if d.timestamp_ms < 253402300800000:
        dt = d.datetime
        assert dt.tzinfo is not None
        assert dt.isoformat().startswith(e["iso"][:19]), f"{w}: {dt.isoformat()} vs {e['iso']}"


def run_compose(c: dict[str, Any]) -> None:
    w = f"compose.json:{c['name']}"
    op = c.get("op")
    outcome = {"error"} if "error" in c else {"id"}
    if op == "compose":
        check_keys(w, c, {"name", "layout", "op", "timestamp_ticks", "node", "sequence"} | outcome)
        call: Callable[[], int] = lambda: snowmint.compose(
            u64(w, c["timestamp_ticks"]), u64(w, c["node"]), u64(w, c["sequence"]), layout=spec
        )
    elif op == "min_id_at":
        check_keys(w, c, {"name", "layout", "op", "unix_ms"} | outcome)
        call = lambda: snowmint.min_id_at(u64(w, c["unix_ms"]), layout=spec)
    else:
        raise FormatError(f"{w}: unknown op {op!r}")
    spec = v.layout(w, c["layout"])
    if "error" in c:
        code = error_code(w, c["error"])
        with pytest.raises(snowmint.SnowmintError) as info:
            call()
        expect_error(w, info.value, code)
        return
    got = call()
    assert got == u64(w, c["id"]), f"{w}: {got} != {c['id']}"
    if op == "compose":
        d = snowmint.decode(got, spec)
        assert (d.timestamp_ticks, d.node_id, d.sequence) == (
            u64(w, c["timestamp_ticks"]), u64(w, c["node"]), u64(w, c["sequence"])
        ) or v.as_layout(spec).family == "decimal"


def run_encodings(c: dict[str, Any]) -> None:
    w = f"encodings.json:{c['name']}"
    op = c.get("op")
    if op == "encode":
        check_keys(w, c, {"name", "op", "id", "dec", "hex", "base32", "base58"})
        i = u64(w, c["id"])
        for enc in ("dec", "hex", "base32", "base58"):
            text = snowmint.encode(i, enc)
            assert text == c[enc], f"{w}: {enc} {text!r} != {c[enc]!r}"
            assert snowmint.parse(text, enc) == i
            assert snowmint.to_string(i, enc) == text
        assert snowmint.encode(i) == c["dec"]
        return
    if op != "parse":
        raise FormatError(f"{w}: unknown op {op!r}")
    if "error" in c:
        check_keys(w, c, {"name", "op", "encoding", "input", "error", "position"}, {"readings"})
    else:
        check_keys(w, c, {"name", "op", "encoding", "input", "id"})
    if c["encoding"] not in ("dec", "hex", "base32", "base58", "any"):
        raise FormatError(f"{w}: unknown encoding {c['encoding']!r}")
    if not isinstance(c["input"], str):
        raise FormatError(f"{w}: input must be a string")
    if "error" in c:
        code = error_code(w, c["error"])
        with pytest.raises(snowmint.SnowmintError) as info:
            snowmint.parse(c["input"], c["encoding"])
        expect_error(w, info.value, code)
        pos = small(w, c["position"])
        assert getattr(info.value, "position", None) == pos, f"{w}: position {info.value.position} != {pos} ({info.value})"
        # An ambiguous string: the message names every reading (form and value); nothing was chosen.
        for form, value in c.get("readings", {}).items():
            assert f"{form} {u64(w, value)}" in str(info.value), f"{w}: {info.value} does not name {form} {value}"
            assert snowmint.parse(c["input"], form) == u64(w, value), w
        return
    assert snowmint.parse(c["input"], c["encoding"]) == u64(w, c["id"]), w


def run_opaque(c: dict[str, Any]) -> None:
    w = f"opaque.json:{c['name']}"
    spec = v.layout(w, c["layout"])
    if not isinstance(c["key"], str):
        raise FormatError(f"{w}: key must be a hex string")
    key = bytes.fromhex(c["key"])
    if "bits" not in c:
        check_keys(w, c, {"name", "layout", "key", "error"})
        with pytest.raises(snowmint.SnowmintError) as info:
            snowmint.Opaque(key=key, layout=spec)
        expect_error(w, info.value, error_code(w, c["error"]))
        return
    o = snowmint.Opaque(key=key, layout=spec)
    assert o.bits == small(w, c["bits"]), w
    if "op" in c:
        check_keys(w, c, {"name", "layout", "key", "bits", "op", "input", "error"})
        if c["op"] not in ("encode", "decode"):
            raise FormatError(f"{w}: unknown op {c['op']!r}")
        with pytest.raises(snowmint.SnowmintError) as info:
            getattr(o, c["op"])(u64(w, c["input"]))
        expect_error(w, info.value, error_code(w, c["error"]))
        return
    check_keys(w, c, {"name", "layout", "key", "bits", "ids", "tokens"})
    ids = [u64(w, x) for x in c["ids"]]
    tokens = [u64(w, x) for x in c["tokens"]]
    assert ids and len(ids) == len(tokens), f"{w}: ids and tokens differ in length"
    for i, t in zip(ids, tokens):
        assert o.encode(i) == t, f"{w}: encode({i}) = {o.encode(i)}, want {t}"
        assert o.decode(t) == i, f"{w}: decode({t}) = {o.decode(t)}, want {i}"
        assert o.decode_str(o.encode_str(i, "base58"), "base58") == i
    assert o.encode_many(ids) == tokens, w
    assert o.decode_many(tokens) == ids, w


def run_node_sources(c: dict[str, Any]) -> None:
    """`Generator(node_id=source, layout=...)` with the case's variables set (None: unset), restored after."""
    w = f"node_sources.json:{c['name']}"
    outcome = "error" if "error" in c else "node_id"
    check_keys(w, c, {"name", "layout", "source", outcome}, {"env"})
    if not isinstance(c["source"], str):
        raise FormatError(f"{w}: source must be a string")
    env = c.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(x, (str, type(None))) for x in env.values()):
        raise FormatError(f"{w}: env must map names to strings or null")
    layout = v.layout(w, c["layout"])
    saved = {k: os.environ.get(k) for k in env}
    try:
        for k, x in env.items():
            if x is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = x
        if outcome == "error":
            code = error_code(w, c["error"])
            with pytest.raises(snowmint.SnowmintError) as info:
                snowmint.Generator(node_id=c["source"], layout=layout)
            expect_error(w, info.value, code)
            return
        with snowmint.Generator(node_id=c["source"], layout=layout) as gen:
            assert gen.node_id == u64(w, c["node_id"]), f"{w}: node_id {gen.node_id} != {c['node_id']}"
    finally:
        for k, old in saved.items():
            if old is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = old


RUNNERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "layouts": run_layouts,
    "generate": run_generate,
    "clock_readings": run_clock_readings,
    "decode": run_decode,
    "compose": run_compose,
    "encodings": run_encodings,
    "opaque": run_opaque,
    "node_sources": run_node_sources,
}


def _all_cases() -> list[Any]:
    params = []
    for path in FILES:
        try:
            cases = v.load(path)
        except FormatError:
            continue  # test_file_well_formed reports it
        for c in cases:
            params.append(pytest.param(path.stem, c, id=f"{path.stem}:{c['name']}"))
    return params


def record(topic: str, name: str, passed: bool) -> None:
    """With SNOWMINT_CONFORMANCE_DIR set, appends `file.json<TAB>case name<TAB>pass|fail` to
    $SNOWMINT_CONFORMANCE_DIR/python.txt (checked by scripts/check-conformance.py)."""
    d = os.environ.get("SNOWMINT_CONFORMANCE_DIR")
    if d:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "python.txt"), "a", encoding="utf-8") as f:
            f.write(f"{topic}.json\t{name}\t{'pass' if passed else 'fail'}\n")


@pytest.mark.parametrize("topic,case", _all_cases())
def test_case(topic: str, case: dict[str, Any]) -> None:
    runner = RUNNERS.get(topic)
    try:
        assert runner is not None, f"no runner for {topic}.json"
        runner(case)
    except BaseException:
        record(topic, case["name"], False)
        raise
    record(topic, case["name"], True)
