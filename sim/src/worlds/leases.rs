//! The lease world (`--world leases`, `etcd leases`, `postgres leases`, `embedded leases`; `--replay SEED`
//! with `--etcd`, `--postgres` or `--embedded`): holders of the real `Lease`, stepped, over one store
//! (the in-memory store behind `Link`'s faults, the real etcd client or PostgreSQL store on their
//! simulated networks, or the embedded store whose directory is deleted or replaced under them); and the
//! README's long run (`--long`). The crate's documentation (`lib.rs`) says what is faulted and checked.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, LayoutConfig, Options, Policy};
use snowmint_coord::defect::{Defect, Hook};
use snowmint_coord::lease::start_after;
use snowmint_coord::sequencer::layout_from_text;
use snowmint_coord::{
    layout_fingerprint, layout_text, Error, FileStore, Lease, LeaseOptions, LeaseState,
    MemoryStore, Result, SequencerConfig, Store,
};

use crate::clock::{trace_line, SimClock, MS, START_UNIX_NS};
use crate::defects::StoreDefect;
use crate::etcd::{etcd_client, SimEtcd};
use crate::link::{Expiries, Link};
use crate::net::Faults;
use crate::postgres::{pg_client, SimPg};
use crate::rng::Rng;
use crate::worlds::embedded::{
    clear_embedded, copy_tree, embedded_dir, registry_files, remove_store_dir,
};

/// What one simulation run is made of.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub(crate) holders: usize,
    pub(crate) node_bits: u32,
    pub(crate) sequence_bits: u32,
    pub(crate) steps: u64,
    /// IDs per mint step at most (one `next_ids` call when above 1).
    pub(crate) burst: u64,
    /// Now and then (one mint step in 2000) a batch of this many IDs and up to half as many more: past
    /// the keeper's reservation step (0: none).
    pub(crate) big_batch: u64,
    pub(crate) ttl_ms: u64,
    /// Stop once this many IDs were minted (the long run).
    pub(crate) target_ids: u64,
    /// Keep every ID for the exact check (the bounded runs), or only per-lease ranges (the long run).
    pub(crate) exact: bool,
    pub(crate) faults: bool,
    /// Reservations may land late (after a later one) or twice (on by default; `--no-late-reservations`).
    pub(crate) late_reservations: bool,
    /// The store is the real etcd client over a simulated network and cluster (`etcd::SimEtcd`), the
    /// faults at the network; otherwise the in-memory store behind `Link`'s faults.
    pub(crate) etcd: bool,
    /// The store is the real PostgreSQL store through its seam to a simulated database
    /// (`postgres::SimPg`), the faults at the network.
    pub(crate) postgres: bool,
    /// The store is the embedded one (`FileStore`, a directory of this host), whose directory is
    /// deleted or replaced under running holders now and then.
    pub(crate) file: bool,
}

impl Shape {
    pub(crate) fn bounded(steps: u64) -> Shape {
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
    pub(crate) fn etcd(steps: u64) -> Shape {
        Shape {
            ttl_ms: 1_000,
            big_batch: 11_000,
            etcd: true,
            ..Shape::bounded(steps)
        }
    }

    /// The bounded run over the PostgreSQL store: the etcd world's TTL and big batch (statement
    /// timeouts of 500 ms, connections of 1 s).
    pub(crate) fn postgres(steps: u64) -> Shape {
        Shape {
            etcd: false,
            postgres: true,
            ..Shape::etcd(steps)
        }
    }
}

pub(crate) struct Holder {
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
pub(crate) struct Span {
    node: u64,
    first: u64,
    last: u64,
}

pub(crate) struct World {
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
    /// Every claim's (node ID, fencing token): never one twice, even across a lost history.
    tokens: HashSet<(u64, u64)>,
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

pub(crate) const NAME: &str = "sim";

impl World {
    pub(crate) fn new(seed: u64, shape: Shape, defect: Defect, trace: bool) -> World {
        let now = Arc::new(AtomicU64::new(START_UNIX_NS));
        let mut rng = Rng(seed);
        // (Seeds of their own, so that the in-memory world draws as it did before the etcd one.)
        let cluster = SimEtcd::new(&now, seed ^ 0xE7CD_0001);
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
            Arc::new(MemoryStore::new().plant(defect))
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
                ..Link::new(inner, &now, seed, None, StoreDefect::None)
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
            tokens: HashSet::new(),
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

    pub(crate) fn log(&self, what: impl FnOnce() -> String) {
        trace_line(self.trace, self.step, &self.now, what);
    }

    pub(crate) fn lease_options(&self, i: usize) -> LeaseOptions {
        LeaseOptions {
            ttl: Duration::from_millis(self.shape.ttl_ms),
            reserve_ahead: Duration::from_millis(self.shape.ttl_ms * 2 / 3),
            holder: format!("simulated holder {i}"),
            stepped: true,
            defect: Hook::planted(self.defect),
            ..LeaseOptions::default()
        }
    }

    pub(crate) fn period_ns(&self) -> u64 {
        // As the keeper's: a third of the TTL (and of the reserve-ahead span).
        self.shape.ttl_ms * MS / 3
    }

    /// Time passes: the true clock, smeared offsets.
    pub(crate) fn advance(&mut self, ns: u64) {
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

    pub(crate) fn acquire(&mut self, i: usize) -> std::result::Result<(), String> {
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
                if !self.tokens.insert((node, l.fencing_token())) {
                    return Err(format!(
                        "holder {i} was given fencing token {} of node {node} again",
                        l.fencing_token()
                    ));
                }
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
    pub(crate) fn check_reservation(&self, node: u64) -> std::result::Result<(), String> {
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
    pub(crate) fn position(layout: &Layout, id: u64) -> u64 {
        let (nb, sb) = (layout.node_bits(), layout.sequence_bits());
        (id >> (nb + sb)) << sb | (id & ((1 << sb) - 1))
    }

    pub(crate) fn mint(&mut self, i: usize, n: u64) -> std::result::Result<(), String> {
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
    pub(crate) fn healthy(&self, i: usize) -> bool {
        let h = &self.holders[i];
        h.heal_at_ns == 0
            && !h.paused
            && h.link.healthy()
            && h.clock.frozen.lock().unwrap().is_none()
    }

    /// Keeper rounds that are due (an unpaused holder's keeper runs every period).
    pub(crate) fn keepers(&mut self) -> std::result::Result<(), String> {
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
    pub(crate) fn heal(&mut self) {
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

    pub(crate) fn step(&mut self) -> std::result::Result<(), String> {
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
    pub(crate) fn replace_dir(&mut self) -> bool {
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
    pub(crate) fn lose_history(&mut self) -> std::result::Result<(), String> {
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
    pub(crate) fn recreated_layout(&self) -> Layout {
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
    pub(crate) fn check_spans(&self) -> std::result::Result<(), String> {
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

    pub(crate) fn run(&mut self) -> std::result::Result<(), String> {
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
pub(crate) fn at_reservation(e: &Error) -> bool {
    e.code() == ErrorCode::TooFarAhead && e.to_string().contains("reached the reservation")
}

pub(crate) fn run_seed(
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

/// The README's long run: 1024 simulated nodes (and 1100 holders competing for them), 10^9 IDs in
/// batches, every fault on; checked by per-lease order and per-node span disjointness.
pub(crate) fn long_run(target_ids: u64) {
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
