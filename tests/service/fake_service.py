#!/usr/bin/env python3
"""A stand-in for `snowmint serve` speaking the `/v1/ids` part of the service protocol (SPEC §6a), for
the client tests of every binding (Python, Node, WASM in Node). Standard library only.

It is not the service: IDs are a strictly increasing counter shared by every request (what the clients
must keep unique), not Snowflakes. On top of the protocol it has test controls:

  POST /_test/fail?status=503&code=STORE_UNAVAILABLE&times=2[&field=count][&retry_after_ms=5]
       the next `times` requests to /v1/ids answer that error (times=-1: until reset)
  POST /_test/garbage?times=1   the next requests answer 200 with a body that is not the protocol
  POST /_test/misbehave?mode=M[&bytes=N][&interval_ms=N]
       from now on (until reset), /v1/ids misbehaves: `repeat` answers the same IDs in every batch,
       `backward` answers each batch below the one before, `trickle` sends its answer one byte every
       `interval_ms` (default 1500), `huge` pads a correct answer with `bytes` spaces (default 300 MB),
       `valid_for` answers `valid_for_ms` as given (an integer of any size);
       the lease routes: `lease_start_above_limit` answers leases whose start is above their limit,
       `lease_ahead` leases that start 60 s past the clock (an embedded store's `?max_ahead=60s`),
       `renew_new_token` renews with another token than the lease's, `lease_huge` pads a correct lease
       answer with `bytes` spaces, `same_node_lost` answers every renewal 409 LEASE_LOST and every new
       lease with node ID 0 from the same start (a service restored from a backup);
       every route: `redirect` answers 307 to `to` (another origin)
  POST /_test/reset             clears all of them
  GET  /_test/stats             {"requests": N, "ids": N, "bytes_sent": N}

  POST /v1/leases, POST /v1/leases/{token}/renew, DELETE /v1/leases/{token}: leases of node IDs 0, 1, …
  (no store: enough for the clients' checks of lease answers).

  /sim/NAME/v1/ids, /sim/NAME/v1/leases…: the same protocol for simulated client NAME behind the seeded
  fault layer of client_sim.py (its controls: /_test/sim/start, /_test/sim/faults, /_test/sim/log).

Usage: fake_service.py [--validity MS] [--delay-ms MS]; prints `listening http://127.0.0.1:PORT` once ready
and serves until killed.
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import client_sim

LOCK = threading.RLock()  # send() counts bytes under it, and is called under it
STATE = {"next": 1_000_000_000_000, "requests": 0, "ids": 0, "fail": None, "fail_times": 0, "garbage": 0,
         "misbehave": None, "bytes_sent": 0, "leases": 0, "sim": None}
OPTS = argparse.Namespace()


def error_body(code, message, field=None, retry_after_ms=None):
    err = {"code": code, "message": message}
    if field is not None:
        err["field"] = field
    if retry_after_ms is not None:
        err["retry_after_ms"] = retry_after_ms
    return {"error": err}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, doc, pad=0, interval_ms=None):
        body = json.dumps(doc).encode()
        # One write (headers and body together): two small writes meet Nagle and delayed ACKs.
        head = (f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body) + pad}\r\n\r\n").encode()
        if interval_ms is not None:
            # Trickling: one byte at a time, for as long as the client listens.
            for b in head + body:
                self.wfile.write(bytes([b]))
                self.wfile.flush()
                time.sleep(interval_ms / 1000)
            return
        self.wfile.write(head + body)
        sent = len(head) + len(body)
        chunk = b" " * (1 << 20)
        while pad > 0:
            n = min(pad, len(chunk))
            try:
                self.wfile.write(chunk[:n])
            except OSError:
                break  # the client stopped reading
            pad -= n
            sent += n
        self.wfile.flush()
        with LOCK:
            STATE["bytes_sent"] += sent

    def redirected(self, path):
        """Answers 307 to the `redirect` target if that mode is on; whether it did."""
        with LOCK:
            bad = STATE["misbehave"] or {}
        if bad.get("mode") != "redirect":
            return False
        body = b"{}"
        self.wfile.write((f"HTTP/1.1 307 X\r\nlocation: {bad['to']}{path}\r\n"
                          f"content-length: {len(body)}\r\n\r\n").encode() + body)
        self.wfile.flush()
        return True

    def lease(self, status, node, token):
        with LOCK:
            bad = STATE["misbehave"] or {}
        mode = bad.get("mode")
        start, limit = 1 << 30, (1 << 30) + (1 << 28)
        if mode == "lease_start_above_limit":
            start, limit = limit + 1, limit
        now = int(time.time() * 1000)
        limit_ms = now + 60_000
        if mode == "lease_ahead":
            # The twitter layout's positions (ms ticks, 12 sequence bits), starting 60 s past the clock.
            start = (now + 60_000 - 1288834974657) << 12
            limit, limit_ms = start + (1_000 << 12), now + 61_000
        self.send(status, {
            "token": token, "node_id": node, "layout": "twitter", "sequencer": "clients",
            "start": str(start), "limit": str(limit), "limit_unix_ms": limit_ms,
            "expires_unix_ms": now + 70_000, "renew_after_ms": 20_000, "fencing_token": str(node + 1),
        }, pad=bad["bytes"] if mode == "lease_huge" else 0)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/_test/stats":
            with LOCK:
                self.send(200, {"requests": STATE["requests"], "ids": STATE["ids"], "bytes_sent": STATE["bytes_sent"]})
        elif url.path == "/_test/sim/log":
            with LOCK:
                self.send(200, STATE["sim"].log() if STATE["sim"] else {})
        elif url.path == "/healthz":
            self.send(200, {"status": "ok", "node_id": 0, "layout": "twitter"})
        elif url.path == "/v1/ids":
            self.send(405, error_body("INVALID_ARGUMENT", "method GET not allowed on /v1/ids", "method"))
        else:
            self.send(404, error_body("INVALID_ARGUMENT", f"no route {url.path}", "path"))

    def do_POST(self):
        url = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        if url.path == "/_test/fail":
            with LOCK:
                STATE["fail"] = (int(q.get("status", 503)), q.get("code", "STORE_UNAVAILABLE"), q.get("field"),
                                 int(q["retry_after_ms"]) if "retry_after_ms" in q else None)
                STATE["fail_times"] = int(q.get("times", 1))
            return self.send(200, {})
        if url.path == "/_test/garbage":
            with LOCK:
                STATE["garbage"] = int(q.get("times", 1))
            return self.send(200, {})
        if url.path == "/_test/misbehave":
            with LOCK:
                STATE["misbehave"] = {"mode": q.get("mode"), "bytes": int(q.get("bytes", 300 << 20)),
                                      "to": q.get("to", ""),
                                      "interval_ms": int(q.get("interval_ms", 1500)), "first": None,
                                      "valid_for_ms": int(q.get("valid_for_ms", OPTS.validity))}
            return self.send(200, {})
        if url.path == "/_test/sim/start":
            with LOCK:
                STATE["sim"] = client_sim.World(int(q["seed"]), float(q["rate"]), int(q.get("hang_ms", 0)))
            return self.send(200, {})
        if url.path == "/_test/sim/faults":
            with LOCK:
                STATE["sim"].rate = float(q["rate"])
            return self.send(200, {})
        if url.path.startswith("/sim/"):
            return self.simulated(url.path, q)
        if url.path == "/_test/reset":
            with LOCK:
                STATE["fail"], STATE["fail_times"], STATE["garbage"], STATE["misbehave"] = None, 0, 0, None
            return self.send(200, {})
        if self.redirected(self.path):
            return None
        if url.path == "/v1/leases":
            with LOCK:
                node = STATE["leases"]
                STATE["leases"] += 1
                if STATE["misbehave"] and STATE["misbehave"]["mode"] == "same_node_lost":
                    node = 0
            return self.lease(201, node, f"2.{node}.{node + 1}.tok")
        parts = url.path.split("/")
        if len(parts) == 5 and parts[:3] == ["", "v1", "leases"] and parts[4] == "renew":
            token = parts[3]
            node = int(token.split(".")[1])
            with LOCK:
                mode = STATE["misbehave"] and STATE["misbehave"]["mode"]
                if mode == "renew_new_token":
                    token += "-renewed"
            if mode == "same_node_lost":
                return self.send(409, error_body("LEASE_LOST", "the lease is gone", "token"))
            return self.lease(200, node, token)
        if url.path != "/v1/ids":
            return self.send(404, error_body("INVALID_ARGUMENT", f"no route {url.path}", "path"))
        if OPTS.delay_ms:
            time.sleep(OPTS.delay_ms / 1000)
        with LOCK:
            STATE["requests"] += 1
            if STATE["fail_times"] != 0:
                STATE["fail_times"] -= 1
                status, code, field, retry = STATE["fail"]
                return self.send(status, error_body(code, f"injected {code}", field, retry))
            if STATE["garbage"] > 0:
                STATE["garbage"] -= 1
                return self.send(200, {"ids": "not a list"})
            n = self.count(q)
            if n is None:
                return
            first = self.allocate(n)
            bad = STATE["misbehave"] or {}
            mode = bad.get("mode")
            if mode == "repeat":
                if bad["first"] is None:
                    bad["first"] = first
                first = bad["first"]
            elif mode == "backward":
                # Each batch below the one before it.
                first = (bad["first"] or first) - 2 * n
                bad["first"] = first
        now = int(time.time() * 1000)
        self.send(200, {
            "ids": [str(first + i) for i in range(n)],
            "valid_until": now + OPTS.validity,
            "valid_for_ms": bad["valid_for_ms"] if mode == "valid_for" else OPTS.validity,
            "layout": "twitter",
            "node_id": 0,
        }, pad=bad["bytes"] if mode == "huge" else 0, interval_ms=bad["interval_ms"] if mode == "trickle" else None)

    def count(self, q):
        """The request's count; None once a count outside 1..=10000 is answered 400."""
        text = q.get("count", "1")
        if not text.isdigit() or not 1 <= int(text) <= 10000:
            self.send(400, error_body("INVALID_ARGUMENT", f"count must be 1..=10000, got {text}", "count"))
            return None
        return int(text)

    def allocate(self, n):
        """n IDs of the shared counter (the caller holds LOCK); the first."""
        first = STATE["next"]
        STATE["next"] += n
        STATE["ids"] += n
        return first

    def simulated(self, path, q):
        """A request of simulated client NAME (/sim/NAME/…), through client_sim's fault layer."""
        _, _, name, *rest = path.split("/")
        route = "/" + "/".join(rest)
        with LOCK:
            STATE["requests"] += 1
            world = STATE["sim"]
            if world is None:
                return self.send(404, error_body("INVALID_ARGUMENT", "no simulation: POST /_test/sim/start", "path"))
            if route == "/v1/ids":
                n = self.count(q)
                if n is None:
                    return
                action = world.ids(name, n, self.allocate, OPTS.validity)
            elif route == "/v1/leases":
                action = world.grant(name)
            elif len(rest) == 4 and rest[:2] == ["v1", "leases"] and rest[3] == "renew":
                action = world.renew(name, unquote(rest[2]))
            else:
                return self.send(404, error_body("INVALID_ARGUMENT", f"no route {path}", "path"))
        if action[0] == "close":
            time.sleep(action[1])  # past the client's timeout, or none: then the connection closes unanswered
            self.close_connection = True
        elif action[0] == "partial":
            body = json.dumps(action[1]).encode()
            self.wfile.write((f"HTTP/1.1 200 X\r\ncontent-type: application/json\r\n"
                              f"content-length: {len(body)}\r\n\r\n").encode() + body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
        else:
            self.send(action[1], action[2])

    def do_DELETE(self):
        url = urlsplit(self.path)
        if url.path.startswith("/v1/leases/") or url.path.startswith("/sim/"):
            self.send_response_only(204)
            self.send_header("content-length", "0")
            self.end_headers()
            self.wfile.flush()
        else:
            self.send(404, error_body("INVALID_ARGUMENT", f"no route {url.path}", "path"))


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hangs up (a killed test, a timeout) is not the stand-in's error


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--validity", type=int, default=600_000)
    p.add_argument("--delay-ms", type=int, default=0)
    p.parse_args(namespace=OPTS)
    server = Server(("127.0.0.1", 0), Handler)
    print(f"listening http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
