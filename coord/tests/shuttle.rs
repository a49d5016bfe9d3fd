//! Concurrency inside one process under shuttle's randomized schedulers (random and PCT), on the real
//! lease, sequencer-handle and range code: coord/src/base/sync.rs gives them shuttle's locks, condition
//! variables, threads and atomics (feature `shuttle`), so shuttle chooses which thread runs next at
//! every lock, wait, notify, spawn, sleep and access of those atomics. The lease generator's own words
//! (its state, the ceiling) are std atomics shared with the core (whose lock-free generator has its
//! own loom model), so the core's check of the ceiling and its compare-and-swap are not split here;
//! the lease code around them is (the cap load inside the ceiling check is a scheduling point).
//!
//! The models, each run for `SCHEDULES` schedules per scheduler:
//! - keeper rounds, two minting threads (single IDs, a small batch, a batch past the reservation) and
//!   `release`: no ID twice, each thread's IDs increasing, every ID within the node's stored
//!   reservation, a batch past the ceiling served after one keeper round while the lease is held, and
//!   the node ID's next holder past every ID minted;
//! - a take-over: the claim's TTL passes while the keeper runs a round and a thread mints, and another
//!   holder claims the node ID and mints: the two holders' IDs disjoint;
//! - `detach` and `attach` on the bindings' generator while two threads mint through it and a keeper
//!   runs rounds on the current lease: no ID twice, per-thread order, the re-attached lease past every
//!   ID;
//! - two range sequence handles of one datacenter, three minting threads (single values, batches)
//!   against both background threads (refill, datacenter pre-allocation) and the handles' close: no
//!   value twice, per-thread order.
//!
//! Sensitivity: each planted defect (feature `planted-defects`) must fail its model within
//! `DEFECT_SEEDS` schedules (one random schedule per seed); the count each took is printed.
//!
//! Run: `cargo test -p snowmint-coord --features shuttle,planted-defects --test shuttle --
//! --test-threads=1 --show-output` (coord/test.sh). Bounded: a fixed number of schedules, seconds.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, FailurePersistence, Runner};
use snowmint::{ErrorCode, Layout, LayoutConfig, Options, Policy};
use snowmint_coord::defect::{Defect, Hook};
use snowmint_coord::{
    layout_text, Lease, LeaseOptions, MemoryStore, RangeOptions, RangeSequence, Sequencer,
    SequencerConfig, SequencerGenerator, Store, Time,
};

/// Schedules of the model run per variant (with and without `release`).
const SCHEDULES: u64 = 400;
/// The bound within which the planted defect must be caught (one schedule per seed).
const DEFECT_SEEDS: u64 = 2_000;
/// PCT's bug depth: how many priority changes a schedule makes.
const PCT_DEPTH: usize = 3;
/// A batch larger than the reservation the keeper keeps ahead (21 ticks of 2 IDs).
const BIG_BATCH: usize = 100;

/// A frozen clock: positions advance only by minting, so every start depends on reservations alone.
#[derive(Debug)]
struct Frozen;
const NOW_NS: u64 = 1_790_000_000_000_000_000;
impl Time for Frozen {
    fn unix_ns(&self) -> u64 {
        NOW_NS
    }
    fn monotonic_ns(&self) -> u64 {
        1
    }
}

/// A clock that stands still until a thread steps it (the take-over model: a claim's TTL passes).
#[derive(Debug, Default)]
struct Stepped(std::sync::atomic::AtomicU64);
impl Stepped {
    fn step(&self, ns: u64) {
        self.0.fetch_add(ns, std::sync::atomic::Ordering::SeqCst);
    }
}
impl Time for Stepped {
    fn unix_ns(&self) -> u64 {
        NOW_NS + self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
    fn monotonic_ns(&self) -> u64 {
        1 + self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn layout() -> Layout {
    // Two IDs per 1 ms tick: every batch crosses ticks (a reservation covers the rest of its last
    // tick, so a race shows only across a tick's end), and the big one the reservation.
    Layout::new(LayoutConfig {
        sequence_bits: 1,
        ..LayoutConfig::default()
    })
    .unwrap()
}

fn position(id: u64) -> u64 {
    let l = layout();
    let d = l.decode(id).unwrap();
    (d.timestamp_ticks << l.sequence_bits()) | d.sequence
}

fn lease_options(defect: Defect) -> LeaseOptions {
    LeaseOptions {
        ttl: Duration::from_secs(10),
        // 20 ticks ahead: the ceiling is about 42 positions past the clock's tick.
        reserve_ahead: Duration::from_millis(20),
        stepped: true,
        defect: Hook::planted(defect),
        ..LeaseOptions::default()
    }
}

/// `fail`: a mint at the ceiling returns at once (shuttle's timed waits never time out).
fn options() -> Options {
    Options {
        policy: Policy::Fail,
        ..Options::default()
    }
}

/// A memory store with sequencer `model` of one node ID.
fn store() -> Arc<MemoryStore> {
    let store = Arc::new(MemoryStore::new());
    let config = SequencerConfig {
        layout: layout_text(&layout()),
        nodes: 1,
    };
    store
        .create_sequencer("model", &config, NOW_NS / 1_000_000)
        .unwrap();
    store
}

fn acquire(store: &Arc<MemoryStore>, defect: Defect) -> Lease {
    acquire_at(store, Arc::new(Frozen), lease_options(defect))
}

fn acquire_at(store: &Arc<MemoryStore>, time: Arc<dyn Time>, lease: LeaseOptions) -> Lease {
    let store: Arc<dyn Store> = store.clone();
    let record = store.sequencer("model").unwrap().unwrap();
    Lease::acquire(store, time, record, layout(), options(), lease)
        .expect("the sequencer's one node ID is free")
}

/// What a minting thread did: its IDs in order, and whether its big batch met the ceiling unserved.
struct Minted {
    ids: Vec<u64>,
    batch_refused: bool,
}

fn mint(lease: &Lease, singles: usize, batch: usize) -> Minted {
    let mut m = Minted {
        ids: Vec::new(),
        batch_refused: false,
    };
    for _ in 0..singles {
        if let Ok(id) = lease.next_id() {
            m.ids.push(id);
        }
    }
    let mut out = vec![0u64; batch];
    match lease.next_ids(&mut out) {
        Ok(()) => m.ids.extend_from_slice(&out),
        Err(e) => {
            assert!(
                matches!(e.code(), ErrorCode::TooFarAhead | ErrorCode::LeaseLost),
                "{e}"
            );
            m.batch_refused = e.code() == ErrorCode::TooFarAhead;
        }
    }
    for _ in 0..singles {
        if let Ok(id) = lease.next_id() {
            m.ids.push(id);
        }
    }
    m
}

/// One run: keeper rounds, two minting threads and (`release`) a release, interleaved by shuttle.
fn model(defect: Defect, release: bool) {
    let store = store();
    let lease = Arc::new(acquire(&store, defect));
    let minters: Vec<_> = [(3, BIG_BATCH), (3, 8)]
        .into_iter()
        .map(|(singles, batch)| {
            let lease = lease.clone();
            shuttle::thread::spawn(move || mint(&lease, singles, batch))
        })
        .collect();
    let keeper = {
        let lease = lease.clone();
        shuttle::thread::spawn(move || {
            for _ in 0..2 {
                lease.keeper_round();
                shuttle::thread::yield_now();
            }
        })
    };
    let releaser = release.then(|| {
        let lease = lease.clone();
        shuttle::thread::spawn(move || lease.release().unwrap())
    });
    let minted: Vec<Minted> = minters.into_iter().map(|h| h.join().unwrap()).collect();
    keeper.join().unwrap();
    if let Some(r) = releaser {
        r.join().unwrap();
    }

    let mut seen = HashSet::new();
    for m in &minted {
        assert!(
            m.ids.windows(2).all(|w| w[0] < w[1]),
            "a thread's IDs out of order"
        );
        for id in &m.ids {
            assert!(seen.insert(*id), "ID {id} minted twice");
        }
    }
    let stored = store
        .reservation("model", 0)
        .unwrap()
        .expect("a reservation");
    for id in &seen {
        assert!(
            position(*id) <= stored.position,
            "ID {id} at position {} past the stored reservation {}",
            position(*id),
            stored.position
        );
    }
    if !release {
        // A batch that met the ceiling is served after one keeper round.
        assert!(lease.keeper_round());
        if minted.iter().any(|m| m.batch_refused) {
            let mut out = vec![0u64; BIG_BATCH];
            lease
                .next_ids(&mut out)
                .expect("a batch past the ceiling, after a keeper round");
            for id in out {
                assert!(seen.insert(id), "ID {id} minted twice");
            }
        }
        lease.release().unwrap();
    }
    // The node ID's next holder starts past every ID minted under the first.
    let next = acquire(&store, Defect::None);
    let mut out = vec![0u64; 16];
    next.next_ids(&mut out).unwrap();
    let last = seen.iter().max().copied().unwrap_or(0);
    for id in out {
        assert!(!seen.contains(&id), "the next holder minted ID {id} again");
        assert!(id > last, "the next holder minted {id} before {last}");
    }
}

/// `schedules` runs from `seed`: random (shuttle's uniform choice at every scheduling point) or PCT
/// (random priorities, `PCT_DEPTH` changes). A failure prints its schedule (for `shuttle::replay`)
/// unless `quiet` (the defect search).
fn run(seed: u64, schedules: usize, pct: bool, quiet: bool, f: impl Fn() + Send + Sync + 'static) {
    let mut config = Config::new();
    if quiet {
        config.failure_persistence = FailurePersistence::None;
    }
    if pct {
        Runner::new(
            PctScheduler::new_from_seed(seed, PCT_DEPTH, schedules),
            config,
        )
        .run(f);
    } else {
        Runner::new(RandomScheduler::new_from_seed(seed, schedules), config).run(f);
    }
}

#[test]
fn keeper_minting_threads_batches_and_release_interleave_without_a_duplicate() {
    both_schedulers(|d| model(d, true));
    both_schedulers(|d| model(d, false));
}

/// `SCHEDULES` schedules of `model` (no defect) under each scheduler, random and PCT.
fn both_schedulers(model: fn(Defect)) {
    for pct in [false, true] {
        run(1, SCHEDULES as usize, pct, false, move || {
            model(Defect::None)
        });
    }
}

/// A take-over: a lease's claim expires (its 2 ms TTL passes on the clock) while its keeper runs a
/// round and a thread mints under it, and another holder claims the node ID and mints from the
/// reservation the store acknowledged. The old holder may mint only below the ceiling the store
/// acknowledged, so the two never meet.
fn takeover_model(defect: Defect) {
    let store = store();
    let time = Arc::new(Stepped::default());
    let ttl = Duration::from_millis(2);
    let old = Arc::new(acquire_at(
        &store,
        time.clone(),
        LeaseOptions {
            ttl,
            // Two ticks ahead: the minter meets the ceiling within its batch.
            reserve_ahead: Duration::from_millis(2),
            ..lease_options(defect)
        },
    ));
    let minter = {
        let old = old.clone();
        shuttle::thread::spawn(move || mint(&old, 2, 8).ids)
    };
    let keeper = {
        let old = old.clone();
        shuttle::thread::spawn(move || {
            old.keeper_round();
        })
    };
    let next = {
        let (store, time) = (store.clone(), time.clone());
        shuttle::thread::spawn(move || {
            time.step(2 * ttl.as_nanos() as u64);
            // Refused while the old holder's renewal keeps its claim: nothing to mint then.
            let record = store.sequencer("model").unwrap().unwrap();
            let store: Arc<dyn Store> = store;
            let Ok(next) = Lease::acquire(
                store,
                time,
                record,
                layout(),
                options(),
                lease_options(Defect::None),
            ) else {
                return Vec::new();
            };
            let mut out = vec![0u64; 8];
            next.next_ids(&mut out).unwrap();
            out
        })
    };
    let mut verdict = Ok(());
    let mut seen = HashSet::new();
    for ids in [minter.join().unwrap(), next.join().unwrap()] {
        for id in ids {
            if !seen.insert(id) {
                verdict = Err(format!("ID {id} minted by both holders"));
            }
        }
    }
    keeper.join().unwrap();
    drop(old);
    verdict.unwrap();
}

#[test]
fn a_take_over_while_the_old_holder_mints_and_renews_repeats_nothing() {
    both_schedulers(takeover_model);
}

/// A sequencer generator (the bindings' handle) detached and attached again while two threads mint
/// through it and a keeper thread runs rounds on whichever lease is current: the sequencer has one node
/// ID, so the new lease takes the one the detach released and must start past every ID minted under
/// the old one.
fn detach_model(defect: Defect) {
    let store = store();
    let seq = Sequencer::for_layout(
        store.clone(),
        "model",
        layout(),
        options(),
        Arc::new(Frozen),
        lease_options(defect),
    )
    .unwrap();
    let g = Arc::new(SequencerGenerator::attach_new(seq).unwrap());
    let minters: Vec<_> = [1usize, 8]
        .into_iter()
        .map(|batch| {
            let g = g.clone();
            shuttle::thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..3 {
                    if let Ok(id) = g.next_id() {
                        ids.push(id);
                    }
                    let mut out = vec![0u64; batch];
                    if g.next_ids(&mut out).is_ok() {
                        ids.extend_from_slice(&out);
                    }
                }
                ids
            })
        })
        .collect();
    let keeper = {
        let g = g.clone();
        shuttle::thread::spawn(move || {
            for _ in 0..2 {
                if let Some(l) = g.current() {
                    l.keeper_round();
                }
                shuttle::thread::yield_now();
            }
        })
    };
    let detacher = {
        let g = g.clone();
        shuttle::thread::spawn(move || {
            g.detach().unwrap();
            g.attach().unwrap();
        })
    };
    let mut seen = HashSet::new();
    let mut verdict = Ok(());
    for h in minters {
        let ids = h.join().unwrap();
        if !ids.windows(2).all(|w| w[0] < w[1]) {
            verdict = Err(format!("a thread's IDs out of order: {ids:?}"));
        }
        for id in ids {
            if !seen.insert(id) {
                verdict = Err(format!("ID {id} minted twice"));
            }
        }
    }
    keeper.join().unwrap();
    detacher.join().unwrap();
    // The lease attached last mints on past everything.
    let last = seen.iter().max().copied().unwrap_or(0);
    let id = g.next_id().unwrap();
    if seen.contains(&id) || id <= last {
        verdict = Err(format!("ID {id} after {last}"));
    }
    // Dropped (its lease released) inside the model, before a failure unwinds.
    drop(g);
    verdict.unwrap();
}

#[test]
fn detach_and_attach_while_minting_interleave_without_a_duplicate() {
    both_schedulers(detach_model);
}

/// Two processes of one datacenter (two range sequence handles on the same stores), small process
/// ranges fetched in the background at half use: a handle's two minting threads (single values,
/// batches) and the other handle's one, against both background threads (the refill, the
/// datacenter pre-allocation) and the handles' close (the last clone dropped by whichever thread ends
/// last).
fn range_model(defect: Defect) {
    let global: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let local: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let options = RangeOptions {
        dc_range: 24,
        process_range: 4,
        ..RangeOptions::default()
    };
    let open = || {
        Arc::new(
            RangeSequence::open_planted(
                "model",
                "eu",
                global.clone(),
                local.clone(),
                options.clone(),
                Arc::new(Frozen),
                defect,
            )
            .unwrap(),
        )
    };
    let (a, b) = (open(), open());
    let minters: Vec<_> = [(a.clone(), 1), (a, 3), (b, 1)]
        .into_iter()
        .map(|(seq, batch)| {
            shuttle::thread::spawn(move || {
                let mut values = Vec::new();
                for _ in 0..4 {
                    values.extend(seq.next_ids(batch).unwrap());
                }
                values
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for h in minters {
        let values = h.join().unwrap();
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "a thread's values out of order: {values:?}"
        );
        for v in values {
            assert!(v >= 1, "value {v} below the start");
            assert!(seen.insert(v), "value {v} handed out twice");
        }
    }
}

#[test]
fn range_minting_refill_and_close_interleave_without_a_duplicate() {
    both_schedulers(range_model);
}

/// The first seed (one schedule each, random) whose run fails, if any within `DEFECT_SEEDS`. The
/// failing run's panic message prints: what the model saw.
fn seeds_to_catch(
    f: impl Fn() + Send + Sync + Clone + std::panic::UnwindSafe + 'static,
) -> Option<u64> {
    (0..DEFECT_SEEDS).find(|&seed| {
        let f = f.clone();
        std::panic::catch_unwind(move || run(seed, 1, false, true, f)).is_err()
    })
}

#[test]
fn the_model_catches_each_planted_defect() {
    let defects: [(Defect, fn(Defect)); 5] = [
        (Defect::CeilingBeforeAck, takeover_model),
        (Defect::ReleaseReadsBeforeSeal, |d| model(d, true)),
        (Defect::ReleaseReadsBeforeSeal, detach_model),
        (Defect::KeeperIgnoresWanted, |d| model(d, false)),
        (Defect::RangeEndBeforeCursor, range_model),
    ];
    let mut missed = Vec::new();
    for (defect, f) in defects {
        match seeds_to_catch(move || f(defect)) {
            Some(seed) => println!("planted {defect:?}: caught by schedule {}", seed + 1),
            None => missed.push(defect),
        }
    }
    assert!(
        missed.is_empty(),
        "not caught within {DEFECT_SEEDS} schedules: {missed:?}"
    );
}
