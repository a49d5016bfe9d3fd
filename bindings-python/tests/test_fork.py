"""The fork rule: a forked child never mints with its parent's generator state."""

from __future__ import annotations

import multiprocessing
import os
import sys

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
