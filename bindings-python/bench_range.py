"""RangeSequence.next_id() from a held range (SPEC §4), side by side in one run with Generator.next_id()
and a no-op call (the loop's own cost); best of 5 rounds of 10^6 calls, ns per call."""

import tempfile
import time

import snowmint

N = 1_000_000


def best(f) -> float:
    out = float("inf")
    for _ in range(5):
        t = time.perf_counter_ns()
        for _ in range(N):
            f()
        out = min(out, (time.perf_counter_ns() - t) / N)
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        seq = snowmint.RangeSequence(
            "bench", dc="a", global_store=f"file://{d}", dc_range=100_000_000, process_range=20_000_000
        )
        gen = snowmint.Generator(1)
        noop = best(lambda: None)
        r = best(seq.next_id)
        g = best(gen.next_id)
        print("range sequence (Python), ns per call, best of 5 x 10^6")
        print(f"  RangeSequence.next_id  {r:8.1f}   (minus the no-op call: {r - noop:6.1f}; target <= 60)")
        print(f"  Generator.next_id      {g:8.1f}   (ratio range/generator {r / g:.2f}x)")
        print(f"  no-op lambda call      {noop:8.1f}")
        print(f"  values handed out: {seq.stats()['values']}, waits: {seq.stats()['late']}")


if __name__ == "__main__":
    main()
