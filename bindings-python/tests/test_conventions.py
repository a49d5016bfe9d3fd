"""Python conventions: ``__version__``, pickling and hashing of ``Layout`` and ``Decoded``,
``Decoded.to_dict()``, and preset names as literal types (a misspelt name fails mypy)."""

from __future__ import annotations

import copy
import importlib.metadata
import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

import snowmint

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_crates_and_the_wheels() -> None:
    cargo = (ROOT / "Cargo.toml").read_text()
    m = re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', cargo, re.M | re.S)
    assert m, "workspace version not found in Cargo.toml"
    assert snowmint.__version__ == m.group(1)
    assert snowmint.__version__ == importlib.metadata.version("snowmint")


def _layouts() -> list[snowmint.Layout]:
    return [
        *(snowmint.Layout.preset(n) for n in snowmint.PRESET_NAMES if n != "snowcast"),
        snowmint.Layout.preset("chronicle"),
        snowmint.Layout.hazelcast(5),
        snowmint.Layout.snowcast(1704067200000, 1000),
        snowmint.Layout.decimal(),
        snowmint.Layout(timestamp_bits=40, node_bits=8, sequence_bits=10, order="timestamp_sequence_node",
                        tick_ns=10_000_000, epoch_ms=1_700_000_000_000, node_id_offset=3),
        snowmint.Layout(timestamp_bits=1, node_bits=0, sequence_bits=63, epoch_ms=0, use_sign_bit=True),
    ]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_layout_pickles_equal_with_the_same_hash(protocol: int) -> None:
    for layout in _layouts():
        back = pickle.loads(pickle.dumps(layout, protocol=protocol))
        assert type(back) is snowmint.Layout
        assert back == layout, (layout, back)
        assert hash(back) == hash(layout)
        assert repr(back) == repr(layout)
        assert back.name == layout.name
        assert copy.deepcopy(layout) == layout


def test_layout_hash_agrees_with_eq() -> None:
    layouts = _layouts()
    assert len({*layouts, *(snowmint.Layout.preset(n) for n in ("twitter", "discord"))}) == len(set(layouts))
    assert snowmint.Layout.preset("twitter") == snowmint.Layout.preset("twitter")
    assert hash(snowmint.Layout.preset("twitter")) == hash(snowmint.Layout.preset("twitter"))
    assert snowmint.Layout.preset("twitter") != snowmint.Layout.preset("discord")
    assert snowmint.Layout.hazelcast(5) != snowmint.Layout.hazelcast(6)
    assert {snowmint.Layout.preset("js53"): 1}[snowmint.Layout.preset("js53")] == 1


def test_layout_unpickling_checks_what_it_is_given() -> None:
    # A pickle whose preset and configuration disagree is refused, not turned into another layout.
    restore, args = snowmint.Layout.preset("twitter").__reduce__()
    forged = (args[0], args[1] + 1, *args[2:])
    with pytest.raises(ValueError):
        restore(*forged)
    with pytest.raises(snowmint.InvalidLayoutError):
        restore(None, 60, 10, 12, "timestamp_node_sequence", 1_000_000, 0, 0, False, 0)


def test_decoded_pickles_equal_and_hashes() -> None:
    g = snowmint.Generator(7, "discord", clock=lambda: 1_750_000_000_000)
    ids = [g.next_id() for _ in range(3)]
    decoded = [snowmint.decode(i, "discord") for i in ids]
    for d in decoded:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            back = pickle.loads(pickle.dumps(d, protocol=protocol))
            assert back == d and hash(back) == hash(d)
            assert back.layout == snowmint.Layout.preset("discord")
            assert repr(back) == repr(d)
    assert len(set(decoded)) == 3
    assert snowmint.decode(ids[0], "discord") == decoded[0]
    assert hash(snowmint.decode(ids[0], "discord")) == hash(decoded[0])
    # The same ID under another layout is another decoding.
    assert snowmint.decode(ids[0], "twitter") != decoded[0]
    dec = snowmint.decode(1_750_000_000_123_456_742, "decimal")
    assert pickle.loads(pickle.dumps(dec)) == dec


def test_decoded_to_dict_is_plain_and_json_ready() -> None:
    d = snowmint.decode(1212161512043450368)
    out = d.to_dict()
    assert out == {
        "id": 1212161512043450368,
        "timestamp_ticks": d.timestamp_ticks,
        "timestamp_ms": d.timestamp_ms,
        "sub_ms_ns": 0,
        "unix_ns": d.timestamp_ms * 1_000_000,
        "node_id": d.node_id,
        "sequence": d.sequence,
        "iso": d.iso,
    }
    assert json.loads(json.dumps(out)) == out
    dec = snowmint.decode(1_750_000_000_123_456_742, "decimal").to_dict()
    assert dec["node_id"] == 42 and dec["sub_ms_ns"] == 456_700 and dec["iso"].endswith(".123456700Z")


def _mypy(path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPY_CACHE_DIR": str(path.parent / ".mypy_cache")}
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", str(path)],
                          capture_output=True, text=True, cwd=path.parent, env=env, timeout=300)


def test_preset_names_are_literal_types(tmp_path: Path) -> None:
    def program(names: list[str]) -> str:
        return (
            "import snowmint\n"
            f"snowmint.Generator(1, layout={names[0]!r})\n"
            f"snowmint.Layout.preset({names[1]!r})\n"
            f"snowmint.decode(1, {names[2]!r})\n"
            f"snowmint.Opaque(bytes(16), layout={names[3]!r})\n"
        )

    good = tmp_path / "good.py"
    good.write_text(program(["twitter", "js53", "discord", "chronicle"]))
    r = _mypy(good)
    assert r.returncode == 0, r.stdout + r.stderr
    bad = tmp_path / "bad.py"
    bad.write_text(program(["twiter", "snowcast", "Twitter", "sonyflak"]))
    r = _mypy(bad)
    assert r.returncode != 0, r.stdout
    for line, name in [(2, "twiter"), (3, "snowcast"), (4, "Twitter"), (5, "sonyflak")]:
        assert re.search(rf"bad\.py:{line}: error: .*Literal\['{name}'\]", r.stdout), r.stdout
