//! Speed of minting, side by side with its floor (a clock read plus a CAS) and with peers, in one run.
//!
//! Every generator is timed within its layout's capacity, so no measurement includes sleeping or
//! borrowing ticks ahead of the clock:
//! * snowmint's own figures use a high-capacity layout (`BENCH`: 2^22 IDs per 1 ms tick, 4.2 billion a
//!   second, more than any loop here mints);
//! * the twitter-layout comparison with peers mints at most 4000 IDs (of 4096 a tick) per fresh
//!   generator, the generator being built outside the timed region (the same for every peer);
//! * the sustained run mints for 2 s with no running ahead of the clock (`max_ahead` 0), so it can only
//!   reach capacity by moving to each new tick without oversleeping.
//!
//! Run with `core/bench.sh` (or `cargo bench -p snowmint --bench generate`). After criterion's groups a
//! summary table prints ratios computed from the same samples criterion analysed.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use snowmint::{
    Clock, FastClock, Generator, Layout, LayoutConfig, Options, Policy, SharedGenerator,
    SystemClock,
};

const SAMPLES: usize = 30;
const BATCH: usize = 4096;
/// IDs per fresh generator in the twitter-layout comparison (a tick holds 4096).
const BURST: u64 = 4000;

/// Per benchmark: every (iterations, elapsed) criterion asked for; the last SAMPLES are its samples.
static RECORDS: Mutex<Vec<(String, u64, Duration)>> = Mutex::new(Vec::new());

fn record(name: &str, iters: u64, elapsed: Duration) {
    RECORDS
        .lock()
        .unwrap()
        .push((name.to_string(), iters, elapsed));
}

/// Median over the measured samples of nanoseconds per element.
fn estimate(name: &str, elements_per_iter: u64) -> Option<f64> {
    let records = RECORDS.lock().unwrap();
    let mut per: Vec<f64> = records
        .iter()
        .filter(|(n, _, _)| n == name)
        .map(|(_, iters, d)| d.as_nanos() as f64 / (*iters as f64 * elements_per_iter as f64))
        .collect();
    if per.is_empty() {
        return None;
    }
    let keep = per.len().min(SAMPLES);
    let mut per = per.split_off(per.len() - keep);
    per.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Some(per[per.len() / 2])
}

/// 41 timestamp bits of 1 ms, no node bits, 22 sequence bits: 4.2 million IDs per millisecond.
fn bench_layout() -> Layout {
    Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits: 0,
        sequence_bits: 22,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .unwrap()
}

fn shared(layout: Layout) -> SharedGenerator {
    SharedGenerator::new(layout, 0, Options::default()).unwrap()
}

fn plain(layout: Layout) -> Generator {
    Generator::new(layout, 0, Options::default()).unwrap()
}

/// A benchmark whose routine is `f(iters) -> elapsed`, recorded for the summary.
fn bench(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    full: &str,
    name: &str,
    mut f: impl FnMut(u64) -> Duration,
) {
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let d = f(iters);
            record(full, iters, d);
            d
        })
    });
}

/// Times `iters` calls of `mint`, each run of `BURST` on a generator fresh from `make` (built untimed).
fn bursts<G>(iters: u64, mut make: impl FnMut() -> G, mut mint: impl FnMut(&mut G)) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let k = left.min(BURST);
        let mut g = make();
        let start = Instant::now();
        for _ in 0..k {
            mint(&mut g);
        }
        total += start.elapsed();
        left -= k;
    }
    total
}

fn benches(c: &mut Criterion, tsc: &FastClock) {
    let layout = bench_layout();

    let mut g = c.benchmark_group("clock");
    g.throughput(Throughput::Elements(1));
    bench(&mut g, "clock/system", "system", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(SystemClock.now_ns().unwrap());
        }
        start.elapsed()
    });
    bench(&mut g, "clock/tsc", "tsc", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(tsc.now_ns().unwrap());
        }
        start.elapsed()
    });
    g.finish();

    let mut g = c.benchmark_group("cas");
    g.throughput(Throughput::Elements(1));
    bench(&mut g, "cas/atomic_u64", "atomic_u64", |iters| {
        let word = AtomicU64::new(0);
        let start = Instant::now();
        for _ in 0..iters {
            let v = word.load(Ordering::Relaxed);
            black_box(
                word.compare_exchange(v, v + 1, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok(),
            );
        }
        start.elapsed()
    });
    g.finish();

    let mut g = c.benchmark_group("single");
    g.throughput(Throughput::Elements(1));
    let s = shared(layout);
    bench(&mut g, "single/shared/system", "shared/system", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(s.next_id().unwrap());
        }
        start.elapsed()
    });
    let mut p = plain(layout);
    bench(&mut g, "single/plain/system", "plain/system", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(p.next_id().unwrap());
        }
        start.elapsed()
    });
    let s = shared(layout);
    bench(&mut g, "single/shared/tsc", "shared/tsc", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(s.next_id_from(tsc).unwrap());
        }
        start.elapsed()
    });
    let mut p = plain(layout);
    bench(&mut g, "single/plain/tsc", "plain/tsc", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(p.next_id_from(tsc).unwrap());
        }
        start.elapsed()
    });
    let s = shared(layout);
    bench(&mut g, "single/shared/given", "shared/given_reading", |iters| {
        // The generator alone: one clock reading per sample, passed in (no clock in the loop).
        let now = SystemClock.now_ns().unwrap();
        let start = Instant::now();
        for _ in 0..iters {
            black_box(s.next_id_at(black_box(now)).unwrap());
        }
        start.elapsed()
    });
    g.finish();

    let mut g = c.benchmark_group("threads");
    g.throughput(Throughput::Elements(1));
    for (key, name, use_tsc) in [
        ("threads/2/system", "shared_2_threads/system", false),
        ("threads/2/tsc", "shared_2_threads/tsc", true),
    ] {
        let s = shared(layout);
        bench(&mut g, key, name, |iters| {
            // Aggregate: wall time for `iters` IDs minted by two threads sharing one generator.
            let barrier = Barrier::new(3);
            let half = iters / 2;
            std::thread::scope(|scope| {
                for n in [half, iters - half] {
                    let (s, barrier) = (&s, &barrier);
                    scope.spawn(move || {
                        barrier.wait();
                        for _ in 0..n {
                            let id = if use_tsc {
                                s.next_id_from(tsc)
                            } else {
                                s.next_id()
                            };
                            black_box(id.unwrap());
                        }
                    });
                }
                barrier.wait();
                let start = Instant::now();
                // Leaving the scope joins both threads.
                start
            })
            .elapsed()
        });
    }
    g.finish();

    let mut g = c.benchmark_group("batch_4096");
    g.throughput(Throughput::Elements(BATCH as u64));
    let s = shared(layout);
    let mut buf = vec![0u64; BATCH];
    bench(&mut g, "batch/shared", "shared/system", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            s.next_ids(&mut buf).unwrap();
            black_box(&buf);
        }
        start.elapsed()
    });
    let mut p = plain(layout);
    bench(&mut g, "batch/plain", "plain/system", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            p.next_ids(&mut buf).unwrap();
            black_box(&buf);
        }
        start.elapsed()
    });
    g.finish();

    // Twitter layout, peers side by side, each within 4096 IDs per tick (see the module comment).
    let mut g = c.benchmark_group("twitter_vs_peers");
    g.throughput(Throughput::Elements(1));
    let twitter = Layout::twitter();
    bench(&mut g, "peer/snowmint_shared", "snowmint::SharedGenerator", |iters| {
        bursts(iters, || shared(twitter), |g| {
            black_box(g.next_id().unwrap());
        })
    });
    bench(&mut g, "peer/snowmint_plain", "snowmint::Generator", |iters| {
        bursts(iters, || plain(twitter), |g| {
            black_box(g.next_id().unwrap());
        })
    });
    bench(&mut g, "peer/snowflaked", "snowflaked::Generator", |iters| {
        bursts(iters, || snowflaked::Generator::new(0), |g| {
            black_box(g.generate::<u64>());
        })
    });
    bench(&mut g, "peer/rs_snowflake", "rs-snowflake real_time_generate", |iters| {
        bursts(iters, || snowflake::SnowflakeIdGenerator::new(0, 0), |g| {
            black_box(g.real_time_generate());
        })
    });
    bench(&mut g, "peer/uuid_v7", "uuid::Uuid::now_v7", |iters| {
        bursts(iters, || (), |_| {
            black_box(uuid::Uuid::now_v7());
        })
    });
    bench(&mut g, "peer/ulid", "ulid::Generator::generate", |iters| {
        bursts(iters, ulid::Generator::new, |g| {
            black_box(g.generate().unwrap());
        })
    });
    g.finish();
}

/// Mints for `run` with no running ahead of the clock; returns (IDs, ticks elapsed, capacity fraction).
fn sustained<C: Clock>(clock: &C, run: Duration) -> (u64, u64, f64) {
    let layout = Layout::twitter();
    let gen = SharedGenerator::new(
        layout,
        0,
        Options {
            policy: Policy::Wait,
            max_ahead_ns: 0,
            random_start_seed: None,
        },
    )
    .unwrap();
    let tick_of = |ns: u64| layout.tick_at_ns(ns).unwrap();
    let first_tick = tick_of(SystemClock.now_ns().unwrap());
    let start = Instant::now();
    let mut n = 0u64;
    let mut last = 0;
    // Bounded by time, and by the most the layout could ever allow in that time.
    let most = layout.ids_per_tick() * (run.as_millis() as u64 + 10);
    while n < most && start.elapsed() < run {
        last = gen.next_id_from(clock).unwrap();
        n += 1;
    }
    let end_tick = tick_of(SystemClock.now_ns().unwrap()).max(
        layout.decode(last).unwrap().timestamp_ticks, // never fewer ticks than were used
    );
    let ticks = end_tick - first_tick + 1;
    (n, ticks, n as f64 / (layout.ids_per_tick() * ticks) as f64)
}

fn row(label: &str, value: Option<f64>, ratio: String, target: String) {
    let v = match value {
        Some(v) => format!("{v:>8.2}"),
        None => format!("{:>8}", "-"),
    };
    println!("{label:<52} {v}  {ratio:<30} {target}");
}

fn ratio(a: Option<f64>, b: Option<f64>, what: &str) -> (Option<f64>, String) {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => (Some(a / b), format!("{:.2}× {what}", a / b)),
        _ => (None, String::new()),
    }
}

fn verdict(r: Option<f64>, ok: impl Fn(f64) -> bool, text: &str) -> String {
    match r {
        Some(r) if ok(r) => format!("{text}  met"),
        Some(_) => format!("{text}  MISSED"),
        None => String::new(),
    }
}

fn summary(tsc: &FastClock, sustained_sys: (u64, u64, f64), sustained_tsc: (u64, u64, f64)) {
    let e = |name: &str| estimate(name, 1);
    let clock = e("clock/system");
    let tsc_read = e("clock/tsc");
    let cas = e("cas/atomic_u64");
    let floor = clock.zip(cas).map(|(a, b)| a + b);
    let tsc_floor = tsc_read.zip(cas).map(|(a, b)| a + b);
    let shared_sys = e("single/shared/system");
    let plain_sys = e("single/plain/system");
    let shared_tsc = e("single/shared/tsc");
    let plain_tsc = e("single/plain/tsc");
    let given = e("single/shared/given");
    let two = e("threads/2/system");
    let two_tsc = e("threads/2/tsc");
    let batch = estimate("batch/shared", BATCH as u64);
    let batch_plain = estimate("batch/plain", BATCH as u64);
    let tsc_name = if tsc.is_tsc() {
        "TscClock"
    } else {
        "FastClock (no invariant TSC: system clock)"
    };

    println!();
    println!("snowmint speed summary — ns per ID (median of criterion's samples), all from this run");
    println!("{:<52} {:>8}  {:<30} target", "measurement", "ns", "ratio");
    println!("{}", "-".repeat(110));
    row("clock read: SystemTime (SystemClock)", clock, String::new(), String::new());
    let (_, r) = ratio(tsc_read, clock, "SystemTime read");
    row(&format!("clock read: {tsc_name}"), tsc_read, r, String::new());
    row("one CAS: AtomicU64::compare_exchange", cas, String::new(), String::new());
    row("floor: SystemTime read + CAS", floor, String::new(), String::new());
    let (rv, r) = ratio(shared_sys, floor, "floor");
    row(
        "single ID: SharedGenerator, system clock",
        shared_sys,
        r,
        verdict(rv, |r| r <= 1.1, "<= 1.10x floor"),
    );
    let (rv, r) = ratio(plain_sys, floor, "floor");
    row(
        "single ID: Generator (plain, no CAS), system clock",
        plain_sys,
        r,
        verdict(rv, |r| r <= 1.1, "<= 1.10x floor"),
    );
    let (_, r) = ratio(given, cas, "CAS");
    row("single ID: SharedGenerator, reading passed in", given, r, String::new());
    row("floor with the TSC: TscClock read + CAS", tsc_floor, String::new(), String::new());
    let (rv, r) = ratio(shared_tsc, tsc_floor, "TSC floor");
    row(
        &format!("single ID: SharedGenerator, {tsc_name}"),
        shared_tsc,
        r,
        verdict(rv, |r| r <= 1.1, "<= 1.10x TSC floor"),
    );
    let (_, r) = ratio(shared_tsc, floor, "SystemTime floor");
    row("  (the same against the SystemTime floor)", shared_tsc, r, String::new());
    let (_, r) = ratio(plain_tsc, tsc_floor, "TSC floor");
    row(&format!("single ID: Generator (plain), {tsc_name}"), plain_tsc, r, String::new());
    let (rv, r) = ratio(two, shared_sys, "1 thread");
    row(
        "2 threads, one SharedGenerator, system (aggregate)",
        two,
        r,
        verdict(rv, |r| r <= 1.2, "<= 1.20x 1 thread"),
    );
    let (rv, r) = ratio(two_tsc, shared_tsc, "1 thread");
    row(
        &format!("2 threads, one SharedGenerator, {tsc_name}"),
        two_tsc,
        r,
        verdict(rv, |r| r <= 1.2, "<= 1.20x 1 thread"),
    );
    let (rv, _) = ratio(batch, Some(1.0), "");
    let (_, r) = ratio(batch, shared_sys, "single ID");
    row(
        "batch of 4096: SharedGenerator, per ID",
        batch,
        r,
        verdict(rv, |r| r <= 1.0, "<= 1 ns per ID"),
    );
    let (_, r) = ratio(batch_plain, shared_sys, "single ID");
    row("batch of 4096: Generator (plain), per ID", batch_plain, r, String::new());
    for (label, (n, ticks, frac)) in [
        ("SystemClock", sustained_sys),
        (tsc_name, sustained_tsc),
    ] {
        println!(
            "{:<52} {:>7.2}%  {:<30} {}",
            format!("sustained 2 s, twitter, {label}"),
            frac * 100.0,
            format!("{n} IDs in {ticks} ticks"),
            verdict(Some(frac), |f| f >= 0.99, ">= 99% of capacity")
        );
    }
    println!();
    println!("peers, twitter layout (at most 4000 IDs per fresh generator, built untimed); ratio = peer / snowmint SharedGenerator");
    let base = e("peer/snowmint_shared");
    for (key, label) in [
        ("peer/snowmint_shared", "snowmint SharedGenerator (lock-free, &self)"),
        ("peer/snowmint_plain", "snowmint Generator (&mut self)"),
        ("peer/snowflaked", "snowflaked::Generator (&mut self)"),
        ("peer/rs_snowflake", "rs-snowflake real_time_generate (&mut self)"),
        ("peer/uuid_v7", "uuid::Uuid::now_v7 (128-bit)"),
        ("peer/ulid", "ulid::Generator::generate (128-bit)"),
    ] {
        let v = e(key);
        let (_, r) = ratio(v, base, "snowmint");
        row(label, v, r, String::new());
    }
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(SAMPLES)
        .warm_up_time(Duration::from_millis(400))
        .measurement_time(Duration::from_millis(1600))
        .configure_from_args();
    let tsc = FastClock::new();
    benches(&mut c, &tsc);
    c.final_summary();
    let run = Duration::from_secs(2);
    let sys = sustained(&SystemClock, run);
    let fast = sustained(&tsc, run);
    summary(&tsc, sys, fast);
}
