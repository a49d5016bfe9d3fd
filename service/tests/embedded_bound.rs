//! The embedded store's bound on what any holder mints ahead of the clock (`max_ahead`, 1 s unless the
//! store URL says `file:///DIR?max_ahead=30s`) covers the ID service's client leases too (issue 39): a
//! client lease reaches no further ahead of the clock than the bound, so that after the directory's
//! history is lost a new holder of the same node ID, which starts above `now + max_ahead`, never
//! mints below what the client could have minted offline. Before: a client lease reached
//! `--lease-reservation` (60 s) ahead whatever the store's bound, and the new holder minted inside it.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{now_ms, Conn, InProcess, TempDir};
use snowmint::{Layout, Options};
use snowmint_coord::{LeaseOptions, Sequencer, SystemTime};
use snowmint_service::Service;

/// Takes a client lease from a service on the embedded store `url` (`--node 1 --store URL`, the
/// default 60 s reservation); answers the lease's node ID, its last position and `limit_unix_ms`, and
/// the service's notice.
fn client_lease(url: &str) -> (u64, u64, u64, Option<String>) {
    let mut config = common::config("1");
    config.leases = Some(url.to_string());
    let service = Service::open(config).unwrap_or_else(|e| panic!("{url}: {e}"));
    let notice = service.notice().map(str::to_string);
    let s = InProcess::start(service);
    let mut c = Conn::open(s.addr);
    let r = c.request("POST", "/v1/leases", b"{\"holder\": \"offline tab\"}");
    assert_eq!(r.status, 201, "{}", r.text());
    let a = r.json();
    let limit: u64 = a["limit"].as_str().unwrap().parse().unwrap();
    (
        a["node_id"].as_u64().unwrap(),
        limit,
        a["limit_unix_ms"].as_u64().unwrap(),
        notice,
    )
}

#[test]
fn a_client_lease_reaches_no_further_than_the_embedded_stores_bound() {
    let layout = Layout::twitter();
    for (query, bound_ms) in [("", 1_000u64), ("?max_ahead=5s", 5_000)] {
        let dir = TempDir::new("bound");
        let url = dir.url(query);
        let taken_ms = now_ms();
        let (node, limit, limit_ms, notice) = client_lease(&url);
        // The directory's history lost (the service gone, the directory emptied: `rm -rf` and
        // created again, or a backup from before restored), then a new holder of that node ID.
        std::fs::remove_dir_all(&dir.0).unwrap();
        std::fs::create_dir_all(&dir.0).unwrap();
        let store = snowmint_coord::source::open_store(
            &snowmint_coord::source::parse_store_url(&url).unwrap(),
        )
        .unwrap();
        let seq = Sequencer::create_with(
            store,
            Arc::new(SystemTime),
            "clients",
            layout,
            layout.node_count(),
            Options::default(),
            LeaseOptions {
                node: Some(node),
                ..LeaseOptions::default()
            },
        )
        .unwrap();
        seq.attach().unwrap();
        let id = seq.next_id().unwrap();
        let seq_bits = layout.sequence_bits();
        let position =
            ((id >> (seq_bits + layout.node_bits())) << seq_bits) | (id & ((1 << seq_bits) - 1));
        assert!(
            position > limit,
            "{url}: the new holder of node {node} minted at position {position}, inside what the client lease could mint offline (up to {limit})"
        );
        seq.detach().unwrap();
        // A tick past the bound at most (the end of the tick `max_ahead` past the clock).
        assert!(
            limit_ms <= taken_ms + bound_ms + 1_000,
            "{url}: the client lease reaches {} ms ahead of the clock, past the store's max_ahead ({bound_ms} ms)",
            limit_ms.saturating_sub(taken_ms)
        );
        // And as far as the bound: a browser mints offline for `max_ahead`.
        assert!(
            limit_ms + 1_000 >= taken_ms + bound_ms,
            "{url}: the client lease reaches only {} ms ahead",
            limit_ms.saturating_sub(taken_ms)
        );
        let notice =
            notice.unwrap_or_else(|| panic!("{url}: no notice of the clipped reservation"));
        assert!(
            notice.contains(&format!("{bound_ms} ms ahead")) && notice.contains("max_ahead="),
            "{notice}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
