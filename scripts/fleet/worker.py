"""One process of `make demo`'s fleet (scripts/demo_fleet.py), through the Python binding:
    python worker.py SOURCE COUNT
claims a node ID from the lease source SOURCE, prints "node N", then mints COUNT IDs (twitter layout) in
batches of 500, one decimal ID per line, flushed after each batch, with a 10 ms pause between batches;
leaving the `with` block releases the lease."""
import sys
import time

import snowmint

BATCH = 500


def main() -> None:
    source, count = sys.argv[1], int(sys.argv[2])
    with snowmint.Generator(source, layout="twitter") as gen:
        print(f"node {gen.node_id}", flush=True)
        done = 0
        while done < count:
            ids = gen.next_ids(min(BATCH, count - done))
            sys.stdout.write("".join(f"{i}\n" for i in ids))
            sys.stdout.flush()
            done += len(ids)
            time.sleep(0.01)


if __name__ == "__main__":
    main()
