"""State-file bench (SPEC §4a): ``next_id()`` on ``Generator(..., state_file=...)`` against the
in-process generator, in interleaved rounds of one run; then 2 processes minting from one state file
against 2 threads minting from one generator (wall time per ID from a common start; CPython's GIL lets
only one thread run Python code at a time, so the threads take turns while the processes run in
parallel). Prints ``STATEFILE <key> <ns per ID> <name>`` lines (see bench.sh)."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

import snowmint

ROUNDS = 60
PER_ROUND = 20_000
PARALLEL_IDS = 400_000
PARALLEL_ROUNDS = 5


def timed(mint, n: int) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter_ns()
    for _ in range(n):
        mint()
    return (time.perf_counter_ns() - t0) / n


def mint_from(mint, start_at: int, n: int) -> int:  # type: ignore[no-untyped-def]
    while time.time_ns() < start_at:
        pass
    for _ in range(n):
        mint()
    return time.time_ns()


def process_main(path: str, start_at: int, n: int, conn) -> None:  # type: ignore[no-untyped-def]
    gen = snowmint.Generator(3, state_file=path)
    conn.send(mint_from(gen.next_id, start_at, n))


def main() -> None:
    path = f"/dev/shm/snowmint-py-bench-{os.getpid()}.state"
    memory = snowmint.Generator(3)
    file = snowmint.Generator(3, state_file=path)
    best_memory = best_file = float("inf")
    for r in range(ROUNDS):
        if r % 2 == 0:
            a, b = timed(memory.next_id, PER_ROUND), timed(file.next_id, PER_ROUND)
        else:
            b, a = timed(file.next_id, PER_ROUND), timed(memory.next_id, PER_ROUND)
        best_memory, best_file = min(best_memory, a), min(best_file, b)
    print(f"STATEFILE memory {best_memory:.3f} Python: Generator(3).next_id(), in process")
    print(f"STATEFILE file {best_file:.3f} Python: Generator(3, state_file=...).next_id() (/dev/shm)")

    ctx = multiprocessing.get_context("fork")
    best_threads = best_processes = float("inf")
    for _ in range(PARALLEL_ROUNDS):
        start_at = time.time_ns() + 50_000_000
        ends: list[int] = []
        threads = [
            threading.Thread(target=lambda: ends.append(mint_from(memory.next_id, start_at, PARALLEL_IDS // 2)))
            for _ in range(2)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        best_threads = min(best_threads, (max(ends) - start_at) / PARALLEL_IDS)

        start_at = time.time_ns() + 200_000_000
        pipes = [ctx.Pipe() for _ in range(2)]
        procs = [ctx.Process(target=process_main, args=(path, start_at, PARALLEL_IDS // 2, w)) for _, w in pipes]
        for p in procs:
            p.start()
        ends = [r.recv() for r, _ in pipes]
        for p in procs:
            p.join()
        best_processes = min(best_processes, (max(ends) - start_at) / PARALLEL_IDS)
    print(f"STATEFILE threads2 {best_threads:.3f} Python: 2 threads, one in-process Generator (GIL: they take turns)")
    print(f"STATEFILE processes2 {best_processes:.3f} Python: 2 processes, one state file")
    del file
    os.unlink(path)


if __name__ == "__main__":
    main()
