"""snowmint.RangeSequence (SPEC §4) from Python: two datacenters on the embedded store and on the real
etcd and PostgreSQL servers test.sh starts, processes minting at once, exhaustion, bad input. The
allocation is the Rust coord crate's; these tests check that Python reaches it (types, errors, stats)."""

from __future__ import annotations

import multiprocessing
import os
import uuid
from pathlib import Path

import pytest

import snowmint

ETCD = os.environ.get("SNOWMINT_TEST_ETCD_URL", "")
POSTGRES = os.environ.get("SNOWMINT_TEST_POSTGRES_URL", "")
REQUIRE = os.environ.get("SNOWMINT_REQUIRE_SERVERS") == "1"
if REQUIRE:
    assert ETCD and POSTGRES, "SNOWMINT_REQUIRE_SERVERS=1 but the servers' URLs are missing"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def _mint(args: tuple[str, str, str, str, int]) -> list[int]:
    name, dc, global_store, local_store, n = args
    seq = snowmint.RangeSequence(
        name, dc=dc, global_store=global_store, local_store=local_store, dc_range=500, process_range=20,
        # A long wait: the embedded store fsyncs, which can take seconds on a disk busy with builds.
        wait_ms=30_000,
    )
    return [seq.next_id() for _ in range(n)]


def _file_store(path: Path) -> str:
    """An embedded store: created first, as a missing one is STORE_NOT_FOUND."""
    path.mkdir(parents=True, exist_ok=True)
    return f"file://{path}"


GLOBALS = ["file", *(["etcd"] if ETCD else []), *(["postgres"] if POSTGRES else [])]


@pytest.mark.parametrize("kind", GLOBALS)
def test_two_datacenters_and_processes_never_repeat_a_value(kind: str, tmp_path: Path) -> None:
    global_store = {"file": _file_store(tmp_path / "global"), "etcd": ETCD, "postgres": POSTGRES}[kind]
    local_b = _file_store(tmp_path / "dc-b")
    name = unique("py")
    jobs = [(name, "a" if i % 2 == 0 else "b", global_store, global_store if i % 2 == 0 else local_b, 300) for i in range(6)]
    with multiprocessing.get_context("spawn").Pool(6) as pool:
        lists = pool.map(_mint, jobs)
    seen: set[int] = set()
    for values in lists:
        assert len(values) == 300
        assert all(a < b for a, b in zip(values, values[1:])), "increasing per process"
        assert all(type(v) is int and 1 <= v < 2**31 for v in values)
        seen.update(values)
    assert len(seen) == 6 * 300, "a value was handed out twice"


def test_next_ids_stats_and_repr(tmp_path: Path) -> None:
    store = _file_store(tmp_path / "s")
    seq = snowmint.RangeSequence("s", dc="eu", global_store=store, dc_range=100, process_range=10)
    assert seq.bits == 31
    first = seq.next_id()
    batch = seq.next_ids(25)
    assert batch == list(range(first + 1, first + 26))
    assert seq.next_ids(0) == []
    stats = seq.stats()
    assert stats["values"] == 26
    assert stats["process_ranges"] >= 3
    assert stats["dc_ranges"] >= 1
    assert isinstance(stats["current"], tuple) and stats["current"][0] < stats["current"][1]
    assert set(stats) == {"values", "process_ranges", "dc_ranges", "late", "wait_ns", "current", "ready"}
    assert "RangeSequence(bits=31" in repr(seq)


def test_the_width_runs_out_with_range_exhausted(tmp_path: Path) -> None:
    store = _file_store(tmp_path / "x")
    seq = snowmint.RangeSequence("x", dc="a", global_store=store, bits=4, start=2, dc_range=5, process_range=3)
    values = []
    with pytest.raises(snowmint.RangeExhaustedError) as e:
        while True:
            values.append(seq.next_id())
    assert values == list(range(2, 16))
    assert e.value.code == "RANGE_EXHAUSTED"
    assert isinstance(e.value, snowmint.SnowmintError)
    assert "RANGE_EXHAUSTED" in snowmint.ERROR_CODES


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"bits": 0}, "width 0 bits"),
        ({"bits": 64}, "width 64 bits"),
        ({"start": 2**31}, "start value"),
        ({"bits": 8, "dc_range": 1000, "process_range": 10}, "datacenter range 1000"),
        ({"dc_range": 10, "process_range": 11}, "process range 11"),
        ({"threshold": 0}, "threshold"),
    ],
)
def test_bad_input_is_invalid_argument(kwargs: dict[str, int], words: str, tmp_path: Path) -> None:
    with pytest.raises(snowmint.InvalidArgumentError, match=words) as e:
        snowmint.RangeSequence("n", dc="a", global_store=f"file://{tmp_path}", **kwargs)  # type: ignore[arg-type]
    assert e.value.code == "INVALID_ARGUMENT"


def test_bad_urls_names_and_types(tmp_path: Path) -> None:
    for url in ["etcd://", "postgres://host/db", "redis://x", "file://relative"]:
        with pytest.raises(snowmint.InvalidArgumentError):
            snowmint.RangeSequence("n", dc="a", global_store=url)
        with pytest.raises(snowmint.InvalidArgumentError):
            snowmint.RangeSequence("n", dc="a", global_store=f"file://{tmp_path}", local_store=url)
    for name, dc in [("a/b", "a"), ("n", "a@b"), ("", "a")]:
        with pytest.raises(snowmint.InvalidArgumentError):
            snowmint.RangeSequence(name, dc=dc, global_store=f"file://{tmp_path}")
    with pytest.raises(TypeError):
        snowmint.RangeSequence("n", dc="a", global_store=f"file://{tmp_path}", bits=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        snowmint.RangeSequence("n", dc="a", global_store=7)  # type: ignore[arg-type]
    seq = snowmint.RangeSequence("n", dc="a", global_store=f"file://{tmp_path}")
    with pytest.raises(snowmint.InvalidArgumentError):
        seq.next_ids(2**25)
    with pytest.raises(TypeError):
        seq.next_ids("3")  # type: ignore[arg-type]


def test_store_unavailable_when_the_local_store_cannot_be_reached(tmp_path: Path) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(snowmint.StoreUnavailableError) as e:
        snowmint.RangeSequence(
            "n", dc="a", global_store=f"file://{tmp_path}", local_store=f"etcd://127.0.0.1:{port}/x"
        )
    assert e.value.code == "STORE_UNAVAILABLE"
