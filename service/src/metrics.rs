//! Counters of the service and their Prometheus text exposition (format 0.0.4).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::leases::Gauges;
use crate::Route;

/// Counted by the service itself (until the core's generators report `stats()`).
#[derive(Debug, Default)]
pub struct Metrics {
    minted: AtomicU64,
    batches: AtomicU64,
    requests: Mutex<BTreeMap<(Route, u16), u64>>,
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

impl Metrics {
    pub fn minted(&self, count: u64) {
        self.minted.fetch_add(count, Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count(&self, route: Route, status: u16) {
        *self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((route, status))
            .or_insert(0) += 1;
    }

    pub fn render(&self, leases: Option<&Gauges>) -> String {
        let mut out = String::with_capacity(2048);
        let counters: [(&str, &str, u64); 6] = [
            (
                "snowmint_ids_minted_total",
                "IDs minted by the service's generator.",
                self.minted.load(Ordering::Relaxed),
            ),
            (
                "snowmint_batches_total",
                "Batches minted (one per POST /v1/ids answered 200).",
                self.batches.load(Ordering::Relaxed),
            ),
            (
                "snowmint_borrowed_ticks_total",
                "Ticks the generator borrowed ahead of the clock.",
                0,
            ),
            (
                "snowmint_waits_total",
                "Times the generator waited for the clock.",
                0,
            ),
            (
                "snowmint_wait_seconds_total",
                "Time the generator spent waiting for the clock, seconds.",
                0,
            ),
            (
                "snowmint_clock_regressions_total",
                "Times the generator saw the clock step backwards.",
                0,
            ),
        ];
        for (name, help, v) in counters {
            head(&mut out, name, "counter", help);
            let _ = writeln!(out, "{name} {v}");
        }
        head(
            &mut out,
            "snowmint_http_requests_total",
            "counter",
            "HTTP requests answered, by route and status.",
        );
        for ((route, status), n) in self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "snowmint_http_requests_total{{route=\"{}\",status=\"{status}\"}} {n}",
                escape(route.label())
            );
        }
        head(
            &mut out,
            "snowmint_leases_active",
            "gauge",
            "Live client leases on the client sequencer (from the store).",
        );
        let _ = writeln!(
            out,
            "snowmint_leases_active {}",
            leases.map_or(0, |g| g.active)
        );
        head(
            &mut out,
            "snowmint_lease_holders",
            "gauge",
            "Live claims per sequencer (from the store).",
        );
        if let Some(g) = leases {
            for (name, n) in &g.holders {
                let _ = writeln!(
                    out,
                    "snowmint_lease_holders{{sequencer=\"{}\"}} {n}",
                    escape(name)
                );
            }
        }
        head(
            &mut out,
            "snowmint_store_up",
            "gauge",
            "1 if the store answered the last metrics scrape, 0 if not (absent without a store).",
        );
        if let Some(g) = leases {
            let _ = writeln!(out, "snowmint_store_up {}", u8::from(g.error.is_none()));
        }
        out
    }
}
