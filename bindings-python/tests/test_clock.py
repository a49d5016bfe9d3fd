"""Injected clocks: scripted scenarios of clock regression, bursts, policies and bad readings."""

from __future__ import annotations

import time

import pytest

import snowmint

T0 = 1_750_000_000_000  # Unix ms


class Clock:
    def __init__(self, *readings: object) -> None:
        self.readings = list(readings)
        self.calls = 0

    def __call__(self) -> object:
        self.calls += 1
        if len(self.readings) > 1:
            return self.readings.pop(0)
        return self.readings[0]


def test_same_readings_same_ids_as_core() -> None:
    # The core's own doc example: twitter, node 7, 1_700_000_000_000 ms.
    g = snowmint.Generator(7, clock=lambda: 1_700_000_000_000)
    assert g.next_id() == 1724551110456274944
    assert g.next_id() == 1724551110456274945


def test_backwards_clock_borrows_ahead_under_wait_and_fail() -> None:
    for policy in ("wait", "fail"):
        c = Clock(T0 + 10, T0 + 5)
        g = snowmint.Generator(1, clock=c, policy=policy)
        a, b = g.next_id(), g.next_id()
        assert b == a + 1  # the next sequence of the last tick, not the clock's earlier tick


def test_strict_policy_refuses_backwards_step() -> None:
    g = snowmint.Generator(1, clock=Clock(T0 + 10, T0 + 5), policy="strict")
    g.next_id()
    with pytest.raises(snowmint.ClockMovedBackwardsError) as info:
        g.next_id()
    assert info.value.code == "CLOCK_MOVED_BACKWARDS"


def test_fail_policy_reports_retry_after() -> None:
    g = snowmint.Generator(1, clock=lambda: T0, policy="fail", max_ahead_ms=2)
    ids = g.next_ids(3 * 4096)  # fills ticks T0, T0+1, T0+2
    assert len(ids) == 3 * 4096
    with pytest.raises(snowmint.TooFarAheadError) as info:
        g.next_id()
    e = info.value
    assert e.code == "TOO_FAR_AHEAD" and e.retry_after_ms == 1
    assert "retry after 1 ms" in str(e)


def test_wait_policy_sleeps_until_the_clock_catches_up() -> None:
    g = snowmint.Generator(1, clock=lambda: time.time_ns() // 1_000_000, max_ahead_ms=0)
    t = time.monotonic()
    ids = [i for _ in range(4) for i in g.next_ids(4096)]  # four full ticks: must wait for the clock
    assert len(set(ids)) == len(ids) == 4 * 4096 and ids == sorted(ids)
    ticks = {snowmint.decode(i).timestamp_ms for i in ids}
    assert len(ticks) == 4
    assert time.monotonic() - t < 5


def test_frozen_clock_under_wait_is_too_far_ahead_not_a_hang() -> None:
    g = snowmint.Generator(1, clock=lambda: T0, max_ahead_ms=0)
    g.next_ids(4096)
    t = time.monotonic()
    with pytest.raises(snowmint.TooFarAheadError):
        g.next_id()
    assert time.monotonic() - t < 5


def test_clock_before_epoch_and_after_lifespan() -> None:
    with pytest.raises(snowmint.ClockBeforeEpochError):
        snowmint.Generator(1, clock=lambda: 1_000).next_id()
    with pytest.raises(snowmint.LayoutExhaustedError):
        snowmint.Generator(1, clock=lambda: 3487858230209).next_id()


def test_errors_on_the_system_clock() -> None:
    """next_id's own C method (its fast path: a fixed node ID on the system clock) raises the core's
    errors as the full path does: class, code, attributes and message."""
    future = snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12,
                             epoch_ms=int(time.time() * 1000) + 3_600_000)
    with pytest.raises(snowmint.ClockBeforeEpochError) as before:
        snowmint.Generator(1, future).next_id()
    assert before.value.code == "CLOCK_BEFORE_EPOCH"
    # Two IDs a millisecond and no room ahead: a third within the millisecond is refused.
    tiny = snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=1, epoch_ms=1_288_834_974_657)
    g = snowmint.Generator(1, tiny, policy="fail", max_ahead_ms=0)
    with pytest.raises(snowmint.TooFarAheadError) as ahead:
        for _ in range(10_000):
            g.next_id()
    e = ahead.value
    assert e.code == "TOO_FAR_AHEAD" and e.retry_after_ms >= 0 and "retry after" in str(e)
    # The method is the class's own: a bound method of a live generator, refusing other objects.
    next_id = snowmint.Generator(1).next_id
    assert next_id() < next_id()
    with pytest.raises(TypeError):
        snowmint.Generator.next_id(object())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "reading",
    [-1, -1.0, 1.5, float("nan"), float("inf"), float("-inf"), 2**64, -(2**64), 2.0**53, 18446744073710],
)
def test_bad_readings_are_invalid_clock(reading: object) -> None:
    g = snowmint.Generator(1, clock=lambda: reading)
    with pytest.raises(snowmint.InvalidClockError):
        g.next_id()
    with pytest.raises(snowmint.InvalidClockError):
        g.next_ids(3)
    with pytest.raises(snowmint.InvalidClockError):
        g.next_ids_array(3)


@pytest.mark.parametrize("reading", ["1750000000000", None, b"1", True, [1]])
def test_readings_of_wrong_type_are_type_errors(reading: object) -> None:
    with pytest.raises(TypeError, match="clock must return"):
        snowmint.Generator(1, clock=lambda: reading).next_id()


def test_whole_float_readings_work() -> None:
    a = snowmint.Generator(1, clock=lambda: float(T0)).next_id()
    b = snowmint.Generator(1, clock=lambda: T0).next_id()
    assert a == b


def test_clock_exceptions_propagate_unchanged() -> None:
    class Boom(Exception):
        pass

    def clock() -> int:
        raise Boom("clock broke")

    g = snowmint.Generator(1, clock=clock)
    with pytest.raises(Boom, match="clock broke"):
        g.next_id()
    with pytest.raises(Boom):
        g.next_ids(10)


def test_nanosecond_clock_for_decimal_layout() -> None:
    g = snowmint.Generator(28, "decimal", clock=lambda: 1_640_700_422_954_100_128)
    assert g.next_id() == 1640700422954100128
    with pytest.raises(snowmint.InvalidClockError):
        snowmint.Generator(28, "decimal", clock=lambda: 1.5).next_id()


def test_random_start_is_deterministic_per_seed_and_keeps_capacity() -> None:
    a = snowmint.Generator(1, clock=lambda: T0, random_seed=42).next_ids(5)
    b = snowmint.Generator(1, clock=lambda: T0, random_seed=42).next_ids(5)
    c = snowmint.Generator(1, clock=lambda: T0).next_ids(5)
    assert a == b and a != c
    g = snowmint.Generator(1, clock=lambda: T0, random_seed=42, policy="fail", max_ahead_ms=1)
    assert len(set(g.next_ids(4096))) == 4096  # a whole tick's worth, random start or not


def test_reading_to_ns() -> None:
    t = snowmint.Layout.preset("twitter")
    assert t.reading_to_ns(T0) == T0 * 10**6
    assert t.reading_to_ns(float(T0)) == T0 * 10**6
    assert snowmint.Layout.decimal().reading_to_ns(123) == 123
    for bad in (-1, 1.5, float("nan")):
        with pytest.raises(snowmint.InvalidClockError):
            t.reading_to_ns(bad)
    with pytest.raises(TypeError):
        t.reading_to_ns("1")  # type: ignore[arg-type]


def test_cycle_through_injected_clock_is_collected() -> None:
    import gc
    import weakref

    class Service:
        def __init__(self) -> None:
            self.gen = snowmint.Generator(1, clock=self.now)

        def now(self) -> int:
            return T0

    s = Service()
    assert s.gen.next_id() > 0
    ref = weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None, "the Service <-> Generator cycle leaked"


def test_stats_count_batches_borrowed_ticks_regressions_and_waits() -> None:
    # A full tick in one batch, one ID that borrows the next tick, a clock 5 ms back (one regression).
    g = snowmint.Generator(1, clock=Clock(T0, T0, T0 - 5, T0 - 4))
    assert g.stats() == dict.fromkeys(
        ("minted", "batches", "borrowed_ticks", "waits", "wait_ns", "regressions"), 0
    )
    g.next_ids(4096)
    g.next_id()
    g.next_id()
    g.next_id()
    assert g.stats() == {
        "minted": 4099,
        "batches": 1,
        "borrowed_ticks": 1,
        "waits": 0,
        "wait_ns": 0,
        "regressions": 1,
    }
    # No running ahead: the 4097th ID at T0 waits exactly 1 ms for the clock's next tick.
    w = snowmint.Generator(1, clock=Clock(T0, T0, T0 + 1), max_ahead_ms=0)
    w.next_ids(4096)
    w.next_id()
    s = w.stats()
    assert (s["minted"], s["batches"], s["waits"], s["wait_ns"], s["borrowed_ticks"]) == (4097, 1, 1, 1_000_000, 0)
    assert all(type(v) is int for v in s.values())
