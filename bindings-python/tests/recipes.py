"""Helpers the tests share: the stores test.sh started, and a README gunicorn recipe run for real."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

ETCD = os.environ.get("SNOWMINT_TEST_ETCD_URL", "")
POSTGRES = os.environ.get("SNOWMINT_TEST_POSTGRES_URL", "")
REQUIRE = os.environ.get("SNOWMINT_REQUIRE_SERVERS") == "1"


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
    argv = command.split()
    assert argv[0] == "gunicorn"
    argv = [sys.executable, "-m", "gunicorn", *argv[1:], "--bind", f"127.0.0.1:{port}"]
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

            def fetch(_: int) -> None:
                try:
                    body = urllib.request.urlopen(f"{url}?{query}", timeout=15).read().decode().split()
                    served.answers.append(([int(w) for w in body[:-1]], int(body[-1])))
                except urllib.error.HTTPError as e:
                    served.errors.append(f"{e.code} {e.read().decode().strip()}")
                except (ConnectionError, http.client.HTTPException, ValueError):
                    # A connection the killed worker dropped (http.client's chunk reader raises ValueError
                    # on a body cut short).
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
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(10)
    served.log = log_path.read_text(errors="replace")
    crashed = [w for w in CRASH_WORDS if w in served.log]
    assert not crashed, f"gunicorn: {crashed}\n{served.log[-4000:]}"
    return served


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


class KillAWorker:
    """A `while_serving` for [`run_gunicorn`]: after `after` s of load, SIGKILLs one worker and measures
    how long until a worker that was not there before answers (a batch of one), and under which node ID."""

    def __init__(self, after: float = 0.3) -> None:
        self.after = after
        self.recovered_s = -1.0
        self.node_id = -1

    def __call__(self, server: "subprocess.Popen[bytes]", url: str) -> None:
        import snowmint

        time.sleep(self.after)
        before = workers_of(server.pid)
        assert len(before) >= 2, before
        os.kill(min(before), signal.SIGKILL)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10:
            try:
                body = urllib.request.urlopen(f"{url}?n=1", timeout=5).read().decode().split()
            except (OSError, http.client.HTTPException):
                time.sleep(0.005)
                continue
            if int(body[-1]) not in before:
                self.recovered_s = time.monotonic() - t0
                self.node_id = snowmint.decode(int(body[0])).node_id
                return


class KillThePrimary:
    """A `while_serving` for [`run_gunicorn`]: after `after` s of load, SIGKILLs the primary (the gunicorn
    master), waits until its orphaned workers have exited, and starts the same recipe again (as a
    supervisor would: `argv`, `cwd`, `env`), measuring how long until it answers a batch, and under which
    node ID; then stops it."""

    def __init__(self, command: str, cwd: Path, env: dict[str, str], after: float = 0.3) -> None:
        self.command, self.cwd, self.env, self.after = command, cwd, env, after
        self.recovered_s = -1.0
        self.node_id = -1
        self.log = ""

    def __call__(self, server: "subprocess.Popen[bytes]", url: str) -> None:
        import snowmint

        time.sleep(self.after)
        workers = workers_of(server.pid)
        server.kill()
        server.wait(10)
        deadline = time.monotonic() + 30
        while any(os.path.exists(f"/proc/{w}") and _alive(w) for w in workers):
            assert time.monotonic() < deadline, "the orphaned workers exit"
            time.sleep(0.02)
        port = free_port()
        argv = [sys.executable, "-m", "gunicorn", *self.command.split()[1:], "--bind", f"127.0.0.1:{port}"]
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
            finally:
                again.terminate()
                again.wait(30)
        self.log = log_path.read_text(errors="replace")


def _alive(pid: int) -> bool:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"
