//! Range sequences (SPEC §4) in one process on the in-memory and embedded stores: two datacenters and
//! many handles minting at once, outages of the global and the local store, exhaustion, the CAS race on
//! one datacenter row, a range write applied but answered "not written", stats, and bad input. The same
//! algorithm on etcd and PostgreSQL, with real processes and real server outages, is in
//! `range_servers.rs`.

mod support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::ErrorCode;
use snowmint_coord::{FileStore, MemoryStore, RangeOptions, RangeSequence, Store};

fn opts(dc_range: u64, process_range: u64) -> RangeOptions {
    RangeOptions {
        dc_range,
        process_range,
        wait: Duration::from_millis(300),
        ..RangeOptions::default()
    }
}

/// Checks values: unique across all lists, strictly increasing within each, below `2^bits`.
fn check(lists: &[Vec<u64>], bits: u32) -> usize {
    let mut seen = HashSet::new();
    for list in lists {
        for w in list.windows(2) {
            assert!(w[0] < w[1], "not increasing: {} then {}", w[0], w[1]);
        }
        for &v in list {
            assert!(v < 1 << bits, "{v} does not fit {bits} bits");
            assert!(seen.insert(v), "value {v} handed out twice");
        }
    }
    seen.len()
}

#[test]
fn two_datacenters_many_handles_and_threads_never_repeat_a_value() {
    let global: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let dir = tempdir("two-dcs");
    let locals: [Arc<dyn Store>; 2] = [
        Arc::new(MemoryStore::new()),
        Arc::new(FileStore::create(&dir).unwrap()),
    ];
    let mut lists = Vec::new();
    std::thread::scope(|s| {
        let mut joins = Vec::new();
        for (i, local) in locals.iter().enumerate() {
            for _ in 0..4 {
                let seq = Arc::new(
                    RangeSequence::open(
                        "orders",
                        ["eu", "us"][i],
                        global.clone(),
                        local.clone(),
                        RangeOptions {
                            // The embedded store's compare-and-set waits for two fsyncs, which take
                            // seconds on a disk busy with other writers: few, large ranges.
                            wait: Duration::from_secs(60),
                            ..opts(20_000, 997)
                        },
                    )
                    .unwrap(),
                );
                // Two threads per handle: each thread's values increase.
                for t in 0..2 {
                    let seq = seq.clone();
                    joins.push(s.spawn(move || {
                        (0..2000)
                            .map(|k| {
                                if (k + t) % 97 == 0 {
                                    let batch = seq.next_ids(5).unwrap();
                                    *batch.last().unwrap()
                                } else {
                                    seq.next_id().unwrap()
                                }
                            })
                            .collect::<Vec<u64>>()
                    }));
                }
            }
        }
        for j in joins {
            lists.push(j.join().unwrap());
        }
    });
    assert_eq!(check(&lists, 31), 16 * 2000);
    let row = RangeSequence::show(&*global, "orders").unwrap().unwrap();
    assert_eq!((row.bits, row.start), (31, 1));
    assert_eq!(row.datacenters.len(), 2);
    assert!(row.next > 16 * 2000, "{row:?}");
    let eu = RangeSequence::show_datacenter(&*locals[0], "orders", "eu")
        .unwrap()
        .unwrap();
    assert!(
        eu.floor > 1 && eu.fetching_until_unix_ms.is_none(),
        "{eu:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn one_handle_hands_out_strictly_increasing_values_across_ranges() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let seq = RangeSequence::open("s", "dc", store.clone(), store.clone(), opts(50, 3)).unwrap();
    let mut values: Vec<u64> = (0..400).map(|_| seq.next_id().unwrap()).collect();
    values.extend(seq.next_ids(333).unwrap());
    assert_eq!(check(&[values.clone()], 31), 733);
    // Nobody else takes values here: no hole, starting at the start value.
    assert_eq!(values.first(), Some(&1));
    assert_eq!(values.last(), Some(&733));
    let stats = seq.stats();
    assert_eq!(stats.values, 733);
    assert!(stats.process_ranges >= 733 / 3, "{stats:?}");
    assert!(stats.dc_ranges >= 733 / 50, "{stats:?}");
}

#[test]
fn a_cas_race_of_many_handles_on_one_datacenter_row_never_overlaps() {
    let global: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let dir = tempdir("race");
    // Each handle has its own FileStore (its own file descriptors), as separate processes would.
    let lists: Vec<Vec<u64>> = std::thread::scope(|s| {
        let joins: Vec<_> = (0..6)
            .map(|_| {
                let global = global.clone();
                let dir = dir.clone();
                s.spawn(move || {
                    let local: Arc<dyn Store> = Arc::new(FileStore::create(&dir).unwrap());
                    // Small ranges so that the handles take about 60 ranges between them (the
                    // embedded store's compare-and-set waits for two fsyncs).
                    let options = RangeOptions {
                        wait: Duration::from_secs(60),
                        ..opts(50, 5)
                    };
                    let seq = RangeSequence::open("race", "dc", global, local, options).unwrap();
                    (0..50).map(|_| seq.next_id().unwrap()).collect::<Vec<_>>()
                })
            })
            .collect();
        joins.into_iter().map(|j| j.join().unwrap()).collect()
    });
    assert_eq!(check(&lists, 31), 6 * 50);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn global_store_down_the_datacenter_serves_from_its_range_then_resumes() {
    let global = Arc::new(MemoryStore::new());
    let local: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let g: Arc<dyn Store> = global.clone();
    let seq = RangeSequence::open("g", "eu", g.clone(), local.clone(), opts(1000, 10)).unwrap();
    let mut values = vec![seq.next_id().unwrap()];
    global.set_available(false);
    // The datacenter row holds the rest of its first range (999 values; the pre-allocation at 50 %
    // fails while the global store is down): minting goes on without error until they are used.
    let t0 = Instant::now();
    let mut err = None;
    for _ in 0..5000 {
        match seq.next_id() {
            Ok(v) => values.push(v),
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let err = err.expect("the datacenter's range runs out");
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    assert!(err.message().contains("memory store"), "{err}");
    assert_eq!(values.len(), 1000, "the whole datacenter range, no more");
    assert!(t0.elapsed() < Duration::from_secs(5));
    global.set_available(true);
    for _ in 0..1500 {
        values.push(seq.next_id().unwrap());
    }
    assert_eq!(check(&[values], 31), 2500);
    assert!(RangeSequence::show(&*g, "g").unwrap().unwrap().next > 2000);
}

#[test]
fn local_store_down_the_process_serves_what_it_holds_then_store_unavailable() {
    let global: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let local = Arc::new(MemoryStore::new());
    let l: Arc<dyn Store> = local.clone();
    let seq = RangeSequence::open("l", "eu", global, l, opts(1000, 100)).unwrap();
    // Past the threshold: the next range is pre-allocated in the background.
    let mut values: Vec<u64> = (0..60).map(|_| seq.next_id().unwrap()).collect();
    let t0 = Instant::now();
    while seq.stats().ready.is_none() {
        assert!(t0.elapsed() < Duration::from_secs(5), "no pre-allocation");
        std::thread::sleep(Duration::from_millis(1));
    }
    local.set_available(false);
    let err = loop {
        match seq.next_id() {
            Ok(v) => values.push(v),
            Err(e) => break e,
        }
    };
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    // The current range and the pre-allocated one: 200 values, then the error.
    assert_eq!(values.len(), 200);
    assert_eq!(
        seq.next_id().unwrap_err().code(),
        ErrorCode::StoreUnavailable
    );
    local.set_available(true);
    values.push(seq.next_id().unwrap());
    assert_eq!(check(&[values], 31), 201);
    let stats = seq.stats();
    assert!(stats.late >= 1 && stats.wait_ns > 0, "{stats:?}");
}

#[test]
fn a_full_width_is_handed_out_once_then_range_exhausted() {
    let global: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let local: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let options = RangeOptions {
        bits: 8,
        start: 10,
        dc_range: 64,
        process_range: 16,
        wait: Duration::from_millis(500),
        ..RangeOptions::default()
    };
    let a = RangeSequence::open("x", "a", global.clone(), local.clone(), options.clone()).unwrap();
    let b = RangeSequence::open("x", "b", global.clone(), local.clone(), options).unwrap();
    let mut lists = vec![Vec::new(), Vec::new()];
    let mut done = [None, None];
    while done.iter().any(Option::is_none) {
        for (i, seq) in [&a, &b].into_iter().enumerate() {
            if done[i].is_none() {
                match seq.next_id() {
                    Ok(v) => lists[i].push(v),
                    Err(e) => done[i] = Some(e),
                }
            }
        }
    }
    for e in done.into_iter().flatten() {
        assert_eq!(e.code(), ErrorCode::RangeExhausted, "{e}");
        assert!(e.message().contains("8 bits"), "{e}");
    }
    assert_eq!(a.next_id().unwrap_err().code(), ErrorCode::RangeExhausted);
    // Values 10..=255, each once, none lost: the two datacenters share the global row.
    assert_eq!(check(&lists, 8), 256 - 10);
}

#[test]
fn a_handle_dropped_after_taking_a_range_leaves_a_hole_never_a_repeat() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let first =
        RangeSequence::open("h", "dc", store.clone(), store.clone(), opts(100, 10)).unwrap();
    let held = first.stats().current;
    assert_eq!(first.next_id().unwrap(), held.0);
    drop(first);
    let second =
        RangeSequence::open("h", "dc", store.clone(), store.clone(), opts(100, 10)).unwrap();
    let v = second.next_id().unwrap();
    assert!(
        v >= held.1,
        "{v} reuses the dropped handle's range {held:?}"
    );
}

#[test]
fn different_width_or_start_on_the_same_name_is_a_conflict() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    RangeSequence::open("c", "dc", store.clone(), store.clone(), opts(100, 10)).unwrap();
    let other = RangeOptions {
        bits: 32,
        ..opts(100, 10)
    };
    let e = RangeSequence::open("c", "dc", store.clone(), store.clone(), other).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SequencerConflict, "{e}");
    assert!(e.message().contains("31 bits"), "{e}");
}

#[test]
fn bad_input_is_invalid_argument_naming_the_field() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let d = RangeOptions::default;
    let cases: Vec<(RangeOptions, &str)> = vec![
        (RangeOptions { bits: 0, ..d() }, "width 0 bits"),
        (RangeOptions { bits: 64, ..d() }, "width 64 bits"),
        (
            RangeOptions {
                start: 1 << 31,
                ..d()
            },
            "start value",
        ),
        (
            RangeOptions {
                bits: 8,
                dc_range: 300,
                process_range: 10,
                ..d()
            },
            "datacenter range 300",
        ),
        (
            RangeOptions {
                dc_range: 100,
                process_range: 101,
                ..d()
            },
            "process range 101",
        ),
        (RangeOptions { dc_range: 0, ..d() }, "datacenter range 0"),
        (
            RangeOptions {
                process_range: 0,
                ..d()
            },
            "process range 0",
        ),
        (
            RangeOptions {
                threshold_percent: 0,
                ..d()
            },
            "threshold 0",
        ),
        (
            RangeOptions {
                threshold_percent: 101,
                ..d()
            },
            "threshold 101",
        ),
    ];
    for (options, words) in cases {
        let e = RangeSequence::open("n", "dc", store.clone(), store.clone(), options.clone())
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{options:?}: {e}");
        assert!(e.message().contains(words), "{words:?} not in: {e}");
    }
    for (name, dc) in [
        ("", "dc"),
        ("a/b", "dc"),
        ("n", ""),
        ("n", "d@c"),
        ("n", "../x"),
    ] {
        let e = RangeSequence::open(name, dc, store.clone(), store.clone(), d()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{name:?} {dc:?}: {e}");
    }
    for (global, local) in [
        ("etcd://", "file:///tmp/x"),
        ("file:///tmp/x", "postgres://host/db"),
        ("redis://h", "file:///tmp/x"),
        ("file://relative", "file:///tmp/x"),
    ] {
        let e = RangeSequence::open_urls("n", "dc", global, local, d()).unwrap_err();
        assert_eq!(
            e.code(),
            ErrorCode::InvalidArgument,
            "{global} {local}: {e}"
        );
    }
    let seq = RangeSequence::open("n", "dc", store.clone(), store.clone(), d()).unwrap();
    let e = seq
        .next_ids(snowmint_coord::range::MAX_BATCH + 1)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(seq.next_ids(0).unwrap().is_empty());
    // A row that is not a range row: STORE_UNAVAILABLE naming the row, never a silent reset.
    store.swap_row("bad", None, "hello").unwrap();
    let e = RangeSequence::open("bad", "dc", store.clone(), store.clone(), d()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{e}");
    assert!(e.message().contains("row bad"), "{e}");
}

#[test]
fn every_store_keeps_the_row_contract() {
    let dir = tempdir("rows");
    let stores: Vec<Arc<dyn Store>> = vec![
        Arc::new(MemoryStore::new()),
        Arc::new(FileStore::create(&dir).unwrap()),
    ];
    for store in stores {
        support::row_contract(&*store);
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("snowmint-range-{tag}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    dir
}

/// A memory store with faults: every row call takes `delay_ms` (a store behind a slow or partitioned
/// link), and the row writes `refuse_applied` picks (given the new text) are applied but answered "not
/// written" (a write re-sent after its answer was lost, which finds the row changed again since).
#[derive(Debug, Default)]
struct Faulty {
    inner: MemoryStore,
    delay_ms: std::sync::atomic::AtomicU64,
    refuse_applied: Option<fn(&str) -> bool>,
    refused: std::sync::atomic::AtomicU64,
}

impl Faulty {
    fn pause(&self) {
        let ms = self.delay_ms.load(std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(ms));
    }
}

impl Store for Faulty {
    fn describe(&self) -> String {
        "faulty memory store".into()
    }
    fn create_sequencer(
        &self,
        n: &str,
        c: &snowmint_coord::SequencerConfig,
        t: u64,
    ) -> snowmint_coord::Result<snowmint_coord::SequencerRecord> {
        self.inner.create_sequencer(n, c, t)
    }
    fn sequencer(
        &self,
        n: &str,
    ) -> snowmint_coord::Result<Option<snowmint_coord::SequencerRecord>> {
        self.inner.sequencer(n)
    }
    fn sequencers(&self) -> snowmint_coord::Result<Vec<snowmint_coord::SequencerRecord>> {
        self.inner.sequencers()
    }
    fn destroy_sequencer(&self, n: &str, incarnation: u64) -> snowmint_coord::Result<bool> {
        self.inner.destroy_sequencer(n, incarnation)
    }
    fn claim(
        &self,
        r: &snowmint_coord::ClaimRequest<'_>,
    ) -> snowmint_coord::Result<Option<snowmint_coord::Claim>> {
        self.inner.claim(r)
    }
    fn renew(
        &self,
        c: &snowmint_coord::Claim,
        ttl: u64,
        now: u64,
    ) -> snowmint_coord::Result<snowmint_coord::Claim> {
        self.inner.renew(c, ttl, now)
    }
    fn release(&self, c: &snowmint_coord::Claim) -> snowmint_coord::Result<()> {
        self.inner.release(c)
    }
    fn reservation(
        &self,
        s: &str,
        n: u64,
    ) -> snowmint_coord::Result<Option<snowmint_coord::Reservation>> {
        self.inner.reservation(s, n)
    }
    fn reserve(
        &self,
        c: &snowmint_coord::Claim,
        r: &snowmint_coord::Reservation,
    ) -> snowmint_coord::Result<()> {
        self.inner.reserve(c, r)
    }
    fn lower_reservation(
        &self,
        c: &snowmint_coord::Claim,
        r: &snowmint_coord::Reservation,
    ) -> snowmint_coord::Result<()> {
        self.inner.lower_reservation(c, r)
    }
    fn holders(&self, s: &str, now: u64) -> snowmint_coord::Result<Vec<snowmint_coord::NodeState>> {
        self.inner.holders(s, now)
    }
    fn row(&self, key: &str) -> snowmint_coord::Result<Option<String>> {
        self.pause();
        self.inner.row(key)
    }
    fn swap_row(&self, key: &str, old: Option<&str>, new: &str) -> snowmint_coord::Result<bool> {
        self.pause();
        let written = self.inner.swap_row(key, old, new)?;
        if written && self.refuse_applied.is_some_and(|pick| pick(new)) {
            self.refused
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return Ok(false);
        }
        Ok(written)
    }
}

/// Every write that adds a range to the datacenter row is applied but answered "not written": the
/// allocator tries to add the range again, which must not give it out twice.
#[test]
fn a_range_added_but_answered_not_written_is_not_added_again() {
    let global: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let local = Arc::new(Faulty {
        // The write that puts a range in and clears the ticket.
        refuse_applied: Some(|new| new.contains("fetch=- ") && !new.contains("ranges=- ")),
        ..Faulty::default()
    });
    let options = RangeOptions {
        threshold_percent: 100,
        ..opts(10, 2)
    };
    let seq = RangeSequence::open("n", "dc", global, local.clone(), options).unwrap();
    let values = seq.next_ids(40).unwrap();
    assert!(local.refused.load(std::sync::atomic::Ordering::SeqCst) > 0);
    assert_eq!(check(&[values], 31), 40);
}

#[test]
fn a_slow_global_store_never_delays_process_ranges_the_datacenter_holds() {
    let global = Arc::new(Faulty::default());
    let g: Arc<dyn Store> = global.clone();
    let local: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let options = RangeOptions {
        wait: Duration::from_millis(500),
        ..opts(10_000, 50)
    };
    let seq = RangeSequence::open("slow", "eu", g, local, options).unwrap();
    // Every global call now takes 2 s (each datacenter pre-allocation at least 4 s), while the process
    // takes 160 ranges of 50 from the 10 000 its datacenter row holds; past 5 000 the row is below the
    // threshold and the datacenter pre-allocates (slowly): no process range may wait for it.
    global
        .delay_ms
        .store(2000, std::sync::atomic::Ordering::SeqCst);
    let t0 = Instant::now();
    let mut values = Vec::new();
    for _ in 0..8000 {
        values.push(seq.next_id().unwrap());
        std::thread::sleep(Duration::from_micros(100));
    }
    let stats = seq.stats();
    assert_eq!(check(&[values], 31), 8000);
    assert!(stats.process_ranges >= 160, "{stats:?}");
    assert!(
        stats.wait_ns < 200_000_000,
        "waited {} ms behind the slow global store ({stats:?}, {:?})",
        stats.wait_ns / 1_000_000,
        t0.elapsed()
    );
    global
        .delay_ms
        .store(0, std::sync::atomic::Ordering::SeqCst);
}

/// The files (not folders) under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(files_under(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// Issue #39: a range sequence opened by URL on an embedded store that does not exist fails with
/// `STORE_NOT_FOUND` and writes nothing anywhere (as a lease or a sequencer does): the global store
/// missing, the local one missing, both; only the explicit create commands create a store.
#[test]
fn a_missing_embedded_store_is_store_not_found_and_nothing_is_written() {
    struct Removed(std::path::PathBuf);
    impl Drop for Removed {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }
    let root = tempdir("missing-store");
    let _removed = Removed(root.clone());
    let existing = root.join("existing");
    std::fs::create_dir_all(&existing).unwrap();
    let (missing_g, missing_l) = (root.join("missing-global"), root.join("missing-local"));
    let url = |p: &std::path::Path| format!("file://{}", p.display());
    let cases = [
        (url(&missing_g), url(&missing_g)),
        (url(&missing_g), url(&existing)),
        (url(&existing), url(&missing_l)),
        (url(&missing_g), url(&missing_l)),
    ];
    for (global, local) in &cases {
        let e = RangeSequence::open_urls("orders", "eu", global, local, opts(100, 10))
            .expect_err("a missing embedded store must not open");
        assert_eq!(
            e.code(),
            ErrorCode::StoreNotFound,
            "{global} / {local}: {e}"
        );
        assert!(
            !missing_g.exists() && !missing_l.exists(),
            "{global} / {local}: a store was created"
        );
        // Opening the existing store makes its (empty) folders; no row, claim or record is written.
        let written = files_under(&existing);
        assert!(
            written.is_empty(),
            "{global} / {local}: wrote {written:?} into the existing store"
        );
        let (g, _) = snowmint_coord::range::open_pair(global, local)
            .map(|(g, l)| (Some(g), l))
            .unwrap_or_else(|e| {
                assert_eq!(
                    e.code(),
                    ErrorCode::StoreNotFound,
                    "open_pair {global} / {local}: {e}"
                );
                (None, Arc::new(MemoryStore::new()))
            });
        if let Some(g) = g {
            // The global store is connected on first use: reading it is STORE_NOT_FOUND then.
            let e = RangeSequence::show(&*g, "orders").expect_err("a missing global store");
            assert_eq!(e.code(), ErrorCode::StoreNotFound, "show {global}: {e}");
        }
        assert!(
            !missing_g.exists() && !missing_l.exists(),
            "open_pair {global} / {local}: a store was created"
        );
    }
}
