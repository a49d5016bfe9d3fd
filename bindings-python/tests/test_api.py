"""The Python API beyond the vectors: types, errors and their codes, attributes, datetimes."""

from __future__ import annotations

import array
import datetime as dt

import pytest

import snowmint
from vectors import ERROR_CLASSES

UTC = dt.timezone.utc
TWITTER_EPOCH = 1288834974657


def test_exception_hierarchy_and_codes() -> None:
    assert issubclass(snowmint.SnowmintError, ValueError)
    for code, cls in ERROR_CLASSES.items():
        assert issubclass(cls, snowmint.SnowmintError)
        assert cls.code == code
        assert cls.__module__ == "snowmint"
        assert getattr(snowmint, cls.__name__) is cls
        assert code in snowmint.ERROR_CODES


@pytest.mark.parametrize(
    "call,cls",
    [
        (lambda: snowmint.Generator(1024), snowmint.NodeIdOutOfRangeError),
        (lambda: snowmint.Generator(-1), snowmint.NodeIdOutOfRangeError),
        (lambda: snowmint.Generator(2**64), snowmint.NodeIdOutOfRangeError),
        (lambda: snowmint.Generator(100, "decimal"), snowmint.NodeIdOutOfRangeError),
        (lambda: snowmint.Generator(1, "snowflake"), snowmint.InvalidLayoutError),
        (lambda: snowmint.Generator(1, policy="sometimes"), snowmint.InvalidArgumentError),
        (lambda: snowmint.Generator(1, max_ahead_ms=-1), snowmint.InvalidArgumentError),
        (lambda: snowmint.Generator(1, max_ahead_ms=2**63), snowmint.InvalidArgumentError),
        (lambda: snowmint.Generator(1, random_seed=-5), snowmint.InvalidArgumentError),
        (lambda: snowmint.Generator(1).next_ids(-1), snowmint.InvalidArgumentError),
        (lambda: snowmint.Generator(1).next_ids(2**64), snowmint.InvalidArgumentError),
        (lambda: snowmint.Generator(1).next_ids_array(-1), snowmint.InvalidArgumentError),
        (lambda: snowmint.Generator(1, max_ahead_ms=0).next_ids(4097), snowmint.InvalidArgumentError),
        (lambda: snowmint.Generator(1).next_ids(10**8), snowmint.InvalidArgumentError),  # past 15 s of ticks
        (lambda: snowmint.Layout.preset("snowcast"), snowmint.InvalidLayoutError),
        (lambda: snowmint.Layout.snowcast(0, 100), snowmint.InvalidLayoutError),
        (lambda: snowmint.Layout.hazelcast(65536), snowmint.InvalidLayoutError),
        (lambda: snowmint.Layout(timestamp_bits=50, node_bits=10, sequence_bits=12, epoch_ms=0), snowmint.InvalidLayoutError),
        (lambda: snowmint.Layout(timestamp_bits=-1, node_bits=10, sequence_bits=12, epoch_ms=0), snowmint.InvalidLayoutError),
        (lambda: snowmint.Layout(timestamp_bits=2**40, node_bits=10, sequence_bits=12, epoch_ms=0), snowmint.InvalidLayoutError),
        (lambda: snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=2**64), snowmint.InvalidLayoutError),
        (lambda: snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=0, order="nts"), snowmint.InvalidLayoutError),
        (lambda: snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=0, tick_ns=0), snowmint.InvalidLayoutError),
        (lambda: snowmint.decode(-1), snowmint.InvalidIdError),
        (lambda: snowmint.decode(2**64), snowmint.InvalidIdError),
        (lambda: snowmint.decode(2**63), snowmint.InvalidIdError),
        (lambda: snowmint.encode(-1), snowmint.InvalidIdError),
        (lambda: snowmint.encode(2**64, "hex"), snowmint.InvalidIdError),
        (lambda: snowmint.encode(1, "base64"), snowmint.InvalidArgumentError),
        (lambda: snowmint.parse("xyz", "base64"), snowmint.InvalidArgumentError),
        (lambda: snowmint.parse(""), snowmint.ParseError),
        (lambda: snowmint.parse("18446744073709551616", "dec"), snowmint.ParseError),
        (lambda: snowmint.compose(0, 1024, 0), snowmint.NodeIdOutOfRangeError),
        (lambda: snowmint.compose(0, 0, 4096), snowmint.InvalidArgumentError),
        (lambda: snowmint.compose(2**41, 0, 0), snowmint.LayoutExhaustedError),
        (lambda: snowmint.compose(0, -1, 0), snowmint.NodeIdOutOfRangeError),
        (lambda: snowmint.min_id_at(0), snowmint.ClockBeforeEpochError),
        (lambda: snowmint.min_id_at(-1), snowmint.InvalidArgumentError),
        (lambda: snowmint.min_id_at(dt.datetime(1969, 1, 1, tzinfo=UTC)), snowmint.ClockBeforeEpochError),
        (lambda: snowmint.min_id_at(dt.datetime(2020, 1, 1)), snowmint.InvalidArgumentError),
        (lambda: snowmint.min_id_at(dt.datetime(2090, 1, 1, tzinfo=UTC)), snowmint.LayoutExhaustedError),
    ],
)
def test_bad_input_raises_its_code(call, cls) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(cls) as info:
        call()
    e = info.value
    assert type(e) is cls and e.code == cls.code and isinstance(e, ValueError)
    assert str(e)


@pytest.mark.parametrize(
    "call",
    [
        lambda: snowmint.Generator(b"7"),  # a str is a node source (test_coord.py); bytes are not
        lambda: snowmint.Generator(7.0),
        lambda: snowmint.Generator(True),
        lambda: snowmint.Generator(7, 3),
        lambda: snowmint.Generator(7, clock=123),
        lambda: snowmint.Generator(7, policy=1),
        lambda: snowmint.Generator(7, random_start=1),
        lambda: snowmint.Generator(7).next_ids("3"),
        lambda: snowmint.Generator(7).next_ids(3.0),
        lambda: snowmint.Layout.preset(1),
        lambda: snowmint.Layout(timestamp_bits=41.0, node_bits=10, sequence_bits=12, epoch_ms=0),
        lambda: snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=0, use_sign_bit=1),
        lambda: snowmint.decode(b"123"),
        lambda: snowmint.decode(1.0),
        lambda: snowmint.encode("1"),
        lambda: snowmint.parse(123),
        lambda: snowmint.parse(b"123"),
        lambda: snowmint.min_id_at("2020-01-01"),
        lambda: snowmint.min_id_at(1.5e12),
        lambda: snowmint.compose(1, 2, "3"),
    ],
)
def test_wrong_types_raise_type_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError):
        call()


def test_missing_arguments_raise_type_error() -> None:
    with pytest.raises(TypeError):
        snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        snowmint.Layout(41, 10, 12, epoch_ms=0)  # type: ignore[misc]
    with pytest.raises(TypeError):
        snowmint.Generator(7, "twitter", None)  # type: ignore[misc]


def test_index_objects_are_ints() -> None:
    class Seven:
        def __index__(self) -> int:
            return 7

    assert snowmint.Generator(Seven()).node_id == 7  # type: ignore[arg-type]


def test_generator_defaults_and_attributes() -> None:
    with pytest.raises(TypeError):
        snowmint.Generator()  # type: ignore[call-arg]  # no default node ID: it must be chosen
    g = snowmint.Generator(7)
    assert g.node_id == 7 and g.policy == "wait" and g.max_ahead_ms == 15000
    assert g.layout == snowmint.Layout.preset("twitter") and g.clock is None and g.random_start is False
    a, b = g.next_id(), g.next_id()
    assert type(a) is int and 0 < a < b < 2**63
    d = snowmint.decode(b)
    assert d.node_id == 7
    now_ms = dt.datetime.now(UTC).timestamp() * 1000
    assert abs(d.timestamp_ms - now_ms) < 60_000
    assert "Generator(node_id=7" in repr(g)
    g2 = snowmint.Generator(3, snowmint.Layout.preset("discord"), policy="fail", max_ahead_ms=5, random_start=True)
    assert (g2.node_id, g2.policy, g2.max_ahead_ms, g2.random_start, g2.layout.name) == (3, "fail", 5, True, "discord")


def test_batches() -> None:
    g = snowmint.Generator(5)
    ids = g.next_ids(10_000)
    assert len(ids) == 10_000 and all(a < b for a, b in zip(ids, ids[1:]))
    arr = g.next_ids_array(10_000)
    assert isinstance(arr, array.array) and arr.typecode == "Q" and len(arr) == 10_000
    assert arr[0] > ids[-1] and all(a < b for a, b in zip(arr, arr[1:]))
    assert {snowmint.decode(i).node_id for i in arr[:: 997]} == {5}
    assert g.next_ids(0) == [] and len(g.next_ids_array(0)) == 0
    arr.append(1)  # a normal, resizable array
    assert len(arr) == 10_001


@pytest.mark.parametrize("layout", ["twitter", "sonyflake", "hazelcast", "decimal"])
@pytest.mark.parametrize("random_seed", [None, 7])
def test_next_ids_list_is_exactly_the_array_batch(layout: str, random_seed: object) -> None:
    # Twin generators on one injected clock: the list and the array batch are the same IDs, across ticks.
    t0 = 1_750_000_000_000 * (1_000_000 if layout == "decimal" else 1)
    a = snowmint.Generator(3, layout, clock=lambda: t0, random_seed=random_seed)
    b = snowmint.Generator(3, layout, clock=lambda: t0, random_seed=random_seed)
    for n in (1, 5, 300, 0, 9000):
        ids = a.next_ids(n)
        assert type(ids) is list and all(type(i) is int for i in ids)
        assert ids == b.next_ids_array(n).tolist()
    # A batch the core refuses (it could never fit in max_ahead) reserves nothing: both continue in step.
    with pytest.raises(snowmint.InvalidArgumentError):
        a.next_ids(10**12)
    assert a.next_id() == b.next_id()


def test_next_ids_into_fills_in_place_and_pins_the_array() -> None:
    g = snowmint.Generator(5)
    buf = array.array("Q", bytes(8 * 5000))
    g.next_ids_into(buf)
    first = list(buf)
    assert all(a < b for a, b in zip(first, first[1:])) and first[0] > 0
    g.next_ids_into(buf)
    assert buf[0] > first[-1]
    g.next_ids_into(array.array("Q"))  # empty: nothing to do
    for bad in (array.array("q", [0]), array.array("L", [0]), [0, 0], bytearray(16)):
        with pytest.raises(TypeError):
            g.next_ids_into(bad)  # type: ignore[arg-type]

    # A clock that tries to resize the array while it is being filled finds it pinned.
    target = array.array("Q", [0] * 10)
    errors: list[BaseException] = []

    def clock() -> int:
        try:
            target.append(1)
        except BufferError as e:
            errors.append(e)
        return 1_750_000_000_000

    snowmint.Generator(1, clock=clock).next_ids_into(target)
    assert len(errors) == 1 and len(target) == 10 and target[0] > 0
    target.append(1)  # released afterwards
    assert len(target) == 11


def test_layout_attributes() -> None:
    t = snowmint.Layout.preset("twitter")
    assert (t.name, t.timestamp_bits, t.node_bits, t.sequence_bits, t.total_bits) == ("twitter", 41, 10, 12, 63)
    assert (t.order, t.tick_ns, t.epoch_ms, t.node_count, t.ids_per_tick) == (
        "timestamp_node_sequence", 1_000_000, TWITTER_EPOCH, 1024, 4096)
    assert (t.max_node_id, t.max_tick, t.clock_unit, t.family) == (1023, 2**41 - 1, "ms", "binary")
    assert t.lifespan_end_iso == "2080-07-10T17:30:30.209Z"
    assert t.lifespan_end == dt.datetime(2080, 7, 10, 17, 30, 30, 209000, tzinfo=UTC)
    custom = snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=TWITTER_EPOCH)
    assert custom.name == "custom" and custom == t.__class__(
        timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=TWITTER_EPOCH)
    assert hash(custom) == hash(snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=TWITTER_EPOCH))
    assert "timestamp_bits=41" in repr(custom)
    h = snowmint.Layout.hazelcast(5)
    assert (h.name, h.node_id_offset, h.max_node_id, h.order) == ("hazelcast", 5, 65530, "timestamp_sequence_node")
    s = snowmint.Layout.snowcast(1_500_000_000_000, 1000)
    assert (s.node_count, s.sequence_bits) == (1024, 13)
    dec = snowmint.Layout.decimal()
    assert (dec.name, dec.clock_unit, dec.family, dec.max_node_id) == ("decimal", "ns", "decimal", 99)
    assert snowmint.Layout.preset("chronicle") == dec
    sony = snowmint.Layout.preset("sonyflake")
    assert sony.tick_ns == 10_000_000 and sony.ids_per_tick == 256
    assert set(snowmint.PRESET_NAMES) >= {"twitter", "discord", "instagram", "sonyflake", "hazelcast", "js53", "decimal"}


def test_field_named_in_layout_errors() -> None:
    with pytest.raises(snowmint.InvalidLayoutError, match="tick_ns"):
        snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=0, tick_ns=0)
    with pytest.raises(snowmint.InvalidLayoutError, match="timestamp_bits"):
        snowmint.Layout(timestamp_bits=-3, node_bits=10, sequence_bits=12, epoch_ms=0)
    with pytest.raises(snowmint.InvalidLayoutError, match="node_count"):
        snowmint.Layout.snowcast(0, 10_000)


def test_lifespan_past_year_9999() -> None:
    slow = snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=0, tick_ns=1_000_000_000)
    assert slow.lifespan_end_iso.startswith("+")
    with pytest.raises(OverflowError, match="lifespan_end"):
        slow.lifespan_end
    far = snowmint.decode(2**64 - 1, snowmint.Layout(
        timestamp_bits=64, node_bits=0, sequence_bits=0, epoch_ms=0, tick_ns=1, use_sign_bit=True))
    assert far.iso.startswith("2554-")
    huge = snowmint.decode(2**63 - 1, snowmint.Layout(
        timestamp_bits=63, node_bits=0, sequence_bits=0, epoch_ms=0, tick_ns=1_000_000))
    with pytest.raises(OverflowError, match="year 9999"):
        huge.datetime


def test_decode_fields_and_datetime() -> None:
    d = snowmint.decode(1212161512043450368)
    assert (d.timestamp_ms, d.node_id, d.sequence, d.iso) == (1577836800000, 1, 0, "2020-01-01T00:00:00.000Z")
    assert d.datetime == dt.datetime(2020, 1, 1, tzinfo=UTC)
    assert d.unix_ns == 1577836800000 * 10**6
    assert d == snowmint.decode(1212161512043450368)
    assert "Decoded(id=1212161512043450368" in repr(d)
    dec = snowmint.decode(1640700422954100128, "decimal")
    assert (dec.node_id, dec.iso, dec.sub_ms_ns) == (28, "2021-12-28T14:07:02.954100100Z", 100100)
    assert dec.datetime == dt.datetime(2021, 12, 28, 14, 7, 2, 954100, tzinfo=UTC)


def test_compose_and_min_id_at() -> None:
    layout = snowmint.Layout.preset("discord")
    i = snowmint.compose(1000, 3, 7, layout=layout)
    d = snowmint.decode(i, "discord")
    assert (d.timestamp_ticks, d.node_id, d.sequence) == (1000, 3, 7)
    when = dt.datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    ms = int(when.timestamp() * 1000)
    assert snowmint.min_id_at(when, "discord") == snowmint.min_id_at(ms, layout="discord")
    other_tz = when.astimezone(dt.timezone(dt.timedelta(hours=5)))
    assert snowmint.min_id_at(other_tz, "discord") == snowmint.min_id_at(ms, "discord")
    g = snowmint.Generator(9, "discord")
    before = snowmint.min_id_at(dt.datetime.now(UTC) - dt.timedelta(seconds=1), "discord")
    assert g.next_id() >= before


def test_encodings_round_trip() -> None:
    for i in (0, 1, 255, 1212161512043450368, 2**64 - 1):
        for enc in ("dec", "hex", "base32", "base58"):
            text = snowmint.encode(i, enc)
            assert snowmint.parse(text, enc) == i
    assert snowmint.encode(255, "hex") == "00000000000000ff"
    assert snowmint.parse("0xff") == 255
    with pytest.raises(snowmint.ParseError) as info:
        snowmint.parse("3hs0qtU4AFc", "base58")
    assert info.value.position == 3 and "position 3" in str(info.value)


def test_decimal_generator() -> None:
    clock_ns = 1_640_700_422_954_100_000
    g = snowmint.DecimalGenerator(28, clock=lambda: clock_ns)
    assert g.layout.name == "decimal"
    a, b = g.next_id(), g.next_id()
    assert a == 1640700422954100028 and b == a + 100
    assert snowmint.decode(a, "decimal").iso == "2021-12-28T14:07:02.954100000Z"
    live = snowmint.DecimalGenerator(1)
    x = live.next_id()
    assert x % 100 == 1
