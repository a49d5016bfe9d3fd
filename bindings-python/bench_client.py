"""snowmint.Client.next_id() from a prefetched batch (SPEC §6a), side by side in one run with
Generator.next_id() and a no-op call (the loop's own cost); ns per call, best and median of rounds.

Each round takes a fresh client whose first call fetched a batch of 10 000 IDs, then times 4 000 calls: the
batch never falls below its refill threshold (half), so the round measures the hot path (the validity
check and the take, in Rust) and never the network. The service is `snowmint serve` when
SNOWMINT_SERVICE_URL is set, else the protocol stand-in tests/service/fake_service.py.
Writes its rows to $SNOWMINT_BENCH_CLIENT_JSON when set (merged into the runtime's bench summary).
"""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import snowmint

CALLS = 4_000
ROUNDS = 40


def timed(f) -> float:
    t = time.perf_counter_ns()
    for _ in range(CALLS):
        f()
    return (time.perf_counter_ns() - t) / CALLS


def main() -> None:
    url = os.environ.get("SNOWMINT_SERVICE_URL")
    proc = None
    if not url:
        fake = Path(__file__).resolve().parents[1] / "tests" / "service" / "fake_service.py"
        proc = subprocess.Popen([sys.executable, str(fake)], stdout=subprocess.PIPE, text=True)
        url = proc.stdout.readline().split()[1]
    try:
        gen = snowmint.Generator(1)
        rows = {"client": [], "generator": [], "noop": []}
        for _ in range(ROUNDS):
            with snowmint.Client(url, prefetch=10_000) as c:
                c.next_id()
                rows["client"].append(timed(c.next_id))
                assert c.stats()["requests"] == 1, "the round reached the network"
            rows["generator"].append(timed(gen.next_id))
            rows["noop"].append(timed(lambda: None))
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
    best = {k: min(v) for k, v in rows.items()}
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"service client (Python), ns per call, best / median of {ROUNDS} rounds x {CALLS}")
    print(f"  Client.next_id (prefetched)  {best['client']:7.1f} / {med['client']:7.1f}   (target <= 80)")
    print(f"  Generator.next_id            {best['generator']:7.1f} / {med['generator']:7.1f}   (ratio client/generator {best['client'] / best['generator']:.2f}x)")
    print(f"  no-op lambda call            {best['noop']:7.1f} / {med['noop']:7.1f}")
    out = os.environ.get("SNOWMINT_BENCH_CLIENT_JSON")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            rows_out = [
                ("Client.next_id() from a prefetched batch", "snowmint", "single", best["client"]),
                ("Generator.next_id() (local minting, same run)", "peer", "single", best["generator"]),
                ("a no-op Python call (the floor)", "floor", "call", best["noop"]),
            ]
            json.dump([{"name": n, "kind": k, "what": w, "ns_per_id": round(v, 1), "group": "client"}
                       for n, k, w, v in rows_out], f)


if __name__ == "__main__":
    main()
