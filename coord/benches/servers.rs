//! Claim latency on 127.0.0.1, side by side on the embedded store, etcd and PostgreSQL (one run, ratios
//! to the embedded store printed), and 64 processes attaching at once to a 128-node sequencer on each.
//!
//! Run through `coord/bench-servers.sh` (starts the servers); the URLs come from `scripts/servers.sh`'s
//! exports (`SNOWMINT_TEST_ETCD_URL`, `SNOWMINT_TEST_POSTGRES_URL`); a store whose URL is missing is
//! left out. Targets (SPEC / issue 12): embedded ≤ 1 ms, etcd and PostgreSQL ≤ 10 ms median claim; all
//! 64 attaches within 2 s.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{Layout, Options};
use snowmint_coord::source::{open_store, parse_store_url};
use snowmint_coord::{
    layout_text, ClaimRequest, NodeGenerator, SequencerConfig, Store, SystemTime, Time,
};

const CLAIMS: usize = 300;
const ATTACHERS: usize = 64;

fn main() {
    // A child of the attach benchmark: open a lease source, mint one ID, report, exit (releasing).
    if let Ok(source) = std::env::var("SNOWMINT_BENCH_ATTACH") {
        let t0 = Instant::now();
        match NodeGenerator::open(&source, Layout::twitter(), Options::default()) {
            Ok(g) => {
                let id = g.next_id().expect("mint");
                println!("ok {} {} {}", g.node_id(), id, t0.elapsed().as_micros());
                // Hold the lease until the parent has heard from every attacher (it closes stdin).
                let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
            }
            Err(e) => println!("err {} {e}", e.code().as_str()),
        }
        return;
    }
    let dir = std::env::temp_dir().join(format!("snowmint-bench-servers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap(); // a store path that does not exist is STORE_NOT_FOUND
    let mut stores = vec![("embedded", format!("file://{}", dir.display()))];
    for (name, var) in [
        ("etcd", "SNOWMINT_TEST_ETCD_URL"),
        ("postgres", "SNOWMINT_TEST_POSTGRES_URL"),
    ] {
        match std::env::var(var) {
            Ok(url) if !url.is_empty() => stores.push((name, url)),
            _ => eprintln!("{var} not set: {name} left out (run coord/bench-servers.sh)"),
        }
    }
    let stamp = format!("b{}", std::process::id());

    println!(
        "claim latency on 127.0.0.1: {CLAIMS} claims each (claim, then release), after 20 warm-up"
    );
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>12}   target",
        "store", "median", "p90", "p99", "vs embedded"
    );
    let mut embedded_median = None;
    let mut failed = false;
    for (name, url) in &stores {
        let store =
            open_store(&parse_store_url(url).unwrap()).unwrap_or_else(|e| panic!("{url}: {e}"));
        let seq = format!("{stamp}-claim");
        let mut samples = claim_latencies(&store, &seq);
        samples.sort();
        let pct = |p: f64| samples[((samples.len() - 1) as f64 * p) as usize];
        let median = pct(0.5);
        let base = *embedded_median.get_or_insert(median);
        let target = if *name == "embedded" {
            Duration::from_millis(1)
        } else {
            Duration::from_millis(10)
        };
        let ok = median <= target;
        failed |= !ok;
        println!(
            "{name:<10} {:>10} {:>10} {:>10} {:>11.1}x   <= {} ms median: {}",
            fmt(median),
            fmt(pct(0.9)),
            fmt(pct(0.99)),
            median.as_secs_f64() / base.as_secs_f64(),
            target.as_millis(),
            if ok { "met" } else { "MISSED" }
        );
    }

    println!();
    println!("{ATTACHERS} processes attaching at once to a 128-node sequencer (each: connect, claim, reserve, mint one ID)");
    println!(
        "{:<10} {:>12} {:>14} {:>14}   target",
        "store", "all done in", "slowest open", "median open"
    );
    for (name, url) in &stores {
        let store = open_store(&parse_store_url(url).unwrap()).unwrap();
        let seq = format!("{stamp}-attach");
        let config = SequencerConfig {
            layout: layout_text(&Layout::twitter()),
            nodes: 128,
        };
        store
            .create_sequencer(&seq, &config, SystemTime.unix_ns() / 1_000_000)
            .unwrap();
        let sep = if url.contains('?') { '&' } else { '?' };
        let source = format!("{url}{sep}sequencer={seq}&ttl=10s");
        let exe = std::env::current_exe().unwrap();
        let t0 = Instant::now();
        let mut children: Vec<_> = (0..ATTACHERS)
            .map(|_| {
                Command::new(&exe)
                    .env("SNOWMINT_BENCH_ATTACH", &source)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        let mut opens = Vec::new();
        let mut nodes = std::collections::HashSet::new();
        let mut errors = Vec::new();
        for child in children.iter_mut() {
            let mut line = String::new();
            let _ = BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line);
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.first() {
                Some(&"ok") => {
                    nodes.insert(words[1].parse::<u64>().unwrap());
                    opens.push(Duration::from_micros(words[3].parse().unwrap()));
                }
                _ => errors.push(line.trim().to_string()),
            }
        }
        let all = t0.elapsed();
        opens.sort();
        let ok = errors.is_empty() && all <= Duration::from_secs(2);
        failed |= !ok;
        println!(
            "{name:<10} {:>12} {:>14} {:>14}   all {ATTACHERS} within 2 s: {}{}",
            fmt(all),
            opens.last().map_or("-".into(), |d| fmt(*d)),
            opens.get(opens.len() / 2).map_or("-".into(), |d| fmt(*d)),
            if ok { "met" } else { "MISSED" },
            if errors.is_empty() {
                String::new()
            } else {
                format!(" ({} failed: {:?})", errors.len(), errors.first())
            }
        );
        for mut child in children {
            drop(child.stdin.take());
            let _ = child.wait();
        }
        if errors.is_empty() && nodes.len() != ATTACHERS {
            println!(
                "{name}: only {} distinct node IDs among {ATTACHERS} holders at once",
                nodes.len()
            );
            failed = true;
        }
        let record = store.sequencer(&seq).unwrap().expect("created above");
        store.destroy_sequencer(&seq, record.incarnation).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
    if failed {
        println!("\nsome targets were missed (see above)");
    }
}

fn claim_latencies(store: &Arc<dyn Store>, seq: &str) -> Vec<Duration> {
    let config = SequencerConfig {
        layout: layout_text(&Layout::twitter()),
        nodes: 1024,
    };
    let record = store
        .create_sequencer(seq, &config, SystemTime.unix_ns() / 1_000_000)
        .unwrap();
    let mut samples = Vec::with_capacity(CLAIMS);
    for i in 0..CLAIMS + 20 {
        let t0 = Instant::now();
        let claim = store
            .claim(&ClaimRequest {
                sequencer: seq,
                incarnation: record.incarnation,
                nodes: 1024,
                start: (i as u64 * 37) % 1024,
                ttl_ms: 10_000,
                holder: "bench",
                now_unix_ms: SystemTime.unix_ns() / 1_000_000,
            })
            .unwrap()
            .expect("a free node ID");
        let took = t0.elapsed();
        store.release(&claim).unwrap();
        if i >= 20 {
            samples.push(took);
        }
    }
    samples
}

fn fmt(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{} µs", d.as_micros())
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1000.0)
    }
}
