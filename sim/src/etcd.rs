//! The network boundary of the etcd store, simulated: the real `EtcdStore` client (its HTTP code, its
//! timeouts, its re-sends on a fresh connection or the next endpoint, its compare-and-set rounds) talks
//! through [`SimNet`] (a `Dial` of the client's transport seam) to [`SimEtcd`], an in-memory etcd gateway
//! with etcd's semantics: one revision counter bumped by every write, create/mod revisions and versions
//! per key, transactions with the compares the client uses (on CREATE, MOD, VALUE; over a key or a
//! range), ranges, leases granted with a TTL in seconds that expire by simulated time and delete their
//! keys, keep-alives that answer TTL 0 for a lease that is gone (as etcd's gateway does), revokes,
//! time-to-live.
//!
//! Faults, per client, drawn from its seed ([`Faults`], the same knobs the in-memory `Link` has):
//! `cut` — a partition (connecting and every request time out); `flaky` — a request lost before it
//! reaches the server; `late` — applied, then the answer lost or late (the client times out; it
//! re-sends on the next endpoint; a late answer waits in the connection, which a client must not
//! reuse); `resend` — applied, then the connection drops before the answer (the client re-sends
//! on a fresh connection); `dup` — the request delivered twice, the copy applied later; `delay` — the
//! request held in the network and applied later (after a later request of any client), its sender
//! timing out. A timeout costs the client its timeout in simulated time; nothing sleeps.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value};
use snowmint_coord::etcd::transport::{Dial, Stream};

use snowmint_coord::defect::Defect;
use snowmint_coord::etcd::EtcdStore;
use snowmint_coord::Store;

use crate::link::Race;
use crate::net::{Faults, InFlight, Wire};
use crate::rng::Rng;

/// A real etcd client (three endpoint names, one simulated cluster) over a network of its own with
/// `faults`.
pub(crate) fn etcd_client(
    cluster: &Arc<SimEtcd>,
    now: &Arc<AtomicU64>,
    faults: &Arc<Faults>,
    seed: u64,
    race: Option<(Arc<Race>, usize)>,
    defect: Defect,
) -> Arc<dyn Store> {
    let net = SimNet::new(cluster, Wire::new(now, faults, seed, race));
    let endpoints: Vec<String> = (0..3).map(|i| format!("etcd-{i}:2379")).collect();
    let store = EtcdStore::connect_through(
        Arc::new(SimDial(net)),
        &endpoints,
        "sim",
        Duration::from_secs(1),
        Duration::from_secs(2),
    )
    .expect("the simulated cluster answers");
    Arc::new(store.plant(defect))
}

#[derive(Clone, Debug)]
struct KeyValue {
    value: Vec<u8>,
    create: i64,
    modified: i64,
    version: i64,
    lease: i64,
}

#[derive(Debug)]
struct LeaseRec {
    ttl_s: i64,
    deadline_ns: u64,
    keys: BTreeSet<Vec<u8>>,
}

#[derive(Debug, Default)]
struct State {
    revision: i64,
    kvs: BTreeMap<Vec<u8>, KeyValue>,
    leases: BTreeMap<i64, LeaseRec>,
    next_lease: i64,
    /// Requests in flight (delayed or duplicated): path and body.
    in_flight: InFlight<(String, Vec<u8>)>,
}

/// A simulated etcd cluster behind its gateway (one linearizable state; its clock is the true time).
#[derive(Debug)]
pub struct SimEtcd {
    state: Mutex<State>,
    now: Arc<AtomicU64>,
    rng: Mutex<Rng>,
}

fn b64(data: &[u8]) -> String {
    B64.encode(data)
}

fn bytes(v: &Value) -> Vec<u8> {
    v.as_str()
        .map(|s| B64.decode(s).expect("the client sends base64"))
        .unwrap_or_default()
}

fn int(v: &Value) -> i64 {
    match v {
        Value::String(s) => s.parse().expect("a decimal string"),
        Value::Number(n) => n.as_i64().expect("an integer"),
        _ => 0,
    }
}

impl SimEtcd {
    pub fn new(now: &Arc<AtomicU64>, seed: u64) -> Arc<SimEtcd> {
        Arc::new(SimEtcd {
            state: Mutex::new(State {
                revision: 1,
                next_lease: 0x7a00_0000_0000_0001,
                ..State::default()
            }),
            now: now.clone(),
            rng: Mutex::new(Rng(seed)),
        })
    }

    /// Applies one request (first the requests in flight that land before it), answering status and
    /// body.
    fn handle(&self, path: &str, body: &[u8]) -> (u16, Value) {
        let mut s = self.state.lock().unwrap();
        let now = self.now.load(Ordering::SeqCst);
        let landing = s.in_flight.landing(now, &mut self.rng.lock().unwrap());
        for (p, b) in landing {
            let _ = self.apply(&mut s, &p, &b);
        }
        self.apply(&mut s, path, body)
    }

    fn hold(&self, path: &str, body: &[u8]) {
        let mut s = self.state.lock().unwrap();
        let now = self.now.load(Ordering::SeqCst);
        s.in_flight.hold(
            (path.to_string(), body.to_vec()),
            now,
            &mut self.rng.lock().unwrap(),
        );
    }

    fn expire(&self, s: &mut State) {
        let now = self.now.load(Ordering::SeqCst);
        let gone: Vec<i64> = s
            .leases
            .iter()
            .filter(|(_, l)| l.deadline_ns <= now)
            .map(|(&id, _)| id)
            .collect();
        for id in gone {
            Self::revoke(s, id);
        }
    }

    fn revoke(s: &mut State, id: i64) -> bool {
        let Some(lease) = s.leases.remove(&id) else {
            return false;
        };
        if !lease.keys.is_empty() {
            s.revision += 1;
            for k in lease.keys {
                s.kvs.remove(&k);
            }
        }
        true
    }

    fn header(s: &State) -> Value {
        json!({ "cluster_id": "1", "member_id": "1", "revision": s.revision.to_string(), "raft_term": "2" })
    }

    fn kv_json(key: &[u8], kv: &KeyValue) -> Value {
        let mut v = json!({
            "key": b64(key),
            "create_revision": kv.create.to_string(),
            "mod_revision": kv.modified.to_string(),
            "version": kv.version.to_string(),
        });
        if !kv.value.is_empty() {
            v["value"] = json!(b64(&kv.value));
        }
        if kv.lease != 0 {
            v["lease"] = json!(kv.lease.to_string());
        }
        v
    }

    /// The keys a request names: `key` alone, or `[key, range_end)` (`range_end` "\0": every key from
    /// `key` on).
    fn keys(s: &State, r: &Value) -> Vec<Vec<u8>> {
        let key = bytes(&r["key"]);
        match r.get("range_end").map(bytes) {
            None => s
                .kvs
                .contains_key(&key)
                .then_some(key)
                .into_iter()
                .collect(),
            Some(end) if end == [0] => s.kvs.range(key..).map(|(k, _)| k.clone()).collect(),
            Some(end) => s.kvs.range(key..end).map(|(k, _)| k.clone()).collect(),
        }
    }

    fn range(s: &State, r: &Value) -> Value {
        let keys = Self::keys(s, r);
        let count = keys.len();
        let limit = r.get("limit").map(int).unwrap_or(0);
        let kvs: Vec<Value> = keys
            .iter()
            .take(if limit > 0 {
                limit as usize
            } else {
                usize::MAX
            })
            .map(|k| Self::kv_json(k, &s.kvs[k]))
            .collect();
        let mut v = json!({ "header": Self::header(s), "count": count.to_string() });
        if !kvs.is_empty() {
            v["kvs"] = Value::Array(kvs);
        }
        if limit > 0 && count > limit as usize {
            v["more"] = json!(true);
        }
        v
    }

    fn compare(s: &State, c: &Value) -> bool {
        let keys = Self::keys(s, c);
        let absent = KeyValue {
            value: Vec::new(),
            create: 0,
            modified: 0,
            version: 0,
            lease: 0,
        };
        let kvs: Vec<&KeyValue> = if keys.is_empty() {
            // etcd compares an absent key as a zero key-value (a VALUE compare fails).
            if c["target"] == "VALUE" {
                return false;
            }
            vec![&absent]
        } else {
            keys.iter().map(|k| &s.kvs[k]).collect()
        };
        let result = c["result"].as_str().unwrap_or("EQUAL");
        kvs.iter().all(|kv| {
            let ord = match c["target"].as_str().unwrap_or("VERSION") {
                "CREATE" => kv.create.cmp(&int(&c["create_revision"])),
                "MOD" => kv.modified.cmp(&int(&c["mod_revision"])),
                "VERSION" => kv.version.cmp(&int(&c["version"])),
                "LEASE" => kv.lease.cmp(&int(&c["lease"])),
                "VALUE" => kv.value.as_slice().cmp(bytes(&c["value"]).as_slice()),
                t => panic!("simulated etcd: compare target {t}"),
            };
            match result {
                "EQUAL" => ord.is_eq(),
                "NOT_EQUAL" => ord.is_ne(),
                "LESS" => ord.is_lt(),
                "GREATER" => ord.is_gt(),
                r => panic!("simulated etcd: compare result {r}"),
            }
        })
    }

    fn not_found() -> (u16, Value) {
        (
            404,
            json!({ "error": "etcdserver: requested lease not found", "code": 5,
                    "message": "etcdserver: requested lease not found" }),
        )
    }

    fn apply(&self, s: &mut State, path: &str, body: &[u8]) -> (u16, Value) {
        self.expire(s);
        let r: Value = serde_json::from_slice(body).expect("the client sends JSON");
        let now = self.now.load(Ordering::SeqCst);
        match path {
            "/v3/kv/range" => (200, Self::range(s, &r)),
            "/v3/kv/txn" => {
                let ok = r["compare"]
                    .as_array()
                    .is_none_or(|cs| cs.iter().all(|c| Self::compare(s, c)));
                let ops = r[if ok { "success" } else { "failure" }]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                // Every lease a put names must exist, or the whole transaction fails.
                for op in &ops {
                    let lease = int(&op["request_put"]["lease"]);
                    if lease != 0 && !s.leases.contains_key(&lease) {
                        return Self::not_found();
                    }
                }
                let next = s.revision + 1;
                let mut changed = false;
                let mut responses = Vec::new();
                for op in &ops {
                    if let Some(q) = op.get("request_range") {
                        responses.push(json!({ "response_range": Self::range(s, q) }));
                    } else if let Some(p) = op.get("request_put") {
                        let key = bytes(&p["key"]);
                        let lease = int(&p["lease"]);
                        let old = s.kvs.get(&key).cloned();
                        if let Some(o) = &old {
                            if let Some(l) = s.leases.get_mut(&o.lease) {
                                l.keys.remove(&key);
                            }
                        }
                        if lease != 0 {
                            s.leases.get_mut(&lease).unwrap().keys.insert(key.clone());
                        }
                        s.kvs.insert(
                            key,
                            KeyValue {
                                value: bytes(&p["value"]),
                                create: old.as_ref().map_or(next, |o| o.create),
                                modified: next,
                                version: old.as_ref().map_or(1, |o| o.version + 1),
                                lease,
                            },
                        );
                        changed = true;
                        responses.push(json!({ "response_put": { "header": {} } }));
                    } else if let Some(d) = op.get("request_delete_range") {
                        let keys = Self::keys(s, d);
                        for k in &keys {
                            let kv = s.kvs.remove(k).unwrap();
                            if let Some(l) = s.leases.get_mut(&kv.lease) {
                                l.keys.remove(k);
                            }
                        }
                        changed |= !keys.is_empty();
                        responses.push(json!({ "response_delete_range": {
                            "header": {}, "deleted": keys.len().to_string() } }));
                    } else {
                        panic!("simulated etcd: transaction operation {op}");
                    }
                }
                if changed {
                    s.revision = next;
                }
                let mut v = json!({ "header": Self::header(s), "responses": responses });
                if ok {
                    v["succeeded"] = json!(true);
                }
                (200, v)
            }
            "/v3/lease/grant" => {
                let ttl_s = int(&r["TTL"]).max(1);
                let id = s.next_lease;
                s.next_lease += 1;
                s.leases.insert(
                    id,
                    LeaseRec {
                        ttl_s,
                        deadline_ns: now + ttl_s as u64 * 1_000_000_000,
                        keys: BTreeSet::new(),
                    },
                );
                (
                    200,
                    json!({ "header": Self::header(s), "ID": id.to_string(), "TTL": ttl_s.to_string() }),
                )
            }
            "/v3/lease/keepalive" => {
                let id = int(&r["ID"]);
                let mut result = json!({ "header": Self::header(s), "ID": id.to_string() });
                if let Some(l) = s.leases.get_mut(&id) {
                    l.deadline_ns = now + l.ttl_s as u64 * 1_000_000_000;
                    result["TTL"] = json!(l.ttl_s.to_string());
                }
                (200, json!({ "result": result }))
            }
            "/v3/lease/revoke" => {
                if Self::revoke(s, int(&r["ID"])) {
                    (200, json!({ "header": Self::header(s) }))
                } else {
                    Self::not_found()
                }
            }
            "/v3/lease/timetolive" => {
                let id = int(&r["ID"]);
                let (ttl, granted) = match s.leases.get(&id) {
                    Some(l) => (
                        (l.deadline_ns.saturating_sub(now)).div_ceil(1_000_000_000) as i64,
                        l.ttl_s,
                    ),
                    None => (-1, 0),
                };
                (
                    200,
                    json!({ "header": Self::header(s), "ID": id.to_string(), "TTL": ttl.to_string(),
                            "grantedTTL": granted.to_string() }),
                )
            }
            p => panic!("simulated etcd: no such path {p}"),
        }
    }
}

/// One client's network to a simulated cluster: its faults and its own seeded choices.
#[derive(Debug)]
pub struct SimNet {
    server: Arc<SimEtcd>,
    wire: Wire,
}

impl SimNet {
    pub fn new(server: &Arc<SimEtcd>, wire: Wire) -> Arc<SimNet> {
        Arc::new(SimNet {
            server: server.clone(),
            wire,
        })
    }
}

impl std::ops::Deref for SimNet {
    type Target = Wire;
    fn deref(&self) -> &Wire {
        &self.wire
    }
}

/// The client's `Dial` over a [`SimNet`].
#[derive(Debug)]
pub struct SimDial(pub Arc<SimNet>);

impl Dial for SimDial {
    fn dial(&self, _endpoint: &str, timeout: Duration) -> io::Result<Box<dyn Stream>> {
        if self.0.faults.cut.load(Ordering::SeqCst) {
            self.0
                .now
                .fetch_add(timeout.as_nanos() as u64, Ordering::SeqCst);
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "simulated: partitioned",
            ));
        }
        Ok(Box::new(SimStream {
            net: self.0.clone(),
            request: Vec::new(),
            answer: Vec::new(),
            read_at: 0,
            fate: Fate::Open,
            timeout: Duration::from_secs(1),
        }))
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Fate {
    Open,
    /// The answer will not come: reads time out.
    Silent,
    /// The answer comes after the client's timeout: the next read times out, later ones read it.
    Late,
    /// The connection was closed by the other side.
    Closed,
}

#[derive(Debug)]
struct SimStream {
    net: Arc<SimNet>,
    request: Vec<u8>,
    answer: Vec<u8>,
    read_at: usize,
    fate: Fate,
    /// The request's whole answer timeout (the client sets it as the write timeout of each request;
    /// its read timeouts are what is left of it by the wall clock, which a replay must not follow).
    timeout: Duration,
}

impl SimStream {
    /// A whole request is in: deliver it (or not) and prepare the answer.
    fn deliver(&mut self) {
        let Some(end) = self.request.windows(4).position(|w| w == b"\r\n\r\n") else {
            return;
        };
        let head = String::from_utf8_lossy(&self.request[..end]).into_owned();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .and_then(|n| n.trim().parse().ok())
            .expect("the client sends Content-Length");
        if self.request.len() < end + 4 + length {
            return;
        }
        let path = head.split(' ').nth(1).expect("a request line").to_string();
        let body: Vec<u8> = self.request[end + 4..end + 4 + length].to_vec();
        self.request.drain(..end + 4 + length);
        let net = self.net.clone();
        let f = &net.faults;
        if f.cut.load(Ordering::SeqCst) || net.roll(&f.flaky) {
            self.fate = Fate::Silent;
            return;
        }
        if net.roll(&f.delay) {
            net.server.hold(&path, &body);
            self.fate = Fate::Silent;
            return;
        }
        let (status, value) = net.server.handle(&path, &body);
        if net.roll(&f.dup) {
            net.server.hold(&path, &body);
        }
        // A little latency.
        let latency = net.rng.lock().unwrap().below(1_000_000);
        net.now.fetch_add(latency, Ordering::SeqCst);
        let late = net.roll(&f.late);
        if late && net.rng.lock().unwrap().chance(50) {
            self.fate = Fate::Silent;
        } else if net.roll(&f.resend) {
            self.fate = Fate::Closed;
        } else {
            if late {
                self.fate = Fate::Late;
            }
            let text = value.to_string();
            let reason = if status == 200 { "OK" } else { "Not Found" };
            let text_bytes = if path == "/v3/lease/keepalive" {
                // A stream, as the gateway sends it: chunked, with gRPC trailers.
                format!(
                    "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTrailer: Grpc-Status\r\n\r\n{:x}\r\n{text}\r\n0\r\nGrpc-Status: 0\r\n\r\n",
                    text.len()
                )
            } else {
                format!(
                    "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
                    text.len()
                )
            }
            .into_bytes();
            self.answer.drain(..self.read_at);
            self.answer.extend_from_slice(&text_bytes);
            self.read_at = 0;
        }
        if self.fate != Fate::Open {
            net.interleave();
        }
    }
}

impl Write for SimStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.fate == Fate::Closed {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "simulated: connection closed",
            ));
        }
        self.request.extend_from_slice(buf);
        self.deliver();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for SimStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.read_at < self.answer.len() && self.fate != Fate::Late {
            let n = buf.len().min(self.answer.len() - self.read_at);
            buf[..n].copy_from_slice(&self.answer[self.read_at..self.read_at + n]);
            self.read_at += n;
            return Ok(n);
        }
        match self.fate {
            Fate::Closed => Ok(0),
            Fate::Open if self.read_at < self.answer.len() => unreachable!(),
            _ => {
                // Nothing comes in time: the client waits out its timeout (in simulated time); a late
                // answer is there for the next read.
                self.fate = match self.fate {
                    Fate::Late => Fate::Open,
                    _ => Fate::Silent,
                };
                let t = self.timeout.as_nanos() as u64;
                self.net.now.fetch_add(t, Ordering::SeqCst);
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "simulated: no answer",
                ))
            }
        }
    }
}

impl Stream for SimStream {
    fn set_read_timeout(&mut self, _timeout: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.timeout = timeout.unwrap_or(Duration::from_secs(1));
        Ok(())
    }
}
