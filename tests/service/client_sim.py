"""The seeded fault layer of fake_service.py for the clients' simulations (bindings-python/tests/
test_client_sim.py over `snowmint.Client`, tests/js/client-sim.mjs over the JS `Client` and
`OfflineGenerator`). Standard library only.

Behind it the service is correct (SPEC §6a): `/v1/ids` hands out the stand-in's shared counter, so no ID
goes to two requests; `/v1/leases` grants a new node ID per lease with a reservation `start..limit` of
positions (the `twitter` layout: a minute past the clock), renewed by its token. Each simulated client
talks to its own base URL, `/sim/NAME`, so the layer keeps a history per client and decides each fault
from `random.Random(f"{seed}/{NAME}/{route}/{k}")` (k: that client's k-th request on that route): the
same seed gives every client the same faults whatever the other clients do, so a failure replays.

Faults on `/v1/ids` (each answer carries only IDs the service handed to THIS client, so a client that
refuses what it must can keep every invariant):
  lost       the request is applied, its answer never sent (the connection closes; one in four waits
             `hang_ms` first, past the client's timeout): the client re-sends
  dropped    applied; the headers and half the body sent, then the connection drops
  duplicate  applied; the answer delivered before is delivered again (this one is kept back)
  stale      not applied; an earlier answer replayed (a cache or proxy)
  late       applied; an answer kept back earlier is delivered now (this one is kept back in its place)
  lagging    not applied; an instance that lags answers a batch of IDs this client was sent before,
             starting at or below the highest of them (a failover going backward)
Faults on the lease routes:
  dropped            applied, no answer (the connection closes)
  start_above_limit  a grant answered with `start` one above its `limit`
  new_token          a renewal applied and answered with a token the service never issued
A renewal naming a token the service did not issue to that client is answered 404 LEASE_LOST (the
service is correct) and recorded as a violation: a client never presents a token it was not granted.

Controls (fake_service.py routes them here):
  POST /_test/sim/start?seed=S&rate=P[&hang_ms=N]  a new world (fresh histories, grants and log)
  POST /_test/sim/faults?rate=P                    change the rate (0: the faults stop)
  GET  /_test/sim/log    {"faults": {KIND: N}, "regressions": N, "violations": [...],
                          "grants": {NAME: [{"node_id", "start", "limit"}]}}
`regressions` counts the answers delivered that start at or below an ID delivered to that client before
(a repeated or backward batch): what the clients' batch checks must refuse.
"""

import random
import time

TWITTER_EPOCH_MS = 1288834974657
SEQUENCE_BITS = 12
LEASE_MS = 60_000
ID_FAULTS = ("lost", "dropped", "duplicate", "stale", "late", "lagging")
GRANT_FAULTS = ("dropped", "start_above_limit")
RENEW_FAULTS = ("dropped", "start_above_limit", "new_token")


def position(unix_ms):
    """The first position of the `twitter` tick of `unix_ms`."""
    return (unix_ms - TWITTER_EPOCH_MS) << SEQUENCE_BITS


class Client:
    """One simulated client's history."""

    def __init__(self):
        self.requests = {}  # route -> requests so far
        self.delivered = []  # answers (dicts) sent in full, oldest first
        self.kept = []  # answers applied but not delivered (yet): what a late delivery sends
        self.sent_ids = []  # every ID delivered to this client, ascending
        self.high = None  # the highest ID delivered


class World:
    def __init__(self, seed, rate, hang_ms):
        self.seed, self.rate, self.hang_ms = seed, rate, hang_ms
        self.clients = {}
        self.faults = {}
        self.regressions = 0
        self.violations = []
        self.grants = {}  # token -> {"client", "node_id", "start", "limit"}
        self.nodes = 0

    def client(self, name):
        return self.clients.setdefault(name, Client())

    def fault(self, name, route, kinds):
        """The fault of this client's next request on `route` (None: answer correctly)."""
        c = self.client(name)
        k = c.requests.get(route, 0)
        c.requests[route] = k + 1
        rng = random.Random(f"{self.seed}/{name}/{route}/{k}")
        if rng.random() >= self.rate:
            return None, rng
        return rng.choice(kinds), rng

    def count(self, kind):
        self.faults[kind] = self.faults.get(kind, 0) + 1

    def log(self):
        grants = {}
        for g in self.grants.values():
            grants.setdefault(g["client"], []).append(
                {"node_id": g["node_id"], "start": str(g["start"]), "limit": str(g["limit"])})
        return {"faults": self.faults, "regressions": self.regressions, "violations": self.violations,
                "grants": grants}

    # --- /v1/ids ----------------------------------------------------------------------------------

    def ids(self, name, n, allocate, validity):
        """What to do with one `/v1/ids?count=n` request: ("answer", 200, doc), ("close", hang_s) or
        ("partial", doc). `allocate(n)` hands out n IDs of the shared counter (the request applied) and
        returns the first."""
        kind, rng = self.fault(name, "ids", ID_FAULTS)
        c = self.client(name)
        same = [a for a in c.delivered if len(a["ids"]) == n]

        def batch(first_ids):
            now = int(time.time() * 1000)
            return {"ids": [str(i) for i in first_ids], "valid_until": now + validity, "valid_for_ms": validity,
                    "layout": "twitter", "node_id": 0}

        if kind == "stale" and same:
            return self.deliver(c, kind, rng.choice(same))
        if kind == "lagging" and len(c.sent_ids) >= n:
            at = rng.randrange(0, len(c.sent_ids) - n + 1)
            return self.deliver(c, kind, batch(c.sent_ids[at:at + n]))
        first = allocate(n)
        doc = batch(range(first, first + n))
        if kind == "lost":
            self.count(kind)
            c.kept.append(doc)
            return "close", (self.hang_ms / 1000 if rng.random() < 0.25 else 0)
        if kind == "dropped":
            self.count(kind)
            c.kept.append(doc)
            return "partial", doc
        if kind == "duplicate" and same:
            c.kept.append(doc)
            return self.deliver(c, kind, same[-1])
        late = [a for a in c.kept if len(a["ids"]) == n]
        if kind == "late" and late:
            c.kept.remove(late[0])
            c.kept.append(doc)
            return self.deliver(c, kind, late[0])
        return self.deliver(c, None, doc)

    def deliver(self, c, kind, doc):
        if kind is not None:
            self.count(kind)
        ids = [int(i) for i in doc["ids"]]
        if c.high is not None and ids[0] <= c.high:
            self.regressions += 1
        c.high = max(ids[-1], c.high or 0)
        c.sent_ids = sorted(set(c.sent_ids).union(ids))
        c.delivered.append(doc)
        return "answer", 200, doc

    # --- /v1/leases -------------------------------------------------------------------------------

    def lease_answer(self, status, token, g, kind, rng):
        """The answer of grant `g` under `token` with fault `kind` (None: the correct one)."""
        if kind is not None:
            self.count(f"lease_{kind}")
        if kind == "dropped":
            return "close", 0
        now = int(time.time() * 1000)
        doc = {"token": token, "node_id": g["node_id"], "layout": "twitter", "sequencer": "clients",
               "start": str(g["start"]), "limit": str(g["limit"]), "limit_unix_ms": now + LEASE_MS,
               "expires_unix_ms": now + LEASE_MS + 10_000, "renew_after_ms": 3_600_000,
               "fencing_token": str(g["node_id"] + 1)}
        if kind == "start_above_limit":
            doc["start"] = str(g["limit"] + 1)
        if kind == "new_token":
            doc["token"] = f"sim.{g['client']}.{g['node_id']}.{rng.getrandbits(32):08x}-other"
        return "answer", status, doc

    def grant(self, name):
        """POST /v1/leases: ("answer", status, doc) or ("close", 0)."""
        kind, rng = self.fault(name, "grant", GRANT_FAULTS)
        now = int(time.time() * 1000)
        node = self.nodes
        self.nodes += 1
        token = f"sim.{name}.{node}.{rng.getrandbits(32):08x}"
        g = {"client": name, "node_id": node, "start": position(now), "limit": position(now + LEASE_MS)}
        self.grants[token] = g
        return self.lease_answer(201, token, g, kind, rng)

    def renew(self, name, token):
        """POST /v1/leases/TOKEN/renew: ("answer", status, doc) or ("close", 0)."""
        g = self.grants.get(token)
        if g is None or g["client"] != name:
            self.violations.append(f"{name} renewed with a token the service did not issue to it: {token}")
            return "answer", 404, {"error": {"code": "LEASE_LOST", "message": "no such lease"}}
        kind, rng = self.fault(name, "renew", RENEW_FAULTS)
        g["limit"] = max(g["limit"], position(int(time.time() * 1000) + LEASE_MS))
        return self.lease_answer(200, token, g, kind, rng)
