"""One leased node ID per host, shared by its worker processes through a state file (a lease source with
`state_file=`): real processes on the embedded store and on the etcd and PostgreSQL servers test.sh
starts, a sequencer of exactly ONE node ID (so a worker that did not share the lease would fail with
NODE_IDS_EXHAUSTED), the process that claimed it SIGKILLed while the others mint, and the README's
gunicorn recipe run as written.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import snowmint
from recipes import ETCD, POSTGRES, serve_gunicorn, server_kinds

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a shared lease needs Linux")

README = Path(__file__).resolve().parents[2] / "README.md"


def _kinds() -> list[str]:
    return ["file", *server_kinds()]


def one_node_source(kind: str, tmp_path: Path) -> str:
    """A new sequencer of one node ID (twitter layout), as a lease source with a 2 s TTL."""
    store = {"file": f"file://{tmp_path / 'store'}", "etcd": ETCD, "postgres": POSTGRES}[kind]
    name = f"host-{uuid.uuid4().hex[:10]}"
    snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=1)
    return f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"


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


@pytest.mark.parametrize("kind", _kinds())
def test_readme_gunicorn_host_lease_recipe(kind: str, tmp_path: Path) -> None:
    pytest.importorskip("gunicorn")
    text = README.read_text(encoding="utf-8")
    app = re.search(r"```python title=app_host_lease\.py\n(.*?)```", text, re.S)
    cmd = re.search(r"```sh title=gunicorn-host-lease\n(.*?)```", text, re.S)
    assert app and cmd, "the README shows app_host_lease.py and the gunicorn command"
    state = str(tmp_path / "orders.lease")
    (tmp_path / "app_host_lease.py").write_text(app.group(1).replace("/dev/shm/orders.lease", state))
    src = one_node_source(kind, tmp_path)
    got = serve_gunicorn(cmd.group(1), tmp_path, 1000, {**os.environ, "SNOWMINT_NODE_SOURCE": src})
    ids = [i for i, _ in got]
    assert len(set(ids)) == len(ids), "gunicorn workers minted a duplicate"
    assert len({pid for _, pid in got}) >= 2, "the requests reached several workers"
    assert {snowmint.decode(i).node_id for i in ids} == {0}, "the sequencer's one node ID"
