//! Range sequences (SPEC §4), one run, side by side: `next_id()` from a held range against what users do
//! today for 32-bit IDs, a PostgreSQL sequence (`SELECT nextval(…)` per ID from Rust, same machine), the
//! ratio printed; then a sustained run of 10^7 IDs with pre-allocation sized to the rate, timing every
//! call, reporting the slowest and how many times minting waited for a range (`stats().late`).
//!
//! Run through `coord/bench-servers.sh` (starts PostgreSQL and etcd; the global and datacenter rows live
//! on them). Targets (issue 15): next_id ≤ 10 ns; ≥ 1000× nextval; no wait in the sustained run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint_coord::{RangeOptions, RangeSequence};

const HELD: u64 = 20_000_000;
const NEXTVAL_CALLS: u32 = 3_000;
const SUSTAINED: u64 = 10_000_000;

fn main() {
    let pg = std::env::var("SNOWMINT_TEST_POSTGRES_URL")
        .expect("SNOWMINT_TEST_POSTGRES_URL (run coord/bench-servers.sh)");
    let etcd = std::env::var("SNOWMINT_TEST_ETCD_URL").unwrap_or_else(|_| pg.clone());
    let name = format!("bench{}", std::process::id());

    // 1. next_id from a held range: one process range larger than the whole run (no range switch).
    let seq = RangeSequence::open_urls(
        &name,
        "eu",
        &etcd,
        &pg,
        RangeOptions {
            dc_range: 200_000_000,
            process_range: 50_000_000,
            ..RangeOptions::default()
        },
    )
    .expect("open");
    let mut best = f64::MAX;
    let mut sink = 0u64;
    for _ in 0..5 {
        let t0 = Instant::now();
        for _ in 0..HELD / 5 {
            sink ^= std::hint::black_box(seq.next_id().unwrap());
        }
        best = best.min(t0.elapsed().as_nanos() as f64 / (HELD / 5) as f64);
    }
    drop(seq);

    // 2. PostgreSQL nextval() per ID from Rust (tokio-postgres, prepared statement, 127.0.0.1).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let nextval_ns = rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(&pg, tokio_postgres::NoTls)
            .await
            .expect("connect to PostgreSQL");
        tokio::spawn(async move {
            let _ = conn.await;
        });
        client
            .batch_execute(&format!(
                "CREATE SEQUENCE IF NOT EXISTS {name}_seq AS integer"
            ))
            .await
            .unwrap();
        let stmt = client
            .prepare(&format!("SELECT nextval('{name}_seq')"))
            .await
            .unwrap();
        for _ in 0..200 {
            client.query_one(&stmt, &[]).await.unwrap();
        }
        let t0 = Instant::now();
        for _ in 0..NEXTVAL_CALLS {
            let row = client.query_one(&stmt, &[]).await.unwrap();
            std::hint::black_box(row.get::<_, i64>(0));
        }
        t0.elapsed().as_nanos() as f64 / NEXTVAL_CALLS as f64
    });

    // 3. Sustained: 10^7 IDs through process ranges of 10^6 (10 range switches, each pre-allocated at
    // 50 % in the background; a range lasts ~100 ms at this rate, a fetch takes a few ms), every call
    // timed.
    let seq = Arc::new(
        RangeSequence::open_urls(
            &format!("{name}s"),
            "eu",
            &etcd,
            &pg,
            RangeOptions {
                dc_range: 10_000_000,
                process_range: 1_000_000,
                ..RangeOptions::default()
            },
        )
        .expect("open"),
    );
    let mut slowest = Duration::ZERO;
    let mut over_1us = 0u64;
    let t_all = Instant::now();
    for _ in 0..SUSTAINED {
        let t0 = Instant::now();
        sink ^= std::hint::black_box(seq.next_id().unwrap());
        let d = t0.elapsed();
        if d > slowest {
            slowest = d;
        }
        if d > Duration::from_micros(1) {
            over_1us += 1;
        }
    }
    let total = t_all.elapsed();
    let stats = seq.stats();

    println!("range sequences, one run (PostgreSQL 15 and etcd on 127.0.0.1)");
    println!("  next_id from a held range           {best:>10.2} ns   (target ≤ 10 ns)");
    println!(
        "  PostgreSQL nextval() per ID          {:>10.0} ns",
        nextval_ns
    );
    println!(
        "  ratio nextval / next_id              {:>10.0}×     (target ≥ 1000×)",
        nextval_ns / best
    );
    println!(
        "  sustained 10^7 IDs (every call timed, {} process ranges, {} datacenter ranges): {:.2} s",
        stats.process_ranges,
        stats.dc_ranges,
        total.as_secs_f64()
    );
    println!(
        "    slowest call {:.1} µs; calls over 1 µs: {over_1us}; waits for a range (late): {} ({} µs)",
        slowest.as_nanos() as f64 / 1000.0,
        stats.late,
        stats.wait_ns / 1000
    );
    std::hint::black_box(sink);
    if stats.late > 0 {
        println!(
            "    NOT MET: minting waited for a range {} times",
            stats.late
        );
    }
}
