#!/usr/bin/env python3
"""Real servers, real faults, bounded (scripts/chaos.sh starts the servers and runs this).

Two phases, each a fleet of processes minting while the driver injects faults; every ID of every process
is checked at the end, and the figures are printed as a table.

etcd (3 members): holders of node-ID leases, three each through the Python and Node bindings and the Rust
crate (scripts/fleet/worker.py, worker.mjs, coord/examples/fleet_worker.rs), nine on a sequencer of six
node IDs with a 1 s TTL, so three always wait for a free node. The driver SIGSTOPs holders (at most three
at a time) for 2.5 s, past their TTL: a waiting holder takes the node ID (a hand-over); the paused one,
resumed, mints at most up to the reservation it held, then fails with LEASE_LOST and claims again. Meanwhile the etcd leader is
SIGKILLed and restarted, or SIGSTOPped past the election timeout, then a follower is paused, and two range-sequence processes (two
datacenters, ranges of 50 values) keep moving ranges from the global row.

PostgreSQL: on one sequencer of five node IDs, holders (Python, Node, Rust, one each, and a second Python
one; 2 s TTL), the ID service (`snowmint serve`, its own node ID a 5 s lease, restarted when it loses it)
and a Node client-lease holder of the service (4 s lease TTL), with a Python and a Node batch client of
the service, and two range-sequence processes, all through a TCP proxy that, in fault windows, forwards requests and drops the answer (the statement ran, committed, and
the client never hears of it), while the server is SIGKILLed and restarted and holders are paused.

Checks: 0 duplicate IDs over every process (holders, service clients, client leases: one twitter-layout
ID space); 0 duplicate range values; every process's IDs strictly increasing under each claim (and for
batch clients and range processes, over the whole run); every ID carries the node ID of the claim it
was minted under; for each node ID, every ID of a claim is below every ID of the next claim (fencing
token order) — whatever the paused holder minted after it resumed; at least 20 hand-overs on etcd, each
asserted from the logs: the node ID was claimed (higher fencing token) while its previous holder was
stopped, and that holder reported LEASE_LOST for it after it resumed.

    scripts/chaos.py [--long]     (environment: see scripts/chaos.sh)
"""
import json
import os
import random
import signal
import socket
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLEET = os.path.join(ROOT, "scripts", "fleet")
SERVERS = os.path.join(ROOT, "scripts", "servers.sh")
LONG = "--long" in sys.argv[1:]
ETCD_SECONDS = 300 if LONG else 50
PG_SECONDS = 240 if LONG else 40
MIN_HANDOVERS = 20
PAUSE_S = 2.5  # past the etcd holders' 1 s TTL and the PostgreSQL holders' 2 s
RESUMED_MARGIN_S = 6  # a resumed holder mints to its ceiling (about 1 s), then LEASE_LOST
COUNT = 10**9  # IDs per holder: bounded by time, not by count


def env(name):
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"chaos: {name} is not set (run scripts/chaos.sh)")
    return value


def servers(*command):
    subprocess.run(["bash", SERVERS, *command], check=True, stdout=subprocess.DEVNULL)


class Proc:
    """A participant: its process, output file and pauses; what it minted, once parsed."""

    def __init__(self, name, cmd, work):
        self.name = name
        self.out_path = os.path.join(work, name + ".out")
        self.err_path = os.path.join(work, name + ".err")
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        self.pauses = []  # (stopped, resumed), Unix ms
        self.read_to, self.claimed = 0, False  # holding()
        self.stopped_at = None

    def stop(self):
        self.stopped_at = time.time() * 1000
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)
        self.pauses.append((self.stopped_at, time.time() * 1000))
        self.stopped_at = None

    def holding(self):
        """Whether its last claim is still on (its output's last status line is a claim); reads what
        was written since the last call."""
        with open(self.out_path, "rb") as f:
            f.seek(self.read_to)
            new = f.read()
        new = new[: new.rfind(b"\n") + 1]
        self.read_to += len(new)
        for line in new.split(b"\n"):
            if line[:4] in (b"node", b"lost"):
                self.claimed = line.startswith(b"node")
        return self.claimed

    def paused_at(self, ms):
        return any(a <= ms <= b for a, b in self.pauses)

    def finish(self, timeout):
        if self.stopped_at is not None:
            self.resume()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "timeout"

    def parse(self):
        """Its claims ({node, token, at: Unix ms, ids, lost: the code that ended it or None}), the IDs
        written outside any claim (batch clients, range processes) and the codes of its failed calls."""
        claims, loose, errors = [], [], []
        with open(self.out_path) as f:
            for line in f:
                if not line.endswith("\n"):
                    break  # a partial last line
                w = line.split()
                if w[0] == "node":
                    claims.append({"node": int(w[1]), "token": int(w[3]), "at": int(w[5]), "ids": [], "lost": None})
                elif w[0] == "lost":
                    claims[-1]["lost"] = w[4]
                elif w[0] == "error":
                    errors.append(w[1])
                elif claims:
                    claims[-1]["ids"].append(int(w[0]))
                else:
                    loose.append(int(w[0]))
        return claims, loose, errors


# ------------------------------------------------------------------------------------------------ proxy
class DropProxy:
    """A TCP proxy to PostgreSQL. While `active`, a request is forwarded and, with probability `rate`,
    its answer is dropped: the server's first reply after it is read and thrown away and both
    connections are closed, so the statement ran (and committed) but the client never hears of it."""

    def __init__(self, port, rate=0.02):
        self.target = ("127.0.0.1", port)
        self.rate, self.active, self.dropped = rate, False, 0
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closing = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=2)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            state = {"drop": False}
            threading.Thread(target=self.pump, args=(client, server, state, True), daemon=True).start()
            threading.Thread(target=self.pump, args=(server, client, state, False), daemon=True).start()

    def pump(self, src, dst, state, request):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if request:
                    if self.active and random.random() < self.rate:
                        state["drop"] = True
                elif state["drop"]:
                    with self.lock:
                        self.dropped += 1
                    break  # the answer to a request that ran: dropped, and the connection with it
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self.closing = True
        self.listener.close()


# ------------------------------------------------------------------------------------------------ etcd
def etcd_leader(endpoints):
    """The 1-based member index of the leader, as the members report it; None during an election."""
    ids, leader = [], None
    for ep in endpoints:
        try:
            req = urllib.request.Request(f"http://{ep}/v3/maintenance/status", data=b"{}", method="POST")
            with urllib.request.urlopen(req, timeout=1) as r:
                v = json.load(r)
        except OSError:
            ids.append(None)
            continue
        ids.append(v.get("header", {}).get("member_id"))
        leader = v.get("leader", leader)
    return ids.index(leader) + 1 if leader in ids else None


def wait_leader(endpoints, within=30):
    t0 = time.monotonic()
    while time.monotonic() - t0 < within:
        leader = etcd_leader(endpoints)
        if leader:
            return leader
        time.sleep(0.1)
    raise SystemExit("chaos: no etcd leader within 30 s")


# ------------------------------------------------------------------------------------------- launching
def holders(tools, source, seconds, work, tag, runtimes):
    procs = []
    for runtime, n in runtimes:
        for i in range(1, n + 1):
            cmd = {
                "python": [tools["python"], os.path.join(FLEET, "worker.py"), source, str(COUNT), str(seconds)],
                "node": ["node", os.path.join(FLEET, "worker.mjs"), tools["node_pkg"], source, str(COUNT), str(seconds)],
                "rust": [tools["rust_worker"], source, str(COUNT), str(seconds)],
            }[runtime]
            procs.append(Proc(f"{tag}-{runtime}-{i}", cmd, work))
    return procs


def range_procs(tools, global_store, local_store, seconds, work, tag):
    return [
        Proc(f"{tag}-range-{dc}",
             [tools["python"], __file__, "range-worker", global_store, local_store, dc, str(seconds)], work)
        for dc in ("a", "b")
    ]


def paced(seconds, take):
    """Writes what `take()` returns (20 values), one per line, every 20 ms for SECONDS; a failed call
    (the store or the service down past its bound) prints `error CODE` and the loop goes on."""
    import snowmint

    deadline = time.monotonic() + float(seconds)
    while time.monotonic() < deadline:
        try:
            sys.stdout.write("".join(f"{v}\n" for v in take()))
        except snowmint.SnowmintError as e:
            sys.stdout.write(f"error {e.code}\n")
            time.sleep(0.1)
        sys.stdout.flush()
        time.sleep(0.02)


def range_worker(global_store, local_store, dc, seconds):
    """A range-sequence process (`chaos.py range-worker …`), small ranges so that they move often; opened
    again until it opens (the stores may be down at first)."""
    import snowmint

    seq = []

    def take():
        if not seq:
            seq.append(snowmint.RangeSequence("chaos", dc=dc, global_store=global_store, local_store=local_store,
                                              dc_range=500, process_range=50, wait_ms=1000))
        return seq[0].next_ids(20)

    paced(seconds, take)


def client_worker(url, seconds):
    """A Python batch client of the ID service (`chaos.py client-worker …`)."""
    import snowmint

    with snowmint.Client(url, prefetch=100, timeout_ms=1000, retries=1) as client:
        paced(seconds, lambda: client.next_ids(20))


class Service:
    """`snowmint serve` on a fixed port, restarted (as a supervisor would) when it exits or reports its
    own lease lost (/healthz 503)."""

    def __init__(self, serve, node_source, work):
        self.serve, self.node_source, self.work = serve, node_source, work
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.restarts, self.proc, self.n = 0, None, 0
        self.start()

    def start(self):
        self.n += 1
        with open(os.path.join(self.work, f"serve-{self.n}.log"), "wb") as log:
            self.proc = subprocess.Popen(
                [self.serve, "serve", "--listen", f"127.0.0.1:{self.port}", "--node", self.node_source,
                 "--lease-ttl", "4s", "--lease-reservation", "2s", "--validity", "10s",
                 # A lease client retaking after a loss while its lost claim still counts (5 node IDs).
                 "--max-unauthenticated-leases", "5"],
                stdout=log, stderr=subprocess.STDOUT)

    def healthy(self):
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                return r.status == 200
        except OSError as e:
            return getattr(e, "code", None) != 503

    def supervise(self):
        if self.proc.poll() is not None or not self.healthy():
            self.stop()
            self.restarts += 1
            self.start()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def create_sequencer(tools, store, name, nodes):
    subprocess.run([tools["python"], "-c", "import snowmint, sys; snowmint.Sequencer.create(sys.argv[2], "
                    "store=sys.argv[1], layout='twitter', node_count=int(sys.argv[3]))", store, name, str(nodes)],
                   check=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -------------------------------------------------------------------------------------------- chaos
def pause_holders(procs, now, end, max_paused, figures):
    """Resumes holders paused PAUSE_S ago; pauses another (a random one holding a node ID, not one
    waiting for a free node) while fewer than `max_paused` are stopped and the phase has time left for
    it to resume and see LEASE_LOST."""
    for p in procs:
        if p.stopped_at is not None and now * 1000 - p.stopped_at >= PAUSE_S * 1000:
            p.resume()
    stopped = sum(p.stopped_at is not None for p in procs)
    if stopped >= max_paused or now >= end - PAUSE_S - RESUMED_MARGIN_S:
        return
    holding = [p for p in procs if p.stopped_at is None and p.proc.poll() is None and p.holding()]
    if holding:
        random.choice(holding).stop()
        figures["holder pauses"] += 1


def phase_etcd(tools, work, figures):
    endpoints = env("SNOWMINT_TEST_ETCD_ENDPOINTS").split(",")
    store = f"etcd://{','.join(endpoints)}/snowmint-chaos"
    create_sequencer(tools, store, "chaos", 6)
    source = f"{store}?sequencer=chaos&ttl=1s"
    procs = holders(tools, source, ETCD_SECONDS, work, "etcd", [("python", 3), ("node", 3), ("rust", 3)])
    ranges = range_procs(tools, store + "-range", store + "-range", ETCD_SECONDS, work, "etcd")
    t0 = time.time()
    end = t0 + ETCD_SECONDS
    next_leader_fault, n_fault = t0 + 5, 0
    while time.time() < end:
        now = time.time()
        pause_holders(procs, now, end, 3, figures)
        # A fault blocks this loop for up to 5 s (paused holders resume late): none near the end, so that
        # every holder resumes RESUMED_MARGIN_S before its deadline.
        if now >= next_leader_fault and now < end - 15:
            leader = wait_leader(endpoints)
            if n_fault % 2 == 0:
                servers("etcd_kill", str(leader))
                time.sleep(1.5)
                servers("etcd_restart", str(leader))
                figures["etcd leader SIGKILLed + restarted"] += 1
            else:
                servers("etcd_pause", str(leader))
                time.sleep(2.0)
                servers("etcd_resume", str(leader))
                figures["etcd leader SIGSTOPped 2 s"] += 1
            follower = random.choice([m for m in range(1, len(endpoints) + 1) if m != wait_leader(endpoints)])
            servers("etcd_pause", str(follower))
            time.sleep(0.8)
            servers("etcd_resume", str(follower))
            figures["etcd follower SIGSTOPped 0.8 s"] += 1
            n_fault += 1
            next_leader_fault = time.time() + 8
        time.sleep(0.25)
    return procs, ranges


def phase_postgres(tools, work, figures):
    pg_url = env("SNOWMINT_TEST_POSTGRES_URL")
    pg_port = int(pg_url.rsplit(":", 1)[1].split("/")[0])
    proxy = DropProxy(pg_port)
    via = pg_url.replace(f":{pg_port}/", f":{proxy.port}/")
    # One sequencer, one ID space: the holders, the service's own node ID and its client leases.
    create_sequencer(tools, via, "pgchaos", 5)
    source = f"{via}?sequencer=pgchaos&ttl=2s"
    procs = holders(tools, source, PG_SECONDS, work, "pg", [("python", 2), ("node", 1), ("rust", 1)])
    ranges = range_procs(tools, via, via, PG_SECONDS, work, "pg")
    service = Service(tools["serve"], f"{via}?sequencer=pgchaos&ttl=5s", work)
    time.sleep(1)
    clients = [
        Proc("svc-python-batches", [tools["python"], __file__, "client-worker", service.url,
                                              str(PG_SECONDS)], work),
        Proc("svc-node-batches", ["node", os.path.join(FLEET, "client.mjs"), tools["node_pkg"],
                                            service.url, str(PG_SECONDS), "batches"], work),
        Proc("svc-node-lease", ["node", os.path.join(FLEET, "client.mjs"), tools["node_pkg"],
                                          service.url, str(PG_SECONDS), "lease"], work),
    ]
    t0 = time.time()
    end = t0 + PG_SECONDS
    next_kill, proxy_until = t0 + 6, 0
    while time.time() < end:
        now = time.time()
        pause_holders(procs + clients[2:], now, end, 1, figures)
        if now >= next_kill and now < end - 12:
            servers("pg_kill")
            figures["PostgreSQL SIGKILLed + restarted"] += 1
            time.sleep(1.0)
            servers("pg_restart")
            next_kill = time.time() + 9
            proxy.active, proxy_until = True, time.time() + 3  # answers dropped while everyone reconnects
        if proxy.active and now >= proxy_until:
            proxy.active = False
        service.supervise()
        time.sleep(0.25)
    proxy.active = False
    figures["PostgreSQL answers dropped after commit"] = proxy.dropped
    figures["service restarts (own lease lost)"] = service.restarts
    return procs + clients, ranges, (service, proxy)


# ------------------------------------------------------------------------------------------------ checks
def check(procs, ranges, figures, failures, tag):
    every, values = [], []
    by_node = {}
    for p in procs:
        claims, loose, _ = p.parse()
        ids = loose[:]
        if loose and any(b <= a for a, b in zip(loose, loose[1:])):
            failures.append(f"{p.name}: its IDs are not strictly increasing")
        for c in claims:
            ids += c["ids"]
            if any(b <= a for a, b in zip(c["ids"], c["ids"][1:])):
                failures.append(f"{p.name}: IDs of its claim of node {c['node']} not strictly increasing")
            wrong = [i for i in c["ids"] if (i >> 12) & 0x3FF != c["node"]]
            if wrong:
                failures.append(f"{p.name}: {len(wrong)} IDs outside node {c['node']} it claimed")
            by_node.setdefault(c["node"], []).append((c["token"], p, c))
            if c["lost"]:
                figures[f"{tag}: claims ended by {c['lost']}"] = figures.get(f"{tag}: claims ended by {c['lost']}", 0) + 1
        every += ids
        p.minted = len(ids)
        if not ids:
            failures.append(f"{p.name} minted nothing")
    for p in ranges:
        _, loose, errors = p.parse()
        if any(b <= a for a, b in zip(loose, loose[1:])):
            failures.append(f"{p.name}: its values are not strictly increasing")
        values += loose
        p.minted = len(loose)
        if not loose:
            failures.append(f"{p.name} took no range value")
    handovers, claims_total = 0, 0
    for node, claims in by_node.items():
        claims.sort(key=lambda t: t[0])
        claims_total += len(claims)
        for (t1, a, c1), (t2, b, c2) in zip(claims, claims[1:]):
            if t1 == t2:
                failures.append(f"node {node}: fencing token {t1} claimed twice ({a.name}, {b.name})")
            if c1["ids"] and c2["ids"] and max(c1["ids"]) >= min(c2["ids"]):
                failures.append(f"node {node}: {b.name} (token {t2}) minted {min(c2['ids'])}, not above "
                                f"{max(c1['ids'])} of {a.name} (token {t1})")
            if a is not b and a.paused_at(c2["at"]):
                handovers += 1
                # Every pause ends at least RESUMED_MARGIN_S before the phase does: time to find out.
                if c1["lost"] != "LEASE_LOST":
                    failures.append(f"node {node}: {a.name} resumed after {b.name} took it but never "
                                    f"reported LEASE_LOST for token {t1}")
    dup = len(every) - len(set(every))
    dup_values = len(values) - len(set(values))
    if dup:
        failures.append(f"{tag}: {dup} duplicate IDs")
    if dup_values:
        failures.append(f"{tag}: {dup_values} duplicate range values")
    figures[f"{tag}: IDs checked"] = len(every)
    figures[f"{tag}: range values checked"] = len(values)
    figures[f"{tag}: claims"] = claims_total
    figures[f"{tag}: hand-overs (node taken while its holder was stopped)"] = handovers
    figures[f"{tag}: duplicates"] = dup + dup_values
    return handovers


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "range-worker":
        return range_worker(*sys.argv[2:6])
    if len(sys.argv) > 1 and sys.argv[1] == "client-worker":
        return client_worker(*sys.argv[2:4])
    tools = {"python": env("SNOWMINT_CHAOS_PYTHON"), "node_pkg": env("SNOWMINT_CHAOS_NODE_PKG"),
             "rust_worker": env("SNOWMINT_CHAOS_RUST_WORKER"), "serve": env("SNOWMINT_SERVE")}
    figures = {k: 0 for k in ("holder pauses", "etcd leader SIGKILLed + restarted", "etcd leader SIGSTOPped 2 s",
                              "etcd follower SIGSTOPped 0.8 s", "PostgreSQL SIGKILLed + restarted")}
    failures = []
    t_start = time.time()
    work = env("SNOWMINT_CHAOS_WORK")
    os.makedirs(work, exist_ok=True)
    print(f"chaos: etcd phase, {ETCD_SECONDS} s: 9 holders (Python, Node, Rust) on 6 node IDs, 1 s TTL, "
          f"2 range processes; holders paused {PAUSE_S} s, the leader killed and paused", flush=True)
    procs, ranges = phase_etcd(tools, work, figures)
    everyone = procs + ranges
    for p in everyone:
        if p.finish(30) != 0:
            failures.append(f"{p.name} exited {p.proc.returncode}: {open(p.err_path).read().strip()[-800:]}")
    etcd_handovers = check(procs, ranges, figures, failures, "etcd")
    if etcd_handovers < MIN_HANDOVERS:
        failures.append(f"etcd: {etcd_handovers} hand-overs, fewer than {MIN_HANDOVERS}")
    print(f"chaos: PostgreSQL phase, {PG_SECONDS} s: 4 holders, the ID service and its client lease on 5 node IDs, "
          f"Python and Node clients of the service, 2 range processes; SIGKILL + restart, answers "
          f"dropped after commit", flush=True)
    procs, ranges, (service, proxy) = phase_postgres(tools, work, figures)
    for p in procs + ranges:
        if p.finish(30) != 0:
            failures.append(f"{p.name} exited {p.proc.returncode}: {open(p.err_path).read().strip()[-800:]}")
    service.stop()
    proxy.close()
    check(procs, ranges, figures, failures, "postgres")
    print()
    print(f"  {'process':<22} {'minted':>9}  {'claims':>6}  pauses")
    for p in everyone + procs + ranges:
        claims, _, errors = p.parse()
        print(f"  {p.name:<22} {p.minted:>9,}  {len(claims):>6}  {len(p.pauses)}"
              + (f"  ({len(errors)} failed calls retried)" if errors else ""))
    print()
    for k, v in figures.items():
        print(f"  {k:<58} {v:>10,}")
    print(f"  {'seconds':<58} {time.time() - t_start:>10.0f}")
    for f in failures:
        print(f"CHAOS FAILED: {f}", file=sys.stderr)
    if failures:
        print(f"chaos: every process's output and the service's logs are in {work}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
