//! The Rust core's figures for the C benchmark (bench.sh runs this next to bench/bench.c): one ID from
//! the system clock (plain and shared generator) and batches of 4096, with the same layout, node and
//! counts (twitter, and a layout with room for the loop). Prints "RESULT name ns" lines (best of 9).
use std::hint::black_box;
use std::time::Instant;

use snowmint_core::{Generator, Layout, LayoutConfig, Options, SharedGenerator};

fn best(f: impl Fn() -> f64) -> f64 {
    (0..9).map(|_| f()).fold(f64::INFINITY, f64::min)
}

/// One ID at a time from the system clock: a plain and a shared generator on `layout`, ns per ID.
fn singles(layout: Layout, n: u32) -> (f64, f64) {
    let plain = best(|| {
        let mut g = Generator::new(layout, 7, Options::default()).unwrap();
        let t = Instant::now();
        let mut acc = 0u64;
        for _ in 0..n {
            acc ^= g.next_id().unwrap();
        }
        black_box(acc);
        t.elapsed().as_nanos() as f64 / n as f64
    });
    let shared = best(|| {
        let g = SharedGenerator::new(layout, 7, Options::default()).unwrap();
        let t = Instant::now();
        let mut acc = 0u64;
        for _ in 0..n {
            acc ^= g.next_id().unwrap();
        }
        black_box(acc);
        t.elapsed().as_nanos() as f64 / n as f64
    });
    (plain, shared)
}

fn main() {
    let layout = Layout::twitter();
    let n = 300_000u32;
    let (plain, shared) = singles(layout, n);
    // A layout with room for the loop (2^19 IDs a 1 ms tick, as bench.c's): windows, no borrowed tick.
    let capacity = Layout::new(LayoutConfig {
        timestamp_bits: 39,
        node_bits: 5,
        sequence_bits: 19,
        epoch_ms: 1_700_000_000_000,
        ..LayoutConfig::default()
    })
    .unwrap();
    let (plain_capacity, shared_capacity) = singles(capacity, n);
    let batch = best(|| {
        let g = SharedGenerator::new(layout, 7, Options::default()).unwrap();
        let mut buf = vec![0u64; 4096];
        let t = Instant::now();
        for i in 0..100usize {
            g.next_ids(&mut buf).unwrap();
            black_box(buf[i & 4095]);
        }
        t.elapsed().as_nanos() as f64 / (100.0 * 4096.0)
    });
    println!("RESULT rust_next_id_plain {plain:.3}");
    println!("RESULT rust_next_id_shared {shared:.3}");
    println!("RESULT rust_next_ids_4096_per_id {batch:.3}");
    println!("RESULT rust_next_id_plain_capacity {plain_capacity:.3}");
    println!("RESULT rust_next_id_shared_capacity {shared_capacity:.3}");
}
