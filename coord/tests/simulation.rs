//! Deterministic simulation of the lease and sequencer algorithms (SPEC §3.2, §3.3): the real `Lease`
//! code, stepped (no keeper threads), over the in-memory store, with every holder's clock, the store's
//! clock and every fault drawn from one seed. The same seed replays the same run, step by step. The
//! shared state file (SPEC §4a) runs in a second world: processes of one host minting from one real
//! memory-mapped file with clocks of their own, crashing and opening it again.
//!
//! Faults: clocks stepped back and forth, frozen and smeared; holders paused past their TTL, crashed
//! (no release) and restarted; the store unreachable from a holder (a partition), failing requests at
//! random, or applying a request and answering after the holder gave up; the sequencer destroyed and
//! created again with another node count (2 to 4), another epoch (0.5 to 2 s later or earlier) or
//! another split of the bits between node and sequence (holders adopt the stored layout; a refusal
//! must be `SEQUENCER_CONFLICT` for a value floor beyond `max_ahead`), and an operator's destroy of
//! the incarnation it read before the re-creation landing after it (it must leave the new one).
//! After every step: no ID minted twice across all holders, IDs strictly increasing per lease, and
//! per node ID the stored reservation lies past every position minted on it (a reservation moved
//! back, or written for a ceiling never acknowledged, is caught before a crash turns it into a
//! duplicate). At the end of a run: per node ID, the positions of successive leases do not overlap (what
//! SPEC §3.2 promises, and what lets the long run check 10^9 IDs without keeping them).
//!
//! ```text
//! cargo test -p snowmint-coord --features planted-defects --test simulation            # make test's bounded run
//! cargo test -p snowmint-coord --features planted-defects --test simulation -- --replay SEED
//! cargo test --release -p snowmint-coord --features planted-defects --test simulation -- --long
//! ```
//! Options: `--seeds N` (default 500 lease seeds; the state file and the embedded store run N/50 seeds of `--steps`/2, the
//! service N/25 seeds of `--steps`/2, the hosts N/5 seeds of `--steps`/4, the
//! ranges N/5 seeds of `--steps`/4, the leases over etcd N/50 seeds of `--steps`/2, the ranges over
//! etcd N/25 seeds of `--steps`/4, the leases over PostgreSQL N/25 seeds of `--steps`/2, the ranges
//! over PostgreSQL N/10 seeds of `--steps`/4, the shared lease N/50 seeds of `--steps`/1000 rounds per
//! process, the windows N/10 seeds of `--steps`/2), `--first SEED`, `--steps N` (per seed,
//! default 4000), `--world NAME` (only that world: `leases`, `ranges`, `etcd leases`, `etcd ranges`,
//! `postgres leases`, `postgres ranges`, `embedded leases`, `service`, `hosts`, `shared lease`,
//! `windows`, `state file`), `--replay
//! SEED` (one seed, every step printed, `--steps` being that world's own; with `--state-file`,
//! `--ranges`, `--etcd`, `--ranges --etcd`, `--postgres`, `--ranges --postgres`, `--embedded`,
//! `--service`, `--hosts`, `--shared-lease` or `--windows`, that
//! world; `--defect NAME` plants one of the table's
//! defects), `--long` (1024 nodes, 10^9 IDs: the README's figures), `--defects` / `--no-defects` (only
//! / without the planted-defect proof; `--defect NAME` proves only that one), `--defect-seeds N` (the
//! proof's bound, default 2000), `--no-late-reservations` (reservations are never delayed or
//! duplicated).
//! The default run (proof included) takes about a minute and a half of CPU in debug (the shared-lease
//! world, in real time, adds about 6 s of wall time and little CPU).
//!
//! Network faults of real clients (`Link`): a row write whose answer is lost and which the client sends
//! again (applied first or not), another process acting in between, answered by the store's re-send
//! rule; a request duplicated; a request delayed, landing after the client's next write. Range
//! processes of two datacenters run under them. Reservations are delayed and duplicated too: an older
//! reservation landing after a newer one must leave the stored one (the stores' never-lower rule,
//! `crate::store`); before that rule, seed 3 of the default lease seeds found duplicates, and the
//! planted `reservation-lowered` defect puts the old behaviour back.
//!
//! Range processes open as `RangeSequence::open_urls` does (`SteppedAllocator::open`: both stores by
//! URL through a `StoreOpener` that gives the process's links, the global store connected on first
//! use, then the first process range), at the start, after a crash, and restarted with the global store
//! partitioned away: a refusal while the datacenter's store answers and its row holds values (before
//! and after the attempt) is a violation (SPEC §4: opening and serving touch only the datacenter's
//! store while its row holds values; the planted `range-open-connects-global` connects the global
//! store at once, as before the fix).
//!
//! The network boundary (`--etcd`; module `etcd`): the same lease and range worlds over the real etcd
//! client (`EtcdStore`, through its transport seam `etcd::transport::Dial`) on a simulated network to
//! a simulated etcd cluster with etcd's semantics (revisions, transactions, leases expiring by
//! simulated time). There `Link`'s fault knobs act at the network: a request lost before the server, an
//! answer lost or late after the server applied it (the client times out and re-sends on the next
//! endpoint), a connection dropped after commit (the client re-sends on a fresh connection), a request
//! duplicated or delayed past later ones (of any client; half of them stalled up to 1.5 s, landing
//! after the sender's next keeper rounds: what the reservation's mod-revision compare guards
//! against), a partition. A timeout costs its length in
//! simulated time; nothing sleeps, so a seed replays exactly. The range world's races run there too:
//! while a client's answer is lost, another process takes a range.
//!
//! The PostgreSQL store (`--postgres`; module `postgres`): the same lease and range worlds over the
//! real `PostgresStore` through its statement seam `postgres::backend::Connect` to a simulated
//! database that implements each of the store's statements over in-memory tables, judged by the true
//! time as `now()` (the SQL texts and the wire protocol are the real-server tests' part). `Link`'s
//! knobs act at the connection: a statement lost before the server (a timeout), an answer lost after
//! the statement committed (a timeout: the store drops the connection), a connection dropped after
//! commit (the store sends the statement once more on a new connection: a claim's re-send must find
//! the claim it made, by its nonce), a statement duplicated or delayed past later ones of any client
//! (a connection the client gave up on, its statement still queued), a partition. One more check
//! there: a claim call that answered one node ID left no other node ID claimed under its holder
//! string (the store's re-send rule; a node ID held by nobody until its TTL otherwise).
//!
//! The embedded store (`--world "embedded leases"`, `--replay SEED --embedded`): each holder opens the
//! real `FileStore` on one directory (tmpfs; one seed in two reached through a symbolic link,
//! `embedded -> release-0`), which is deleted (`rm -rf`) or moved away and replaced by an empty one
//! under running holders; a lease on the old directory must end at its next keeper round that reaches
//! the store, and the host registry must keep a new directory's claims off its node ID meanwhile (no ID
//! twice). Its history is lost too, as `cli/tests/history.rs` loses it under real processes (issue 39;
//! `World::lose_history`, 2 % of the steps): deleted or moved away and made again, restored from a
//! `cp -a` backup taken earlier (old claim records, reservations and sequencer record), the symbolic
//! link re-pointed (`mv -T`) to a new or restored directory, or the host registry not shared (the
//! holders' `/dev/shm` is not the next claimer's: another container, or the registry deleted) and the
//! directory replaced; the operator creates the sequencer again where it is missing. There only the
//! store's bound keeps the old directory's holders, minting on up to their reservations, apart from
//! the new claims (`Store::max_ahead`: reservations at most `now + 1 s`, every new claim above it): the
//! planted `embedded-no-max-ahead` reverts it (before these faults it passed 200 seeds of this world;
//! now caught at seed 1). The sequencer is re-created there with its own layout only, and there are
//! no clock faults: a deleted directory takes its reservations and value floor with it, after which
//! only the clock keeps the old IDs apart (SPEC §8) — with per-holder clock steps, or a host clock
//! stepped back, or an epoch changed after a floor put IDs ahead of the clock, this world does mint IDs
//! twice, whatever the product does.
//!
//! The ID service (`--world service`, `--replay SEED --service`; module `service`): three instances of
//! the real `snowmint_service::Service`, on fixed node IDs claimed on the client sequencer (`--node N
//! --leases URL`) or on a lease source naming it (`--node URL?sequencer=…`), the store those URLs name
//! opened through the service's own code path by an injected `StoreOpener` (the in-memory store behind
//! `Link`'s faults), the own lease stepped; clients minting under leases taken, renewed and released
//! through the service's routes by any instance, the client sequencer destroyed and created again by the
//! operator. Now and then an instance starts with the operator's mistake, a lease source on another
//! sequencer with `--client-sequencer` the client sequencer, which it must refuse: no ID twice across
//! instances and clients, no sequencer record the operator did not create, and no start of the mistake
//! (reported at the end of the run, so that what it leads to, an instance and a client on one node ID,
//! meets the no-ID-twice check first). (`snowmint-service` is a dev-dependency
//! of this crate with its `planted-defects` feature, so that its instances run in this binary and its
//! planted defects sit in the same table; in a dev-dependency cycle the service links this crate's
//! library.)
//!
//! One lease per host (`--world "shared lease"`, `--replay SEED --shared-lease`; module `shared_lease`):
//! three hosts of three processes each, every process opening the lease source with its host's state
//! file, the processes of a host starting at once, minting, exiting cleanly or crashing, and starting
//! again; in real time on threads (a shared lease has a keeper thread and the kernel's
//! open-file-description locks), the seed drawing each process's schedule. Checked: no ID twice, the
//! processes of a host that hold their lease at once on one node ID (issue 40: the first claimer wins,
//! the others adopt its record), no clean exit releasing the claim while another process of the host
//! holds it (planted: `shared-lease-no-others`, `SharedFile::others` always `false`).
//!
//! The bindings' per-object ID windows (`--world windows`, `--replay SEED --windows`; module `windows`):
//! `snowmint_host::window::OwnWindow` as Python and Node drive it, on a simulated clock (its
//! `try_mint_from` / `mint_from`): four objects on the generators of two node IDs, waits that let more
//! calls of the same object in (the GIL released) and last longer than asked, leases changing
//! generators, windows closed, the clock stepped back. Checked: no ID twice, each object's IDs under a
//! generator increasing (planted: `window-of-another-generator`, a window handed out under a generator
//! that did not take it; `window-keeps-earlier`, the window put back after a wait closed and the one
//! taken earlier kept).
//!
//! The `ip` node source (`--world hosts`, `--replay SEED --hosts`; module `hosts`): fleets of hosts
//! with the interface lists real hosts have (bridges with one address on every host, link-local and
//! down interfaces, a /16 numbered by rack whose host parts may not fit the node field, `ip:IFACE` on
//! some hosts), each host's node ID from the real `ip_node` (a refusal: the host does not start), the
//! started ones minting with the real generator: no ID twice across hosts.

//! Claims' expiry, in every world on the in-memory and embedded stores (which judge by the simulated
//! time they are given): `Link` notes each claim's expiry as the store answers it, and a renewal
//! answered after that expiry is a violation (SPEC §3.2: every store expires a claim at its TTL and
//! refuses its renewal). An expired claim nobody took again mints no duplicate, so the rule is
//! checked itself.
//!
//! The proof (planted defects, feature `planted-defects`): each one- or two-line mistake of the
//! table in `DEFECTS` must be caught within `--defect-seeds`; the run prints how many seeds each took
//! and fails if one is not caught. A batch that meets the ceiling on a healthy holder must succeed
//! after the keeper's round (a liveness check: what catches a keeper reserving less than the batch).

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use etcd::{Faults, SimDial, SimEtcd, SimNet, Wire};
use snowmint::{ErrorCode, Layout, LayoutConfig, Options, Policy};
use snowmint_coord::etcd::EtcdStore;
use snowmint_coord::lease::{start_after, Defect};
use snowmint_coord::postgres::PostgresStore;
use snowmint_coord::range::{RangeSequence, SteppedAllocator};
use snowmint_coord::sequencer::layout_from_text;
use snowmint_coord::{
    layout_fingerprint, layout_text, Claim, ClaimRequest, Error, FileStore, Lease, LeaseOptions,
    LeaseState, MemoryStore, NodeState, RangeOptions, Reservation, Result, SequencerConfig,
    SequencerRecord, Store, Time,
};

#[path = "simulation/etcd.rs"]
mod etcd;
#[path = "simulation/hosts.rs"]
mod hosts;
#[path = "simulation/postgres.rs"]
mod postgres;
#[path = "simulation/service.rs"]
mod service;
#[path = "simulation/shared_lease.rs"]
mod shared_lease;
#[path = "simulation/windows.rs"]
mod windows;

use postgres::{PgNet, SimConnect, SimPg};

/// A real etcd client (three endpoint names, one simulated cluster) over a network of its own with
/// `faults`.
fn etcd_client(
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

/// A real PostgreSQL store (`PostgresStore`) through its seam to a simulated database, over a network
/// of its own with `faults`; and that network (its log of the claims each call took).
fn pg_client(
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

/// SplitMix64: small, fast, and the whole run follows from its seed.
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const MS: u64 = 1_000_000;
const START_UNIX_NS: u64 = 1_750_000_000_000 * MS;

/// One line of a world's `--trace` output: the step, the simulated time since the start, what happened.
fn trace_line(on: bool, step: u64, now: &AtomicU64, what: impl FnOnce() -> String) {
    if on {
        println!(
            "step {:>6} t={:>8}ms  {}",
            step,
            (now.load(Ordering::SeqCst) - START_UNIX_NS) / MS,
            what()
        );
    }
}

/// One holder's clock: the true time (shared, also the store's clock) plus an offset that may be stepped
/// or smeared, or frozen at a reading. Monotonic time is the true time (a process's monotonic clock).
#[derive(Debug)]
struct SimClock {
    now: Arc<AtomicU64>,
    offset_ns: AtomicI64,
    frozen: Mutex<Option<u64>>,
}

impl Time for SimClock {
    fn unix_ns(&self) -> u64 {
        if let Some(f) = *self.frozen.lock().unwrap() {
            return f;
        }
        let t =
            self.now.load(Ordering::SeqCst) as i128 + self.offset_ns.load(Ordering::SeqCst) as i128;
        t.clamp(0, u64::MAX as i128) as u64
    }
    fn monotonic_ns(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}

/// One holder's link to the shared store. The store judges claim expiry by its own clock (the true
/// time), as etcd and PostgreSQL do. `cut`: every request fails; `flaky` percent of requests fail before
/// reaching the store; `late` percent of writes are applied but answered with a failure.
///
/// Faults of a real client's network (`set_network`): `resend` percent of row writes lose their answer
/// (half of them after the store applied the write, half before it reached the store) and the client
/// sends them again, after another process of the world may have acted (`race`); the store answers the
/// re-send by its re-send rule ([`Store::swap_row`]: a re-send that finds the row holding its own text,
/// nonce included, was written; the planted defects `ResendNotWritten` and `ResendByValue` are the
/// stores that answer otherwise). `dup` percent of writes are delivered twice, the copy landing after
/// this client's next write; `delay` percent are held back (answered with a failure) and applied after
/// this client's next write: an older reservation landing after a newer one, an old compare-and-set
/// after a later one.
///
/// Over a real client (`net`: the etcd client on a simulated network, `etcd::SimNet`), the same knobs
/// act at the network instead, and this link passes every call through.
#[derive(Debug)]
struct Link {
    store: Arc<dyn Store>,
    now: Arc<AtomicU64>,
    faults: Arc<Faults>,
    /// The store is a real client whose network has the faults: pass every call through.
    net: bool,
    /// Writes held back or duplicated, landing after this client's next write.
    pending: Mutex<Vec<Write>>,
    /// Another process that may act while an answer is lost (the range world's races).
    race: Option<(Arc<Race>, usize)>,
    defect: Defect,
    /// Reservations too may be delayed and duplicated (on by default; `--no-late-reservations`).
    late_reservations: bool,
    rng: Mutex<Rng>,
    /// Over the PostgreSQL store: its simulated network, whose log tells whether a claim call took
    /// more than one node ID; and the first such call seen (the world fails on it).
    pg: Option<Arc<PgNet>>,
    violation: Mutex<Option<String>>,
    /// Each claim's expiry as the store last answered it (claims and renewals of every link of the
    /// world): a renewal answered after it is a violation.
    expiries: Expiries,
}

/// Per claim (sequencer, node ID, fencing token), its expiry (Unix ms) as the store last set it.
type Expiries = Arc<Mutex<std::collections::HashMap<(String, u64, u64), u64>>>;

/// A write in flight.
#[derive(Debug)]
enum Write {
    Swap(String, Option<String>, String),
    Reserve(Claim, Reservation),
}

impl Link {
    fn new(
        store: Arc<dyn Store>,
        now: &Arc<AtomicU64>,
        seed: u64,
        race: Option<(Arc<Race>, usize)>,
        defect: Defect,
    ) -> Link {
        Link {
            store,
            now: now.clone(),
            faults: Arc::default(),
            net: false,
            pending: Mutex::new(Vec::new()),
            race,
            defect,
            late_reservations: false,
            rng: Mutex::new(Rng(seed)),
            pg: None,
            violation: Mutex::new(None),
            expiries: Expiries::default(),
        }
    }
    fn true_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst) / MS
    }
    fn roll(&self, percent: &AtomicU64) -> bool {
        let p = percent.load(Ordering::SeqCst);
        p > 0 && self.rng.lock().unwrap().chance(p)
    }
    /// Sets the network faults (percent each) and says so.
    fn set_network(&self, rng: &mut Rng) -> String {
        let pick = |rng: &mut Rng| [0, 0, 10, 30][rng.below(4) as usize];
        let (resend, dup, delay) = (pick(rng), pick(rng), pick(rng));
        self.faults.resend.store(resend, Ordering::SeqCst);
        self.faults.dup.store(dup, Ordering::SeqCst);
        self.faults.delay.store(delay, Ordering::SeqCst);
        if self.net {
            // At the network, `resend` is a connection dropped after the server applied the request.
            return format!("dropped after commit {resend}%, duplicated {dup}%, delayed {delay}%");
        }
        format!("re-sent {resend}%, duplicated {dup}%, delayed {delay}%")
    }
    fn heal(&self) {
        self.faults.heal()
    }
    fn healthy(&self) -> bool {
        self.faults.healthy()
    }
    fn before(&self) -> Result<()> {
        if self.net {
            return Ok(());
        }
        let flaky = self.faults.flaky.load(Ordering::SeqCst);
        if self.faults.cut.load(Ordering::SeqCst) || self.rng.lock().unwrap().chance(flaky) {
            return Err(Error::unavailable("simulated: the store is unreachable"));
        }
        Ok(())
    }
    fn after<T>(&self, r: Result<T>) -> Result<T> {
        if self.net {
            return r;
        }
        let late = self.faults.late.load(Ordering::SeqCst);
        if r.is_ok() && self.rng.lock().unwrap().chance(late) {
            return Err(Error::unavailable(
                "simulated: applied, but answered after the holder gave up",
            ));
        }
        r
    }
    fn apply(&self, w: &Write) -> Result<bool> {
        match w {
            Write::Swap(key, expected, new) => self.store.swap_row(key, expected.as_deref(), new),
            Write::Reserve(claim, r) => self.store.reserve(claim, r).map(|()| true),
        }
    }
    /// Sends a write: held back, or applied (then what was held back lands, and a duplicate may be
    /// queued).
    fn send(&self, w: Write) -> Result<bool> {
        if self.net {
            return self.apply(&w);
        }
        let reorder = self.late_reservations || matches!(w, Write::Swap(..));
        if reorder && self.roll(&self.faults.delay) {
            self.pending.lock().unwrap().push(w);
            return Err(Error::unavailable(
                "simulated: the request is delayed in the network (it lands later)",
            ));
        }
        let r = self.apply(&w);
        let landed: Vec<Write> = std::mem::take(&mut *self.pending.lock().unwrap());
        for old in &landed {
            let _ = self.apply(old);
        }
        if reorder && self.roll(&self.faults.dup) {
            self.pending.lock().unwrap().push(w);
        }
        r
    }
    /// Another process of the world acts (while this client's answer is lost).
    fn interleave(&self) {
        if let Some((race, me)) = &self.race {
            race.interleave_always(*me);
        }
    }
    /// The store's answer to a re-sent row write whose compare failed.
    fn resend_answer(&self, key: &str, new: &str) -> Result<bool> {
        let row = self.store.row(key)?;
        Ok(match self.defect {
            Defect::ResendNotWritten => false,
            Defect::ResendByValue => row.is_some_and(|r| without_nonce(&r) == without_nonce(new)),
            _ => row.as_deref() == Some(new),
        })
    }
}

impl Link {
    /// Notes `c`'s expiry as the store answered it.
    fn expires(&self, c: &Claim) {
        let key = (c.sequencer.clone(), c.node_id, c.token);
        self.expiries.lock().unwrap().insert(key, c.expires_unix_ms);
    }
}

/// A row's text without its nonce (`by=…`).
fn without_nonce(text: &str) -> String {
    text.split_whitespace()
        .filter(|w| !w.starts_with("by="))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Store for Link {
    fn describe(&self) -> String {
        "simulated store".into()
    }
    // The embedded store's bound on a lost history (what its holders apply): the store's own.
    fn max_ahead(&self) -> Option<Duration> {
        self.store.max_ahead()
    }
    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now: u64,
    ) -> Result<SequencerRecord> {
        self.before()?;
        self.after(self.store.create_sequencer(name, config, now))
    }
    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        self.before()?;
        self.store.sequencer(name)
    }
    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        self.before()?;
        self.store.sequencers()
    }
    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        self.before()?;
        self.after(self.store.destroy_sequencer(name, incarnation))
    }
    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        self.before()?;
        let r = ClaimRequest {
            now_unix_ms: if self.net {
                request.now_unix_ms
            } else {
                self.true_ms()
            },
            ..*request
        };
        let call = self.pg.as_ref().map(|net| net.begin_call());
        let r = self.store.claim(&r);
        // The re-send rule (`crate::store`): a claim call that answered one node ID took no other.
        if let (Some(net), Some(call), Ok(Some(c))) = (&self.pg, call, &r) {
            if let Some(e) = net.extra_grant(call, &c.sequencer, c.node_id) {
                self.violation.lock().unwrap().get_or_insert(e);
            }
        }
        if let Ok(Some(c)) = &r {
            self.expires(c);
        }
        self.after(r)
    }
    fn renew(&self, claim: &Claim, ttl_ms: u64, now: u64) -> Result<Claim> {
        self.before()?;
        let now = if self.net { now } else { self.true_ms() };
        let r = self.store.renew(claim, ttl_ms, now);
        if let Ok(c) = &r {
            // Every store expires a claim at its TTL and refuses its renewal after that (SPEC §3.2): an
            // expired claim nobody took again would not mint a duplicate, so the rule is checked
            // itself. The in-memory and embedded stores judge by the time they are given (the true
            // time here: no tolerance); the server stores' own clocks are not this world's.
            let key = (claim.sequencer.clone(), claim.node_id, claim.token);
            let was = self.expiries.lock().unwrap().get(&key).copied();
            if let Some(at) = was.filter(|&at| !self.net && now >= at) {
                self.violation.lock().unwrap().get_or_insert(format!(
                    "the renewal of node {}'s claim (fencing token {}) was answered at {} ms, after \
                     the claim expired at {} ms",
                    claim.node_id,
                    claim.token,
                    now - START_UNIX_NS / MS,
                    at - START_UNIX_NS / MS
                ));
            }
            self.expires(c);
        }
        self.after(r)
    }
    fn release(&self, claim: &Claim) -> Result<()> {
        self.before()?;
        self.after(self.store.release(claim))
    }
    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        self.before()?;
        self.store.reservation(sequencer, node_id)
    }
    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.before()?;
        let r = self.send(Write::Reserve(claim.clone(), *reservation));
        self.after(r.map(|_| ()))
    }
    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.before()?;
        self.after(self.store.lower_reservation(claim, reservation))
    }
    fn holders(&self, sequencer: &str, now: u64) -> Result<Vec<NodeState>> {
        self.before()?;
        let now = if self.net { now } else { self.true_ms() };
        self.store.holders(sequencer, now)
    }
    fn row(&self, key: &str) -> Result<Option<String>> {
        self.before()?;
        self.store.row(key)
    }
    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        self.before()?;
        let write = || Write::Swap(key.into(), expected.map(String::from), new.into());
        if !self.net && self.roll(&self.faults.resend) {
            // The answer is lost: after the store applied the write, or before it reached it.
            let applied = self.rng.lock().unwrap().chance(50);
            if applied {
                self.send(write())?;
            }
            self.interleave();
            // The client sends it again.
            return match self.send(write())? {
                true => Ok(true),
                false => self.resend_answer(key, new),
            };
        }
        let r = self.send(write());
        self.after(r)
    }
}

/// What one simulation run is made of.
#[derive(Clone, Copy, Debug)]
struct Shape {
    holders: usize,
    node_bits: u32,
    sequence_bits: u32,
    steps: u64,
    /// IDs per mint step at most (one `next_ids` call when above 1).
    burst: u64,
    /// Now and then (one mint step in 2000) a batch of this many IDs and up to half as many more: past
    /// the keeper's reservation step (0: none).
    big_batch: u64,
    ttl_ms: u64,
    /// Stop once this many IDs were minted (the long run).
    target_ids: u64,
    /// Keep every ID for the exact check (the bounded runs), or only per-lease ranges (the long run).
    exact: bool,
    faults: bool,
    /// Reservations may land late (after a later one) or twice (on by default; `--no-late-reservations`).
    late_reservations: bool,
    /// The store is the real etcd client over a simulated network and cluster (`etcd::SimEtcd`), the
    /// faults at the network; otherwise the in-memory store behind `Link`'s faults.
    etcd: bool,
    /// The store is the real PostgreSQL store through its seam to a simulated database
    /// (`postgres::SimPg`), the faults at the network.
    postgres: bool,
    /// The store is the embedded one (`FileStore`, a directory of this host), whose directory is
    /// deleted or replaced under running holders now and then.
    file: bool,
}

impl Shape {
    fn bounded(steps: u64) -> Shape {
        Shape {
            holders: 6,
            node_bits: 2,
            sequence_bits: 4,
            steps,
            burst: 24,
            // The reservation step is 200 ms × 16 IDs per ms.
            big_batch: 3_400,
            ttl_ms: 300,
            target_ids: u64::MAX,
            exact: true,
            faults: true,
            late_reservations: true,
            etcd: false,
            postgres: false,
            file: false,
        }
    }

    /// The bounded run over the etcd client: etcd grants leases in whole seconds, so a TTL of 1 s (and
    /// a big batch past its reservation step, 666 ms × 16 IDs per ms).
    fn etcd(steps: u64) -> Shape {
        Shape {
            ttl_ms: 1_000,
            big_batch: 11_000,
            etcd: true,
            ..Shape::bounded(steps)
        }
    }

    /// The bounded run over the PostgreSQL store: the etcd world's TTL and big batch (statement
    /// timeouts of 500 ms, connections of 1 s).
    fn postgres(steps: u64) -> Shape {
        Shape {
            etcd: false,
            postgres: true,
            ..Shape::etcd(steps)
        }
    }
}

struct Holder {
    clock: Arc<SimClock>,
    link: Arc<Link>,
    lease: Option<Lease>,
    /// The layout and sequencer generation (`World::generation`) of the lease.
    layout: Layout,
    generation: u64,
    /// Per lease: (uid, last ID minted).
    uid: u64,
    last: Option<u64>,
    paused: bool,
    smear_ns_per_ms: i64,
    next_round_ns: u64,
    /// When the faults put on this holder end by themselves (0: none pending): a partition heals, a
    /// paused process is resumed, a clock is fixed.
    heal_at_ns: u64,
}

/// Per lease: node ID, first and last ID minted.
#[derive(Clone, Copy, Debug)]
struct Span {
    node: u64,
    first: u64,
    last: u64,
}

struct World {
    rng: Rng,
    shape: Shape,
    defect: Defect,
    trace: bool,
    now: Arc<AtomicU64>,
    /// The operator's view of the store (sequencers created and destroyed; a healthy link).
    store: Arc<dyn Store>,
    layout: Layout,
    /// The layout the sequencer was first created with.
    first_layout: Layout,
    holders: Vec<Holder>,
    spans: BTreeMap<u64, Span>,
    next_uid: u64,
    seen: HashSet<u64>,
    /// Per incarnation of the sequencer and node ID, the highest logical position minted on it.
    top: BTreeMap<(u64, u64), u64>,
    /// The live incarnation of the sequencer (its layout is `layout`), and which of the sequencers
    /// created so far it is (the embedded store's incarnations start again in a new directory).
    incarnation: u64,
    generation: u64,
    /// The embedded store's directory (the `file` world).
    dir: Option<std::path::PathBuf>,
    /// Leases taken in an embedded store's directory since deleted or replaced: each must end at its
    /// next keeper round that reaches the store.
    orphaned: HashSet<u64>,
    /// The embedded store's backup (`cp -a` of its directory at some step), restored later.
    backup: Option<std::path::PathBuf>,
    minted: u64,
    step: u64,
}

const NAME: &str = "sim";

impl World {
    fn new(seed: u64, shape: Shape, defect: Defect, trace: bool) -> World {
        let now = Arc::new(AtomicU64::new(START_UNIX_NS));
        let mut rng = Rng(seed);
        // (Seeds of their own, so that the in-memory world draws as it did before the etcd one.)
        let cluster = etcd::SimEtcd::new(&now, seed ^ 0xE7CD_0001);
        let db = SimPg::new(&now, seed ^ 0x9057_0001);
        // A holder's store, through its link (over the etcd client: its faults at the network).
        let dir = shape.file.then(embedded_dir);
        let store: Arc<dyn Store> = if let Some(dir) = &dir {
            let _ = std::fs::remove_dir_all(dir.parent().expect("a parent"));
            // One seed in two reaches its store through a symbolic link (`current -> release-0`),
            // which the history faults re-point.
            if seed % 2 == 1 {
                let target = dir.with_file_name("release-0");
                FileStore::create(&target).expect("the embedded store's directory");
                std::os::unix::fs::symlink(&target, dir).expect("a symbolic link to the store");
            }
            Arc::new(FileStore::create(dir).expect("the embedded store's directory"))
        } else if shape.etcd {
            etcd_client(
                &cluster,
                &now,
                &Arc::default(),
                seed ^ 0xE7CD_0002,
                None,
                defect,
            )
        } else if shape.postgres {
            pg_client(&db, &now, &Arc::default(), seed ^ 0x9057_0002, None, defect).0
        } else {
            let m = Arc::new(MemoryStore::new());
            m.plant(defect);
            m
        };
        let expiries = Expiries::default();
        let link = |rng: &mut Rng, i: usize| {
            let seed = rng.next() ^ i as u64;
            let faults: Arc<Faults> = Arc::default();
            let mut pg = None;
            let (inner, net) = match shape.etcd {
                true => (
                    etcd_client(&cluster, &now, &faults, seed, None, defect),
                    true,
                ),
                false if shape.postgres => {
                    let (store, net) = pg_client(&db, &now, &faults, seed, None, defect);
                    pg = Some(net);
                    (store, true)
                }
                // The embedded store: a store of its own per holder (as each process opens it).
                false => match &dir {
                    Some(dir) => (
                        Arc::new(
                            FileStore::create(dir)
                                .expect("the embedded store")
                                .plant(defect),
                        ) as Arc<dyn Store>,
                        false,
                    ),
                    None => (store.clone(), false),
                },
            };
            Arc::new(Link {
                late_reservations: shape.late_reservations,
                faults,
                net,
                pg,
                expiries: expiries.clone(),
                ..Link::new(inner, &now, seed, None, defect)
            })
        };
        let layout = Layout::new(LayoutConfig {
            timestamp_bits: 41,
            node_bits: shape.node_bits,
            sequence_bits: shape.sequence_bits,
            node_split_bits: 0,
            ..LayoutConfig::default()
        })
        .expect("the simulation's layout");
        let config = SequencerConfig {
            layout: layout_text(&layout),
            nodes: 1 << shape.node_bits,
        };
        let incarnation = store
            .create_sequencer(NAME, &config, START_UNIX_NS / MS)
            .expect("the simulation's sequencer")
            .incarnation;
        let holders = (0..shape.holders)
            .map(|i| Holder {
                clock: Arc::new(SimClock {
                    now: now.clone(),
                    offset_ns: AtomicI64::new(0),
                    frozen: Mutex::new(None),
                }),
                link: link(&mut rng, i),
                layout,
                generation: 0,
                lease: None,
                uid: 0,
                last: None,
                paused: false,
                smear_ns_per_ms: 0,
                next_round_ns: 0,
                heal_at_ns: 0,
            })
            .collect();
        World {
            rng,
            shape,
            defect,
            trace,
            now,
            store,
            layout,
            first_layout: layout,
            holders,
            spans: BTreeMap::new(),
            next_uid: 0,
            seen: HashSet::new(),
            top: BTreeMap::new(),
            incarnation,
            generation: 0,
            dir,
            orphaned: HashSet::new(),
            backup: None,
            minted: 0,
            step: 0,
        }
    }

    fn log(&self, what: impl FnOnce() -> String) {
        trace_line(self.trace, self.step, &self.now, what);
    }

    fn lease_options(&self, i: usize) -> LeaseOptions {
        LeaseOptions {
            ttl: Duration::from_millis(self.shape.ttl_ms),
            reserve_ahead: Duration::from_millis(self.shape.ttl_ms * 2 / 3),
            holder: format!("simulated holder {i}"),
            stepped: true,
            defect: self.defect,
            ..LeaseOptions::default()
        }
    }

    fn period_ns(&self) -> u64 {
        // As the keeper's: a third of the TTL (and of the reserve-ahead span).
        self.shape.ttl_ms * MS / 3
    }

    /// Time passes: the true clock, smeared offsets.
    fn advance(&mut self, ns: u64) {
        self.now.fetch_add(ns, Ordering::SeqCst);
        let ms = (ns / MS) as i64;
        for h in &self.holders {
            if h.smear_ns_per_ms != 0 {
                h.clock
                    .offset_ns
                    .fetch_add(h.smear_ns_per_ms * ms, Ordering::SeqCst);
            }
        }
    }

    fn acquire(&mut self, i: usize) -> std::result::Result<(), String> {
        let record = match self.store.sequencer(NAME) {
            Ok(Some(r)) => r,
            _ => return Ok(()),
        };
        // The stored layout (the sequencer may have been created again with another one).
        let layout = layout_from_text(&record.config.layout).map_err(|e| e.to_string())?;
        let generation = self.generation;
        let h = &self.holders[i];
        let r = Lease::acquire(
            h.link.clone(),
            h.clock.clone(),
            record,
            layout,
            Options {
                policy: Policy::Fail,
                ..Options::default()
            },
            self.lease_options(i),
        );
        let now = self.now.load(Ordering::SeqCst);
        let period = self.period_ns();
        match r {
            Ok(l) => {
                self.next_uid += 1;
                let uid = self.next_uid;
                self.log(|| format!("holder {i} acquires node {} (lease {uid})", l.node_id()));
                let node = l.node_id();
                let h = &mut self.holders[i];
                h.lease = Some(l);
                h.uid = uid;
                h.last = None;
                h.next_round_ns = now + period;
                h.layout = layout;
                h.generation = generation;
                self.check_reservation(node)?;
            }
            // The refusals a holder may meet: every node ID held, the store out of reach, the
            // sequencer destroyed meanwhile, or (a re-created sequencer whose value floor lies
            // beyond `max_ahead` of this holder's clock) SEQUENCER_CONFLICT, never a start that
            // would repeat the old incarnation's IDs.
            Err(e) => match e.code() {
                ErrorCode::NodeIdsExhausted
                | ErrorCode::StoreUnavailable
                | ErrorCode::SequencerDestroyed
                | ErrorCode::SequencerNotFound
                | ErrorCode::LeaseLost => {
                    self.log(|| format!("holder {i} cannot acquire: {}", e.code()))
                }
                ErrorCode::SequencerConflict if e.to_string().contains("beyond max_ahead") => {
                    self.log(|| format!("holder {i} cannot acquire: {}: {e}", e.code()))
                }
                _ => {
                    return Err(format!(
                        "holder {i}: acquiring, unexpected error {}: {e}",
                        e.code()
                    ))
                }
            },
        }
        Ok(())
    }

    /// After every step and when a node ID changes hands: the stored reservation, as a new holder
    /// starts after it, lies past every position minted on the node (SPEC §3.2: an ID is minted only
    /// under an acknowledged reservation, and no write moves one back). A reservation moved back is
    /// caught here, before a holder crashes and a new one whose clock is behind mints a duplicate.
    fn check_reservation(&self, node: u64) -> std::result::Result<(), String> {
        let Some(&top) = self.top.get(&(self.generation, node)) else {
            return Ok(());
        };
        let Ok(stored) = self.store.reservation(NAME, node) else {
            return Ok(()); // the operator's read failed: nothing to judge
        };
        let fingerprint = layout_fingerprint(&self.layout);
        let start = stored.map_or(0, |r| start_after(&self.layout, fingerprint, &r));
        if start <= top {
            return Err(format!(
                "node {node}: the stored reservation {stored:?} lets a new holder start at position \
                 {start}, at or below position {top} already minted on the node"
            ));
        }
        Ok(())
    }

    /// An ID's logical position under `layout` (`tick << sequence_bits | sequence`; the node field in
    /// between).
    fn position(layout: &Layout, id: u64) -> u64 {
        let (nb, sb) = (layout.node_bits(), layout.sequence_bits());
        (id >> (nb + sb)) << sb | (id & ((1 << sb) - 1))
    }

    fn mint(&mut self, i: usize, n: u64) -> std::result::Result<(), String> {
        let healthy = self.healthy(i);
        let (got, err, node, uid) = {
            let h = &self.holders[i];
            let Some(lease) = &h.lease else { return Ok(()) };
            let once = || -> Result<Vec<u64>> {
                if n > 1 {
                    let mut out = vec![0u64; n as usize];
                    lease.next_ids(&mut out).map(|()| out)
                } else {
                    lease.next_id().map(|id| vec![id])
                }
            };
            let mut r = once();
            if healthy && matches!(&r, Err(e) if at_reservation(e)) {
                // A mint that met the ceiling wakes the keeper, which reserves past the request's end
                // within one store round trip: with the store healthy and the lease held, the retry
                // after that round succeeds (SPEC §3.2, batches past the ceiling).
                lease.keeper_round();
                r = once();
                if matches!(&r, Err(e) if at_reservation(e)) && lease.state() == LeaseState::Held {
                    return Err(format!(
                        "holder {i} (lease {}): a mint of {n} IDs still meets the ceiling {} after \
                         the keeper's round (store healthy, lease held)",
                        h.uid,
                        lease.ceiling()
                    ));
                }
            }
            let (got, err) = match r {
                Ok(got) => (got, None),
                Err(e) => (Vec::new(), Some(e)),
            };
            (got, err, lease.node_id(), h.uid)
        };
        if let Some(e) = &err {
            match e.code() {
                ErrorCode::TooFarAhead | ErrorCode::LeaseLost | ErrorCode::SequencerDestroyed => {}
                other => return Err(format!("holder {i}: unexpected error {other}: {e}")),
            }
        }
        let mut last = self.holders[i].last;
        for &id in &got {
            if let Some(l) = last.filter(|&l| id <= l) {
                return Err(format!(
                    "holder {i} (lease {uid}): ID {id} does not follow {l}"
                ));
            }
            last = Some(id);
            if self.shape.exact && !self.seen.insert(id) {
                return Err(format!(
                    "holder {i} (lease {uid}, node {node}): ID {id} was minted before"
                ));
            }
        }
        self.minted += got.len() as u64;
        if let Some(&l) = got.last() {
            let h = &self.holders[i];
            let p = Self::position(&h.layout, l);
            let top = self.top.entry((h.generation, node)).or_insert(p);
            *top = (*top).max(p);
        }
        if let (Some(&first), Some(&l)) = (got.first(), got.last()) {
            let span = self.spans.entry(uid).or_insert(Span {
                node,
                first,
                last: l,
            });
            span.last = l;
        }
        self.holders[i].last = last;
        self.log(|| {
            format!(
                "holder {i} mints {}{}",
                got.len(),
                err.as_ref()
                    .map_or(String::new(), |e| format!(", then {}", e.code()))
            )
        });
        Ok(())
    }

    /// No fault is on this holder: its link is healthy, it runs, its clock runs.
    fn healthy(&self, i: usize) -> bool {
        let h = &self.holders[i];
        h.heal_at_ns == 0
            && !h.paused
            && h.link.healthy()
            && h.clock.frozen.lock().unwrap().is_none()
    }

    /// Keeper rounds that are due (an unpaused holder's keeper runs every period).
    fn keepers(&mut self) -> std::result::Result<(), String> {
        let now = self.now.load(Ordering::SeqCst);
        let period = self.period_ns();
        let mut ended = Vec::new();
        let healthy: Vec<bool> = (0..self.holders.len()).map(|i| self.healthy(i)).collect();
        for (i, h) in self.holders.iter_mut().enumerate() {
            if h.paused || now < h.next_round_ns {
                continue;
            }
            h.next_round_ns = now + period;
            if let Some(l) = &h.lease {
                let alive = l.keeper_round();
                if alive && healthy[i] && self.orphaned.contains(&h.uid) {
                    return Err(format!(
                        "holder {i} (lease {}): its lease is still held after a keeper round that \
                         reached the store, though the store's directory was deleted or replaced",
                        h.uid
                    ));
                }
                if !alive && l.state() != LeaseState::Held {
                    // The application sees its lease end and drops it (a release that may fail).
                    ended.push((i, l.state()));
                    h.lease = None;
                }
            }
        }
        for (i, state) in ended {
            self.log(|| format!("holder {i}'s lease ended: {state:?}"));
        }
        Ok(())
    }

    /// Faults end by themselves within two TTLs of being put on (or sooner, if toggled off).
    fn heal(&mut self) {
        let now = self.now.load(Ordering::SeqCst);
        let mut healed = Vec::new();
        for (i, h) in self.holders.iter_mut().enumerate() {
            if h.heal_at_ns == 0 || now < h.heal_at_ns {
                continue;
            }
            h.heal_at_ns = 0;
            h.paused = false;
            h.smear_ns_per_ms = 0;
            *h.clock.frozen.lock().unwrap() = None;
            h.link.heal();
            healed.push(i);
        }
        for i in healed {
            self.log(|| format!("holder {i} recovers from its faults"));
        }
    }

    fn step(&mut self) -> std::result::Result<(), String> {
        self.step += 1;
        let n = self.holders.len();
        let i = self.rng.below(n as u64) as usize;
        let small = self.rng.below(3 * MS);
        self.advance(small);
        self.heal();
        let roll = self.rng.below(100);
        if self.shape.faults && (67..=90).contains(&roll) && self.holders[i].heal_at_ns == 0 {
            let now = self.now.load(Ordering::SeqCst);
            self.holders[i].heal_at_ns = now + self.rng.below(2 * self.shape.ttl_ms * MS);
        }
        let faults = self.shape.faults;
        match roll {
            0..=54 => {
                if self.holders[i].lease.is_none() {
                    self.acquire(i)?;
                } else if !self.holders[i].paused {
                    // Now and then a batch larger than the keeper's reservation step.
                    let k = if self.shape.big_batch > 0 && self.rng.below(2000) == 0 {
                        self.shape.big_batch + self.rng.below(self.shape.big_batch / 2)
                    } else {
                        1 + self.rng.below(self.shape.burst)
                    };
                    self.mint(i, k)?;
                }
            }
            55..=62 => {
                let d = self.rng.below(self.shape.ttl_ms * 3 / 2) * MS;
                self.log(|| format!("{} ms pass", d / MS));
                self.advance(d);
            }
            // The embedded store's processes share their host's clock, and a deleted directory takes
            // the reservations with it: after that only the clock keeps old IDs apart, so that world
            // has no clock faults (a clock stepped back then repeats IDs, whatever the product does).
            // Instead, its directory's history is lost now and then (SPEC §3.2, §8).
            63..=64 if self.shape.file => self.lose_history()?,
            65..=70 if self.shape.file => {}
            63..=66 if faults => {
                let by = self.rng.below(6_000) as i64 - 3_000;
                self.holders[i]
                    .clock
                    .offset_ns
                    .fetch_add(by * MS as i64, Ordering::SeqCst);
                self.log(|| format!("holder {i}'s clock steps {by} ms"));
            }
            67..=68 if faults => {
                let c = self.holders[i].clock.clone();
                let mut f = c.frozen.lock().unwrap();
                *f = match *f {
                    Some(_) => None,
                    None => Some(c.unix_ns_unfrozen()),
                };
                let frozen = f.is_some();
                drop(f);
                self.log(|| {
                    format!(
                        "holder {i}'s clock {}",
                        if frozen { "freezes" } else { "runs again" }
                    )
                });
            }
            69..=70 if faults => {
                let s = self.rng.below(401) as i64 - 200;
                self.holders[i].smear_ns_per_ms = if self.holders[i].smear_ns_per_ms == 0 {
                    s * 1_000
                } else {
                    0
                };
                self.log(|| {
                    format!(
                        "holder {i}'s clock smears {} µs per ms",
                        self.holders[i].smear_ns_per_ms / 1_000
                    )
                });
            }
            71..=74 if faults => {
                self.holders[i].paused = !self.holders[i].paused;
                self.log(|| {
                    format!(
                        "holder {i} {}",
                        if self.holders[i].paused {
                            "pauses"
                        } else {
                            "resumes"
                        }
                    )
                });
            }
            75..=77 if faults => {
                if let Some(l) = self.holders[i].lease.take() {
                    l.abandon();
                    self.holders[i].paused = false;
                    self.log(|| format!("holder {i} crashes"));
                }
            }
            78..=79 => {
                if let Some(l) = self.holders[i].lease.take() {
                    let r = l.release();
                    self.log(|| {
                        format!(
                            "holder {i} shuts down ({})",
                            r.err().map_or("released".into(), |e| e.code().to_string())
                        )
                    });
                }
            }
            80..=83 if faults => {
                let c = !self.holders[i].link.faults.cut.load(Ordering::SeqCst);
                self.holders[i].link.faults.cut.store(c, Ordering::SeqCst);
                self.log(|| {
                    format!(
                        "holder {i} {} the store",
                        if c { "is cut off from" } else { "reaches" }
                    )
                });
            }
            84..=86 if faults => {
                let p = [0, 0, 10, 30][self.rng.below(4) as usize];
                self.holders[i].link.faults.flaky.store(p, Ordering::SeqCst);
                self.log(|| format!("holder {i}'s requests fail {p}% of the time"));
            }
            87..=89 if faults => {
                let p = [0, 0, 20, 50][self.rng.below(4) as usize];
                let link = self.holders[i].link.clone();
                link.faults.late.store(p, Ordering::SeqCst);
                let network = link.set_network(&mut self.rng);
                self.log(|| {
                    format!("holder {i}'s writes are answered late {p}% of the time, {network}")
                });
            }
            90 if faults && self.rng.chance(30) => {
                let live = self.store.sequencer(NAME).expect("the operator's store");
                let old = live.as_ref().map(|r| r.incarnation);
                if let Some(r) = live {
                    self.store
                        .destroy_sequencer(NAME, r.incarnation)
                        .expect("the operator's store");
                }
                // Created again with another node count (2 to 4), and now and then another epoch
                // (0.5 to 2 s later or earlier: later, its IDs of a time are smaller than the old
                // one's, and only the value floor keeps them apart) or another split of the bits
                // between node and sequence. Drawn from the step number, so that the seed's own
                // draws stay as they were.
                // A new directory has no value floor (it was in the old one): the embedded world
                // keeps the layout (epoch included), since IDs that a floor put ahead of the clock
                // would be apart from a new directory's by nothing once the directory is deleted
                // (SPEC §8); the old IDs are then apart by time alone.
                let replaced = self.replace_dir();
                let layout = match replaced || self.dir.is_some() {
                    true => self.layout,
                    false => self.recreated_layout(),
                };
                let config = SequencerConfig {
                    layout: layout_text(&layout),
                    nodes: (2 + self.step % 3).min(1 << layout.node_bits()),
                };
                self.incarnation = self
                    .store
                    .create_sequencer(NAME, &config, self.now.load(Ordering::SeqCst) / MS)
                    .expect("the operator's store")
                    .incarnation;
                self.generation += 1;
                self.layout = layout;
                self.log(|| {
                    format!(
                        "the sequencer is destroyed and created again with {} node IDs, layout {}",
                        config.nodes, config.layout
                    )
                });
                // A second operator's destroy, of the incarnation it read before the re-creation,
                // lands now: it must leave the new incarnation (a conditional delete).
                if let Some(old) = old.filter(|_| self.step.is_multiple_of(2) && !replaced) {
                    let destroyed = self.store.destroy_sequencer(NAME, old);
                    let live = self.store.sequencer(NAME).ok().flatten();
                    if !matches!(destroyed, Ok(false))
                        || live.as_ref().map(|r| r.incarnation) != Some(self.incarnation)
                    {
                        return Err(format!(
                            "a destroy of incarnation {old} answered {destroyed:?} and left {live:?}, \
                             not the live incarnation {}",
                            self.incarnation
                        ));
                    }
                }
            }
            _ => {}
        }
        self.keepers()?;
        // Whatever happens next (a crash, a pause past the TTL), the stored reservations cover what
        // was minted.
        let nodes: Vec<u64> = (self.top.keys())
            .filter(|k| k.0 == self.generation)
            .map(|k| k.1)
            .collect();
        for node in nodes {
            self.check_reservation(node)?;
        }
        Ok(())
    }

    /// In the `file` world, one re-creation in two: the store's directory deleted (`rm -rf`) or moved
    /// away and replaced by an empty one, under the running holders. Their leases must end
    /// (`orphaned`); until they do they may mint up to their reservations, which the new directory
    /// does not have, so no claim of the same path may succeed meanwhile (the host registry); the
    /// checker's "no ID twice" holds the product to it.
    fn replace_dir(&mut self) -> bool {
        let Some(dir) = self.dir.clone().filter(|_| self.step % 2 == 1) else {
            return false;
        };
        let how = if self.step % 4 == 1 {
            std::fs::remove_dir_all(&dir).expect("deleting the embedded store's directory");
            "deleted"
        } else {
            let away = dir.with_extension(format!("replaced-{}", self.step));
            std::fs::rename(&dir, &away).expect("moving the embedded store's directory");
            "replaced"
        };
        // Laid out again as a first command on the path does (the holders' store keeps its handle).
        FileStore::create(&dir).expect("a new embedded store's directory");
        for h in &self.holders {
            if h.lease.is_some() {
                self.orphaned.insert(h.uid);
            }
        }
        self.log(|| format!("the embedded store's directory is {how}"));
        true
    }

    /// In the `file` world: the store directory's history is lost under the running holders, as
    /// `cli/tests/history.rs` does it to real processes (SPEC §3.2, "a store whose history is lost"):
    /// deleted (`rm -rf`) or moved away and made again; restored from a backup (`cp -a` taken earlier,
    /// with the claim records, reservations and sequencer record of then); a symbolic link the holders
    /// reach it through re-pointed to a new or restored directory; or the host registry not shared (the
    /// holders' `/dev/shm` is not the next claimer's: another container; or the registry deleted) and
    /// the directory replaced. The operator then creates the sequencer in it again (same layout and
    /// node count) if it has none. The leases of the old directory must end (`orphaned`); until then
    /// they mint up to their reservations, which only the store's bound (`Store::max_ahead`: every
    /// new claim above `now + 1 s`) keeps apart from the new claims: no ID twice.
    fn lose_history(&mut self) -> std::result::Result<(), String> {
        let Some(dir) = self.dir.clone() else {
            return Ok(());
        };
        let config = match self.store.sequencer(NAME) {
            Ok(Some(r)) => r.config,
            _ => SequencerConfig {
                layout: layout_text(&self.layout),
                nodes: 1 << self.layout.node_bits(),
            },
        };
        let linked = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink());
        let aside = |what: &str| dir.with_file_name(format!("{what}-{}", self.step));
        let kind = self.rng.below(5);
        let how = match kind {
            0 | 4 => {
                if kind == 4 {
                    for f in registry_files(&dir, 1 << self.layout.node_bits()) {
                        let _ = std::fs::remove_file(f);
                    }
                }
                remove_store_dir(&dir);
                FileStore::create(&dir).map_err(|e| format!("making the store again: {e}"))?;
                match kind {
                    4 => "replaced, the host registry not shared (another /dev/shm)",
                    _ => "deleted (rm -rf) and made again",
                }
            }
            1 => {
                std::fs::rename(&dir, aside("moved")).map_err(|e| format!("mv: {e}"))?;
                FileStore::create(&dir).map_err(|e| format!("making the store again: {e}"))?;
                "moved away and made again"
            }
            _ if self.backup.is_none() => {
                let b = dir.with_file_name(format!("backup-{}", self.step));
                copy_tree(&dir, &b).map_err(|e| format!("cp -a: {e}"))?;
                self.backup = Some(b);
                self.log(|| "the embedded store's directory is backed up (cp -a)".into());
                return Ok(());
            }
            2 => {
                let b = self.backup.clone().expect("a backup");
                remove_store_dir(&dir);
                copy_tree(&b, &dir).map_err(|e| format!("restoring: {e}"))?;
                "restored from its backup (cp -a)"
            }
            _ => {
                // A new release directory, empty or restored from the backup, and the link (made if the
                // store was a plain directory until now) re-pointed to it at once (rename over it).
                let target = aside("release");
                match (&self.backup, self.rng.chance(50)) {
                    (Some(b), true) => copy_tree(b, &target).map_err(|e| format!("cp -a: {e}"))?,
                    _ => drop(FileStore::create(&target).map_err(|e| format!("{e}"))?),
                }
                if !linked {
                    std::fs::rename(&dir, aside("moved")).map_err(|e| format!("mv: {e}"))?;
                }
                let tmp = aside("link");
                std::os::unix::fs::symlink(&target, &tmp).map_err(|e| format!("ln -s: {e}"))?;
                std::fs::rename(&tmp, &dir).map_err(|e| format!("mv -T: {e}"))?;
                "re-pointed (a symbolic link) to a new directory"
            }
        };
        let live = match self.store.sequencer(NAME) {
            Ok(Some(r)) => r,
            _ => self
                .store
                .create_sequencer(NAME, &config, self.now.load(Ordering::SeqCst) / MS)
                .map_err(|e| format!("creating the sequencer again: {e}"))?,
        };
        self.incarnation = live.incarnation;
        self.layout = layout_from_text(&live.config.layout).map_err(|e| e.to_string())?;
        // A new history: the reservation check starts again (the old one's positions are the
        // no-ID-twice check's).
        self.generation += 1;
        for h in &self.holders {
            if h.lease.is_some() {
                self.orphaned.insert(h.uid);
            }
        }
        self.log(|| format!("the embedded store's directory is {how}"));
        Ok(())
    }

    /// The layout of a re-created sequencer: the first one, another epoch, or another split.
    fn recreated_layout(&self) -> Layout {
        let mut c = *self.first_layout.config();
        let shift = 500 + self.step % 1_500;
        match (self.step / 3) % 4 {
            1 => c.epoch_ms += shift,
            2 => c.epoch_ms -= shift,
            3 => {
                c.node_bits += 1;
                c.sequence_bits -= 1;
            }
            _ => {}
        }
        Layout::new(c).expect("the simulation's layouts")
    }

    /// Per node ID, the spans of successive leases never overlap.
    fn check_spans(&self) -> std::result::Result<(), String> {
        let mut by_node: BTreeMap<u64, Vec<(u64, Span)>> = BTreeMap::new();
        for (&uid, s) in &self.spans {
            by_node.entry(s.node).or_default().push((uid, *s));
        }
        for (node, mut spans) in by_node {
            spans.sort_by_key(|(_, s)| s.first);
            for w in spans.windows(2) {
                let ((ua, a), (ub, b)) = (w[0], w[1]);
                if b.first <= a.last {
                    return Err(format!(
                        "node {node}: lease {ub} minted {}..={} inside lease {ua}'s {}..={}",
                        b.first, b.last, a.first, a.last
                    ));
                }
            }
        }
        Ok(())
    }

    fn run(&mut self) -> std::result::Result<(), String> {
        let mut report = self.shape.target_ids / 10;
        for _ in 0..self.shape.steps {
            self.step()?;
            for (i, h) in self.holders.iter().enumerate() {
                if let Some(e) = h.link.violation.lock().unwrap().take() {
                    return Err(format!("holder {i}: {e}"));
                }
            }
            if self.minted >= report {
                println!("  {} IDs after {} steps", self.minted, self.step);
                report = report.saturating_add(self.shape.target_ids / 10);
            }
            if self.minted >= self.shape.target_ids {
                break;
            }
        }
        self.check_spans()
    }
}

/// The lease's "reached the reservation; retry shortly" (not the generator's own `max_ahead`).
fn at_reservation(e: &Error) -> bool {
    e.code() == ErrorCode::TooFarAhead && e.to_string().contains("reached the reservation")
}

impl SimClock {
    fn unix_ns_unfrozen(&self) -> u64 {
        let t =
            self.now.load(Ordering::SeqCst) as i128 + self.offset_ns.load(Ordering::SeqCst) as i128;
        t.clamp(0, u64::MAX as i128) as u64
    }
}

/// The shared state file (SPEC §4a): 4 processes of one host, each with its own clock (stepped, frozen,
/// smeared), mint from one real memory-mapped file; a process crashes (drops its mapping) and opens the
/// file again. After every step: no ID twice, IDs strictly increasing per process life.
fn run_state_file(
    seed: u64,
    steps: u64,
    dir: &std::path::Path,
    trace: bool,
) -> std::result::Result<u64, String> {
    use snowmint::{SharedGenerator, StateFile};
    let path = dir.join(format!("seed-{seed}.state"));
    let _ = std::fs::remove_file(&path);
    let layout = Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits: 2,
        sequence_bits: 4,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .expect("the simulation's layout");
    let options = Options {
        policy: Policy::Fail,
        ..Options::default()
    };
    let open = || {
        SharedGenerator::<StateFile>::open_file(&path, layout, 1, options)
            .map_err(|e| format!("state file: open: {e}"))
    };
    struct Proc {
        clock: SimClock,
        gen: Option<SharedGenerator<StateFile>>,
        last: Option<u64>,
        smear_ns_per_ms: i64,
    }
    let now = Arc::new(AtomicU64::new(START_UNIX_NS));
    let mut rng = Rng(seed ^ 0x5EED_F11E);
    let mut procs = Vec::new();
    for _ in 0..4 {
        procs.push(Proc {
            clock: SimClock {
                now: now.clone(),
                offset_ns: AtomicI64::new(0),
                frozen: Mutex::new(None),
            },
            gen: Some(open()?),
            last: None,
            smear_ns_per_ms: 0,
        });
    }
    let mut seen = HashSet::new();
    for step in 0..steps {
        let d = rng.below(3 * MS);
        now.fetch_add(d, Ordering::SeqCst);
        for p in &procs {
            let by = p.smear_ns_per_ms * (d / MS) as i64;
            p.clock.offset_ns.fetch_add(by, Ordering::SeqCst);
        }
        let i = rng.below(procs.len() as u64) as usize;
        let roll = rng.below(100);
        let p = &mut procs[i];
        let what = match roll {
            0..=69 => match &p.gen {
                None => {
                    p.gen = Some(open()?);
                    p.last = None;
                    format!("process {i} opens the file again")
                }
                Some(g) => {
                    let clock = || Ok(p.clock.unix_ns());
                    let n = 1 + rng.below(24);
                    let mut minted = 0;
                    for _ in 0..n {
                        match g.next_id_from(&clock) {
                            Ok(id) => {
                                if let Some(l) = p.last.filter(|&l| id <= l) {
                                    return Err(format!(
                                        "state file: process {i}: ID {id} does not follow {l}"
                                    ));
                                }
                                if !seen.insert(id) {
                                    return Err(format!(
                                        "state file: process {i}: ID {id} was minted before"
                                    ));
                                }
                                p.last = Some(id);
                                minted += 1;
                            }
                            Err(e) if e.code() == ErrorCode::TooFarAhead => break,
                            Err(e) => {
                                return Err(format!(
                                    "state file: process {i}: unexpected error {}: {e}",
                                    e.code()
                                ))
                            }
                        }
                    }
                    format!("process {i} mints {minted}")
                }
            },
            70..=77 => {
                let by = rng.below(6_000) as i64 - 3_000;
                p.clock
                    .offset_ns
                    .fetch_add(by * MS as i64, Ordering::SeqCst);
                format!("process {i}'s clock steps {by} ms")
            }
            78..=80 => {
                let mut f = p.clock.frozen.lock().unwrap();
                *f = match *f {
                    Some(_) => None,
                    None => Some(p.clock.unix_ns_unfrozen()),
                };
                let frozen = f.is_some();
                format!(
                    "process {i}'s clock {}",
                    if frozen { "freezes" } else { "runs again" }
                )
            }
            81..=83 => {
                p.smear_ns_per_ms = if p.smear_ns_per_ms == 0 {
                    (rng.below(401) as i64 - 200) * 1_000
                } else {
                    0
                };
                format!(
                    "process {i}'s clock smears {} µs per ms",
                    p.smear_ns_per_ms / 1_000
                )
            }
            84..=89 => {
                p.gen = None;
                format!("process {i} crashes")
            }
            _ => {
                let d = rng.below(2_000) * MS;
                now.fetch_add(d, Ordering::SeqCst);
                format!("{} ms pass", d / MS)
            }
        };
        if trace {
            println!("state file: step {step}: {what}");
        }
    }
    let _ = std::fs::remove_file(&path);
    Ok(seen.len() as u64)
}

/// A process's store, through its link, where another process's whole range take may land between a
/// read of a row and the compare-and-set that follows it (`Race`): the interleaving a real
/// datacenter's processes produce.
#[derive(Debug)]
struct RaceLink {
    inner: Arc<Link>,
    race: Arc<Race>,
    me: usize,
}

/// The processes a race may interleave, and the ranges taken inside races.
#[derive(Debug)]
struct Race {
    rng: Mutex<Rng>,
    busy: AtomicBool,
    percent: u64,
    /// Each process's allocator (`None`: not open, its last open refused).
    allocs: Mutex<Vec<Option<Arc<SteppedAllocator>>>>,
    taken: Mutex<Vec<(usize, u64, u64)>>,
}

impl Race {
    fn interleave(&self, me: usize) {
        self.interleave_by(me, self.percent)
    }
    /// While `me`'s answer is lost: another process acts (unless one is acting already).
    fn interleave_always(&self, me: usize) {
        self.interleave_by(me, 100)
    }
    fn interleave_by(&self, me: usize, percent: u64) {
        if self.busy.swap(true, Ordering::SeqCst) {
            return;
        }
        let other = {
            let mut rng = self.rng.lock().unwrap();
            let n = self.allocs.lock().unwrap().len();
            if n > 1 && rng.chance(percent) {
                Some((me + 1 + rng.below(n as u64 - 1) as usize) % n)
            } else {
                None
            }
        };
        if let Some(j) = other {
            let a = self.allocs.lock().unwrap()[j].clone();
            if let Some(Ok(((s, e), _))) = a.map(|a| a.take_process_range()) {
                self.taken.lock().unwrap().push((j, s, e));
            }
        }
        self.busy.store(false, Ordering::SeqCst);
    }
}

impl Store for RaceLink {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn max_ahead(&self) -> Option<Duration> {
        self.inner.max_ahead()
    }
    fn create_sequencer(&self, n: &str, c: &SequencerConfig, now: u64) -> Result<SequencerRecord> {
        self.inner.create_sequencer(n, c, now)
    }
    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        self.inner.sequencer(name)
    }
    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        self.inner.sequencers()
    }
    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        self.inner.destroy_sequencer(name, incarnation)
    }
    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        self.inner.claim(request)
    }
    fn renew(&self, claim: &Claim, ttl_ms: u64, now: u64) -> Result<Claim> {
        self.inner.renew(claim, ttl_ms, now)
    }
    fn release(&self, claim: &Claim) -> Result<()> {
        self.inner.release(claim)
    }
    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        self.inner.reservation(sequencer, node_id)
    }
    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.inner.reserve(claim, reservation)
    }
    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.inner.lower_reservation(claim, reservation)
    }
    fn holders(&self, sequencer: &str, now: u64) -> Result<Vec<NodeState>> {
        self.inner.holders(sequencer, now)
    }
    fn row(&self, key: &str) -> Result<Option<String>> {
        // What this process read may be stale by the time it writes.
        let r = self.inner.row(key);
        self.race.interleave(self.me);
        r
    }
    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        self.inner.swap_row(key, expected, new)
    }
}

/// What the range world's stores are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Over {
    /// In-memory stores behind `Link`'s faults.
    Memory,
    /// The real etcd client, a simulated network and cluster per store.
    Etcd,
    /// The real PostgreSQL store, a simulated database per store.
    Postgres,
}

/// Range sequences (SPEC §4): 6 processes in two datacenters (one global store, one store per
/// datacenter), each through links of its own with faults (failed requests, writes answered late,
/// partitions), clocks stepped (fetch tickets expire by them), processes crashed and restarted (also
/// with the global store partitioned away), and races: another process's whole take may land between
/// a read and the compare-and-set after it. A process opens as `RangeSequence::open_urls` does, its
/// stores opened by URL through its links. After every step: every range handed out is disjoint from
/// every other, each process's ranges increase, and no process failed to open while its datacenter's
/// store answered and its row held values.
fn run_ranges(
    seed: u64,
    steps: u64,
    (defect, store_defect): (Defect, Defect),
    over: Over,
    trace: bool,
) -> std::result::Result<u64, String> {
    const PROCS: usize = 6;
    let now = Arc::new(AtomicU64::new(START_UNIX_NS));
    let mut rng = Rng(seed ^ 0x0A11_0CA7);
    let global = Arc::new(MemoryStore::new());
    let dcs = [Arc::new(MemoryStore::new()), Arc::new(MemoryStore::new())];
    // Over etcd: one simulated cluster for the global row, one per datacenter.
    let clusters = [1, 2, 3].map(|k| SimEtcd::new(&now, seed ^ (0xE7CD_0010 + k)));
    // Over PostgreSQL: one simulated database for the global row, one per datacenter.
    let databases = [1, 2, 3].map(|k| SimPg::new(&now, seed ^ (0x9057_0010 + k)));
    let options = RangeOptions {
        bits: 24,
        start: 1,
        dc_range: 1_000,
        process_range: 100,
        threshold_percent: 50,
        wait: Duration::ZERO,
    };
    let race = Arc::new(Race {
        rng: Mutex::new(Rng(rng.next())),
        busy: AtomicBool::new(false),
        percent: 25,
        allocs: Mutex::new(Vec::new()),
        taken: Mutex::new(Vec::new()),
    });
    // `which`: 0 the global store, 1 and 2 the datacenters'.
    let link = |which: usize, rng: &mut Rng, me: usize| {
        let seed = rng.next();
        let race = Some((race.clone(), me));
        let faults: Arc<Faults> = Arc::default();
        // A real client's own defect (`defect`) is planted in it; the range code's too.
        let client = match over {
            Over::Memory => {
                let store = [&global, &dcs[0], &dcs[1]][which].clone();
                return Arc::new(Link::new(store, &now, seed, race, store_defect));
            }
            Over::Etcd => etcd_client(&clusters[which], &now, &faults, seed, race.clone(), defect),
            Over::Postgres => {
                pg_client(&databases[which], &now, &faults, seed, race.clone(), defect).0
            }
        };
        Arc::new(Link {
            faults,
            net: true,
            ..Link::new(client, &now, seed, race, store_defect)
        })
    };
    let mut links = Vec::new();
    let mut clocks = Vec::new();
    for i in 0..PROCS {
        links.push((link(0, &mut rng, i), link(1 + i % 2, &mut rng, i)));
        clocks.push(Arc::new(SimClock {
            now: now.clone(),
            offset_ns: AtomicI64::new(0),
            frozen: Mutex::new(None),
        }));
    }
    // The operator's view of each datacenter's row (no faults).
    let operator: Vec<Arc<dyn Store>> = (1..3)
        .map(|k| -> Arc<dyn Store> {
            let none = &Arc::default();
            match over {
                Over::Memory => dcs[k - 1].clone(),
                Over::Etcd => etcd_client(&clusters[k], &now, none, seed, None, Defect::None),
                Over::Postgres => pg_client(&databases[k], &now, none, seed, None, Defect::None).0,
            }
        })
        .collect();
    const GLOBAL_URL: &str = "file:///proc/simulated/global";
    // Process `i` opens as `RangeSequence::open_urls` does (`SteppedAllocator::open`: the stores by
    // their URLs, the global one connected on first use; then the first process range), its stores
    // opened through its links (connecting fails while a link is cut).
    let open = |i: usize| {
        let (global, local) = links[i].clone();
        let race = race.clone();
        let opener: Arc<snowmint_coord::source::StoreOpener> = Arc::new(move |url| {
            let link = if url.to_string() == GLOBAL_URL {
                &global
            } else {
                &local
            };
            if link.faults.cut.load(Ordering::SeqCst) {
                return Err(Error::unavailable("simulated: cannot connect to the store"));
            }
            Ok(Arc::new(RaceLink {
                inner: link.clone(),
                race: race.clone(),
                me: i,
            }) as Arc<dyn Store>)
        });
        let dc = ["a", "b"][i % 2];
        let urls = (GLOBAL_URL, &*format!("file:///proc/simulated/{dc}"));
        SteppedAllocator::open(
            "sim",
            dc,
            urls,
            opener,
            options.clone(),
            clocks[i].clone(),
            defect,
        )
    };
    // The values datacenter `dc` (0 or 1) holds, as the operator reads them (`None`: the read failed).
    let held = |dc: usize| -> Option<u64> {
        let row = RangeSequence::show_datacenter(&*operator[dc], "sim", ["a", "b"][dc]).ok()?;
        Some(row.map_or(0, |r| r.ranges.iter().map(|(s, e)| e - s).sum()))
    };
    // Process `i` (re)starts: its first range, or a refusal. SPEC §4: opening touches only the
    // datacenter's store while its row holds values, so a refusal with that store healthy and the row
    // holding values before and after the attempt is a violation, whatever the global store does.
    let reopen = |i: usize, rng: &mut Rng| -> std::result::Result<Option<(u64, u64)>, String> {
        race.allocs.lock().unwrap()[i] = None;
        let before = held(i % 2);
        match open(i) {
            Ok((a, first, low)) => {
                let a = Arc::new(a);
                // The datacenter-level pre-allocation `RangeSequence` starts on a thread of its own.
                if low && rng.chance(50) {
                    let _ = a.prefetch_dc();
                }
                race.allocs.lock().unwrap()[i] = Some(a);
                Ok(Some(first))
            }
            Err(e)
                if matches!(
                    e.code(),
                    ErrorCode::StoreUnavailable | ErrorCode::RangeExhausted
                ) =>
            {
                let after = held(i % 2);
                if links[i].1.healthy() && before.unwrap_or(0) > 0 && after.unwrap_or(0) > 0 {
                    return Err(format!(
                        "ranges: process {i} cannot open though its datacenter's store answers and \
                         its row holds {} values: {e}",
                        after.unwrap_or(0)
                    ));
                }
                Ok(None)
            }
            Err(e) => Err(format!(
                "ranges: process {i}: opening, unexpected error {}: {e}",
                e.code()
            )),
        }
    };
    for _ in 0..PROCS {
        race.allocs.lock().unwrap().push(None);
    }
    // Every range handed out (start → end, process), and each process's last end.
    let mut ranges: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
    let mut last_end = [0u64; PROCS];
    let mut values = 0u64;
    let mut record = |p: usize, s: u64, e: u64, how: &str| -> std::result::Result<(), String> {
        if s >= e || e > 1 << options.bits {
            return Err(format!("ranges: process {p} took {s}..{e} ({how})"));
        }
        if s < last_end[p] {
            return Err(format!(
                "ranges: process {p} took {s}..{e} after a range ending at {} ({how})",
                last_end[p]
            ));
        }
        if let Some((&s0, &(e0, p0))) = ranges.range(..e).next_back() {
            if e0 > s {
                return Err(format!("ranges: process {p} took {s}..{e}, overlapping process {p0}'s {s0}..{e0} ({how})"));
            }
        }
        ranges.insert(s, (e, p));
        last_end[p] = e;
        values += e - s;
        if trace {
            println!("ranges: process {p} takes {s}..{e} ({how})");
        }
        Ok(())
    };
    for step in 0..steps {
        now.fetch_add(rng.below(50 * MS), Ordering::SeqCst);
        let i = rng.below(PROCS as u64) as usize;
        let roll = rng.below(100);
        let what = match roll {
            0..=59 if race.allocs.lock().unwrap()[i].is_none() => match reopen(i, &mut rng)? {
                Some((s, e)) => {
                    record(i, s, e, "its first, opening")?;
                    format!("process {i} opens")
                }
                None => format!("process {i} cannot open"),
            },
            0..=59 => {
                let a = race.allocs.lock().unwrap()[i].clone().expect("open");
                match a.take_process_range() {
                    Ok(((s, e), low)) => {
                        record(i, s, e, "its own take")?;
                        if low && rng.chance(50) {
                            let _ = a.prefetch_dc();
                        }
                        String::new()
                    }
                    Err(e)
                        if matches!(
                            e.code(),
                            ErrorCode::StoreUnavailable | ErrorCode::RangeExhausted
                        ) =>
                    {
                        format!("process {i} takes no range: {}", e.code())
                    }
                    Err(e) => {
                        return Err(format!(
                            "ranges: process {i}: unexpected error {}: {e}",
                            e.code()
                        ))
                    }
                }
            }
            60..=67 => {
                let a = race.allocs.lock().unwrap()[i].clone();
                let r = a.map_or(Ok(()), |a| a.prefetch_dc());
                format!(
                    "process {i} pre-allocates for its datacenter: {}",
                    r.map_or_else(|e| e.code().to_string(), |_| "ok".into())
                )
            }
            68..=75 => {
                let (g, l) = &links[i];
                let which = if rng.chance(50) { g } else { l };
                let flaky = [0, 0, 10, 30][rng.below(4) as usize];
                let late = [0, 0, 20, 50][rng.below(4) as usize];
                which.faults.flaky.store(flaky, Ordering::SeqCst);
                which.faults.late.store(late, Ordering::SeqCst);
                let cut = rng.chance(20);
                which.faults.cut.store(cut, Ordering::SeqCst);
                let network = which.set_network(&mut rng);
                format!(
                    "process {i}: a link fails {flaky}%, answers late {late}%, {network}, cut {cut}"
                )
            }
            76..=81 => {
                let by = rng.below(8_000) as i64 - 4_000;
                clocks[i]
                    .offset_ns
                    .fetch_add(by * MS as i64, Ordering::SeqCst);
                format!("process {i}'s clock steps {by} ms")
            }
            82..=86 => {
                // A crash: the ranges it held are holes; a new process takes its place.
                // Its successor's ranges still start above its last one: every range of a datacenter
                // starts at or above the row's floor, which each take raises.
                if let Some((s, e)) = reopen(i, &mut rng)? {
                    record(i, s, e, "its first, after a restart")?;
                }
                format!("process {i} crashes and restarts")
            }
            87..=89 => {
                // The global store partitioned away from a process that restarts, its datacenter's
                // store answering: it must open and serve from the datacenter row.
                let (g, l) = &links[i];
                g.faults.cut.store(true, Ordering::SeqCst);
                l.heal();
                if let Some((s, e)) = reopen(i, &mut rng)? {
                    record(i, s, e, "its first, the global store partitioned")?;
                }
                format!("process {i} restarts, the global store partitioned away")
            }
            _ => {
                let d = rng.below(6_000) * MS;
                now.fetch_add(d, Ordering::SeqCst);
                format!("{} ms pass", d / MS)
            }
        };
        let raced: Vec<_> = std::mem::take(&mut *race.taken.lock().unwrap());
        for (p, s, e) in raced {
            record(p, s, e, "inside another process's compare-and-set")?;
        }
        if trace && !what.is_empty() {
            println!("ranges: step {step}: {what}");
        }
    }
    Ok(values)
}

fn run_seed(
    seed: u64,
    shape: Shape,
    defect: Defect,
    trace: bool,
) -> std::result::Result<u64, String> {
    let mut w = World::new(seed, shape, defect, trace);
    let r = w.run();
    // Leases still held are released as the world ends (their keepers are stepped: nothing else runs).
    for h in &mut w.holders {
        if let Some(l) = h.lease.take() {
            l.abandon();
        }
    }
    if let Some(dir) = &w.dir {
        clear_embedded(dir);
    }
    r.map(|()| w.minted)
}

/// The embedded world's store directory: one path for every seed (the host registry keeps a file per
/// path ever claimed), on tmpfs where there is one (the store syncs every write).
fn embedded_dir() -> std::path::PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join(format!("snowmint-sim-{}", std::process::id()))
        .join("embedded")
}

/// Removes the embedded world's directory and the ones it replaced, and this world's files of the
/// host registry (its paths are this process's own).
fn clear_embedded(dir: &std::path::Path) {
    if let Some(parent) = dir.parent() {
        let _ = std::fs::remove_dir_all(parent);
    }
    for f in registry_files(dir, 16) {
        let _ = std::fs::remove_file(f);
    }
}

/// `rm -rf` of the store's directory: through a symbolic link, the directory it points to (the link is
/// left, dangling, then removed so that the store is made again as a plain directory).
fn remove_store_dir(dir: &std::path::Path) {
    if let Ok(target) = std::fs::read_link(dir) {
        let _ = std::fs::remove_dir_all(target);
        let _ = std::fs::remove_file(dir);
    } else {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `cp -a`: the files and directories under `from` copied to `to` (which must not exist).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), &target)?;
        }
    }
    Ok(())
}

/// The host registry's files of the embedded world's node files (`coord/src/stores/file.rs`: one per node-file
/// path, named by the FNV-1a hash of the path as the store names it, symbolic links unresolved).
fn registry_files(dir: &std::path::Path, nodes: u64) -> Vec<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let base = match std::path::Path::new("/dev/shm").is_dir() {
        true => "/dev/shm/snowmint-claims",
        false => "/tmp/snowmint-claims",
    };
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    (0..nodes)
        .map(|n| {
            let node_file = dir.join("nodes").join(NAME).join(format!("{n}.lock"));
            let hash = node_file
                .as_os_str()
                .as_bytes()
                .iter()
                .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
                });
            std::path::Path::new(base).join(format!("{hash:016x}"))
        })
        .collect()
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
        })
}

/// The worlds a run is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sim {
    /// Leases over the in-memory store behind `Link`'s faults.
    Leases,
    /// Range sequences over in-memory stores.
    Ranges,
    /// Leases over the real etcd client, a simulated network and cluster.
    EtcdLeases,
    /// Range sequences over the real etcd client (one simulated cluster per store).
    EtcdRanges,
    /// Leases over the real PostgreSQL store, a simulated database behind its statement seam.
    PgLeases,
    /// Range sequences over the real PostgreSQL store (one simulated database per store).
    PgRanges,
    /// Leases over the embedded store (a directory deleted or replaced under running holders).
    FileLeases,
    /// Instances of the ID service and clients under their leases, on the in-memory store.
    Service,
    /// A fleet of hosts deriving their node IDs with the `ip` node source, minting.
    Hosts,
    /// The processes of hosts sharing one lease per host through a state file (real time, threads).
    SharedLease,
    /// The bindings' per-object ID windows (`snowmint_host::window`).
    Windows,
}

impl Sim {
    fn name(self) -> &'static str {
        match self {
            Sim::Leases => "leases",
            Sim::Ranges => "ranges",
            Sim::EtcdLeases => "etcd leases",
            Sim::EtcdRanges => "etcd ranges",
            Sim::PgLeases => "postgres leases",
            Sim::PgRanges => "postgres ranges",
            Sim::FileLeases => "embedded leases",
            Sim::Service => "service",
            Sim::Hosts => "hosts",
            Sim::SharedLease => "shared lease",
            Sim::Windows => "windows",
        }
    }
    /// The replay option that selects this world.
    fn option(self) -> &'static str {
        match self {
            Sim::Leases => "",
            Sim::Ranges => " --ranges",
            Sim::EtcdLeases => " --etcd",
            Sim::EtcdRanges => " --ranges --etcd",
            Sim::PgLeases => " --postgres",
            Sim::PgRanges => " --ranges --postgres",
            Sim::FileLeases => " --embedded",
            Sim::Service => " --service",
            Sim::Hosts => " --hosts",
            Sim::SharedLease => " --shared-lease",
            Sim::Windows => " --windows",
        }
    }
    /// Steps of one seed of this world, from the lease world's `steps`.
    fn steps(self, steps: u64) -> u64 {
        match self {
            Sim::Leases => steps,
            Sim::Ranges | Sim::EtcdRanges | Sim::PgRanges => steps / 4,
            Sim::EtcdLeases | Sim::PgLeases | Sim::FileLeases | Sim::Service => steps / 2,
            Sim::Hosts => steps / 4,
            // Rounds (start, mint, exit or crash) of each process.
            Sim::SharedLease => (steps / 1_000).max(1),
            Sim::Windows => steps / 2,
        }
    }
    /// One seed of `steps` (this world's own).
    fn run(
        self,
        seed: u64,
        steps: u64,
        shape: Shape,
        p: Planted,
        trace: bool,
    ) -> std::result::Result<u64, String> {
        match self {
            Sim::Leases => run_seed(seed, Shape { steps, ..shape }, p.code, trace),
            Sim::FileLeases => run_seed(
                seed,
                Shape {
                    steps,
                    file: true,
                    ..shape
                },
                p.code,
                trace,
            ),
            Sim::EtcdLeases => run_seed(
                seed,
                Shape {
                    late_reservations: shape.late_reservations,
                    ..Shape::etcd(steps)
                },
                p.code,
                trace,
            ),
            Sim::PgLeases => run_seed(
                seed,
                Shape {
                    late_reservations: shape.late_reservations,
                    ..Shape::postgres(steps)
                },
                p.code,
                trace,
            ),
            Sim::Ranges => run_ranges(seed, steps, (p.code, p.store), Over::Memory, trace),
            Sim::EtcdRanges => run_ranges(seed, steps, (p.code, p.store), Over::Etcd, trace),
            Sim::PgRanges => run_ranges(seed, steps, (p.code, p.store), Over::Postgres, trace),
            Sim::Service => service::run_service(seed, steps, p.code, trace),
            Sim::Hosts => hosts::run_hosts(seed, steps, p.code, trace),
            Sim::SharedLease => shared_lease::run_shared_lease(seed, steps, p.code, trace),
            Sim::Windows => windows::run_windows(seed, steps, p.code, trace),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |name: &str| args.iter().any(|a| a == name);
    let steps: u64 = arg(&args, "--steps").unwrap_or(4000);
    let shape = Shape {
        late_reservations: !has("--no-late-reservations"),
        ..Shape::bounded(steps)
    };
    if let Some(seed) = arg::<u64>(&args, "--replay") {
        let planted = match arg::<String>(&args, "--defect") {
            None => Planted::NONE,
            Some(name) => *DEFECTS
                .iter()
                .find(|p| p.name == name)
                .unwrap_or_else(|| panic!("--defect {name}: no such planted defect")),
        };
        let r = if has("--state-file") {
            run_state_file(seed, steps, &std::env::temp_dir(), true)
        } else {
            let world = match (has("--ranges"), has("--etcd")) {
                _ if has("--embedded") => Sim::FileLeases,
                _ if has("--service") => Sim::Service,
                _ if has("--hosts") => Sim::Hosts,
                _ if has("--shared-lease") => Sim::SharedLease,
                _ if has("--windows") => Sim::Windows,
                (false, _) if has("--postgres") => Sim::PgLeases,
                (true, _) if has("--postgres") => Sim::PgRanges,
                (false, false) => Sim::Leases,
                (true, false) => Sim::Ranges,
                (false, true) => Sim::EtcdLeases,
                (true, true) => Sim::EtcdRanges,
            };
            // `--steps` is the replayed world's own.
            world.run(seed, steps, shape, planted, true)
        };
        match r {
            Ok(n) => println!("seed {seed}: {n} IDs, no duplicate"),
            Err(e) => {
                println!("seed {seed}: FAILED: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    if has("--long") {
        long_run(arg(&args, "--ids").unwrap_or(1_000_000_000));
        return;
    }
    let seeds: u64 = arg(&args, "--seeds").unwrap_or(500);
    let first: u64 = arg(&args, "--first").unwrap_or(0);
    let defect_seeds: u64 = arg(&args, "--defect-seeds").unwrap_or(2000);
    let replay = |world: Sim, seed: u64, extra: &str| {
        println!(
            "  replay: cargo test -p snowmint-coord --features planted-defects --test simulation -- --replay {seed} --steps {}{}{extra}{}",
            world.steps(steps),
            world.option(),
            if shape.late_reservations { "" } else { " --no-late-reservations" }
        );
    };
    let mut failed = false;
    if !has("--defects") {
        // Each world's seeds: (world, number of seeds, what its count is of).
        let worlds = [
            (Sim::Leases, seeds, "IDs"),
            (Sim::Ranges, seeds / 5, "values"),
            (Sim::EtcdLeases, seeds / 50, "IDs"),
            (Sim::EtcdRanges, seeds / 25, "values"),
            (Sim::PgLeases, seeds / 25, "IDs"),
            (Sim::PgRanges, seeds / 10, "values"),
            (Sim::FileLeases, seeds / 50, "IDs"),
            (Sim::Service, seeds / 25, "IDs"),
            (Sim::Hosts, seeds / 5, "IDs"),
            (Sim::SharedLease, seeds / 50, "IDs"),
            (Sim::Windows, seeds / 10, "IDs"),
        ];
        let only: Option<String> = arg(&args, "--world");
        let chosen = |name: &str| only.as_deref().is_none_or(|o| o == name);
        for (world, n, what) in worlds.into_iter().filter(|w| chosen(w.0.name())) {
            let t0 = Instant::now();
            let (mut count, mut w_failed) = (0, false);
            for seed in first..first + n {
                match world.run(seed, world.steps(steps), shape, Planted::NONE, false) {
                    Ok(k) => count += k,
                    Err(e) => {
                        println!("simulation: {}, seed {seed} FAILED: {e}", world.name());
                        replay(world, seed, "");
                        w_failed = true;
                    }
                }
            }
            println!(
                "simulation: {}, {n} seeds × {} {}, {count} {what}, {} ({:.1} s)",
                world.name(),
                world.steps(steps),
                match world {
                    Sim::SharedLease => "rounds per process",
                    _ => "steps",
                },
                if w_failed { "FAILED" } else { "no duplicate" },
                t0.elapsed().as_secs_f64()
            );
            failed |= w_failed;
        }
        let t0 = Instant::now();
        let state_file_seeds = if chosen("state file") { seeds / 50 } else { 0 };
        let dir = std::env::temp_dir().join(format!("snowmint-sim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let (mut ids, mut sf_failed) = (0, false);
        for seed in first..first + state_file_seeds {
            match run_state_file(seed, steps / 2, &dir, false) {
                Ok(n) => ids += n,
                Err(e) => {
                    println!("simulation: state file, seed {seed} FAILED: {e}");
                    println!(
                        "  replay: cargo test -p snowmint-coord --features planted-defects --test simulation -- --replay {seed} --steps {} --state-file",
                        steps / 2
                    );
                    sf_failed = true;
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        println!(
            "simulation: state file, {} seeds × {} steps, 4 processes, {ids} IDs, {} ({:.1} s)",
            state_file_seeds,
            steps / 2,
            if sf_failed { "FAILED" } else { "no duplicate" },
            t0.elapsed().as_secs_f64()
        );
        failed |= sf_failed;
    }
    if !has("--no-defects") {
        // Each planted defect must be caught within the bound, or the simulation proves nothing.
        let only: Option<String> = arg(&args, "--defect");
        println!(
            "planted defect                                 world          seeds to catch   time"
        );
        for p in DEFECTS
            .iter()
            .filter(|p| only.as_deref().is_none_or(|o| o == p.name))
        {
            let t0 = Instant::now();
            let caught = (0..defect_seeds).find_map(|seed| {
                p.world
                    .run(seed, p.world.steps(steps), shape, *p, false)
                    .err()
                    .map(|e| (seed, e))
            });
            let world = p.world.name();
            match caught {
                Some((seed, e)) => println!(
                    "{:<46} {world:<14} {:>14} {:>6.1} s   {e}",
                    p.name,
                    seed + 1,
                    t0.elapsed().as_secs_f64()
                ),
                None => {
                    println!(
                        "{:<46} {world:<14} NOT caught in {defect_seeds} seeds",
                        p.name
                    );
                    failed = true;
                }
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}

/// A planted defect as the proof runs it: in the product code (`code`: the lease, range or etcd client
/// code), in the simulated store (`store`), or both; in one world.
#[derive(Clone, Copy, Debug)]
struct Planted {
    name: &'static str,
    code: Defect,
    store: Defect,
    world: Sim,
}

impl Planted {
    const NONE: Planted = Planted::code("none", Defect::None, Sim::Leases);
    const fn code(name: &'static str, code: Defect, world: Sim) -> Planted {
        Planted {
            name,
            code,
            store: Defect::None,
            world,
        }
    }
}

/// Every planted defect the proof must catch (`--defect NAME` replays one).
const DEFECTS: [Planted; 32] = [
    Planted::code("ignore-reservation", Defect::IgnoreReservation, Sim::Leases),
    Planted::code("ceiling-before-ack", Defect::CeilingBeforeAck, Sim::Leases),
    Planted::code(
        "keeper-ignores-wanted",
        Defect::KeeperIgnoresWanted,
        Sim::Leases,
    ),
    Planted::code(
        "reserve-before-recheck",
        Defect::ReserveBeforeRecheck,
        Sim::Leases,
    ),
    Planted::code(
        "reservation-lowered",
        Defect::ReservationLowered,
        Sim::Leases,
    ),
    Planted::code(
        "range-without-compare",
        Defect::RangeWithoutCompare,
        Sim::Ranges,
    ),
    Planted::code(
        "range-add-without-overlap",
        Defect::RangeAddWithoutOverlap,
        Sim::Ranges,
    ),
    Planted::code(
        "range-timeout-as-written",
        Defect::RangeTimeoutAsWritten,
        Sim::Ranges,
    ),
    Planted {
        name: "resend-by-value",
        code: Defect::None,
        store: Defect::ResendByValue,
        world: Sim::Ranges,
    },
    // The pair the range fix closed: the old store's re-send answer with the add that checked nothing.
    Planted {
        name: "resend-not-written+range-add-without-overlap",
        code: Defect::RangeAddWithoutOverlap,
        store: Defect::ResendNotWritten,
        world: Sim::Ranges,
    },
    // In the etcd client, found through the simulated network.
    Planted::code(
        "etcd-reserve-failed-as-written",
        Defect::EtcdReserveFailedAsWritten,
        Sim::EtcdLeases,
    ),
    Planted::code(
        "range-add-not-clipped",
        Defect::RangeAddNotClipped,
        Sim::Ranges,
    ),
    Planted::code(
        "etcd-range-add-not-clipped",
        Defect::RangeAddNotClipped,
        Sim::EtcdRanges,
    ),
    Planted::code(
        "etcd-row-resend-by-value",
        Defect::EtcdRowResendByValue,
        Sim::EtcdRanges,
    ),
    Planted::code(
        "etcd-reserve-without-mod-compare",
        Defect::EtcdReserveWithoutModCompare,
        Sim::EtcdLeases,
    ),
    Planted::code(
        "start-ignores-floor",
        Defect::StartIgnoresFloor,
        Sim::Leases,
    ),
    Planted::code(
        "destroy-without-condition",
        Defect::DestroyWithoutCondition,
        Sim::Leases,
    ),
    Planted::code(
        "embedded-ignores-path",
        Defect::EmbeddedIgnoresPath,
        Sim::FileLeases,
    ),
    // In the PostgreSQL store, found through its simulated database and network.
    Planted::code(
        "pg-claim-resend-takes-another",
        Defect::PgClaimResendTakesAnother,
        Sim::PgLeases,
    ),
    Planted::code(
        "pg-reserve-without-keep-larger",
        Defect::PgReserveWithoutKeepLarger,
        Sim::PgLeases,
    ),
    // In the ID service: an instance's fixed node ID not claimed on the client sequencer.
    Planted::code(
        "service-fixed-node-unclaimed",
        Defect::ServiceFixedNodeUnclaimed,
        Sim::Service,
    ),
    // In the in-memory store: a renewal after the claim's TTL succeeds (the checker's expiry rule).
    Planted::code(
        "renew-ignores-expiry",
        Defect::RenewIgnoresExpiry,
        Sim::Leases,
    ),
    // A sequencer other than `default` created by the lease source that names it (here the service's
    // `--client-sequencer`), after the operator destroyed it.
    Planted::code("implicit-creation", Defect::ImplicitCreation, Sim::Service),
    // The same in the embedded store (the fix of its claims that never expired while their process
    // lived, reverted).
    Planted::code(
        "embedded-renew-ignores-expiry",
        Defect::RenewIgnoresExpiry,
        Sim::FileLeases,
    ),
    // A range process that cannot open while the global store is unreachable, its datacenter row
    // holding values (the global store connected at once, not on first use).
    Planted::code(
        "range-open-connects-global",
        Defect::RangeOpenConnectsGlobal,
        Sim::Ranges,
    ),
    // The service started with a lease source on one sequencer and `--client-sequencer` another.
    Planted::code(
        "service-other-client-sequencer",
        Defect::ServiceOtherClientSequencer,
        Sim::Service,
    ),
    // The `ip` node source: a bridge's address taken; a host part past the node field truncated.
    Planted::code("ip-takes-bridge", Defect::IpTakesBridge, Sim::Hosts),
    Planted::code("ip-host-truncated", Defect::IpHostTruncated, Sim::Hosts),
    // The embedded store's bound on a lost history reverted (issue 39): a holder that finds no
    // history starts at the clock, beside a holder of the lost directory minting on.
    Planted::code(
        "embedded-no-max-ahead",
        Defect::EmbeddedNoMaxAhead,
        Sim::FileLeases,
    ),
    // One lease per host: the state file never sees the other sharers (issue 40).
    Planted::code(
        "shared-lease-no-others",
        Defect::SharedLeaseNoOthers,
        Sim::SharedLease,
    ),
    // The bindings' windows: a window of an earlier lease's generator handed out under the new one.
    Planted::code(
        "window-of-another-generator",
        Defect::WindowOfAnotherGenerator,
        Sim::Windows,
    ),
    // The bindings' windows: after a wait that let another call in, the earlier window kept.
    Planted::code(
        "window-keeps-earlier",
        Defect::WindowKeepsEarlier,
        Sim::Windows,
    ),
];

/// The README's long run: 1024 simulated nodes (and 1100 holders competing for them), 10^9 IDs in
/// batches, every fault on; checked by per-lease order and per-node span disjointness.
fn long_run(target_ids: u64) {
    let shape = Shape {
        holders: 1100,
        node_bits: 10,
        sequence_bits: 12,
        steps: u64::MAX,
        burst: 8192,
        big_batch: 0,
        ttl_ms: 3_000,
        target_ids,
        exact: false,
        faults: true,
        late_reservations: false,
        etcd: false,
        postgres: false,
        file: false,
    };
    let t0 = Instant::now();
    let mut w = World::new(1, shape, Defect::None, false);
    // Every holder takes a node ID first (the 76 spares wait for one to come free).
    for i in 0..shape.holders {
        w.acquire(i).expect("a node ID's first holder");
    }
    let r = w.run();
    let nodes: HashSet<u64> = w.spans.values().map(|s| s.node).collect();
    println!(
        "long run: {} IDs, {} leases on {} node IDs, {} steps, {:.0} s: {}",
        w.minted,
        w.spans.len(),
        nodes.len(),
        w.step,
        t0.elapsed().as_secs_f64(),
        match &r {
            Ok(()) => "no overlap, every lease strictly increasing".to_string(),
            Err(e) => format!("FAILED: {e}"),
        }
    );
    if r.is_err() {
        std::process::exit(1);
    }
}
