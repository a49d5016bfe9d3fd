"""One leased node ID per host, shared by its worker processes through a state file (a lease source with
`state_file=`): real processes on the embedded store and on the etcd and PostgreSQL servers test.sh
starts, a sequencer of exactly ONE node ID (so a worker that did not share the lease would fail with
NODE_IDS_EXHAUSTED), the process that claimed it SIGKILLed while the others mint (the README's recipes,
killed mid-load: test_recipes.py).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import snowmint
from recipes import ETCD, POSTGRES, one_node_source, server_kinds

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a shared lease needs Linux")



def _kinds() -> list[str]:
    return ["file", *server_kinds()]


WORKER = """
import sys, time, snowmint
source, state_file, seconds, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
gen = snowmint.Generator(node_id=source, state_file=state_file)
with open(out, "w") as f:
    f.write(f"node {gen.node_id}\\n")
    f.flush()
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            f.write(f"{gen.next_id()}\\n")
            f.flush()
            time.sleep(0.001)
    except snowmint.SnowmintError as e:
        f.write(f"error {e.code}\\n")
        sys.exit(3)
    gen.close()
    f.write("released\\n")
"""


def _start(source: str, state_file: Path, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WORKER, source, str(state_file), str(seconds), str(out)])


def _wait_for_node(out: Path) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if out.exists() and out.read_text().endswith("\n"):
            first = out.read_text().splitlines()[0]
            assert first.startswith("node "), first
            return int(first.split()[1])
        time.sleep(0.02)
    raise AssertionError(f"{out}: no node ID within 20 s")


def _ids(out: Path) -> list[int]:
    return [int(line) for line in out.read_text().splitlines() if line.isdigit()]


@pytest.mark.parametrize("kind", _kinds())
def test_workers_share_the_one_node_id_and_outlive_the_claimer(kind: str, tmp_path: Path) -> None:
    src = one_node_source(kind, tmp_path)
    state = tmp_path / "host.lease"
    outs = [tmp_path / f"w{i}.txt" for i in range(4)]
    claimer = _start(src, state, 30, outs[0])
    node = _wait_for_node(outs[0])
    others = [_start(src, state, 5, o) for o in outs[1:]]
    assert [_wait_for_node(o) for o in outs[1:]] == [node] * 3
    time.sleep(0.8)
    killed_ms = time.time() * 1000
    claimer.send_signal(signal.SIGKILL)
    claimer.wait(10)
    for p in others:
        assert p.wait(30) == 0
    for o in outs[1:]:
        assert o.read_text().splitlines()[-1] == "released"
    ids = [i for o in outs for i in _ids(o)]
    assert len(set(ids)) == len(ids), "a duplicate among the workers"
    assert {snowmint.decode(i).node_id for i in ids} == {node}
    # Minting went on past the TTL of the killed claimer's last renewal: another worker kept the lease.
    late = [i for i in ids if snowmint.decode(i).timestamp_ms > killed_ms + 2000]
    assert len(late) > 100, len(late)
    # Released by the last worker: the one node ID can be claimed at once, and continues after them.
    after = snowmint.Generator(src)
    assert after.next_id() > max(ids)
    after.close()


def test_a_fixed_node_state_file_is_not_a_lease_file(tmp_path: Path) -> None:
    src = one_node_source("file", tmp_path)
    state = tmp_path / "fixed.snowmint"
    snowmint.Generator(node_id=3, state_file=str(state)).next_id()
    with pytest.raises(snowmint.StateFileMismatchError, match="leased node ID"):
        snowmint.Generator(node_id=src, state_file=str(state))


AT_ONCE = """
import sys, time, snowmint
source, state_file, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
print("ready", flush=True)  # imported: the parent then sends every process one start time
start_at = float(sys.stdin.readline())
time.sleep(max(0.0, start_at - time.time()))
gen = snowmint.Generator(node_id=source, state_file=state_file)
ids = gen.next_ids(3)
end = time.monotonic() + seconds
while time.monotonic() < end:
    ids += gen.next_ids(3)
    time.sleep(0.005)
print(gen.node_id, *ids)
gen.close()
"""


@pytest.mark.parametrize("kind", _kinds())
def test_processes_started_at_once_share_one_node(kind: str, tmp_path: Path) -> None:
    """Issue 40 item 4: 4, 8 or 16 processes of one host open the same lease source and state file at
    the same instant (after a common start time; they import snowmint before it), 20 runs in a row (a
    new sequencer of 16 node IDs each: a process that did not wait for the first claimer's record would
    take another one). Every process of a run mints under ONE node ID; no ID repeats."""
    counts = [4, 8, 16]
    for run in range(20):
        n = counts[run % len(counts)]
        store = {"file": f"file://{tmp_path / 'store'}", "etcd": ETCD, "postgres": POSTGRES}[kind]
        name = f"once-{uuid.uuid4().hex[:10]}"
        snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=16)
        src = f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"
        state = tmp_path / f"run{run}.lease"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", AT_ONCE, src, str(state), "0.3"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(n)
        ]
        # Every process started and imported snowmint (it said so); then one start time for all, a
        # moment ahead, so that they open the source at the same instant.
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == b"ready\n", f"run {run}: not started"
        start_at = f"{time.time() + 0.05}\n".encode()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(start_at)
            p.stdin.flush()  # communicate() below closes it
        results = []
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, f"run {run}: {err.decode()[-2000:]}"
            results.append(out.decode().split())
        nodes = {int(r[0]) for r in results}
        assert len(nodes) == 1, f"run {run} ({n} processes): node IDs {sorted(nodes)}"
        ids = [int(i) for r in results for i in r[1:]]
        assert len(ids) >= 3 * n and len(set(ids)) == len(ids), f"run {run}: a duplicate"
        assert {snowmint.decode(i).node_id for i in ids} == nodes


@pytest.mark.parametrize("kind", _kinds())
def test_processes_one_after_another_keep_the_hosts_node(kind: str, tmp_path: Path) -> None:
    """Processes of one host on one state file that do not overlap (each releases the lease before the
    next joins: short jobs, or late joiners of a start at once) claim the node ID the file last named
    again when it is free, rather than any other of the sequencer's 64."""
    store = {"file": f"file://{tmp_path / 'store'}", "etcd": ETCD, "postgres": POSTGRES}[kind]
    name = f"after-{uuid.uuid4().hex[:10]}"
    snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=64)
    src = f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"
    state = tmp_path / "host.lease"
    nodes, ids = [], []
    for _ in range(6):
        out = subprocess.run(
            [sys.executable, "-c", AT_ONCE, src, str(state), "0.05"],
            input=b"0\n",  # its start time: at once
            capture_output=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr.decode()[-2000:]
        ready, *words = out.stdout.decode().split()
        assert ready == "ready"
        nodes.append(int(words[0]))
        ids += [int(i) for i in words[1:]]
    assert len(set(nodes)) == 1, f"node IDs one after another: {nodes}"
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
