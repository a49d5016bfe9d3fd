//! Counters of the service and their Prometheus text exposition (format 0.0.4).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use crate::leases::Gauges;
use crate::Route;

/// HTTP requests by route and status (the generator's counters come from its `stats()`).
#[derive(Debug, Default)]
pub struct Metrics {
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
    pub fn count(&self, route: Route, status: u16) {
        *self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((route, status))
            .or_insert(0) += 1;
    }

    pub fn render(&self, stats: snowmint::Stats, leases: Option<&Gauges>) -> String {
        let mut out = String::with_capacity(2048);
        let counters: [(&str, &str, u64); 5] = [
            (
                "snowmint_ids_minted_total",
                "IDs minted by the service's generator.",
                stats.minted,
            ),
            (
                "snowmint_batches_total",
                "Batches the service's generator minted.",
                stats.batches,
            ),
            (
                "snowmint_borrowed_ticks_total",
                "Ticks the generator moved to ahead of the clock.",
                stats.borrowed_ticks,
            ),
            (
                "snowmint_waits_total",
                "Sleeps the generator took for the clock.",
                stats.waits,
            ),
            (
                "snowmint_clock_regressions_total",
                "Clock readings below the last one seen, in whole ticks.",
                stats.regressions,
            ),
        ];
        for (name, help, v) in counters {
            head(&mut out, name, "counter", help);
            let _ = writeln!(out, "{name} {v}");
        }
        head(
            &mut out,
            "snowmint_wait_seconds_total",
            "counter",
            "Time the generator slept for the clock, seconds.",
        );
        let _ = writeln!(
            out,
            "snowmint_wait_seconds_total {}",
            stats.wait_ns as f64 / 1e9
        );
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
