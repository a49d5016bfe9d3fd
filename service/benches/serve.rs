//! Throughput of `POST /v1/ids?count=1000` to keep-alive batch clients on 127.0.0.1 (the service in this
//! process on a real socket, raw HTTP/1.1 clients on their own threads): IDs per second, for 2, 3 and 4
//! connections. Target (issue #17): at least 10^7 IDs/s on this machine, sustained. The twitter layout
//! mints only 4.096 million IDs per second of clock on one node (a faster service runs ahead of the clock,
//! up to 2 s, then answers 503 TOO_FAR_AHEAD), so the service here uses a layout of 16 sequence bits
//! (65.5 million IDs a second): what is measured is the service, not one node's layout capacity. Each row
//! runs 3 s; refused batches (TOO_FAR_AHEAD) are counted and must stay at 0 for the figure to count.

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Conn, InProcess};
use snowmint::{Layout, LayoutConfig};
use snowmint_coord::SystemTime;
use snowmint_service::Service;

fn main() {
    println!("snowmint serve: POST /v1/ids?count=1000, keep-alive clients on 127.0.0.1");
    for conns in [2, 3, 4] {
        let mut config = common::config("1");
        config.layout = Layout::new(LayoutConfig {
            timestamp_bits: 41,
            node_bits: 6,
            sequence_bits: 16,
            ..LayoutConfig::default()
        })
        .unwrap();
        config.layout_name = snowmint_coord::layout_text(&config.layout);
        let service = Service::open_with(config, Arc::new(SystemTime), None, false).unwrap();
        let s = InProcess::start(service);
        let stop = Arc::new(AtomicBool::new(false));
        let ids = Arc::new(AtomicU64::new(0));
        let refused = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..conns)
            .map(|_| {
                let (stop, ids, refused, addr) =
                    (stop.clone(), ids.clone(), refused.clone(), s.addr);
                std::thread::spawn(move || {
                    let mut c = Conn::open(addr);
                    while !stop.load(Ordering::Relaxed) {
                        let r = c.request("POST", "/v1/ids?count=1000", b"");
                        if r.status == 200 {
                            // Count the IDs in the body without a JSON parse: one comma-separated string each.
                            let n = r.body.iter().filter(|&&b| b == b'"').count() / 2 - 4;
                            ids.fetch_add(n as u64, Ordering::Relaxed);
                        } else {
                            refused.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                })
            })
            .collect();
        let t = Instant::now();
        std::thread::sleep(Duration::from_secs(3));
        stop.store(true, Ordering::Relaxed);
        for th in threads {
            th.join().unwrap();
        }
        let secs = t.elapsed().as_secs_f64();
        let n = ids.load(Ordering::Relaxed) as f64;
        println!(
            "  {conns} connections: {:>12.0} IDs/s ({:.2} x 10^7), {:>6.0} batches/s, {} refused (TOO_FAR_AHEAD)",
            n / secs,
            n / secs / 1e7,
            n / secs / 1000.0,
            refused.load(Ordering::Relaxed)
        );
        drop(s);
        // Let the clock catch up with what the run minted ahead of it before the next row.
        std::thread::sleep(Duration::from_millis(2500));
    }
}
