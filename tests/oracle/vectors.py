#!/usr/bin/env python3
"""The conformance oracle: SPEC.md §1, §2 and §5 in plain Python (stdlib only), sharing no code with the
Rust core, and the generator of tests/vectors/*.json.

    python3 tests/oracle/vectors.py           # rewrite tests/vectors/*.json (deterministic)
    python3 tests/oracle/vectors.py --check   # exit 1 if the committed files differ from a fresh run

Every expected value in the corpus is computed here from the SPEC's rules, with Python's unbounded
integers (so a 64-bit overflow in the core shows up as a mismatch, not as agreement). The oracle also
checks its own output: IDs of one generator strictly increase, waits stay a few milliseconds, every
fixed-width string form sorts like the numbers, and the real IDs in decode.json decode to the instants
their sources document (see tests/vectors/SOURCES.md).
"""

import argparse
import datetime
import json
import os
import sys

U64 = (1 << 64) - 1
NS_PER_MS = 1_000_000
TNS = "timestamp_node_sequence"
TSN = "timestamp_sequence_node"

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.normpath(os.path.join(HERE, "..", "vectors"))


class Fail(Exception):
    """An expected error: `code` is the stable error code; `field` names a bad layout field."""

    def __init__(self, code, field=None, position=None, readings=None):
        super().__init__(code, field, position)
        self.code = code
        self.field = field
        self.position = position
        self.readings = readings


# --------------------------------------------------------------------------------------------------
# Time text (ISO-8601 UTC). datetime covers years 1..9999; later years are shifted by whole 400-year
# Gregorian cycles (146097 days), which repeat the calendar exactly.

_EPOCH_DATE = datetime.date(1970, 1, 1)
_LAST_DAY = (datetime.date(9999, 12, 31) - _EPOCH_DATE).days
_CYCLE_DAYS = 146097


def civil(days):
    years = 0
    if days > _LAST_DAY:
        k = (days - _LAST_DAY) // _CYCLE_DAYS + 1
        days -= k * _CYCLE_DAYS
        years = 400 * k
    d = _EPOCH_DATE + datetime.timedelta(days=days)
    return d.year + years, d.month, d.day


def iso(unix_ms, sub_ms_ns=0, nanos=False):
    secs, ms = divmod(unix_ms, 1000)
    days, rem = divmod(secs, 86400)
    y, mo, d = civil(days)
    year = "+%d" % y if y > 9999 else "%04d" % y
    frac = "%09d" % (ms * NS_PER_MS + sub_ms_ns) if nanos else "%03d" % ms
    return "%s-%02d-%02dT%02d:%02d:%02d.%sZ" % (
        year, mo, d, rem // 3600, rem // 60 % 60, rem % 60, frac)


def unix_ms_of(text):
    """Unix ms of an ISO instant 'YYYY-MM-DDTHH:MM:SS.fffZ' (for checking documented examples)."""
    dt = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    delta = dt - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


# --------------------------------------------------------------------------------------------------
# Layouts (SPEC §1)

PRESETS = {
    # name: (timestamp_bits, node_bits, sequence_bits, order, tick_ns, epoch_ms, use_sign_bit)
    "twitter": (41, 10, 12, TNS, NS_PER_MS, 1288834974657, False),
    "discord": (42, 10, 12, TNS, NS_PER_MS, 1420070400000, True),
    "instagram": (41, 13, 10, TNS, NS_PER_MS, 1293840000000, True),
    "sonyflake": (39, 16, 8, TSN, 10 * NS_PER_MS, 1409529600000, False),
    "hazelcast": (41, 16, 6, TSN, NS_PER_MS, 1514764800000, False),
    "js53": (41, 4, 8, TNS, NS_PER_MS, 1704067200000, False),
}
SUM_FIELD = "timestamp_bits + node_bits + sequence_bits"
MAX_EPOCH_MS = U64 // NS_PER_MS


class Layout:
    def __init__(self, ts, nb, sb, order, tick_ns, epoch_ms, offset=0, sign=False, decimal=False):
        self.decimal = decimal
        self.ts, self.nb, self.sb, self.order = ts, nb, sb, order
        self.tick_ns, self.epoch_ms, self.offset, self.sign = tick_ns, epoch_ms, offset, sign
        self.epoch_ns = epoch_ms * NS_PER_MS
        if decimal:
            # Chronicle: 100 ns ticks since Unix 0, ID = tick * 100 + host, host 0..=99, all 64 bits.
            self.max_tick = (U64 - 99) // 100
            self.seq_mask = 0
            self.node_max = 99
            self.max_position = self.max_tick
            self.total = 64
        else:
            self.max_tick = (1 << ts) - 1
            self.seq_mask = (1 << sb) - 1
            self.node_max = (1 << nb) - 1
            # Positions are tick << sequence_bits | sequence; when they fill 64 bits the very last one
            # stays unused so that "next free position" fits in 64 bits.
            self.max_position = min((1 << (ts + sb)) - 1, U64 - 1)
            self.total = ts + nb + sb

    # Derived facts
    def lifespan_end_ms(self):
        # Rounded up: the first whole millisecond none of which the layout can represent.
        return self.epoch_ms + -(-(self.max_tick + 1) * self.tick_ns // NS_PER_MS)

    def clock_unit(self):
        return "ns" if self.tick_ns < NS_PER_MS else "ms"

    def shows_nanos(self):
        return self.tick_ns % NS_PER_MS != 0

    def expect(self):
        end = self.lifespan_end_ms()
        return {
            "total_bits": self.total,
            "node_count": str(self.node_max + 1),
            "ids_per_tick": str(self.seq_mask + 1),
            "max_node_id": str(self.node_max - self.offset),
            "max_tick": str(self.max_tick),
            "lifespan_end_ms": str(end),
            "lifespan_end_iso": iso(end),
            "clock_unit": self.clock_unit(),
        }

    # Time
    def tick_at_ns(self, unix_ns):
        if unix_ns < self.epoch_ns:
            raise Fail("CLOCK_BEFORE_EPOCH")
        tick = (unix_ns - self.epoch_ns) // self.tick_ns
        if tick > self.max_tick:
            raise Fail("LAYOUT_EXHAUSTED")
        return tick

    def tick_start_ns(self, tick):
        return min(self.epoch_ns + tick * self.tick_ns, U64)

    # Packing
    def pack(self, position, node_field):
        if self.decimal:
            v = position * 100 + node_field
        elif self.order == TSN:
            v = (position << self.nb) | node_field
        else:
            tick, seq = position >> self.sb, position & self.seq_mask
            v = (tick << (self.nb + self.sb)) | (node_field << self.sb) | seq
        assert 0 <= v <= U64
        return v

    def compose(self, ticks, node, seq):
        if ticks > self.max_tick:
            raise Fail("LAYOUT_EXHAUSTED")
        if node > self.node_max:
            raise Fail("NODE_ID_OUT_OF_RANGE")
        if seq > self.seq_mask:
            raise Fail("INVALID_ARGUMENT")
        return self.pack((ticks << self.sb) | seq, node)

    def min_id_at_ms(self, unix_ms):
        ns = unix_ms * NS_PER_MS
        if ns > U64:
            raise Fail("INVALID_CLOCK")
        return self.compose(self.tick_at_ns(ns), 0, 0)

    def decode(self, id_):
        if self.decimal:
            tick, node, seq = id_ // 100, id_ % 100, 0
            if tick > self.max_tick:
                raise Fail("INVALID_ID")
        else:
            if self.total < 64 and id_ >> self.total:
                raise Fail("INVALID_ID")
            tick = id_ >> (self.nb + self.sb)
            if self.order == TNS:
                node, seq = (id_ >> self.sb) & self.node_max, id_ & self.seq_mask
            else:
                node, seq = id_ & self.node_max, (id_ >> self.nb) & self.seq_mask
        since = tick * self.tick_ns
        unix_ms = self.epoch_ms + since // NS_PER_MS
        sub = since % NS_PER_MS
        return {
            "timestamp_ticks": str(tick),
            "unix_ms": str(unix_ms),
            "sub_ms_ns": sub,
            "node": str(node),
            "sequence": str(seq),
            "iso": iso(unix_ms, sub, self.shows_nanos()),
        }


def custom(ts, nb, sb, order, tick_ns, epoch_ms, offset=0, sign=False):
    """Validates a custom layout; every error names its field."""
    if not 1 <= ts <= 64:
        raise Fail("INVALID_LAYOUT", "timestamp_bits")
    if not 0 <= nb <= 63:
        raise Fail("INVALID_LAYOUT", "node_bits")
    if not 0 <= sb <= 63:
        raise Fail("INVALID_LAYOUT", "sequence_bits")
    if ts + nb + sb > (64 if sign else 63):
        raise Fail("INVALID_LAYOUT", SUM_FIELD)
    if order not in (TNS, TSN):
        raise Fail("INVALID_LAYOUT", "order")
    if tick_ns < 1:
        raise Fail("INVALID_LAYOUT", "tick_ns")
    if epoch_ms > MAX_EPOCH_MS:
        raise Fail("INVALID_LAYOUT", "epoch_ms")
    if offset > (1 << nb) - 1:
        raise Fail("INVALID_LAYOUT", "node_id_offset")
    lay = Layout(ts, nb, sb, order, tick_ns, epoch_ms, offset, sign)
    if lay.lifespan_end_ms() > U64:
        raise Fail("INVALID_LAYOUT", "timestamp_bits")
    return lay


LAYOUT_KEYS = {"preset", "node_id_offset", "epoch_ms", "node_count", "timestamp_bits", "node_bits",
               "sequence_bits", "order", "tick_ns", "use_sign_bit"}


def make_layout(spec):
    assert set(spec) <= LAYOUT_KEYS, spec
    if "preset" in spec:
        name = spec["preset"]
        if name == "hazelcast":
            assert set(spec) <= {"preset", "node_id_offset"}, spec
            p = PRESETS[name]
            return custom(*p[:6], offset=int(spec.get("node_id_offset", "0")), sign=p[6])
        if name == "snowcast":
            assert set(spec) == {"preset", "epoch_ms", "node_count"}, spec
            count = int(spec["node_count"])
            if not 128 <= count <= 8192:
                raise Fail("INVALID_LAYOUT", "node_count")
            nb = (count - 1).bit_length()  # rounded up to a power of two
            return custom(41, nb, 23 - nb, TNS, NS_PER_MS, int(spec["epoch_ms"]), sign=True)
        assert set(spec) == {"preset"}, spec
        if name == "decimal":
            return Layout(0, 0, 0, TNS, 100, 0, decimal=True)
        if name not in PRESETS:
            raise Fail("INVALID_LAYOUT", "preset")
        p = PRESETS[name]
        return custom(*p[:6], sign=p[6])
    for k in ("timestamp_bits", "node_bits", "sequence_bits", "order", "tick_ns", "epoch_ms"):
        assert k in spec, (k, spec)
    return custom(spec["timestamp_bits"], spec["node_bits"], spec["sequence_bits"], spec["order"],
                  int(spec["tick_ns"]), int(spec["epoch_ms"]), int(spec.get("node_id_offset", "0")),
                  spec.get("use_sign_bit", False))


def P(name, **kw):
    d = {"preset": name}
    d.update({k: str(v) for k, v in kw.items()})
    return d


def C(ts, nb, sb, order=TNS, tick_ns=NS_PER_MS, epoch_ms=0, offset=None, sign=None):
    d = {"timestamp_bits": ts, "node_bits": nb, "sequence_bits": sb, "order": order,
         "tick_ns": str(tick_ns), "epoch_ms": str(epoch_ms)}
    if offset is not None:
        d["node_id_offset"] = str(offset)
    if sign is not None:
        d["use_sign_bit"] = sign
    return d


# --------------------------------------------------------------------------------------------------
# Generation (SPEC §2)

GOLDEN = 0x9E3779B97F4A7C15


def mix64(z):
    """splitmix64's finaliser, all arithmetic mod 2^64."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
    return z ^ (z >> 31)


class Generator:
    def __init__(self, layout, node_id, policy="wait", max_ahead_ms=15000, seed=None):
        if node_id + layout.offset > layout.node_max:
            raise Fail("NODE_ID_OUT_OF_RANGE")
        self.lay = layout
        self.node_field = node_id + layout.offset
        self.policy = policy
        self.ahead = 0 if policy == "strict" else max_ahead_ms * NS_PER_MS // layout.tick_ns
        if seed is not None and self.ahead == 0:
            # A random start keeps the full per-tick capacity only by borrowing from the next tick.
            raise Fail("INVALID_ARGUMENT")
        self.seed = seed
        self.next = 0  # next free logical position

    def start(self, tick):
        if self.seed is None:
            return 0
        return mix64((self.seed + tick * GOLDEN) & U64) & self.lay.seq_mask

    def attempt(self, now_ns, n):
        """('ready', first_position) or ('wait', ns); raises Fail."""
        lay, sb = self.lay, self.lay.sb
        clock_tick = lay.tick_at_ns(now_ns)
        if self.policy == "strict" and self.next > 0 and clock_tick < (self.next - 1) >> sb:
            raise Fail("CLOCK_MOVED_BACKWARDS")
        at_clock = (clock_tick << sb) | self.start(clock_tick)
        first = max(at_clock, self.next)
        last = first + n - 1
        if last > lay.max_position:
            raise Fail("LAYOUT_EXHAUSTED")
        limit = clock_tick + self.ahead
        if last >> sb > limit and first == at_clock > self.next:
            # The random start must not cost capacity: that tick starts at 0 instead.
            first = max(clock_tick << sb, self.next)
            last = first + n - 1
        if last >> sb > limit:
            if n > (lay.seq_mask + 1) * (self.ahead + 1):
                raise Fail("INVALID_ARGUMENT")
            if self.policy == "fail":
                raise Fail("TOO_FAR_AHEAD")
            return ("wait", lay.tick_start_ns((last >> sb) - self.ahead) - now_ns)
        self.next = last + 1
        return ("ready", first)

    def call(self, clock, n, sleeps):
        """The host loop: read, attempt, sleep while told to; a clock that did not move since the
        previous wait gives TOO_FAR_AHEAD."""
        previous = None
        for _ in range(10_000):
            now = clock.read()
            r = self.attempt(now, n)
            if r[0] == "ready":
                return [self.lay.pack(p, self.node_field) for p in range(r[1], r[1] + n)]
            if previous is not None and now <= previous:
                raise Fail("TOO_FAR_AHEAD")
            previous = now
            sleeps.append(r[1])
        raise Fail("TOO_FAR_AHEAD")


class ScriptedClock:
    def __init__(self, layout, readings):
        assert readings
        self.unit = layout.clock_unit()
        self.readings = readings
        self.i = 0

    def read(self):
        r = self.readings[min(self.i, len(self.readings) - 1)]
        self.i += 1
        ns = r * NS_PER_MS if self.unit == "ms" else r
        if ns > U64:
            raise Fail("INVALID_CLOCK")
        return ns


# --------------------------------------------------------------------------------------------------
# String forms (SPEC §5)

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
ENC = {  # name: (radix, fixed width or None, digits for writing)
    "dec": (10, None, "0123456789"),
    "hex": (16, 16, "0123456789abcdef"),
    "base32": (32, 13, CROCKFORD),
    "base58": (58, 11, BASE58),
}
MAX_LEN = {"dec": 20, "hex": 16, "base32": 13, "base58": 11}


def encode(name, v):
    radix, width, digits = ENC[name]
    out = ""
    while True:
        v, r = divmod(v, radix)
        out = digits[r] + out
        if v == 0:
            break
    if width:
        assert len(out) <= width
        out = digits[0] * (width - len(out)) + out
    return out


def digit(name, c):
    if ord(c) > 127:
        return None
    if name == "dec":
        return "0123456789".index(c) if c in "0123456789" else None
    if name == "hex":
        c = c.lower()
        return "0123456789abcdef".index(c) if c in "0123456789abcdef" else None
    if name == "base32":
        c = c.upper()
        c = {"O": "0", "I": "1", "L": "1"}.get(c, c)
        return CROCKFORD.index(c) if c in CROCKFORD else None
    return BASE58.index(c) if c in BASE58 else None


def parse(name, s):
    """Parses one form. Errors: PARSE with the 0-based character position of the first bad character;
    a string longer than the form's width fails at the first character past it; an empty string at
    position 0 (after any 0x); a value past 2^64 - 1 at position 0 (the value as a whole)."""
    offset = 0
    if name == "hex" and s[:2] in ("0x", "0X"):
        offset = 2
    body = s[offset:]
    if body == "":
        raise Fail("PARSE", position=offset)
    radix = ENC[name][0]
    value = 0
    for i, c in enumerate(body):
        d = digit(name, c)
        if d is None:
            raise Fail("PARSE", position=offset + i)
        if i >= MAX_LEN[name]:
            raise Fail("PARSE", position=offset + i)
        value = value * radix + d
    if value > U64:
        raise Fail("PARSE", position=0)
    return value


def parse_any(s):
    """Tells the form by shape: all decimal digits → dec; 0x… or 16 characters → hex; 13 → base32;
    11 → base58; anything else is ambiguous (position 0). Lengths count UTF-8 bytes.
    Never silently: an all-digit string of a fixed width (hex 16, base32 13, base58 11) that form also
    reads is PARSE at position 0, with both readings (the message must name each value and form)."""
    n = len(s.encode("utf-8"))
    if s and all(c in "0123456789" for c in s):
        dec = parse("dec", s)
        other = {16: "hex", 13: "base32", 11: "base58"}.get(n)
        if other is not None:
            try:
                value = parse(other, s)
            except Fail:
                return dec
            raise Fail("PARSE", position=0, readings={"dec": str(dec), other: str(value)})
        return dec
    if s[:2] in ("0x", "0X") or n == 16:
        return parse("hex", s)
    if n == 13:
        return parse("base32", s)
    if n == 11:
        return parse("base58", s)
    raise Fail("PARSE", position=0)


# --------------------------------------------------------------------------------------------------
# Case builders

def layout_case(name, spec):
    case = {"name": name, "layout": spec}
    try:
        case["expect"] = make_layout(spec).expect()
    except Fail as e:
        assert e.code == "INVALID_LAYOUT", (name, e.code)
        case["error"], case["field"] = e.code, e.field
    return case


MAX_SLEEP_NS = 20 * NS_PER_MS       # one wait
MAX_CASE_SLEEP_NS = 60 * NS_PER_MS  # all waits of a case
SHOW_IDS = 12                       # steps with at most this many IDs list them all


def gen_case(name, spec, node_id, steps, policy=None, max_ahead_ms=None, seed=None):
    """steps: (readings, op, count). An op-next step that fails must have count 1 (the first call)."""
    case = {"name": name, "layout": spec, "node_id": str(node_id)}
    if policy is not None:
        case["policy"] = policy
    if max_ahead_ms is not None:
        case["max_ahead_ms"] = str(max_ahead_ms)
    if seed is not None:
        case["random_seed"] = str(seed)
    try:
        lay = make_layout(spec)
        gen = Generator(lay, node_id, policy or "wait",
                        15000 if max_ahead_ms is None else max_ahead_ms, seed)
    except Fail as e:
        assert not steps, name
        case["error"] = e.code
        return case
    assert steps, name
    out, sleeps, previous = [], [], None
    for readings, op, count in steps:
        if readings in ("state", "restore"):
            # ("state", None, None): the high-water mark now; ("restore", value, None): continue from
            # a persisted one (never backwards), then the mark is max(before, value).
            if readings == "restore":
                op = op(gen.next) if callable(op) else op  # a function of the mark before
                assert 0 <= op <= U64, name
                out.append({"op": "restore", "state": str(op)})
                gen.next = max(gen.next, op)
            out.append({"op": "state", "state": str(gen.next)})
            continue
        assert op in ("next", "batch") and count >= 1, name
        step = {"clock": [str(r) for r in readings], "op": op, "count": count}
        clock = ScriptedClock(lay, readings)
        try:
            if op == "batch":
                ids = gen.call(clock, count, sleeps)
            else:
                ids = []
                for k in range(count):
                    try:
                        ids += gen.call(clock, 1, sleeps)
                    except Fail as e:
                        assert k == 0 and count == 1, (name, "fails at call", k, e.code)
                        raise
        except Fail as e:
            step["error"] = e.code
            out.append(step)
            continue
        assert len(ids) == count
        for v in ids:  # one generator's IDs strictly increase
            assert previous is None or v > previous, (name, v, previous)
            previous = v
        if count <= SHOW_IDS:
            step["ids"] = [str(v) for v in ids]
        else:
            step["first"], step["last"] = str(ids[0]), str(ids[-1])
        out.append(step)
    assert all(0 < s <= MAX_SLEEP_NS for s in sleeps), (name, sleeps)
    assert sum(sleeps) <= MAX_CASE_SLEEP_NS, (name, sleeps)
    case["steps"] = out
    return case


def reading_case(name, spec, reading):
    """An injected clock's reading as a JSON number (or "NaN"/"Infinity"/"-Infinity"), taken the way a
    floating-point runtime takes it: as the nearest IEEE-754 double."""
    case = {"name": name, "layout": spec, "reading": reading}
    lay = make_layout(spec)
    x = float(reading)
    ok = (x == x and x not in (float("inf"), float("-inf")) and not x < 0
          and x <= 2 ** 53 - 1 and x == int(x))
    ns = None
    if ok:
        ns = int(x) * (NS_PER_MS if lay.clock_unit() == "ms" else 1)
        ok = ns <= U64
    if ok:
        case["ns"] = str(ns)
    else:
        case["error"] = "INVALID_CLOCK"
    return case


def decode_case(name, spec, id_, documented=None):
    """documented: fields a source states for this ID (checked here; see SOURCES.md)."""
    case = {"name": name, "layout": spec, "id": str(id_)}
    try:
        case["expect"] = make_layout(spec).decode(id_)
    except Fail as e:
        assert documented is None, name
        case["error"] = e.code
        return case
    for k, v in (documented or {}).items():
        got = case["expect"]["iso"][:19] if k == "iso_seconds" else case["expect"][k]
        assert got == v, (name, k, got, v)
    return case


def compose_case(name, spec, ticks, node, seq):
    case = {"name": name, "layout": spec, "op": "compose", "timestamp_ticks": str(ticks),
            "node": str(node), "sequence": str(seq)}
    try:
        lay = make_layout(spec)
        v = lay.compose(ticks, node, seq)
        d = lay.decode(v)  # composing and decoding are inverse
        assert (d["timestamp_ticks"], d["node"], d["sequence"]) == (str(ticks), str(node), str(seq))
        case["id"] = str(v)
    except Fail as e:
        case["error"] = e.code
    return case


def min_id_case(name, spec, unix_ms):
    case = {"name": name, "layout": spec, "op": "min_id_at", "unix_ms": str(unix_ms)}
    try:
        case["id"] = str(make_layout(spec).min_id_at_ms(unix_ms))
    except Fail as e:
        case["error"] = e.code
    return case


def encode_case(name, id_):
    case = {"name": name, "op": "encode", "id": str(id_)}
    for form in ENC:
        text = encode(form, id_)
        assert parse(form, text) == id_, (name, form)
        case[form] = text
    return case


def parse_case(name, form, text):
    case = {"name": name, "op": "parse", "encoding": form, "input": text}
    try:
        case["id"] = str(parse_any(text) if form == "any" else parse(form, text))
    except Fail as e:
        case["error"], case["position"] = e.code, e.position
        if e.readings:
            case["readings"] = e.readings
    return case


# --------------------------------------------------------------------------------------------------
# The corpus

T0 = 1_750_000_000_000          # 2025-06-15T15:06:40.000Z, a whole second, after every preset's epoch
DAY = 86_400_000
HOUR = 3_600_000
TW, DC, IG, SF, HZ, JS, DEC = (P("twitter"), P("discord"), P("instagram"), P("sonyflake"),
                               P("hazelcast"), P("js53"), P("decimal"))
SC = P("snowcast", epoch_ms=1_600_000_000_000, node_count=1024)
HZ5 = P("hazelcast", node_id_offset=5)
T0_NS = T0 * NS_PER_MS + 123_400  # for the decimal layout (100 ns ticks): sub-millisecond reading
ALL_PRESETS = [("twitter", TW), ("discord", DC), ("instagram", IG), ("sonyflake", SF),
               ("hazelcast", HZ), ("js53", JS), ("snowcast", SC), ("decimal", DEC)]


def seed_with_start(spec, tick, want_at_least, want_below=None):
    """The smallest seed whose random start at `tick` is in [want_at_least, want_below)."""
    lay = make_layout(spec)
    for seed in range(1, 100_000):
        s = mix64((seed + tick * GOLDEN) & U64) & lay.seq_mask
        if s >= want_at_least and (want_below is None or s < want_below):
            return seed
    raise AssertionError("no seed")


def tick_of(spec, ms):
    lay = make_layout(spec)
    return (ms * NS_PER_MS - lay.epoch_ns) // lay.tick_ns


def layouts_cases():
    c = []
    for name, spec in ALL_PRESETS:
        c.append(layout_case("preset_" + name, spec))
    c.append(layout_case("preset_hazelcast_node_id_offset_5", HZ5))
    c.append(layout_case("preset_hazelcast_node_id_offset_65535", P("hazelcast", node_id_offset=65535)))
    for n in (128, 129, 256, 1000, 1024, 4097, 8192):
        c.append(layout_case("preset_snowcast_node_count_%d" % n,
                             P("snowcast", epoch_ms=1_600_000_000_000, node_count=n)))
    c.append(layout_case("preset_snowcast_epoch_0", P("snowcast", epoch_ms=0, node_count=2048)))
    # Custom layouts
    c.append(layout_case("custom_twitter_fields", C(41, 10, 12, epoch_ms=1288834974657)))
    c.append(layout_case("custom_sequence_node_order", C(41, 16, 6, TSN, epoch_ms=1514764800000)))
    c.append(layout_case("custom_one_timestamp_bit", C(1, 0, 0)))
    c.append(layout_case("custom_64_bits_1ns_tick_epoch_0", C(64, 0, 0, tick_ns=1, sign=True)))
    c.append(layout_case("custom_63_node_bits", C(1, 63, 0, sign=True)))
    c.append(layout_case("custom_63_sequence_bits", C(1, 0, 63, sign=True)))
    c.append(layout_case("custom_63_bits_no_sign", C(40, 11, 12, epoch_ms=T0)))
    c.append(layout_case("custom_63_bits_with_sign_bit_allowed", C(40, 11, 12, epoch_ms=T0, sign=True)))
    c.append(layout_case("custom_tick_1s", C(32, 10, 12, tick_ns=10**9, epoch_ms=T0)))
    c.append(layout_case("custom_tick_1_5ms_ms_clock", C(41, 10, 12, tick_ns=1_500_000, epoch_ms=T0)))
    c.append(layout_case("custom_tick_1us_ns_clock", C(50, 5, 8, tick_ns=1000, epoch_ms=T0)))
    c.append(layout_case("custom_tick_999999ns_ns_clock", C(41, 10, 12, tick_ns=999_999, epoch_ms=T0)))
    c.append(layout_case("custom_tick_1ns", C(53, 0, 10, tick_ns=1, epoch_ms=T0)))
    c.append(layout_case("custom_lifespan_past_year_9999", C(41, 10, 12, tick_ns=10**9)))
    c.append(layout_case("custom_epoch_max", C(1, 0, 0, tick_ns=1, epoch_ms=MAX_EPOCH_MS)))
    c.append(layout_case("custom_node_id_offset_max", C(41, 10, 12, offset=1023)))
    c.append(layout_case("custom_lifespan_just_fits", C(41, 10, 12, tick_ns=8_388_607_999_999)))
    # Invalid layouts, one bad field each
    bad = [
        ("invalid_timestamp_bits_0", C(0, 10, 12)),
        ("invalid_timestamp_bits_65", C(65, 0, 0, sign=True)),
        ("invalid_node_bits_64", C(1, 64, 0, sign=True)),
        ("invalid_sequence_bits_64", C(1, 0, 64, sign=True)),
        ("invalid_total_64_without_sign_bit", C(42, 10, 12)),
        ("invalid_total_65_with_sign_bit", C(43, 10, 12, sign=True)),
        ("invalid_order", dict(C(41, 10, 12), order="node_timestamp_sequence")),
        ("invalid_tick_ns_0", C(41, 10, 12, tick_ns=0)),
        ("invalid_epoch_ms_past_2554", C(41, 10, 12, epoch_ms=MAX_EPOCH_MS + 1)),
        ("invalid_node_id_offset_too_large", C(41, 10, 12, offset=1024)),
        ("invalid_node_id_offset_without_node_bits", C(53, 0, 10, offset=1)),
        ("invalid_lifespan_past_u64_ms", C(41, 10, 12, tick_ns=8_388_608_000_000)),
        ("invalid_lifespan_64_bits_1ms", C(64, 0, 0, sign=True)),
        ("invalid_preset_name", P("snowflake")),
        ("invalid_hazelcast_node_id_offset_65536", P("hazelcast", node_id_offset=65536)),
        ("invalid_snowcast_node_count_127", P("snowcast", epoch_ms=1_600_000_000_000, node_count=127)),
        ("invalid_snowcast_node_count_8193", P("snowcast", epoch_ms=1_600_000_000_000, node_count=8193)),
        ("invalid_snowcast_node_count_0", P("snowcast", epoch_ms=1_600_000_000_000, node_count=0)),
        ("invalid_snowcast_epoch_ms", P("snowcast", epoch_ms=MAX_EPOCH_MS + 1, node_count=1024)),
    ]
    for name, spec in bad:
        case = layout_case(name, spec)
        assert "error" in case, name
        c.append(case)
    return c


def generate_cases():
    c = []
    g = lambda *a, **k: c.append(gen_case(*a, **k))
    N, B = "next", "batch"
    # --- normal clocks, every preset
    for name, spec in ALL_PRESETS:
        if name == "decimal":
            g("normal_decimal", spec, 28, [([T0_NS, T0_NS + 100, T0_NS + 250], N, 3), ([T0_NS + 250], N, 2)])
            continue
        g("normal_" + name, spec, 7, [([T0, T0 + 1, T0 + 2], N, 3), ([T0 + 2], N, 2), ([T0 + 10], N, 1)])
        g("normal_batch_" + name, spec, 7, [([T0], B, 5), ([T0], N, 1), ([T0 + 1], B, 3)])
    g("normal_decimal_batch", DEC, 5, [([T0_NS], B, 4), ([T0_NS + 1000], B, 2)])
    g("normal_twitter_node_0", TW, 0, [([T0, T0 + 5], N, 2)])
    g("normal_twitter_node_max", TW, 1023, [([T0, T0 + 5], N, 2)])
    g("normal_sonyflake_10ms_tick", SF, 513, [([T0, T0 + 5, T0 + 9, T0 + 10, T0 + 19, T0 + 25], N, 6)])
    g("normal_hazelcast_node_id_offset_5", HZ5, 3, [([T0, T0, T0 + 1], N, 3), ([T0 + 1], B, 2)])
    g("normal_hazelcast_node_id_offset_max", P("hazelcast", node_id_offset=65535), 0, [([T0], N, 2)])
    g("normal_decimal_host_99", DEC, 99, [([T0_NS, T0_NS + 99, T0_NS + 100], N, 3)])
    g("normal_decimal_spec_example", DEC, 28, [([1640700422954100128], N, 1)])
    g("normal_twitter_at_epoch", TW, 1, [([1288834974657], N, 2)])
    g("normal_custom_tick_1s", C(32, 10, 12, tick_ns=10**9, epoch_ms=T0), 3,
      [([T0, T0 + 999, T0 + 1000, T0 + 2500], N, 4)])
    g("normal_custom_tick_1_5ms", C(41, 10, 12, tick_ns=1_500_000, epoch_ms=T0), 3,
      [([T0, T0 + 1, T0 + 2, T0 + 3, T0 + 4], N, 5)])
    g("normal_custom_tick_1us_ns_clock", C(50, 5, 8, tick_ns=1000, epoch_ms=T0), 31,
      [([T0_NS, T0_NS + 999, T0_NS + 1000, T0_NS + 5555], N, 4)])
    g("normal_custom_sequence_node_order", C(30, 20, 13, TSN, tick_ns=10**9, epoch_ms=T0), 1048575,
      [([T0, T0 + 1000], N, 2), ([T0 + 1000], B, 3)])
    # --- bursts past a tick's sequence: borrow the next tick
    g("burst_twitter_4097_next", TW, 7, [([T0], N, 4097)])
    g("burst_twitter_4097_batch", TW, 7, [([T0], B, 4097)])
    g("burst_twitter_4096_batch_then_next", TW, 7, [([T0], B, 4096), ([T0], N, 1)])
    g("burst_twitter_then_clock_catches_up", TW, 7,
      [([T0], N, 4100), ([T0 + 1], N, 1), ([T0 + 2], N, 1), ([T0 + 3], N, 1)])
    g("burst_twitter_10000_batch_then_next", TW, 9, [([T0], B, 10000), ([T0 + 1], N, 2)])
    g("burst_discord_4097_next", DC, 31, [([T0], N, 4097)])
    g("burst_instagram_1025_next", IG, 1341, [([T0], N, 1025), ([T0], B, 1024)])
    g("burst_sonyflake_257_next", SF, 7, [([T0], N, 257), ([T0 + 5], N, 1), ([T0 + 10], N, 1)])
    g("burst_sonyflake_600_batch", SF, 7, [([T0], B, 600)])
    g("burst_hazelcast_65_next", HZ, 7, [([T0], N, 65), ([T0], B, 64)])
    g("burst_hazelcast_offset_65_batch", HZ5, 7, [([T0], B, 65)])
    g("burst_js53_257_next", JS, 15, [([T0], N, 257)])
    g("burst_snowcast_8193_next", SC, 1023, [([T0], N, 8193)])
    g("burst_decimal_next", DEC, 28, [([T0_NS], N, 5), ([T0_NS + 200], N, 2)])
    g("burst_decimal_batch", DEC, 28, [([T0_NS], B, 1000)])
    # --- the clock goes back
    for label, back in (("1ms", 1), ("1s", 1000), ("1h", HOUR)):
        for pol in ("wait", "fail", "strict"):
            ahead = 2 * HOUR if (pol == "wait" and back == HOUR) else None
            steps = [([T0, T0 + 1, T0 + 2], N, 3), ([T0 + 2 - back], N, 1), ([T0 + 2 - back], B, 2),
                     ([T0 + 3], N, 1)]
            if pol == "fail" and back == HOUR:
                pass
            g("back_%s_%s" % (label, pol), TW, 7, steps, policy=pol, max_ahead_ms=ahead)
    g("back_1ms_fail_max_ahead_0", TW, 7, [([T0], N, 2), ([T0 - 1], N, 1), ([T0], N, 1)],
      policy="fail", max_ahead_ms=0)
    g("back_1ms_fail_max_ahead_1", TW, 7, [([T0], N, 2), ([T0 - 1], N, 1), ([T0 - 1], B, 4095),
                                            ([T0 - 1], N, 1)], policy="fail", max_ahead_ms=1)
    g("back_2ms_wait_max_ahead_1_sleeps", TW, 7, [([T0], N, 2), ([T0 - 2, T0 - 1], N, 1)],
      policy="wait", max_ahead_ms=1)
    g("back_1s_fail_max_ahead_2", TW, 7, [([T0], N, 2), ([T0 - 1000], N, 1)],
      policy="fail", max_ahead_ms=2)
    g("back_within_tick_sonyflake_strict", SF, 7, [([T0 + 9], N, 2), ([T0 + 1], N, 1), ([T0 + 10], N, 1)],
      policy="strict")
    g("back_1_tick_sonyflake_strict", SF, 7, [([T0 + 10], N, 2), ([T0 + 9], N, 1), ([T0 + 10], N, 1)],
      policy="strict")
    g("back_decimal_1us_wait", DEC, 28, [([T0_NS], N, 2), ([T0_NS - 1000], N, 2)])
    g("back_decimal_1us_strict", DEC, 28, [([T0_NS, T0_NS + 100], N, 2), ([T0_NS], N, 1),
                                            ([T0_NS - 1000], N, 1)], policy="strict")
    g("back_then_batch_hazelcast", HZ, 100, [([T0 + 5], B, 10), ([T0], B, 10), ([T0 + 6], N, 1)])
    # --- a frozen clock
    g("frozen_wait_max_ahead_2", TW, 7, [([T0], N, 3 * 4096), ([T0], N, 1), ([T0 + 1], N, 1)],
      policy="wait", max_ahead_ms=2)
    g("frozen_wait_max_ahead_2_batch", TW, 7, [([T0], B, 3 * 4096), ([T0], B, 1), ([T0, T0 + 1], B, 4096)],
      policy="wait", max_ahead_ms=2)
    g("frozen_fail_max_ahead_2", TW, 7, [([T0], N, 3 * 4096), ([T0], N, 1), ([T0 + 1], N, 1)],
      policy="fail", max_ahead_ms=2)
    g("frozen_strict", TW, 7, [([T0], N, 4096), ([T0], N, 1), ([T0, T0 + 1], N, 1)], policy="strict")
    g("frozen_strict_sonyflake", SF, 7, [([T0], N, 256), ([T0 + 9], N, 1), ([T0 + 9, T0 + 10], N, 1)],
      policy="strict")
    g("frozen_wait_then_clock_moves", TW, 7, [([T0], N, 8192), ([T0, T0 + 2], N, 1)],
      policy="wait", max_ahead_ms=1)
    g("frozen_wait_clock_moves_back_during_wait", TW, 7, [([T0], N, 8192), ([T0, T0 - 1], N, 1)],
      policy="wait", max_ahead_ms=1)
    g("frozen_wait_two_sleeps", TW, 7, [([T0], B, 8192), ([T0, T0 + 1, T0 + 2], B, 8192)],
      policy="wait", max_ahead_ms=1)
    g("frozen_decimal_wait", DEC, 1, [([T0_NS], N, 10001), ([T0_NS], N, 1), ([T0_NS, T0_NS + 50_000], N, 1)],
      policy="wait", max_ahead_ms=1)
    g("frozen_hazelcast_wait_max_ahead_3", HZ5, 2, [([T0], B, 256), ([T0], N, 1), ([T0, T0 + 1], N, 1)],
      policy="wait", max_ahead_ms=3)
    # --- the clock jumps forward
    g("jump_forward_1_day", TW, 7, [([T0], N, 3), ([T0 + DAY], N, 2), ([T0 + DAY - 1], N, 1)])
    g("jump_forward_1_day_strict", TW, 7, [([T0], N, 3), ([T0 + DAY], N, 2), ([T0 + DAY - 1], N, 1)],
      policy="strict")
    g("jump_forward_1_day_after_burst", TW, 7, [([T0], B, 5000), ([T0 + DAY], N, 1)])
    g("jump_forward_decimal_1_day", DEC, 3, [([T0_NS], N, 1), ([T0_NS + DAY * NS_PER_MS], N, 1)])
    # --- before the epoch, past the lifespan
    g("before_epoch_twitter", TW, 7, [([1288834974656], N, 1), ([0], B, 1), ([1288834974657], N, 1)])
    g("before_epoch_sonyflake", SF, 7, [([1409529599999], N, 1), ([1409529600000], N, 1)])
    g("before_epoch_js53", JS, 7, [([1704067199999], N, 1), ([1704067200000], N, 1)])
    g("before_epoch_snowcast", SC, 7, [([1599999999999], N, 1)])
    end_tw = make_layout(TW).lifespan_end_ms()
    g("past_lifespan_twitter", TW, 7, [([end_tw], N, 1), ([end_tw + DAY], B, 2), ([end_tw - 1], N, 2)])
    g("past_lifespan_twitter_burst_at_last_tick", TW, 7, [([end_tw - 1], B, 4095), ([end_tw - 1], N, 1),
                                                          ([end_tw - 1], N, 1), ([end_tw - 1], B, 1)])
    g("past_lifespan_twitter_batch_overflows", TW, 7, [([end_tw - 1], B, 4097)])
    g("past_lifespan_twitter_strict", TW, 7, [([end_tw - 1], B, 4096), ([end_tw - 1], N, 1)], policy="strict")
    end_sf = make_layout(SF).lifespan_end_ms()
    g("past_lifespan_sonyflake", SF, 7, [([end_sf - 10], N, 1), ([end_sf - 1], N, 1), ([end_sf], N, 1)])
    end_js = make_layout(JS).lifespan_end_ms()
    g("past_lifespan_js53", JS, 15, [([end_js - 1], B, 256), ([end_js - 1], N, 1), ([end_js], N, 1)])
    g("past_lifespan_decimal", DEC, 99, [([18446744073709551599], N, 1), ([18446744073709551599], N, 1),
                                         ([18446744073709551600], N, 1)])
    g("past_lifespan_decimal_u64_max_reading", DEC, 0, [([U64], N, 1)])
    tiny = C(4, 2, 2, tick_ns=10**9, epoch_ms=T0)  # 16 ticks of 1 s, 4 IDs per tick
    g("past_lifespan_tiny_layout", tiny, 3, [([T0 + 15_000], N, 4), ([T0 + 15_999], N, 1),
                                             ([T0 + 16_000], N, 1), ([T0 + 14_000], B, 2)])
    u64pos = C(64, 0, 0, tick_ns=1, sign=True)  # positions fill 64 bits: the last one stays unused
    g("past_lifespan_64_bit_positions", u64pos, 0, [([U64 - 2], N, 2), ([U64 - 2], N, 1), ([U64], N, 1)])
    g("clock_reading_past_2554_ms", TW, 7, [([T0], N, 1), ([18446744073710], N, 1), ([T0], N, 1)])
    g("clock_reading_max_ms", P("decimal"), 7, [([U64 - 10**6], N, 1)])
    # --- each policy with small max_ahead
    for pol in ("wait", "fail", "strict"):
        g("policy_%s_max_ahead_1_burst" % pol, TW, 7,
          [([T0], N, 4096 if pol == "strict" else 8192), ([T0], N, 1), ([T0, T0 + 1], N, 1),
           ([T0 + 5], B, 100)],
          policy=pol, max_ahead_ms=1)
        g("policy_%s_sonyflake_max_ahead_20" % pol, SF, 7,
          [([T0], B, 256 * 3), ([T0 + 1], N, 1), ([T0 + 2, T0 + 10], N, 1)], policy=pol, max_ahead_ms=20)
    g("policy_fail_max_ahead_0", TW, 7, [([T0], B, 4096), ([T0], N, 1), ([T0 + 1], N, 1)],
      policy="fail", max_ahead_ms=0)
    g("policy_wait_max_ahead_0", TW, 7, [([T0], B, 4096), ([T0, T0 + 1], N, 1)],
      policy="wait", max_ahead_ms=0)
    g("policy_default_max_ahead_15s", TW, 7, [([T0], N, 1), ([T0 - 15000], N, 1), ([T0 - 15001], N, 1),
                                              ([T0 - 15001], B, 1), ([T0 - 14999], B, 2)], policy="fail")
    g("policy_fail_max_ahead_not_whole_ticks", SF, 7, [([T0], B, 256 * 2), ([T0], N, 1)],
      policy="fail", max_ahead_ms=19)
    # --- random sequence start
    g("random_start_twitter", TW, 7, [([T0, T0, T0 + 1, T0 + 2], N, 4), ([T0 + 2], B, 3)], seed=123)
    g("random_start_twitter_seed_0", TW, 7, [([T0, T0 + 1], N, 2)], seed=0)
    g("random_start_twitter_seed_u64_max", TW, 7, [([T0, T0 + 1], N, 2)], seed=U64)
    g("random_start_sonyflake", SF, 7, [([T0, T0 + 10, T0 + 20], N, 3)], seed=42)
    g("random_start_js53", JS, 3, [([T0, T0 + 1], N, 2), ([T0 + 1], B, 4)], seed=987654321)
    g("random_start_decimal_no_sequence", DEC, 3, [([T0_NS], N, 2)], seed=5)
    tk = tick_of(TW, T0)
    hi = seed_with_start(TW, tk, 4090)
    g("random_start_high_borrows_next_tick", TW, 7, [([T0], N, 10)], seed=hi)
    g("random_start_high_batch_retries_at_0_fail", TW, 7, [([T0], B, 8192), ([T0 + 2], N, 1)],
      policy="fail", max_ahead_ms=1, seed=hi)
    g("random_start_high_batch_retries_at_0_wait", TW, 7, [([T0], B, 8000)],
      policy="wait", max_ahead_ms=1, seed=hi)
    g("random_start_refused_under_strict", TW, 7, [], policy="strict", seed=hi)
    g("random_start_refused_max_ahead_0", TW, 7, [], policy="fail", max_ahead_ms=0, seed=hi)
    g("random_start_high_full_tick_capacity_one_at_a_time", TW, 7,
      [([T0], N, 4096), ([T0], N, 1)], policy="fail", max_ahead_ms=1, seed=hi)
    mid = seed_with_start(TW, tk + 1, 2000, 2100)
    g("random_start_ahead_of_next_position", TW, 7, [([T0], B, 4096 + 50), ([T0 + 1], N, 2)], seed=mid)
    low = seed_with_start(TW, tk + 1, 0, 100)
    g("random_start_below_next_position", TW, 7, [([T0], B, 4096 + 300), ([T0 + 1], N, 2)], seed=low)
    lo = seed_with_start(SF, tick_of(SF, T0), 250)
    g("random_start_sonyflake_high_retry", SF, 7, [([T0], B, 512), ([T0 + 20], N, 1)],
      policy="fail", max_ahead_ms=10, seed=lo)
    # --- batches larger than the window
    g("batch_larger_than_window_wait_max_ahead_0", TW, 7, [([T0], B, 4097), ([T0], B, 4096)],
      policy="wait", max_ahead_ms=0)
    g("batch_larger_than_window_fail_max_ahead_1", TW, 7, [([T0], B, 8193), ([T0], B, 8192)],
      policy="fail", max_ahead_ms=1)
    g("batch_larger_than_window_strict", TW, 7, [([T0], B, 4097), ([T0], B, 1)], policy="strict")
    g("batch_window_full_after_next_fail", TW, 7, [([T0], N, 1), ([T0], B, 8192)],
      policy="fail", max_ahead_ms=1)
    g("batch_larger_than_window_sonyflake", SF, 7, [([T0], B, 257)], policy="fail", max_ahead_ms=9)
    g("batch_larger_than_window_hazelcast", HZ, 7, [([T0], B, 64 * 3 + 1), ([T0], B, 64 * 3)],
      policy="wait", max_ahead_ms=2)
    # --- Hazelcast's own unit test (FlakeIdGeneratorProxyTest, see SOURCES.md): node 1234
    hz_epoch = make_layout(HZ).epoch_ms
    for name, t, want in (("real_hazelcast_test_time_middle", 1516028439000, 5300086112257234),
                          ("real_hazelcast_test_time_low_edge", hz_epoch, 1234),
                          ("real_hazelcast_test_time_high_edge", hz_epoch + (1 << 41) - 1,
                           9223372036850582738)):
        case = gen_case(name, HZ, 1234, [([t], B, 10), ([t], N, 1)])
        assert case["steps"][0]["ids"][0] == str(want), name
        c.append(case)
    case = gen_case("real_hazelcast_test_two_ids_same_moment", HZ, 1234, [([1516028439000], N, 2)])
    assert case["steps"][0]["ids"] == ["5300086112257234", str(5300086112257234 + (1 << 16))]
    c.append(case)
    g("real_hazelcast_test_time_after_range", HZ, 1234, [([hz_epoch + (1 << 41)], N, 1)])
    # --- IDs at and above 2^63 (64-bit layouts): unsigned everywhere, never negative or rounded
    top = make_layout(DC).epoch_ms + (1 << 41)
    g("u64_ids_discord_above_i64_max", DC, 1023, [([top - 1], N, 1), ([top], N, 2), ([top], B, 3)])
    top_ig = make_layout(IG).epoch_ms + (1 << 40)
    g("u64_ids_instagram_above_i64_max", IG, 8191, [([top_ig - 1, top_ig], N, 2), ([top_ig], B, 2)])
    top_sc = make_layout(SC).epoch_ms + (1 << 40)
    g("u64_ids_snowcast_above_i64_max", SC, 1, [([top_sc], N, 1)])
    g("u64_ids_discord_last_ms", DC, 1023, [([make_layout(DC).lifespan_end_ms() - 1], B, 4096),
                                            ([make_layout(DC).lifespan_end_ms() - 1], N, 1)])
    g("u64_ids_decimal_above_i64_max", DEC, 42, [([9_300_000_000_000_000_000], N, 2)])
    # --- more tick lengths and orders
    g("normal_custom_tick_999999ns", C(41, 10, 12, tick_ns=999_999, epoch_ms=T0), 5,
      [([T0_NS, T0_NS + 999_998, T0_NS + 999_999, T0_NS + 5 * 999_999 + 3], N, 4)])
    g("burst_custom_sequence_node_order", C(30, 20, 13, TSN, tick_ns=10**9, epoch_ms=T0), 77,
      [([T0], B, 8193), ([T0 + 999], N, 1), ([T0 + 2000], N, 1)])
    g("burst_custom_tick_1us_wait", C(50, 5, 8, tick_ns=1000, epoch_ms=T0), 3,
      [([T0_NS], B, 600), ([T0_NS], B, 256), ([T0_NS, T0_NS + 3000], N, 1)], policy="wait", max_ahead_ms=0)
    g("frozen_strict_clock_moves_back_during_wait", TW, 7, [([T0], B, 4096), ([T0, T0 - 1], N, 1)],
      policy="strict")
    g("frozen_fail_hazelcast_offset_burst", HZ5, 65530, [([T0], N, 64 * 16), ([T0], N, 1)],
      policy="fail", max_ahead_ms=15)
    g("random_start_fail_sonyflake_burst", SF, 9, [([T0], N, 300), ([T0 + 10], B, 100)],
      policy="fail", max_ahead_ms=20, seed=2024)
    g("random_start_across_ticks_max_ahead_1", JS, 1, [([T0, T0 + 1, T0 + 2, T0 + 2, T0 + 3], N, 5)],
      policy="fail", max_ahead_ms=1, seed=77)
    g("random_start_discord_seed_large", DC, 5, [([T0, T0 + 1000], N, 2), ([T0 + 1000], B, 5)],
      seed=0xDEADBEEFCAFEBABE)
    g("normal_custom_node_id_offset", C(41, 10, 12, epoch_ms=T0, offset=1000), 23,
      [([T0, T0 + 1], N, 2), ([T0 + 1], B, 2)])
    g("node_id_out_of_range_custom_offset", C(41, 10, 12, epoch_ms=T0, offset=1000), 24, [])
    # --- which error wins when several apply
    g("precedence_strict_back_before_epoch", TW, 7, [([1288834974700], N, 1), ([1288834974600], N, 1)],
      policy="strict")
    g("precedence_strict_forward_past_lifespan", TW, 7, [([end_tw - 1], N, 1), ([end_tw], N, 1)],
      policy="strict")
    g("precedence_exhausted_before_window", TW, 7, [([end_tw - 1], B, 4097)], policy="strict")
    g("precedence_window_before_too_far_ahead", TW, 7, [([T0], N, 1), ([T0], B, 8193)],
      policy="fail", max_ahead_ms=1)
    g("precedence_invalid_clock_during_wait", TW, 7, [([T0], B, 8192), ([T0, 18446744073710], N, 1),
                                                      ([T0 + 1], N, 1)], policy="wait", max_ahead_ms=1)
    g("precedence_before_epoch_during_wait", TW, 7, [([T0], B, 8192), ([T0, 1000], N, 1), ([T0 + 1], N, 1)],
      policy="wait", max_ahead_ms=1)
    # --- node IDs
    g("node_id_out_of_range_twitter", TW, 1024, [])
    g("node_id_out_of_range_discord", DC, 1024, [])
    g("node_id_out_of_range_instagram", IG, 8192, [])
    g("node_id_out_of_range_sonyflake", SF, 65536, [])
    g("node_id_out_of_range_hazelcast_offset", HZ5, 65531, [])
    g("node_id_in_range_hazelcast_offset_max", HZ5, 65530, [([T0], N, 1)])
    g("node_id_out_of_range_hazelcast_u64_max", HZ5, U64, [])
    g("node_id_out_of_range_js53", JS, 16, [])
    g("node_id_out_of_range_snowcast", SC, 1024, [])
    g("node_id_out_of_range_decimal", DEC, 100, [])
    g("node_id_out_of_range_u64_max", TW, U64, [])
    g("invalid_layout_generator", C(0, 10, 12), 1, [])
    # --- state() / restore(): the persisted high-water mark (SPEC §2, restarts)
    S, R = ("state", None, None), (lambda v: ("restore", v, None))
    tw_pos = lambda ms, seq: ((ms - 1288834974657) << 12) + seq
    g("state_fresh_is_0", TW, 7, [S, ([T0], N, 1), S])
    g("state_after_batch", TW, 7, [([T0], B, 5), S, ([T0 + 1], N, 1), S])
    # A restarted process whose clock went back 2 s while it was down continues after the mark.
    g("restore_after_restart_clock_behind", TW, 7, [R(tw_pos(T0, 3)), ([T0 - 2000], N, 2), S])
    g("restore_never_moves_backwards", TW, 7, [([T0], B, 3), R(tw_pos(T0, 1)), R(0), ([T0], N, 1)])
    g("restore_0_on_fresh", TW, 7, [R(0), ([T0], N, 1)])
    g("restore_mid_tick_same_clock", TW, 7, [R(tw_pos(T0, 4095)), ([T0], N, 2)])
    g("restore_ahead_fail_policy", TW, 7, [R(tw_pos(T0 + 20_000, 0)), ([T0], N, 1), S, ([T0 + 5001], N, 1)],
      policy="fail")
    g("restore_ahead_strict_policy", TW, 7, [R(tw_pos(T0 + 10, 0)), ([T0], N, 1), ([T0 + 10], N, 1)],
      policy="strict")
    g("restore_sonyflake_sequence_node", SF, 513, [R((((T0 - 1409529600000) // 10) << 8) + 200), ([T0], N, 2), S])
    g("restore_decimal", DEC, 28, [([T0_NS], N, 1), S, R(lambda mark: mark + 5), ([T0_NS], N, 1), S])
    g("restore_past_lifespan", TW, 7, [R(U64), ([T0], N, 1)])
    return c


def make_start(spec, seed, tick):
    return mix64((seed + tick * GOLDEN) & U64) & make_layout(spec).seq_mask


def clock_readings_cases():
    c = []
    r = lambda *a: c.append(reading_case(*a))
    for name, spec in (("twitter", TW), ("decimal", DEC)):
        r("nan_" + name, spec, "NaN")
        r("infinity_" + name, spec, "Infinity")
        r("minus_infinity_" + name, spec, "-Infinity")
        r("fraction_" + name, spec, 1.5)
        r("tiny_fraction_" + name, spec, 1750000000000.25)
        r("negative_" + name, spec, -1)
        r("negative_fraction_" + name, spec, -0.5)
        r("two_pow_53_plus_1_" + name, spec, 9007199254740993)
        r("two_pow_53_" + name, spec, 9007199254740992)
        r("two_pow_53_minus_1_" + name, spec, 9007199254740991)
        r("huge_" + name, spec, 1e300)
        r("two_pow_64_" + name, spec, 18446744073709551616)
        r("zero_" + name, spec, 0)
        r("negative_zero_" + name, spec, -0.0)
        r("whole_float_" + name, spec, 1750000000000.0)
        r("now_" + name, spec, T0)
    r("ms_reading_max_before_2554", TW, 18446744073709)
    r("ms_reading_past_2554", TW, 18446744073710)
    r("exponent_notation_whole", TW, 1.75e12)
    r("sonyflake_ms_reading", SF, T0 + 5)
    r("custom_1us_tick_ns_reading", C(50, 5, 8, tick_ns=1000, epoch_ms=T0), 4503599627370495)
    r("custom_1_5ms_tick_ms_reading", C(41, 10, 12, tick_ns=1_500_000, epoch_ms=T0), T0 + 1)
    return c


# Real IDs with what their sources say about them (SOURCES.md cites each source). "iso_seconds" is checked
# against the first 19 characters of the ISO text (sources that give whole seconds).
IG_REAL = C(41, 13, 10, epoch_ms=1314220021721, sign=True)  # the epoch in Instagram's own PL/pgSQL
DOCUMENTED = [
    # Discord developer docs, "Snowflakes": 2016-04-30 11:18:25.796 UTC, worker 1, process 0, increment 7.
    ("real_discord_docs_175928847299117063", DC, 175928847299117063,
     {"iso": "2016-04-30T11:18:25.796Z", "node": str(1 << 5 | 0), "sequence": "7"}),
    # twilight-util docs (Discord): created 2015-10-19T01:58:38.546+00:00.
    ("real_discord_twilight_105484726235607040", DC, 105484726235607040,
     {"iso": "2015-10-19T01:58:38.546Z"}),
    # npm discord-snowflake README: timestamp 1441609061949, worker 0, process 3, increment 0.
    ("real_discord_npm_90339695967350784", DC, 90339695967350784,
     {"unix_ms": "1441609061949", "iso": "2015-09-07T06:57:41.949Z", "node": "3", "sequence": "0"}),
    # Twitter API docs, Tweet object: created_at "Wed Oct 10 20:19:24 +0000 2018".
    ("real_twitter_api_docs_1050118621198921728", TW, 1050118621198921728,
     {"iso_seconds": "2018-10-10T20:19:24"}),
    # X enterprise data dictionary: created_at "Fri Feb 14 19:00:55 +0000 2020".
    ("real_twitter_enterprise_docs_1228393702244134912", TW, 1228393702244134912,
     {"iso_seconds": "2020-02-14T19:00:55"}),
    # npm twitter-snowflake-to-date README: Date(2020-02-27T22:46:45.564Z).
    ("real_twitter_npm_1233161576649121792", TW, 1233161576649121792,
     {"iso": "2020-02-27T22:46:45.564Z"}),
    # metacpan Twitter::ID: timestamp 1402076979493, worker 129 (the 10-bit node field), sequence 0.
    ("real_twitter_cpan_474971393852182528", TW, 474971393852182528,
     {"unix_ms": "1402076979493", "node": "129", "sequence": "0"}),
    # rubygems snowflake-id README: 'Mon Apr 08 12:33:29.113 +0000 2013'.
    ("real_twitter_gem_321239371296694272", TW, 321239371296694272,
     {"iso": "2013-04-08T12:33:29.113Z"}),
    # Stack Overflow question 63683015: media IDs with their known creation times.
    ("real_instagram_media_2384288897814875714", IG_REAL, 2384288897814875714,
     {"iso_seconds": "2020-08-26T13:43:27"}),
    ("real_instagram_media_2383568809444681765", IG_REAL, 2383568809444681765,
     {"iso_seconds": "2020-08-25T13:52:46"}),
    # npm sonyflake (thedv91) README: Sonyflake order, 1 ms unit, epoch Date.UTC(2020, 4, 18):
    # timestamp 1589832189861, machineId 2, sequence 0.
    ("real_sonyflake_npm_ms_unit_1211144891006978", C(39, 16, 8, TSN, epoch_ms=1589760000000),
     1211144891006978, {"unix_ms": "1589832189861", "node": "2", "sequence": "0"}),
    # PyPI snowflake-id (vd2org/snowflake) issue 3: epoch 0, timestamp 1693386343994, instance 42, seq 1.
    ("real_snowflake_id_pypi_7102577116159582209", C(41, 10, 12), 7102577116159582209,
     {"unix_ms": "1693386343994", "node": "42", "sequence": "1"}),
    # SPEC.md §1 and Chronicle (foojay.io, P. Lawrey 2023): 2021-12-28T14:07:02.954100128 is host 28.
    ("real_chronicle_spec_1640700422954100128", DEC, 1640700422954100128,
     {"iso": "2021-12-28T14:07:02.954100100Z", "node": "28", "sequence": "0"}),
]


def decode_cases():
    c = []
    d = lambda *a: c.append(decode_case(*a))
    for name, spec, id_, doc in DOCUMENTED:
        d(name, spec, id_, doc)
    # Instagram engineering blog's worked example: 1387263000 ms since the epoch, shard 31341 % 2000 =
    # 1341, sequence 5001 % 1024 = 905 (the blog's date arithmetic does not match its numbers, so only
    # the fields are checked).
    ig = make_layout(IG)
    d("real_instagram_blog_worked_example", IG, ig.compose(1387263000, 1341, 5001 % 1024),
      {"timestamp_ticks": "1387263000", "node": "1341", "sequence": "905"})
    # The same real media ID under the instagram preset (epoch 2011-01-01, as the SPEC's table says):
    # its date comes out about 7.6 months early (see SOURCES.md).
    d("real_instagram_media_2384288897814875714_under_preset", IG, 2384288897814875714)
    for name, spec in ALL_PRESETS:
        lay = make_layout(spec)
        d("zero_" + name, spec, 0)
        d("one_" + name, spec, 1)
        top = (1 << lay.total) - 1 if lay.total < 64 else U64
        d("max_" + name, spec, top)
        if lay.total < 64:
            d("too_wide_" + name, spec, top + 1)
            d("u64_max_" + name, spec, U64)
        t = tick_of(spec, T0) if not lay.decimal else T0_NS // 100
        d("fields_" + name, spec, lay.compose(t, min(lay.node_max, 7), min(lay.seq_mask, 5)))
        d("last_tick_" + name, spec, lay.compose(lay.max_tick, 0, 0))
    d("hazelcast_offset_node_field", HZ5, make_layout(HZ5).compose(100, 65535, 63))
    d("custom_offset_node_field", C(41, 10, 12, epoch_ms=T0, offset=1000), (9 << 22) | (1023 << 12) | 4095)
    d("custom_tick_1_5ms_nanos_iso", C(41, 10, 12, tick_ns=1_500_000, epoch_ms=T0), (3 << 22) | (5 << 12) | 1)
    d("custom_tick_1s", C(32, 10, 12, tick_ns=10**9, epoch_ms=T0), (86400 << 22) | 9)
    d("custom_tick_1us", C(50, 5, 8, tick_ns=1000, epoch_ms=T0), (1234567 << 13) | (31 << 8) | 255)
    d("custom_year_past_9999", C(41, 10, 12, tick_ns=10**9), ((1 << 41) - 1) << 22)
    y10k = 253402300800  # 10000-01-01T00:00:00Z in Unix seconds
    d("custom_year_9999_last_second", C(41, 10, 12, tick_ns=10**9), (y10k - 1) << 22)
    d("custom_year_10000_first_second", C(41, 10, 12, tick_ns=10**9), y10k << 22)
    d("custom_year_10000_nanos", C(50, 0, 13, tick_ns=999_999_999), ((y10k * 10**9) // 999_999_999 + 1) << 13)
    d("custom_64_bits_u64_max", C(64, 0, 0, tick_ns=1, sign=True), U64)
    d("custom_sequence_node_order", C(30, 20, 13, TSN, tick_ns=10**9, epoch_ms=T0), (77 << 33) | (8191 << 20) | 1048575)
    d("decimal_u64_max", DEC, U64)
    d("decimal_last_id", DEC, 18446744073709551599)
    return c


def compose_cases():
    c = []
    add = c.append
    for name, spec in ALL_PRESETS:
        lay = make_layout(spec)
        t = tick_of(spec, T0) if not lay.decimal else T0_NS // 100
        add(compose_case("compose_" + name, spec, t, min(lay.node_max, 7), min(lay.seq_mask, 5)))
        add(compose_case("compose_max_fields_" + name, spec, lay.max_tick, lay.node_max, lay.seq_mask))
        add(compose_case("compose_zero_" + name, spec, 0, 0, 0))
        add(compose_case("compose_tick_too_large_" + name, spec, lay.max_tick + 1, 0, 0))
        add(compose_case("compose_node_too_large_" + name, spec, 0, lay.node_max + 1, 0))
        add(compose_case("compose_sequence_too_large_" + name, spec, 0, 0, lay.seq_mask + 1))
        add(min_id_case("min_id_at_now_" + name, spec, T0))
        add(min_id_case("min_id_at_epoch_" + name, spec, lay.epoch_ms))
        if lay.epoch_ms > 0:
            add(min_id_case("min_id_before_epoch_" + name, spec, lay.epoch_ms - 1))
        add(min_id_case("min_id_at_lifespan_end_" + name, spec, lay.lifespan_end_ms()))
        add(min_id_case("min_id_at_last_ms_" + name, spec, lay.lifespan_end_ms() - 1))
    add(compose_case("compose_hazelcast_offset_node_field_max", HZ5, 1, 65535, 0))
    add(compose_case("compose_u64_values", TW, U64, U64, U64))
    add(min_id_case("min_id_at_ms_past_2554", DEC, 18446744073710))
    add(min_id_case("min_id_at_ms_u64_max", TW, U64))
    add(min_id_case("min_id_at_sonyflake_mid_tick", SF, T0 + 7))
    add(min_id_case("min_id_at_custom_tick_1_5ms", C(41, 10, 12, tick_ns=1_500_000, epoch_ms=T0), T0 + 4))
    add(min_id_case("min_id_at_decimal_spec_example", DEC, 1640700422954))
    return c


ENCODE_IDS = [
    ("zero", 0), ("one", 1), ("u64_max", U64), ("i64_max", (1 << 63) - 1), ("i64_max_plus_1", 1 << 63),
    ("two_pow_53_minus_1", (1 << 53) - 1), ("two_pow_53", 1 << 53),
    ("base58_57", 57), ("base58_58", 58), ("base58_3363", 58 * 58 - 1), ("base58_3364", 58 * 58),
    ("base32_31", 31), ("base32_32", 32), ("hex_255", 255), ("hex_256", 256),
    ("dec_999", 999), ("dec_1000", 1000), ("dec_10_pow_19", 10**19),
    ("twitter_now", 1934266310456274944), ("discord_docs", 175928847299117063),
    ("decimal_spec", 1640700422954100128), ("js53_max", 9007199254740991),
    ("alternating_bits", 0xAAAAAAAAAAAAAAAA), ("low_bits", 0x5555555555555555),
    ("base58_max_two_digits_below", 58 ** 10), ("base58_ten_digits_max", 58 ** 10 - 1),
    ("base32_top_digit", 1 << 60), ("base32_12_digits_max", (1 << 60) - 1),
]


def encodings_cases():
    c = [encode_case("encode_" + n, v) for n, v in ENCODE_IDS]
    # Fixed-width forms sort like the numbers (checked here; runners may check it too).
    nums = sorted(v for _, v in ENCODE_IDS)
    for form in ("hex", "base32", "base58"):
        texts = [encode(form, v) for v in nums]
        assert texts == sorted(texts), form
    p = lambda n, f, s: c.append(parse_case("parse_" + n, f, s))
    # Accepted spellings
    p("dec_plain", "dec", "1934266310456274944")
    p("dec_leading_zeros", "dec", "00000000000000000042")
    p("dec_u64_max", "dec", "18446744073709551615")
    p("hex_prefix_lower", "hex", "0x1ad8b2c3b4000000")
    p("hex_prefix_upper", "hex", "0X1AD8B2C3B4000000")
    p("hex_unpadded", "hex", "ff")
    p("hex_uppercase", "hex", "FFFFFFFFFFFFFFFF")
    p("hex_prefix_short", "hex", "0x7")
    p("hex_prefix_full_width", "hex", "0xffffffffffffffff")
    p("any_hex_prefix_upper", "any", "0XFF")
    p("base32_lowercase", "base32", encode("base32", 175928847299117063).lower())
    p("base32_crockford_aliases", "base32", "0O0I0L0o0i0l1")
    p("base32_unpadded", "base32", "Z")
    p("base32_u64_max", "base32", "FZZZZZZZZZZZZ")
    p("base58_unpadded", "base58", "z")
    p("base58_u64_max", "base58", encode("base58", U64))
    # Errors name the position of the first bad character
    p("dec_empty", "dec", "")
    p("dec_letter", "dec", "12a4")
    p("dec_space", "dec", " 1")
    p("dec_trailing_space", "dec", "1 ")
    p("dec_sign", "dec", "-1")
    p("dec_plus", "dec", "+1")
    p("dec_non_ascii", "dec", "12\u00e94")
    p("dec_fullwidth_digit", "dec", "1\uff12")
    p("dec_overflow", "dec", "18446744073709551616")
    p("dec_overflow_20_nines", "dec", "99999999999999999999")
    p("dec_too_long_21_zeros", "dec", "0" * 21)
    p("dec_too_long_then_bad", "dec", "1" * 21 + "x")
    p("dec_bad_at_width", "dec", "1" * 20 + "x")
    p("hex_empty", "hex", "")
    p("hex_prefix_only", "hex", "0x")
    p("hex_bad_char", "hex", "0x12g4")
    p("hex_bad_char_no_prefix", "hex", "12g4")
    p("hex_too_long", "hex", "1" * 17)
    p("hex_too_long_after_prefix", "hex", "0x" + "1" * 17)
    p("hex_double_prefix", "hex", "0x0x1")
    p("base32_bad_u", "base32", "0000000000U00")
    p("base32_too_long", "base32", "0" * 14)
    p("base32_overflow", "base32", "G000000000000")
    p("base32_overflow_max", "base32", "ZZZZZZZZZZZZZ")
    p("base32_hyphen", "base32", "00000-0000000")
    p("base32_hex_prefix", "base32", "0x1")
    p("base58_zero_char", "base58", "3hs0qtU4AFc")
    p("base58_capital_o", "base58", "3hsOqtU4AFc")
    p("base58_capital_i", "base58", "I")
    p("base58_lower_l", "base58", "11l")
    p("base58_too_long", "base58", "1" * 12)
    p("base58_overflow", "base58", "zzzzzzzzzzz")
    p("base58_just_over_u64", "base58", encode("base58", U64)[:-1] + BASE58[BASE58.index(encode("base58", U64)[-1]) + 1])
    p("base58_empty", "base58", "")
    # parse_any tells the form by shape
    p("any_decimal", "any", "175928847299117063")
    # ... never silently: all-digit strings of a fixed width that form also reads are ambiguous
    p("any_ambiguous_16_digits_hex", "any", "1970065334000000")
    p("any_ambiguous_16_zeros", "any", "0000000000000010")
    p("any_ambiguous_16_nines", "any", "9" * 16)
    p("any_decimal_15_digits", "any", "197006533400000")
    p("any_decimal_17_digits", "any", "19700653340000000")
    p("any_ambiguous_13_digits_base32", "any", "1700000000000")
    p("any_ambiguous_13_nines", "any", "9" * 13)
    p("any_decimal_12_digits", "any", "170000000000")
    p("any_decimal_14_digits", "any", "17000000000000")
    p("any_ambiguous_11_digits_base58", "any", "12345678912")
    p("any_ambiguous_11_nines", "any", "9" * 11)
    p("any_decimal_11_digits_with_zero", "any", "12345678910")
    p("any_decimal_10_digits", "any", "1234567891")
    p("any_decimal_12_digits_no_zero", "any", "123456789123")
    p("any_decimal_11_digits", "any", "12345678901")
    p("any_hex_prefix", "any", "0xff")
    p("any_hex_16", "any", encode("hex", 175928847299117063))
    p("any_base32_13", "any", encode("base32", 175928847299117063))
    p("any_base58_11", "any", encode("base58", 175928847299117063))
    p("any_empty", "any", "")
    p("any_ambiguous_length", "any", "abc")
    p("any_ambiguous_12", "any", "abcdefghijkm")
    p("any_hex_16_bad_char", "any", "00000000000000zz")
    p("any_base32_13_bad_char", "any", "000000000000U")
    p("any_base58_11_bad_char", "any", "0000000000z")
    p("any_non_ascii_length", "any", "\u00e9" + "1" * 10)
    return c


# --------------------------------------------------------------------------------------------------
# Opaque IDs (SPEC §6b): a 4-round Feistel network on the layout's w bits, in the swapping form of
# NIST SP 800-38G's FF1 (radix 2, XOR for addition): X = A || B with |A| = floor(w/2), |B| = w - |A|;
# round i: C = A xor F(i, B) with F giving |A| bits; A, B = B, C. Rounds 1 and 2 (Naor-Reingold /
# Patel-Ramzan-Sundaram: PRF rounds in the middle): F is SipHash-1-3 of the 6-byte message B (4 bytes
# little-endian) || i || w, mod 2^|A|; SipHash is written from its paper for any message length, c and
# d. Rounds 0 and 3 (universal-hash rounds at both ends): F is the top |A| bits of (a_i * B + b_i) mod
# 2^64 (Dietzfelbinger's multiply-add-shift), a_i and b_i SipHash-1-3 of the bytes i, w, 0 and i, w, 1.

OPAQUE_ROUNDS = 4


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & U64


def siphash(c, d, key, msg):
    k0 = int.from_bytes(key[:8], "little")
    k1 = int.from_bytes(key[8:16], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def sipround():
        v[0] = (v[0] + v[1]) & U64; v[1] = _rotl(v[1], 13); v[1] ^= v[0]; v[0] = _rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & U64; v[3] = _rotl(v[3], 16); v[3] ^= v[2]
        v[0] = (v[0] + v[3]) & U64; v[3] = _rotl(v[3], 21); v[3] ^= v[0]
        v[2] = (v[2] + v[1]) & U64; v[1] = _rotl(v[1], 17); v[1] ^= v[2]; v[2] = _rotl(v[2], 32)

    padded = msg + b"\0" * (7 - len(msg) % 8) + bytes([len(msg) & 0xFF])
    for at in range(0, len(padded), 8):
        m = int.from_bytes(padded[at:at + 8], "little")
        v[3] ^= m
        for _ in range(c):
            sipround()
        v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(d):
        sipround()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


# The SipHash paper's appendix A vector (SipHash-2-4, key 00..0f, message 00..0e).
assert siphash(2, 4, bytes(range(16)), bytes(range(15))) == 0xA129CA6149BE45E5


def opaque_width(spec):
    w = make_layout(spec).total
    if not 32 <= w <= 64:
        raise Fail("INVALID_ARGUMENT")
    return w


def opaque_rounds(key, w, x, decode):
    if len(key) != 16:
        raise Fail("INVALID_ARGUMENT")
    if not 0 <= x < 1 << w:
        raise Fail("INVALID_ID")
    u = w // 2
    v = w - u

    def prf(i, half, m):
        if i in (0, OPAQUE_ROUNDS - 1):
            a = siphash(1, 3, key, bytes([i, w, 0]))
            b = siphash(1, 3, key, bytes([i, w, 1]))
            return ((a * half + b) % (1 << 64)) >> (64 - m)
        return siphash(1, 3, key, half.to_bytes(4, "little") + bytes([i, w])) % (1 << m)

    if not decode:
        a, b = x >> v, x & ((1 << v) - 1)
        for i in range(OPAQUE_ROUNDS):
            m = u if i % 2 == 0 else v
            a, b = b, a ^ prf(i, b, m)
        return (a << v) | b  # an even number of rounds leaves |A| = u, |B| = v
    a, b = x >> v, x & ((1 << v) - 1)
    for i in reversed(range(OPAQUE_ROUNDS)):
        m = u if i % 2 == 0 else v
        a, b = b ^ prf(i, a, m), a
    return (a << v) | b


def opaque_encode(key, w, x):
    return opaque_rounds(key, w, x, False)


def opaque_decode(key, w, y):
    return opaque_rounds(key, w, y, True)


def opaque_case(name, spec, key_hex, ids=None, op=None, value=None):
    """A round-trip case (`ids` -> `tokens`), or one call (`op` of `value`) or construction that fails."""
    case = {"name": name, "layout": spec, "key": key_hex}
    key = bytes.fromhex(key_hex)
    try:
        if len(key) != 16:
            raise Fail("INVALID_ARGUMENT")
        w = opaque_width(spec)
    except Fail as e:
        case["error"] = e.code
        return case
    case["bits"] = w
    if op is not None:
        case["op"], case["input"] = op, str(value)
        try:
            (opaque_encode if op == "encode" else opaque_decode)(key, w, value)
            raise AssertionError("expected an error: %s" % name)
        except Fail as e:
            case["error"] = e.code
        return case
    tokens = [opaque_encode(key, w, x) for x in ids]
    for x, y in zip(ids, tokens):
        assert 0 <= y < 1 << w and opaque_decode(key, w, y) == x, (name, x)
    assert len(set(tokens)) == len(tokens), name
    case["ids"] = [str(x) for x in ids]
    case["tokens"] = [str(y) for y in tokens]
    return case


def opaque_cases():
    import random
    rng = random.Random(0x5EED0B5C)
    keys = ["000102030405060708090a0b0c0d0e0f", "00" * 16, "ff" * 16,
            "2b7e151628aed2a6abf7158809cf4f3c"]  # the last: FIPS-197's example AES key, as plain bytes
    widths = [("w32", C(20, 4, 8)), ("w33", C(21, 4, 8)), ("w41", C(29, 4, 8)), ("w47", C(35, 4, 8)),
              ("w53_js53", P("js53")), ("w57", C(45, 4, 8)), ("w61", C(49, 4, 8)), ("w62", C(50, 4, 8)),
              ("w63_twitter", P("twitter")), ("w63_sonyflake", P("sonyflake")),
              ("w64_discord", P("discord")), ("w64_sign_bit", C(42, 10, 12, sign=True)),
              ("w64_decimal", P("decimal"))]
    c = []
    for label, spec in widths:
        w = make_layout(spec).total
        top = (1 << w) - 1
        for k, key in enumerate(keys):
            ids = [0, 1, 2, 3, top, top - 1, 1 << (w - 1), (1 << (w // 2)) - 1, 1 << (w - w // 2)]
            ids += [rng.getrandbits(w) for _ in range(6)]
            start = rng.getrandbits(w - 8)
            ids += [start + j for j in range(4)]  # neighbours, as a generator mints them
            ids = list(dict.fromkeys(ids))
            c.append(opaque_case("%s_key%d" % (label, k), spec, key, ids))
    real = 1541815603606036480  # an ID in the twitter layout's range (2018-11-28)
    c.append(opaque_case("twitter_minted_run", P("twitter"), keys[3], [real + j for j in range(8)]))
    key = keys[0]
    c.append(opaque_case("key_15_bytes", P("twitter"), key[:30]))
    c.append(opaque_case("key_17_bytes", P("twitter"), key + "10"))
    c.append(opaque_case("key_32_bytes", P("twitter"), key * 2))
    c.append(opaque_case("key_empty", P("twitter"), ""))
    c.append(opaque_case("width_31_refused", C(19, 4, 8), key))
    c.append(opaque_case("width_20_refused", C(10, 2, 8), key))
    c.append(opaque_case("encode_2pow63_twitter", P("twitter"), key, op="encode", value=1 << 63))
    c.append(opaque_case("encode_u64_max_twitter", P("twitter"), key, op="encode", value=U64))
    c.append(opaque_case("decode_2pow63_twitter", P("twitter"), key, op="decode", value=1 << 63))
    c.append(opaque_case("encode_2pow53_js53", P("js53"), key, op="encode", value=1 << 53))
    c.append(opaque_case("decode_2pow53_js53", P("js53"), key, op="decode", value=1 << 53))
    c.append(opaque_case("decode_u64_max_w32", C(20, 4, 8), key, op="decode", value=U64))
    c.append(opaque_case("encode_2pow32_w32", C(20, 4, 8), key, op="encode", value=1 << 32))
    return c

# Node sources (SPEC §3.1): the strings that name a node ID without a store. Lease sources (file://,
# etcd://, postgres://) appear only malformed: they must fail while being parsed, before any store is
# touched (a valid one needs a store, which the bindings' own tests start).

NODE_ENV = "SNOWMINT_NODE_ID"
DIGITS = "0123456789"
SEQ_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
HOST_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._[]:")


def bad_source():
    return Fail("INVALID_ARGUMENT")


def whole(text):
    """A non-negative integer written in decimal digits only, as an int, else None."""
    if text and all(ch in DIGITS for ch in text):
        return int(text)
    return None


def u64_of(text):
    n = whole(text)
    if n is None or n > U64:
        raise bad_source()
    return n


def ttl_ok(v):
    for suffix, unit in (("ms", 1), ("s", 1000), ("m", 60000), ("", 1000)):
        if v.endswith(suffix):
            n = whole(v[:len(v) - len(suffix)] if suffix else v)
            return n is not None and 1 <= n * unit <= 3_600_000
    return False


def unescape(text):
    """%-decoding; None on a bad escape or bytes that are not UTF-8."""
    out, i = bytearray(), 0
    while i < len(text):
        if text[i] == "%":
            h = text[i + 1:i + 3]
            if len(h) != 2 or any(ch not in "0123456789abcdefABCDEF" for ch in h):
                return None
            out.append(int(h, 16))
            i += 3
        else:
            out += text[i].encode()
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def host_port_ok(hp):
    if hp.startswith("["):
        if "]" not in hp:
            return False
        host, after = hp[1:].split("]", 1)
        host, port = "[" + host + "]", (after[1:] if after.startswith(":") else None)
    elif ":" in hp:
        host, port = hp.rsplit(":", 1)
    else:
        host, port = hp, None
    if not host or any(ch not in HOST_CHARS for ch in host):
        return False
    return port is None or (whole(port) is not None and 1 <= whole(port) <= 65535)


def check_lease(scheme, rest):
    """Raises INVALID_ARGUMENT for a malformed lease source; returns quietly for a valid one."""
    body, _, query = rest.partition("?")
    for pair in (p for p in query.split("&") if p):
        if "=" not in pair:
            raise bad_source()
        k, v = pair.split("=", 1)
        if k == "sequencer":
            name = unescape(v)
            if name is None or not 1 <= len(name) <= 64 or name[0] in ".-" or set(name) - SEQ_CHARS:
                raise bad_source()
        elif k == "ttl":
            if not ttl_ok(v):
                raise bad_source()
        elif not scheme.startswith("postgres"):
            raise bad_source()  # unknown parameter (PostgreSQL passes its driver's parameters on)
    if scheme == "file":
        path = "/" + body[len("localhost/"):] if body.startswith("localhost/") else body
        if not path.startswith("/") or unescape(path) is None:
            raise bad_source()
    elif scheme == "etcd":
        hosts = body.split("/", 1)[0]
        if not hosts or not all(host_port_ok(h) for h in hosts.split(",")):
            raise bad_source()
    elif scheme in ("postgres", "postgresql"):
        auth_host, slash, db = body.partition("/")
        if not slash or not db or "@" not in auth_host:
            raise bad_source()
        user_info, hostport = auth_host.rsplit("@", 1)
        if not user_info.split(":")[0] or not host_port_ok(hostport):
            raise bad_source()
    else:
        raise bad_source()  # unknown scheme


def resolve_source(source, layout, environ):
    """The node ID `source` gives under `layout` with the environment `environ` ({NAME: value or
    None for unset}); raises Fail. Reading a variable the case does not set is a bug in the case."""

    def var(name):
        assert name in environ, "a case reads %s without setting or unsetting it" % name
        return environ[name]

    if source == "":
        raise bad_source()
    if all(ch in DIGITS for ch in source):
        node = u64_of(source)
    elif "://" in source:
        check_lease(*source.split("://", 1))
        raise AssertionError("valid lease source %r: the corpus holds only malformed ones" % source)
    else:
        kind, colon, arg = source.partition(":")
        if kind == "env":
            name = arg if colon else NODE_ENV
            if not name or name[0] in DIGITS or any(not (ch.isascii() and (ch.isalnum() or ch == "_")) for ch in name):
                raise bad_source()
            value = var(name)
            if value is None:
                raise bad_source()
            node = u64_of(value)
        elif kind == "k8s":
            offset = u64_of(arg) if colon else 0
            host = var("HOSTNAME")
            assert host, "k8s cases set a non-empty HOSTNAME (an empty one falls back to the system's)"
            _, dash, ordinal = host.rpartition("-")
            node = u64_of(ordinal) + offset if dash else None
            if node is None or node > U64:
                raise bad_source()
        elif kind == "ip" and colon:
            # ip:IFACE: a Linux interface name (1 to 15 bytes, no '/', whitespace or control character).
            # Reading the host's interfaces is not in the corpus: a valid name is one no host has.
            if not arg or len(arg.encode()) > 15 or any(ch == "/" or ch.isspace() or ord(ch) < 32 for ch in arg):
                raise bad_source()
            assert arg.startswith("sm-absent"), "the corpus names only interfaces that no host has"
            raise bad_source()
        else:
            raise bad_source()  # `ip` itself reads the host, not in the corpus
    Generator(layout, node)  # NODE_ID_OUT_OF_RANGE
    return node


def source_case(name, source, env=None, spec=None):
    spec = spec or P("twitter")
    case = {"name": name, "layout": spec, "source": source}
    if env:
        case["env"] = env
    layout = make_layout(spec)  # a valid layout: the case is about the source
    try:
        case["node_id"] = str(resolve_source(source, layout, env or {}))
    except Fail as e:
        case["error"] = e.code
    return case


def node_sources_cases():
    c = []

    def s(name, source, env=None, spec=None, want=None):
        case = source_case(name, source, env, spec)
        # A second opinion, written by hand, for each case: the oracle must agree with it.
        assert case.get("node_id", case.get("error")) == want, (name, case, want)
        c.append(case)

    IA, OUT = "INVALID_ARGUMENT", "NODE_ID_OUT_OF_RANGE"
    # Numbers
    s("number_zero", "0", want="0")
    s("number_seven", "7", want="7")
    s("number_max_twitter", "1023", want="1023")
    s("number_over_twitter", "1024", want=OUT)
    s("number_js53_max", "15", spec=P("js53"), want="15")
    s("number_js53_over", "16", spec=P("js53"), want=OUT)
    s("number_instagram_max", "8191", spec=P("instagram"), want="8191")
    s("number_hazelcast_offset_max", "65530", spec=P("hazelcast", node_id_offset=5), want="65530")
    s("number_hazelcast_offset_over", "65531", spec=P("hazelcast", node_id_offset=5), want=OUT)
    s("number_snowcast_last", "255", spec=P("snowcast", epoch_ms=1_704_067_200_000, node_count=200), want="255")  # rounded up to 256
    s("number_snowcast_over", "256", spec=P("snowcast", epoch_ms=1_704_067_200_000, node_count=200), want=OUT)
    s("number_leading_zeros", "0007", want="7")
    s("number_u64_max", "18446744073709551615", want=OUT)
    s("number_over_u64", "18446744073709551616", want=IA)
    s("number_negative", "-1", want=IA)
    s("number_plus_sign", "+7", want=IA)
    s("number_fraction", "7.0", want=IA)
    s("number_hex", "0x10", want=IA)
    s("number_exponent", "1e3", want=IA)
    s("empty", "", want=IA)
    # env / env:NAME
    s("env_default", "env", {NODE_ENV: "12"}, want="12")
    s("env_default_zero", "env", {NODE_ENV: "0"}, want="0")
    s("env_default_unset", "env", {NODE_ENV: None}, want=IA)
    s("env_default_empty", "env", {NODE_ENV: ""}, want=IA)
    s("env_default_not_a_number", "env", {NODE_ENV: "abc"}, want=IA)
    s("env_default_negative", "env", {NODE_ENV: "-3"}, want=IA)
    s("env_default_hex", "env", {NODE_ENV: "0x1f"}, want=IA)
    s("env_default_over_layout", "env", {NODE_ENV: "1024"}, want=OUT)
    s("env_default_over_u64", "env", {NODE_ENV: "18446744073709551616"}, want=IA)
    s("env_default_js53", "env", {NODE_ENV: "9"}, spec=P("js53"), want="9")
    s("env_default_js53_over", "env", {NODE_ENV: "16"}, spec=P("js53"), want=OUT)
    s("env_named", "env:MY_NODE", {"MY_NODE": "3", NODE_ENV: "12"}, want="3")
    s("env_named_lowercase", "env:pod_node_2", {"pod_node_2": "44"}, want="44")
    s("env_named_unset_default_set", "env:MY_NODE", {"MY_NODE": None, NODE_ENV: "12"}, want=IA)
    s("env_named_not_a_number", "env:MY_NODE", {"MY_NODE": "seven"}, want=IA)
    s("env_named_over_layout", "env:MY_NODE", {"MY_NODE": "5000"}, want=OUT)
    s("env_named_empty_name", "env:", want=IA)
    s("env_named_starts_with_digit", "env:1NODE", want=IA)
    s("env_named_dash", "env:MY-NODE", want=IA)
    s("env_named_dollar", "env:$NODE", want=IA)
    s("env_uppercase_kind", "ENV", want=IA)
    # k8s / k8s:OFFSET (the hostname from $HOSTNAME, as Kubernetes sets it to the pod's name)
    s("k8s_ordinal", "k8s", {"HOSTNAME": "web-3"}, want="3")
    s("k8s_ordinal_zero", "k8s", {"HOSTNAME": "web-0"}, want="0")
    s("k8s_last_dash", "k8s", {"HOSTNAME": "orders-api-12"}, want="12")
    s("k8s_offset", "k8s:10", {"HOSTNAME": "web-3"}, want="13")
    s("k8s_offset_zero", "k8s:0", {"HOSTNAME": "web-7"}, want="7")
    s("k8s_offset_over_layout", "k8s:1000", {"HOSTNAME": "web-24"}, want=OUT)
    s("k8s_ordinal_over_layout", "k8s", {"HOSTNAME": "web-1024"}, want=OUT)
    s("k8s_ordinal_js53", "k8s", {"HOSTNAME": "db-15"}, spec=P("js53"), want="15")
    s("k8s_no_ordinal", "k8s", {"HOSTNAME": "web"}, want=IA)
    s("k8s_trailing_dash", "k8s", {"HOSTNAME": "web-"}, want=IA)
    s("k8s_ordinal_not_digits", "k8s", {"HOSTNAME": "web-3a"}, want=IA)
    s("k8s_ordinal_not_last", "k8s", {"HOSTNAME": "web-3-canary"}, want=IA)
    s("k8s_offset_overflow", "k8s:1", {"HOSTNAME": "web-18446744073709551615"}, want=IA)
    s("k8s_offset_negative", "k8s:-1", {"HOSTNAME": "web-3"}, want=IA)
    s("k8s_offset_not_a_number", "k8s:two", {"HOSTNAME": "web-3"}, want=IA)
    s("k8s_offset_empty", "k8s:", {"HOSTNAME": "web-3"}, want=IA)
    # Other strings
    s("ip_interface_absent", "ip:sm-absent0", want=IA)
    s("ip_interface_empty", "ip:", want=IA)
    s("ip_interface_slash", "ip:eth0/1", want=IA)
    s("ip_interface_space", "ip:eth 0", want=IA)
    s("ip_interface_too_long", "ip:sm-absent-sixteen", want=IA)
    s("unknown_word", "hostname", want=IA)
    s("unknown_kind_with_argument", "node:7", want=IA)
    s("unknown_scheme", "zookeeper://127.0.0.1:2181/app", want=IA)
    s("unknown_scheme_redis", "redis://127.0.0.1:6379", want=IA)
    # Malformed lease sources: rejected while parsing, before any store is opened
    s("file_relative", "file://snowmint-vectors/ids", want=IA)
    s("file_ttl_zero", "file:///nonexistent/snowmint-vectors?ttl=0s", want=IA)
    s("file_bad_sequencer_escape", "file:///nonexistent/snowmint-vectors?sequencer=%zz", want=IA)
    s("file_unknown_parameter", "file:///nonexistent/snowmint-vectors?color=red", want=IA)
    s("etcd_port_zero", "etcd://127.0.0.1:0/app", want=IA)
    s("etcd_port_too_big", "etcd://127.0.0.1:65536/app", want=IA)
    s("etcd_port_not_a_number", "etcd://127.0.0.1:x/app", want=IA)
    s("etcd_no_endpoint", "etcd:///app", want=IA)
    s("etcd_second_endpoint_bad", "etcd://127.0.0.1:1,127.0.0.1:70000/app", want=IA)
    s("etcd_bad_host", "etcd://127.0.0.1 :1/app", want=IA)
    s("etcd_ttl_zero", "etcd://127.0.0.1:1/app?ttl=0ms", want=IA)
    s("etcd_ttl_over_an_hour", "etcd://127.0.0.1:1/app?ttl=61m", want=IA)
    s("etcd_ttl_unit", "etcd://127.0.0.1:1/app?ttl=10h", want=IA)
    s("etcd_ttl_not_a_number", "etcd://127.0.0.1:1/app?ttl=ten", want=IA)
    s("etcd_parameter_without_value", "etcd://127.0.0.1:1/app?ttl", want=IA)
    s("etcd_sequencer_empty", "etcd://127.0.0.1:1/app?sequencer=", want=IA)
    s("etcd_sequencer_space", "etcd://127.0.0.1:1/app?sequencer=my%20orders", want=IA)
    s("etcd_sequencer_leading_dot", "etcd://127.0.0.1:1/app?sequencer=.orders", want=IA)
    s("etcd_sequencer_too_long", "etcd://127.0.0.1:1/app?sequencer=" + "a" * 65, want=IA)
    s("etcd_unknown_parameter", "etcd://127.0.0.1:1/app?sequencer=orders&color=red", want=IA)
    s("postgres_no_user", "postgres://127.0.0.1:1/ids", want=IA)
    s("postgres_empty_user", "postgres://@127.0.0.1:1/ids", want=IA)
    s("postgres_no_database", "postgres://app@127.0.0.1:1/", want=IA)
    s("postgres_no_path", "postgres://app@127.0.0.1:1", want=IA)
    s("postgres_port_too_big", "postgres://app@127.0.0.1:99999/ids", want=IA)
    s("postgres_ttl_zero", "postgresql://app@127.0.0.1:1/ids?ttl=0", want=IA)
    s("postgres_sequencer_slash", "postgres://app@127.0.0.1:1/ids?sequencer=a/b", want=IA)
    return c


# --------------------------------------------------------------------------------------------------
# Output

FILES = {
    "layouts.json": layouts_cases,
    "generate.json": generate_cases,
    "clock_readings.json": clock_readings_cases,
    "decode.json": decode_cases,
    "compose.json": compose_cases,
    "encodings.json": encodings_cases,
    "opaque.json": opaque_cases,
    "node_sources.json": node_sources_cases,
}


def ordered(v):
    """Keys sorted, except that a case's name comes first."""
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: (k != "name", k))
        return {k: ordered(v[k]) for k in keys}
    if isinstance(v, list):
        return [ordered(x) for x in v]
    return v


def render(cases):
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert cases, "a file needs at least one case"
    lines = [json.dumps(ordered(c), ensure_ascii=True) for c in sorted(cases, key=lambda c: c["name"])]
    return '{"cases": [\n' + ",\n".join(lines) + "\n]}\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed files differ")
    ap.add_argument("--out", default=VECTORS, help="directory to write (default: tests/vectors)")
    args = ap.parse_args()
    stale, total, size = [], 0, 0
    for name, build in FILES.items():
        cases = build()
        text = render(cases)
        total += len(cases)
        size += len(text)
        path = os.path.join(args.out, name)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except FileNotFoundError:
                same = False
            if not same:
                stale.append(name)
            print("%-20s %4d cases %s" % (name, len(cases), "ok" if same else "DIFFERS"))
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            print("%-20s %4d cases" % (name, len(cases)))
    assert size < 1_000_000, size
    print("%d cases, %d bytes" % (total, size))
    if stale:
        print("stale: %s (run python3 tests/oracle/vectors.py)" % ", ".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
