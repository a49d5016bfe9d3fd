"""The fork rule: a forked child never mints with its parent's generator state."""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path

import pytest

import snowmint

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _child_result(gen: snowmint.Generator, write_fd: int) -> None:
    # Runs in the child: report what using the parent's generator does, then a fresh one.
    try:
        gen.next_id()
        msg = "minted"
    except snowmint.ForkedError as e:
        msg = f"forked:{e.code}"
    except BaseException as e:  # pragma: no cover - reported to the parent
        msg = f"other:{type(e).__name__}:{e}"
    try:
        fresh = snowmint.Generator(gen.node_id + 1, gen.layout)
        msg += f" fresh:{fresh.next_id()}"
    except BaseException as e:  # pragma: no cover
        msg += f" fresh-failed:{e!r}"
    os.write(write_fd, msg.encode())


def test_parent_generator_refuses_to_mint_in_forked_child() -> None:
    gen = snowmint.Generator(3)
    before = gen.next_id()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(r)
            _child_result(gen, w)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert msg.startswith("forked:FORKED fresh:"), msg
    fresh_id = int(msg.split("fresh:")[1])
    assert snowmint.decode(fresh_id).node_id == 4
    # The parent keeps minting, after its earlier IDs.
    assert gen.next_id() > before
    assert gen.next_ids(3) and len(gen.next_ids_array(3)) == 3


@pytest.mark.skipif(sys.platform != "linux", reason="libc fork through ctypes")
def test_fork_that_bypasses_os_fork_is_detected_too() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    gen = snowmint.Generator(3)
    gen.next_id()
    r, w = os.pipe()
    pid = libc.fork()  # no os.register_at_fork hooks run: only pthread_atfork handlers
    assert pid >= 0
    if pid == 0:  # child
        try:
            try:
                gen.next_id()
                msg = b"minted"
            except snowmint.ForkedError:
                msg = b"FORKED"
            os.write(w, msg)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read()
    os.waitpid(pid, 0)
    assert msg == b"FORKED"


def _mp_worker(gen: snowmint.Generator, q: "multiprocessing.Queue[str]") -> None:
    try:
        gen.next_ids(10)
        q.put("minted")
    except snowmint.ForkedError as e:
        q.put(e.code)


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_multiprocessing_fork_child_gets_forked_error() -> None:
    gen = snowmint.Generator(3)
    gen.next_id()
    ctx = multiprocessing.get_context("fork")
    q: "multiprocessing.Queue[str]" = ctx.Queue()
    p = ctx.Process(target=_mp_worker, args=(gen, q))
    p.start()
    try:
        assert q.get(timeout=30) == "FORKED"
    finally:
        p.join(timeout=30)
    assert p.exitcode == 0


def test_generators_cannot_be_pickled_to_other_processes() -> None:
    import pickle

    with pytest.raises(TypeError):
        pickle.dumps(snowmint.Generator(1))


def _lease_source(kind: str, tmp_path: Path) -> str:
    import uuid

    from recipes import ETCD, POSTGRES

    store = {"file": f"file://{tmp_path}/store", "etcd": ETCD, "postgres": POSTGRES}[kind]
    name = f"fork-{uuid.uuid4().hex[:10]}"
    snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=16)
    return f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"


def _first_call(gen: snowmint.Generator, first: str) -> list[int]:
    """The child's first call on the parent's generator: every entry point that mints, and stats."""
    import array

    if first == "next_ids":
        return list(gen.next_ids(3))
    if first == "next_ids_array":
        return list(gen.next_ids_array(3))
    if first == "next_ids_into":
        out = array.array("Q", [0, 0, 0])
        gen.next_ids_into(out)
        return list(out)
    if first == "stats":
        s = gen.stats()
        assert s["minted"] == 0 and s["batches"] == 0, s  # the child has minted nothing yet
        return list(gen.next_ids(3))
    if first == "high_water_mark":
        try:
            gen.high_water_mark()
            raise AssertionError("a lease source has no high-water mark")
        except snowmint.InvalidArgumentError:
            pass  # as in the parent: the store keeps a lease's state
        return list(gen.next_ids(3))
    assert first == "next_id"
    return [gen.next_id() for _ in range(3)]


FIRST_CALLS = ["next_ids", "next_ids_array", "next_ids_into", "stats", "high_water_mark", "next_id"]


def _kinds() -> list[str]:
    from recipes import server_kinds

    return ["file", *server_kinds()]


@pytest.mark.skipif(sys.platform != "linux", reason="a shared lease needs Linux")
@pytest.mark.parametrize("kind", _kinds())
@pytest.mark.parametrize("state_file", [False, True], ids=["own-lease", "state-file"])
@pytest.mark.parametrize("parent_minted", [False, True], ids=["parent-idle", "parent-minted"])
def test_a_forked_child_mints_a_batch_first(
    kind: str, state_file: bool, parent_minted: bool, tmp_path: Path
) -> None:
    """Issue 40: a generator opened from a lease source before fork(), whose child's FIRST call is a batch
    (or an array, `next_ids_into`, `stats`, `high_water_mark`): the child claims its own lease (or joins
    the host's through the state file) and mints, instead of failing with LEASE_LOST ("detached"). The
    parent that never minted gave its lease back before the fork (the pre-fork master's case)."""
    src = _lease_source(kind, tmp_path)
    kw = {"state_file": f"{tmp_path}/host.lease"} if state_file else {}
    gen = snowmint.Generator(src, **kw)
    before = gen.next_id() if parent_minted else 0
    children = []
    for first in FIRST_CALLS:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            try:
                os.close(r)
                try:
                    ids = _first_call(gen, first)
                    more = gen.next_ids(2)
                    msg = f"ok {gen.node_id} {' '.join(map(str, ids + more))} {gen.stats()['minted']}"
                except BaseException as e:  # reported to the parent
                    msg = f"error {type(e).__name__}: {e}"
                os.write(w, msg.encode())
            finally:
                os._exit(0)
        os.close(w)
        children.append((first, pid, r))
    nodes = set()
    for first, pid, r in children:
        with os.fdopen(r, "rb") as f:
            msg = f.read().decode()
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (first, status)
        assert msg.startswith("ok "), f"first call {first}: {msg}"
        words = [int(x) for x in msg.split()[1:]]
        node, ids, minted = words[0], words[1:-1], words[-1]
        assert len(ids) == 5 and ids == sorted(set(ids)), (first, ids)
        assert {snowmint.decode(i).node_id for i in ids} == {node}, (first, ids, node)
        assert minted == 5, (first, minted)
        nodes.add(node)
    if state_file:
        assert len(nodes) == 1, f"the children share the host's one lease: {nodes}"
    # The parent goes on (under its own lease, claimed again on first use if it gave it back).
    assert gen.next_ids(3) and gen.next_id() > before
    gen.close()
