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

use std::collections::HashMap;
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

/// Nanoseconds per element over the measured samples: (fastest sample, median sample). The fastest is
/// the least disturbed by other processes, so the ratios use it; the median is shown beside it.
fn estimate(name: &str, elements_per_iter: u64) -> Option<(f64, f64)> {
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
    Some((per[0], per[per.len() / 2]))
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

fn benches(c: &mut Criterion) {
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
    bench(&mut g, "clock/fast", "fast", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(FastClock.now_ns_within(1_000_000).unwrap().0);
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
            black_box(s.next_id_from(&SystemClock).unwrap());
        }
        start.elapsed()
    });
    let mut p = plain(layout);
    bench(&mut g, "single/plain/system", "plain/system", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(p.next_id_from(&SystemClock).unwrap());
        }
        start.elapsed()
    });
    let s = shared(layout);
    bench(&mut g, "single/shared/fast", "shared/fast", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(s.next_id().unwrap());
        }
        start.elapsed()
    });
    let mut p = plain(layout);
    bench(&mut g, "single/plain/fast", "plain/fast", |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(p.next_id().unwrap());
        }
        start.elapsed()
    });
    let s = shared(layout);
    bench(
        &mut g,
        "single/shared/given",
        "shared/given_reading",
        |iters| {
            // The generator alone: one clock reading per sample, passed in (no clock in the loop).
            let now = SystemClock.now_ns().unwrap();
            let start = Instant::now();
            for _ in 0..iters {
                black_box(s.next_id_at(black_box(now)).unwrap());
            }
            start.elapsed()
        },
    );
    g.finish();

    let mut g = c.benchmark_group("threads");
    g.throughput(Throughput::Elements(1));
    for (key, name, use_fast) in [
        ("threads/2/system", "shared_2_threads/system", false),
        ("threads/2/fast", "shared_2_threads/fast", true),
    ] {
        let s = shared(layout);
        bench(&mut g, key, name, |iters| {
            // Aggregate: wall time for `iters` IDs minted by two threads sharing one generator.
            if use_fast {
                two_threads(iters, || {
                    black_box(s.next_id().unwrap());
                })
            } else {
                two_threads(iters, || {
                    black_box(s.next_id_from(&SystemClock).unwrap());
                })
            }
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
    bench(
        &mut g,
        "peer/snowmint_shared",
        "snowmint::SharedGenerator",
        |iters| {
            bursts(
                iters,
                || shared(twitter),
                |g| {
                    black_box(g.next_id().unwrap());
                },
            )
        },
    );
    bench(
        &mut g,
        "peer/snowmint_plain",
        "snowmint::Generator",
        |iters| {
            bursts(
                iters,
                || plain(twitter),
                |g| {
                    black_box(g.next_id().unwrap());
                },
            )
        },
    );
    bench(
        &mut g,
        "peer/snowflaked",
        "snowflaked::Generator",
        |iters| {
            bursts(
                iters,
                || snowflaked::Generator::new(0),
                |g| {
                    black_box(g.generate::<u64>());
                },
            )
        },
    );
    bench(
        &mut g,
        "peer/rs_snowflake",
        "rs-snowflake real_time_generate",
        |iters| {
            bursts(
                iters,
                || snowflake::SnowflakeIdGenerator::new(0, 0),
                |g| {
                    black_box(g.real_time_generate());
                },
            )
        },
    );
    bench(&mut g, "peer/uuid_v7", "uuid::Uuid::now_v7", |iters| {
        bursts(
            iters,
            || (),
            |_| {
                black_box(uuid::Uuid::now_v7());
            },
        )
    });
    bench(&mut g, "peer/ulid", "ulid::Generator::generate", |iters| {
        bursts(iters, ulid::Generator::new, |g| {
            black_box(g.generate().unwrap());
        })
    });
    g.finish();
}

/// A sustained run: IDs minted, ticks elapsed, ticks in which an ID was minted.
#[derive(Clone, Copy)]
struct Sustained {
    ids: u64,
    ticks: u64,
    used_ticks: u64,
    fraction: f64,
    fraction_of_used: f64,
}

/// Mints for `run` with no running ahead of the clock; IDs / (IDs per tick × ticks elapsed).
fn sustained<C: Clock>(clock: &C, run: Duration) -> Sustained {
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
    let seq_bits = layout.sequence_bits() + layout.node_bits();
    let first_tick = tick_of(SystemClock.now_ns().unwrap());
    let start = Instant::now();
    let (mut ids, mut used_ticks, mut last_tick) = (0u64, 0u64, u64::MAX);
    let mut last = 0;
    // Bounded by time, and by the most the layout could ever allow in that time.
    let most = layout.ids_per_tick() * (run.as_millis() as u64 + 10);
    while ids < most && start.elapsed() < run {
        last = gen.next_id_from(clock).unwrap();
        ids += 1;
        let tick = last >> seq_bits;
        if tick != last_tick {
            used_ticks += 1;
            last_tick = tick;
        }
    }
    // Never fewer ticks than were used.
    let end_tick = tick_of(SystemClock.now_ns().unwrap()).max(last >> seq_bits);
    let ticks = end_tick - first_tick + 1;
    let cap = layout.ids_per_tick() as f64;
    Sustained {
        ids,
        ticks,
        used_ticks,
        fraction: ids as f64 / (cap * ticks as f64),
        fraction_of_used: ids as f64 / (cap * used_ticks as f64),
    }
}

/// A named routine for [`paired`]: `f(n)` mints `n` IDs and returns the time it took.
type Routine<'a> = (&'static str, Box<dyn FnMut(u64) -> Duration + 'a>);

/// Interleaved short rounds, for ratios that hold on a busy machine: the routines take turns, each
/// minting `n` IDs per round, and each keeps its fastest round. A round of a fraction of a millisecond
/// usually runs undisturbed even when other processes share the cores; a criterion sample of ~50 ms
/// rarely does.
fn paired(
    rounds: usize,
    n: u64,
    routines: &mut [Routine<'_>],
) -> HashMap<&'static str, (f64, f64)> {
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); routines.len()];
    for _ in 0..rounds {
        for (i, (_, f)) in routines.iter_mut().enumerate() {
            times[i].push(f(n).as_nanos() as f64 / n as f64);
        }
    }
    routines
        .iter()
        .zip(times)
        .map(|((name, _), mut t)| {
            t.sort_by(|a, b| a.partial_cmp(b).unwrap());
            (*name, (t[0], t[t.len() / 2]))
        })
        .collect()
}

/// Times `n` calls of `f`.
fn timed(n: u64, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed()
}

/// Two threads minting `n` IDs in all: wall time from the first thread's start to the last one's end
/// (each thread reads its own clock, so a descheduled coordinator cannot shorten the span).
fn two_threads(n: u64, mint: impl Fn() + Sync) -> Duration {
    let barrier = Barrier::new(2);
    let half = n / 2;
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|scope| {
        let handles: Vec<_> = [half, n - half]
            .into_iter()
            .map(|k| {
                let (mint, barrier) = (&mint, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..k {
                        mint();
                    }
                    (start, Instant::now())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let start = spans.iter().map(|s| s.0).min().unwrap();
    let end = spans.iter().map(|s| s.1).max().unwrap();
    end - start
}

fn paired_runs() -> HashMap<&'static str, (f64, f64)> {
    let layout = bench_layout();
    let (s1, s2, s3) = (shared(layout), shared(layout), shared(layout));
    let (mut p1, mut p2) = (plain(layout), plain(layout));
    let (b1, mut b2) = (shared(layout), plain(layout));
    let (mut buf1, mut buf2) = (vec![0u64; BATCH], vec![0u64; BATCH]);
    let word = AtomicU64::new(0);
    let cas = || {
        let v = word.load(Ordering::Relaxed);
        black_box(
            word.compare_exchange(v, v + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok(),
        );
    };
    let mut singles: Vec<Routine<'_>> = vec![
        (
            "clock/system",
            Box::new(|n| {
                timed(n, || {
                    black_box(SystemClock.now_ns().unwrap());
                })
            }),
        ),
        (
            "clock/fast",
            Box::new(|n| {
                timed(n, || {
                    black_box(FastClock.now_ns_within(1_000_000).unwrap().0);
                })
            }),
        ),
        ("cas", Box::new(|n| timed(n, cas))),
        #[cfg(target_arch = "x86_64")]
        (
            "clock/tsc",
            Box::new(|n| {
                timed(n, || {
                    // SAFETY: `rdtsc` exists on every x86-64 CPU and has no preconditions.
                    black_box(unsafe { core::arch::x86_64::_rdtsc() });
                })
            }),
        ),
        (
            "floor/system",
            Box::new(|n| {
                timed(n, || {
                    black_box(SystemClock.now_ns().unwrap());
                    cas();
                })
            }),
        ),
        (
            "floor/system/dependent",
            Box::new(|n| {
                timed(n, || {
                    let now = SystemClock.now_ns().unwrap();
                    let v = word.load(Ordering::Relaxed);
                    black_box(
                        word.compare_exchange(
                            v,
                            (v + 1).max(now >> 20),
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        )
                        .is_ok(),
                    );
                })
            }),
        ),
        (
            "floor/fast",
            Box::new(|n| {
                timed(n, || {
                    black_box(FastClock.now_ns_within(1_000_000).unwrap().0);
                    cas();
                })
            }),
        ),
        (
            "single/shared/system",
            Box::new(|n| {
                timed(n, || {
                    black_box(s1.next_id_from(&SystemClock).unwrap());
                })
            }),
        ),
        (
            "single/plain/system",
            Box::new(|n| {
                timed(n, || {
                    black_box(p1.next_id_from(&SystemClock).unwrap());
                })
            }),
        ),
        (
            "single/shared/fast",
            Box::new(|n| {
                timed(n, || {
                    black_box(s2.next_id().unwrap());
                })
            }),
        ),
        (
            "single/plain/fast",
            Box::new(|n| {
                timed(n, || {
                    black_box(p2.next_id().unwrap());
                })
            }),
        ),
        (
            "single/shared/given",
            Box::new(|n| {
                let now = SystemClock.now_ns().unwrap();
                timed(n, || {
                    black_box(s3.next_id_at(black_box(now)).unwrap());
                })
            }),
        ),
        // Batches: n/1000 batches of 4096, the time scaled to n IDs.
        (
            "batch/shared",
            Box::new(|n| {
                let k = (n / 1000).max(1);
                timed(k, || {
                    b1.next_ids(&mut buf1).unwrap();
                    black_box(&buf1);
                })
                .mul_f64(n as f64 / (k * BATCH as u64) as f64)
            }),
        ),
        (
            "batch/plain",
            Box::new(|n| {
                let k = (n / 1000).max(1);
                timed(k, || {
                    b2.next_ids(&mut buf2).unwrap();
                    black_box(&buf2);
                })
                .mul_f64(n as f64 / (k * BATCH as u64) as f64)
            }),
        ),
    ];
    let mut out = paired(400, 5_000, &mut singles);
    drop(singles);
    let (t1, t2, t3, t4) = (
        shared(layout),
        shared(layout),
        shared(layout),
        shared(layout),
    );
    let mut threads: Vec<Routine<'_>> = vec![
        (
            "threads/1/system",
            Box::new(|n| {
                timed(n, || {
                    black_box(t1.next_id_from(&SystemClock).unwrap());
                })
            }),
        ),
        (
            "threads/2/system",
            Box::new(|n| {
                two_threads(n, || {
                    black_box(t2.next_id_from(&SystemClock).unwrap());
                })
            }),
        ),
        (
            "threads/1/fast",
            Box::new(|n| {
                timed(n, || {
                    black_box(t3.next_id().unwrap());
                })
            }),
        ),
        (
            "threads/2/fast",
            Box::new(|n| {
                two_threads(n, || {
                    black_box(t4.next_id().unwrap());
                })
            }),
        ),
    ];
    out.extend(paired(60, 100_000, &mut threads));
    drop(threads);
    // Peers on the twitter layout: each round mints BURST IDs (within one tick's 4096) on a generator
    // built before the clock starts.
    let twitter = Layout::twitter();
    let mut peers: Vec<Routine<'_>> = vec![
        (
            "peer/snowmint_shared",
            Box::new(|n| {
                let g = shared(twitter);
                timed(n, || {
                    black_box(g.next_id().unwrap());
                })
            }),
        ),
        (
            "peer/snowmint_plain",
            Box::new(|n| {
                let mut g = plain(twitter);
                timed(n, || {
                    black_box(g.next_id().unwrap());
                })
            }),
        ),
        (
            "peer/snowmint_shared_system",
            Box::new(|n| {
                let g = shared(twitter);
                timed(n, || {
                    black_box(g.next_id_from(&SystemClock).unwrap());
                })
            }),
        ),
        (
            "peer/snowflaked",
            Box::new(|n| {
                let mut g = snowflaked::Generator::new(0);
                timed(n, || {
                    black_box(g.generate::<u64>());
                })
            }),
        ),
        (
            "peer/rs_snowflake",
            Box::new(|n| {
                let mut g = snowflake::SnowflakeIdGenerator::new(0, 0);
                timed(n, || {
                    black_box(g.real_time_generate());
                })
            }),
        ),
        (
            "peer/uuid_v7",
            Box::new(|n| {
                timed(n, || {
                    black_box(uuid::Uuid::now_v7());
                })
            }),
        ),
        (
            "peer/ulid",
            Box::new(|n| {
                let mut g = ulid::Generator::new();
                timed(n, || {
                    black_box(g.generate().unwrap());
                })
            }),
        ),
    ];
    out.extend(paired(300, BURST, &mut peers));
    out
}

struct Table<'a> {
    pairs: &'a HashMap<&'static str, (f64, f64)>,
}

impl Table<'_> {
    /// Fastest interleaved round (ns per ID).
    fn fast(&self, key: &str) -> Option<f64> {
        self.pairs.get(key).map(|p| p.0)
    }

    /// One line: criterion's median (if benched there), the fastest round, a ratio and a verdict.
    fn row(
        &self,
        label: &str,
        crit: Option<&str>,
        key: &str,
        base: Option<(&str, &str)>,
        target: Option<(f64, &str)>,
    ) {
        let crit_median = crit
            .and_then(|c| {
                estimate(
                    c,
                    if c.starts_with("batch/") {
                        BATCH as u64
                    } else {
                        1
                    },
                )
            })
            .map(|e| format!("{:>9.2}", e.1))
            .unwrap_or_else(|| format!("{:>9}", "-"));
        let fast = self.fast(key);
        let fast_s = fast
            .map(|v| format!("{v:>9.2}"))
            .unwrap_or_else(|| format!("{:>9}", "-"));
        let (r, ratio_s) = match (fast, base.and_then(|(k, w)| self.fast(k).map(|b| (b, w)))) {
            (Some(a), Some((b, what))) if b > 0.0 => (Some(a / b), format!("{:.2}x {what}", a / b)),
            _ => (None, String::new()),
        };
        let verdict = match target {
            Some((limit, text)) => {
                // A target on a ratio, or (without a base) on the value itself.
                let v = if base.is_some() { r } else { fast };
                match v {
                    Some(v) if v <= limit => format!("{text}: met"),
                    Some(_) => format!("{text}: MISSED"),
                    None => String::new(),
                }
            }
            None => String::new(),
        };
        println!("{label:<52} {crit_median} {fast_s}  {ratio_s:<26} {verdict}");
    }
}

fn summary(pairs: &mut HashMap<&'static str, (f64, f64)>, sys: Sustained, fast: Sustained) {
    // The floors of the targets: a clock read plus a CAS, each measured alone.
    for (sum, clock) in [
        ("floor/sum", "clock/system"),
        ("floor/fast/sum", "clock/fast"),
    ] {
        if let (Some(c), Some(a)) = (pairs.get(clock).copied(), pairs.get("cas").copied()) {
            pairs.insert(sum, (c.0 + a.0, c.1 + a.1));
        }
    }
    // The floor of one ID: one exact clock check, the cheaper of the TSC-gated test and a system read.
    if let (Some(f), Some(sys)) = (
        pairs.get("clock/fast").copied(),
        pairs.get("clock/system").copied(),
    ) {
        pairs.insert("floor/one", if f.0 <= sys.0 { f } else { sys });
    }
    // The best `&mut self` peer (snowflaked, rs-snowflake).
    if let (Some(a), Some(b)) = (
        pairs.get("peer/snowflaked").copied(),
        pairs.get("peer/rs_snowflake").copied(),
    ) {
        pairs.insert("peer/best_mut", if a.0 <= b.0 { a } else { b });
    }
    machine_line(pairs);
    let t = Table { pairs };
    let fast_name = if FastClock::is_gated() {
        "FastClock (TSC-gated)"
    } else {
        "FastClock (not gated here: system reads)"
    };
    println!();
    println!("snowmint speed summary (ns per ID, this run). 'criterion' is the median of criterion's samples;");
    println!("'fastest' is the fastest of many short interleaved rounds (least disturbed by other processes");
    println!("on a shared machine); the ratios and targets use 'fastest'.");
    println!(
        "{:<52} {:>9} {:>9}  {:<26} target",
        "measurement", "criterion", "fastest", "ratio"
    );
    println!("{}", "-".repeat(122));
    let floor = Some(("floor/sum", "floor"));
    let one = Some(("floor/one", "one clock check"));
    t.row(
        "floor of one ID = one exact clock check (cheaper one)",
        None,
        "floor/one",
        None,
        None,
    );
    t.row(
        &format!("single ID: SharedGenerator::next_id ({fast_name})"),
        None,
        "single/shared/fast",
        one,
        Some((1.25, "<= 1.25x one clock check")),
    );
    t.row(
        "clock read: SystemTime (SystemClock)",
        Some("clock/system"),
        "clock/system",
        None,
        None,
    );
    t.row(
        &format!("clock read: {fast_name}"),
        Some("clock/fast"),
        "clock/fast",
        Some(("clock/system", "SystemTime read")),
        None,
    );
    t.row(
        "one CAS: AtomicU64 load + compare_exchange",
        Some("cas/atomic_u64"),
        "cas",
        None,
        None,
    );
    t.row(
        "floor = SystemTime read + CAS (the two above)",
        None,
        "floor/sum",
        None,
        None,
    );
    t.row(
        "  both in one loop (they overlap)",
        None,
        "floor/system",
        floor,
        None,
    );
    t.row(
        "  one loop, CAS to max(v + 1, reading) (dependent)",
        None,
        "floor/system/dependent",
        floor,
        None,
    );
    t.row(
        "single ID: SharedGenerator, system clock",
        Some("single/shared/system"),
        "single/shared/system",
        floor,
        Some((1.1, "<= 1.10x floor")),
    );
    t.row(
        "single ID: Generator (plain, no CAS), system clock",
        Some("single/plain/system"),
        "single/plain/system",
        floor,
        Some((1.1, "<= 1.10x floor")),
    );
    t.row(
        "single ID: SharedGenerator, reading passed in",
        Some("single/shared/given"),
        "single/shared/given",
        Some(("cas", "CAS")),
        None,
    );
    t.row(
        &format!("fast floor = {fast_name} read + CAS"),
        None,
        "floor/fast/sum",
        Some(("floor/sum", "floor")),
        None,
    );
    t.row(
        &format!("single ID: SharedGenerator, {fast_name}"),
        Some("single/shared/fast"),
        "single/shared/fast",
        Some(("floor/fast/sum", "fast floor")),
        None,
    );
    t.row(
        "  the same, against the SystemTime floor",
        None,
        "single/shared/fast",
        floor,
        None,
    );
    t.row(
        &format!("single ID: Generator (plain), {fast_name}"),
        Some("single/plain/fast"),
        "single/plain/fast",
        Some(("floor/fast/sum", "fast floor")),
        None,
    );
    t.row(
        "1 thread, SharedGenerator, system (100k-ID rounds)",
        None,
        "threads/1/system",
        None,
        None,
    );
    t.row(
        "2 threads, one SharedGenerator, system (aggregate)",
        Some("threads/2/system"),
        "threads/2/system",
        Some(("threads/1/system", "1 thread")),
        Some((1.2, "<= 1.20x 1 thread")),
    );
    t.row(
        &format!("1 thread, SharedGenerator, {fast_name}"),
        None,
        "threads/1/fast",
        None,
        None,
    );
    t.row(
        &format!("2 threads, one SharedGenerator, {fast_name}"),
        Some("threads/2/fast"),
        "threads/2/fast",
        Some(("threads/1/fast", "1 thread")),
        Some((1.2, "<= 1.20x 1 thread")),
    );
    t.row(
        "batch of 4096: SharedGenerator, per ID",
        Some("batch/shared"),
        "batch/shared",
        None,
        Some((1.0, "<= 1 ns per ID")),
    );
    t.row(
        "batch of 4096: Generator (plain), per ID",
        Some("batch/plain"),
        "batch/plain",
        None,
        Some((1.0, "<= 1 ns per ID")),
    );
    for (label, s) in [("SystemClock", sys), (fast_name, fast)] {
        let ok = if s.fraction >= 0.99 { "met" } else { "MISSED" };
        println!(
            "{:<52} {:>18.2}%  {:<26} >= 99% of capacity: {ok}",
            format!("sustained 2 s, twitter, {label}"),
            s.fraction * 100.0,
            format!("{} IDs / {} ticks", s.ids, s.ticks),
        );
        println!(
            "{:<52} {:>18.2}%  {} ticks without an ID (thread not running)",
            "  the same, of the ticks in which the thread minted",
            s.fraction_of_used * 100.0,
            s.ticks - s.used_ticks
        );
    }
    println!();
    println!("peers, twitter layout: at most 4000 IDs (of 4096 a tick) per fresh generator, built untimed");
    println!(
        "{:<52} {:>9} {:>9}  ratio",
        "generator", "criterion", "fastest"
    );
    for (key, label) in [
        (
            "peer/snowmint_shared",
            "snowmint SharedGenerator (lock-free, &self)",
        ),
        ("peer/snowmint_plain", "snowmint Generator (&mut self)"),
        (
            "peer/snowmint_shared_system",
            "snowmint SharedGenerator, from SystemClock",
        ),
        ("peer/snowflaked", "snowflaked::Generator (&mut self)"),
        (
            "peer/rs_snowflake",
            "rs-snowflake real_time_generate (&mut self)",
        ),
        ("peer/uuid_v7", "uuid::Uuid::now_v7 (128-bit)"),
        ("peer/ulid", "ulid::Generator::generate (128-bit)"),
    ] {
        let crit = if key.ends_with("_system") {
            None
        } else {
            Some(key)
        };
        t.row(
            label,
            crit,
            key,
            Some(("peer/snowmint_shared", "snowmint SharedGenerator")),
            None,
        );
    }
    t.row(
        "snowmint SharedGenerator vs the best &mut peer",
        None,
        "peer/snowmint_shared",
        Some(("peer/best_mut", "best &mut peer")),
        Some((1.0 / 1.5, "best peer >= 1.5x snowmint")),
    );
}

/// The machine's costs, beside the table: one uncontended compare-and-swap, a TSC read, the TSC-gated
/// clock and a `SystemTime` read (fastest rounds of this run), and what `FastClock` chose here.
fn machine_line(pairs: &HashMap<&'static str, (f64, f64)>) {
    let f = |k: &str| {
        pairs
            .get(k)
            .map(|v| format!("{:.1} ns", v.0))
            .unwrap_or_else(|| "-".into())
    };
    let chose = match FastClock::calibration_costs() {
        Some((gated, system)) => format!(
            "calibration measured 32 gated readings {gated} cycles, 32 system readings {system} cycles: {}",
            if FastClock::is_gated() { "TSC-gated" } else { "system reads" }
        ),
        None => "no TSC gate here: system reads".to_string(),
    };
    println!();
    println!(
        "machine: one CAS {}, TSC read {}, TSC-gated clock {}, SystemTime read {} ({chose})",
        f("cas"),
        f("clock/tsc"),
        f("clock/fast"),
        f("clock/system")
    );
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(SAMPLES)
        .warm_up_time(Duration::from_millis(400))
        .measurement_time(Duration::from_millis(1600))
        .configure_from_args();
    // Start the clock's calibration (~10 ms) before anything is timed.
    let _ = FastClock.now_ns_within(1_000_000);
    std::thread::sleep(Duration::from_millis(20));
    let _ = FastClock.now_ns_within(1_000_000);
    benches(&mut c);
    c.final_summary();
    let run = Duration::from_secs(2);
    let mut pairs = paired_runs();
    let sys = sustained(&SystemClock, run);
    let fast = sustained(&FastClock, run);
    summary(&mut pairs, sys, fast);
    if let Some(path) = std::env::var_os("SNOWMINT_BENCH_JSON") {
        write_json(&pairs, &path);
    }
}

/// The machine-readable summary for `scripts/bench-all.sh`: the 'fastest' figures the table above
/// printed (ns per ID, this run). The first snowmint single, snowmint batch and floor rows are the
/// headline figures; single IDs are on the twitter layout, like the peers and the other runtimes.
fn write_json(pairs: &HashMap<&'static str, (f64, f64)>, path: &std::ffi::OsStr) {
    // key | kind | what | name
    const ROWS: &str = "
        peer/snowmint_shared        | snowmint | single | SharedGenerator::next_id (twitter, FastClock)
        peer/snowmint_plain         | snowmint | single | Generator::next_id (twitter, FastClock)
        peer/snowmint_shared_system | snowmint | single | SharedGenerator::next_id_from (twitter, SystemClock)
        single/shared/system        | snowmint | single | SharedGenerator::next_id_from (2^22/ms layout, SystemClock)
        single/plain/system         | snowmint | single | Generator::next_id_from (2^22/ms layout, SystemClock)
        single/shared/given      | snowmint | single | SharedGenerator::next_id_at (reading passed in)
        batch/shared             | snowmint | batch  | SharedGenerator::next_ids (4096/batch, per ID)
        batch/plain              | snowmint | batch  | Generator::next_ids (4096/batch, per ID)
        floor/one                | floor    | clock  | one exact clock check (the cheaper of the TSC-gated test and a SystemTime read)
        floor/sum                | floor    | cas    | SystemTime read + CAS (measured apart, summed)
        clock/system             | floor    | clock  | SystemTime read
        clock/fast               | floor    | clock  | FastClock same-millisecond read
        cas                      | floor    | cas    | AtomicU64 load + compare_exchange
        clock/tsc                | floor    | clock  | TSC read (rdtsc)
        peer/snowflaked          | peer     | single | snowflaked::Generator::generate
        peer/rs_snowflake        | peer     | single | rs-snowflake real_time_generate
        peer/uuid_v7             | peer     | single | uuid::Uuid::now_v7 (128-bit)
        peer/ulid                | peer     | single | ulid::Generator::generate (128-bit)";
    let rows: Vec<(String, &str, &str, &str)> = ROWS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            (f[3].to_string(), f[1], f[2], f[0])
        })
        .collect();
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .filter(|(_, _, _, key)| pairs.contains_key(*key))
        .map(|(name, kind, what, key)| {
            let ns = pairs[*key].0;
            serde_json::json!({"name": name, "kind": kind, "what": what, "ns_per_id": ns})
        })
        .collect();
    let doc = serde_json::json!({"runtime": "rust", "rows": rows});
    std::fs::write(path, format!("{doc:#}\n")).expect("cannot write SNOWMINT_BENCH_JSON");
}
