//! The etcd store: node-ID claims as keys bound to etcd leases, over etcd's official HTTP/JSON gateway
//! (`/v3/kv/range`, `/v3/kv/txn`, `/v3/kv/deleterange`, `/v3/lease/grant`, `/v3/lease/keepalive`,
//! `/v3/lease/revoke`, `/v3/lease/timetolive`), so building it needs no `protoc` and no async runtime.
//!
//! Keys, under the URL's prefix `P` (sequencer names escaped so that no name is a prefix of another's
//! keys; node IDs zero-padded to 20 digits so that keys sort as numbers):
//! - `P/seq/NAME` — the sequencer record, JSON `{"layout","nodes","created_unix_ms","floor"}`; its
//!   incarnation is the key's create revision (a re-created record always has a greater one). Created by
//!   a transaction comparing its create revision with 0 and the floor key's value with the one read
//!   (the record carries the name's floor); destroyed by a transaction comparing its create revision with
//!   the incarnation and that no reservation key of the name (nor the floor key) changed since they were
//!   read, which deletes the record and every claim key of the name and writes the raised floor — so no
//!   holder of the destroyed incarnation claims or reserves after the floor was computed.
//! - `P/floor/NAME` — the name's value floor (decimal), raised by each destroy, never deleted.
//! - `P/claim/NAME/NODE` — a claim: value = the holder's description, bound to an etcd lease. Taken by a
//!   transaction comparing the key's create revision with 0; the **fencing token** is the key's create
//!   revision (etcd revisions only grow, so a later claim of the node ID always has a greater token).
//!   Renewed by the lease's keep-alive; released by revoking the lease (which deletes the key).
//! - `P/resv/NAME/NODE` — the reservation, `"POSITION LAYOUT_FINGERPRINT UNTIL_UNIX_MS"`, written only by
//!   a transaction comparing the claim key's create revision with the claim's token (so a holder whose
//!   lease expired, or whose node ID was taken since, or whose sequencer was destroyed, writes nothing
//!   and gets `LEASE_LOST`). Never deleted: it survives releases, expiry and sequencer destruction.
//!   A claim is taken only by a transaction that also compares the record's create revision with the
//!   claimer's incarnation. Never moved back under a layout
//!   (the rule of [`crate::store`]): etcd cannot compare numbers in a value, so the write is a
//!   compare-and-set on the key's **mod revision**. The transaction also compares the key's mod
//!   revision with the one the writer read, and puts [`Reservation::written_over`] what it read; its
//!   failure branch reads the claim key and the reservation, and the writer computes again from what
//!   it found (a few rounds; the first assumes the key absent, so the common write costs two round
//!   trips; a clean release's lowering compares the claim only, one round trip). A transaction is thus applied only on the exact state it was computed from: a stale one —
//!   delayed (a stalled proposal or gateway request) or re-sent after a higher write — finds the
//!   revision moved on and changes nothing; a re-send whose first send was applied finds a reservation
//!   that covers its own (its own value, or a higher one) and reports success without writing. A value
//!   compare instead would need a value encoding whose byte order is the reservation order, which
//!   breaks across layouts and cannot compare an absent key.
//! - `P/row/KEY` — a row of range allocation ([`crate::range`]): its text value, changed by a
//!   transaction comparing the value with the one the caller read (or the create revision with 0 for
//!   an absent row), whose failure branch reads the row, so that a re-sent transaction that finds the
//!   caller's own new text there reports it written. Never deleted.
//!
//! A request is sent again (on a fresh connection or the next endpoint) after a timeout, a closed
//! connection or "unavailable", though the first send may have been applied. Every write is safe so
//! (the re-send rule of [`crate::store`]): a claim's re-send finds the key bound to its own etcd lease;
//! a reservation's re-send finds the key's revision moved on and a stored reservation covering its own; a row's re-send finds
//! its own text; a sequencer record's re-send finds the record it created (same configuration); a
//! lease grant's re-send leaves an unused lease that expires at its TTL.
//!
//! `etcd+https://` speaks TLS (rustls, `coord/src/stores/tls.rs`): the server's certificate is checked against
//! the URL's `cacert` (else the Mozilla roots) and the endpoint's host name; `cert`/`key` are offered to
//! a cluster that asks for a client certificate (`--client-cert-auth`). `USER:PASSWORD@` signs in with
//! etcd's authentication (`/v3/auth/authenticate`) before the first request; its token goes in each
//! request's `Authorization` header, and when the cluster answers "invalid auth token" (the token
//! expired: `--auth-token-ttl`, or the member restarted) the store signs in again once and sends the
//! request again. The password and token never appear in a message or a `Debug` form.
//!
//! Connections are opened through [`transport::Dial`] (std TCP by default); the deterministic
//! simulation runs this client, its timeouts and re-sends included, over a simulated network and
//! cluster through the same seam (`sim/src/etcd.rs`).
//!
//! Several endpoints may be named; a request that cannot connect, times out, or is answered
//! "unavailable" (no leader, a member out of quorum) is tried on the next one, and a pass over every
//! endpoint that none answered is made again while twice the connect and answer timeouts have not
//! passed (at most two passes, `Resend` in `coord/src/stores/remote.rs`: answers held back or lost now and then
//! cost a re-send, not the claim or the keeper round; a call's first send waits a quarter of the answer
//! timeout, `crate::remote::first_answer_timeout`, its re-sends the whole). Every request is bounded
//! ([`EtcdStore::CONNECT_TIMEOUT`] per connection, [`EtcdStore::REQUEST_TIMEOUT`] per answer), so no
//! call blocks longer than `(2 + endpoints) × (connect + request)` timeouts.

mod http;
#[doc(hidden)] // the simulation's seam (sim/src/etcd.rs)
pub mod transport;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

use crate::base::defect::{Defect, Hook};
use crate::base::error::{Error, Result};
use crate::base::store::{
    Claim, ClaimRequest, HeldBy, NodeState, Reservation, SequencerConfig, SequencerRecord, Store,
};
use crate::base::url::{Credentials, EtcdUrl};
use crate::stores::process_local::{ProcessLocal, FORKED};
use crate::stores::remote::{Created, Resend};
use http::{base64_decode, base64_encode, Connection};

/// gRPC status codes the gateway puts in error bodies (those that send a request to another member).
const GRPC_UNAVAILABLE: i64 = 14;
const GRPC_DEADLINE_EXCEEDED: i64 = 4;
const GRPC_NOT_FOUND: i64 = 5;

/// Compare-and-set rounds of one reservation write. Only the claim's holder writes the key, so a
/// round fails only on a stale view (the first round assumes the key absent) or on a write of its own
/// that arrived late: a few rounds are plenty.
const RESERVE_ATTEMPTS: usize = 4;

/// An etcd cluster as a [`Store`].
#[derive(Debug)]
pub struct EtcdStore {
    endpoints: Vec<String>,
    prefix: String,
    described: String,
    connect_timeout: Duration,
    request_timeout: Duration,
    /// How connections are opened ([`transport::TcpDial`], or a simulated network).
    dial: std::sync::Arc<dyn transport::Dial>,
    /// The kept-alive connection; in a process forked after the store was opened, neither used nor
    /// dropped ([`ProcessLocal`]: its socket is the parent's).
    conn: ProcessLocal<Mutex<Current>>,
    /// etcd authentication: the user and password, and the current token.
    auth: Option<Auth>,
    /// The shortest claim TTL asked of this store, ms (0: none yet); see [`EtcdStore::answer_timeout`].
    shortest_ttl_ms: AtomicU64,
    /// The etcd lease of each claim this store made, by (sequencer, node ID, token).
    leases: Mutex<HashMap<(String, u64, u64), i64>>,
    /// A defect planted on purpose (feature `planted-defects`, the simulation's own tests).
    defect: Hook,
}

/// etcd's own authentication: who signs in, and the token of the last sign-in.
struct Auth {
    credentials: Credentials,
    token: Mutex<Option<String>>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("user", &self.credentials.user)
            .finish_non_exhaustive()
    }
}

/// The error etcd gives for an expired or unknown token (`ErrInvalidAuthToken`).
const INVALID_TOKEN: &str = "invalid auth token";

#[derive(Debug, Default)]
struct Current {
    /// Index of the endpoint requests go to first.
    endpoint: usize,
    connection: Option<Connection>,
}

/// How a request failed.
enum Failure {
    /// No endpoint answered (each one's reason, for the message).
    Unreachable(String),
    /// The cluster answered with an error (gRPC code and message).
    Server(i64, String),
}

/// One key-value pair of a range or transaction response.
struct Kv {
    key: Vec<u8>,
    value: Vec<u8>,
    create_revision: u64,
    mod_revision: u64,
    lease: i64,
}

/// Opens the etcd store of a parsed `etcd://` URL (the node-source dispatch, [`crate::source::open_store`]).
pub fn open(url: &EtcdUrl) -> Result<std::sync::Arc<dyn Store>> {
    Ok(std::sync::Arc::new(EtcdStore::open_url(
        url,
        EtcdStore::CONNECT_TIMEOUT,
        EtcdStore::REQUEST_TIMEOUT,
    )?))
}

impl EtcdStore {
    /// Connection timeout per endpoint.
    pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
    /// Timeout for the answer to one request.
    pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

    /// A store on the cluster at `endpoints` (`host:port` each, tried in order), keys under `prefix`.
    /// Checks that the cluster answers a linearizable read (so a quorum is up) before returning.
    pub fn connect(endpoints: &[String], prefix: &str) -> Result<EtcdStore> {
        Self::connect_with_timeouts(
            endpoints,
            prefix,
            Self::CONNECT_TIMEOUT,
            Self::REQUEST_TIMEOUT,
        )
    }

    /// [`EtcdStore::connect`] with other timeouts.
    pub fn connect_with_timeouts(
        endpoints: &[String],
        prefix: &str,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Result<EtcdStore> {
        Self::open_url(
            &EtcdUrl {
                endpoints: endpoints.to_vec(),
                prefix: prefix.to_string(),
                tls: None,
                auth: None,
            },
            connect_timeout,
            request_timeout,
        )
    }

    /// The store of a parsed `etcd[+https]://` URL (TLS files read, sign-in done, a linearizable read
    /// answered before it returns).
    pub fn open_url(
        url: &EtcdUrl,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Result<EtcdStore> {
        let tls = match &url.tls {
            Some(files) => Some(
                crate::stores::tls::client_config(files, crate::stores::tls::Verify::Full)
                    .map_err(|e| {
                        e.context(format!(
                            "etcd store {}",
                            crate::base::url::StoreUrl::Etcd(url.clone())
                        ))
                    })?,
            ),
            None => None,
        };
        Self::open_through(
            std::sync::Arc::new(transport::TcpDial::new(tls)),
            url,
            connect_timeout,
            request_timeout,
        )
    }

    /// [`EtcdStore::connect_with_timeouts`] over the connections `dial` opens (a simulated network in
    /// the deterministic simulation).
    #[doc(hidden)]
    pub fn connect_through(
        dial: std::sync::Arc<dyn transport::Dial>,
        endpoints: &[String],
        prefix: &str,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Result<EtcdStore> {
        let url = EtcdUrl {
            endpoints: endpoints.to_vec(),
            prefix: prefix.to_string(),
            tls: None,
            auth: None,
        };
        Self::open_through(dial, &url, connect_timeout, request_timeout)
    }

    fn open_through(
        dial: std::sync::Arc<dyn transport::Dial>,
        url: &EtcdUrl,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Result<EtcdStore> {
        let (endpoints, prefix) = (&url.endpoints, &url.prefix);
        if endpoints.is_empty() || endpoints.iter().any(|e| e.is_empty()) {
            return Err(Error::invalid(
                "an etcd store needs at least one HOST:PORT endpoint",
            ));
        }
        let prefix = prefix.trim_matches('/');
        let store = EtcdStore {
            endpoints: endpoints.to_vec(),
            prefix: if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            },
            described: crate::base::url::StoreUrl::Etcd(EtcdUrl {
                prefix: prefix.to_string(),
                ..url.clone()
            })
            .to_string(),
            connect_timeout,
            request_timeout,
            dial,
            conn: ProcessLocal::new(Mutex::new(Current::default())),
            auth: url.auth.clone().map(|credentials| Auth {
                credentials,
                token: Mutex::new(None),
            }),
            shortest_ttl_ms: AtomicU64::new(0),
            leases: Mutex::new(HashMap::new()),
            defect: Hook::NONE,
        };
        store.range(&store.seq_prefix(), true, Some(1))?;
        Ok(store)
    }

    /// This store with a defect planted (feature `planted-defects`, the simulation's own tests).
    #[cfg(feature = "planted-defects")]
    pub fn plant(self, defect: Defect) -> EtcdStore {
        EtcdStore {
            defect: Hook::planted(defect),
            ..self
        }
    }

    fn seq_prefix(&self) -> Vec<u8> {
        format!("{}seq/", self.prefix).into_bytes()
    }
    fn seq_key(&self, name: &str) -> Vec<u8> {
        format!("{}seq/{}", self.prefix, escape(name)).into_bytes()
    }
    fn claim_prefix(&self, name: &str) -> Vec<u8> {
        format!("{}claim/{}/", self.prefix, escape(name)).into_bytes()
    }
    fn claim_key(&self, name: &str, node: u64) -> Vec<u8> {
        format!("{}claim/{}/{node:020}", self.prefix, escape(name)).into_bytes()
    }
    fn floor_key(&self, name: &str) -> Vec<u8> {
        format!("{}floor/{}", self.prefix, escape(name)).into_bytes()
    }

    fn resv_prefix(&self, name: &str) -> Vec<u8> {
        format!("{}resv/{}/", self.prefix, escape(name)).into_bytes()
    }
    fn row_key(&self, key: &str) -> Vec<u8> {
        format!("{}row/{key}", self.prefix).into_bytes()
    }
    fn resv_key(&self, name: &str, node: u64) -> Vec<u8> {
        format!("{}resv/{}/{node:020}", self.prefix, escape(name)).into_bytes()
    }

    /// Sends one request, failing over between endpoints.
    fn call(&self, path: &str, body: &Value) -> std::result::Result<Value, Failure> {
        self.call_within(path, body, self.answer_timeout())
    }

    /// The answer timeout: [`EtcdStore::REQUEST_TIMEOUT`], or a quarter of the shortest TTL this store
    /// has claimed with (at least 200 ms), so that a keeper round (sequencer check, renewal, reservation)
    /// that meets a stopped or partitioned member moves on to a live one well inside the TTL.
    fn answer_timeout(&self) -> Duration {
        match self.shortest_ttl_ms.load(Ordering::Relaxed) {
            0 => self.request_timeout,
            ttl => Duration::from_millis(ttl / 4)
                .clamp(Duration::from_millis(200), self.request_timeout),
        }
    }

    /// [`EtcdStore::call`] with `timeout` for each endpoint's answer: signed in first when the URL
    /// names a user (once per token), and signed in again once when the token has expired.
    fn call_within(
        &self,
        path: &str,
        body: &Value,
        timeout: Duration,
    ) -> std::result::Result<Value, Failure> {
        if self.conn.get().is_none() {
            // Before the auth token's lock, which a thread of the parent's may have held at the fork.
            return Err(Failure::Unreachable(FORKED.into()));
        }
        let Some(auth) = &self.auth else {
            return self.send(path, body, None, timeout);
        };
        let mut token = auth.token.lock().unwrap_or_else(|p| p.into_inner());
        let fresh = token.is_none();
        if fresh {
            *token = Some(self.sign_in(&auth.credentials, timeout)?);
        }
        match self.send(path, body, token.as_deref(), timeout) {
            Err(Failure::Server(_, message)) if !fresh && message.contains(INVALID_TOKEN) => {
                *token = None;
                *token = Some(self.sign_in(&auth.credentials, timeout)?);
                self.send(path, body, token.as_deref(), timeout)
            }
            other => other,
        }
    }

    /// `/v3/auth/authenticate`: a new token for `credentials`.
    fn sign_in(
        &self,
        credentials: &Credentials,
        timeout: Duration,
    ) -> std::result::Result<String, Failure> {
        let body = json!({ "name": credentials.user, "password": credentials.password });
        let answer = self
            .send("/v3/auth/authenticate", &body, None, timeout)
            .map_err(|f| match f {
                Failure::Server(code, message) => Failure::Server(
                    code,
                    format!("authentication as {:?} failed: {message}", credentials.user),
                ),
                other => other,
            })?;
        answer["token"].as_str().map(str::to_string).ok_or_else(|| {
            Failure::Server(
                0,
                format!(
                    "authentication as {:?}: the answer has no token (is authentication enabled?)",
                    credentials.user
                ),
            )
        })
    }

    /// One request with `token`, failing over between endpoints; a pass over every endpoint that none
    /// answered is made again ([`Resend`], within twice the connect and answer timeouts).
    fn send(
        &self,
        path: &str,
        body: &Value,
        token: Option<&str>,
        timeout: Duration,
    ) -> std::result::Result<Value, Failure> {
        let body = body.to_string().into_bytes();
        let Some(conn) = self.conn.get() else {
            // A forked child: the parent's connections are neither used nor dropped here.
            return Err(Failure::Unreachable(FORKED.into()));
        };
        let mut resend = Resend::new((self.connect_timeout + timeout) * 2);
        // The first send waits a shorter time ([`crate::stores::remote::first_answer_timeout`]).
        let mut first = Some(crate::stores::remote::first_answer_timeout(timeout));
        loop {
            match self.send_pass(conn, path, &body, token, timeout, first.take()) {
                Err(Failure::Unreachable(_)) if resend.again() => {}
                answered => return answered,
            }
        }
    }

    /// One pass of [`EtcdStore::send`] over the endpoints.
    fn send_pass(
        &self,
        conn: &Mutex<Current>,
        path: &str,
        body: &[u8],
        token: Option<&str>,
        timeout: Duration,
        mut first: Option<Duration>,
    ) -> std::result::Result<Value, Failure> {
        let mut current = conn.lock().unwrap_or_else(|p| p.into_inner());
        let mut reasons = Vec::new();
        for attempt in 0..self.endpoints.len() {
            let index = (current.endpoint + attempt) % self.endpoints.len();
            let endpoint = &self.endpoints[index];
            if attempt > 0 || current.connection.is_none() {
                current.connection = None;
            }
            // A kept-alive connection the server closed since is retried once on a fresh one.
            let mut fresh_tries = 2;
            loop {
                let reused = current.connection.is_some();
                if !reused {
                    fresh_tries -= 1;
                    match Connection::open(&*self.dial, endpoint, self.connect_timeout) {
                        Ok(c) => current.connection = Some(c),
                        Err(e) => {
                            reasons.push(format!("{endpoint}: {e}"));
                            break;
                        }
                    }
                }
                let connection = current.connection.as_mut().expect("connected above");
                match connection.post(path, body, token, first.take().unwrap_or(timeout)) {
                    Ok(response) => {
                        if response.close {
                            current.connection = None;
                        }
                        let value: Value = match serde_json::from_slice(&response.body) {
                            Ok(v) => v,
                            Err(e) => {
                                current.connection = None;
                                reasons
                                    .push(format!("{endpoint}: an answer that is not JSON ({e})"));
                                break;
                            }
                        };
                        if response.status == 200 {
                            current.endpoint = index;
                            return Ok(value);
                        }
                        let code = int(&value["code"]);
                        let message = value["message"]
                            .as_str()
                            .or(value["error"].as_str())
                            .unwrap_or("no message")
                            .to_string();
                        if code == GRPC_UNAVAILABLE || code == GRPC_DEADLINE_EXCEEDED {
                            current.connection = None;
                            reasons.push(format!("{endpoint}: {message}"));
                            break;
                        }
                        current.endpoint = index;
                        return Err(Failure::Server(code, message));
                    }
                    Err(e) => {
                        current.connection = None;
                        if reused && fresh_tries > 0 {
                            continue;
                        }
                        reasons.push(format!("{endpoint}: {e}"));
                        break;
                    }
                }
            }
        }
        current.endpoint = (current.endpoint + 1) % self.endpoints.len();
        Err(Failure::Unreachable(reasons.join("; ")))
    }

    /// [`EtcdStore::call`] with every failure as an [`Error`] naming the store and what was being done.
    fn request(&self, what: &str, path: &str, body: &Value) -> Result<Value> {
        self.call(path, body).map_err(|f| self.failure(what, f))
    }

    fn failure(&self, what: &str, failure: Failure) -> Error {
        match failure {
            Failure::Unreachable(reasons) => Error::unavailable(format!(
                "etcd store {}: {what}: no endpoint answered (timeouts: {} ms to connect, {} ms to \
                 answer): {reasons}",
                self.described,
                self.connect_timeout.as_millis(),
                self.answer_timeout().as_millis()
            )),
            Failure::Server(code, message) => Error::unavailable(format!(
                "etcd store {}: {what}: the cluster refused (gRPC code {code}): {message}",
                self.described
            )),
        }
    }

    fn range(&self, key: &[u8], prefix: bool, limit: Option<u64>) -> Result<Vec<Kv>> {
        let mut body = json!({ "key": base64_encode(key) });
        if prefix {
            body["range_end"] = json!(base64_encode(&prefix_end(key)));
        }
        if let Some(limit) = limit {
            body["limit"] = json!(limit.to_string());
        }
        let v = self.request("reading", "/v3/kv/range", &body)?;
        self.kvs(&v["kvs"])
    }

    fn kvs(&self, list: &Value) -> Result<Vec<Kv>> {
        let empty = Vec::new();
        let list = list.as_array().unwrap_or(&empty);
        list.iter()
            .map(|kv| {
                let bytes = |field: &str| match kv[field].as_str() {
                    None => Some(Vec::new()),
                    Some(s) => base64_decode(s),
                };
                match (bytes("key"), bytes("value")) {
                    (Some(key), Some(value)) => Ok(Kv {
                        key,
                        value,
                        create_revision: int(&kv["create_revision"]) as u64,
                        mod_revision: int(&kv["mod_revision"]) as u64,
                        lease: int(&kv["lease"]),
                    }),
                    _ => Err(self.unreadable("a key or value that is not base64")),
                }
            })
            .collect()
    }

    fn unreadable(&self, what: impl std::fmt::Display) -> Error {
        Error::unavailable(format!(
            "etcd store {}: unreadable data: {what}",
            self.described
        ))
    }

    fn txn(&self, what: &str, compare: Value, success: Value, failure: Value) -> Result<Value> {
        let body = json!({ "compare": compare, "success": success, "failure": failure });
        self.request(what, "/v3/kv/txn", &body)
    }

    /// [`Store::reserve`] (`lower`: [`Store::lower_reservation`]): see the module documentation.
    fn write_reservation(
        &self,
        claim: &Claim,
        reservation: &Reservation,
        lower: bool,
    ) -> Result<()> {
        let claim_key = base64_encode(&self.claim_key(&claim.sequencer, claim.node_id));
        let resv_key = self.resv_key(&claim.sequencer, claim.node_id);
        // The stored reservation the write is computed over, with the key's mod revision (0: absent),
        // as the last failed transaction read it with the claim verified (`None`: not read yet; the
        // first transaction assumes the key absent, its failure branch reads it).
        let mut read: Option<(Option<Reservation>, u64)> = None;
        for _ in 0..RESERVE_ATTEMPTS {
            let (stored, mod_revision) = read.unwrap_or((None, 0));
            let kept = reservation.kept(stored.as_ref(), lower);
            if read.is_some() && stored == Some(kept) {
                return Ok(()); // a stale write: the stored reservation covers it
            }
            let value = format!(
                "{} {} {}",
                kept.position, kept.layout_fingerprint, kept.until_unix_ms
            );
            let mut compare = vec![
                json!({ "key": claim_key, "target": "CREATE", "result": "EQUAL", "create_revision": claim.token.to_string() }),
            ];
            if !lower && !self.defect.is(Defect::EtcdReserveWithoutModCompare) {
                // A lowering (a sealed generator's last position) is safe whenever it lands.
                compare.push(json!({ "key": base64_encode(&resv_key), "target": "MOD", "result": "EQUAL", "mod_revision": mod_revision.to_string() }));
            }
            let v = self.txn(
                "writing a reservation",
                Value::Array(compare),
                json!([{ "request_put": {
                    "key": base64_encode(&resv_key),
                    "value": base64_encode(value.as_bytes()),
                } }]),
                json!([
                    { "request_range": { "key": claim_key } },
                    { "request_range": { "key": base64_encode(&resv_key) } },
                ]),
            )?;
            if v["succeeded"].as_bool().unwrap_or(false) {
                return Ok(());
            }
            let held = self.kvs(&v["responses"][0]["response_range"]["kvs"])?;
            if held.first().map(|kv| kv.create_revision) != Some(claim.token) {
                return Err(Error::lease_lost(format!(
                    "node ID {} of sequencer {} on {}: the claim (revision {}) is no longer held; the \
                     reservation was not written",
                    claim.node_id, claim.sequencer, self.described, claim.token
                )));
            }
            if self.defect.is(Defect::EtcdReserveFailedAsWritten) {
                return Ok(());
            }
            let stored = self.kvs(&v["responses"][1]["response_range"]["kvs"])?;
            read = Some(match stored.first() {
                None => (None, 0),
                Some(kv) => (
                    Some(parse_reservation(&kv.value).ok_or_else(|| {
                        self.unreadable(format_args!(
                            "reservation of node ID {} of {}",
                            claim.node_id, claim.sequencer
                        ))
                    })?),
                    kv.mod_revision,
                ),
            });
        }
        Err(Error::unavailable(format!(
            "etcd store {}: writing a reservation: the reservation of node ID {} of {} changed under \
             each of {RESERVE_ATTEMPTS} attempts",
            self.described, claim.node_id, claim.sequencer
        )))
    }

    fn record(&self, name: &str, kv: &Kv) -> Result<SequencerRecord> {
        let v: Value = serde_json::from_slice(&kv.value)
            .map_err(|e| self.unreadable(format_args!("sequencer {name}: {e}")))?;
        match (v["layout"].as_str(), v["nodes"].as_u64()) {
            (Some(layout), Some(nodes)) => Ok(SequencerRecord {
                name: name.to_string(),
                config: SequencerConfig {
                    layout: layout.to_string(),
                    nodes,
                },
                incarnation: kv.create_revision,
                created_unix_ms: v["created_unix_ms"].as_u64().unwrap_or(0),
                // Records written before floors existed have none: 0.
                floor: v["floor"].as_u64().unwrap_or(0),
            }),
            _ => Err(self.unreadable(format_args!("sequencer {name}: no layout or node count"))),
        }
    }

    /// The etcd lease behind `claim`: remembered from [`Store::claim`], or read from the claim key
    /// (another handle on the same store). `None` when the claim is no longer held.
    fn lease_of(&self, claim: &Claim) -> Result<Option<i64>> {
        let id = (claim.sequencer.clone(), claim.node_id, claim.token);
        if let Some(&lease) = self
            .leases
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
        {
            return Ok(Some(lease));
        }
        let kvs = self.range(
            &self.claim_key(&claim.sequencer, claim.node_id),
            false,
            None,
        )?;
        Ok(kvs
            .into_iter()
            .find(|kv| kv.create_revision == claim.token && kv.lease != 0)
            .map(|kv| kv.lease))
    }

    fn note_ttl(&self, ttl_ms: u64) {
        let ttl_ms = ttl_ms.max(1);
        let _ = self
            .shortest_ttl_ms
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                (t == 0 || ttl_ms < t).then_some(ttl_ms)
            });
    }

    fn forget(&self, claim: &Claim) {
        let id = (claim.sequencer.clone(), claim.node_id, claim.token);
        self.leases
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }

    fn revoke(&self, lease: i64) -> Result<()> {
        match self.call("/v3/lease/revoke", &json!({ "ID": lease.to_string() })) {
            Ok(_) | Err(Failure::Server(GRPC_NOT_FOUND, _)) => Ok(()),
            Err(f) => Err(self.failure("revoking a lease", f)),
        }
    }

    /// The value of a floor key.
    fn parse_floor(&self, name: &str, value: &[u8]) -> Result<u64> {
        std::str::from_utf8(value)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| self.unreadable(format_args!("the floor of {name}")))
    }

    /// The node ID in a claim or reservation key under `prefix`.
    fn node_of(&self, prefix: &[u8], key: &[u8]) -> Option<u64> {
        std::str::from_utf8(key.strip_prefix(prefix)?)
            .ok()?
            .parse()
            .ok()
    }
}

impl Store for EtcdStore {
    fn describe(&self) -> String {
        self.described.clone()
    }

    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now_unix_ms: u64,
    ) -> Result<SequencerRecord> {
        let key = base64_encode(&self.seq_key(name));
        let floor_key = base64_encode(&self.floor_key(name));
        crate::stores::remote::create_or_existing(&self.described, name, config, || {
            // The record carries the floor as it is now; the transaction checks it still is.
            let floor_kv = self.range(&self.floor_key(name), false, None)?;
            let (floor, floor_compare) = match floor_kv.first() {
                None => (
                    0,
                    json!({ "key": floor_key, "target": "CREATE", "result": "EQUAL", "create_revision": "0" }),
                ),
                Some(kv) => (
                    self.parse_floor(name, &kv.value)?,
                    json!({ "key": floor_key, "target": "VALUE", "result": "EQUAL", "value": base64_encode(&kv.value) }),
                ),
            };
            let value = json!({
                "layout": config.layout, "nodes": config.nodes, "created_unix_ms": now_unix_ms, "floor": floor,
            });
            let v = self.txn(
                "creating a sequencer",
                json!([
                    { "key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0" },
                    floor_compare,
                ]),
                json!([{ "request_put": { "key": key, "value": base64_encode(value.to_string().as_bytes()) } }]),
                json!([{ "request_range": { "key": key } }]),
            )?;
            if v["succeeded"].as_bool().unwrap_or(false) {
                return Ok(Created::New(SequencerRecord {
                    name: name.to_string(),
                    config: config.clone(),
                    incarnation: int(&v["header"]["revision"]) as u64,
                    created_unix_ms: now_unix_ms,
                    floor,
                }));
            }
            let kvs = self.kvs(&v["responses"][0]["response_range"]["kvs"])?;
            Ok(Created::Exists(
                kvs.first().map(|kv| self.record(name, kv)).transpose()?,
            ))
        })
    }

    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        let kvs = self.range(&self.seq_key(name), false, None)?;
        kvs.first().map(|kv| self.record(name, kv)).transpose()
    }

    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        let prefix = self.seq_prefix();
        let mut out = Vec::new();
        for kv in self.range(&prefix, true, None)? {
            let escaped =
                std::str::from_utf8(&kv.key[prefix.len()..]).map_err(|e| self.unreadable(e))?;
            out.push(self.record(&unescape(escaped), &kv)?);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        let seq_key = base64_encode(&self.seq_key(name));
        let floor_key = base64_encode(&self.floor_key(name));
        let resv_prefix = self.resv_prefix(name);
        let resv = base64_encode(&resv_prefix);
        let resv_end = base64_encode(&prefix_end(&resv_prefix));
        let claims = self.claim_prefix(name);
        // A reservation written between the read and the transaction fails the transaction: read again
        // (bounded: each retry means a holder of this incarnation reserved in between).
        for _ in 0..16 {
            // One consistent read of the record and the reservations, at revision `seen`.
            let v = self.txn(
                "reading a sequencer to destroy",
                json!([]),
                json!([
                    { "request_range": { "key": seq_key } },
                    { "request_range": { "key": resv, "range_end": resv_end } },
                ]),
                json!([]),
            )?;
            let seen = int(&v["header"]["revision"]);
            let record = self.kvs(&v["responses"][0]["response_range"]["kvs"])?;
            let Some(kv) = record
                .first()
                .filter(|kv| kv.create_revision == incarnation)
            else {
                return Ok(false);
            };
            let record = self.record(name, kv)?;
            let mut reservations = Vec::new();
            for kv in self.kvs(&v["responses"][1]["response_range"]["kvs"])? {
                reservations.push(
                    parse_reservation(&kv.value)
                        .ok_or_else(|| self.unreadable(format_args!("a reservation of {name}")))?,
                );
            }
            let floor = crate::base::store::floor_after(&record, reservations)?;
            let unchanged_since = (seen + 1).to_string();
            let v = self.txn(
                "destroying a sequencer",
                json!([
                    { "key": seq_key, "target": "CREATE", "result": "EQUAL", "create_revision": incarnation.to_string() },
                    { "key": resv, "range_end": resv_end, "target": "MOD", "result": "LESS", "mod_revision": unchanged_since },
                ]),
                json!([
                    { "request_delete_range": { "key": seq_key } },
                    { "request_delete_range": {
                        "key": base64_encode(&claims), "range_end": base64_encode(&prefix_end(&claims)),
                    } },
                    { "request_put": { "key": floor_key, "value": base64_encode(floor.to_string().as_bytes()) } },
                ]),
                json!([]),
            )?;
            if v["succeeded"].as_bool().unwrap_or(false) {
                return Ok(true);
            }
        }
        Err(Error::unavailable(format!(
            "etcd store {}: destroying {name}: its holders kept reserving; try again",
            self.described
        )))
    }

    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        let name = request.sequencer;
        if request.nodes == 0 {
            return Ok(None);
        }
        let ttl_s = request.ttl_ms.div_ceil(1000).max(1);
        let granted = self.request(
            "granting a lease",
            "/v3/lease/grant",
            &json!({ "TTL": ttl_s.to_string() }),
        )?;
        let lease = int(&granted["ID"]);
        let granted_ttl_ms = (int(&granted["TTL"]).max(1) as u64) * 1000;
        if lease == 0 {
            return Err(self.unreadable("a lease grant without an ID"));
        }
        let prefix = self.claim_prefix(name);
        let seq_key = base64_encode(&self.seq_key(name));
        let prefix_b64 = base64_encode(&prefix);
        let end_b64 = base64_encode(&prefix_end(&prefix));
        let held_in = |kvs: &[Kv]| -> HashSet<u64> {
            kvs.iter()
                .filter_map(|kv| self.node_of(&prefix, &kv.key))
                .collect()
        };
        let result = (|| {
            let mut held = held_in(&self.range(&prefix, true, None)?);
            // Each failed transaction means another claimer took a node ID since our last look; claims
            // that keep expiring under us could go on forever, so the tries are bounded.
            for _ in 0..request.nodes.saturating_mul(2).saturating_add(16) {
                let Some(node) = (0..request.nodes)
                    .map(|i| (request.start % request.nodes + i) % request.nodes)
                    .find(|n| !held.contains(n))
                else {
                    return Ok(None);
                };
                let key = base64_encode(&self.claim_key(name, node));
                let v = self.txn(
                    "claiming a node ID",
                    json!([
                        { "key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0" },
                        { "key": seq_key, "target": "CREATE", "result": "EQUAL",
                          "create_revision": request.incarnation.to_string() },
                    ]),
                    json!([{ "request_put": {
                        "key": key,
                        "value": base64_encode(request.holder.as_bytes()),
                        "lease": lease.to_string(),
                    } }]),
                    json!([
                        { "request_range": { "key": prefix_b64, "range_end": end_b64 } },
                        { "request_range": { "key": seq_key } },
                    ]),
                )?;
                let (node_id, token) = if v["succeeded"].as_bool().unwrap_or(false) {
                    (node, int(&v["header"]["revision"]) as u64)
                } else {
                    let kvs = self.kvs(&v["responses"][0]["response_range"]["kvs"])?;
                    // A transaction of ours that was applied although its answer was lost (a timeout,
                    // then failover): the key bound to our lease is our claim.
                    match kvs.iter().find(|kv| kv.lease == lease) {
                        Some(kv) => (
                            self.node_of(&prefix, &kv.key)
                                .ok_or_else(|| self.unreadable("a claim key"))?,
                            kv.create_revision,
                        ),
                        None => {
                            let record = self.kvs(&v["responses"][1]["response_range"]["kvs"])?;
                            if !record
                                .iter()
                                .any(|kv| kv.create_revision == request.incarnation)
                            {
                                return Err(crate::base::store_errors::not_live(
                                    &self.described,
                                    name,
                                    request.incarnation,
                                ));
                            }
                            held = held_in(&kvs);
                            held.insert(node);
                            continue;
                        }
                    }
                };
                return Ok(Some(Claim {
                    sequencer: name.to_string(),
                    node_id,
                    token,
                    expires_unix_ms: request.now_unix_ms.saturating_add(granted_ttl_ms),
                }));
            }
            Err(Error::unavailable(format!(
                "etcd store {}: claiming a node ID of {name}: lost too many races to concurrent claimers",
                self.described
            )))
        })();
        match &result {
            Ok(Some(claim)) => {
                self.note_ttl(request.ttl_ms);
                self.leases
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert((claim.sequencer.clone(), claim.node_id, claim.token), lease);
            }
            // Nothing claimed: give the lease back now rather than at its expiry (best effort).
            _ => {
                let _ = self.revoke(lease);
            }
        }
        result
    }

    fn renew(&self, claim: &Claim, ttl_ms: u64, now_unix_ms: u64) -> Result<Claim> {
        let lost = |why: &str| {
            Error::lease_lost(format!(
                "node ID {} of sequencer {} on {}: {why}",
                claim.node_id, claim.sequencer, self.described
            ))
        };
        let Some(lease) = self.lease_of(claim)? else {
            return Err(lost("the claim key is gone or belongs to another claim"));
        };
        self.note_ttl(ttl_ms);
        let v = match self.call("/v3/lease/keepalive", &json!({ "ID": lease.to_string() })) {
            Ok(v) => v,
            Err(Failure::Server(GRPC_NOT_FOUND, _)) => {
                self.forget(claim);
                return Err(lost("its etcd lease is gone"));
            }
            Err(f) => return Err(self.failure("renewing a lease", f)),
        };
        // The gateway streams keep-alive answers as {"result": {...}}; TTL 0 (omitted) means expired.
        let ttl_s = int(&v["result"]["TTL"]);
        if ttl_s <= 0 {
            self.forget(claim);
            return Err(lost("its etcd lease expired"));
        }
        Ok(Claim {
            expires_unix_ms: now_unix_ms.saturating_add(ttl_s as u64 * 1000),
            ..claim.clone()
        })
    }

    fn leave(&self, claim: &Claim) -> Result<()> {
        self.forget(claim);
        Ok(())
    }

    fn release(&self, claim: &Claim) -> Result<()> {
        if let Some(lease) = self.lease_of(claim)? {
            self.revoke(lease)?;
        }
        self.forget(claim);
        Ok(())
    }

    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        let kvs = self.range(&self.resv_key(sequencer, node_id), false, None)?;
        kvs.first()
            .map(|kv| {
                parse_reservation(&kv.value).ok_or_else(|| {
                    self.unreadable(format_args!(
                        "reservation of node ID {node_id} of {sequencer}"
                    ))
                })
            })
            .transpose()
    }

    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.write_reservation(claim, reservation, false)
    }

    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.write_reservation(claim, reservation, true)
    }

    fn holders(&self, sequencer: &str, now_unix_ms: u64) -> Result<Vec<NodeState>> {
        let mut nodes: std::collections::BTreeMap<u64, NodeState> = Default::default();
        let claim_prefix = self.claim_prefix(sequencer);
        for kv in self.range(&claim_prefix, true, None)? {
            let Some(node_id) = self.node_of(&claim_prefix, &kv.key) else {
                continue;
            };
            let ttl = self.request(
                "reading a lease",
                "/v3/lease/timetolive",
                &json!({ "ID": kv.lease.to_string() }),
            )?;
            let ttl_s = int(&ttl["TTL"]);
            if ttl_s < 0 {
                continue; // expired since the range
            }
            nodes.insert(
                node_id,
                NodeState {
                    node_id,
                    claim: Some(HeldBy {
                        holder: String::from_utf8_lossy(&kv.value).into_owned(),
                        token: kv.create_revision,
                        expires_unix_ms: now_unix_ms.saturating_add(ttl_s as u64 * 1000),
                    }),
                    reservation: None,
                },
            );
        }
        let resv_prefix = self.resv_prefix(sequencer);
        for kv in self.range(&resv_prefix, true, None)? {
            let Some(node_id) = self.node_of(&resv_prefix, &kv.key) else {
                continue;
            };
            let r = parse_reservation(&kv.value).ok_or_else(|| {
                self.unreadable(format_args!(
                    "reservation of node ID {node_id} of {sequencer}"
                ))
            })?;
            nodes
                .entry(node_id)
                .or_insert(NodeState {
                    node_id,
                    claim: None,
                    reservation: None,
                })
                .reservation = Some(r);
        }
        Ok(nodes.into_values().collect())
    }

    fn row(&self, key: &str) -> Result<Option<String>> {
        crate::base::name::check_row_key(key)?;
        let kvs = self.range(&self.row_key(key), false, None)?;
        kvs.first()
            .map(|kv| {
                String::from_utf8(kv.value.clone())
                    .map_err(|_| self.unreadable(format_args!("row {key} is not UTF-8")))
            })
            .transpose()
    }

    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        crate::base::name::check_row_key(key)?;
        let k = base64_encode(&self.row_key(key));
        let compare = match expected {
            None => {
                json!([{ "key": k, "target": "CREATE", "result": "EQUAL", "create_revision": "0" }])
            }
            Some(v) => json!([{
                "key": k, "target": "VALUE", "result": "EQUAL", "value": base64_encode(v.as_bytes())
            }]),
        };
        // The failure branch reads the row: a re-send of this transaction after the first send was
        // applied (its answer lost) fails its compare, and finds `new` — this write's own text, which
        // carries its nonce — in the row.
        let v = self.txn(
            "compare-and-set of a row",
            compare,
            json!([{ "request_put": { "key": k, "value": base64_encode(new.as_bytes()) } }]),
            json!([{ "request_range": { "key": k } }]),
        )?;
        if v["succeeded"].as_bool().unwrap_or(false) {
            return Ok(true);
        }
        let kvs = self.kvs(&v["responses"][0]["response_range"]["kvs"])?;
        if self.defect.is(Defect::EtcdRowResendByValue) {
            let text = |b: &[u8]| {
                String::from_utf8_lossy(b)
                    .split(" by=")
                    .next()
                    .map(String::from)
            };
            return Ok(kvs
                .first()
                .is_some_and(|kv| text(&kv.value) == text(new.as_bytes())));
        }
        Ok(kvs.first().is_some_and(|kv| kv.value == new.as_bytes()))
    }
}

fn parse_reservation(value: &[u8]) -> Option<Reservation> {
    let text = std::str::from_utf8(value).ok()?;
    let mut parts = text.split(' ').map(|p| p.parse::<u64>());
    let r = Reservation {
        position: parts.next()?.ok()?,
        layout_fingerprint: parts.next()?.ok()?,
        until_unix_ms: parts.next()?.ok()?,
    };
    parts.next().is_none().then_some(r)
}

/// An int64 field as the gateway writes it (a decimal string; omitted when 0).
fn int(v: &Value) -> i64 {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

/// The smallest key greater than every key starting with `prefix` (etcd's `range_end` for a prefix).
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0] // every key
}

/// A sequencer name as one key segment: `%`, `/` and control characters percent-escaped.
fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c == '%' || c == '/' || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&segment[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use snowmint::ErrorCode;

    #[test]
    fn names_escape_into_one_segment_and_back() {
        for name in ["default", "a/b", "100%", "tab\there", "ünïcode/%2F"] {
            let e = escape(name);
            assert!(!e.contains('/'), "{e}");
            assert_eq!(unescape(&e), name);
        }
    }

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(b"a/"), b"a0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b""), b"\0");
    }

    #[test]
    fn reservations_parse_strictly() {
        let r = parse_reservation(b"18446744073709551615 42 7").unwrap();
        assert_eq!(
            (r.position, r.layout_fingerprint, r.until_unix_ms),
            (u64::MAX, 42, 7)
        );
        for bad in [&b""[..], b"1 2", b"1 2 3 4", b"1 x 3", b"-1 2 3"] {
            assert_eq!(parse_reservation(bad), None);
        }
    }

    #[test]
    fn an_unreachable_cluster_is_store_unavailable_within_the_timeouts() {
        // Two ports nobody listens on (bound, then released).
        let ports: Vec<String> = (0..2)
            .map(|_| {
                let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                l.local_addr().unwrap().to_string()
            })
            .collect();
        let t0 = std::time::Instant::now();
        let e = EtcdStore::connect(&ports, "p").unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreUnavailable);
        assert!(
            e.message().contains(&ports[0]) && e.message().contains(&ports[1]),
            "{e}"
        );
        assert!(
            e.message()
                .starts_with(&format!("etcd store etcd://{}/p", ports.join(","))),
            "{e}"
        );
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    }
}
