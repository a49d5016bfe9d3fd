//! The PostgreSQL store, simulated below its statements: the real `PostgresStore` (its re-send of a
//! statement on a new connection after a broken one, its timeouts, how it reads each statement's
//! answer, its nonce in the claim's holder, its error messages) runs through its seam
//! `postgres::backend::Connect` against [`SimPg`], an in-memory database that implements what each of the
//! store's statements does (the store's module documentation) over the store's tables, judged by a
//! simulated `now()` (the true time): the claim (the claim this holder string made, if live — `mine`;
//! else the first free or expired row from `start` on, its token incremented; else the first missing
//! node ID inserted, token 1; nothing unless the sequencer's incarnation is live), the held count,
//! renewal and reservation conditional on the token and on expiry, the reservation's keep-the-larger
//! rule under one layout (unsigned), release, the rows' insert and compare-and-set answering the value
//! after the statement, sequencer records with incarnations from a sequence and a floor per name, and
//! destroy's transaction (a snapshot restored on rollback or on a connection dropped inside it).
//!
//! Why this level: simulating PostgreSQL's wire protocol and SQL would be a second PostgreSQL; the SQL
//! texts and the driver run against the real server only (`coord/tests/servers.rs`,
//! `lost_answers.rs`). What runs here unchanged is everything of the store above "run this statement on
//! a connection", which is where its re-send and answer logic lives.
//!
//! Faults, per client, from its seed ([`Faults`], the knobs of the etcd network): `cut` — a partition
//! (connecting and every statement time out); `flaky` — a statement lost before the server (no answer:
//! the client times out); `late` — committed, then the answer lost (the client times out and drops the
//! connection); `resend` — committed, then the connection dropped before the answer (the client sends
//! the statement once more on a new connection); `dup` — a statement delivered twice, the copy applied
//! later; `delay` — a statement held (a connection the client gave up on, still queued at the server)
//! and applied after a later statement of any client, its sender timing out. A timeout costs the client
//! its timeout in simulated time; nothing sleeps. Inside destroy's transaction no fault acts.
//!
//! The claims each client's statements granted are logged per store call (`begin_call`), so that the
//! world can check the re-send rule end to end: a claim call that answered one node ID left no other
//! node ID claimed under its holder string (`extra_grant`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use snowmint_coord::postgres::backend::{
    Connect, Connection, Failure, Param, Row, Statement, Value,
};

use snowmint_coord::defect::Defect;
use snowmint_coord::postgres::PostgresStore;
use snowmint_coord::Store;

use crate::link::Race;
use crate::net::{Faults, InFlight, Wire};
use crate::rng::Rng;

/// A real PostgreSQL store (`PostgresStore`) through its seam to a simulated database, over a network
/// of its own with `faults`; and that network (its log of the claims each call took).
pub(crate) fn pg_client(
    db: &Arc<SimPg>,
    now: &Arc<AtomicU64>,
    faults: &Arc<Faults>,
    seed: u64,
    race: Option<(Arc<Race>, usize)>,
    defect: Defect,
) -> (Arc<dyn Store>, Arc<PgNet>) {
    let net = PgNet::new(db, Wire::new(now, faults, seed, race));
    let store = PostgresStore::connect_through(
        Arc::new(SimConnect(net.clone())),
        "postgres://sim/db",
        Duration::from_secs(1),
        Duration::from_millis(500),
    )
    .expect("the simulated database answers");
    (Arc::new(store.plant(defect)), net)
}

/// A statement's parameter, owned (a statement held in the network).
#[derive(Clone, Debug)]
enum Owned {
    Int(i64),
    Text(String),
}

#[derive(Clone, Debug)]
struct Sequencer {
    layout: String,
    nodes: i64,
    incarnation: i64,
    created: i64,
}

#[derive(Clone, Debug, Default)]
struct Node {
    holder: Option<String>,
    token: i64,
    /// By the database's clock, in microseconds (timestamptz's precision).
    expires_us: Option<i64>,
    resv: Option<(i64, i64, i64)>,
}

#[derive(Clone, Debug, Default)]
struct Tables {
    sequencers: BTreeMap<String, Sequencer>,
    incarnations: i64,
    floors: BTreeMap<String, i64>,
    nodes: BTreeMap<(String, i64), Node>,
    rows: BTreeMap<String, String>,
}

/// A claim a statement took: the client and its call, the node ID, the holder string.
#[derive(Clone, Debug)]
struct Grant {
    client: u64,
    call: u64,
    node: i64,
    holder: String,
}

#[derive(Debug, Default)]
struct State {
    tables: Tables,
    /// Destroy's transaction: the tables before it (restored on rollback), and whose it is.
    open: Option<(u64, Tables)>,
    /// Statements in flight (delayed or duplicated; landing not while a transaction is open):
    /// statement, parameters, the client and call that sent it.
    in_flight: InFlight<(Statement, Vec<Owned>, u64, u64)>,
    grants: Vec<Grant>,
}

/// A simulated PostgreSQL database (the store's tables; its clock is the true time).
#[derive(Debug)]
pub struct SimPg {
    state: Mutex<State>,
    now: Arc<AtomicU64>,
    rng: Mutex<Rng>,
    clients: AtomicU64,
}

fn int(p: &[Owned], i: usize) -> i64 {
    match &p[i] {
        Owned::Int(v) => *v,
        other => panic!("simulated PostgreSQL: parameter ${}: {other:?}", i + 1),
    }
}

fn text(p: &[Owned], i: usize) -> &str {
    match &p[i] {
        Owned::Text(v) => v,
        other => panic!("simulated PostgreSQL: parameter ${}: {other:?}", i + 1),
    }
}

/// Milliseconds of a timestamp in microseconds, as `(extract(epoch FROM t) * 1000)::bigint` rounds.
fn ms(us: i64) -> i64 {
    (us + 500).div_euclid(1000)
}

/// `a > b` compared as unsigned 64-bit (`# (1 << 63)` on both sides).
fn above(a: i64, b: i64) -> bool {
    (a as u64) > (b as u64)
}

fn record(name: &str, s: &Sequencer, floor: i64) -> Row {
    vec![
        Value::Text(name.to_string()),
        Value::Text(s.layout.clone()),
        Value::Int(s.nodes),
        Value::Int(s.incarnation),
        Value::Int(s.created),
        Value::Int(floor),
    ]
}

fn opt(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Int)
}

impl SimPg {
    pub fn new(now: &Arc<AtomicU64>, seed: u64) -> Arc<SimPg> {
        Arc::new(SimPg {
            state: Mutex::new(State::default()),
            now: now.clone(),
            rng: Mutex::new(Rng(seed)),
            clients: AtomicU64::new(0),
        })
    }

    fn now_us(&self) -> i64 {
        (self.now.load(Ordering::SeqCst) / 1000) as i64
    }

    /// Runs one statement of `client`'s `call` (first the statements in flight that land before it,
    /// unless a transaction is open): its rows and the number of rows it changed.
    fn handle(&self, st: Statement, p: &[Owned], client: u64, call: u64) -> (Vec<Row>, u64) {
        let mut s = self.state.lock().unwrap();
        if s.open.is_none() {
            let now = self.now.load(Ordering::SeqCst);
            let landing = s.in_flight.landing(now, &mut self.rng.lock().unwrap());
            for (st, p, client, call) in landing {
                self.apply(&mut s, st, &p, client, call);
            }
        }
        self.apply(&mut s, st, p, client, call)
    }

    fn hold(&self, st: Statement, p: &[Owned], client: u64, call: u64) {
        let mut s = self.state.lock().unwrap();
        let now = self.now.load(Ordering::SeqCst);
        s.in_flight.hold(
            (st, p.to_vec(), client, call),
            now,
            &mut self.rng.lock().unwrap(),
        );
    }

    fn apply(
        &self,
        s: &mut State,
        st: Statement,
        p: &[Owned],
        client: u64,
        call: u64,
    ) -> (Vec<Row>, u64) {
        let now = self.now_us();
        let live = |n: &Node| n.holder.is_some() && n.expires_us.is_some_and(|e| e > now);
        match st {
            Statement::Claim => return self.claim(s, p, client, call, true),
            Statement::ClaimWithoutMine => return self.claim(s, p, client, call, false),
            Statement::Begin => {
                let snapshot = s.tables.clone();
                s.open = Some((client, snapshot));
                return (vec![], 0);
            }
            Statement::Commit => {
                s.open = None;
                return (vec![], 0);
            }
            Statement::Rollback => {
                if let Some((_, before)) = s.open.take() {
                    s.tables = before;
                }
                return (vec![], 0);
            }
            _ => {}
        }
        let t = &mut s.tables;
        match st {
            Statement::HeldCount => {
                let (seq, n) = (text(p, 0), int(p, 1));
                let held = t
                    .nodes
                    .range((seq.to_string(), 0)..(seq.to_string(), n.max(0)))
                    .filter(|(_, node)| live(node))
                    .count();
                (vec![vec![Value::Int(held as i64)]], 0)
            }
            Statement::Renew => {
                let key = (text(p, 0).to_string(), int(p, 1));
                match t.nodes.get_mut(&key) {
                    Some(n) if n.token == int(p, 2) && live(n) => {
                        let e = now + int(p, 3) * 1000;
                        n.expires_us = Some(e);
                        (vec![vec![Value::Int(ms(e))]], 1)
                    }
                    _ => (vec![], 0),
                }
            }
            Statement::Release => {
                let key = (text(p, 0).to_string(), int(p, 1));
                match t.nodes.get_mut(&key) {
                    Some(n) if n.token == int(p, 2) && n.holder.is_some() => {
                        n.holder = None;
                        n.expires_us = None;
                        (vec![], 1)
                    }
                    _ => (vec![], 0),
                }
            }
            Statement::Reserve | Statement::LowerReservation => {
                let key = (text(p, 0).to_string(), int(p, 1));
                let (pos, layout, until) = (int(p, 3), int(p, 4), int(p, 5));
                match t.nodes.get_mut(&key) {
                    Some(n) if n.token == int(p, 2) && live(n) => {
                        n.resv = Some(match (st, n.resv) {
                            // The keep-the-larger CASE, under the same layout fingerprint.
                            (Statement::Reserve, Some((p0, l0, u0))) if l0 == layout => (
                                if above(p0, pos) { p0 } else { pos },
                                layout,
                                if above(u0, until) { u0 } else { until },
                            ),
                            _ => (pos, layout, until),
                        });
                        (vec![], 1)
                    }
                    _ => (vec![], 0),
                }
            }
            Statement::Reservation => {
                let key = (text(p, 0).to_string(), int(p, 1));
                match t.nodes.get(&key).and_then(|n| n.resv) {
                    Some((a, b, c)) => (vec![vec![Value::Int(a), Value::Int(b), Value::Int(c)]], 0),
                    None => (vec![], 0),
                }
            }
            Statement::Holders => {
                let seq = text(p, 0);
                let rows = t
                    .nodes
                    .range((seq.to_string(), i64::MIN)..=(seq.to_string(), i64::MAX))
                    .filter(|(_, n)| live(n) || n.resv.is_some())
                    .map(|((_, id), n)| {
                        let (a, b, c) = match n.resv {
                            Some((a, b, c)) => (Some(a), Some(b), Some(c)),
                            None => (None, None, None),
                        };
                        vec![
                            Value::Int(*id),
                            n.holder.clone().map_or(Value::Null, Value::Text),
                            Value::Int(n.token),
                            opt(n.expires_us.map(ms)),
                            n.expires_us.map_or(Value::Null, |e| Value::Bool(e > now)),
                            opt(a),
                            opt(b),
                            opt(c),
                        ]
                    })
                    .collect();
                (rows, 0)
            }
            Statement::CreateSequencer => {
                let name = text(p, 0).to_string();
                t.incarnations += 1;
                if t.sequencers.contains_key(&name) {
                    return (vec![], 0);
                }
                let rec = Sequencer {
                    layout: text(p, 1).to_string(),
                    nodes: int(p, 2),
                    incarnation: t.incarnations,
                    created: int(p, 3),
                };
                let floor = t.floors.get(&name).copied().unwrap_or(0);
                let row = record(&name, &rec, floor);
                t.sequencers.insert(name, rec);
                (vec![row], 1)
            }
            Statement::Sequencer | Statement::DestroyLock => {
                let name = text(p, 0);
                let rows = t
                    .sequencers
                    .get(name)
                    .filter(|r| st == Statement::Sequencer || r.incarnation == int(p, 1))
                    .map(|r| record(name, r, t.floors.get(name).copied().unwrap_or(0)))
                    .into_iter()
                    .collect();
                (rows, 0)
            }
            Statement::Sequencers => {
                let rows = t
                    .sequencers
                    .iter()
                    .map(|(name, r)| record(name, r, t.floors.get(name).copied().unwrap_or(0)))
                    .collect();
                (rows, 0)
            }
            Statement::DestroyClaims => {
                let seq = text(p, 0);
                let mut changed = 0;
                for (_, n) in t
                    .nodes
                    .range_mut((seq.to_string(), i64::MIN)..=(seq.to_string(), i64::MAX))
                {
                    if n.holder.is_some() {
                        n.holder = None;
                        n.expires_us = None;
                        changed += 1;
                    }
                }
                (vec![], changed)
            }
            Statement::DestroyReservations => {
                let seq = text(p, 0);
                let rows = t
                    .nodes
                    .range((seq.to_string(), i64::MIN)..=(seq.to_string(), i64::MAX))
                    .filter_map(|(_, n)| n.resv)
                    .map(|(a, b, c)| vec![Value::Int(a), Value::Int(b), Value::Int(c)])
                    .collect();
                (rows, 0)
            }
            Statement::DestroyFloor => {
                t.floors.insert(text(p, 0).to_string(), int(p, 1));
                (vec![], 1)
            }
            Statement::Destroy => {
                let name = text(p, 0);
                match t.sequencers.get(name) {
                    Some(r) if r.incarnation == int(p, 1) => {
                        t.sequencers.remove(name);
                        (vec![], 1)
                    }
                    _ => (vec![], 0),
                }
            }
            Statement::SchemaState => {
                // The schema exists, the role owns it, the tables are there.
                let row = vec![
                    Value::Bool(true),
                    Value::Text("sim".into()),
                    Value::Bool(true),
                    Value::Bool(true),
                    Value::Text("sim".into()),
                    Value::Text("sim".into()),
                    Value::Bool(true),
                ];
                (vec![row], 0)
            }
            Statement::CreateSchema => (vec![], 0),
            Statement::Row => {
                let rows = t
                    .rows
                    .get(text(p, 0))
                    .map(|v| vec![Value::Text(v.clone())])
                    .into_iter()
                    .collect();
                (rows, 0)
            }
            Statement::InsertRow | Statement::UpdateRow => {
                let key = text(p, 0).to_string();
                let written = match (st, t.rows.get(&key)) {
                    (Statement::InsertRow, None) => Some(text(p, 1)),
                    (Statement::UpdateRow, Some(v)) if v == text(p, 1) => Some(text(p, 2)),
                    _ => None,
                };
                if let Some(new) = written {
                    t.rows.insert(key.clone(), new.to_string());
                }
                let rows = t
                    .rows
                    .get(&key)
                    .map(|v| vec![Value::Text(v.clone())])
                    .into_iter()
                    .collect();
                (rows, written.is_some() as u64)
            }
            _ => unreachable!("answered above"),
        }
    }

    /// The claim statement (`mine`: the claim this holder string made, if live, is its answer).
    fn claim(
        &self,
        s: &mut State,
        p: &[Owned],
        client: u64,
        call: u64,
        mine: bool,
    ) -> (Vec<Row>, u64) {
        let now = self.now_us();
        let (seq, n, start, holder, ttl, inc) = (
            text(p, 0),
            int(p, 1),
            int(p, 2),
            text(p, 3),
            int(p, 4),
            int(p, 5),
        );
        let t = &mut s.tables;
        let answer = |id: i64, node: &Node| {
            vec![
                Value::Int(id),
                Value::Int(node.token),
                opt(node.expires_us.map(ms)),
            ]
        };
        let all = (seq.to_string(), i64::MIN)..=(seq.to_string(), i64::MAX);
        if mine {
            let found: Vec<Row> = t
                .nodes
                .range(all.clone())
                .filter(|(_, x)| {
                    x.holder.as_deref() == Some(holder) && x.expires_us.is_some_and(|e| e > now)
                })
                .map(|((_, id), x)| answer(*id, x))
                .collect();
            if !found.is_empty() {
                return (found, 0);
            }
        }
        if t.sequencers.get(seq).map(|r| r.incarnation) != Some(inc) {
            return (vec![], 0);
        }
        let free = t
            .nodes
            .range(all)
            .filter(|((_, id), x)| {
                *id < n && (x.holder.is_none() || x.expires_us.is_some_and(|e| e <= now))
            })
            .map(|((_, id), _)| *id)
            .min_by_key(|id| (id - start + n).rem_euclid(n));
        let id = match free {
            Some(id) => id,
            None => match (start..n)
                .chain(0..start)
                .find(|g| !t.nodes.contains_key(&(seq.to_string(), *g)))
            {
                Some(g) => g,
                None => return (vec![], 0),
            },
        };
        let node = t.nodes.entry((seq.to_string(), id)).or_default();
        node.holder = Some(holder.to_string());
        node.token += 1;
        node.expires_us = Some(now + ttl * 1000);
        let row = answer(id, node);
        s.grants.push(Grant {
            client,
            call,
            node: id,
            holder: holder.to_string(),
        });
        (vec![row], 1)
    }
}

/// One client's network to a simulated database: its faults and its own seeded choices.
#[derive(Debug)]
pub struct PgNet {
    server: Arc<SimPg>,
    wire: Wire,
    /// This client, and its current store call.
    id: u64,
    call: AtomicU64,
}

impl std::ops::Deref for PgNet {
    type Target = Wire;
    fn deref(&self) -> &Wire {
        &self.wire
    }
}

impl PgNet {
    pub fn new(server: &Arc<SimPg>, wire: Wire) -> Arc<PgNet> {
        Arc::new(PgNet {
            server: server.clone(),
            wire,
            id: server.clients.fetch_add(1, Ordering::SeqCst),
            call: AtomicU64::new(0),
        })
    }

    fn wait(&self, timeout: Duration) -> Failure {
        self.now
            .fetch_add(timeout.as_nanos() as u64, Ordering::SeqCst);
        Failure::TimedOut
    }

    /// A store call begins (the claims its statements take are logged under it).
    pub fn begin_call(&self) -> u64 {
        self.call.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// A node ID other than `node` that a statement of this client's `call` claimed and that is still
    /// claimed under that statement's holder string (a claim call that took two node IDs).
    pub fn extra_grant(&self, call: u64, sequencer: &str, node: u64) -> Option<String> {
        let s = self.server.state.lock().unwrap();
        let now = self.server.now_us();
        s.grants
            .iter()
            .filter(|g| g.client == self.id && g.call == call && g.node != node as i64)
            .find(|g| {
                s.tables
                    .nodes
                    .get(&(sequencer.to_string(), g.node))
                    .is_some_and(|n| {
                        n.holder.as_deref() == Some(&g.holder)
                            && n.expires_us.is_some_and(|e| e > now)
                    })
            })
            .map(|g| {
                format!(
                    "one claim call took node ID {node} and node ID {} (still held under its holder string)",
                    g.node
                )
            })
    }
}

/// The store's `Connect` over a [`PgNet`].
#[derive(Debug)]
pub struct SimConnect(pub Arc<PgNet>);

impl Connect for SimConnect {
    fn connect(&self, timeout: Duration) -> Result<Box<dyn Connection>, Failure> {
        if self.0.faults.cut.load(Ordering::SeqCst) {
            return Err(self.0.wait(timeout));
        }
        Ok(Box::new(SimConnection {
            net: self.0.clone(),
            closed: false,
        }))
    }
}

#[derive(Debug)]
struct SimConnection {
    net: Arc<PgNet>,
    closed: bool,
}

impl SimConnection {
    fn run(
        &mut self,
        st: Statement,
        params: &[Param<'_>],
        timeout: Duration,
    ) -> Result<(Vec<Row>, u64), Failure> {
        if self.closed {
            return Err(Failure::Error {
                closed: true,
                code: None,
                detail: "simulated: connection closed".into(),
            });
        }
        let p: Vec<Owned> = params
            .iter()
            .map(|p| match p {
                Param::Int(v) => Owned::Int(*v),
                Param::Text(v) => Owned::Text(v.to_string()),
            })
            .collect();
        let net = self.net.clone();
        let (server, f) = (&net.server, &net.faults);
        let call = net.call.load(Ordering::SeqCst);
        let in_transaction = server.state.lock().unwrap().open.is_some();
        if in_transaction {
            return Ok(server.handle(st, &p, net.id, call));
        }
        if f.cut.load(Ordering::SeqCst) || net.roll(&f.flaky) {
            return Err(net.wait(timeout));
        }
        let write = !matches!(
            st,
            Statement::HeldCount
                | Statement::Reservation
                | Statement::Holders
                | Statement::Sequencer
                | Statement::Sequencers
                | Statement::SchemaState
                | Statement::Row
        );
        if write && net.roll(&f.delay) {
            server.hold(st, &p, net.id, call);
            return Err(net.wait(timeout));
        }
        let answer = server.handle(st, &p, net.id, call);
        if write && net.roll(&f.dup) {
            server.hold(st, &p, net.id, call);
        }
        // A little latency.
        let latency = net.rng.lock().unwrap().below(1_000_000);
        net.now.fetch_add(latency, Ordering::SeqCst);
        let failure = if net.roll(&f.late) {
            Some(net.wait(timeout))
        } else if net.roll(&f.resend) {
            self.closed = true;
            Some(Failure::Error {
                closed: true,
                code: None,
                detail: "simulated: connection closed after commit".into(),
            })
        } else {
            None
        };
        match failure {
            None => Ok(answer),
            Some(failure) => {
                net.interleave();
                Err(failure)
            }
        }
    }
}

impl Connection for SimConnection {
    fn query(
        &mut self,
        st: Statement,
        params: &[Param<'_>],
        timeout: Duration,
    ) -> Result<Vec<Row>, Failure> {
        self.run(st, params, timeout).map(|(rows, _)| rows)
    }
    fn execute(
        &mut self,
        st: Statement,
        params: &[Param<'_>],
        timeout: Duration,
    ) -> Result<u64, Failure> {
        self.run(st, params, timeout).map(|(_, n)| n)
    }
    fn is_closed(&self) -> bool {
        self.closed
    }
}

impl Drop for SimConnection {
    /// A connection dropped inside its transaction: the server rolls it back.
    fn drop(&mut self) {
        let mut s = self.net.server.state.lock().unwrap();
        if s.open.as_ref().is_some_and(|(c, _)| *c == self.net.id) {
            if let Some((_, before)) = s.open.take() {
                s.tables = before;
            }
        }
    }
}
