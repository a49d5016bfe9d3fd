//! Concurrency inside one process, with real threads (a randomized stress test, not a model checker):
//! a lease's keeper thread, four minting threads (single IDs, batches, and now and then a batch past
//! the keeper's reservation step, so that the ceiling and the keeper's extension race), and `release`
//! called while they mint. Rounds follow one another on a sequencer of one node ID, so each new lease
//! takes the node ID its predecessor released and must start after every ID the predecessor minted.
//! Checked: no ID twice across all threads and rounds, each thread's IDs strictly increasing within a
//! round. Bounded: 12 rounds of at most 150 ms and 20,000 IDs per thread.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, Options, Policy};
use snowmint_coord::{
    layout_text, Lease, LeaseOptions, MemoryStore, SequencerConfig, Store, SystemTime, Time,
};

/// SplitMix64, one per thread, seeded from the round.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n.max(1)
    }
}

#[test]
fn minting_threads_the_keeper_and_release_race_without_a_duplicate() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let time: Arc<dyn Time> = Arc::new(SystemTime);
    // Sonyflake: 256 IDs per 10 ms tick, so the threads mint ahead of the clock and every lease's
    // start depends on its predecessor's reservation, not on time having passed.
    let layout = Layout::preset("sonyflake").unwrap();
    let config = SequencerConfig {
        layout: layout_text(&layout),
        nodes: 1,
    };
    store
        .create_sequencer("race", &config, time.unix_ns() / 1_000_000)
        .unwrap();
    let mut all: HashSet<u64> = HashSet::new();
    let mut minted_rounds = 0;
    for round in 0..12u64 {
        let record = store.sequencer("race").unwrap().unwrap();
        let lease = Arc::new(
            Lease::acquire(
                store.clone(),
                time.clone(),
                record,
                layout,
                Options {
                    policy: if round % 2 == 0 {
                        Policy::Fail
                    } else {
                        Policy::Wait
                    },
                    ..Options::default()
                },
                LeaseOptions {
                    ttl: Duration::from_millis(600),
                    // A short reservation step: 200 ms of IDs (5,120).
                    reserve_ahead: Duration::from_millis(200),
                    ..LeaseOptions::default()
                },
            )
            .expect("the node ID its predecessor released"),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let (lease, stop) = (lease.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut rng = Rng(round * 16 + t);
                    let mut ids = Vec::new();
                    let t0 = Instant::now();
                    while !stop.load(Ordering::Relaxed)
                        && t0.elapsed() < Duration::from_millis(150)
                        && ids.len() < 20_000
                    {
                        let n = match rng.below(100) {
                            0 => 6_000 + rng.below(4_000), // past the reservation step
                            1..=30 => 1,
                            _ => 1 + rng.below(100),
                        };
                        let mut out = vec![0u64; n as usize];
                        let r = if n == 1 {
                            lease.next_id().map(|id| out[0] = id)
                        } else {
                            lease.next_ids(&mut out)
                        };
                        match r {
                            Ok(()) => ids.extend_from_slice(&out),
                            Err(e) if e.code() == ErrorCode::TooFarAhead => {
                                std::thread::sleep(Duration::from_millis(1))
                            }
                            // Released under it: this thread's lease is over.
                            Err(_) => break,
                        }
                    }
                    ids
                })
            })
            .collect();
        let mut rng = Rng(round);
        std::thread::sleep(Duration::from_millis(20 + rng.below(100)));
        lease.release().expect("release");
        stop.store(true, Ordering::Relaxed);
        for (t, th) in threads.into_iter().enumerate() {
            let ids = th.join().expect("a minting thread");
            for w in ids.windows(2) {
                assert!(
                    w[0] < w[1],
                    "round {round}, thread {t}: {} after {}",
                    w[1],
                    w[0]
                );
            }
            for id in ids {
                assert!(
                    all.insert(id),
                    "round {round}, thread {t}: ID {id} minted twice"
                );
            }
        }
        minted_rounds += 1;
    }
    assert_eq!(minted_rounds, 12);
    assert!(all.len() > 5_000, "only {} IDs were minted", all.len());
}
