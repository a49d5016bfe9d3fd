//! Speed of opaque IDs (`Opaque::encode` / `decode`), beside one SipHash-1-3 call of std's
//! `DefaultHasher` (the cost of a middle round's function, two of which, with two multiply-add-shift
//! rounds, make an encode), in one run.
//!
//! Each figure is the fastest of 25 samples of 200 000 calls (the least disturbed by other processes),
//! with the median beside it. Inputs are consecutive IDs, as a generator mints them. With
//! `SNOWMINT_BENCH_OPAQUE_JSON` set, the rows are written there for `scripts/bench-all.sh`.
//!
//! `cargo bench -p snowmint --bench opaque`

use std::hash::{BuildHasher, Hasher};
use std::hint::black_box;
use std::time::Instant;

use snowmint::{Layout, Opaque};

const SAMPLES: usize = 25;
const CALLS: u64 = 200_000;
const BATCH: usize = 4096;

/// (fastest, median) ns per call of `f(n)`, which makes `n` calls.
fn time(mut f: impl FnMut(u64)) -> (f64, f64) {
    f(CALLS); // warm up
    let mut per: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            f(CALLS);
            t.elapsed().as_nanos() as f64 / CALLS as f64
        })
        .collect();
    per.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (per[0], per[SAMPLES / 2])
}

fn main() {
    let key = *b"bench-opaque-key";
    let twitter = Opaque::for_layout(&key, &Layout::twitter()).unwrap();
    let js53 = Opaque::for_layout(&key, &Layout::preset("js53").unwrap()).unwrap();
    let base = 1_541_815_603_606_036_480u64;
    let encode = |o: Opaque| {
        // An ID of the width: the twitter one, shifted down for narrower layouts.
        let start = base >> (63 - o.bits());
        move |n: u64| {
            let mut acc = 0;
            for i in 0..n {
                acc ^= o.encode(black_box(start + i)).unwrap();
            }
            black_box(acc);
        }
    };
    let token0 = twitter.encode(base).unwrap();
    let mut rows: Vec<(&str, &str, (f64, f64))> = vec![
        (
            "Opaque::encode (twitter, 63 bits)",
            "single",
            time(encode(twitter)),
        ),
        (
            "Opaque::decode (twitter, 63 bits)",
            "single",
            time(|n| {
                let mut acc = 0;
                for i in 0..n {
                    acc ^= twitter.decode(black_box(token0 ^ (i & 0xffff))).unwrap();
                }
                black_box(acc);
            }),
        ),
        (
            "Opaque::encode (js53, 53 bits)",
            "single",
            time(encode(js53)),
        ),
    ];
    let mut buf: Vec<u64> = (base..base + BATCH as u64).collect();
    let (fast, median) = time(|n| {
        for _ in 0..n.div_ceil(BATCH as u64) {
            twitter.encode_in_place(black_box(&mut buf)).unwrap();
            twitter.decode_in_place(black_box(&mut buf)).unwrap();
        }
    });
    // Each round of the closure did 2 * BATCH calls per BATCH of n.
    let scale = (CALLS.div_ceil(BATCH as u64) * 2 * BATCH as u64) as f64 / CALLS as f64;
    rows.push((
        "Opaque::encode_in_place + decode_in_place (4096, per ID and way)",
        "batch",
        (fast / scale, median / scale),
    ));
    let hasher = std::collections::hash_map::RandomState::new();
    rows.push((
        "one SipHash-1-3 of a u64 (std DefaultHasher; a round costs about this)",
        "call",
        time(|n| {
            let mut acc = 0;
            for i in 0..n {
                let mut h = hasher.build_hasher();
                h.write_u64(black_box(base + i));
                acc ^= h.finish();
            }
            black_box(acc);
        }),
    ));
    println!("\nopaque IDs: ns per call (fastest of {SAMPLES} samples of {CALLS} calls; median)");
    let head = rows[0].2 .0;
    for (name, _, (fast, median)) in &rows {
        println!(
            "{name:<76} {fast:>7.2} {median:>7.2}   {:.2}x encode",
            fast / head
        );
    }
    let met = if head <= 20.0 { "met" } else { "MISSED" };
    println!("target: encode <= 20 ns: {met}");
    if let Some(path) = std::env::var_os("SNOWMINT_BENCH_OPAQUE_JSON") {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, what, (fast, _))| {
                let kind = if *what == "call" { "floor" } else { "snowmint" };
                serde_json::json!({"name": name, "kind": kind, "what": what, "ns_per_id": fast, "group": "opaque"})
            })
            .collect();
        std::fs::write(path, format!("{:#}\n", serde_json::Value::Array(rows))).unwrap();
    }
}
