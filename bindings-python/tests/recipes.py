"""Helpers the tests share: the stores test.sh started, and a README gunicorn recipe run for real."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import threading
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ETCD = os.environ.get("SNOWMINT_TEST_ETCD_URL", "")
POSTGRES = os.environ.get("SNOWMINT_TEST_POSTGRES_URL", "")
REQUIRE = os.environ.get("SNOWMINT_REQUIRE_SERVERS") == "1"
# The repository's README (the recipes' source) and the binding's own (which shows some of them too).
README = Path(__file__).resolve().parents[2] / "README.md"
BINDING_README = Path(__file__).resolve().parents[1] / "README.md"


def server_kinds() -> list[str]:
    """The server stores test.sh started ("etcd", "postgres"); with SNOWMINT_REQUIRE_SERVERS=1 a
    missing one is an error, not a skip."""
    kinds = []
    for kind, url in (("etcd", ETCD), ("postgres", POSTGRES)):
        if url:
            kinds.append(kind)
        elif REQUIRE:
            raise RuntimeError(f"SNOWMINT_REQUIRE_SERVERS=1 but no {kind} URL")
    return kinds


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# What a pre-fork server's log says when a worker hung or crashed (gunicorn's words).
CRASH_WORDS = ("WORKER TIMEOUT", "SIGSEGV", "SIGABRT", "signal 11", "Segmentation fault", "Traceback")


class Served:
    """What a run of a gunicorn recipe answered: the IDs of each 200 answer with the worker's PID, the
    error codes of the others (503 with the code as the body), and the server's log."""

    def __init__(self) -> None:
        self.answers: list[tuple[list[int], int]] = []
        self.errors: list[str] = []
        # Requests whose connection a killed worker dropped (no answer).
        self.dropped = 0
        self.log = ""
        # time.monotonic() of the last answer (a kill after it was not mid-load).
        self.last_answer_at = -1.0

    def ids(self) -> list[int]:
        return [i for ids, _ in self.answers for i in ids]


def run_gunicorn(
    command: str,
    cwd: Path,
    requests: int,
    env: dict[str, str] | None = None,
    query: str = "",
    while_serving: "Callable[[subprocess.Popen[bytes], str], None] | None" = None,
) -> Served:
    """Runs the README's `gunicorn …` command in `cwd` (on a free loopback port), sends `requests`
    requests (8 at a time, each `/?QUERY`; an answer is `ID… PID`, or 503 with an error code) and stops
    the server. `while_serving(server, url)` runs beside the requests (kills a worker, say). Fails on a
    worker that hung or crashed (the log's WORKER TIMEOUT, SIGSEGV, …)."""
    port = free_port()
    argv = server_argv(command, port)
    log_path = cwd / f"gunicorn-{port}.log"
    served = Served()
    with open(log_path, "w+b") as log:
        server = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}/"
            for _ in range(400):
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    assert server.poll() is None, log_path.read_text()
                    time.sleep(0.05)
            # The load starts once every worker is forked (the master listens before it forks them).
            flag = "--workers" if "--workers" in argv else "--processes"
            want = int(argv[argv.index(flag) + 1]) if flag in argv else 1
            deadline = time.monotonic() + 20
            while len(workers_of(server.pid)) < want and time.monotonic() < deadline:
                time.sleep(0.02)

            def fetch(_: int) -> None:
                try:
                    body = urllib.request.urlopen(f"{url}?{query}", timeout=15).read().decode().split()
                    served.answers.append(([int(w) for w in body[:-1]], int(body[-1])))
                    served.last_answer_at = max(served.last_answer_at, time.monotonic())
                except urllib.error.HTTPError as e:
                    served.errors.append(f"{e.code} {e.read().decode().strip()}")
                except (ConnectionError, http.client.HTTPException, ValueError, IndexError):
                    # A connection the killed worker dropped (http.client's chunk reader raises ValueError
                    # on a body cut short; a body without a length cut short reads as empty).
                    served.dropped += 1
                except urllib.error.URLError as e:
                    # Refused: the server is gone (a killed primary's workers have exited).
                    if not isinstance(e.reason, ConnectionError):
                        raise
                    served.dropped += 1

            with ThreadPoolExecutor(8) as pool:
                side = pool.submit(while_serving, server, url) if while_serving else None
                list(pool.map(fetch, range(requests)))
                if side:
                    side.result()
        finally:
            stop_process(server)
    served.log = log_path.read_text(errors="replace")
    crashed = [w for w in CRASH_WORDS if w in served.log]
    assert not crashed, f"gunicorn: {crashed}\n{served.log[-4000:]}"
    return served


def stop_process(proc: "subprocess.Popen[bytes]") -> None:
    """SIGTERM, 30 s to exit, then SIGKILL (a process already gone: nothing)."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def server_argv(command: str, port: int) -> list[str]:
    """The README's `gunicorn …` or `uwsgi …` command, on `port` of 127.0.0.1 (uWSGI: stopped by SIGTERM,
    as the README's pre-fork test runs it, and its request log off)."""
    argv = command.split()
    if argv[0] == "gunicorn":
        return [sys.executable, "-m", "gunicorn", *argv[1:], "--bind", f"127.0.0.1:{port}"]
    assert argv[0] == "uwsgi" and "127.0.0.1:8000" in argv, argv
    argv[argv.index("127.0.0.1:8000")] = f"127.0.0.1:{port}"
    return [str(Path(sys.executable).parent / "uwsgi"), *argv[1:], "--die-on-term", "--disable-logging"]


def serve_gunicorn(command: str, cwd: Path, requests: int, env: dict[str, str] | None = None) -> list[tuple[int, int]]:
    """[`run_gunicorn`]: each answer's (ID, worker PID); every request answered."""
    served = run_gunicorn(command, cwd, requests, env)
    assert not served.errors, served.errors[:5]
    return [(ids[0], pid) for ids, pid in served.answers]


def workers_of(pid: int) -> set[int]:
    """The PIDs of the live children of `pid` (Linux, from /proc)."""
    kids = set()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                stat = open(f"/proc/{p}/stat").read()
            except OSError:
                continue
            state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
            if int(ppid) == pid and state != "Z":
                kids.add(int(p))
    return kids


def wait_serving(url: str) -> None:
    """Until the server answers a request (bounded: 20 s): the host's lease exists, the load is on. The
    kills below come `after` s later, mid-load; a process killed during the host's first claim, before
    its lease was recorded, is a fault of its own (cli/tests/orphan_claim.rs)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}?n=1", timeout=5).read()
            return
        except (OSError, http.client.HTTPException):
            time.sleep(0.01)
    raise AssertionError(f"{url} answered no request within 20 s")


class KillAWorker:
    """A `while_serving` for [`run_gunicorn`]: `after` s into the load (from its first answer), SIGKILLs one
    worker and measures how long until a worker that was not there before answers (a batch of one), and
    under which node ID."""

    def __init__(self, after: float = 0.3) -> None:
        self.after = after
        self.recovered_s = -1.0
        # When the primary had forked the replacement (a new child seen in /proc, polled between requests).
        self.forked_s = -1.0
        self.node_id = -1
        self.killed_at = -1.0

    def __call__(self, server: "subprocess.Popen[bytes]", url: str) -> None:
        import snowmint

        wait_serving(url)
        time.sleep(self.after)
        before = workers_of(server.pid)
        assert len(before) >= 2, before
        os.kill(min(before), signal.SIGKILL)
        t0 = self.killed_at = time.monotonic()
        # The last time no replacement was seen: the fork came after it (counted from there if the
        # replacement answers before a check saw it, so the time from the fork is never understated).
        unforked = 0.0
        while time.monotonic() - t0 < 10:
            if self.forked_s < 0:
                seen = time.monotonic() - t0
                if workers_of(server.pid) - before:
                    self.forked_s = unforked
                else:
                    unforked = seen
            try:
                body = urllib.request.urlopen(f"{url}?n=1", timeout=5).read().decode().split()
            except (OSError, http.client.HTTPException):
                time.sleep(0.005)
                continue
            if int(body[-1]) not in before:
                if self.forked_s < 0:
                    self.forked_s = unforked
                self.recovered_s = time.monotonic() - t0
                self.node_id = snowmint.decode(int(body[0])).node_id
                return


class KillThePrimary:
    """A `while_serving` for [`run_gunicorn`]: `after` s into the load (from its first answer), SIGKILLs the
    primary (the gunicorn master), waits until its orphaned workers have exited, and starts the same recipe again (as a
    supervisor would: `argv`, `cwd`, `env`), measuring how long until it answers a batch, and under which
    node ID; then stops it."""

    def __init__(self, command: str, cwd: Path, env: dict[str, str], after: float = 0.3) -> None:
        self.command, self.cwd, self.env, self.after = command, cwd, env, after
        self.recovered_s = -1.0
        self.node_id = -1
        self.log = ""
        self.killed_at = -1.0

    def __call__(self, server: "subprocess.Popen[bytes]", url: str) -> None:
        import snowmint

        wait_serving(url)
        time.sleep(self.after)
        workers = workers_of(server.pid)
        server.kill()
        self.killed_at = time.monotonic()
        server.wait(10)
        deadline = time.monotonic() + 30
        while any(os.path.exists(f"/proc/{w}") and _alive(w) for w in workers):
            assert time.monotonic() < deadline, "the orphaned workers exit"
            time.sleep(0.02)
        port = free_port()
        argv = server_argv(self.command, port)
        t0 = time.monotonic()
        log_path = self.cwd / f"gunicorn-restarted-{port}.log"
        with open(log_path, "w+b") as log:
            again = subprocess.Popen(argv, cwd=self.cwd, env=self.env, stdout=log, stderr=subprocess.STDOUT)
            try:
                while time.monotonic() - t0 < 30:
                    try:
                        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/?n=5", timeout=5).read().decode()
                    except (OSError, http.client.HTTPException):
                        assert again.poll() is None, log_path.read_text()
                        time.sleep(0.01)
                        continue
                    self.recovered_s = time.monotonic() - t0
                    self.node_id = snowmint.decode(int(body.split()[0])).node_id
                    break
                # Stopped once all 4 workers serve: a worker still booting when the master's SIGTERM comes
                # runs the master's handler, which only queues the signal (gunicorn's race, not the
                # recipe's), and the master then waits its graceful timeout (30 s) for it.
                pids: set[str] = set()
                deadline = time.monotonic() + 10
                while len(pids) < 4 and time.monotonic() < deadline:
                    try:
                        pids.add(urllib.request.urlopen(f"http://127.0.0.1:{port}/?n=1", timeout=5).read().split()[-1])
                    except (OSError, http.client.HTTPException):
                        time.sleep(0.01)
            finally:
                again.terminate()
                try:
                    again.wait(30)
                except subprocess.TimeoutExpired:
                    again.kill()
                    again.wait(10)
                    raise
        self.log = log_path.read_text(errors="replace")


def _alive(pid: int) -> bool:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


# ---- the README's recipes, a worker and the primary killed mid-load (issue 40) -------------------------


def block(title: str, readme: Path = README) -> str:
    """The README's fenced block titled `title` (```LANG title=TITLE), as written."""
    m = re.search(rf"```\w+ title={re.escape(title)}\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)
    assert m, f"{readme} shows {title}"
    return m.group(1)


@dataclass(frozen=True)
class Recipe:
    """A recipe of the README, by the titles of its blocks: the command (`gunicorn …`, `snowmint mint …`)
    and the app it serves (None: the CLI alone); `state` is the README's state file (replaced by one in the
    test's folder); `node` the fixed node ID, or None for a lease source (a sequencer of ONE node ID, 0:
    a worker that did not share the host's lease would fail with NODE_IDS_EXHAUSTED)."""

    command: str
    app: str | None
    state: str
    node: int | None
    # The README that shows the blocks (the binding's own for its pre-fork recipes), and the line of the
    # command block that is this recipe's command (a block of several commands), or None: the whole block.
    readme: Path = README
    line: int | None = None
    # A lease of its own in each worker (the binding README's pre-fork recipes): a sequencer of
    # `per_worker` node IDs, the replacement mints under a node ID of its own; 0: the host's one lease.
    per_worker: int = 0
    # The one store this recipe runs on in `make test` (one store per binding-README recipe, rotated so
    # each store is used; all of them with SNOWMINT_RECIPE_RUNS > 1), or None: every store.
    quick_store: str | None = None
    # The replacement's 1 s counts from its fork, not from the kill: uWSGI's master reaps a dead worker
    # in its loop, which wakes at least once a second, and forks the replacement then (up to ~1 s later).
    bound_from_fork: bool = False
    # How the recipe is asked for IDs: "http" (gunicorn, uWSGI, the CLI: `?n=K`), or "celery" (the command is
    # a Celery worker, the app its tasks module, each request a task `mint(K)` sent through its broker).
    front: str = "http"


RECIPES = {
    "gunicorn": Recipe("gunicorn", "app.py", "/dev/shm/orders.snowmint", 3),
    "gunicorn-host-lease": Recipe("gunicorn-host-lease", "app_host_lease.py", "/dev/shm/orders.lease", None),
    "cli-host-lease": Recipe("cli-host-lease", None, "/dev/shm/orders.lease", None),
    # bindings-python/README.md's pre-fork recipes: 4 workers, each with a lease of its own (a sequencer of
    # 10 node IDs here: the killed worker's and the killed primary's workers' node IDs stay claimed until
    # their TTL runs out, and the replacements claim others meanwhile).
    "prefork-gunicorn-preload": Recipe(
        "prefork-servers", "prefork_app.py", "", None, BINDING_README, 0, per_worker=10, quick_store="etcd"
    ),
    "prefork-gunicorn": Recipe(
        "prefork-servers", "prefork_app.py", "", None, BINDING_README, 1, per_worker=10, quick_store="postgres"
    ),
    "prefork-uwsgi": Recipe(
        "prefork-servers",
        "prefork_app.py",
        "",
        None,
        BINDING_README,
        2,
        per_worker=10,
        quick_store="file",
        bound_from_fork=True,
    ),
    # Celery's prefork pool (tasks.py, `celery -A tasks worker --pool=prefork --concurrency=4`): a pool
    # process and then the worker's main process SIGKILLed mid-load ([`run_celery_killed`]).
    "prefork-celery": Recipe(
        "celery", "tasks.py", "", None, BINDING_README, per_worker=10, bound_from_fork=True, front="celery"
    ),
}

LONG = int(os.environ.get("SNOWMINT_RECIPE_RUNS", "1")) > 1

# Cases that fail on a known bug (strict xfail: a fix makes them pass, and the mark must then go).
KNOWN_BUGS: dict[tuple[str, str], str] = {
    # (recipe, store): why it fails, while it does (a strict xfail: it must be taken out once fixed).
}


def recipe_cases() -> list[tuple[str, str]]:
    """(recipe, store): a fixed node ID needs no store ("none"); a lease source runs on the embedded store
    and on each server test.sh started (a recipe with a `quick_store`: on that one only, unless
    SNOWMINT_RECIPE_RUNS > 1)."""
    cases = []
    for name, r in RECIPES.items():
        kinds = ["none"] if r.node is not None else ["file", *server_kinds()]
        if r.quick_store is not None and not LONG:
            kinds = [k for k in kinds if k == r.quick_store] or kinds[:1]
        cases += [(name, kind) for kind in kinds]
    return cases


def store_url(kind: str, tmp_path: Path) -> str:
    return {"file": f"file://{tmp_path / 'store'}", "etcd": ETCD, "postgres": POSTGRES}[kind]


def one_node_source(kind: str, tmp_path: Path, node_count: int = 1) -> str:
    """A new sequencer of one node ID (or `node_count`; twitter layout), as a lease source with a 2 s TTL."""
    import snowmint

    store = store_url(kind, tmp_path)
    name = f"host-{uuid.uuid4().hex[:10]}"
    snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=node_count)
    return f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"


CLAIMER = """
import sys, time, snowmint
source, stop, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
end, n = time.monotonic() + seconds, 0
while time.monotonic() < end and not __import__("os").path.exists(stop):
    try:
        g = snowmint.Generator(source)
        g.next_ids(3)
        g.close()
        n += 1
    except snowmint.StoreUnavailableError:
        pass  # a loaded server's late answer (bounded: STORE_UNAVAILABLE): this is only load for the store
print(n)
"""


def start_claimers(kind: str, tmp_path: Path, count: int, stop: Path) -> list[subprocess.Popen[bytes]]:
    """`count` processes claiming and releasing node IDs of another sequencer on the same store, over and
    over, until `stop` exists (at most 120 s)."""
    import snowmint

    store = store_url(kind, tmp_path)
    name = f"others-{uuid.uuid4().hex[:10]}"
    snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=64)
    src = f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"
    return [
        subprocess.Popen([sys.executable, "-c", CLAIMER, src, str(stop), "120"], stdout=subprocess.PIPE)
        for _ in range(count)
    ]


def stop_claimers(claimers: list[subprocess.Popen[bytes]], stop: Path) -> None:
    stop.touch()
    for c in claimers:
        out, _ = c.communicate(timeout=30)
        assert c.returncode == 0 and int(out) > 0, "the other claimers claimed"


@dataclass
class CliRun:
    """What a run of the CLI recipe gave: each successful invocation's IDs and PID, the error code of each
    one that failed, the invocations SIGKILLed, and the one killed mid-load: how long until an invocation
    started after the kill printed IDs, and under which node ID."""

    answers: list[tuple[list[int], int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dropped: int = 0
    started: int = 0
    recovered_s: float = -1.0
    from_start_s: float = -1.0
    node_id: int = -1

    def ids(self) -> list[int]:
        return [i for ids, _ in self.answers for i in ids]


def run_cli(command: str, cwd: Path, invocations: int, env: dict[str, str], kill_after: float = 0.3) -> CliRun:
    """Runs the README's CLI recipe (`command`, through bash, as a script would) `invocations` times, 8 at
    a time, and after `kill_after` s SIGKILLs the invocation started last (opening or sharing the host's
    lease, or minting). An invocation's IDs count from when it printed them: on the embedded store a
    process then waits out, before it exits, the second its IDs were minted ahead of the clock (SPEC §3.2),
    after it has let the lease go."""
    import snowmint

    out = CliRun()
    lock = threading.Lock()
    live: list[subprocess.Popen[bytes]] = []
    killed_at: list[float] = []
    timed: list[tuple[float, float, int]] = []  # each success: when it started, printed, its first ID

    def worker() -> None:
        while True:
            with lock:
                # `invocations`, and on until 8 have started after the kill (at most 400 in all).
                after_kill = sum(1 for s, _, _ in timed if s > killed_at[0]) if killed_at else 0
                if out.started >= 400 or (out.started >= invocations and killed_at and after_kill >= 8):
                    return
                out.started += 1
            started = time.monotonic()
            p = subprocess.Popen(
                ["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            with lock:
                live.append(p)
            # A hung invocation is killed after 30 s (and fails the check: not a dropped one).
            watchdog = threading.Timer(30, p.kill)
            watchdog.start()
            try:
                assert p.stdout is not None and p.stderr is not None
                stdout = p.stdout.readline()
                printed = time.monotonic()
                stdout += p.stdout.read()
                stderr = p.stderr.read()
                p.wait()
            finally:
                watchdog.cancel()
                with lock:
                    live.remove(p)
            with lock:
                if p.returncode == -signal.SIGKILL:
                    out.dropped += 1
                elif p.returncode != 0:
                    out.errors.append(stderr.decode(errors="replace").strip()[:200])
                else:
                    ids = [int(w) for w in stdout.split()]
                    out.answers.append((ids, p.pid))
                    timed.append((started, printed, ids[0]))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(kill_after)
    deadline = time.monotonic() + 10
    while not killed_at and time.monotonic() < deadline:
        with lock:
            running = [p for p in live if p.poll() is None]
            if running:
                os.kill(running[-1].pid, signal.SIGKILL)
                killed_at.append(time.monotonic())
        time.sleep(0.001)
    for t in threads:
        t.join(120)
    assert killed_at, "an invocation was running to be killed"
    # The replacement: the first to print of the invocations started after the kill.
    after = sorted((printed, started, first) for started, printed, first in timed if started > killed_at[0])
    if after:
        printed, started, first = after[0]
        out.recovered_s, out.from_start_s = printed - killed_at[0], printed - started
        out.node_id = snowmint.decode(first).node_id
    return out


def replacement_bound() -> tuple[float, str]:
    """The bound on a replacement's first answer, taken as it answered: 1 s (issue 40) on a host with a CPU to
    spare; on a busier one (`make test` runs its stages side by side on 2 cores, and a starved process runs
    several times slower) 1 s per CPU's worth of runnable work, the 1-minute load average over the CPUs. Its
    CPU time stretches by that factor; a defect's wait (a lease's TTL, a lock held by the dead) does not, and
    on a quiet host the bound is 1 s. Returns the bound in seconds and its text for the run's line."""
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    bound = max(1.0, load / cpus)
    return bound, f"bound {bound:.1f} s at load {load:.1f} on {cpus} CPUs"


def retry_only(errors: list[str]) -> bool:
    """The only error a recipe may answer: TOO_FAR_AHEAD (past the reservation the keeper has written; on the
    embedded store at most 1 s ahead of the clock, and a new claim starts 1 s ahead: SPEC §3.2), which the
    README's app answers 503 with Retry-After: 1. Counted and reported."""
    return all("TOO_FAR_AHEAD" in e for e in errors)


def run_killed(name: str, kind: str, tmp_path: Path, runs: int) -> list[str]:
    """Runs the README's recipe `name` as written on store `kind`, every request a batch (a worker's first
    call is a batch: `?n=5`, the CLI's `-n 3`), `runs` times in a row; each run SIGKILLs a worker
    mid-load (the replacement must answer within 1 s under the host's node ID: [`replacement_bound`]) and, for gunicorn, then the
    primary (the recipe started again, as a supervisor would, must answer under it). Checks: no error
    answered but TOO_FAR_AHEAD ([`retry_only`]), no worker hung or crashed, only the killed worker's requests unanswered, one node ID, no ID
    twice. Returns a line per run: IDs, errors answered, time to recover."""
    import snowmint

    recipe = RECIPES[name]
    command = block(recipe.command, recipe.readme)
    if recipe.line is not None:
        command = [c for c in command.splitlines() if c.strip()][recipe.line]
    state = str(tmp_path / "state")
    # uWSGI imports the app from the test's folder as test_prefork.py runs it (gunicorn: its cwd).
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    node = recipe.node
    # The node IDs the host's workers may mint under: the host's one, or (a lease per worker) any of them.
    nodes = {node}
    if node is None:
        env["SNOWMINT_NODE_SOURCE"] = one_node_source(kind, tmp_path, recipe.per_worker or 1)
        node = 0
        nodes = set(range(recipe.per_worker)) if recipe.per_worker else {0}
    if recipe.app is not None:
        app = block(recipe.app, recipe.readme)
        if recipe.readme == README and f"title={recipe.app}\n" in BINDING_README.read_text(encoding="utf-8"):
            assert block(recipe.app, BINDING_README) == app, f"the binding's README shows the same {recipe.app}"
        (tmp_path / recipe.app).write_text(app.replace(recipe.state, state) if recipe.state else app)
    else:
        command = command.replace(recipe.state, state)
        serve = os.environ.get("SNOWMINT_SERVE", "")
        assert Path(serve).name == "snowmint", "test.sh sets SNOWMINT_SERVE (the snowmint CLI)"
        env["PATH"] = f"{Path(serve).parent}{os.pathsep}{env.get('PATH', '')}"
    lines, all_ids = [], []
    for run in range(runs):
        t0 = time.monotonic()
        if recipe.front == "celery":
            line = celery_checked(name, kind, run, run_celery_killed(command, tmp_path, env, 200), nodes)
            all_ids += line[1]
            lines.append(f"{line[0]} ({time.monotonic() - t0:.1f} s)")
            print(lines[-1])
            continue
        if recipe.app is None:
            cli = run_cli(command, tmp_path, 40, env)
            answers, errors, dropped = cli.answers, cli.errors, cli.dropped
            # The CLI's replacement is the next invocation: its bound counts from its process's start
            # (bash and snowmint started, the store opened, the host's lease joined, the IDs printed); from
            # the kill is reported beside it.
            recovered, rnode = cli.from_start_s, cli.node_id
            since_kill = f" of its start ({cli.recovered_s * 1000:.0f} ms after the kill)"
            batch, total = 3, cli.started
        else:
            kill = KillAWorker(after=0.1)
            served = run_gunicorn(command, tmp_path, 1000, env, query="n=5", while_serving=kill)
            answers, errors, dropped = served.answers, served.errors, served.dropped
            recovered, rnode, since_kill = kill.recovered_s, kill.node_id, " after the kill"
            if recipe.bound_from_fork:
                assert kill.forked_s >= 0, "the primary forked a replacement"
                recovered = kill.recovered_s - kill.forked_s
                since_kill = f" of its fork ({kill.recovered_s * 1000:.0f} ms after the kill)"
            batch, total = 5, 1000
            # Mid-load: answers came after the kill, or requests went unanswered (only a kill drops them).
            assert served.dropped > 0 or kill.killed_at < served.last_answer_at, "the worker was killed mid-load"
        ids = [i for a, _ in answers for i in a]
        assert retry_only(errors), f"{name} {kind} run {run}: {errors[:5]}"
        # Only the requests the killed worker was answering go unanswered (8 at a time).
        assert dropped <= 8 and len(answers) == total - dropped - len(errors), (dropped, len(errors), len(answers))
        assert all(len(a) == batch for a, _ in answers), [a for a, _ in answers if len(a) != batch]
        assert len({pid for _, pid in answers}) >= 2, "the requests reached several workers"
        assert {snowmint.decode(i).node_id for i in ids} <= nodes, "the host's node ID(s)"
        if recipe.per_worker:
            # A lease of its own per worker: a worker's IDs are of one node ID, no two workers' alike.
            node_of: dict[int, set[int]] = {}
            for a, pid in answers:
                node_of.setdefault(pid, set()).update(snowmint.decode(i).node_id for i in a)
            assert all(len(n) == 1 for n in node_of.values()), node_of
            assert len({min(n) for n in node_of.values()}) == len(node_of), f"workers share a node ID: {node_of}"
        bound, bound_text = replacement_bound()
        assert 0 <= recovered < bound, f"{name} {kind} run {run}: the replacement answered after {recovered:.2f} s ({bound_text})"
        assert rnode in nodes, "the replacement mints under the host's node ID (a lease per worker: one of them)"
        all_ids += ids
        line = (
            f"{name} {kind} run {run}: a worker killed: {len(ids)} IDs, {len(errors)} errors answered, "
            f"{dropped} dropped by the killed worker, the replacement answered in {recovered * 1000:.0f} ms{since_kill} "
            f"({bound_text})"
        )
        if recipe.app is not None:
            kill_primary = KillThePrimary(command, tmp_path, env, after=0.1)
            served = run_gunicorn(command, tmp_path, 1000, env, query="n=5", while_serving=kill_primary)
            assert retry_only(served.errors), served.errors[:5]
            assert served.dropped > 0 or kill_primary.killed_at < served.last_answer_at, "the primary killed mid-load"
            assert kill_primary.node_id in nodes, kill_primary.log[-3000:]
            assert not [w for w in CRASH_WORDS if w in kill_primary.log], kill_primary.log[-3000:]
            all_ids += served.ids()
            line += (
                f"; the primary killed: {len(served.ids())} IDs, {len(served.errors)} errors answered, "
                f"{served.dropped} refused after, started again and answered in "
                f"{kill_primary.recovered_s * 1000:.0f} ms"
            )
        lines.append(f"{line} ({time.monotonic() - t0:.1f} s)")
        print(lines[-1])
    assert len(set(all_ids)) == len(all_ids), f"{name} {kind}: an ID minted twice"
    return lines


def celery_checked(name: str, kind: str, run: int, c: "CeleryRun", nodes: set[int]) -> tuple[str, list[int]]:
    """[`run_killed`]'s checks for a run of the Celery recipe ([`run_celery_killed`]): no error raised by a task
    but TOO_FAR_AHEAD, only the tasks of the killed processes lost, every batch whole, a node ID of its own per
    pool process, the replacement minting within 1 s of its fork (`replacement_bound`), the restarted worker minting. Returns the
    run's line and its IDs."""
    import snowmint

    where = f"{name} {kind} run {run}"
    assert retry_only(c.errors), f"{where}: {c.errors[:5]}"
    # Lost: only tasks outstanding when the main process was killed (the killed pool process's among them).
    assert len(c.lost) <= c.outstanding_at_kill, (c.lost, c.outstanding_at_kill)
    assert len(c.answers) == c.sent - len(c.lost) - len(c.errors), (len(c.answers), c.sent)
    assert all(len(a) == 5 for a, _ in c.answers)
    # A node ID of its own per live pool process of a worker (the killed worker's pool processes let theirs go
    # when they exit, and the restarted worker's may take them; on the embedded store a killed process's node
    # ID is free at once, SPEC §3.2, and its replacement may take it).
    for restarted in (False, True):
        node_of: dict[int, set[int]] = {}
        for a, pid in c.answers:
            if (pid in c.first_pids) != restarted and pid != c.victim[0]:
                node_of.setdefault(pid, set()).update(snowmint.decode(i).node_id for i in a)
        assert all(len(n) == 1 for n in node_of.values()), node_of
        assert len({min(n) for n in node_of.values()}) == len(node_of), f"pool processes share a node ID: {node_of}"
        assert set().union(*node_of.values()) <= nodes, node_of
    assert c.forked_s >= 0 and c.replaced_s >= 0, (
        f"{where}: the replacement answered (forked {c.forked_s:.2f} s after the kill; {len(c.answers)} tasks "
        f"answered, {len(c.lost)} lost, {c.sent} sent; the killed one waited in {c.victim[1]}; the pool waits in "
        f"{c.waits})"
    )
    bound, bound_text = replacement_bound()
    assert 0 <= c.replaced_s - c.forked_s < bound, (
        f"{where}: the replacement answered {c.replaced_s - c.forked_s:.2f} s after its fork ({bound_text})"
    )
    assert c.replaced_node in nodes and c.restarted_node in nodes
    assert c.outstanding_at_kill > 0, f"{where}: the main process was killed mid-load"
    assert c.restarted_s >= 0 and c.restarted_answers >= 8, f"{where}: the restarted worker answered"
    ids = c.ids()
    assert len(set(ids)) == len(ids), f"{where}: an ID minted twice"
    line = (
        f"{where}: {len(ids)} IDs, {len(c.errors)} errors answered, {len(c.lost)} tasks lost "
        f"({sum('WorkerLostError' in x for x in c.lost)} WorkerLostError); a pool process killed (waiting in "
        f"{c.victim[1]}): the replacement "
        f"answered in {(c.replaced_s - c.forked_s) * 1000:.0f} ms of its fork ({c.replaced_s * 1000:.0f} ms after "
        f"the kill; {bound_text}), {c.answered_after_replacement} tasks answered in the next second; the main process killed "
        f"with {c.outstanding_at_kill} tasks outstanding, started again and answered in {c.restarted_s * 1000:.0f} ms "
        f"({c.restarted_answers} tasks)"
    )
    return line, ids


# ---- the binding README's Celery recipe (tasks.py and its `celery … worker` command) -------------------

# Added to the README's command: only the worker's warnings logged, and none of the broadcasts a lone worker
# has no use for (each would be a message on the filesystem broker).
CELERY_FLAGS = ["--loglevel=warning", "--without-heartbeat", "--without-gossip", "--without-mingle"]


def celery_client(queue: Path) -> object:
    """A Celery client of its own on the recipe's broker and result folder (importing tasks.py here would open a
    generator in this process too), as tests/test_prefork.py asks the recipe."""
    import celery
    from kombu.transport import filesystem

    # kombu's filesystem transport writes a message in place (open, then write) and a worker reads without
    # the writer's lock, so a worker can take a message still empty and die of it ("Unrecoverable error:
    # JSONDecodeError", celery/kombu#1551): this client (the test's, not the recipe's) writes each message
    # under another name and renames it into the queue folder.
    def put(channel: object, queue: str, payload: object, **kwargs: object) -> None:
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        path = os.path.join(channel.data_folder_out, name)  # type: ignore[attr-defined]
        with open(f"{path}.part", "wb") as f:
            f.write(filesystem.str_to_bytes(filesystem.dumps(payload)))
        os.replace(f"{path}.part", path)

    filesystem.Channel._put = put  # type: ignore[method-assign]
    client = celery.Celery("client", broker="filesystem://", backend=f"file://{queue}/results")
    client.conf.broker_transport_options = {
        "data_folder_in": str(queue),
        "data_folder_out": str(queue),
        "control_folder": str(queue / "control"),  # not ./control in the test's working directory
    }
    return client


@dataclass
class CeleryRun:
    """What a run of the Celery recipe gave: each task's IDs and the pool process that minted them, the errors
    tasks raised, the tasks lost (a pool process's task when it was killed: WorkerLostError; those the killed
    worker had taken from the broker: never answered), and the recovery times."""

    answers: list[tuple[list[int], int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    sent: int = 0
    # The pool process killed: when the worker forked its replacement (s after the kill), when the replacement
    # answered (s after the kill) and under which node ID; the tasks the worker answered in the second after.
    forked_s: float = -1.0
    replaced_s: float = -1.0
    replaced_node: int = -1
    answered_after_replacement: int = 0
    # The main process killed: how many tasks were outstanding then, and the worker started again: when its pool
    # answered (s after its start), under which node ID, and how many tasks it answered.
    outstanding_at_kill: int = 0
    restarted_s: float = -1.0
    restarted_node: int = -1
    restarted_answers: int = 0
    # The pool process killed, and what it was waiting on ([`pool_victim`]).
    victim: tuple[int, str] = (0, "")
    # When the replacement did not answer: each pool process's threads' wait channels.
    waits: dict[int, list[str]] = field(default_factory=dict)
    # The killed worker's main and pool processes (the restarted one's are all others).
    first_pids: set[int] = field(default_factory=set)
    log: str = ""

    def ids(self) -> list[int]:
        return [i for ids, _ in self.answers for i in ids]


def pool_waits(pid: int) -> list[str]:
    """The wait channel of each thread of `pid` (Linux), by thread name."""
    out = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task")) if os.path.isdir(f"/proc/{pid}/task") else []:
        try:
            comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            out.append(f"{comm}:{open(f'/proc/{pid}/task/{tid}/wchan').read().strip()}")
        except OSError:
            continue
    return out


# The number of the futex system call (Linux), as /proc/PID/syscall shows it.
FUTEX = {"x86_64": "202", "aarch64": "98"}.get(__import__("platform").machine(), "202")


def pool_victim(pool: set[int]) -> tuple[int, str]:
    """The pool process to kill, stopped (SIGSTOP) and ready for SIGKILL, and what it waited on: one waiting for
    the lock of the pool's job queue (a futex), not the one holding it (reading the queue's pipe: killing it
    stalls Celery's blocking pool for good). It is stopped first, then checked to be still in the futex call
    (it did not take the lock in between); else let go on (SIGCONT) and another tried, for 2 s, then the
    first pool process whatever it does."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        for pid in sorted(pool):
            try:
                if "futex" not in open(f"/proc/{pid}/wchan").read():
                    continue
                os.kill(pid, signal.SIGSTOP)
                chosen = False
                try:
                    for _ in range(1000):
                        stat = open(f"/proc/{pid}/stat").read()
                        if stat[stat.rindex(")") + 2] in "Tt":
                            break
                        time.sleep(0.0005)
                    chosen = open(f"/proc/{pid}/syscall").read().split()[0] == FUTEX
                finally:
                    if not chosen:
                        os.kill(pid, signal.SIGCONT)
                if chosen:
                    return pid, "a futex (stopped in it)"
            except (OSError, IndexError):
                continue
        time.sleep(0.001)
    pid = min(pool)
    return pid, open(f"/proc/{pid}/wchan").read().strip()


def run_celery_killed(command: str, cwd: Path, env: dict[str, str], tasks: int, batch: int = 5) -> CeleryRun:
    """Runs the README's Celery worker (`command`, on a broker folder of its own in `cwd`) and sends it `tasks`
    tasks `mint(batch)`, 8 at a time (each waited for 15 s at most); once it answers, SIGKILLs a pool process
    (the worker forks a replacement, which must mint under a node ID of its own), a second later SIGKILLs the
    worker's main process, waits until its pool processes have exited and starts the same command again (as a
    supervisor would), which must answer the tasks still queued and 8 more. Stops it; fails on a worker
    that crashed (SIGSEGV, a traceback other than the killed pool process's WorkerLostError)."""
    import snowmint

    out = CeleryRun()
    queue = cwd / f"queue-{uuid.uuid4().hex[:8]}"
    (queue / "results").mkdir(parents=True)
    (queue / "tmp").mkdir()
    # TMPDIR: kombu moves a message to the temporary folder to read it, and a worker killed in between leaves
    # it there (here: in the broker's folder, removed with it).
    env = {**env, "CELERY_QUEUE_DIR": str(queue), "TMPDIR": str(queue / "tmp")}
    argv = command.split()
    assert argv[0] == "celery", argv
    argv = [str(Path(sys.executable).parent / "celery"), *argv[1:], *CELERY_FLAGS]
    client = celery_client(queue)
    lock = threading.Lock()
    timed: list[tuple[float, int, int]] = []  # each answer: when, the pool process, its first ID
    logs: list[Path] = []
    procs: list[subprocess.Popen[bytes]] = []

    def start(tag: str) -> "subprocess.Popen[bytes]":
        path = cwd / f"celery-{tag}-{queue.name}.log"
        logs.append(path)
        with open(path, "wb") as log:
            procs.append(subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT))
        return procs[-1]

    # Every wait ends by `until[0]`: 60 s, then 5 s after the restarted worker's first answer (a task unanswered
    # then was lost with the killed worker).
    until = [time.monotonic() + 60]

    def ask(_: int) -> None:
        sent = time.monotonic()
        if sent >= until[0]:
            return
        with lock:
            out.sent += 1
        result = client.send_task("tasks.mint", args=(batch,))  # type: ignore[attr-defined]
        try:
            while not result.ready():
                if time.monotonic() > min(until[0], sent + 15):
                    raise TimeoutError("never answered")
                time.sleep(0.02)
            ids, pid = result.get(timeout=5)
        except Exception as e:  # the task's error, re-raised by the result (or never answered)
            lost = type(e).__name__ in ("WorkerLostError", "TimeoutError")
            with lock:
                (out.lost if lost else out.errors).append(f"{type(e).__name__}: {e}"[:200])
            return
        with lock:
            out.answers.append((list(ids), int(pid)))
            timed.append((time.monotonic(), int(pid), int(ids[0])))

    def first_answer(since: float, old: set[int]) -> tuple[float, int] | None:
        with lock:
            new = sorted((t, first) for t, pid, first in timed if t > since and pid not in old)
        return new[0] if new else None

    first = start("first")
    pool = ThreadPoolExecutor(8)
    try:
        deadline = time.monotonic() + 30
        while len(workers_of(first.pid)) < 4:
            assert first.poll() is None and time.monotonic() < deadline, logs[0].read_text(errors="replace")[-3000:]
            time.sleep(0.02)
        futures = [pool.submit(ask, i) for i in range(tasks)]
        while not timed:
            assert time.monotonic() < deadline, logs[0].read_text(errors="replace")[-3000:]
            time.sleep(0.01)
        # A pool process killed mid-load (the lowest PID: the first forked), and its replacement timed.
        time.sleep(0.1)
        before = workers_of(first.pid)
        out.victim = pool_victim(before)
        os.kill(out.victim[0], signal.SIGKILL)
        killed = time.monotonic()
        unforked = 0.0
        while time.monotonic() - killed < 10:
            if out.forked_s < 0:
                if workers_of(first.pid) - before:
                    out.forked_s = unforked
                else:
                    unforked = time.monotonic() - killed
            got = first_answer(killed, before)
            if got:
                out.replaced_s, out.replaced_node = got[0] - killed, snowmint.decode(got[1]).node_id
                break
            time.sleep(0.005)
        if out.replaced_s < 0:
            # What each pool process's threads wait on (a stalled pool: all on the job queue's lock).
            out.waits = {pid: pool_waits(pid) for pid in sorted(workers_of(first.pid))}
        # A second more of load, then the main process killed (its pool processes exit when it is gone).
        replaced = time.monotonic()
        time.sleep(1.0)
        pids = out.first_pids = before | workers_of(first.pid)
        with lock:
            out.answered_after_replacement = sum(1 for t, _, _ in timed if t > replaced)
        with lock:
            # Sent and not answered yet (8 at a time).
            out.outstanding_at_kill = out.sent - len(out.answers) - len(out.lost) - len(out.errors)
        first.kill()
        first.wait(10)
        deadline = time.monotonic() + 30
        while any(_alive(p) for p in pids):
            assert time.monotonic() < deadline, "the killed worker's pool processes exit"
            time.sleep(0.02)
        restarted = time.monotonic()
        again = start("restarted")
        # 8 tasks more: the restarted worker has tasks to answer even if the load's were all answered.
        futures += [pool.submit(ask, i) for i in range(8)]
        while time.monotonic() - restarted < 30:
            got = first_answer(restarted, pids)
            if got:
                out.restarted_s, out.restarted_node = got[0] - restarted, snowmint.decode(got[1]).node_id
                until[0] = time.monotonic() + 5
                break
            assert again.poll() is None, logs[-1].read_text(errors="replace")[-3000:]
            time.sleep(0.01)
        for f in futures:
            f.result()
        with lock:
            out.restarted_answers = sum(1 for t, pid, _ in timed if t > restarted and pid not in pids)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for p in procs:
            stop_process(p)
        out.log = "".join(path.read_text(errors="replace") for path in logs)
        shutil.rmtree(queue, ignore_errors=True)
    crashed = [w for w in CRASH_WORDS if w != "Traceback" and w in out.log]
    # A traceback is the killed pool process's task failing with WorkerLostError, and nothing else.
    tracebacks = out.log.split("Traceback (most recent call last)")[1:]
    crashed += [t[:400] for t in tracebacks if "WorkerLostError" not in t.split("\n[20")[0]]
    assert not crashed, f"celery: {crashed}\n{out.log[-4000:]}"
    return out
