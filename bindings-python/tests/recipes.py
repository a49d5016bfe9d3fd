"""Helpers the tests share: the stores test.sh started, and a README gunicorn recipe run for real."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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


def serve_gunicorn(command: str, cwd: Path, requests: int, env: dict[str, str] | None = None) -> list[tuple[int, int]]:
    """Runs the README's `gunicorn …` command in `cwd` (on a free loopback port), sends `requests`
    requests (8 at a time) and returns each answer's (ID, worker PID); stops the server."""
    port = free_port()
    argv = command.split()
    assert argv[0] == "gunicorn"
    argv = [sys.executable, "-m", "gunicorn", *argv[1:], "--bind", f"127.0.0.1:{port}"]
    server = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/"
        for _ in range(400):
            try:
                urllib.request.urlopen(url, timeout=1).read()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                time.sleep(0.05)

        def fetch(_: int) -> tuple[int, int]:
            body = urllib.request.urlopen(url, timeout=10).read().decode().split()
            return int(body[0]), int(body[1])

        with ThreadPoolExecutor(8) as pool:
            return list(pool.map(fetch, range(requests)))
    finally:
        server.terminate()
        server.wait(30)
