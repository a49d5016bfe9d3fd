"""Uses the public API as a typed program would; `mypy --strict` checks it against the shipped stubs."""

from __future__ import annotations

import array
import datetime as dt

import snowmint


def mint_some(node: int) -> list[int]:
    gen = snowmint.Generator(node, "discord", policy="fail", max_ahead_ms=1000)
    first: int = gen.next_id()
    batch: list[int] = gen.next_ids(10)
    packed: array.array[int] = gen.next_ids_array(100)
    return [first, *batch, *packed]


def describe(i: int, layout: snowmint.Layout) -> str:
    d: snowmint.Decoded = snowmint.decode(i, layout)
    when: dt.datetime = d.datetime
    ns: int | None = d.unix_ns
    return f"{d.iso} node={d.node_id} seq={d.sequence} {when.isoformat()} {ns}"


def from_the_service(url: str) -> list[int]:
    """Typed use of the ID-service client (checked by mypy; run by the client tests, not here)."""
    with snowmint.Client(url, prefetch=500, timeout_ms=1000, clock=lambda: 0.0) as c:
        one: int = c.next_id()
        maybe: int | None = c.try_next_id()
        stats: snowmint.ClientStats = c.stats()
        assert stats["failures"] >= 0 and c.max_wait_ms() > 0
        return [one, *c.next_ids(3), *([maybe] if maybe is not None else [])]


async def from_the_service_async(url: str) -> list[int]:
    async with snowmint.AsyncClient(url) as c:
        first: int = await c.next_id()
        return [first, *(await c.next_ids(2))]


def main() -> None:
    layout = snowmint.Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=1288834974657)
    assert layout.lifespan_end_ms > 0 and layout.clock_unit in ("ms", "ns")
    clock_ms = 1_750_000_000_000
    gen = snowmint.Generator(1, layout, clock=lambda: clock_ms)
    print(describe(gen.next_id(), layout))
    ids = mint_some(3)
    print(snowmint.encode(ids[0], "base58"), snowmint.parse(snowmint.to_string(ids[0], "hex"), "hex"))
    print(snowmint.min_id_at(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), layout="twitter"))
    print(snowmint.compose(1, 2, 3, layout=snowmint.Layout.preset("sonyflake")))
    dec = snowmint.DecimalGenerator(28)
    print(dec.next_id())
    try:
        snowmint.Generator(5000)
    except snowmint.NodeIdOutOfRangeError as e:
        code: str = e.code
        print(code)
    try:
        strict = snowmint.Generator(1, clock=lambda: clock_ms, policy="fail", max_ahead_ms=0)
        strict.next_ids(4096)  # the whole tick
        strict.next_id()
    except snowmint.SnowmintError as e:
        print(e.code)
    try:
        snowmint.parse("3hs0qtU4AFc", "base58")
    except snowmint.ParseError as e:
        position: int = e.position
        print(position)
    err: snowmint.TooFarAheadError | None = None
    if err is not None:
        retry: int = err.retry_after_ms
        print(retry)


if __name__ == "__main__":
    main()
