#!/usr/bin/env python3
"""The second half of `make demo` (scripts/demo.sh): a fleet on the embedded store, no server.

Eight processes, two per runtime (Rust: the CLI's `snowmint mint --node file://DIR`; C, Python and Node:
the workers of scripts/fleet/), take node-ID leases from one directory (`file://DIR`) and mint at the same
time. The six paced workers start first; once each holds its lease the two Rust processes start. One
Python worker is killed with SIGKILL mid-run and started again: the kernel frees its node ID at once, and
the new holder starts after the node's stored reservation. At the end: a table (process, runtime, node
ID, IDs minted) and the number of duplicate IDs over every process (0, or the demo fails).

    scripts/demo_fleet.py PYTHON      PYTHON: an interpreter with the snowmint wheel installed
Run by demo.sh once everything is built (the CLI and libsnowmint in target/release, the Node addon)."""
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
FLEET = os.path.join(ROOT, "scripts", "fleet")
PACED = 100_000      # IDs per paced worker: 200 batches of 500, 10 ms apart (about 2 s)
RUST = 1_000_000     # IDs per CLI process (at least 0.25 s at the twitter layout's 4096 IDs per ms)
SEQUENCE_BITS, NODE_BITS = 12, 10   # the twitter layout: node ID = bits 12..21


def node_of(id_value):
    return (id_value >> SEQUENCE_BITS) & ((1 << NODE_BITS) - 1)


class Run:
    """One process: its command, output file and, once done, what it minted."""

    def __init__(self, name, runtime, cmd, work):
        self.name, self.runtime, self.cmd, self.note = name, runtime, cmd, ""
        self.out_path = os.path.join(work, name.replace(" ", "-") + ".out")
        self.err_path = self.out_path[:-4] + ".err"
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        self.claimed = None   # the "node N" line of a worker

    def wait_for_lease(self, deadline):
        while time.monotonic() < deadline:
            with open(self.out_path) as f:
                first = f.readline()
            if first.endswith("\n"):
                self.claimed = int(first.split()[1])
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise SystemExit(f"fleet: {self.name} holds no lease: {open(self.err_path).read().strip()}")

    def ids(self):
        with open(self.out_path) as f:
            # A process killed mid-write may leave a partial last line: only whole lines count.
            return [int(line) for line in f if line.endswith("\n") and not line.startswith("node")]


def main():
    python = sys.argv[1]
    cli = os.path.join(TARGET, "release", "snowmint")
    c_worker = os.path.join(TARGET, "demo-fleet", "worker")
    with tempfile.TemporaryDirectory(prefix="snowmint-fleet-") as work:
        store = os.path.join(work, "store")
        os.mkdir(store)
        source = f"file://{store}"
        commands = {
            "c": lambda: [c_worker, source, str(PACED)],
            "python": lambda: [python, os.path.join(FLEET, "worker.py"), source, str(PACED)],
            "node": lambda: ["node", os.path.join(FLEET, "worker.mjs"), os.path.join(ROOT, "bindings-node"),
                             source, str(PACED)],
            "rust": lambda: [cli, "mint", "-n", str(RUST), "--node", source],
        }
        print(f"Fleet: eight processes lease node IDs from {source} (the embedded store, no server) and mint at once")
        runs = []
        deadline = time.monotonic() + 60
        for runtime in ("c", "python", "node"):
            for i in (1, 2):
                runs.append(Run(f"{runtime}-{i}", runtime, commands[runtime](), work))
        for r in runs:
            r.wait_for_lease(deadline)
        for i in (1, 2):
            runs.append(Run(f"rust-{i}", "rust", commands["rust"](), work))
        time.sleep(0.3)
        victim = next(r for r in runs if r.name == "python-2")
        if victim.proc.poll() is not None:
            raise SystemExit("fleet: python-2 finished before it could be killed")
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait()
        victim.note = "SIGKILLed mid-run"
        print(f"  killed python-2 (pid {victim.proc.pid}) with SIGKILL while the others minted; starting it again")
        again = Run("python-2 again", "python", commands["python"](), work)
        again.note = "python-2 restarted"
        runs.append(again)
        again.wait_for_lease(time.monotonic() + 60)
        failed = []
        for r in runs:
            try:
                rc = r.proc.wait(timeout=max(1, deadline + 60 - time.monotonic()))
            except subprocess.TimeoutExpired:
                r.proc.kill()
                rc = "timeout"
            if r is not victim and rc != 0:
                failed.append(f"{r.name} exited {rc}: {open(r.err_path).read().strip()}")
        print()
        print(f"  {'process':<16} {'runtime':<8} {'node ID':>7} {'IDs minted':>11}  note")
        every, first_eight = [], []
        for r in runs:
            ids = r.ids()
            nodes = sorted({node_of(i) for i in ids})
            node = ",".join(map(str, nodes)) if nodes else "-"
            if r.claimed is not None and nodes and nodes != [r.claimed]:
                failed.append(f"{r.name} claimed node {r.claimed} but minted under {node}")
            if not all(a < b for a, b in zip(ids, ids[1:])):
                failed.append(f"{r.name}: its IDs are not strictly increasing")
            if r is not again:
                first_eight += nodes
            every += ids
            print(f"  {r.name:<16} {r.runtime:<8} {node:>7} {len(ids):>11,}  {r.note}")
        duplicates = len(every) - len(set(every))
        distinct = len(set(first_eight)) == len(first_eight) == 8
        print()
        print(f"  {len(runs) - 1} processes held {len(set(first_eight))} distinct node IDs at once; "
              f"{len(every):,} IDs in all, {duplicates} duplicates")
        if not distinct:
            failed.append("the eight processes running at once did not hold eight distinct node IDs")
        if duplicates:
            failed.append(f"{duplicates} duplicate IDs")
        for f in failed:
            print(f"FLEET FAILED: {f}", file=sys.stderr)
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
