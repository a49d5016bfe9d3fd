"""One process of `make demo`'s fleet (scripts/demo_fleet.py) and of the chaos run (scripts/chaos.py),
through the Python binding:
    python worker.py SOURCE COUNT [SECONDS]
claims a node ID from the lease source SOURCE, prints "node N", then mints COUNT IDs (twitter layout) in
batches of 500, one decimal ID per line, flushed after each batch, with a 10 ms pause between batches;
leaving the `with` block releases the lease.

With SECONDS (a holder of the chaos run): mints at most COUNT IDs in batches of 100 for SECONDS, and
keeps a node ID whatever happens: while none is free (NODE_IDS_EXHAUSTED) or the store is unreachable it
tries again every 50 ms; each claim prints "node N token FENCING at UNIX_MS"; a mint that fails (LEASE_LOST
once the lease is gone: the process was paused past its TTL and another holder took the node, or the
store stayed unreachable) prints "lost N token FENCING CODE" and claims again."""
import sys
import time

import snowmint

BATCH, RECLAIM_BATCH, RETRY_S = 500, 100, 0.05


def emit(ids) -> None:
    sys.stdout.write("".join(f"{i}\n" for i in ids))
    sys.stdout.flush()


def claim(source: str, deadline: float):
    while time.monotonic() < deadline:
        try:
            gen = snowmint.Generator(source, layout="twitter")
        except snowmint.SnowmintError as e:
            if e.code not in ("NODE_IDS_EXHAUSTED", "STORE_UNAVAILABLE", "LEASE_LOST"):
                raise
            time.sleep(RETRY_S)
            continue
        lease = gen.lease
        print(f"node {gen.node_id} token {lease.fencing_token} at {int(time.time() * 1000)}", flush=True)
        return gen, lease.fencing_token
    return None, None


def reclaiming(source: str, count: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    done = 0
    while done < count and time.monotonic() < deadline:
        gen, token = claim(source, deadline)
        if gen is None:
            return
        while done < count and time.monotonic() < deadline:
            try:
                ids = gen.next_ids(min(RECLAIM_BATCH, count - done))
            except snowmint.SnowmintError as e:
                print(f"lost {gen.node_id} token {token} {e.code}", flush=True)
                break
            emit(ids)
            done += len(ids)
            time.sleep(0.02)
        try:
            gen.close()
        except snowmint.SnowmintError:
            pass  # a lease already lost, or a store unreachable: the claim expires by itself


def main() -> None:
    source, count = sys.argv[1], int(sys.argv[2])
    if len(sys.argv) > 3:
        reclaiming(source, count, float(sys.argv[3]))
        return
    with snowmint.Generator(source, layout="twitter") as gen:
        print(f"node {gen.node_id}", flush=True)
        done = 0
        while done < count:
            ids = gen.next_ids(min(BATCH, count - done))
            emit(ids)
            done += len(ids)
            time.sleep(0.01)


if __name__ == "__main__":
    main()
