//! The Rust holder of the chaos run (scripts/chaos.py), the counterpart of scripts/fleet/worker.py and
//! worker.mjs with SECONDS, through this crate's [`NodeGenerator`]:
//!
//! ```text
//! fleet_worker SOURCE COUNT SECONDS
//! ```
//!
//! mints at most COUNT IDs (twitter layout) in batches of 100, 20 ms apart, for SECONDS, one decimal ID
//! per line, and keeps a node ID whatever happens: while none is free (`NODE_IDS_EXHAUSTED`) or the store
//! is unreachable it tries again every 50 ms; each claim prints `node N token FENCING at UNIX_MS`; a mint
//! that fails (`LEASE_LOST` once the lease is gone) prints `lost N token FENCING CODE` and claims again.

use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use snowmint::{ErrorCode, Layout, Options, Policy};
use snowmint_coord::NodeGenerator;

const BATCH: u64 = 100;
const RETRY: [ErrorCode; 3] = [
    ErrorCode::NodeIdsExhausted,
    ErrorCode::StoreUnavailable,
    ErrorCode::LeaseLost,
];

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// A generator under a new claim, or `None` once `deadline` passed.
fn claim(source: &str, deadline: Instant, out: &mut impl Write) -> Option<(NodeGenerator, u64)> {
    while Instant::now() < deadline {
        // The `wait` policy, as Python's default: a mint at the ceiling waits for the keeper's extension.
        let options = Options {
            policy: Policy::Wait,
            ..Options::default()
        };
        match NodeGenerator::open(source, Layout::twitter(), options) {
            Ok(gen) => {
                let token = gen.lease().map_or(0, |l| l.fencing_token());
                writeln!(out, "node {} token {token} at {}", gen.node_id(), unix_ms()).ok()?;
                out.flush().ok()?;
                return Some((gen, token));
            }
            Err(e) if RETRY.contains(&e.code()) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("{source}: {e}"),
        }
    }
    None
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [source, count, seconds] = &args[..] else {
        eprintln!("usage: fleet_worker SOURCE COUNT SECONDS");
        std::process::exit(2);
    };
    let count: u64 = count.parse().expect("COUNT: a whole number");
    let seconds: f64 = seconds.parse().expect("SECONDS: a number");
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut out = std::io::stdout().lock();
    let mut buf = vec![0u64; BATCH as usize];
    let mut done = 0;
    while done < count && Instant::now() < deadline {
        let Some((gen, token)) = claim(source, deadline, &mut out) else {
            break;
        };
        while done < count && Instant::now() < deadline {
            let n = BATCH.min(count - done) as usize;
            if let Err(e) = gen.next_ids(&mut buf[..n]) {
                writeln!(out, "lost {} token {token} {}", gen.node_id(), e.code()).unwrap();
                out.flush().unwrap();
                break;
            }
            let text: String = buf[..n].iter().map(|id| format!("{id}\n")).collect();
            out.write_all(text.as_bytes()).unwrap();
            out.flush().unwrap();
            done += n as u64;
            std::thread::sleep(Duration::from_millis(20));
        }
        // A lease already lost, or a store unreachable: the claim expires by itself.
        let _ = gen.release();
    }
}
