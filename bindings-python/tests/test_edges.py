"""What a new user trips over first: ambiguous strings, unknown names, clock units, restarts, decode inputs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import snowmint

T0 = 1_750_000_000_000  # Unix ms


# --- parse("…", "any") never chooses silently ---------------------------------------------------

@pytest.mark.parametrize(
    "text, form, value",
    [
        ("1970065334000000", "hex", 1832972002764259328),
        ("1700000000000", "base32", 1405123083739594752),
        ("12345678912", "base58", 7690564481429305),
    ],
)
def test_ambiguous_strings_name_both_readings(text: str, form: str, value: int) -> None:
    with pytest.raises(snowmint.ParseError) as info:
        snowmint.parse(text)
    e = info.value
    assert e.code == "PARSE" and e.position == 0
    assert f"dec {int(text)}" in str(e) and f"{form} {value}" in str(e)
    assert f'"{form}"' in str(e)  # how to choose: name the encoding
    assert snowmint.parse(text, form) == value
    assert snowmint.parse(text, "dec") == int(text)
    with pytest.raises(snowmint.ParseError):
        snowmint.decode(text)


def test_neighbouring_widths_and_zeros_are_plain_decimal() -> None:
    assert snowmint.parse("197006533400000") == 197006533400000  # 15 digits
    assert snowmint.parse("12345678910") == 12345678910  # 11 digits with a 0: not base58


# --- decode takes what JavaScript takes -------------------------------------------------------------

def test_decode_takes_int_and_strings() -> None:
    i = 1934266310456274944
    want = snowmint.decode(i)
    for form in ("dec", "hex", "base32", "base58"):
        if form == "dec":
            assert snowmint.decode(str(i)) == want
        assert snowmint.decode(snowmint.encode(i, form) if form != "dec" else str(i)).node_id == want.node_id
    assert snowmint.decode("0x" + snowmint.encode(i, "hex")).id == i


@pytest.mark.parametrize("bad", [2**64, -1, 2**70])
def test_decode_out_of_range_int_is_invalid_id(bad: int) -> None:
    with pytest.raises(snowmint.InvalidIdError) as info:
        snowmint.decode(bad)
    assert info.value.code == "INVALID_ID"


@pytest.mark.parametrize("bad", ["18446744073709551616", "-1", ""])
def test_decode_out_of_range_string_is_parse(bad: str) -> None:
    with pytest.raises(snowmint.ParseError):
        snowmint.decode(bad)


def test_decode_other_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        snowmint.decode(1.0)  # type: ignore[arg-type]


# --- unknown names ---------------------------------------------------------------------------------

def test_unknown_layout_suggests_the_nearest() -> None:
    with pytest.raises(snowmint.InvalidLayoutError) as info:
        snowmint.Generator(1, layout="Twitter")  # type: ignore[arg-type]
    msg = str(info.value)
    assert '"Twitter"' in msg and "did you mean twitter?" in msg and "discord" in msg
    assert "is 0" not in msg


def test_unknown_policy_suggests_the_nearest() -> None:
    with pytest.raises(snowmint.InvalidArgumentError) as info:
        snowmint.Generator(1, policy="Fail")  # type: ignore[arg-type]
    msg = str(info.value)
    assert '"Fail"' in msg and "did you mean fail?" in msg and "wait, fail, strict" in msg
    assert "allowed at most 0" not in msg


def test_unknown_encoding_and_order() -> None:
    with pytest.raises(snowmint.InvalidArgumentError, match=r'"bas58" \(did you mean base58\?\)'):
        snowmint.encode(1, "bas58")  # type: ignore[arg-type]
    with pytest.raises(snowmint.SnowmintError, match="did you mean timestamp_node_sequence"):
        snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, order="timestamp-node-sequence", epoch_ms=0)  # type: ignore[arg-type]


def test_unknown_name_far_from_all_lists_the_allowed() -> None:
    with pytest.raises(snowmint.InvalidLayoutError) as info:
        snowmint.Layout.preset("uuid")  # type: ignore[arg-type]
    assert "did you mean" not in str(info.value)
    assert "twitter, discord, instagram" in str(info.value)


def test_snowcast_by_name_says_how_in_python() -> None:
    with pytest.raises(snowmint.InvalidLayoutError) as info:
        snowmint.Layout.preset("snowcast")  # type: ignore[arg-type]
    msg = str(info.value)
    assert "epoch and a node count" in msg
    assert "snowmint.Layout.snowcast(epoch_ms=" in msg and "node_count=" in msg
    assert "::" not in msg  # not Rust syntax
    # ... and the call it names works as written.
    assert snowmint.Layout.snowcast(epoch_ms=1_600_000_000_000, node_count=1024).node_count == 1024


# --- clock readings in the wrong unit ---------------------------------------------------------------

@pytest.mark.parametrize(
    "reading, says",
    [
        (1_700_000_000, "looks like seconds: multiply by 1000"),
        (1_700_000_000.25, "looks like seconds: multiply by 1000"),  # time.time()
        (1_700_000_000_000_000, "looks like microseconds: divide by 1000"),
        (1_700_000_000_000_000_000, "looks like nanoseconds: divide by 1000000"),  # time.time_ns()
    ],
)
def test_clock_in_the_wrong_unit_says_so(reading: object, says: str) -> None:
    g = snowmint.Generator(1, clock=lambda: reading)
    with pytest.raises(snowmint.InvalidClockError) as info:
        g.next_id()
    assert says in str(info.value) and info.value.code == "INVALID_CLOCK"
    assert g.high_water_mark() == 0  # nothing minted


def test_real_clock_functions_in_the_wrong_unit() -> None:
    for clock in (time.time, time.time_ns):
        with pytest.raises(snowmint.InvalidClockError, match="looks like"):
            snowmint.Generator(1, clock=clock).next_id()
    # The right unit mints.
    assert snowmint.Generator(1, clock=lambda: time.time_ns() // 1_000_000).next_id() > 0


def test_nanosecond_layouts_hint_milliseconds() -> None:
    g = snowmint.Generator(5, layout="decimal", clock=lambda: T0)
    # decimal's epoch is 1970: T0 (ms) is a valid (early) nanosecond reading there, so no guess.
    assert g.next_id() > 0
    lay = snowmint.Layout(timestamp_bits=54, node_bits=1, sequence_bits=8, tick_ns=100, epoch_ms=1_288_834_974_657)
    with pytest.raises(snowmint.InvalidClockError, match="looks like milliseconds: multiply by 1000000"):
        snowmint.Generator(1, lay, clock=lambda: T0).next_id()


# --- high_water_mark() / restore(): restarts --------------------------------------------------------

def test_restore_never_moves_backwards() -> None:
    g = snowmint.Generator(7, clock=lambda: T0)
    assert g.high_water_mark() == 0
    ids = g.next_ids(3)
    mark = g.high_water_mark()
    g.restore(0)
    g.restore(str(mark - 1))
    assert g.high_water_mark() == mark
    assert g.next_id() == ids[-1] + 1


def test_restart_recipe(tmp_path: Path) -> None:
    path = tmp_path / "snowmint.mark"
    # First run: mint, persist the mark at shutdown.
    first = snowmint.Generator(7, clock=lambda: T0)
    before = first.next_ids(100)
    path.write_text(str(first.high_water_mark()))
    # Restart with the clock 5 s behind (NTP step while down): restore before minting.
    second = snowmint.Generator(7, clock=lambda: T0 - 5_000)
    if path.exists():
        second.restore(int(path.read_text()))
    after = second.next_ids(100)
    assert min(after) > max(before)
    # Without the mark the same restart would repeat IDs' ticks from the past.
    assert snowmint.Generator(7, clock=lambda: T0 - 5_000).next_id() < before[0]


@pytest.mark.parametrize("bad, exc", [(-1, snowmint.InvalidArgumentError), (2**64, snowmint.InvalidArgumentError),
                                      ("12x", snowmint.ParseError), (1.5, TypeError)])
def test_restore_rejects_bad_marks(bad: object, exc: type) -> None:
    g = snowmint.Generator(7, clock=lambda: T0)
    with pytest.raises(exc):
        g.restore(bad)  # type: ignore[arg-type]
    assert g.high_water_mark() == 0
