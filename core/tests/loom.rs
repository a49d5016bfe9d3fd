//! Model check of the lock-free generator: run with
//! `RUSTFLAGS="--cfg loom" cargo test -p snowmint --test loom --release`.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use snowmint::{Layout, LayoutConfig, Mint, Options, SharedGenerator};

const NOW: u64 = 1_700_000_000_000 * 1_000_000;

fn check(threads: usize, per_thread: usize, sequence_bits: u32) {
    loom::model(move || {
        // A tiny sequence field makes borrowing the next tick part of the interleavings.
        let layout = Layout::new(LayoutConfig {
            sequence_bits,
            ..LayoutConfig::default()
        })
        .unwrap();
        let gen = Arc::new(SharedGenerator::new(layout, 3, Options::default()).unwrap());
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let gen = gen.clone();
                thread::spawn(move || {
                    let mut ids = Vec::new();
                    for i in 0..per_thread {
                        match gen.next_id_at(NOW + (t * 10 + i) as u64).unwrap() {
                            Mint::Ready(id) => ids.push(id),
                            Mint::Wait(_) => unreachable!("within max_ahead"),
                        }
                    }
                    assert!(ids.windows(2).all(|w| w[0] < w[1]), "per-thread order");
                    ids
                })
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "duplicate ID");
    });
}

#[test]
fn two_threads_two_ids_each() {
    check(2, 2, 1);
}

#[test]
fn three_threads_one_id_each() {
    check(3, 1, 0);
}

#[test]
fn two_threads_three_ids_each_borrowing_ticks() {
    check(2, 3, 0);
}

/// `strict` under threads: a monotonic clock (each reading is the next tick, in the order the readings
/// happen) never yields CLOCK_MOVED_BACKWARDS, in any interleaving of the readings, loads and
/// compare-and-swaps — even where one thread reads the clock, another reads a newer tick and mints, and
/// only then the first loads the state.
#[test]
fn strict_never_reports_a_step_back_of_a_monotonic_clock() {
    use loom::sync::atomic::{AtomicU64, Ordering};
    loom::model(|| {
        let layout = Layout::new(LayoutConfig {
            sequence_bits: 1,
            ..LayoutConfig::default()
        })
        .unwrap();
        let opts = Options {
            policy: snowmint::Policy::Strict,
            ..Options::default()
        };
        let gen = Arc::new(SharedGenerator::new(layout, 3, opts).unwrap());
        let ticks = Arc::new(AtomicU64::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (gen, ticks) = (gen.clone(), ticks.clone());
                thread::spawn(move || {
                    let clock = move || -> snowmint::Result<u64> {
                        Ok(NOW + ticks.fetch_add(1, Ordering::SeqCst) * 1_000_000)
                    };
                    gen.next_id_with(&clock, |_| loom::thread::yield_now())
                        .expect("no backwards step: the clock is monotonic")
                })
            })
            .collect();
        let ids: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_ne!(ids[0], ids[1]);
    });
}

/// The window hand-off, at the smallest size that covers it: each thread takes windows of the state
/// word's positions with one compare-and-swap, hands them out from its own cursor, and closes them.
/// Thread 1 uses its window of one up, takes one of two in the same tick, and closes it holding one
/// position at the end: given back or skipped, racing thread 0's swaps. Thread 0 closes its window
/// after its first ID (`close_midway`), so its second starts a new window of one. Unique IDs, each
/// thread's increasing, `minted` exactly the IDs handed out, and the state word past every ID.
fn check_windows(per_thread: usize) {
    loom::model(move || {
        let layout = Layout::new(LayoutConfig {
            sequence_bits: 4,
            ..LayoutConfig::default()
        })
        .unwrap();
        let gen = Arc::new(SharedGenerator::new(layout, 3, Options::default()).unwrap());
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let gen = gen.clone();
                let close_midway = t == 0;
                thread::spawn(move || {
                    let mut w = snowmint::Window::EMPTY;
                    let mut ids = Vec::new();
                    for i in 0..per_thread {
                        ids.push(gen.next_id_in(&mut w, &|| Ok(NOW), |_| {}).unwrap());
                        if close_midway && i == 0 {
                            gen.close_window(&mut w);
                        }
                    }
                    gen.close_window(&mut w);
                    assert!(ids.windows(2).all(|w| w[0] < w[1]), "per-thread order");
                    ids
                })
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "duplicate ID");
        assert_eq!(gen.stats().minted, n as u64, "minted: the IDs handed out");
        let last = layout.decode(*all.last().unwrap()).unwrap();
        assert!(gen.state() > (last.timestamp_ticks << 4 | last.sequence));
    });
}

#[test]
fn windows_two_threads_two_ids_each_one_closing_midway() {
    check_windows(2);
}
