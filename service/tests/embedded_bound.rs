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

/// The two-node client sequencer `few` of the embedded store `url` (`snowmint sequencer create few
/// --nodes 2`): the service's `--node 1` holds node 1, so every client lease is node 0.
fn create_few(url: &str, layout: Layout) {
    let store =
        snowmint_coord::source::open_store(&snowmint_coord::source::parse_store_url(url).unwrap())
            .unwrap();
    Sequencer::create_with(
        store,
        Arc::new(SystemTime),
        "few",
        layout,
        2,
        Options::default(),
        LeaseOptions::default(),
    )
    .unwrap();
}

/// A client lease from a service started on `url` (`--node 1 --leases URL --client-sequencer few`),
/// the service stopped after it (its own claim released: a restart): node ID, start and limit.
fn lease_and_stop(url: &str) -> (u64, u64, u64) {
    let mut config = common::config("1");
    config.leases = Some(url.to_string());
    config.client_sequencer = Some("few".into());
    let service = Service::open(config).unwrap_or_else(|e| panic!("{url}: {e}"));
    let mut s = InProcess::start(service);
    let r = Conn::open(s.addr).request("POST", "/v1/leases", b"{\"holder\": \"offline tab\"}");
    assert_eq!(r.status, 201, "{}", r.text());
    let a = r.json();
    let num = |f: &str| -> u64 { a[f].as_str().unwrap().parse().unwrap() };
    let lease = (a["node_id"].as_u64().unwrap(), num("start"), num("limit"));
    s.stop();
    lease
}

/// A client lease taken after the embedded store's history was lost starts above `now + max_ahead`
/// (SPEC §3.2), so above everything a client of the lost history minted offline (at most its limit,
/// `max_ahead` past its clock). The history is lost twice over: the directory deleted and made again
/// (`rm -rf`, the sequencer created anew), and a `cp -a` backup from before the first lease restored;
/// the service restarted on it each time. Before the fix the second client started from the store's
/// reservation or the clock, and minted every one of its first IDs again.
#[test]
fn a_client_lease_after_a_lost_history_starts_above_what_a_client_minted_offline() {
    let layout = Layout::twitter();
    let sb = layout.sequence_bits();
    let id_at = |node: u64, p: u64| layout.compose(p >> sb, node, p & ((1 << sb) - 1)).unwrap();
    let mut failed = Vec::new();
    for how in ["deleted and made again", "restored from a backup"] {
        let dir = TempDir::new("lost-history");
        let url = dir.url("");
        create_few(&url, layout);
        let backup = dir.0.with_extension("backup");
        let _ = std::fs::remove_dir_all(&backup);
        if how.starts_with("restored") {
            let ok = std::process::Command::new("cp")
                .arg("-a")
                .arg(&dir.0)
                .arg(&backup)
                .status()
                .unwrap();
            assert!(ok.success(), "cp -a");
        }
        // The first client mints offline up to its limit, up to max_ahead past the clock.
        let (node, _, limit) = lease_and_stop(&url);
        let first_highest = id_at(node, limit - 1);
        std::fs::remove_dir_all(&dir.0).unwrap();
        if how.starts_with("restored") {
            std::fs::rename(&backup, &dir.0).unwrap();
        } else {
            std::fs::create_dir_all(&dir.0).unwrap();
            create_few(&url, layout);
        }
        // The second client, on the same node ID, mints its first IDs: from its start, or its clock's
        // tick if later, below its limit.
        let (node2, start, limit2) = lease_and_stop(&url);
        assert_eq!(node2, node, "{how}: the client leases are both node {node}");
        let clock = layout.tick_at_ns(now_ms() * 1_000_000).unwrap() << sb;
        let from = start.max(clock);
        let minted: Vec<u64> = (from..limit2.min(from + 1_000))
            .map(|p| id_at(node, p))
            .collect();
        let again = minted.iter().filter(|&&id| id <= first_highest).count();
        let common = limit.saturating_sub(from).min(limit2.saturating_sub(from));
        if again > 0 {
            failed.push(format!(
                "{how}: {again} of the second client's first {} IDs are at or below the first client's highest {first_highest} ({common} IDs both could mint)",
                minted.len()
            ));
        }
        let _ = std::fs::remove_dir_all(&backup);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
