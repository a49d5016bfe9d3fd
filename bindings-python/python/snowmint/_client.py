"""Prefetching clients of the snowmint ID service (SPEC §6a: ``POST /v1/ids?count=N``).

The batches, the validity check and the refill trigger are the native ``_IdBuffer`` (src/client.rs), so
``next_id()`` from a prefetched batch is one native call; the HTTP I/O, the retries and the background
refill are here (``http.client``; the async client runs the same I/O on the default executor).
"""

from __future__ import annotations

import asyncio
import functools
import http.client
import io
import json
import os
import socket
import ssl
import threading
import time
import urllib.parse
import weakref

from . import ERROR_CODES, SnowmintError  # bound by __init__ before it imports this module
from ._snowmint import _IdBuffer  # type: ignore[import-not-found]  # native; typed through the package stubs

#: The service's limit on one request's count.
MAX_COUNT = 10_000
#: The largest answer read (bytes): room for the largest batch (MAX_COUNT IDs of up to 20 digits, quoted,
#: with separators and spaces) and the other fields; a larger answer is not the protocol.
MAX_ANSWER_BYTES = 4096 + 48 * MAX_COUNT
#: The largest ``valid_for_ms`` taken (2**53 - 1, as in JavaScript); a larger one is not the protocol.
MAX_VALID_FOR_MS = 2**53 - 1
#: Backoff before retry i (0-based): min(BACKOFF_MS * 2**i, BACKOFF_CAP_MS) ms.
BACKOFF_MS = 50
BACKOFF_CAP_MS = 1_000


def _error_classes():
    out = {}
    stack = [SnowmintError]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            code = getattr(sub, "code", None)
            if isinstance(code, str):
                out.setdefault(code, sub)
            stack.append(sub)
    return out


_CLASSES = _error_classes()


def _make_error(code, message, field=None, retry_after_ms=None):
    cls = _CLASSES.get(code, SnowmintError)
    err = cls(message)
    err.code = code
    err.field = field
    if retry_after_ms is not None:
        err.retry_after_ms = retry_after_ms
    return err


def _unavailable(message):
    return _make_error("SERVICE_UNAVAILABLE", message)


def _bad(message):
    return _make_error("INVALID_ARGUMENT", message)


def backoff_ms(attempt):
    """The pause before retry ``attempt`` (0-based), in ms."""
    return min(BACKOFF_MS * (1 << min(attempt, 20)), BACKOFF_CAP_MS)


def max_wait_ms(timeout_ms, retries):
    """The longest a fetch can take before it raises: every attempt's timeout and every pause."""
    return (retries + 1) * timeout_ms + sum(backoff_ms(i) for i in range(retries))


def _int_option(name, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise _bad(f"{name} must be {lo}..={hi}, got {value}")
    return value


class _DeadlineIO(io.RawIOBase):
    """The socket reader of one answer: every read waits at most until the request's deadline, so a
    server that trickles bytes cannot stretch one request past its timeout."""

    def __init__(self, raw, sock, deadline):
        super().__init__()
        self._raw, self._sock, self._deadline = raw, sock, deadline

    def readable(self):
        return True

    def readinto(self, b):
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no complete answer within the request's timeout")
        self._sock.settimeout(left)
        return self._raw.readinto(b)

    def close(self):
        self._raw.close()
        super().close()


class _Response(http.client.HTTPResponse):
    """An answer read under one deadline for the whole request (status line, headers and body)."""

    def __init__(self, sock, *args, deadline, **kwargs):
        super().__init__(sock, *args, **kwargs)
        # The reader http.client made stays referenced (dropped, it would close the socket's reader).
        self._plain_fp = self.fp
        self.fp = io.BufferedReader(_DeadlineIO(self.fp.raw, sock, deadline))


class _Fetcher:
    """One HTTP connection to the service (kept alive, reopened after a failure), used under a lock."""

    def __init__(self, url, timeout_ms, retries, buf, ca=None, token=None):
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, not {type(url).__name__}")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise _bad(f"url must be an http:// or https:// URL of the ID service, got {url!r}")
        if parts.query or parts.fragment:
            raise _bad(f"url must not carry a query or fragment, got {url!r}")
        try:
            self.port = parts.port
        except ValueError:
            raise _bad(f"url has an invalid port: {url!r}") from None
        self.url = url
        self.https = parts.scheme == "https"
        # ca: a PEM file of the certificate authorities to trust for an https:// service (a private CA);
        # None: the system's.
        self.tls = None
        if ca is not None:
            if not isinstance(ca, (str, os.PathLike)):
                raise TypeError(f"ca must be a path to a PEM file, not {type(ca).__name__}")
            if not self.https:
                raise _bad("ca is for an https:// url")
            try:
                self.tls = ssl.create_default_context(cafile=os.fspath(ca))
            except (OSError, ssl.SSLError) as e:
                raise _bad(f"ca {os.fspath(ca)!r} is not a readable PEM file of certificates: {e}") from None
        # token: the bearer token of a service started with --auth-token-file (never in a message).
        self.headers = {"content-length": "0", "accept": "application/json"}
        if token is not None:
            if not isinstance(token, str):
                raise TypeError(f"token must be a str, not {type(token).__name__}")
            if not token or any(c.isspace() or not c.isprintable() for c in token):
                raise _bad("token must be a non-empty string with no spaces")
            self.headers["authorization"] = f"Bearer {token}"
        self.host = parts.hostname
        self.base = parts.path.rstrip("/")
        self.timeout = timeout_ms / 1000
        self.timeout_ms = timeout_ms
        self.retries = retries
        self.buf = buf
        self.lock = threading.Lock()
        self.conn = None
        self.requests = 0
        self.failures = 0
        # The largest count to ask for beyond `prefetch` (next_ids); lowered when the service refuses one.
        self.max_count = MAX_COUNT
        # (monotonic time, error) of the last fetch when it failed.
        self.failed = None

    def _connection(self, timeout):
        if self.conn is None:
            if self.https:
                self.conn = http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.tls)
            else:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            self.conn.connect()
            # Small requests, answered at once: never hold one back for an ACK.
            self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self.conn

    def reset(self):
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()

    def _post(self, count):
        """One request, bounded as a whole by the timeout (connecting, sending, every byte of the answer)
        and its answer by MAX_ANSWER_BYTES; ``(status, body)``, or ``(None, why)`` for an answer too
        large (the connection is then dropped)."""
        deadline = time.monotonic() + self.timeout
        conn = self._connection(self.timeout)
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("connecting took the request's whole timeout")
        conn.sock.settimeout(left)
        conn.response_class = functools.partial(_Response, deadline=deadline)
        conn.request(
            "POST",
            f"{self.base}/v1/ids?count={count}",
            headers=self.headers,
        )
        resp = conn.getresponse()
        if resp.length is not None and resp.length > MAX_ANSWER_BYTES:
            self.reset()
            return None, f"an answer of {resp.length} bytes (at most {MAX_ANSWER_BYTES} are read)"
        body = resp.read(MAX_ANSWER_BYTES + 1)
        if len(body) > MAX_ANSWER_BYTES:
            self.reset()
            return None, f"an answer of more than {MAX_ANSWER_BYTES} bytes"
        if resp.will_close or not resp.isclosed():
            self.reset()
        return resp.status, body

    def _answer(self, status, body, count, fetched_at):
        """Pushes a 200's batch; returns the error of any other answer (or of a batch the buffer
        refuses: not increasing, or not above the IDs received before)."""
        if status is None:
            return _unavailable(f"the ID service at {self.url} answered with {body}")
        try:
            doc = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return _unavailable(f"HTTP {status} from {self.url} with a body that is not JSON")
        if status == 200:
            ids = doc.get("ids") if isinstance(doc, dict) else None
            valid_for = doc.get("valid_for_ms") if isinstance(doc, dict) else None
            if (
                not isinstance(ids, list)
                or len(ids) != count
                or isinstance(valid_for, bool)
                or not isinstance(valid_for, int)
                or not 0 <= valid_for <= MAX_VALID_FOR_MS
            ):
                return _unavailable(
                    f"HTTP 200 from {self.url} without {count} ids and a valid_for_ms of 0..={MAX_VALID_FOR_MS}"
                )
            try:
                self.buf.push(ids, fetched_at, valid_for)
            except SnowmintError as e:
                return e
            return None
        err = doc.get("error") if isinstance(doc, dict) else None
        code = err.get("code") if isinstance(err, dict) else None
        message = err.get("message") if isinstance(err, dict) else None
        if code not in ERROR_CODES or not isinstance(message, str):
            return _unavailable(f"HTTP {status} from {self.url} without a snowmint error body")
        field = err.get("field")
        retry = err.get("retry_after_ms")
        return _make_error(
            code,
            message,
            field if isinstance(field, str) else None,
            retry if isinstance(retry, int) and not isinstance(retry, bool) else None,
        )

    def fetch_up_to(self, count, floor):
        """Fetches ``count`` IDs, or ``floor`` (the client's prefetch, which the service took before)
        when the service refuses a count that large (its --max-count): remembered for later calls."""
        count = max(floor, min(count, self.max_count))
        try:
            self.fetch(count)
        except SnowmintError as e:
            if count <= floor or e.code != "INVALID_ARGUMENT" or getattr(e, "field", None) != "count":
                raise
            self.max_count = floor
            self.fetch(floor)

    def fetch(self, count):
        """Fetches one batch of ``count`` IDs into the buffer, retrying what may pass (no answer, a
        503); raises the service's error (or ServiceUnavailableError) when it does not."""
        entered = time.monotonic()
        with self.lock:
            failed = self.failed
            if failed is not None and failed[0] >= entered:
                # A fetch that ran while this caller waited for the connection has just failed: its
                # error is this caller's too (retrying again would double the bound).
                raise failed[1]
            try:
                self._fetch_locked(count)
            except SnowmintError as e:
                self.failed = (time.monotonic(), e)
                raise
            self.failed = None

    def _fetch_locked(self, count):
        last = None
        for attempt in range(self.retries + 1):
            if attempt:
                pause = backoff_ms(attempt - 1)
                retry = getattr(last, "retry_after_ms", None)
                if isinstance(retry, int) and last.code == "TOO_FAR_AHEAD":
                    pause = min(max(pause, retry), BACKOFF_CAP_MS)
                time.sleep(pause / 1000)
            fetched_at = self.buf.now_ms()
            self.requests += 1
            try:
                status, body = self._post(count)
            except ssl.SSLCertVerificationError as e:
                # Not a passing fault: the service's certificate is not one this client trusts (ca=).
                self.reset()
                self.failures += 1
                err = _bad(
                    f"the certificate of the ID service at {self.url} was refused"
                    f" ({e.verify_message or e.reason}): trust its authority with ca="
                )
                err.field = "ca"
                raise err from None
            except (OSError, http.client.HTTPException) as e:
                self.reset()
                self.failures += 1
                last = _unavailable(
                    f"the ID service at {self.url} did not answer within {self.timeout_ms} ms: {e}"
                )
                continue
            err = self._answer(status, body, count, fetched_at)
            if err is None:
                return
            self.failures += 1
            if status != 503 and err.code != "SERVICE_UNAVAILABLE":
                raise err
            last = err
        raise last


def _prepare(url, prefetch, validity_ms, timeout_ms, retries, clock, on_low, slow, ca=None, token=None):
    prefetch = _int_option("prefetch", prefetch, 1, MAX_COUNT)
    validity_ms = _int_option("validity_ms", validity_ms, 1, 2**63)
    timeout_ms = _int_option("timeout_ms", timeout_ms, 1, 3_600_000)
    retries = _int_option("retries", retries, 0, 100)
    if clock is not None and not callable(clock):
        raise TypeError("clock must be a callable returning monotonic milliseconds, or None")
    buf = _IdBuffer(validity_ms, max(1, prefetch // 2), on_low, slow, clock)
    return prefetch, buf, _Fetcher(url, timeout_ms, retries, buf, ca, token)


def _strike(buf, expired_before, strikes):
    """Counts a fetch after which no valid ID was left because IDs expired (other callers taking the
    batch is progress, not a strike); raises at the third."""
    if buf.counts()[1] > expired_before and buf.available() == 0:
        strikes += 1
        if strikes >= 3:
            raise _unavailable("every batch fetched expired before it could be used (validity too short)")
    return strikes


def _stats(buf, fetcher):
    taken, expired = buf.counts()
    return {
        "ids": taken,
        "expired": expired,
        "available": buf.available(),
        "requests": fetcher.requests,
        "failures": fetcher.failures,
    }


_LIVE: weakref.WeakSet[object] = weakref.WeakSet()


def _after_fork():
    # IDs fetched by the parent are the parent's: a child that used them would mint duplicates.
    for c in list(_LIVE):
        c._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _refill_loop(ref, wake):
    """The background refill thread: holds no strong reference to its client between refills."""
    while True:
        wake.wait()
        wake.clear()
        client = ref()
        if client is None or client._closed:
            return
        buf, fetcher, prefetch = client._buf, client._fetcher, client._prefetch
        del client
        try:
            if buf.available() < buf.low_water:
                fetcher.fetch(prefetch)
        except SnowmintError:
            pass  # a caller that finds the batch empty fetches itself and gets the error
        finally:
            buf.refill_done()


class Client:
    """A client of the snowmint ID service that prefetches IDs (thread-safe).

    ``next_id()`` takes an ID from the prefetched batch (a native call, no network); when the batch falls
    below half of ``prefetch`` a background thread fetches the next one, so steady-state callers never
    wait. IDs whose batch is older than ``min(validity_ms, the service's valid_for_ms)`` on this
    client's monotonic clock are dropped, never returned. ``ca``: a PEM file of the certificate
    authorities that sign an ``https://`` service's certificate (default: the system's); ``token``: the
    bearer token of a service started with ``--auth-token-file``. See the README's "Client" section.
    """

    def __init__(
        self, url, prefetch=100, validity_ms=600_000, timeout_ms=2_000, retries=3, clock=None, *, ca=None, token=None
    ):
        ref = weakref.ref(self)
        self._closed = False
        self._wake = threading.Event()
        self._thread = None
        self._slow_lock = threading.Lock()

        def on_low():
            c = ref()
            if c is not None:
                c._on_low()

        def slow():
            c = ref()
            if c is None:
                raise _unavailable("the client is closed")
            return c._slow_next_id()

        self._prefetch, self._buf, self._fetcher = _prepare(
            url, prefetch, validity_ms, timeout_ms, retries, clock, on_low, slow, ca, token
        )
        #: The next ID (an int): the native hot path, bound once.
        self.next_id = self._buf.next_id
        # A client dropped without close(): its refill thread wakes, finds it gone and ends.
        weakref.finalize(self, self._wake.set)
        _LIVE.add(self)

    @property
    def url(self):
        return self._fetcher.url

    @property
    def prefetch(self):
        return self._prefetch

    @property
    def closed(self):
        return self._closed

    def max_wait_ms(self):
        """The longest one fetch takes before it raises (every attempt's timeout and every pause)."""
        return max_wait_ms(self._fetcher.timeout_ms, self._fetcher.retries)

    def _on_low(self):
        if self._closed:
            return
        t = self._thread
        if t is None or not t.is_alive():
            t = threading.Thread(
                target=_refill_loop, args=(weakref.ref(self), self._wake), name="snowmint-client-refill", daemon=True
            )
            self._thread = t
            t.start()
        self._wake.set()

    def _check_open(self):
        if self._closed:
            raise _unavailable("the client is closed")

    def _refill_for(self, count, strikes):
        self._check_open()
        expired = self._buf.counts()[1]
        try:
            self._fetcher.fetch_up_to(count, self._prefetch)
        finally:
            self._buf.refill_done()
        return _strike(self._buf, expired, strikes)

    def _slow_next_id(self):
        self._check_open()
        with self._slow_lock:
            strikes = 0
            while True:
                v = self._buf.try_take()
                if v is not None:
                    return v
                strikes = self._refill_for(self._prefetch, strikes)

    def next_id(self):  # replaced per instance by the native method (see __init__)
        """The next ID (an int)."""
        return self._buf.next_id()

    def next_ids(self, n):
        """``n`` IDs (a list of ints), fetching as many batches as they need (at most 10000 per request)."""
        n = _int_option("n", n, 0, 1 << 30)
        out = self._buf.take_many(n)
        if len(out) < n:
            self._check_open()
            with self._slow_lock:
                strikes = 0
                while len(out) < n:
                    out += self._buf.take_many(n - len(out))
                    if len(out) < n:
                        strikes = self._refill_for(min(MAX_COUNT, max(self._prefetch, n - len(out))), strikes)
        return out

    def try_next_id(self):
        """The next ID if a valid one is prefetched, else None (never waits on the network)."""
        return self._buf.try_take()

    def stats(self):
        """Counters: ids handed out, ids expired (dropped), available now, requests, failures."""
        return _stats(self._buf, self._fetcher)

    def _forked(self):
        self._buf.clear()
        self._thread = None
        self._wake = threading.Event()
        self._slow_lock = threading.Lock()
        self._fetcher.lock = threading.Lock()
        self._fetcher.conn = None  # the parent's socket: never used (nor closed) by the child

    def close(self):
        """Drops the prefetched IDs, stops the refill thread and closes the connection. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._buf.close()
        self._wake.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(self.max_wait_ms() / 1000 + 1)
        with self._fetcher.lock:
            self._fetcher.reset()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()

    def __repr__(self):
        state = "closed" if self._closed else f"available={self._buf.available()}"
        return f"Client(url={self.url!r}, prefetch={self._prefetch}, {state})"


class AsyncClient:
    """The asyncio client: ``await client.next_id()``; the same batches, validity and errors as
    :class:`Client`. The blocking I/O runs on the loop's default executor, so the event loop never waits
    on the network; a refill starts as a task when the batch falls below half of ``prefetch``.
    ``try_next_id()`` is the synchronous hot path (None when no valid ID is prefetched)."""

    def __init__(
        self, url, prefetch=100, validity_ms=600_000, timeout_ms=2_000, retries=3, clock=None, *, ca=None, token=None
    ):
        ref = weakref.ref(self)
        self._closed = False
        self._task = None
        self._alock = None
        self._loop = None

        def on_low():
            c = ref()
            if c is not None and c._loop is not None and not c._closed:
                try:
                    c._loop.call_soon_threadsafe(c._start_refill)
                except RuntimeError:
                    # The loop it last ran on is closed (a later asyncio.run): the next call that finds
                    # the batch empty fetches on the running loop.
                    c._loop = None

        def slow():
            return None

        self._prefetch, self._buf, self._fetcher = _prepare(
            url, prefetch, validity_ms, timeout_ms, retries, clock, on_low, slow, ca, token
        )
        self.try_next_id = self._buf.try_take
        _LIVE.add(self)

    @property
    def url(self):
        return self._fetcher.url

    @property
    def closed(self):
        return self._closed

    def max_wait_ms(self):
        return max_wait_ms(self._fetcher.timeout_ms, self._fetcher.retries)

    def _bind(self):
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._alock = asyncio.Lock()
            self._task = None
        return loop

    def _start_refill(self):
        if self._closed or (self._task is not None and not self._task.done()):
            return
        self._task = self._loop.create_task(self._refill())

    async def _refill(self):
        try:
            async with self._alock:
                if not self._closed and self._buf.available() < self._buf.low_water:
                    await asyncio.to_thread(self._fetcher.fetch, self._prefetch)
        except SnowmintError:
            pass  # a caller that finds the batch empty fetches itself and gets the error
        finally:
            self._buf.refill_done()

    def _check_open(self):
        if self._closed:
            raise _unavailable("the client is closed")

    async def _refill_for(self, count, strikes):
        self._check_open()
        expired = self._buf.counts()[1]
        try:
            await asyncio.to_thread(self._fetcher.fetch_up_to, count, self._prefetch)
        finally:
            self._buf.refill_done()
        return _strike(self._buf, expired, strikes)

    def try_next_id(self):  # replaced per instance by the native method (see __init__)
        """The next ID if a valid one is prefetched, else None (never waits on the network)."""
        return self._buf.try_take()

    async def next_id(self):
        """The next ID (an int)."""
        if self._loop is None:
            self._bind()
        v = self._buf.try_take()
        if v is not None:
            return v
        self._check_open()
        self._bind()
        async with self._alock:
            strikes = 0
            while True:
                v = self._buf.try_take()
                if v is not None:
                    return v
                strikes = await self._refill_for(self._prefetch, strikes)

    async def next_ids(self, n):
        """``n`` IDs (a list of ints)."""
        n = _int_option("n", n, 0, 1 << 30)
        self._bind()
        out = self._buf.take_many(n)
        if len(out) < n:
            self._check_open()
            async with self._alock:
                strikes = 0
                while len(out) < n:
                    out += self._buf.take_many(n - len(out))
                    if len(out) < n:
                        strikes = await self._refill_for(min(MAX_COUNT, max(self._prefetch, n - len(out))), strikes)
        return out

    def stats(self):
        return _stats(self._buf, self._fetcher)

    def _forked(self):
        self._buf.clear()
        self._loop = None
        self._task = None
        self._alock = None
        self._fetcher.lock = threading.Lock()
        self._fetcher.conn = None

    async def aclose(self):
        """Drops the prefetched IDs, waits for a refill in flight, closes the connection. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._buf.close()
        task = self._task
        if task is not None and not task.done():
            try:
                await task
            except BaseException:  # noqa: BLE001 (closing: a failed refill does not matter)
                pass
        await asyncio.to_thread(self._close_conn)

    def _close_conn(self):
        with self._fetcher.lock:
            self._fetcher.reset()

    async def __aenter__(self):
        return self

    async def __aexit__(self, exc_type, exc, tb):
        await self.aclose()

    def __repr__(self):
        state = "closed" if self._closed else f"available={self._buf.available()}"
        return f"AsyncClient(url={self.url!r}, prefetch={self._prefetch}, {state})"
