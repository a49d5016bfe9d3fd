"""One node ID shared by many processes through a state file (SPEC §4a).

4 processes x 10^6 IDs on one file (two inherit a generator across fork, two open the file), Python and
C processes on one file at the same time, SIGKILL mid-minting then a restart an hour back, an unlinked
file, every kind of bad file, and the README's gunicorn recipe run for real.
"""

from __future__ import annotations

import array
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import snowmint
from recipes import serve_gunicorn

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="state files: Linux here")

HOUR_MS = 3_600_000
PER_PROCESS = 1_000_000


def _mint_to_file(gen: snowmint.Generator | None, path: str, n: int, out: str, start_at_ms: int = 0) -> None:
    if gen is None:
        gen = snowmint.Generator(node_id=3, state_file=path)
    while time.time() * 1000 < start_at_ms:
        time.sleep(0.001)
    ids = array.array("Q", [gen.next_id() for _ in range(n)])
    with open(out, "wb") as f:
        ids.tofile(f)


def _read(out: Path) -> array.array[int]:
    ids = array.array("Q")
    with open(out, "rb") as f:
        ids.frombytes(f.read())
    return ids


def _check_increasing_and_unique(runs: list[array.array[int]], expected_each: int) -> set[int]:
    everything: set[int] = set()
    for ids in runs:
        assert len(ids) == expected_each
        assert all(a < b for a, b in zip(ids, ids[1:])), "a process's IDs must strictly increase"
        everything.update(ids)
    assert len(everything) == sum(len(r) for r in runs), "duplicate IDs across processes"
    return everything


def test_four_processes_share_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "orders.snowmint")
    parent = snowmint.Generator(node_id=3, state_file=path)
    assert parent.state_file == path
    ctx = multiprocessing.get_context("fork")
    procs = []
    for p in range(4):
        # Two inherit the parent's generator (safe by construction: no ForkedError), two open the file.
        gen = parent if p < 2 else None
        proc = ctx.Process(target=_mint_to_file, args=(gen, path, PER_PROCESS, str(tmp_path / f"ids{p}")))
        proc.start()
        procs.append(proc)
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    runs = [_read(tmp_path / f"ids{p}") for p in range(4)]
    everything = _check_increasing_and_unique(runs, PER_PROCESS)
    assert parent.next_id() > max(everything)
    assert {snowmint.decode(i).node_id for i in runs[0][:10]} == {3}
    parent.flush()
    parent.verify_state_file()


def test_python_and_c_processes_on_one_file_at_once(tmp_path: Path) -> None:
    worker = os.environ.get("SNOWMINT_C_STATE_WORKER")
    assert worker, "test.sh passes the C binding's state-file worker in SNOWMINT_C_STATE_WORKER"
    path = str(tmp_path / "mixed.snowmint")
    n = 500_000
    # Everyone starts minting at the same instant (spawned interpreters take a while to start).
    start_at_ms = int(time.time() * 1000) + 1500
    env = {**os.environ, "SNOWMINT_START_AT_MS": str(start_at_ms)}
    c_procs = [
        subprocess.Popen([worker, "--mint", path, "twitter", "3", str(n), str(tmp_path / f"c{i}")], env=env)
        for i in range(2)
    ]
    ctx = multiprocessing.get_context("spawn")
    py_procs = [
        ctx.Process(target=_mint_to_file, args=(None, path, n, str(tmp_path / f"py{i}"), start_at_ms))
        for i in range(2)
    ]
    for p in py_procs:
        p.start()
    for p in py_procs:
        p.join(120)
        assert p.exitcode == 0
    for c in c_procs:
        assert c.wait(120) == 0
    runs = [_read(tmp_path / name) for name in ("c0", "c1", "py0", "py1")]
    _check_increasing_and_unique(runs, n)
    # They really ran at the same time: the C and Python IDs interleave.
    c_first, c_last = min(runs[0][0], runs[1][0]), max(runs[0][-1], runs[1][-1])
    py_first, py_last = min(runs[2][0], runs[3][0]), max(runs[2][-1], runs[3][-1])
    assert py_first < c_last and c_first < py_last, "the C and Python processes did not overlap"


_MINT_FOREVER = """
import sys, snowmint
gen = snowmint.Generator(node_id=3, state_file=sys.argv[1])
out = sys.stdout
while True:
    out.write(f"{gen.next_id()}\\n")
"""


def test_sigkill_mid_minting_then_restart_an_hour_back(tmp_path: Path) -> None:
    path = str(tmp_path / "kill.snowmint")
    child = subprocess.Popen([sys.executable, "-c", _MINT_FOREVER, path], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    seen = []
    for line in child.stdout:
        seen.append(int(line))
        if len(seen) == 100_000:
            break
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read()
    child.wait()
    assert child.returncode == -signal.SIGKILL
    seen += [int(x) for x in rest.split("\n")[:-1] if x]  # the last line may be cut short
    last = max(seen)

    back = lambda: int(time.time() * 1000) - HOUR_MS  # noqa: E731
    failing = snowmint.Generator(3, state_file=path, clock=back, policy="fail")
    with pytest.raises(snowmint.TooFarAheadError) as e:
        failing.next_id()
    assert e.value.retry_after_ms > HOUR_MS - 60_000
    patient = snowmint.Generator(3, state_file=path, clock=back, max_ahead_ms=2 * HOUR_MS)
    ids = patient.next_ids(10_000) + [patient.next_id() for _ in range(1000)]
    assert min(ids) > last


def _minted_in_a_forked_child(gen: snowmint.Generator, n: int) -> list[int]:
    """The IDs `gen.next_id()` mints `n` times in a forked child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.close(r)
            ids = [gen.next_id() for _ in range(n)]
            os.write(w, " ".join(map(str, ids)).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        child_ids = [int(x) for x in f.read().split()]
    os.waitpid(pid, 0)
    return child_ids


def test_a_forked_child_shares_the_file(tmp_path: Path) -> None:
    gen = snowmint.Generator(3, state_file=tmp_path / "fork.snowmint")
    before = gen.next_id()
    child_ids = _minted_in_a_forked_child(gen, 1000)
    assert len(child_ids) == 1000 and min(child_ids) > before
    after = gen.next_id()
    assert after > max(child_ids), "the parent continues after the child's IDs"


def test_unlinked_file_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "gone.snowmint"
    old = snowmint.Generator(3, state_file=path)
    path.unlink()
    with pytest.raises(snowmint.StateFileMismatchError, match="unlinked"):
        old.verify_state_file()
    with pytest.raises(snowmint.StateFileMismatchError, match=f"process {os.getpid()} maps another file"):
        snowmint.Generator(3, state_file=path)
    del old
    snowmint.Generator(3, state_file=path).next_id()  # the old mapping is gone: the new file is the one


def _read_only_place(tmp_path: Path) -> str:
    if os.geteuid() == 0:
        return "/sys/snowmint-test.state"  # root may write anywhere but sysfs
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    return str(ro / "s")


def test_every_bad_file_is_a_clear_error(tmp_path: Path) -> None:
    good = tmp_path / "good.snowmint"
    snowmint.Generator(3, state_file=good).next_id()
    raw = good.read_bytes()
    noise = bytes((i * 73 + 41) % 256 for i in range(256))
    cases = {
        "another node ID": (good, 4, "twitter", "made for node ID 3, not 4"),
        "another layout": (good, 3, "discord", "another layout"),
        "a decimal layout": (good, 3, "decimal", "another layout"),
        "truncated": (tmp_path / "short", 3, "twitter", "100 bytes long.*truncated"),
        "random bytes": (tmp_path / "random", 3, "twitter", "not a snowmint state file"),
        "damaged": (tmp_path / "damaged", 3, "twitter", "checksum"),
        "a directory": (tmp_path, 3, "twitter", "not a regular file"),
        "read-only": (_read_only_place(tmp_path), 3, "twitter", "create failed"),
    }
    (tmp_path / "short").write_bytes(raw[:100])
    (tmp_path / "random").write_bytes(noise)
    (tmp_path / "damaged").write_bytes(raw[:33] + bytes([raw[33] ^ 1]) + raw[34:])
    for what, (path, node, layout, words) in cases.items():
        with pytest.raises(snowmint.StateFileMismatchError) as e:
            snowmint.Generator(node, layout, state_file=path)
        assert e.value.code == "STATE_FILE_MISMATCH", what
        assert isinstance(e.value, snowmint.SnowmintError) and isinstance(e.value, ValueError)
        assert re.search(words, str(e.value)), f"{what}: {e.value}"
        assert str(path) in str(e.value), f"{what}: the message names the path"
    assert (tmp_path / "random").read_bytes() == noise, "a bad file is never reset"
    with pytest.raises(TypeError):
        snowmint.Generator(3, state_file=3.5)  # type: ignore[arg-type]
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Generator(3).flush()
    # Bad options fail before the file system is touched.
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Generator(3, policy="nope", state_file=tmp_path / "never")  # type: ignore[arg-type]
    assert not (tmp_path / "never").exists()
    assert snowmint.ERROR_CODES.count("STATE_FILE_MISMATCH") == 1


def test_decimal_layout_on_a_state_file(tmp_path: Path) -> None:
    a = snowmint.DecimalGenerator(28, state_file=tmp_path / "d")
    b = snowmint.Generator(28, "decimal", state_file=tmp_path / "d")
    x, y, z = a.next_id(), b.next_id(), a.next_id()
    assert x < y < z and {x % 100, y % 100, z % 100} == {28}


# ---- the README's gunicorn recipe, run for real -------------------------------------------------------

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_gunicorn_recipe(tmp_path: Path) -> None:
    pytest.importorskip("gunicorn")
    text = README.read_text(encoding="utf-8")
    app = re.search(r"```python title=app\.py\n(.*?)```", text, re.S)
    cmd = re.search(r"```sh title=gunicorn\n(.*?)```", text, re.S)
    assert app and cmd, "the README shows app.py and the gunicorn command"
    top = (README.parents[1] / "README.md").read_text(encoding="utf-8")
    assert app.group(0) in top and cmd.group(0) in top, "the repository README shows the same recipe"
    state = str(tmp_path / "orders.snowmint")
    (tmp_path / "app.py").write_text(app.group(1).replace("/dev/shm/orders.snowmint", state))
    got = serve_gunicorn(cmd.group(1), tmp_path, 2000)
    ids = [i for i, _ in got]
    assert len(set(ids)) == len(ids), "gunicorn workers minted a duplicate"
    assert len({pid for _, pid in got}) >= 2, "the requests reached several workers"
    assert {snowmint.decode(i).node_id for i in ids} == {3}


def test_a_forked_child_never_hands_out_the_parents_window(tmp_path: Path) -> None:
    # A generator hands IDs out of a window of positions it holds (up to 64); a one-second tick keeps
    # the parent's window open across the fork. The child shares the file but not the window: were it
    # to hand out the window's rest, the parent would hand the same IDs out after it.
    layout = snowmint.Layout(
        timestamp_bits=33, node_bits=5, sequence_bits=25, tick_ns=1_000_000_000, epoch_ms=1_700_000_000_000
    )
    gen = snowmint.Generator(3, layout, state_file=tmp_path / "window.snowmint")
    first = [gen.next_id() for _ in range(100)]  # windows of 1, 2, 4, ..., 64 positions
    child_ids = _minted_in_a_forked_child(gen, 1000)
    after = [gen.next_id() for _ in range(1000)]
    assert len(child_ids) == 1000
    assert len(set(first + child_ids + after)) == 2100, "an ID minted twice across the fork"
    assert after == sorted(after) and after[0] > first[-1]
    assert gen.stats()["minted"] == 1100
