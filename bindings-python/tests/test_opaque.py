"""snowmint.Opaque: round trips, string forms, batches, errors and types (the vectors are in
test_vectors.py)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import snowmint

KEY = bytes(range(16))


def test_round_trip_and_width() -> None:
    rng = random.Random(7)
    for layout, bits in (("twitter", 63), ("js53", 53), ("discord", 64), ("decimal", 64)):
        o = snowmint.Opaque(key=KEY, layout=layout)
        assert o.bits == bits
        assert o.layout == snowmint.Layout.preset(layout)
        for _ in range(200):
            i = rng.getrandbits(bits)
            t = o.encode(i)
            assert 0 <= t < 1 << bits
            assert o.decode(t) == i


def test_default_layout_is_twitter_and_layout_objects_work() -> None:
    assert snowmint.Opaque(KEY).bits == 63
    custom = snowmint.Layout(timestamp_bits=30, node_bits=2, sequence_bits=8, epoch_ms=0)
    assert snowmint.Opaque(bytearray(KEY), custom).bits == 40


def test_strings() -> None:
    o = snowmint.Opaque(key=KEY, layout="twitter")
    i = 1541815603606036480
    for enc in ("dec", "hex", "base32", "base58"):
        s = o.encode_str(i, enc)
        assert s == snowmint.encode(o.encode(i), enc)
        assert o.decode_str(s, enc) == i
        assert o.decode_str(s) == i  # "any" tells the forms apart by shape
    assert len(o.encode_str(i, "base58")) == 11
    with pytest.raises(snowmint.ParseError):
        o.decode_str("0OIl", "base58")


def test_batches_match_single_calls() -> None:
    o = snowmint.Opaque(key=KEY, layout="js53")
    ids = list(range(1000, 1100))
    tokens = o.encode_many(ids)
    assert tokens == [o.encode(i) for i in ids]
    assert o.decode_many(tokens) == ids
    assert o.encode_many(iter(ids[:3])) == tokens[:3]
    assert o.encode_many([]) == []
    with pytest.raises(snowmint.InvalidIdError):
        o.encode_many([1, 2, 1 << 53])


def test_neighbours_show_no_order() -> None:
    o = snowmint.Opaque(key=b"sixteen byte key", layout="twitter")
    start = 1541815603606036480
    tokens = o.encode_many(range(start, start + 4001))
    pairs = list(zip(tokens, tokens[1:]))
    flips = sum(bin(a ^ b).count("1") for a, b in pairs) / len(pairs)
    assert abs(flips - 31.5) < 0.5, flips
    ascending = sum(b > a for a, b in pairs) / len(pairs)
    assert abs(ascending - 0.5) < 0.05, ascending


def test_errors() -> None:
    with pytest.raises(snowmint.InvalidArgumentError, match="16 bytes.*got 15") as info:
        snowmint.Opaque(key=KEY[:15])
    assert info.value.code == "INVALID_ARGUMENT"
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Opaque(key=KEY * 2)
    with pytest.raises(snowmint.InvalidArgumentError, match="32 to 64 bits"):
        snowmint.Opaque(KEY, snowmint.Layout(timestamp_bits=20, node_bits=2, sequence_bits=8, epoch_ms=0))
    with pytest.raises(TypeError, match="bytes"):
        snowmint.Opaque(key="0123456789abcdef")  # type: ignore[arg-type]
    with pytest.raises(snowmint.InvalidLayoutError):
        snowmint.Opaque(KEY, "nope")
    o = snowmint.Opaque(KEY, "js53")
    for bad in (1 << 53, 1 << 64, -1):
        with pytest.raises(snowmint.InvalidIdError) as info:
            o.encode(bad)
        assert info.value.code == "INVALID_ID"
        with pytest.raises(snowmint.InvalidIdError):
            o.decode(bad)
    with pytest.raises(TypeError):
        o.encode("12")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        o.encode(True)


def test_repr_hides_the_key() -> None:
    r = repr(snowmint.Opaque(KEY, "js53"))
    assert "bits=53" in r and "secret" in r
    assert KEY.hex() not in r and str(list(KEY)) not in r


ROOT_README = Path(__file__).resolve().parents[2] / "README.md"


def test_root_readme_opaque_examples_run() -> None:
    text = ROOT_README.read_text(encoding="utf-8")
    section = text.split("## Opaque IDs", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) >= 2
    for code in blocks:
        exec(compile(code, str(ROOT_README), "exec"), {"__name__": "readme"})
