"""snowmint.Client and AsyncClient against a live HTTP service on a free 127.0.0.1 port.

`live`: the real `snowmint serve` (the CLI binary named by SNOWMINT_SERVE, which test.sh builds; the
stand-in when it is not set, for a quick run); `service`: tests/service/fake_service.py, the protocol
stand-in, for what only it can do (inject each error code, count requests). Every service is SIGKILLed
when its test ends.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

import snowmint

FAKE = Path(__file__).resolve().parents[2] / "tests" / "service" / "fake_service.py"


SERVE = os.environ.get("SNOWMINT_SERVE")


class Service:
    def __init__(self, *args: str, real: bool = False) -> None:
        self.real = real and bool(SERVE)
        if self.real:
            validity = [f"{args[1]}ms"] if args[:1] == ("--validity",) else []
            cmd = [str(SERVE), "serve", "--listen", "127.0.0.1:0", "--node", "7"]
            cmd += ["--validity", *validity] if validity else []
            cmd += list(args[2:] if validity else args)
        else:
            cmd = [sys.executable, str(FAKE), *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"listening (?:on )?(https?://\S+)", line)
        assert m, f"{cmd}: {line!r}"
        self.url = m.group(1)

    def control(self, path: str) -> dict:
        req = urllib.request.Request(self.url + path, method="GET" if path.endswith(("stats", "/log")) else "POST")
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def stats(self) -> dict:
        return self.control("/_test/stats")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(5)


@pytest.fixture
def service() -> Iterator[Service]:
    s = Service()
    try:
        yield s
    finally:
        s.kill()


@pytest.fixture
def live() -> Iterator[Service]:
    s = Service(real=True)
    try:
        yield s
    finally:
        s.kill()


@pytest.fixture
def short_service() -> Iterator[Service]:
    s = Service("--validity", "500", real=True)
    try:
        yield s
    finally:
        s.kill()


def test_ids_increase_and_are_unique(live: Service) -> None:
    with snowmint.Client(live.url, prefetch=50) as c:
        ids = [c.next_id() for _ in range(1000)] + c.next_ids(25_000)
        assert all(isinstance(i, int) for i in ids)
        assert len(set(ids)) == len(ids)
        assert ids == sorted(ids)
        st = c.stats()
        assert st["ids"] == 26_000 and st["expired"] == 0 and st["failures"] == 0
    assert c.closed
    with pytest.raises(snowmint.ServiceUnavailableError) as e:
        c.next_id()
    assert e.value.code == "SERVICE_UNAVAILABLE"


def test_background_refill_keeps_next_id_off_the_network(service: Service) -> None:
    with snowmint.Client(service.url, prefetch=100) as c:
        c.next_id()  # the first batch: fetched by the caller
        assert service.stats()["requests"] == 1
        for _ in range(50):  # 49 left < 50: the refill thread fetches the next batch
            c.next_id()
        deadline = time.monotonic() + 5
        while service.stats()["requests"] < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert service.stats()["requests"] == 2
        deadline = time.monotonic() + 5
        while c.stats()["available"] < 149 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert c.stats()["available"] == 149  # 49 left + the new 100, no caller waited for them
        for _ in range(100):  # 49 left again: the next refill, again in the background
            assert c.try_next_id() is not None
        deadline = time.monotonic() + 5
        while c.stats()["available"] < 149 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert service.stats()["requests"] == 3 and c.stats()["available"] == 149


def _mint_in_process(url: str, n: int) -> list[int]:
    code = (
        "import json, sys, snowmint\n"
        "with snowmint.Client(sys.argv[1], prefetch=64) as c:\n"
        "    print(json.dumps([c.next_id() for _ in range(int(sys.argv[2]))]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, url, str(n)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_threads_and_processes_get_unique_ids(live: Service) -> None:
    service = live
    results: list[list[int]] = []
    lock = threading.Lock()
    clients = [snowmint.Client(service.url, prefetch=p) for p in (7, 100)]

    def work(c: snowmint.Client) -> None:
        got = [c.next_id() for _ in range(3000)] + c.next_ids(500)
        with lock:
            results.append(got)

    threads = [threading.Thread(target=work, args=(clients[i % 2],)) for i in range(6)]
    procs: list[list[int]] = []
    pt = [threading.Thread(target=lambda: procs.append(_mint_in_process(service.url, 4000))) for _ in range(3)]
    for t in threads + pt:
        t.start()
    for t in threads + pt:
        t.join(120)
    for c in clients:
        c.close()
    all_ids = [i for r in results + procs for i in r]
    assert len(results) == 6 and len(procs) == 3
    assert len(all_ids) == 6 * 3500 + 3 * 4000
    assert len(set(all_ids)) == len(all_ids)
    for r in results:  # one thread's IDs from one client increase
        assert r[:3000] == sorted(r[:3000])


def test_validity_drops_the_batch_and_fetches_a_fresh_one(short_service: Service) -> None:
    now = [1_000]
    # The client allows 10 s; the service's valid_for_ms is 500: the smaller one rules.
    c = snowmint.Client(short_service.url, prefetch=10, validity_ms=10_000, clock=lambda: now[0])
    first = c.next_id()
    now[0] += 499
    assert c.next_id() == first + 1  # still valid at fetched_at + 499
    now[0] += 1  # fetched_at + 500: the batch's 8 other IDs are dropped, never returned
    fresh = c.next_id()
    assert fresh > first + 1
    st = c.stats()
    assert st["expired"] == 8 and st["ids"] == 3
    c.close()


def test_client_validity_shorter_than_the_service(live: Service) -> None:
    now = [0.0]
    c = snowmint.Client(live.url, prefetch=5, validity_ms=100, clock=lambda: now[0])
    a = c.next_id()
    now[0] = 99.9
    assert c.next_id() == a + 1
    now[0] = 100.0
    assert c.next_id() > a + 1
    assert c.stats()["expired"] == 3
    c.close()


def test_validity_on_the_host_clock(live: Service) -> None:
    c = snowmint.Client(live.url, prefetch=10, validity_ms=300)  # the host's monotonic clock
    a = c.next_id()
    assert c.next_id() == a + 1  # well inside 300 ms
    time.sleep(0.35)
    assert c.try_next_id() is None  # expired: dropped
    assert c.next_id() > a + 1
    assert c.stats()["expired"] == 8
    c.close()


@pytest.mark.parametrize(
    "status,code,cls",
    [
        (400, "INVALID_ARGUMENT", snowmint.InvalidArgumentError),
        (400, "PARSE", snowmint.ParseError),
        (409, "LEASE_LOST", snowmint.LeaseLostError),
        (409, "SEQUENCER_DESTROYED", snowmint.SequencerDestroyedError),
        (500, "PANIC", snowmint.SnowmintError),
        (503, "STORE_UNAVAILABLE", snowmint.StoreUnavailableError),
        (503, "NODE_IDS_EXHAUSTED", snowmint.NodeIdsExhaustedError),
        (503, "SERVICE_UNAVAILABLE", snowmint.ServiceUnavailableError),
        (503, "TOO_FAR_AHEAD", snowmint.TooFarAheadError),
    ],
)
def test_service_errors_surface_with_their_code(service: Service, status: int, code: str, cls: type) -> None:
    service.control(f"/_test/fail?status={status}&code={code}&times=-1&field=count&retry_after_ms=7")
    c = snowmint.Client(service.url, timeout_ms=1000, retries=2)
    with pytest.raises(cls) as e:
        c.next_id()
    assert e.value.code == code and e.value.field == "count"
    assert f"injected {code}" in str(e.value)
    if code == "TOO_FAR_AHEAD":
        assert e.value.retry_after_ms == 7
    # 503 answers are retried (retries=2: three requests); the others are final.
    assert service.stats()["requests"] == (3 if status == 503 else 1)
    service.control("/_test/reset")
    assert c.next_id() > 0  # the client recovers once the service does
    c.close()


@pytest.mark.skipif(not SERVE, reason="needs the real service (SNOWMINT_SERVE)")
def test_the_real_service_refuses_a_count_above_its_limit() -> None:
    s = Service("--max-count", "50", real=True)
    try:
        c = snowmint.Client(s.url, prefetch=100, retries=3)
        with pytest.raises(snowmint.InvalidArgumentError) as e:
            c.next_id()
        assert e.value.code == "INVALID_ARGUMENT" and e.value.field == "count"
        assert c.stats()["requests"] == 1  # a 400 is final: no retry
        assert len(c.next_ids(0)) == 0
        ok = snowmint.Client(s.url, prefetch=50)
        assert len(set(ok.next_ids(120))) == 120
        ok.close()
        c.close()
    finally:
        s.kill()


def test_transient_503_is_retried_transparently(service: Service) -> None:
    service.control("/_test/fail?status=503&code=STORE_UNAVAILABLE&times=2")
    with snowmint.Client(service.url, retries=2) as c:
        assert c.next_id() > 0
        assert c.stats()["failures"] == 2


def test_an_answer_that_is_not_the_protocol(service: Service) -> None:
    service.control("/_test/garbage?times=1")
    with snowmint.Client(service.url, retries=1) as c:
        assert c.next_id() > 0  # retried
    service.control("/_test/garbage?times=100")
    with snowmint.Client(service.url, retries=1) as c:
        with pytest.raises(snowmint.ServiceUnavailableError, match="not its protocol|without"):
            c.next_id()


@pytest.mark.parametrize("mode", ["repeat", "backward"])
def test_a_repeated_or_backward_batch_is_refused(service: Service, mode: str) -> None:
    # Every batch the same IDs (or each below the one before): the first is taken, the next refused.
    service.control(f"/_test/misbehave?mode={mode}")
    ids = []
    with snowmint.Client(service.url, prefetch=4, retries=1) as c:
        with pytest.raises(snowmint.ServiceUnavailableError, match="does not continue above"):
            for _ in range(12):
                ids.append(c.next_id())
    assert len(ids) == 4 and ids == sorted(set(ids)), ids


def test_the_timeout_bounds_the_whole_request_not_each_read(service: Service) -> None:
    # One byte every 150 ms: every socket read succeeds within the 400 ms timeout, the answer never ends.
    service.control("/_test/misbehave?mode=trickle&interval_ms=150")
    c = snowmint.Client(service.url, timeout_ms=400, retries=1)
    t = time.monotonic()
    with pytest.raises(snowmint.ServiceUnavailableError, match="within 400 ms"):
        c.next_id()
    elapsed_ms = (time.monotonic() - t) * 1000
    assert elapsed_ms <= c.max_wait_ms() + 500, (elapsed_ms, c.max_wait_ms())
    c.close()


def test_an_answer_larger_than_the_largest_batch_is_refused(service: Service) -> None:
    service.control(f"/_test/misbehave?mode=huge&bytes={64 << 20}")
    with snowmint.Client(service.url, retries=0) as c:
        with pytest.raises(snowmint.ServiceUnavailableError, match="bytes"):
            c.next_id()
    assert snowmint._client.MAX_ANSWER_BYTES < 1 << 20


def test_a_valid_for_ms_out_of_range_is_the_service_unavailable(service: Service) -> None:
    service.control(f"/_test/misbehave?mode=valid_for&valid_for_ms={10**30}")
    with snowmint.Client(service.url, retries=0) as c:
        with pytest.raises(snowmint.ServiceUnavailableError, match="valid_for_ms"):
            c.next_id()


def test_a_killed_service_is_unavailable_within_the_bound(live: Service) -> None:
    service = live
    now = [0]
    c = snowmint.Client(service.url, prefetch=10, timeout_ms=300, retries=2, clock=lambda: now[0])
    c.next_id()  # 9 left: no refill
    service.kill()  # SIGKILL
    now[0] = 600_000  # the batch expires: the next call must reach the (dead) service
    t = time.monotonic()
    with pytest.raises(snowmint.ServiceUnavailableError) as e:
        c.next_id()
    elapsed_ms = (time.monotonic() - t) * 1000
    assert e.value.code == "SERVICE_UNAVAILABLE"
    assert c.max_wait_ms() == 3 * 300 + 50 + 100
    assert elapsed_ms <= c.max_wait_ms() + 200, elapsed_ms
    assert c.stats()["failures"] == 3
    c.close()


def test_a_caller_waiting_on_a_failing_refill_gets_its_error_within_the_bound(service: Service) -> None:
    c = snowmint.Client(service.url, prefetch=10, timeout_ms=400, retries=1)
    c.next_id()  # 9 left
    service.proc.send_signal(signal.SIGSTOP)  # connections hang: every attempt times out
    try:
        for _ in range(5):  # 4 left < 5: the refill thread starts (and hangs)
            c.next_id()
        time.sleep(0.1)
        while c.try_next_id() is not None:
            pass
        t = time.monotonic()
        with pytest.raises(snowmint.ServiceUnavailableError):
            c.next_id()  # waits for the refill's connection, then takes its error: no second cycle
        elapsed_ms = (time.monotonic() - t) * 1000
        assert elapsed_ms <= c.max_wait_ms() + 500, (elapsed_ms, c.max_wait_ms())
    finally:
        service.proc.send_signal(signal.SIGCONT)
    c.close()


def test_a_service_that_never_answers_times_out(tmp_path: Path) -> None:
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)  # accepts connections (the kernel does) and never answers
    try:
        c = snowmint.Client(f"http://127.0.0.1:{srv.getsockname()[1]}", timeout_ms=200, retries=1)
        t = time.monotonic()
        with pytest.raises(snowmint.ServiceUnavailableError, match="did not answer"):
            c.next_id()
        assert (time.monotonic() - t) * 1000 <= c.max_wait_ms() + 1000  # scheduling slack on a busy machine
        c.close()
    finally:
        srv.close()


def test_bad_options() -> None:
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Client("http://127.0.0.1:1", prefetch=0)
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Client("http://127.0.0.1:1", prefetch=10_001)
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Client("ftp://127.0.0.1/")
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Client("http://127.0.0.1:1/?x=1")
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Client("http://127.0.0.1:1", retries=-1)
    with pytest.raises(TypeError):
        snowmint.Client("http://127.0.0.1:1", prefetch="10")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        snowmint.Client(b"http://127.0.0.1:1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        snowmint.Client("http://127.0.0.1:1", clock=5)  # type: ignore[arg-type]
    c = snowmint.Client("http://127.0.0.1:1", clock=lambda: -1)
    with pytest.raises(snowmint.InvalidClockError):
        c.next_id()
    with pytest.raises(snowmint.InvalidArgumentError):
        c.next_ids(-1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_never_uses_the_parents_batch(live: Service) -> None:
    c = snowmint.Client(live.url, prefetch=1000)
    parent = [c.next_id() for _ in range(10)]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            os.close(r)
            ids = [c.next_id() for _ in range(10)]
            os.write(w, json.dumps(ids).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        child = json.loads(f.read())
    os.waitpid(pid, 0)
    parent += [c.next_id() for _ in range(10)]
    assert len(child) == 10 and not set(child) & set(parent)
    c.close()


def test_async_client(service: Service) -> None:
    async def main() -> None:
        async with snowmint.AsyncClient(service.url, prefetch=20) as c:
            first = await c.next_id()
            ids = await asyncio.gather(*(c.next_id() for _ in range(500)))
            more = await c.next_ids(12_000)
            all_ids = [first, *ids, *more]
            assert len(set(all_ids)) == len(all_ids)
            assert c.try_next_id() is not None or c.stats()["available"] == 0
            service.control("/_test/fail?status=409&code=LEASE_LOST&times=-1&field=token")
            while c.try_next_id() is not None:
                pass
            with pytest.raises(snowmint.LeaseLostError) as e:
                await c.next_id()
            assert e.value.field == "token"
            service.control("/_test/reset")
            assert await c.next_id() > max(all_ids)
        assert c.closed
        with pytest.raises(snowmint.ServiceUnavailableError):
            await c.next_id()

    asyncio.run(main())


def test_async_client_across_event_loops(live: Service) -> None:
    c = snowmint.AsyncClient(live.url, prefetch=10)
    first = asyncio.run(c.next_id())  # a loop, closed when it returns

    async def more() -> list[int]:
        # 9 left: the fifth call leaves 4 < 5 and asks the closed first loop for a refill (no error).
        got = [await c.next_id() for _ in range(5)]
        return got + await c.next_ids(20)

    ids = asyncio.run(more())
    assert len(set([first, *ids])) == 26 and min(ids) > first
    asyncio.run(c.aclose())


def test_a_dropped_client_ends_its_refill_thread(live: Service) -> None:
    import gc

    c = snowmint.Client(live.url, prefetch=10)
    for _ in range(6):  # 4 left: the refill thread starts
        c.next_id()
    deadline = time.monotonic() + 5
    while c.stats()["available"] < 14 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert c.stats()["available"] == 14  # the refill landed: the thread waits for the next one
    thread = c._thread
    assert thread is not None and thread.is_alive()
    del c
    gc.collect()
    thread.join(5)
    assert not thread.is_alive()


def test_async_validity_and_dead_service(short_service: Service) -> None:
    now = [0]

    async def main() -> None:
        c = snowmint.AsyncClient(short_service.url, prefetch=10, timeout_ms=200, retries=1, clock=lambda: now[0])
        a = await c.next_id()
        now[0] = 500
        b = await c.next_id()
        assert b > a and c.stats()["expired"] == 9
        short_service.kill()
        now[0] = 1_000  # b's batch expires too
        t = time.monotonic()
        with pytest.raises(snowmint.ServiceUnavailableError):
            await c.next_id()
        assert (time.monotonic() - t) * 1000 <= c.max_wait_ms() + 200
        await c.aclose()

    asyncio.run(main())


def make_ca(d: Path) -> None:
    """A CA, and a certificate for 127.0.0.1 signed by it (the openssl CLI)."""

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    # The extensions a strict verifier asks for (CPython 3.13 sets VERIFY_X509_STRICT): the CA's key usage,
    # the server certificate's authority key identifier.
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=snowmint test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=localhost")
    (d / "ext.cnf").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid,issuer\n"
    )
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")


@pytest.mark.skipif(not SERVE, reason="TLS needs the real service (SNOWMINT_SERVE; test.sh sets it)")
def test_tls_with_a_private_ca_and_a_bearer_token(tmp_path: Path) -> None:
    make_ca(tmp_path)
    token = "python-client-token-0123456789"
    (tmp_path / "tokens").write_text(token + "\n")
    s = Service(
        "--tls-cert", str(tmp_path / "server.pem"), "--tls-key", str(tmp_path / "server.key"),
        "--auth-token-file", str(tmp_path / "tokens"), real=True,
    )
    try:
        assert s.url.startswith("https://127.0.0.1:")
        with snowmint.Client(s.url, prefetch=5, ca=tmp_path / "ca.pem", token=token) as c:
            ids = c.next_ids(20)
            assert ids == sorted(set(ids))
        # The system's CAs, or another CA, do not know the test's: the certificate is refused, said as
        # such, at once and not retried (a configuration to fix, not an outage).
        other = tmp_path / "other"
        other.mkdir()
        make_ca(other)
        for ca in (None, other / "ca.pem"):
            with snowmint.Client(s.url, retries=3, ca=ca) as c:
                t = time.monotonic()
                with pytest.raises(snowmint.SnowmintError) as e:
                    c.next_id()
                took_ms = (time.monotonic() - t) * 1000
            assert e.value.code == "INVALID_ARGUMENT", e.value
            assert e.value.field == "ca", e.value
            assert "certificate" in str(e.value) and "refused" in str(e.value), e.value
            assert "did not answer" not in str(e.value), e.value
            assert took_ms < 1000, took_ms
        # The CA, but no token or another one: 401, and the token is in no message.
        for t in (None, "another-token-0123456789"):
            with snowmint.Client(s.url, retries=0, ca=str(tmp_path / "ca.pem"), token=t) as c:
                with pytest.raises(snowmint.SnowmintError, match="bearer token") as e:
                    c.next_id()
                assert token not in str(e.value) and "another-token" not in str(e.value)
        # ca is for https only, and must be a file of certificates.
        with pytest.raises(snowmint.SnowmintError, match="https"):
            snowmint.Client("http://127.0.0.1:1", ca=tmp_path / "ca.pem")
        with pytest.raises(snowmint.SnowmintError, match="PEM"):
            snowmint.Client(s.url, ca=tmp_path / "tokens")
    finally:
        s.kill()
