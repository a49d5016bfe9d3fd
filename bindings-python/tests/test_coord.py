"""Node sources, leases and sequencers from Python, against the embedded store and the real etcd and
PostgreSQL servers test.sh starts (scripts/servers.sh; their URLs come in SNOWMINT_TEST_ETCD_URL and
SNOWMINT_TEST_POSTGRES_URL). Every decision is the Rust coord crate's: these tests check that Python
reaches it (blocking claims, states, error classes and codes) and that pre-forked workers never mint a
duplicate."""

from __future__ import annotations

import array
import datetime
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest

import snowmint
from recipes import ETCD, POSTGRES, REQUIRE, server_kinds

def _servers() -> list[str]:
    return server_kinds()


@pytest.fixture
def tmpdir_store(tmp_path: Path) -> str:
    (tmp_path / "store").mkdir(exist_ok=True)
    return f"file://{tmp_path / 'store'}"


def store_url(kind: str, tmp_path: Path) -> str:
    if kind == "file":
        (tmp_path / "store").mkdir(exist_ok=True)
        return f"file://{tmp_path / 'store'}"
    return {"etcd": ETCD, "postgres": POSTGRES}[kind]


def test_a_missing_store_is_store_not_found_and_nothing_is_created(tmp_path: Path) -> None:
    """A store path that does not exist is refused (a mistyped path must not start a new history), and
    nothing is written; Sequencer.create is what creates a store."""
    missing = tmp_path / "nonexistent" / "x"
    with pytest.raises(snowmint.StoreNotFoundError) as e:
        snowmint.Generator(f"file://{missing}?sequencer=orders")
    assert e.value.code == "STORE_NOT_FOUND"
    assert "sequencer create" in str(e.value)
    assert not (tmp_path / "nonexistent").exists()
    snowmint.Sequencer.create("orders", store=f"file://{missing}", layout="twitter", node_count=2)
    gen = snowmint.Generator(f"file://{missing}?sequencer=orders")
    gen.next_id()
    gen.close()


def source(url: str, **params: str) -> str:
    q = "&".join(f"{k}={v}" for k, v in params.items())
    return f"{url}{'&' if '?' in url else '?'}{q}" if q else url


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


STORES = ["file", *_servers()]


def created(kind: str, tmp_path: Path, tag: str) -> str:
    """A new twitter-layout sequencer of every node ID (only `default` is created on first use)."""
    name = unique(tag)
    snowmint.Sequencer.create(name, store=store_url(kind, tmp_path), layout="twitter", node_count=1024)
    return name


@pytest.mark.parametrize("kind", STORES)
def test_a_missing_sequencer_is_not_found_and_not_created(kind: str, tmp_path: Path) -> None:
    store = store_url(kind, tmp_path)
    name = created(kind, tmp_path, "orders")
    typo = name.replace("orders", "ordres")
    with pytest.raises(snowmint.SequencerNotFoundError) as e:
        snowmint.Generator(source(store, sequencer=typo, ttl="2s"))
    assert e.value.code == "SEQUENCER_NOT_FOUND"
    assert name in str(e.value)
    assert typo not in snowmint.Sequencer.list(store=store)


@pytest.mark.parametrize("kind", STORES)
def test_the_not_found_hint_is_a_command_that_works_when_pasted(kind: str, tmp_path: Path) -> None:
    """The hint of SEQUENCER_NOT_FOUND names the store and the layout: pasted into a shell (with the
    `snowmint` command test.sh builds, SNOWMINT_SERVE), it creates the sequencer the source names."""
    serve = os.environ.get("SNOWMINT_SERVE")
    if not serve:
        if REQUIRE:
            pytest.fail("SNOWMINT_SERVE (the snowmint command) is required")
        pytest.skip("needs the snowmint command (SNOWMINT_SERVE)")
    store = store_url(kind, tmp_path)
    name = unique("hint")
    src = source(store, sequencer=name, ttl="2s")
    layout = snowmint.Layout.preset("discord")
    with pytest.raises(snowmint.SequencerNotFoundError) as e:
        snowmint.Generator(src, layout=layout)
    hint = str(e.value).split("create it first with `", 1)[1].split("`", 1)[0]
    assert hint.startswith(f"snowmint sequencer create {name} --store "), hint
    env = dict(os.environ, PATH=f"{Path(serve).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("SNOWMINT_STORE", None)
    if '"$SNOWMINT_STORE"' in hint:
        # A store URL with a password: no message shows it; the hint names the variable to set.
        assert "with SNOWMINT_STORE set to the store's URL" in str(e.value)
        env["SNOWMINT_STORE"] = store
    ran = subprocess.run(["sh", "-c", hint], env=env, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, (hint, ran.stderr)
    gen = snowmint.Generator(src, layout=layout)
    assert gen.next_id() > 0
    gen.close()


# ------------------------------------------------------------------------------------------ generator
@pytest.mark.parametrize("kind", STORES)
def test_lease_generator_states(kind: str, tmp_path: Path) -> None:
    url = source(store_url(kind, tmp_path), sequencer=created(kind, tmp_path, "py"), ttl="2s")
    gen = snowmint.Generator(url)
    assert gen.state == "attached"
    lease = gen.lease
    assert lease is not None
    assert lease.node_id == gen.node_id
    assert lease.fencing_token >= 1
    assert isinstance(lease.expires_at, datetime.datetime)
    now_ms = time.time() * 1000
    assert now_ms - 1000 < lease.expires_unix_ms <= now_ms + 2000 + 1000
    ids = [gen.next_id() for _ in range(1000)] + gen.next_ids(1000) + list(gen.next_ids_array(100))
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(snowmint.decode(i).node_id == gen.node_id for i in ids)
    gen.detach()
    assert gen.state == "detached" and gen.lease is None
    with pytest.raises(snowmint.LeaseLostError) as e:
        gen.next_id()
    assert e.value.code == "LEASE_LOST"
    with pytest.raises(snowmint.LeaseLostError):
        gen.next_ids(3)
    gen.attach()
    assert gen.state == "attached"
    after = gen.next_id()
    assert after > ids[-1]
    with gen as same:
        assert same is gen
        same.next_id()
    assert gen.state == "detached"
    gen.close()  # idempotent


def test_fixed_sources_and_clock_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = snowmint.Generator("7")
    assert g.node_id == 7 and g.lease is None and g.state == "attached"
    g.detach()
    g.attach()
    g.close()
    g.next_id()
    monkeypatch.setenv("SNOWMINT_NODE_ID", "12")
    assert snowmint.Generator("env").node_id == 12
    monkeypatch.setenv("MY_NODE", "5000")
    with pytest.raises(snowmint.NodeIdOutOfRangeError) as e:
        snowmint.Generator("env:MY_NODE")
    assert e.value.code == "NODE_ID_OUT_OF_RANGE"
    with pytest.raises(snowmint.InvalidArgumentError) as e2:
        snowmint.Generator(f"file://{tmp_path}/x", clock=lambda: 1_700_000_000_000)
    assert "clock" in str(e2.value)


@pytest.mark.parametrize(
    "bad, exc, code",
    [
        ("", snowmint.InvalidArgumentError, "INVALID_ARGUMENT"),
        ("zookeeper://h:2181/x", snowmint.InvalidArgumentError, "INVALID_ARGUMENT"),
        ("file://relative/dir", snowmint.InvalidArgumentError, "INVALID_ARGUMENT"),
        ("file:///tmp/x?ttl=0s", snowmint.InvalidArgumentError, "INVALID_ARGUMENT"),
        ("file:///tmp/x?sequencer=.bad", snowmint.InvalidArgumentError, "INVALID_ARGUMENT"),
        ("etcd://127.0.0.1:0/x", snowmint.InvalidArgumentError, "INVALID_ARGUMENT"),
        ("etcd://127.0.0.1:1/x?ttl=1s", snowmint.StoreUnavailableError, "STORE_UNAVAILABLE"),
        ("postgres://u@127.0.0.1:1/db?ttl=1s", snowmint.StoreUnavailableError, "STORE_UNAVAILABLE"),
        ("99999999999999999999", snowmint.InvalidArgumentError, "INVALID_ARGUMENT"),
        ("4096", snowmint.NodeIdOutOfRangeError, "NODE_ID_OUT_OF_RANGE"),
        ("ip:3", snowmint.InvalidArgumentError, "INVALID_ARGUMENT"),
    ],
)
def test_bad_sources_have_rust_codes(bad: str, exc: type[snowmint.SnowmintError], code: str) -> None:
    with pytest.raises(exc) as e:
        snowmint.Generator(bad)
    assert e.value.code == code
    assert isinstance(e.value, snowmint.SnowmintError)


# ------------------------------------------------------------------------------------------ sequencer
def _other_process(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip()


@pytest.mark.parametrize("kind", STORES)
def test_sequencer_lifecycle(kind: str, tmp_path: Path) -> None:
    store = source(store_url(kind, tmp_path), ttl="1s")
    name = unique("life")
    seq = snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=4)
    assert (seq.name, seq.node_count, seq.layout.name) == (name, 4, "twitter")
    assert name in snowmint.Sequencer.list(store=store)
    # Same configuration: a handle on it; another one: a conflict.
    snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=4)
    with pytest.raises(snowmint.SequencerConflictError) as e:
        snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=5)
    assert e.value.code == "SEQUENCER_CONFLICT"
    gens = [seq.attach() for _ in range(4)]
    assert sorted(g.node_id for g in gens) == [0, 1, 2, 3]
    with pytest.raises(snowmint.NodeIdsExhaustedError) as e2:
        seq.attach()
    assert e2.value.code == "NODE_IDS_EXHAUSTED"
    g = gens[0]
    first = g.next_id()
    g.detach()
    assert g.state == "detached"
    g.attach()
    assert g.state == "attached"
    last = g.next_id()
    assert last > first
    # Destroyed from another process: every generator here sees it within a renewal interval.
    _other_process(f"import snowmint; snowmint.Sequencer.open({name!r}, store={store!r}).destroy()")
    deadline = time.monotonic() + 10
    while g.state != "destroyed" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert g.state == "destroyed"
    with pytest.raises(snowmint.SequencerDestroyedError) as e3:
        g.next_id()
    assert e3.value.code == "SEQUENCER_DESTROYED"
    with pytest.raises(snowmint.SequencerDestroyedError):
        g.attach()
    for other in gens[1:]:
        deadline = time.monotonic() + 10
        while other.state != "destroyed" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert other.state == "destroyed"
        other.close()
    assert name not in snowmint.Sequencer.list(store=store)
    # Re-created: never repeats an old ID (reservations outlive the record).
    again = snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=4)
    with again.attach() as h:
        assert h.next_id() > last
    again.destroy()


def test_sequencer_bad_inputs(tmp_path: Path) -> None:
    store = f"file://{tmp_path}/s"
    for bad_name in ["", ".x", "-x", "a/b", "x" * 65]:
        with pytest.raises(snowmint.InvalidArgumentError):
            snowmint.Sequencer.create(bad_name, store=store)
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Sequencer.create("n0", store=store, node_count=0)
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Sequencer.create("big", store=store, node_count=4097)
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Sequencer.create("x", store="7")
    with pytest.raises(snowmint.SequencerNotFoundError):
        snowmint.Sequencer.open("missing", store=store)
    with pytest.raises(TypeError):
        snowmint.Sequencer.create("x", store=7)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ pre-forked workers (gunicorn)
WORKERS = 8
PER_WORKER = 100_000


def _worker(src: str, out: Path, count: int, slow: bool, hold_until: float = 0.0) -> None:
    """A pre-forked worker: opens its own lease in the child and writes what it mints."""
    code = 0
    try:
        gen = snowmint.Generator(src)
        buf = array.array("Q", bytes(8 * 1000))
        with open(out, "wb") as f:
            f.write(gen.node_id.to_bytes(8, "little"))
            f.flush()
            done = 0
            while done < count:
                gen.next_ids_into(buf)
                f.write(buf.tobytes())
                f.flush()
                done += len(buf)
                if slow:
                    time.sleep(0.01)
        # Hold the node ID until every worker has claimed one (so that they must all differ).
        time.sleep(max(0.0, hold_until - time.time()))
        gen.close()
    except BaseException as e:  # noqa: BLE001 (report anything from the child)
        print(f"worker {out.name}: {e!r}", file=sys.stderr)
        code = 1
    os._exit(code)


def _fork(src: str, out: Path, count: int, slow: bool = False, hold_until: float = 0.0) -> int:
    pid = os.fork()
    if pid == 0:
        _worker(src, out, count, slow, hold_until)
    return pid


def _read(out: Path) -> tuple[int, array.array[int]]:
    data = out.read_bytes()
    data = data[: len(data) // 8 * 8]
    ids = array.array("Q")
    ids.frombytes(data[8:])
    return int.from_bytes(data[:8], "little"), ids


@pytest.mark.parametrize("kind", ["file", *[k for k in _servers() if k == "etcd"]])
def test_prefork_workers_distinct_nodes_no_duplicate(kind: str, tmp_path: Path) -> None:
    src = source(store_url(kind, tmp_path), sequencer=created(kind, tmp_path, "fork"), ttl="1s")
    # The parent has imported snowmint and holds a lease of its own (it minted, so it keeps it across
    # the forks): the children must not mint under it.
    parent = snowmint.Generator(src)
    parent.next_id()
    outs = [tmp_path / f"w{i}.bin" for i in range(WORKERS)]
    hold_until = time.time() + 4
    pids = [_fork(src, o, PER_WORKER, hold_until=hold_until) for o in outs]
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    assert time.time() >= hold_until
    nodes = []
    seen: set[int] = set()
    total = 0
    for o in outs:
        node, ids = _read(o)
        assert len(ids) == PER_WORKER
        nodes.append(node)
        seen.update(ids)
        total += len(ids)
    assert len(set(nodes + [parent.node_id])) == WORKERS + 1, nodes
    assert len(seen) == total
    # A worker killed with SIGKILL mid-flight, restarted (as gunicorn does): no duplicate.
    killed = tmp_path / "killed.bin"
    pid = _fork(src, killed, 10**9, slow=True)
    deadline = time.monotonic() + 20
    while (not killed.exists() or killed.stat().st_size < 8 * 3000) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    restarted = tmp_path / "restarted.bin"
    pid = _fork(src, restarted, PER_WORKER)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    for o in (killed, restarted):
        _, ids = _read(o)
        assert len(ids) > 0
        seen.update(ids)
        total += len(ids)
    assert len(seen) == total
    # The parent's lease still mints, and nothing it mints was minted by a child.
    mine = parent.next_ids(1000)
    assert not seen.intersection(mine)
    parent.close()


def test_forked_child_opens_its_own_lease(tmp_path: Path) -> None:
    """A generator opened from a lease source before os.fork() opens a lease of its own in the child on
    first use (no ForkedError), with another node ID; the parent's lease goes on."""
    gen = snowmint.Generator(f"file://{tmp_path}")
    first = gen.next_id()  # minted: the parent keeps its lease across the fork
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            a, b = gen.next_id(), gen.next_id()
            msg = f"{a} {b} {gen.node_id} {gen.state}".encode()
        except BaseException as e:  # noqa: BLE001
            msg = repr(e).encode()
        gen.close()  # the child's own lease
        os.write(w, msg)
        os._exit(0)
    os.close(w)
    got = os.read(r, 200).decode()
    os.waitpid(pid, 0)
    a, b, node, state = got.split()
    assert state == "attached" and int(node) != gen.node_id, got
    assert snowmint.decode(int(a)).node_id == int(node) and int(b) > int(a)
    assert gen.state == "attached"
    later = gen.next_id()
    assert later > first and snowmint.decode(later).node_id == gen.node_id
    gen.close()


def test_master_that_never_minted_holds_no_node_id_after_fork(tmp_path: Path) -> None:
    """A pre-fork master opens the generator and never mints: it gives its node ID back when it forks,
    so on a one-node sequencer the worker gets it; the master claims again on its first use."""
    store = f"file://{tmp_path}/one"
    snowmint.Sequencer.create("one", store=store, layout="twitter", node_count=1)
    gen = snowmint.Generator(f"{store}?sequencer=one&ttl=2s")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            msg = f"{gen.next_id()} {gen.node_id}".encode()
        except BaseException as e:  # noqa: BLE001
            msg = repr(e).encode()
        gen.close()
        os.write(w, msg)
        os._exit(0)
    os.close(w)
    got = os.read(r, 200).decode()
    os.waitpid(pid, 0)
    worker_id, worker_node = map(int, got.split())
    assert worker_node == 0
    assert gen.next_id() > worker_id and gen.node_id == 0
    gen.close()


def test_gil_released_while_claiming(tmp_path: Path) -> None:
    """Another Python thread runs while a claim waits for an unreachable store."""
    import threading

    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    start = time.monotonic()
    with pytest.raises(snowmint.StoreUnavailableError):
        # A listening socket that never answers: the claim waits for its timeout.
        import socket

        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        try:
            snowmint.Generator(f"etcd://127.0.0.1:{port}/x?ttl=1s")
        finally:
            s.close()
    elapsed = time.monotonic() - start
    stop.set()
    t.join()
    assert elapsed > 0.2
    assert ticks > 20, (ticks, elapsed)


# ------------------------------------------------------------------------------ TLS and authentication
def _tls_failures() -> list[list[str]]:
    """The failure cases scripts/servers.sh wrote for every runtime (tls_servers): a wrong CA, no or an
    expired client certificate, a wrong password, against etcd over HTTPS with client certificates, etcd
    with authentication, and PostgreSQL with hostssl + SCRAM only."""
    path = os.environ.get("SNOWMINT_TEST_TLS_FAILURES", "")
    if not path:
        if REQUIRE:
            raise RuntimeError("SNOWMINT_REQUIRE_SERVERS=1 but no SNOWMINT_TEST_TLS_FAILURES")
        return []
    return [line.split("\t") for line in Path(path).read_text().splitlines() if line]


@pytest.mark.parametrize("case", _tls_failures(), ids=lambda c: c[0])
def test_tls_and_authentication_failures_name_the_cause(case: list[str]) -> None:
    _name, url, code, must, secret = case
    with pytest.raises(snowmint.SnowmintError) as e:
        snowmint.Generator(url)
    assert e.value.code == code, str(e.value)
    assert must in str(e.value), str(e.value)
    for shown in (str(e.value), repr(e.value)):
        assert secret not in shown, shown


def test_tls_and_authentication_work() -> None:
    names = (
        "SNOWMINT_TEST_ETCD_TLS_URL",
        "SNOWMINT_TEST_ETCD_AUTH_URL",
        "SNOWMINT_TEST_ETCD_AUTH_TLS_URL",
        "SNOWMINT_TEST_POSTGRES_TLS_URL",
    )
    urls = [os.environ.get(name, "") for name in names]
    if not all(urls):
        assert not REQUIRE, "SNOWMINT_REQUIRE_SERVERS=1 but the TLS server URLs are missing"
        pytest.skip("no TLS servers (scripts/servers.sh: tls_servers)")
    for url in urls:
        g = snowmint.Generator(source(url, ttl="3s"))
        assert g.next_id() > 0
        assert "snowmint-root-secret" not in repr(g) and "snowmint-test@" not in repr(g)
        g.detach()
