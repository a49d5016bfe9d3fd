"""Speed of snowmint.Opaque from Python: encode / decode / encode_str per call, encode_many per ID,
beside a no-op call (the floor of any call from Python). Fastest of 15 samples.

With SNOWMINT_BENCH_OPAQUE_JSON set, writes the rows there (group "opaque") for scripts/bench-all.sh.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable

import snowmint

N = 100_000


def best(fn: Callable[[], Any], per: int) -> float:
    out = []
    for _ in range(15):
        t = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t) / per)
    return min(out)


def main() -> None:
    o = snowmint.Opaque(key=b"bench-opaque-key", layout="twitter")
    base = 1541815603606036480
    ids = list(range(base, base + N))
    tokens = o.encode_many(ids)
    enc, dec, enc_str = o.encode, o.decode, o.encode_str

    def noop(_: int) -> None:
        return None

    def loop(f: Callable[[int], Any], xs: list[int]) -> Callable[[], None]:
        def run() -> None:
            for x in xs:
                f(x)

        return run

    rows = [
        ("Opaque.encode (twitter, 63 bits)", "snowmint", "single", best(loop(enc, ids), N)),
        ("Opaque.decode", "snowmint", "single", best(loop(dec, tokens), N)),
        ("Opaque.encode_str(id, 'base58')", "snowmint", "single", best(loop(lambda i: enc_str(i, "base58"), ids), N)),
        ("Opaque.encode_many (10^5 list), per ID", "snowmint", "batch", best(lambda: o.encode_many(ids), N)),
        ("a no-op Python call (the floor)", "floor", "call", best(loop(noop, ids), N)),
        # A batch returns 10^5 new ints in a new list: making them alone is encode_many's floor.
        ("a list of 10^5 new ints ([x ^ 1 for x in ids]), per int", "floor", "batch", best(lambda: [x ^ 1 for x in ids], N)),
    ]
    print("\nopaque IDs from Python: ns per call (fastest of 15 samples of 10^5 calls)")
    for name, _, _, ns in rows:
        print(f"{name:<58} {ns:>8.1f}")
    print(f"target: encode <= 100 ns per call: {'met' if rows[0][3] <= 100 else 'MISSED'}")
    path = os.environ.get("SNOWMINT_BENCH_OPAQUE_JSON")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump([{"name": n, "kind": k, "what": w, "ns_per_id": v, "group": "opaque"} for n, k, w, v in rows], f)


if __name__ == "__main__":
    main()
