//! State-file bench (SPEC §4a): single-ID minting from a generator on a state file against the
//! in-process shared generator, in interleaved rounds of one run, and 2 processes minting from one file
//! against 2 threads minting from one generator (wall time per ID, both minting at once). Prints
//! `STATEFILE <key> <ns per ID> <name>` lines for scripts/bench_statefile.py (see core/bench.sh).
//!
//! The child processes are this binary run again with `SNOWMINT_BENCH_CHILD` set.

use std::hint::black_box;
use std::process::{Command, Stdio};
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use snowmint::{Layout, Options, SharedGenerator, StateWord};

const ROUNDS: usize = 60;
const PER_ROUND: u64 = 50_000;
const PARALLEL_IDS: u64 = 2_000_000;
const PARALLEL_ROUNDS: usize = 5;

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn timed<S: StateWord>(g: &SharedGenerator<S>, n: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..n {
        black_box(g.next_id().unwrap());
    }
    start.elapsed()
}

fn child() {
    let path = std::env::var("SNOWMINT_BENCH_STATE").unwrap();
    let n: u64 = std::env::var("SNOWMINT_BENCH_N").unwrap().parse().unwrap();
    let start_at: u64 = std::env::var("SNOWMINT_BENCH_START")
        .unwrap()
        .parse()
        .unwrap();
    let g = SharedGenerator::open_file(&path, Layout::twitter(), 3, Options::default()).unwrap();
    g.next_id().unwrap(); // warm: page mapped, clock calibrated
    while unix_ns() < start_at {
        std::hint::spin_loop();
    }
    for _ in 0..n {
        black_box(g.next_id().unwrap());
    }
    println!("{}", unix_ns());
}

/// Two processes on one file: wall time per ID from the common start to the last one's end.
fn two_processes(path: &str, n: u64) -> f64 {
    let start_at = unix_ns() + 200_000_000;
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .env("SNOWMINT_BENCH_CHILD", "1")
                .env("SNOWMINT_BENCH_STATE", path)
                .env("SNOWMINT_BENCH_N", (n / 2).to_string())
                .env("SNOWMINT_BENCH_START", start_at.to_string())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let end = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success());
            String::from_utf8(out.stdout)
                .unwrap()
                .trim()
                .parse::<u64>()
                .unwrap()
        })
        .max()
        .unwrap();
    (end - start_at) as f64 / n as f64
}

/// Two threads on one generator, the same protocol.
fn two_threads<S: StateWord + Sync>(g: &SharedGenerator<S>, n: u64) -> f64 {
    let barrier = Barrier::new(2);
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..n / 2 {
                        black_box(g.next_id().unwrap());
                    }
                    (start, Instant::now())
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let start = spans.iter().map(|s| s.0).min().unwrap();
    let end = spans.iter().map(|s| s.1).max().unwrap();
    (end - start).as_nanos() as f64 / n as f64
}

fn main() {
    if std::env::var_os("SNOWMINT_BENCH_CHILD").is_some() {
        return child();
    }
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("snowmint-bench-{}.state", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let layout = Layout::twitter();
    let memory = SharedGenerator::new(layout, 3, Options::default()).unwrap();
    let file = SharedGenerator::open_file(&path, layout, 3, Options::default()).unwrap();
    let (mut best_memory, mut best_file) = (f64::MAX, f64::MAX);
    for round in 0..ROUNDS {
        // Alternate which goes first, so neither always follows the other.
        let (a, b) = if round % 2 == 0 {
            (timed(&memory, PER_ROUND), timed(&file, PER_ROUND))
        } else {
            let b = timed(&file, PER_ROUND);
            (timed(&memory, PER_ROUND), b)
        };
        best_memory = best_memory.min(a.as_nanos() as f64 / PER_ROUND as f64);
        best_file = best_file.min(b.as_nanos() as f64 / PER_ROUND as f64);
    }
    println!(
        "STATEFILE memory {best_memory:.3} Rust: SharedGenerator::next_id, in process (twitter, FastClock)"
    );
    println!(
        "STATEFILE file {best_file:.3} Rust: SharedGenerator::open_file(..).next_id (/dev/shm)"
    );
    drop(file);
    let (mut threads, mut processes) = (f64::MAX, f64::MAX);
    let p = path.to_str().unwrap();
    for _ in 0..PARALLEL_ROUNDS {
        threads = threads.min(two_threads(&memory, PARALLEL_IDS));
        processes = processes.min(two_processes(p, PARALLEL_IDS));
    }
    println!("STATEFILE threads2 {threads:.3} Rust: 2 threads, one in-process SharedGenerator");
    println!("STATEFILE processes2 {processes:.3} Rust: 2 processes, one state file");
    let _ = std::fs::remove_file(&path);
}
