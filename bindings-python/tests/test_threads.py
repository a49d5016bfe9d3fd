"""Many threads share one generator: no duplicates, each thread's IDs strictly increase."""

from __future__ import annotations

import threading

import snowmint

PER_THREAD = 1_000_000


def _run(gen: snowmint.Generator, threads: int, mode: str) -> list[list[int]]:
    results: list[list[int]] = [[] for _ in range(threads)]
    barrier = threading.Barrier(threads)

    def work(k: int) -> None:
        out = results[k]
        barrier.wait()
        if mode == "next_id":
            nxt = gen.next_id
            out.extend(nxt() for _ in range(PER_THREAD))
        elif mode == "next_ids":
            for _ in range(PER_THREAD // 1000):
                out.extend(gen.next_ids(1000))
        else:
            for _ in range(PER_THREAD // 10_000):
                out.extend(gen.next_ids_array(10_000))

    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
        assert not t.is_alive(), "a minting thread hung"
    return results


def _check(results: list[list[int]]) -> None:
    total = sum(len(r) for r in results)
    assert all(len(r) == PER_THREAD for r in results)
    for r in results:
        assert all(a < b for a, b in zip(r, r[1:])), "a thread's IDs do not strictly increase"
    assert len(set().union(*map(set, results))) == total, "duplicate IDs across threads"


def test_four_threads_next_id_million_each() -> None:
    # 4 × 10^6 IDs is about 1 s of the twitter layout's capacity (4096 per ms): it may run ahead of the
    # clock (at most max_ahead) but never repeats.
    gen = snowmint.Generator(7)
    _check(_run(gen, 4, "next_id"))
    # The threads shared the generator's window (and took it out of place for their waits): every ID
    # it handed out counts.
    assert gen.stats()["minted"] == 4 * PER_THREAD


def test_three_threads_mixed_batches_million_each() -> None:
    gen = snowmint.Generator(7, "discord")
    a = _run(gen, 2, "next_ids")
    b = _run(gen, 1, "array")
    _check(a + b)
