//! Concurrency inside one process under a randomized scheduler (shuttle, PCT): a lease's keeper
//! rounds, two minting threads (single IDs, a small batch, a batch past the reservation that needs a
//! larger one) and `release` interleave, shuttle choosing at every lock, wait, notify and access of the
//! lease's cap and released flags (coord/src/sync.rs) which thread runs next. The generator's own words
//! are std atomics shared with the core (whose lock-free generator has its own loom model), so the
//! interleavings are those of the lease code around them: a mint that passed the ceiling check against
//! a `release` sealing the state word, a keeper round against a batch's request for more, rounds
//! against `release`.
//!
//! Checked in every run: no ID twice, each thread's IDs increasing, every ID's position covered by the
//! node's stored reservation (nothing minted at or past the ceiling the store acknowledged), a batch
//! past the ceiling served after one keeper round when the lease is still held, and after `release`
//! the node ID's next holder starts past every ID minted (a release racing minting leaves no ID past
//! the reservation it lowers to). Sensitivity: the planted `ReleaseReadsBeforeSeal` (release reads the
//! next free position with a load before it stops minting) must be caught within `DEFECT_SEEDS` seeds
//! of one schedule each; the count it took is printed.
//!
//! Run: `cargo test -p snowmint-coord --features shuttle,planted-defects --test shuttle --
//! --test-threads=1` (coord/test.sh). Bounded: a fixed number of schedules, a few seconds.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};
use snowmint::{ErrorCode, Layout, Options, Policy};
use snowmint_coord::lease::Defect;
use snowmint_coord::{layout_text, Lease, LeaseOptions, MemoryStore, SequencerConfig, Store, Time};

/// Schedules of the model run per variant (with and without `release`).
const SCHEDULES: u64 = 400;
/// The bound within which the planted defect must be caught (one schedule per seed).
const DEFECT_SEEDS: u64 = 2_000;
/// PCT's bug depth: how many priority changes a schedule makes.
const PCT_DEPTH: usize = 3;
/// A batch larger than the reservation the keeper keeps ahead (3 ticks of 256 IDs).
const BIG_BATCH: usize = 1_000;

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

fn layout() -> Layout {
    // Sonyflake: 256 IDs per 10 ms tick, so the batches cross ticks and the reservation.
    Layout::preset("sonyflake").unwrap()
}

fn position(id: u64) -> u64 {
    let l = layout();
    let d = l.decode(id).unwrap();
    (d.timestamp_ticks << l.sequence_bits()) | d.sequence
}

fn acquire(store: &Arc<MemoryStore>, defect: Defect) -> Lease {
    let store: Arc<dyn Store> = store.clone();
    let record = store.sequencer("model").unwrap().unwrap();
    Lease::acquire(
        store,
        Arc::new(Frozen),
        record,
        layout(),
        // `fail`: a mint at the ceiling returns at once (shuttle's timed waits never time out).
        Options {
            policy: Policy::Fail,
            ..Options::default()
        },
        LeaseOptions {
            ttl: Duration::from_secs(10),
            // Two ticks ahead: the ceiling is about 768 positions past the clock's tick.
            reserve_ahead: Duration::from_millis(20),
            stepped: true,
            defect,
            ..LeaseOptions::default()
        },
    )
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
    let store = Arc::new(MemoryStore::new());
    let config = SequencerConfig {
        layout: layout_text(&layout()),
        nodes: 1,
    };
    store
        .create_sequencer("model", &config, NOW_NS / 1_000_000)
        .unwrap();
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
/// (random priorities, `PCT_DEPTH` changes).
fn run(seed: u64, schedules: usize, pct: bool, defect: Defect, release: bool) {
    let f = move || model(defect, release);
    if pct {
        Runner::new(
            PctScheduler::new_from_seed(seed, PCT_DEPTH, schedules),
            Config::new(),
        )
        .run(f);
    } else {
        Runner::new(
            RandomScheduler::new_from_seed(seed, schedules),
            Config::new(),
        )
        .run(f);
    }
}

#[test]
fn keeper_minting_threads_batches_and_release_interleave_without_a_duplicate() {
    for release in [true, false] {
        for pct in [false, true] {
            run(1, SCHEDULES as usize, pct, Defect::None, release);
        }
    }
}

#[test]
fn the_model_catches_a_release_that_reads_before_it_seals() {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let caught = (0..DEFECT_SEEDS).find(|&seed| {
        std::panic::catch_unwind(|| run(seed, 1, false, Defect::ReleaseReadsBeforeSeal, true))
            .is_err()
    });
    std::panic::set_hook(hook);
    match caught {
        Some(seed) => println!(
            "planted ReleaseReadsBeforeSeal: caught at seed {seed} ({} schedules)",
            seed + 1
        ),
        None => panic!("ReleaseReadsBeforeSeal not caught within {DEFECT_SEEDS} schedules"),
    }
}
