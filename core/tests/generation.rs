//! The generation rule, case by case: exact IDs, exact waits, every policy.

use snowmint::{
    Error, ErrorCode, Generator, Layout, LayoutConfig, Mint, Options, Order, Policy,
    SharedGenerator,
};

const MS: u64 = 1_000_000;
const T0_MS: u64 = 1_700_000_000_000;
const TWITTER_EPOCH_MS: u64 = 1_288_834_974_657;

fn twitter_id(ms: u64, node: u64, seq: u64) -> u64 {
    ((ms - TWITTER_EPOCH_MS) << 22) | (node << 12) | seq
}

fn gen(policy: Policy, max_ahead_ms: u64) -> Generator {
    let options = Options {
        policy,
        max_ahead_ns: max_ahead_ms * MS,
        random_start_seed: None,
    };
    Generator::new(Layout::twitter(), 7, options).unwrap()
}

fn ready(m: Mint<u64>) -> u64 {
    match m {
        Mint::Ready(id) => id,
        Mint::Wait(ns) => panic!("expected an ID, was told to wait {ns} ns"),
    }
}

#[test]
fn consecutive_ids_in_one_tick_count_the_sequence() {
    let mut g = gen(Policy::Wait, 15_000);
    for seq in 0..5 {
        assert_eq!(
            ready(g.next_id_at(T0_MS * MS + 123).unwrap()),
            twitter_id(T0_MS, 7, seq)
        );
    }
    // A new tick starts the sequence again.
    assert_eq!(
        ready(g.next_id_at((T0_MS + 1) * MS).unwrap()),
        twitter_id(T0_MS + 1, 7, 0)
    );
}

#[test]
fn a_used_up_tick_borrows_the_next() {
    let mut g = gen(Policy::Fail, 15_000);
    let now = T0_MS * MS;
    for seq in 0..4096 {
        assert_eq!(ready(g.next_id_at(now).unwrap()), twitter_id(T0_MS, 7, seq));
    }
    assert_eq!(
        ready(g.next_id_at(now).unwrap()),
        twitter_id(T0_MS + 1, 7, 0)
    );
    // When the clock reaches the borrowed tick, minting continues after what was borrowed.
    assert_eq!(
        ready(g.next_id_at(now + MS).unwrap()),
        twitter_id(T0_MS + 1, 7, 1)
    );
}

#[test]
fn clock_regression_continues_from_logical_time() {
    for back_ms in [1, 1_000, 3_600_000] {
        let mut g = gen(Policy::Wait, 15_000);
        let a = ready(g.next_id_at(T0_MS * MS).unwrap());
        // Within max_ahead: the ID after `a`, not an ID of the earlier instant.
        let b = g.next_id_at((T0_MS - back_ms) * MS).unwrap();
        if back_ms < 15_000 {
            assert_eq!(ready(b), a + 1, "back {back_ms} ms");
        } else {
            // An hour back is past max_ahead: wait until the clock is within 15 s of logical time.
            assert_eq!(b, Mint::Wait((back_ms - 15_000) * MS), "back {back_ms} ms");
        }
    }
}

#[test]
fn wait_is_exact_to_the_nanosecond() {
    let mut g = gen(Policy::Wait, 2);
    let now = T0_MS * MS + 250_000; // 0.25 ms into the tick
    let mut out = vec![0; 4096 * 3];
    assert_eq!(g.next_ids_at(now, &mut out).unwrap(), Mint::Ready(()));
    assert_eq!(out[0], twitter_id(T0_MS, 7, 0));
    assert_eq!(out[4096 * 3 - 1], twitter_id(T0_MS + 2, 7, 4095));
    // Logical time is 2 ticks ahead: one more would need tick T0+3, allowed once the clock reads T0+1.
    assert_eq!(g.next_id_at(now).unwrap(), Mint::Wait(750_000));
    assert_eq!(
        ready(g.next_id_at((T0_MS + 1) * MS).unwrap()),
        twitter_id(T0_MS + 3, 7, 0)
    );
}

#[test]
fn fail_policy_reports_how_far_ahead_and_when_to_retry() {
    let mut g = gen(Policy::Fail, 0);
    let now = T0_MS * MS;
    let mut out = vec![0; 4096];
    g.next_ids_at(now, &mut out).unwrap();
    let err = g.next_id_at(now + 400_000).unwrap_err();
    assert_eq!(
        err,
        Error::TooFarAhead {
            ahead_ns: 600_000,
            retry_after_ns: 600_000
        }
    );
    assert_eq!(err.code(), ErrorCode::TooFarAhead);
    assert_eq!(err.retry_after_ms(), Some(1));
    // Nothing was consumed by the failure.
    assert_eq!(
        ready(g.next_id_at(now + MS).unwrap()),
        twitter_id(T0_MS + 1, 7, 0)
    );
}

#[test]
fn strict_policy_refuses_any_backwards_step_and_waits_for_the_next_tick() {
    let mut g = gen(Policy::Strict, 15_000);
    let now = T0_MS * MS;
    ready(g.next_id_at(now + 5 * MS).unwrap());
    assert_eq!(
        g.next_id_at(now + 4 * MS + 10).unwrap_err(),
        Error::ClockMovedBackwards { by_ns: MS - 10 }
    );
    // Same tick is fine; a used-up tick waits for the next rather than borrowing.
    let mut out = vec![0; 4095];
    g.next_ids_at(now + 5 * MS, &mut out).unwrap();
    assert_eq!(
        g.next_id_at(now + 5 * MS + 100).unwrap(),
        Mint::Wait(MS - 100)
    );
    assert_eq!(
        ready(g.next_id_at(now + 6 * MS).unwrap()),
        twitter_id(T0_MS + 6, 7, 0)
    );
}

#[test]
fn clock_before_epoch_and_past_lifespan_are_errors() {
    let mut g = gen(Policy::Wait, 15_000);
    let err = g.next_id_at((TWITTER_EPOCH_MS - 1) * MS).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ClockBeforeEpoch);
    let end = Layout::twitter().lifespan_end_ms();
    assert_eq!(
        g.next_id_at(end * MS).unwrap_err().code(),
        ErrorCode::LayoutExhausted
    );
    let last = ready(g.next_id_at((end - 1) * MS).unwrap());
    assert_eq!(last >> 22, (1 << 41) - 1);
}

#[test]
fn logical_time_cannot_borrow_past_the_lifespan() {
    let mut g = gen(Policy::Wait, 15_000);
    let end = Layout::twitter().lifespan_end_ms();
    let mut out = vec![0; 4096];
    g.next_ids_at((end - 1) * MS, &mut out).unwrap();
    assert_eq!(
        g.next_id_at((end - 1) * MS).unwrap_err().code(),
        ErrorCode::LayoutExhausted
    );
}

#[test]
fn a_batch_larger_than_the_window_is_refused_not_waited_for() {
    let mut g = gen(Policy::Wait, 1);
    let mut out = vec![0; 4096 * 2 + 1];
    let err = g.next_ids_at(T0_MS * MS, &mut out).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert_eq!(g.state(), 0, "nothing consumed");
}

#[test]
fn batches_match_single_ids_in_every_order_and_family() {
    let layouts = [
        Layout::twitter(),
        Layout::preset("sonyflake").unwrap(),
        Layout::preset("hazelcast").unwrap(),
        Layout::preset("decimal").unwrap(),
        Layout::new(LayoutConfig {
            sequence_bits: 0,
            ..LayoutConfig::default()
        })
        .unwrap(),
    ];
    for layout in layouts {
        let options = Options::default();
        let mut one = Generator::new(layout, 3, options).unwrap();
        let mut batch = Generator::new(layout, 3, options).unwrap();
        let now = T0_MS * MS;
        let singles: Vec<u64> = (0..700)
            .map(|_| ready(one.next_id_at(now).unwrap()))
            .collect();
        let mut out = vec![0; 700];
        assert_eq!(batch.next_ids_at(now, &mut out).unwrap(), Mint::Ready(()));
        assert_eq!(singles, out, "{layout:?}");
        assert!(out.windows(2).all(|w| w[0] < w[1]));
        for id in &out {
            assert_eq!(layout.decode(*id).unwrap().node, 3);
        }
    }
}

#[test]
fn random_start_hides_counts_but_keeps_full_capacity() {
    let options = Options {
        policy: Policy::Fail,
        max_ahead_ns: MS,
        random_start_seed: Some(42),
    };
    let now = T0_MS * MS;
    // A whole tick's worth still fits although the tick starts at a random sequence, one at a time…
    let mut g = Generator::new(Layout::twitter(), 7, options).unwrap();
    let ids: Vec<u64> = (0..4096)
        .map(|_| ready(g.next_id_at(now).unwrap()))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_ne!(ids[0] & 0xfff, 0, "seed 42 starts this tick past 0");
    // …and as one batch.
    let mut g = Generator::new(Layout::twitter(), 7, options).unwrap();
    let mut out = vec![0; 4096];
    g.next_ids_at(now, &mut out).unwrap();
    assert_eq!(out, ids);
    // Without room to borrow, a random start would cost capacity: refused up front.
    for (policy, max_ahead_ns) in [(Policy::Strict, 15_000 * MS), (Policy::Wait, MS - 1)] {
        let no_room = Options {
            policy,
            max_ahead_ns,
            random_start_seed: Some(42),
        };
        let err = Generator::new(Layout::twitter(), 7, no_room).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    }
    // Starts differ from tick to tick and are reproducible from the seed.
    let starts: Vec<u64> = (1..=20)
        .map(|t| {
            let mut g = Generator::new(Layout::twitter(), 7, options).unwrap();
            ready(g.next_id_at(now + t * MS).unwrap()) & 0xfff
        })
        .collect();
    assert!(
        starts.iter().filter(|&&s| s != starts[0]).count() > 10,
        "{starts:?}"
    );
    let again = {
        let mut g = Generator::new(Layout::twitter(), 7, options).unwrap();
        ready(g.next_id_at(now + MS).unwrap()) & 0xfff
    };
    assert_eq!(again, starts[0]);
}

#[test]
fn node_ids_are_checked_with_the_offset() {
    let err = Generator::new(Layout::twitter(), 1024, Options::default()).unwrap_err();
    assert_eq!(
        err,
        Error::NodeIdOutOfRange {
            node_id: 1024,
            offset: 0,
            max: 1023
        }
    );
    let hz = Layout::hazelcast(100).unwrap();
    assert_eq!(hz.max_node_id(), 65535 - 100);
    assert!(Generator::new(hz, 65435, Options::default()).is_ok());
    let err = Generator::new(hz, 65436, Options::default()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NodeIdOutOfRange);
    assert!(err.to_string().contains("node_id_offset 100"), "{err}");
    let mut g = Generator::new(hz, 5, Options::default()).unwrap();
    let id = ready(g.next_id_at(T0_MS * MS).unwrap());
    assert_eq!(id & 0xffff, 105);
}

#[test]
fn a_restored_high_water_mark_is_never_repeated() {
    let mut before = gen(Policy::Wait, 15_000);
    let last = ready(before.next_id_at(T0_MS * MS).unwrap());
    // The process restarts with its clock an hour behind: the persisted state keeps it unique.
    let mut after = gen(Policy::Fail, 15_000);
    after.restore(before.state());
    let err = after.next_id_at((T0_MS - 3_600_000) * MS).unwrap_err();
    assert_eq!(err.code(), ErrorCode::TooFarAhead);
    assert!(ready(after.next_id_at(T0_MS * MS).unwrap()) > last);
}

#[test]
fn shared_and_plain_generators_agree() {
    let shared = SharedGenerator::new(Layout::twitter(), 7, Options::default()).unwrap();
    let mut plain = gen(Policy::Wait, 15_000);
    for i in 0..if cfg!(miri) { 500 } else { 10_000u64 } {
        let now = T0_MS * MS + i * 7_919;
        assert_eq!(
            shared.next_id_at(now).unwrap(),
            plain.next_id_at(now).unwrap()
        );
    }
}

#[test]
fn host_loop_sleeps_then_mints_and_gives_up_on_a_frozen_clock() {
    use core::cell::Cell;
    let g = SharedGenerator::new(
        Layout::twitter(),
        7,
        Options {
            policy: Policy::Wait,
            max_ahead_ns: 0,
            random_start_seed: None,
        },
    )
    .unwrap();
    let mut out = vec![0; 4096];
    g.next_ids_at(T0_MS * MS, &mut out).unwrap();
    // The clock moves one tick per read: one wait, then an ID.
    let reads = Cell::new(0u64);
    let clock = || {
        reads.set(reads.get() + 1);
        Ok((T0_MS + reads.get() - 1) * MS)
    };
    let slept = Cell::new(Vec::new());
    let id = g
        .next_id_with(&clock, |ns| {
            let mut v = slept.take();
            v.push(ns);
            slept.set(v);
        })
        .unwrap();
    assert_eq!(id, twitter_id(T0_MS + 1, 7, 0));
    assert_eq!(slept.take(), vec![MS]);
    // A frozen clock cannot be waited out.
    let mut out = vec![0; 4095];
    g.next_ids_at((T0_MS + 1) * MS, &mut out).unwrap();
    let frozen = snowmint::FixedClock((T0_MS + 1) * MS);
    let err = g.next_id_with(&frozen, |_| {}).unwrap_err();
    assert_eq!(err.code(), ErrorCode::TooFarAhead);
}

#[test]
fn layout_validation_names_the_field() {
    let base = LayoutConfig::default();
    let cases: [(LayoutConfig, &str); 9] = [
        (
            LayoutConfig {
                timestamp_bits: 0,
                ..base
            },
            "timestamp_bits",
        ),
        (
            LayoutConfig {
                timestamp_bits: 65,
                ..base
            },
            "timestamp_bits",
        ),
        (
            LayoutConfig {
                node_bits: 64,
                ..base
            },
            "node_bits",
        ),
        (
            LayoutConfig {
                sequence_bits: 70,
                ..base
            },
            "sequence_bits",
        ),
        (
            LayoutConfig {
                timestamp_bits: 42,
                ..base
            },
            "timestamp_bits + node_bits + sequence_bits",
        ),
        (LayoutConfig { tick_ns: 0, ..base }, "tick_ns"),
        (
            LayoutConfig {
                epoch_ms: u64::MAX,
                ..base
            },
            "epoch_ms",
        ),
        (
            LayoutConfig {
                node_id_offset: 1024,
                ..base
            },
            "node_id_offset",
        ),
        (
            LayoutConfig {
                timestamp_bits: 60,
                node_bits: 0,
                sequence_bits: 0,
                tick_ns: u64::MAX,
                ..base
            },
            "timestamp_bits",
        ),
    ];
    for (cfg, field) in cases {
        let err = Layout::new(cfg).expect_err(field);
        assert_eq!(err.code(), ErrorCode::InvalidLayout);
        assert!(err.to_string().contains(field), "{err} should name {field}");
    }
    assert!(Layout::new(LayoutConfig {
        timestamp_bits: 42,
        use_sign_bit: true,
        ..base
    })
    .is_ok());
    assert_eq!(
        Layout::snowcast(0, 127).unwrap_err().code(),
        ErrorCode::InvalidLayout
    );
    assert_eq!(
        Layout::snowcast(0, 8193).unwrap_err().code(),
        ErrorCode::InvalidLayout
    );
    let sc = Layout::snowcast(0, 1000).unwrap();
    assert_eq!(
        (sc.node_bits(), sc.sequence_bits(), sc.total_bits()),
        (10, 13, 64)
    );
    assert_eq!(
        Layout::preset("nope").unwrap_err().code(),
        ErrorCode::InvalidLayout
    );
    assert_eq!(
        Order::from_name("ts|seq|node").unwrap(),
        Order::TimestampSequenceNode
    );
}

#[test]
fn presets_match_the_spec_table() {
    let rows: [(&str, u64, Order, u32, u32, u32, u64); 6] = [
        (
            "twitter",
            1288834974657,
            Order::TimestampNodeSequence,
            41,
            10,
            12,
            MS,
        ),
        (
            "discord",
            1420070400000,
            Order::TimestampNodeSequence,
            42,
            10,
            12,
            MS,
        ),
        (
            "instagram",
            1293840000000,
            Order::TimestampNodeSequence,
            41,
            13,
            10,
            MS,
        ),
        (
            "sonyflake",
            1409529600000,
            Order::TimestampSequenceNode,
            39,
            16,
            8,
            10 * MS,
        ),
        (
            "hazelcast",
            1514764800000,
            Order::TimestampSequenceNode,
            41,
            16,
            6,
            MS,
        ),
        (
            "js53",
            1704067200000,
            Order::TimestampNodeSequence,
            41,
            4,
            8,
            MS,
        ),
    ];
    for (name, epoch, order, ts, node, seq, tick) in rows {
        let l = Layout::preset(name).unwrap();
        assert_eq!(
            (
                l.epoch_ms(),
                l.order(),
                l.timestamp_bits(),
                l.node_bits(),
                l.sequence_bits(),
                l.tick_ns()
            ),
            (epoch, order, ts, node, seq, tick),
            "{name}"
        );
        assert_eq!(l.preset_name(), Some(name));
    }
    assert!(Layout::preset("js53").unwrap().total_bits() <= 53);
}

#[test]
fn decimal_ids_read_as_timestamps() {
    let d = Layout::decimal();
    let mut g = Generator::new(d, 28, Options::default()).unwrap();
    let now = 1_640_700_422_954_100_155; // ns
    let id = ready(g.next_id_at(now).unwrap());
    assert_eq!(id, 1_640_700_422_954_100_128);
    assert_eq!(
        d.decode(id).unwrap().iso().to_buf().as_str(),
        "2021-12-28T14:07:02.954100100Z"
    );
    // Same 100 ns: the next 100 ns step is borrowed.
    assert_eq!(ready(g.next_id_at(now).unwrap()), 1_640_700_422_954_100_228);
    assert_eq!(
        Generator::new(d, 100, Options::default())
            .unwrap_err()
            .code(),
        ErrorCode::NodeIdOutOfRange
    );
}

/// A clock whose window readings come from a cache (as `FastClock`'s do): `cached` for whole-millisecond
/// windows, while `now_ns` reads `fresh`. Counts the exact reads.
struct CachingClock {
    cached: u64,
    fresh: std::cell::Cell<u64>,
    exact_reads: std::cell::Cell<u32>,
}

impl snowmint::Clock for CachingClock {
    fn now_ns(&self) -> snowmint::Result<u64> {
        self.exact_reads.set(self.exact_reads.get() + 1);
        Ok(self.fresh.get())
    }
    fn now_ns_within(&self, window_ns: u64) -> snowmint::Result<(u64, bool)> {
        if window_ns % MS == 0 {
            Ok((self.cached, false))
        } else {
            Ok((self.now_ns()?, true))
        }
    }
}

#[test]
fn a_cached_reading_mints_and_anything_else_is_decided_on_a_fresh_reading() {
    let clock = CachingClock {
        cached: T0_MS * MS + 100,
        fresh: std::cell::Cell::new(T0_MS * MS + 900_000),
        exact_reads: std::cell::Cell::new(0),
    };
    let sleep = |_: u64| panic!("no wait expected");
    // Ready: the cached reading (same millisecond) mints, with no exact read.
    let mut g = gen(Policy::Fail, 1);
    assert_eq!(
        g.next_id_with(&clock, sleep).unwrap(),
        twitter_id(T0_MS, 7, 0)
    );
    assert_eq!(clock.exact_reads.get(), 0);
    // Past max_ahead: the error is computed from one fresh reading, not from the cached one.
    let mut full = [0u64; 2 * 4096 - 1];
    g.next_ids_with(&clock, sleep, &mut full).unwrap();
    let e = g.next_id_with(&clock, sleep).unwrap_err();
    assert_eq!(clock.exact_reads.get(), 1);
    match e {
        Error::TooFarAhead { retry_after_ns, .. } => assert_eq!(retry_after_ns, MS - 900_000),
        other => panic!("{other}"),
    }
    // A fresh reading that has moved on mints where the cached one could not.
    clock.fresh.set((T0_MS + 1) * MS);
    assert_eq!(
        g.next_id_with(&clock, sleep).unwrap(),
        twitter_id(T0_MS + 2, 7, 0)
    );
    assert_eq!(clock.exact_reads.get(), 2);
    // Sub-millisecond ticks never get a cached reading.
    let mut fine =
        Generator::new(Layout::preset("decimal").unwrap(), 5, Options::default()).unwrap();
    fine.next_id_with(&clock, sleep).unwrap();
    assert_eq!(clock.exact_reads.get(), 3);
}

/// `strict` judges a backwards step on a reading taken after the state it is compared with: a thread
/// that read the clock and was held up while another thread minted in a newer tick has a stale reading,
/// not a clock that went back. Thread A's clock is held 2 ms after every other reading (the first
/// attempt of each ID); thread B mints from the system clock meanwhile. Every call of A would fail
/// without that rule.
#[test]
fn strict_reports_no_backwards_step_for_a_stale_reading_under_threads() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::Duration;
    let layout = Layout::twitter();
    let opts = Options {
        policy: Policy::Strict,
        ..Options::default()
    };
    let shared = SharedGenerator::new(layout, 5, opts).unwrap();
    let done = AtomicBool::new(false);
    let reads = AtomicU64::new(0);
    let held = || -> snowmint::Result<u64> {
        let t = snowmint::Clock::now_ns(&snowmint::SystemClock);
        if reads.fetch_add(1, Ordering::Relaxed) % 2 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
        t
    };
    let (a_ids, b_ids) = std::thread::scope(|s| {
        let b = s.spawn(|| {
            let mut ids = Vec::new();
            while !done.load(Ordering::Relaxed) && ids.len() < 20_000_000 {
                ids.push(shared.next_id_from(&snowmint::SystemClock).unwrap());
            }
            ids
        });
        let mut ids = Vec::new();
        for _ in 0..if cfg!(miri) { 10 } else { 100 } {
            ids.push(
                shared
                    .next_id_from(&held)
                    .expect("no false CLOCK_MOVED_BACKWARDS"),
            );
        }
        done.store(true, Ordering::Relaxed);
        (ids, b.join().unwrap())
    });
    assert!(a_ids.windows(2).all(|w| w[0] < w[1]));
    assert!(
        b_ids.len() > if cfg!(miri) { 0 } else { 100 },
        "thread B minted meanwhile"
    );
    let mut all: Vec<u64> = a_ids.iter().chain(&b_ids).copied().collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "duplicate ID");
}

/// A real backwards step is still an error under `strict`, for the shared generator too, whether the
/// reading comes from an exact clock or is found out on a fresh one.
#[test]
fn strict_still_reports_a_real_backwards_step_on_a_shared_generator() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let t0 = 1_700_000_000_000 * MS;
    let opts = Options {
        policy: Policy::Strict,
        ..Options::default()
    };
    let shared = SharedGenerator::new(Layout::twitter(), 5, opts).unwrap();
    let now = AtomicU64::new(t0);
    let reads = AtomicU64::new(0);
    let clock = || -> snowmint::Result<u64> {
        reads.fetch_add(1, Ordering::Relaxed);
        Ok(now.load(Ordering::Relaxed))
    };
    shared.next_id_from(&clock).unwrap();
    now.store(t0 - 5 * MS, Ordering::Relaxed);
    let e = shared.next_id_from(&clock).unwrap_err();
    assert_eq!(e, Error::ClockMovedBackwards { by_ns: 5 * MS });
    // With no other thread minting, the one reading is judged at once (an injected clock of fixed
    // readings is not asked for more).
    assert_eq!(reads.load(Ordering::Relaxed), 2);
    let mut plain = Generator::new(Layout::twitter(), 5, opts).unwrap();
    now.store(t0, Ordering::Relaxed);
    plain.next_id_from(&clock).unwrap();
    now.store(t0 - 5 * MS, Ordering::Relaxed);
    assert_eq!(
        plain.next_id_from(&clock).unwrap_err(),
        Error::ClockMovedBackwards { by_ns: 5 * MS }
    );
}
