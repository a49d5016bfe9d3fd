//! Coordination benchmarks, in one run:
//! 1. minting under a lease vs minting with a plain node ID (the ceiling is one compare on the hot
//!    path; target ≤ 1.05×), interleaved rounds, fastest round of each;
//! 2. claim latency on the store (target ≤ 1 ms median on the embedded store), and a whole lease
//!    acquisition (claim, read and write the reservation, start the keeper);
//! 3. 64 processes attaching at once to a 128-node sequencer (target: all within 2 s).
//!
//! The store is `SNOWMINT_BENCH_STORE` (default: a fresh embedded store in a temporary directory).
//! Run with `coord/bench.sh`.

use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{Layout, LayoutConfig, Options, SharedGenerator};
use snowmint_coord::source::{open_store, parse_store_url};
use snowmint_coord::{
    layout_text, ClaimRequest, Lease, LeaseOptions, Sequencer, SequencerConfig, Store, SystemTime,
    Time,
};

/// 2^22 IDs per 1 ms tick and one node: no loop here outruns the clock, so nothing waits or borrows.
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

fn store_url() -> (String, Option<std::path::PathBuf>) {
    match std::env::var("SNOWMINT_BENCH_STORE") {
        Ok(u) if !u.is_empty() => (u, None),
        _ => {
            let dir = std::env::temp_dir().join(format!("snowmint-bench-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            (format!("file://{}", dir.display()), Some(dir))
        }
    }
}

fn open(url: &str) -> Arc<dyn Store> {
    open_store(&parse_store_url(url).unwrap()).unwrap()
}

fn now_ms() -> u64 {
    SystemTime.unix_ns() / 1_000_000
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn fastest(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Interleaved rounds of `n` mints each: (fastest, median) ns per ID of each routine.
fn paired(rounds: usize, n: u64, routines: &mut [(&str, &mut dyn FnMut())]) -> Vec<(f64, f64)> {
    let mut times = vec![Vec::new(); routines.len()];
    for _ in 0..rounds {
        for (i, (_, f)) in routines.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            times[i].push(t.elapsed().as_nanos() as f64 / n as f64);
        }
    }
    times
        .into_iter()
        .map(|t| (fastest(&t), median(t)))
        .collect()
}

fn minting(url: &str) {
    let layout = bench_layout();
    let store = open(url);
    let name = format!("bench-mint-{}", std::process::id());
    let record = store
        .create_sequencer(
            &name,
            &SequencerConfig {
                layout: layout_text(&layout),
                nodes: 1,
            },
            now_ms(),
        )
        .unwrap();
    let lease = Lease::acquire(
        store,
        Arc::new(SystemTime),
        record,
        layout,
        Options::default(),
        LeaseOptions::default(),
    )
    .unwrap();
    let plain = SharedGenerator::new(layout, 0, Options::default()).unwrap();
    let mut a = || {
        black_box(plain.next_id().unwrap());
    };
    let mut b = || {
        black_box(lease.next_id().unwrap());
    };
    let mut c = || {
        black_box(lease.generator().next_id().unwrap());
    };
    let r = paired(
        400,
        20_000,
        &mut [("plain", &mut a), ("lease", &mut b), ("ceiled", &mut c)],
    );
    let ratio = r[1].0 / r[0].0;
    println!(
        "minting (ns per ID, fastest round / median round of 400 interleaved rounds of 20000)"
    );
    println!(
        "  plain node ID (SharedGenerator::next_id)       {:6.2} / {:6.2}",
        r[0].0, r[0].1
    );
    println!(
        "  under a lease (Lease::next_id)                 {:6.2} / {:6.2}",
        r[1].0, r[1].1
    );
    println!(
        "  under a lease (its CeiledGenerator::next_id)   {:6.2} / {:6.2}",
        r[2].0, r[2].1
    );
    println!(
        "  ratio lease / plain: {ratio:.3}x (median rounds {:.3}x)  target <= 1.05x: {}",
        r[1].1 / r[0].1,
        if ratio <= 1.05 { "met" } else { "MISSED" }
    );
}

fn claims(url: &str) {
    let store = open(url);
    let name = format!("bench-claim-{}", std::process::id());
    let layout = Layout::twitter();
    let record = store
        .create_sequencer(
            &name,
            &SequencerConfig {
                layout: layout_text(&layout),
                nodes: 128,
            },
            now_ms(),
        )
        .unwrap();
    let mut claim_ms = Vec::new();
    let mut acquire_ms = Vec::new();
    for i in 0..200u64 {
        let t = Instant::now();
        let c = store
            .claim(&ClaimRequest {
                sequencer: &name,
                incarnation: record.incarnation,
                nodes: 128,
                start: i % 128,
                ttl_ms: 10_000,
                holder: "bench",
                now_unix_ms: now_ms(),
            })
            .unwrap()
            .unwrap();
        claim_ms.push(t.elapsed().as_secs_f64() * 1e3);
        store.release(&c).unwrap();
        let t = Instant::now();
        let l = Lease::acquire(
            store.clone(),
            Arc::new(SystemTime),
            record.clone(),
            layout,
            Options::default(),
            LeaseOptions::default(),
        )
        .unwrap();
        acquire_ms.push(t.elapsed().as_secs_f64() * 1e3);
        drop(l);
    }
    let m = median(claim_ms.clone());
    println!("claim latency on {} (ms, 200 claims)", store.describe());
    let (target, within) = if url.starts_with("file://") {
        (1.0, "1 ms (embedded)")
    } else {
        (10.0, "10 ms (server)")
    };
    println!(
        "  Store::claim      median {m:.3}  fastest {:.3}  target <= {within} median: {}",
        fastest(&claim_ms),
        if m <= target { "met" } else { "MISSED" }
    );
    println!("  Lease::acquire    median {:.3}  fastest {:.3}  (claim, read + write the reservation, keeper thread)", median(acquire_ms.clone()), fastest(&acquire_ms));
}

/// The child of `attach_storm`: waits for the common start instant, attaches, reports, holds until
/// its standard input closes.
fn attach_child(url: &str, name: &str, start_ms: u64) {
    while now_ms() < start_ms {
        std::thread::sleep(Duration::from_micros(200));
    }
    let seq = Sequencer::open(open(url), name).unwrap();
    let r = seq.attach();
    let done = now_ms();
    let node = seq.lease().map_or(u64::MAX, |l| l.node_id());
    println!(
        "{} {} {}",
        r.map_or_else(|e| e.code().to_string(), |_| "ok".into()),
        node,
        done.saturating_sub(start_ms)
    );
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

fn attach_storm(url: &str) {
    let name = format!("bench-storm-{}", std::process::id());
    Sequencer::create(open(url), &name, Layout::twitter(), 128).unwrap();
    let start_ms = now_ms() + 1500;
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<_> = (0..64)
        .map(|_| {
            Command::new(&exe)
                .env("SNOWMINT_BENCH_CHILD", format!("{url} {name} {start_ms}"))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let spawned_late = now_ms() > start_ms;
    let mut nodes = std::collections::HashSet::new();
    let mut worst = 0u64;
    let mut failures = 0;
    for c in &mut children {
        let mut line = String::new();
        BufReader::new(c.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.first() != Some(&"ok") {
            failures += 1;
        }
        nodes.insert(w[1].parse::<u64>().unwrap());
        worst = worst.max(w[2].parse().unwrap());
    }
    for mut c in children {
        drop(c.stdin.take());
        c.wait().unwrap();
    }
    println!("64 processes attaching at once to a 128-node sequencer");
    println!(
        "  {} attached, {} distinct node IDs, {failures} failed; the last one {worst} ms after the common start{}  target all within 2000 ms: {}",
        64 - failures,
        nodes.len(),
        if spawned_late { " (spawning took longer than the 1.5 s head start)" } else { "" },
        if failures == 0 && nodes.len() == 64 && worst <= 2000 { "met" } else { "MISSED" }
    );
}

fn main() {
    if let Ok(args) = std::env::var("SNOWMINT_BENCH_CHILD") {
        let w: Vec<&str> = args.split(' ').collect();
        attach_child(w[0], w[1], w[2].parse().unwrap());
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` runs nothing.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let (url, tmp) = store_url();
    println!("store: {url}");
    minting(&url);
    claims(&url);
    attach_storm(&url);
    if let Some(dir) = tmp {
        let _ = std::fs::remove_dir_all(dir);
    }
}
