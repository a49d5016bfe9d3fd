//! Two threads share one lock-free generator on the real system clock: 10^7 IDs, none repeated.

use snowmint::{Layout, Options, SharedGenerator};

#[test]
fn two_threads_ten_million_ids_no_duplicate() {
    // Under Miri (which also checks the atomics' interleavings) a smaller run.
    const PER_THREAD: usize = if cfg!(miri) { 500 } else { 5_000_000 };
    let gen = SharedGenerator::new(Layout::twitter(), 1, Options::default()).unwrap();
    let mut all: Vec<u64> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut ids = Vec::with_capacity(PER_THREAD);
                    for _ in 0..PER_THREAD {
                        ids.push(gen.next_id().unwrap());
                    }
                    // Each thread sees its own IDs strictly increase.
                    assert!(ids.windows(2).all(|w| w[0] < w[1]));
                    ids
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert_eq!(all.len(), 2 * PER_THREAD);
    all.sort_unstable();
    let before = all.len();
    all.dedup();
    assert_eq!(all.len(), before, "duplicate IDs");
}
