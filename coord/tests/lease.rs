//! The store contract and the lease algorithm in one process, with injected clocks, on the in-memory
//! store, the embedded store, and every store URL in `SNOWMINT_TEST_STORES` (etcd://, postgres://).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, LayoutConfig, Options, Policy};
use snowmint_coord::source::{open_store, parse_store_url};
use snowmint_coord::{
    layout_fingerprint, layout_text, ClaimRequest, FileStore, Lease, LeaseOptions, LeaseState,
    MemoryStore, OffsetTime, Reservation, SequencerConfig, Store, SystemTime, Time,
};

/// A store under test and the temporary directory it lives in (removed on drop), if any.
struct TestStore {
    store: Arc<dyn Store>,
    dir: Option<std::path::PathBuf>,
}

impl Drop for TestStore {
    fn drop(&mut self) {
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

static N: AtomicU64 = AtomicU64::new(0);

fn unique(what: &str) -> String {
    format!(
        "{what}-{}-{}-{}",
        std::process::id(),
        SystemTime.unix_ns() / 1_000_000 % 1_000_000,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn stores() -> Vec<TestStore> {
    let dir = std::env::temp_dir().join(unique("snowmint-coord-test"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut out = vec![
        TestStore {
            store: Arc::new(MemoryStore::new()),
            dir: None,
        },
        TestStore {
            store: Arc::new(FileStore::create(&dir).unwrap()),
            dir: Some(dir),
        },
    ];
    if let Ok(urls) = std::env::var("SNOWMINT_TEST_STORES") {
        for url in urls
            .split_whitespace()
            .filter(|u| !u.starts_with("file://"))
        {
            out.push(TestStore {
                store: open_store(&parse_store_url(url).unwrap()).unwrap(),
                dir: None,
            });
        }
    }
    out
}

fn config(nodes: u64) -> SequencerConfig {
    SequencerConfig {
        layout: layout_text(&Layout::twitter()),
        nodes,
    }
}

fn now_ms() -> u64 {
    SystemTime.unix_ns() / 1_000_000
}

fn acquire_with(
    store: &Arc<dyn Store>,
    name: &str,
    time: Arc<dyn Time>,
    nodes: u64,
    options: Options,
    lease: LeaseOptions,
) -> snowmint_coord::Result<Lease> {
    let rec = store.create_sequencer(name, &config(nodes), time.unix_ns() / 1_000_000)?;
    Lease::acquire(store.clone(), time, rec, Layout::twitter(), options, lease)
}

fn acquire(
    store: &Arc<dyn Store>,
    name: &str,
    time: Arc<dyn Time>,
    nodes: u64,
    options: Options,
) -> snowmint_coord::Result<Lease> {
    let lease = LeaseOptions {
        ttl: Duration::from_millis(3000),
        ..LeaseOptions::default()
    };
    acquire_with(store, name, time, nodes, options, lease)
}

/// The rules of `Store` that the algorithm rests on, checked directly.
#[test]
fn store_contract() {
    for t in stores() {
        let s = &t.store;
        let name = unique("contract");
        let rec = s.create_sequencer(&name, &config(2), now_ms()).unwrap();
        assert_eq!(
            s.create_sequencer(&name, &config(2), now_ms()).unwrap(),
            rec,
            "same config: the same record"
        );
        let e = s.create_sequencer(&name, &config(3), now_ms()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SequencerConflict, "{e}");
        assert_eq!(s.sequencer(&name).unwrap().as_ref(), Some(&rec));
        assert!(s.sequencers().unwrap().iter().any(|r| r.name == name));

        let req = |start| ClaimRequest {
            sequencer: &name,
            incarnation: rec.incarnation,
            nodes: 2,
            start,
            ttl_ms: 10_000,
            holder: "contract test",
            now_unix_ms: now_ms(),
        };
        let a = s.claim(&req(1)).unwrap().unwrap();
        assert_eq!(a.node_id, 1, "the preferred node ID when free");
        let b = s.claim(&req(1)).unwrap().unwrap();
        assert_eq!(b.node_id, 0, "the next free one, wrapping");
        assert!(s.claim(&req(0)).unwrap().is_none(), "all held");
        assert!(a.expires_unix_ms >= now_ms());
        let holders = s.holders(&name, now_ms()).unwrap();
        assert_eq!(holders.iter().filter(|n| n.claim.is_some()).count(), 2);
        assert!(holders.iter().any(|n| n
            .claim
            .as_ref()
            .is_some_and(|c| c.holder == "contract test" && c.token == a.token)));

        let r = Reservation {
            position: 12345,
            layout_fingerprint: 7,
            until_unix_ms: 999,
        };
        s.reserve(&a, &r).unwrap();
        assert_eq!(s.reservation(&name, 1).unwrap(), Some(r));
        // Reservations never move back under a layout: a write below the stored one (delayed, or
        // re-sent after a higher one) succeeds and leaves the higher one; positions compare as
        // unsigned 64-bit numbers; a write under another layout replaces it; only a clean release's
        // `lower_reservation` lowers it.
        let higher = Reservation {
            position: 20_000,
            until_unix_ms: 1_999,
            ..r
        };
        let top = Reservation {
            position: (1 << 63) + 5,
            until_unix_ms: 2_999,
            ..r
        };
        s.reserve(&a, &higher).unwrap();
        s.reserve(&a, &r).unwrap();
        assert_eq!(s.reservation(&name, 1).unwrap(), Some(higher), "moved back");
        s.reserve(&a, &higher).unwrap();
        assert_eq!(s.reservation(&name, 1).unwrap(), Some(higher), "a re-send");
        s.reserve(&a, &top).unwrap();
        s.reserve(&a, &higher).unwrap();
        assert_eq!(
            s.reservation(&name, 1).unwrap(),
            Some(top),
            "unsigned order"
        );
        let other_layout = Reservation {
            position: 1,
            layout_fingerprint: 8,
            until_unix_ms: 5,
        };
        s.reserve(&a, &other_layout).unwrap();
        assert_eq!(s.reservation(&name, 1).unwrap(), Some(other_layout));
        s.reserve(&a, &top).unwrap();
        s.lower_reservation(&a, &r).unwrap();
        assert_eq!(
            s.reservation(&name, 1).unwrap(),
            Some(r),
            "a clean release lowers"
        );
        let renewed = s.renew(&a, 10_000, now_ms()).unwrap();
        assert_eq!((renewed.node_id, renewed.token), (a.node_id, a.token));

        // After release, the old claim can neither renew nor reserve; a new claim has a larger token.
        s.release(&a).unwrap();
        assert_eq!(
            s.renew(&a, 10_000, now_ms()).unwrap_err().code(),
            ErrorCode::LeaseLost
        );
        assert_eq!(
            s.reserve(&a, &Reservation { position: 1, ..r })
                .unwrap_err()
                .code(),
            ErrorCode::LeaseLost
        );
        let a2 = s.claim(&req(1)).unwrap().unwrap();
        assert_eq!(a2.node_id, 1);
        assert!(a2.token > a.token, "fencing tokens strictly increase");
        assert_eq!(
            s.reserve(&a, &Reservation { position: 1, ..r })
                .unwrap_err()
                .code(),
            ErrorCode::LeaseLost
        );
        assert_eq!(
            s.reservation(&name, 1).unwrap(),
            Some(r),
            "a stale holder wrote nothing"
        );

        // Destroy keeps reservations; a re-created record is another incarnation.
        assert!(s.destroy_sequencer(&name, rec.incarnation).unwrap());
        assert!(!s.destroy_sequencer(&name, rec.incarnation).unwrap());
        assert_eq!(s.sequencer(&name).unwrap(), None);
        assert_eq!(s.reservation(&name, 1).unwrap(), Some(r));
        let again = s.create_sequencer(&name, &config(3), now_ms()).unwrap();
        assert_ne!(again.incarnation, rec.incarnation);
        s.release(&a2).unwrap();
        s.release(&b).unwrap();
        s.destroy_sequencer(&name, again.incarnation).unwrap();
    }
}

#[test]
fn distinct_node_ids_then_exhausted() {
    for t in stores() {
        let name = unique("exhaust");
        let a = acquire(&t.store, &name, Arc::new(SystemTime), 2, Options::default()).unwrap();
        let b = acquire(&t.store, &name, Arc::new(SystemTime), 2, Options::default()).unwrap();
        assert_ne!(a.node_id(), b.node_id());
        let err =
            acquire(&t.store, &name, Arc::new(SystemTime), 2, Options::default()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NodeIdsExhausted, "{err}");
        assert!(err.to_string().contains("all 2 node IDs"), "{err}");
        drop(a);
        let c = acquire(&t.store, &name, Arc::new(SystemTime), 2, Options::default()).unwrap();
        assert_ne!(c.node_id(), b.node_id());
    }
}

#[test]
fn new_holder_starts_after_reservation_even_with_clock_behind() {
    for t in stores() {
        let store = &t.store;
        let name = unique("behind");
        let a = acquire(store, &name, Arc::new(SystemTime), 1, Options::default()).unwrap();
        let ids_a: Vec<u64> = (0..1000).map(|_| a.next_id().unwrap()).collect();
        let token_a = a.fencing_token();
        let pos = |id: u64| (id >> 22) << 12 | (id & 0xfff);
        assert!(a.ceiling() > pos(*ids_a.last().unwrap()));
        drop(a);
        // A clean release lowers the stored reservation to the last position minted.
        let r = store.reservation(&name, 0).unwrap().unwrap();
        assert_eq!(r.position, pos(*ids_a.last().unwrap()));
        // Ten seconds behind (inside max_ahead): waits are short enough to mint.
        let behind: Arc<dyn Time> = Arc::new(OffsetTime::new(-10_000_000_000));
        let b = acquire(
            store,
            &name,
            behind,
            1,
            Options {
                policy: Policy::Wait,
                ..Options::default()
            },
        )
        .unwrap();
        assert!(b.fencing_token() > token_a);
        let first_b = b.next_id().unwrap();
        assert!(
            first_b > *ids_a.last().unwrap(),
            "B starts after A's reservation"
        );
        drop(b);
        // Minutes behind with the fail policy: TOO_FAR_AHEAD, never an old ID.
        let minutes: Arc<dyn Time> = Arc::new(OffsetTime::new(-300_000_000_000));
        let c = acquire(
            store,
            &name,
            minutes,
            1,
            Options {
                policy: Policy::Fail,
                ..Options::default()
            },
        )
        .unwrap();
        let err = c.next_id().unwrap_err();
        assert_eq!(err.code(), ErrorCode::TooFarAhead, "{err}");
    }
}

/// A sequencer re-created with another layout: its holders start after the old reservations' time.
#[test]
fn another_layout_starts_after_the_reserved_time() {
    for t in stores() {
        let name = unique("relayout");
        let a = acquire(&t.store, &name, Arc::new(SystemTime), 1, Options::default()).unwrap();
        let last = (0..100).map(|_| a.next_id().unwrap()).max().unwrap();
        let reserved_ms = a.sequencer().created_unix_ms;
        let incarnation = a.sequencer().incarnation;
        drop(a);
        let until = t
            .store
            .reservation(&name, 0)
            .unwrap()
            .unwrap()
            .until_unix_ms;
        assert!(until >= reserved_ms);
        t.store.destroy_sequencer(&name, incarnation).unwrap();
        let recreate = |layout: &Layout| {
            t.store
                .create_sequencer(
                    &name,
                    &SequencerConfig {
                        layout: layout_text(layout),
                        nodes: 1,
                    },
                    now_ms(),
                )
                .unwrap()
        };
        let behind: Arc<dyn Time> = Arc::new(OffsetTime::new(-5_000_000_000));
        // Sonyflake (ticks of 10 ms, 2014 epoch) reaches the old IDs' values only decades from now:
        // its holders are refused rather than repeat them (or wait that long).
        let sonyflake = Layout::preset("sonyflake").unwrap();
        let rec = recreate(&sonyflake);
        let e = Lease::acquire(
            t.store.clone(),
            behind.clone(),
            rec.clone(),
            sonyflake,
            Options::default(),
            LeaseOptions::default(),
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::SequencerConflict, "{e}");
        t.store.destroy_sequencer(&name, rec.incarnation).unwrap();
        // Another epoch (1970) whose IDs are already above the old ones: the first ID's time is at or
        // after the reserved time.
        let early = Layout::new(LayoutConfig {
            epoch_ms: 0,
            ..*Layout::twitter().config()
        })
        .unwrap();
        let rec = recreate(&early);
        let b = Lease::acquire(
            t.store.clone(),
            behind,
            rec,
            early,
            Options::default(),
            LeaseOptions::default(),
        )
        .unwrap();
        let id = b.next_id().unwrap();
        assert!(
            early.decode(id).unwrap().unix_ms >= until,
            "after the old reservation's time"
        );
        assert!(Layout::twitter().decode(last).unwrap().unix_ms < until);
    }
}

#[test]
fn store_outage_stops_at_the_ceiling_then_resumes() {
    let mem = Arc::new(MemoryStore::new());
    let store: Arc<dyn Store> = mem.clone();
    // 16 IDs per 1 ms tick and a 300 ms reservation: the ceiling is reached within a second.
    let small = Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits: 2,
        sequence_bits: 4,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .unwrap();
    let rec = store
        .create_sequencer(
            "outage",
            &SequencerConfig {
                layout: layout_text(&small),
                nodes: 1,
            },
            now_ms(),
        )
        .unwrap();
    let lease_opts = LeaseOptions {
        ttl: Duration::from_millis(600),
        reserve_ahead: Duration::from_millis(300),
        ..LeaseOptions::default()
    };
    let wait = Options {
        policy: Policy::Wait,
        ..Options::default()
    };
    let a = Lease::acquire(
        store.clone(),
        Arc::new(SystemTime),
        rec.clone(),
        small,
        wait,
        lease_opts.clone(),
    )
    .unwrap();
    let mut ids = vec![a.next_id().unwrap()];
    mem.set_available(false);
    let t0 = Instant::now();
    let err = loop {
        match a.next_id() {
            Ok(id) => ids.push(id),
            Err(e) => break e,
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "minting must stop");
    };
    // Minting continued up to the reservation, waited at most about one TTL, then LEASE_LOST.
    assert_eq!(err.code(), ErrorCode::LeaseLost, "{err}");
    assert!(
        t0.elapsed() < Duration::from_millis(300 + 600 + 1500),
        "bounded: {:?}",
        t0.elapsed()
    );
    let pos = |id: u64| (id >> 6) << 4 | (id & 0xf);
    assert!(ids.iter().all(|&id| pos(id) < a.ceiling()));
    // The keeper gives the claim up once a TTL has passed since its last renewal.
    let t1 = Instant::now();
    while a.state() == LeaseState::Held {
        assert!(
            t1.elapsed() < Duration::from_millis(1000),
            "the keeper declares the claim lost"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(a.state(), LeaseState::Lost);
    assert_eq!(
        a.next_id().unwrap_err().code(),
        ErrorCode::LeaseLost,
        "stays stopped"
    );
    // The store is back: a new claim mints again, after everything minted before.
    mem.set_available(true);
    drop(a);
    std::thread::sleep(Duration::from_millis(650)); // the old claim expires (it is not released while the store was down)
    let b = Lease::acquire(
        store.clone(),
        Arc::new(SystemTime),
        rec,
        small,
        wait,
        lease_opts,
    )
    .unwrap();
    let next = b.next_id().unwrap();
    assert!(next > *ids.iter().max().unwrap());
}

#[test]
fn destroyed_sequencer_fails_forever_and_recreate_never_repeats() {
    for t in stores() {
        let name = unique("destroy");
        let a = acquire(&t.store, &name, Arc::new(SystemTime), 1, Options::default()).unwrap();
        let last_a = (0..100).map(|_| a.next_id().unwrap()).max().unwrap();
        assert!(t
            .store
            .destroy_sequencer(&name, a.sequencer().incarnation)
            .unwrap());
        a.poke();
        let t0 = Instant::now();
        let err = loop {
            match a.next_id() {
                Err(e) => break e,
                Ok(_) => assert!(t0.elapsed() < Duration::from_secs(2)),
            }
        };
        assert_eq!(err.code(), ErrorCode::SequencerDestroyed, "{err}");
        assert_eq!(a.state(), LeaseState::Destroyed);
        let b = acquire(&t.store, &name, Arc::new(SystemTime), 1, Options::default()).unwrap();
        assert!(b.next_id().unwrap() > last_a);
        assert_eq!(
            a.next_id().unwrap_err().code(),
            ErrorCode::SequencerDestroyed
        );
    }
}

/// A lease on a fresh one-node sequencer of `layout`, on an injected clock 1.5 s behind, TTL 3 s.
fn acquire_layout(
    store: &Arc<dyn Store>,
    name: &str,
    layout: Layout,
    options: Options,
    reserve_ahead: Duration,
) -> Lease {
    let time: Arc<dyn Time> = Arc::new(OffsetTime::new(-1_500_000_000));
    let config = SequencerConfig {
        layout: layout_text(&layout),
        nodes: 1,
    };
    let rec = store.create_sequencer(name, &config, now_ms()).unwrap();
    let lease = LeaseOptions {
        ttl: Duration::from_millis(3000),
        reserve_ahead,
        ..LeaseOptions::default()
    };
    Lease::acquire(store.clone(), time, rec, layout, options, lease).unwrap()
}

/// A batch larger than the keeper's reservation step, on a healthy lease, succeeds: the keeper reserves
/// up to its end (acknowledged by the store) before the ceiling lets it through. Sonyflake (256 IDs per
/// 10 ms tick: 200,000 IDs are 7.8 s of ticks, past the default 4 s step) and Twitter with a 20 ms step
/// (200,000 IDs are 49 ticks of 1 ms); `wait` waits for the reservation, `fail`'s retry gets it.
#[test]
fn a_batch_past_the_reservation_step_succeeds_on_a_healthy_lease() {
    let cases = [
        ("sonyflake", Duration::from_secs(4), Policy::Wait),
        ("sonyflake", Duration::from_secs(4), Policy::Fail),
        ("twitter", Duration::from_millis(20), Policy::Wait),
        ("twitter", Duration::from_millis(20), Policy::Fail),
    ];
    // Every store and case is tried; the batches that failed are reported together.
    let mut failed = Vec::new();
    for t in stores() {
        for (preset, step, policy) in cases {
            let what = format!("{} {preset} {policy:?}", t.store.describe());
            let layout = Layout::preset(preset).unwrap();
            let name = unique("batch");
            let options = Options {
                policy,
                ..Options::default()
            };
            let a = acquire_layout(&t.store, &name, layout, options, step);
            // A 20 ms step is one scheduler delay on a loaded machine: under `fail`, a single ID (the
            // first, or the one right after the batch, whose end the reservation just covers) may find
            // the reservation reached; it retries as the batch below does (bounded).
            let next_id = || {
                let mut minted = a.next_id();
                for _ in 0..100 {
                    match minted {
                        Err(ref e)
                            if policy == Policy::Fail && e.code() == ErrorCode::TooFarAhead =>
                        {
                            std::thread::sleep(Duration::from_millis(10));
                            minted = a.next_id();
                        }
                        _ => break,
                    }
                }
                minted
            };
            let first = next_id().unwrap();
            let n = batch(&*t.store, &layout);
            assert!(
                a.generator().state() + n > a.ceiling(),
                "{what}: the batch goes past the reservation written so far"
            );
            let mut ids = vec![0u64; n as usize];
            let t0 = Instant::now();
            let mut retries = 0;
            loop {
                match a.next_ids(&mut ids) {
                    Ok(()) => break,
                    // `fail`: the keeper is extending the reservation; retry shortly.
                    // (For as long as the 2 s the batch is allowed below: a keeper round on a loaded
                    // 3-member etcd cluster took over a second.)
                    Err(e)
                        if policy == Policy::Fail
                            && e.code() == ErrorCode::TooFarAhead
                            && t0.elapsed() < Duration::from_secs(2)
                            && retries < 200 =>
                    {
                        retries += 1;
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(e) => {
                        failed.push(format!("{what}: {e} after {:?}", t0.elapsed()));
                        break;
                    }
                }
            }
            if ids[0] == 0 {
                continue;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(2),
                "{what}: {:?}",
                t0.elapsed()
            );
            assert!(ids[0] > first, "{what}");
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "{what}: unique and increasing"
            );
            assert_eq!(a.state(), LeaseState::Held, "{what}");
            // The store holds a reservation that covers every position minted, under this layout.
            let r = t.store.reservation(&name, a.node_id()).unwrap().unwrap();
            assert_eq!(r.layout_fingerprint, layout_fingerprint(&layout), "{what}");
            let last_minted = a.generator().state() - 1;
            assert!(r.position >= last_minted, "{what}: {r:?} vs {last_minted}");
            assert!(a.ceiling() <= r.position + 1, "{what}: ceiling within it");
            assert!(
                r.until_unix_ms >= layout.decode(ids[ids.len() - 1]).unwrap().unix_ms,
                "{what}"
            );
            // Minting goes on after it.
            assert!(next_id().unwrap() > ids[ids.len() - 1], "{what}");
            drop(a);
            let incarnation = t.store.sequencer(&name).unwrap().unwrap().incarnation;
            t.store.destroy_sequencer(&name, incarnation).unwrap();
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// A batch that goes past the reservation: 200,000 IDs, or a quarter of what the store's bound on minting
/// ahead of the clock holds (the embedded store's 1 s: 6,400 sonyflake IDs), which a batch cannot exceed.
fn batch(store: &dyn Store, layout: &Layout) -> u64 {
    match store.max_ahead() {
        Some(b) => {
            let ticks = b.as_nanos() as u64 / layout.tick_ns();
            (layout.ids_per_tick() * ticks / 4).min(200_000)
        }
        None => 200_000,
    }
}

/// A batch past the ceiling on a lost lease is LEASE_LOST (no reservation is written for it), and a
/// batch larger than `max_ahead` allows is the core's INVALID_ARGUMENT, before any reservation is asked.
#[test]
fn a_batch_past_the_ceiling_on_a_lost_lease_is_lease_lost() {
    let sonyflake = Layout::preset("sonyflake").unwrap();
    for t in stores() {
        let what = t.store.describe();
        let name = unique("batch-lost");
        let wait = Options::default();
        let a = acquire_layout(&t.store, &name, sonyflake, wait, Duration::from_secs(4));
        // 1501 ticks of 256 IDs within the default 15 s max_ahead.
        let mut too_many = vec![0u64; 384_257];
        let e = a.next_ids(&mut too_many).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{what}: {e}");
        assert_eq!(a.state(), LeaseState::Held, "{what}");
        a.next_id().unwrap();
        // The claim is taken away in the store (released under the holder): the lease is lost.
        t.store.release(&a.claim()).unwrap();
        let n = batch(&*t.store, &sonyflake);
        let mut ids = vec![0u64; n as usize];
        let t0 = Instant::now();
        let e = a.next_ids(&mut ids).unwrap_err();
        assert_eq!(e.code(), ErrorCode::LeaseLost, "{what}: {e}");
        assert!(
            t0.elapsed() < Duration::from_secs(2),
            "{what}: {:?}",
            t0.elapsed()
        );
        assert_eq!(a.state(), LeaseState::Lost, "{what}");
        let r = t.store.reservation(&name, a.node_id()).unwrap().unwrap();
        assert!(
            r.position < a.generator().state() + n - 1,
            "{what}: no reservation covers the batch of a lost claim: {r:?}"
        );
        drop(a);
        let incarnation = t.store.sequencer(&name).unwrap().unwrap().incarnation;
        t.store.destroy_sequencer(&name, incarnation).unwrap();
    }
}

/// The wait for a batch's reservation is bounded: with the store unreachable, the batch fails with
/// LEASE_LOST within about one TTL (3 s here), never hangs, and nothing past the ceiling is minted.
#[test]
fn a_batch_waiting_for_its_reservation_is_bounded_by_the_ttl() {
    let mem = Arc::new(MemoryStore::new());
    let store: Arc<dyn Store> = mem.clone();
    let sonyflake = Layout::preset("sonyflake").unwrap();
    let a = acquire_layout(
        &store,
        "batch-outage",
        sonyflake,
        Options::default(),
        Duration::from_secs(4),
    );
    a.next_id().unwrap();
    let (state, ceiling) = (a.generator().state(), a.ceiling());
    mem.set_available(false);
    let mut ids = vec![0u64; 200_000];
    let t0 = Instant::now();
    let e = a.next_ids(&mut ids).unwrap_err();
    assert_eq!(e.code(), ErrorCode::LeaseLost, "{e}");
    assert!(
        t0.elapsed() >= Duration::from_millis(2900) && t0.elapsed() < Duration::from_millis(4500),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(a.generator().state(), state, "nothing minted");
    assert_eq!(
        a.ceiling(),
        ceiling,
        "no unacknowledged reservation raised it"
    );
    mem.set_available(true);
}
/// Every store expires a claim at its TTL, whoever holds it: a renewal after the TTL is `LEASE_LOST`,
/// and the node ID can be claimed again while the first holder still lives (on the embedded store: a
/// second open of the directory, whose OS locks conflict with the first's as another process's do).
/// Stores that judge expiry by the caller's clock (in-memory, embedded) are driven by clock readings
/// here; the server stores, judged by their own clocks, by `tests/servers.rs`
/// (`an_expired_claim_is_taken_and_fenced_off`).
#[test]
fn an_expired_claim_is_free_again_while_its_holder_lives() {
    for t in stores().into_iter().take(2) {
        let name = unique("expiry");
        let holder = &t.store;
        // Another process's view of the same store (the memory store is one process's).
        let other: Arc<dyn Store> = match &t.dir {
            Some(dir) => Arc::new(FileStore::create(dir).unwrap()),
            None => holder.clone(),
        };
        let incarnation = holder
            .create_sequencer(&name, &config(1), 0)
            .unwrap()
            .incarnation;
        let t0 = now_ms();
        let req = |now_unix_ms, who| ClaimRequest {
            sequencer: &name,
            nodes: 1,
            start: 0,
            ttl_ms: 1000,
            holder: who,
            now_unix_ms,
            incarnation,
        };
        let r = Reservation {
            position: 10,
            layout_fingerprint: 7,
            until_unix_ms: 10,
        };
        let a = holder.claim(&req(t0, "a")).unwrap().unwrap();
        assert_eq!(a.expires_unix_ms, t0 + 1000);
        // Inside the TTL: held, renewable.
        assert!(other.claim(&req(t0 + 999, "b")).unwrap().is_none());
        let a = holder.renew(&a, 1000, t0 + 500).unwrap();
        assert_eq!(a.expires_unix_ms, t0 + 1500);
        assert!(other.claim(&req(t0 + 1499, "b")).unwrap().is_none());
        let held = other.holders(&name, t0 + 1499).unwrap();
        assert_eq!(held[0].claim.as_ref().map(|c| c.token), Some(a.token));
        // Past the TTL: not held, not renewable, though its holder lives.
        assert!(
            other
                .holders(&name, t0 + 1500)
                .unwrap()
                .iter()
                .all(|n| n.claim.is_none()),
            "{}",
            holder.describe()
        );
        let e = holder.renew(&a, 1000, t0 + 1500).unwrap_err();
        assert_eq!(e.code(), ErrorCode::LeaseLost, "{}: {e}", holder.describe());
        let b = other.claim(&req(t0 + 1600, "b")).unwrap();
        let b = b.unwrap_or_else(|| panic!("{}: an expired claim stays taken", holder.describe()));
        assert!(b.token > a.token, "fencing tokens strictly increase");
        // The old holder is fenced off; the new one is not.
        let e = holder.reserve(&a, &r).unwrap_err();
        assert_eq!(e.code(), ErrorCode::LeaseLost, "{e}");
        let e = holder.renew(&a, 1000, t0 + 1600).unwrap_err();
        assert_eq!(e.code(), ErrorCode::LeaseLost, "{e}");
        other.reserve(&b, &r).unwrap();
        assert_eq!(holder.reservation(&name, 0).unwrap(), Some(r));
        // The old holder cannot take it back while the new claim lives, nor free it by releasing.
        holder.release(&a).unwrap();
        assert!(holder.claim(&req(t0 + 1700, "a")).unwrap().is_none());
        let b = other.renew(&b, 1000, t0 + 1700).unwrap();
        assert_eq!(b.expires_unix_ms, t0 + 2700);
        other.release(&b).unwrap();
        let c = holder.claim(&req(t0 + 1800, "a")).unwrap().unwrap();
        assert!(c.token > b.token);
        holder.release(&c).unwrap();
    }
}

/// Mints `count` IDs from `seq` (attached with `holders` handles, round robin) into a set; returns how
/// many of them `seen` already held.
fn mint_into(
    seq: &snowmint_coord::Sequencer,
    holders: usize,
    count: usize,
    seen: &mut std::collections::HashSet<u64>,
) -> usize {
    let handles: Vec<_> = (0..holders).map(|_| seq.new_handle()).collect();
    for h in &handles {
        h.attach().unwrap();
    }
    let mut repeated = 0;
    for i in 0..count {
        let id = handles[i % holders].next_id().unwrap();
        if !seen.insert(id) {
            repeated += 1;
        }
    }
    for h in &handles {
        h.detach().unwrap();
    }
    repeated
}

/// 256 IDs per 1 ms tick, so that 200,000 IDs run about 0.8 s ahead of the clock (as a busy holder
/// does): the case where a re-created sequencer under another layout met the old IDs.
fn narrow(epoch_ms: u64, node_bits: u32, sequence_bits: u32, offset: u64) -> Layout {
    Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits,
        sequence_bits,
        epoch_ms,
        node_id_offset: offset,
        ..LayoutConfig::default()
    })
    .unwrap()
}

/// SPEC §3.3: a sequencer re-created under a name never mints an ID value the destroyed one could have
/// minted, whatever the new layout: another epoch (1 s later), another node-ID offset, other field
/// widths. The reproduction, scaled down (200,000 IDs each), on every store.
#[test]
fn a_recreated_sequencer_never_repeats_an_old_id_value() {
    let epoch = 1_600_000_000_000;
    // (case, old layout and node count, new layout and node count)
    let cases = [
        (
            "epoch + 1 s",
            narrow(epoch, 10, 8, 0),
            1,
            narrow(epoch + 1000, 10, 8, 0),
            1,
        ),
        (
            "node-ID offset",
            narrow(epoch, 10, 8, 1),
            1,
            narrow(epoch, 10, 8, 0),
            2,
        ),
        (
            "field widths",
            narrow(epoch, 10, 8, 0),
            1,
            narrow(epoch + 500, 5, 13, 0),
            1,
        ),
    ];
    for t in stores() {
        for (case, old, old_nodes, new, new_nodes) in cases {
            let name = unique("recreate");
            let create = |layout, nodes| {
                snowmint_coord::Sequencer::create_with(
                    t.store.clone(),
                    Arc::new(SystemTime),
                    &name,
                    layout,
                    nodes,
                    Options::default(),
                    LeaseOptions::default(),
                )
                .unwrap()
            };
            let mut seen = std::collections::HashSet::new();
            let first = create(old, old_nodes);
            assert_eq!(first.record().floor, 0);
            assert_eq!(mint_into(&first, old_nodes as usize, 200_000, &mut seen), 0);
            let old_max = *seen.iter().max().unwrap();
            first.destroy().unwrap();
            let second = create(new, new_nodes);
            assert!(
                second.record().floor > old_max,
                "{:?} {case}: floor {} after IDs up to {old_max}",
                t.store,
                second.record().floor
            );
            let repeated = mint_into(&second, new_nodes as usize, 200_000, &mut seen);
            eprintln!("{} {case}: {repeated} IDs repeated", t.store.describe());
            assert_eq!(repeated, 0, "{} {case}", t.store.describe());
            second.destroy().unwrap();
        }
    }
}

/// A floor that the new layout reaches only further than `max_ahead` from now refuses the creation
/// with `SEQUENCER_CONFLICT` (and leaves no record behind).
#[test]
fn a_recreation_whose_start_lies_beyond_max_ahead_is_refused() {
    let epoch = 1_600_000_000_000;
    for t in stores() {
        let name = unique("too-far");
        let create = |layout| {
            snowmint_coord::Sequencer::create_with(
                t.store.clone(),
                Arc::new(SystemTime),
                &name,
                layout,
                1,
                Options::default(),
                LeaseOptions::default(),
            )
        };
        let first = create(narrow(epoch, 10, 8, 0)).unwrap();
        mint_into(&first, 1, 1000, &mut Default::default());
        first.destroy().unwrap();
        // An epoch one minute later: the old IDs' values are reached a minute from now.
        let e = create(narrow(epoch + 60_000, 10, 8, 0)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SequencerConflict, "{e}");
        assert!(e.message().contains("max_ahead"), "{e}");
        assert_eq!(t.store.sequencer(&name).unwrap(), None, "no record left");
        // The old epoch is still fine.
        create(narrow(epoch, 10, 8, 0)).unwrap().destroy().unwrap();
    }
}

/// `destroy` removes exactly its own incarnation: a handle (or a store call) naming an older one leaves
/// the newer record live, on every store.
#[test]
fn destroy_by_an_older_incarnation_leaves_the_newer_one() {
    for t in stores() {
        let s = &t.store;
        let name = unique("destroy-newer");
        let old = s.create_sequencer(&name, &config(2), now_ms()).unwrap();
        let handle = snowmint_coord::Sequencer::open(s.clone(), &name).unwrap();
        assert!(s.destroy_sequencer(&name, old.incarnation).unwrap());
        let newer = s.create_sequencer(&name, &config(2), now_ms()).unwrap();
        assert!(
            !s.destroy_sequencer(&name, old.incarnation).unwrap(),
            "{}",
            s.describe()
        );
        handle.destroy().unwrap();
        assert_eq!(
            s.sequencer(&name).unwrap().as_ref(),
            Some(&newer),
            "{}",
            s.describe()
        );
        assert!(s.destroy_sequencer(&name, newer.incarnation).unwrap());
    }
}

/// A claim under a destroyed incarnation is refused (`SEQUENCER_DESTROYED`), and a holder of it can no
/// longer reserve once it was destroyed: the floor the destroy computed is final.
#[test]
fn a_destroyed_incarnation_neither_claims_nor_reserves() {
    for t in stores() {
        let s = &t.store;
        let name = unique("fenced");
        let rec = s.create_sequencer(&name, &config(2), now_ms()).unwrap();
        let req = ClaimRequest {
            sequencer: &name,
            incarnation: rec.incarnation,
            nodes: 2,
            start: 0,
            ttl_ms: 10_000,
            holder: "fenced test",
            now_unix_ms: now_ms(),
        };
        let c = s.claim(&req).unwrap().unwrap();
        assert!(s.destroy_sequencer(&name, rec.incarnation).unwrap());
        let r = Reservation {
            position: 1 << 40,
            layout_fingerprint: snowmint_coord::layout_fingerprint(&Layout::twitter()),
            until_unix_ms: now_ms(),
        };
        assert_eq!(
            s.reserve(&c, &r).unwrap_err().code(),
            ErrorCode::LeaseLost,
            "{}",
            s.describe()
        );
        assert_eq!(
            s.claim(&req).unwrap_err().code(),
            ErrorCode::SequencerDestroyed,
            "{}",
            s.describe()
        );
        let again = s.create_sequencer(&name, &config(2), now_ms()).unwrap();
        assert_eq!(
            s.claim(&req).unwrap_err().code(),
            ErrorCode::SequencerDestroyed,
            "{}: a claim of the old incarnation under the new record",
            s.describe()
        );
        s.release(&c).unwrap();
        s.destroy_sequencer(&name, again.incarnation).unwrap();
    }
}

/// Only `default` is created implicitly: a lease source naming a missing sequencer is
/// `SEQUENCER_NOT_FOUND` with the names that exist and the nearest one; an existing one with another
/// layout is `SEQUENCER_CONFLICT`.
#[test]
fn only_default_is_created_implicitly() {
    for t in stores() {
        let s = &t.store;
        let orders = unique("orders");
        s.create_sequencer(&orders, &config(128), now_ms()).unwrap();
        let typo = orders.replacen("orders", "ordres", 1);
        let open = |name: &str, layout| {
            snowmint_coord::NodeGenerator::lease_from(
                s.clone(),
                name,
                layout,
                Options::default(),
                Arc::new(SystemTime),
                LeaseOptions::default(),
            )
        };
        let e = open(&typo, Layout::twitter()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SequencerNotFound, "{e}");
        assert!(
            e.message().contains(&format!("did you mean {orders:?}")),
            "{e}"
        );
        assert_eq!(s.sequencer(&typo).unwrap(), None, "nothing created");
        let e = open(&orders, Layout::preset("discord").unwrap()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SequencerConflict, "{e}");
        let g = open(&orders, Layout::twitter()).unwrap();
        assert!(g.node_id() < 128, "the stored node count is used");
        drop(g);
        if s.sequencer("default").unwrap().is_none() {
            let g = open("default", Layout::twitter()).unwrap();
            drop(g);
            let rec = s.sequencer("default").unwrap().unwrap();
            s.destroy_sequencer("default", rec.incarnation).unwrap();
        }
        let rec = s.sequencer(&orders).unwrap().unwrap();
        s.destroy_sequencer(&orders, rec.incarnation).unwrap();
        let e = open(&orders, Layout::twitter()).unwrap_err();
        assert_eq!(
            e.code(),
            ErrorCode::SequencerNotFound,
            "a destroyed sequencer is not re-created by a mint: {e}"
        );
    }
}

/// Both clocks of the system plus a jump: a process stopped (SIGSTOP, a suspended VM) and resumed.
#[derive(Debug, Default)]
struct ResumedTime {
    jumped_ns: AtomicU64,
}

impl Time for ResumedTime {
    fn unix_ns(&self) -> u64 {
        SystemTime.unix_ns() + self.jumped_ns.load(Ordering::SeqCst)
    }

    fn monotonic_ns(&self) -> u64 {
        SystemTime.monotonic_ns() + self.jumped_ns.load(Ordering::SeqCst)
    }
}

/// A holder resumed after longer than its TTL reaches its reservation with the claim not renewed in
/// time: the store may have expired it and handed the node ID on. That is `LEASE_LOST`, under `fail`
/// as under `wait` — not `TOO_FAR_AHEAD` "retry shortly (the keeper is extending it)" — and nothing
/// past the ceiling is minted.
#[test]
fn a_holder_resumed_past_its_ttl_is_lease_lost_not_too_far_ahead() {
    for t in stores() {
        for policy in [Policy::Fail, Policy::Wait] {
            let what = format!("{} {policy:?}", t.store.describe());
            let name = unique("resumed");
            let time = Arc::new(ResumedTime::default());
            let options = Options {
                policy,
                ..Options::default()
            };
            let a = acquire(&t.store, &name, time.clone(), 1, options).unwrap();
            a.next_id().unwrap();
            let state = a.generator().state();
            // Stopped for 10 s (TTL 3 s): the clock's tick is now past the reservation.
            time.jumped_ns.store(10_000_000_000, Ordering::SeqCst);
            let t0 = Instant::now();
            let e = a.next_id().unwrap_err();
            assert_eq!(e.code(), ErrorCode::LeaseLost, "{what}: {e}");
            assert!(e.to_string().contains("not renewed in time"), "{what}: {e}");
            assert!(
                t0.elapsed() < Duration::from_secs(1),
                "{what}: {:?}",
                t0.elapsed()
            );
            assert_eq!(a.generator().state(), state, "{what}: nothing minted");
            drop(a);
            let incarnation = t.store.sequencer(&name).unwrap().unwrap().incarnation;
            t.store.destroy_sequencer(&name, incarnation).unwrap();
        }
    }
}
