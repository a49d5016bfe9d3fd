//! `stats()` on every generator: exact counts after scripted clocks (a burst that borrows ticks, a clock
//! that steps back, waits), the same for the plain and the shared generator; the shared generator's
//! derived `minted` under threads, restores and state files.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use snowmint::{
    Error, Generator, Layout, LayoutConfig, Mint, Options, Policy, SharedGenerator, Stats,
};

const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000_000 * MS;

/// The same script for both generators (`&mut` for the plain one, `&` for the shared one).
macro_rules! script {
    ($gen:expr) => {{
        let gen = $gen;
        // One ID at T0, then the rest of T0's 4096 in one batch.
        assert!(matches!(gen.next_id_at(T0).unwrap(), Mint::Ready(_)));
        let mut buf = vec![0u64; 4095];
        assert_eq!(gen.next_ids_at(T0, &mut buf).unwrap(), Mint::Ready(()));
        assert_eq!(
            gen.stats(),
            Stats { minted: 4096, batches: 1, ..Stats::default() }
        );
        // Tick T0 is used up: the next ID borrows T0 + 1 ms, the clock still at T0.
        gen.next_id_at(T0).unwrap();
        assert_eq!(gen.stats().borrowed_ticks, 1);
        // Still in the borrowed tick: nothing new is borrowed.
        gen.next_id_at(T0).unwrap();
        assert_eq!(gen.stats().borrowed_ticks, 1);
        // A batch crossing two more ticks ahead of the clock: 4094 fill T0+1, 4096 fill T0+2, 1 in T0+3.
        let mut big = vec![0u64; 4094 + 4096 + 1];
        gen.next_ids_at(T0, &mut big).unwrap();
        assert_eq!(gen.stats().borrowed_ticks, 3);
        // The clock steps back 5 ms: one regression, however many readings follow below T0.
        gen.next_id_at(T0 - 5 * MS).unwrap();
        gen.next_id_at(T0 - 5 * MS).unwrap();
        gen.next_id_at(T0 - 4 * MS).unwrap();
        assert_eq!(gen.stats().regressions, 1);
        // Back to T0 + 3 ms (the tick of the last ID): no borrowing, no regression; then the clock passes
        // the generator: an ID at the clock's tick, nothing borrowed.
        gen.next_id_at(T0 + 3 * MS).unwrap();
        gen.next_id_at(T0 + 10 * MS).unwrap();
        // Within one tick, a reading a little earlier is no regression (no ID changes).
        gen.next_id_at(T0 + 10 * MS + 500_000).unwrap();
        gen.next_id_at(T0 + 10 * MS + 100).unwrap();
        // A second step back, by one tick.
        gen.next_id_at(T0 + 9 * MS).unwrap();
        // Empty batches are no batches.
        gen.next_ids_at(T0 + 20 * MS, &mut []).unwrap();
        assert_eq!(
            gen.stats(),
            Stats {
                minted: 4096 + 2 + 8191 + 3 + 2 + 2 + 1,
                batches: 2,
                borrowed_ticks: 3,
                waits: 0,
                wait_ns: 0,
                regressions: 2,
            }
        );
    }};
}

#[test]
fn plain_and_shared_count_the_same_script() {
    let mut plain = Generator::new(Layout::twitter(), 7, Options::default()).unwrap();
    script!(&mut plain);
    let shared = SharedGenerator::new(Layout::twitter(), 7, Options::default()).unwrap();
    script!(&shared);
    assert_eq!(plain.stats(), shared.stats());
    assert_eq!(plain.state(), shared.state());
}

/// Tick 1 ms, 2 IDs a tick, at most 2 ticks ahead of the clock.
fn tiny(policy: Policy) -> Options {
    Options {
        policy,
        max_ahead_ns: 2 * MS,
        ..Options::default()
    }
}

/// Ticks of 1 ms with `2^sequence_bits` IDs each.
fn small_layout(sequence_bits: u32) -> Layout {
    Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits: 10,
        sequence_bits,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .unwrap()
}

macro_rules! waits {
    ($gen:expr) => {{
        let gen = $gen;
        // A clock that stands still until the generator sleeps, then moves on by the sleep.
        let now = Cell::new(T0 + 250_000);
        let clock = || Ok(now.get());
        let sleep = |ns: u64| now.set(now.get() + ns);
        // Ticks T0, T0+1, T0+2 hold 6 IDs; the 7th must wait until T0+1 ms (750 µs from T0 + 250 µs).
        for _ in 0..6 {
            gen.next_id_with(&clock, sleep).unwrap();
        }
        assert_eq!(gen.stats().waits, 0);
        gen.next_id_with(&clock, sleep).unwrap();
        let s = gen.stats();
        assert_eq!((s.waits, s.wait_ns, s.minted, s.borrowed_ticks), (1, 750_000, 7, 3));
        // A batch of 5 at T0 + 1 ms: positions in T0+3 ms (1 left), T0+4, T0+5: ready at T0 + 3 ms.
        let mut buf = [0u64; 5];
        gen.next_ids_with(&clock, sleep, &mut buf).unwrap();
        let s = gen.stats();
        assert_eq!((s.waits, s.wait_ns, s.minted, s.batches), (2, 750_000 + 2 * MS, 12, 1));
        // Answered to a caller who sleeps itself (or falls back to the `*_with` methods): the
        // generator took no sleep.
        let at = now.get();
        assert_eq!(gen.next_id_at(at).unwrap(), Mint::Wait(MS));
        assert!(matches!(gen.next_ids_iter_at(at, 1).unwrap(), Mint::Wait(ns) if ns == MS));
        let s = gen.stats();
        assert_eq!((s.waits, s.wait_ns, s.minted, s.batches), (2, 750_000 + 2 * MS, 12, 1));
        assert_eq!(s.borrowed_ticks, 5);
        assert_eq!(s.regressions, 0);
        s
    }};
}

#[test]
fn waits_count_each_sleep_and_its_length() {
    let mut plain = Generator::new(small_layout(1), 1, tiny(Policy::Wait)).unwrap();
    let a = waits!(&mut plain);
    let shared = SharedGenerator::new(small_layout(1), 1, tiny(Policy::Wait)).unwrap();
    let b = waits!(&shared);
    assert_eq!(a, b);
}

#[test]
fn fail_and_strict_count_regressions_and_no_waits() {
    let gen = SharedGenerator::new(small_layout(1), 1, tiny(Policy::Fail)).unwrap();
    for _ in 0..6 {
        gen.next_id_at(T0).unwrap();
    }
    assert!(matches!(gen.next_id_at(T0), Err(Error::TooFarAhead { .. })));
    assert_eq!(
        gen.stats(),
        Stats {
            minted: 6,
            borrowed_ticks: 2,
            ..Stats::default()
        }
    );

    let mut strict = Generator::new(
        Layout::twitter(),
        1,
        Options {
            policy: Policy::Strict,
            ..Options::default()
        },
    )
    .unwrap();
    strict.next_id_at(T0).unwrap();
    assert!(matches!(
        strict.next_id_at(T0 - MS),
        Err(Error::ClockMovedBackwards { .. })
    ));
    assert_eq!(
        strict.stats(),
        Stats {
            minted: 1,
            regressions: 1,
            ..Stats::default()
        }
    );
}

#[test]
fn batch_iterators_count_as_batches() {
    let gen = SharedGenerator::new(Layout::twitter(), 1, Options::default()).unwrap();
    let Mint::Ready(ids) = gen.next_ids_iter_at(T0, 10).unwrap() else {
        panic!()
    };
    assert_eq!(ids.count(), 10);
    assert!(matches!(gen.next_ids_iter_at(T0, 0).unwrap(), Mint::Ready(i) if i.len() == 0));
    let ids = gen.next_ids_iter_with(&|| Ok(T0), |_| (), 5).unwrap();
    assert_eq!(ids.count(), 5);
    assert_eq!(
        gen.stats(),
        Stats {
            minted: 15,
            batches: 2,
            ..Stats::default()
        }
    );
}

#[test]
fn restore_is_no_minting() {
    let gen = SharedGenerator::new(Layout::twitter(), 1, Options::default()).unwrap();
    gen.next_id_at(T0).unwrap();
    gen.restore(gen.state() + 1_000_000);
    gen.restore(5); // backwards: nothing
    gen.next_id_at(T0).unwrap();
    assert_eq!(gen.stats().minted, 2);
    // A word that starts far along counts from there.
    let word = AtomicU64::new(123 << 22);
    let gen = SharedGenerator::with_state(Layout::twitter(), 1, Options::default(), word).unwrap();
    assert_eq!(gen.stats().minted, 0);
    gen.next_id_at(T0).unwrap();
    assert_eq!(gen.stats().minted, 1);
}

/// Another thread's open window: `stats()` never counts its positions not handed out (not even for a
/// moment, which the never-falling `minted` would keep for good), counts its IDs once it closes
/// (given back for a batch, or skipped when the thread exits), and is exact then.
fn open_window_in_another_thread<S: snowmint::StateWord + Sync>(gen: &SharedGenerator<S>) {
    let clock = || Ok(T0);
    let step = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        let holder = s.spawn(|| {
            // A window of one position, used up; then one of two in the same tick, one handed out.
            gen.next_id_with(&clock, |_| ()).unwrap();
            gen.next_id_with(&clock, |_| ()).unwrap();
            step.wait(); // the window still holds a position
            step.wait();
            // A batch closes the window first: its rest goes back and the batch takes it.
            gen.next_ids_with(&clock, |_| (), &mut [0u64; 1]).unwrap();
            step.wait();
            step.wait();
            gen.next_id_with(&clock, |_| ()).unwrap();
            // The thread exits with that window open.
        });
        // Read while the holder waits; checked after it is joined (a failed check must not leave
        // it waiting).
        step.wait();
        let open = gen.stats().minted;
        step.wait();
        step.wait();
        let closed = gen.stats().minted;
        step.wait();
        // An explicit join waits for the thread's exit, thread-local destructors included (the
        // scope's own wait does not).
        holder.join().unwrap();
        assert!(open <= 2, "2 IDs handed out, {open} counted");
        assert_eq!(closed, 3, "the window closed, the batch minted");
    });
    assert_eq!(
        gen.stats().minted,
        4,
        "the thread exited: its window closed"
    );
}

#[test]
fn another_threads_open_window_is_not_counted_until_it_closes() {
    let opts = Options::default();
    // A word of the generator's own (`minted` derived from it), and one shared (counted per request).
    open_window_in_another_thread(&SharedGenerator::new(small_layout(4), 1, opts).unwrap());
    let word = std::sync::Arc::new(AtomicU64::new(0));
    open_window_in_another_thread(
        &SharedGenerator::with_state(small_layout(4), 1, opts, word).unwrap(),
    );
}

#[test]
fn threads_count_every_id_and_readers_never_see_minted_fall() {
    // Ticks of 1 ms with 4 IDs each: the threads move to new ticks (skips) and borrow constantly.
    let layout = small_layout(2);
    let gen = SharedGenerator::new(
        layout,
        3,
        Options {
            policy: Policy::Fail,
            max_ahead_ns: 3_600_000 * MS,
            ..Options::default()
        },
    )
    .unwrap();
    const THREADS: u64 = 3;
    // Miri's bounded run (`make test`) takes a smaller count; its full sweep (`make test-long`, which
    // sets SNOWMINT_MIRI_FULL) and native runs take the whole one.
    let each: u64 = if cfg!(miri) && std::env::var_os("SNOWMINT_MIRI_FULL").is_none() {
        1_000
    } else {
        20_000
    };
    let done = AtomicBool::new(false);
    // The reader's reads: each worker waits midway (its window open) until there was one, so a read
    // happens while they mint however the threads are scheduled (bounded: a reader that cannot read
    // fails the check below instead of hanging the test).
    let reads = AtomicU64::new(0);
    // A scripted clock shared by the threads: it moves 1 ms every 3 readings.
    let readings = AtomicU64::new(0);
    let clock = || Ok(T0 + readings.fetch_add(1, Ordering::Relaxed) / 3 * MS);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut last = 0;
            while !done.load(Ordering::Relaxed) {
                let m = gen.stats().minted;
                assert!(m >= last, "minted fell from {last} to {m}");
                assert!(m <= THREADS * each);
                last = m;
                reads.fetch_add(1, Ordering::Relaxed);
            }
        });
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (gen, clock, reads) = (&gen, &clock, &reads);
                s.spawn(move || {
                    for i in 0..each {
                        if i == each / 2 {
                            let since = std::time::Instant::now();
                            while reads.load(Ordering::Relaxed) == 0
                                && since.elapsed() < std::time::Duration::from_secs(10)
                            {
                                std::thread::yield_now();
                            }
                        }
                        if (i + t) % 7 == 0 {
                            let mut b = [0u64; 1];
                            gen.next_ids_with(clock, |_| (), &mut b).unwrap();
                        } else {
                            gen.next_id_with(clock, |_| ()).unwrap();
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        reader.join().unwrap();
        assert!(
            reads.load(Ordering::Relaxed) > 0,
            "no read while the workers minted"
        );
    });
    let s = gen.stats();
    assert_eq!(s.minted, THREADS * each);
    let batches: u64 = (0..THREADS)
        .map(|t| (0..each).filter(|i| (i + t) % 7 == 0).count() as u64)
        .sum();
    assert_eq!(s.batches, batches);
    // Every tick from T0's to the last ID's was entered once: at the clock or borrowed ahead of it.
    let ticks_entered = (gen.state() - 1) / 4 - (T0 / MS - layout.epoch_ms()) + 1;
    assert!(s.borrowed_ticks < ticks_entered);
    assert_eq!(
        s.regressions, 0,
        "a clock that never goes back: no regression from stale readings"
    );
}

#[cfg(unix)]
#[test]
fn state_file_counts_per_process_generator() {
    let dir = std::env::temp_dir().join(format!("snowmint-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("state");
    let _ = std::fs::remove_file(&path);
    let a = SharedGenerator::open_file(&path, Layout::twitter(), 3, Options::default()).unwrap();
    let b = SharedGenerator::open_file(&path, Layout::twitter(), 3, Options::default()).unwrap();
    for _ in 0..5 {
        a.next_id_at(T0).unwrap();
    }
    for _ in 0..4097 {
        b.next_id_at(T0).unwrap();
    }
    let mut buf = [0u64; 3];
    a.next_ids_at(T0, &mut buf).unwrap();
    assert_eq!(
        a.stats(),
        Stats {
            minted: 8,
            batches: 1,
            ..Stats::default()
        }
    );
    // b entered T0 + 1 ms ahead of the clock; a then minted inside it.
    assert_eq!(
        b.stats(),
        Stats {
            minted: 4097,
            borrowed_ticks: 1,
            ..Stats::default()
        }
    );
    drop((a, b));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merged_adds_field_by_field() {
    let a = Stats {
        minted: 1,
        batches: 2,
        borrowed_ticks: 3,
        waits: 4,
        wait_ns: 5,
        regressions: 6,
    };
    assert_eq!(
        a.merged(a),
        Stats {
            minted: 2,
            batches: 4,
            borrowed_ticks: 6,
            waits: 8,
            wait_ns: 10,
            regressions: 12
        }
    );
}
