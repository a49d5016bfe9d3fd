//! The server stores when the server goes away (stopped, paused) or one etcd member fails, against
//! REAL servers started by `scripts/servers.sh` (run through `coord/test.sh`). These tests stop and
//! restart the servers, so they run one at a time (a lock), and in a test binary of their own (cargo
//! runs test binaries one after another), apart from every test that needs the servers up.

mod support;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, Options};
use snowmint_coord::{LeaseOptions, Sequencer, SequencerState, SystemTime};
use support::*;

/// The child side of [`support::spawn_holder`].
#[test]
fn holder_child() {
    holder_main();
}

/// Held by each test: one server outage at a time.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A holder's claim renewals and reservations cannot reach the store: it mints on up to its durable
/// reservation, then fails with LEASE_LOST within a bounded time (never hangs, never mints past it);
/// once the store is back, a new claim mints again, after everything minted before.
fn store_gone_then_back(kind: Kind, how: &str, back: &str) {
    let _one = one_at_a_time();
    let source = one_node_source(kind, "outage");
    let mut a = spawn_holder(&source).unwrap();
    let mut ids = a.mint(1000).ids;
    a.send("run 30000");
    std::thread::sleep(Duration::from_millis(300));
    let stopped = Instant::now();
    server(&format!("{}_{how}", kind.script()));
    let answer = a.answer(Duration::from_secs(60));
    let (code, ms, message) = answer
        .error
        .clone()
        .unwrap_or_else(|| panic!("{kind:?}/{how}: minted on for 30 s"));
    let lost_after = stopped.elapsed();
    eprintln!(
        "{kind:?}/{how}: {} IDs minted after the store went away, LEASE_LOST {lost_after:?} later ({ms} ms into the run): {message}",
        answer.ids.len()
    );
    assert_eq!(code, "LEASE_LOST", "{kind:?}/{how}: {message}");
    // Reservation ahead (4 s) + TTL (2 s) + a keeper round's timeouts, with room for a loaded machine.
    assert!(
        lost_after < Duration::from_secs(15),
        "{kind:?}/{how}: LEASE_LOST only after {lost_after:?}"
    );
    assert!(
        !answer.ids.is_empty(),
        "{kind:?}/{how}: minting stopped at once instead of running to the reservation"
    );
    ids.extend(&answer.ids);
    // Still lost (it never mints again on this lease).
    let again = a.mint(1);
    assert_eq!(again.error.map(|e| e.0).as_deref(), Some("LEASE_LOST"));
    server(&format!("{}_{back}", kind.script()));
    let back_at = Instant::now();
    let allowed = ["NODE_IDS_EXHAUSTED", "STORE_UNAVAILABLE"];
    let mut b = holder_when_free(&source, Duration::from_secs(20), &allowed);
    eprintln!(
        "{kind:?}/{how}: a new holder claimed {:?} after the store came back",
        back_at.elapsed()
    );
    let after = b.mint(2000);
    assert!(after.error.is_none(), "{:?}", after.error);
    assert!(
        after.ids[0] > *ids.last().unwrap(),
        "{kind:?}/{how}: the new holder starts after the old reservation"
    );
    ids.extend(after.ids);
    assert_unique(&ids);
    b.quit();
    drop(a);
}

#[test]
fn etcd_stopped_while_a_holder_mints() {
    if servers().contains(&Kind::Etcd) {
        store_gone_then_back(Kind::Etcd, "stop", "restart");
    }
}

#[test]
fn postgres_stopped_while_a_holder_mints() {
    if servers().contains(&Kind::Postgres) {
        store_gone_then_back(Kind::Postgres, "stop", "restart");
    }
}

#[test]
fn postgres_paused_while_a_holder_mints() {
    // A stopped server process: connections are accepted by the kernel but never answered; the
    // statement timeouts keep the holder from hanging.
    if servers().contains(&Kind::Postgres) {
        store_gone_then_back(Kind::Postgres, "pause", "resume");
    }
}

#[test]
fn etcd_paused_while_a_holder_mints() {
    if servers().contains(&Kind::Etcd) {
        store_gone_then_back(Kind::Etcd, "pause", "resume");
    }
}

/// One member of a 3-member cluster fails (stopped: connections refused; then paused: connections
/// accepted, never answered): holders fail over to the others within their TTL and keep their leases;
/// new claims succeed.
#[test]
fn etcd_fails_over_between_endpoints() {
    if !servers().contains(&Kind::Etcd) {
        return;
    }
    let _one = one_at_a_time();
    let endpoints = std::env::var("SNOWMINT_TEST_ETCD_ENDPOINTS").unwrap();
    assert!(
        endpoints.split(',').count() >= 3,
        "the harness runs a 3-member cluster: {endpoints}"
    );
    let url = fresh_url(Kind::Etcd, "failover");
    let source = with_params(&url, "sequencer=default&ttl=2s");
    let mut a = spawn_holder(&source).unwrap();
    let mut ids = a.mint(1000).ids;
    for (down, up) in [
        ("etcd_stop 1", "etcd_restart 1"),
        // A moved to member 2 when member 1 stopped: now the member it talks to stops answering.
        ("etcd_pause 2", "etcd_resume 2"),
    ] {
        server(down);
        // Longer than the TTL and the reservation ahead: only renewals through another member keep it.
        let run = a.command("run 8000", Duration::from_secs(30));
        assert!(run.error.is_none(), "{down}: {:?}", run.error);
        ids.extend(run.ids);
        let mut b = spawn_holder(&source).unwrap_or_else(|e| panic!("{down}: {e:?}"));
        assert_ne!(b.node_id, a.node_id);
        ids.extend(b.mint(1000).ids);
        b.quit();
        server(up);
    }
    assert_unique(&ids);
    a.quit();
}

/// The same process, through a `Sequencer` handle and the same store object: minting stops with
/// LEASE_LOST while the store is down, and `attach()` claims again once it is back (the store
/// reconnects by itself); nothing minted twice.
fn sequencer_reattaches_in_process(kind: Kind) {
    let _one = one_at_a_time();
    let store = open(&fresh_url(kind, "reattach"));
    let lease = LeaseOptions {
        ttl: Duration::from_secs(2),
        ..LeaseOptions::default()
    };
    let seq = Sequencer::create_with(
        store,
        Arc::new(SystemTime),
        "r",
        Layout::twitter(),
        1,
        Options::default(),
        lease,
    )
    .unwrap();
    seq.attach().unwrap();
    let mut ids: Vec<u64> = (0..1000).map(|_| seq.next_id().unwrap()).collect();
    let stopped = Instant::now();
    server(&format!("{}_stop", kind.script()));
    let error = loop {
        match seq.next_id() {
            Ok(id) => ids.push(id),
            Err(e) => break e,
        }
        assert!(
            stopped.elapsed() < Duration::from_secs(15),
            "{kind:?}: minted on for 15 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(error.code(), ErrorCode::LeaseLost, "{kind:?}: {error}");
    assert_eq!(seq.state(), SequencerState::Detached, "{kind:?}");
    server(&format!("{}_restart", kind.script()));
    let back = Instant::now();
    loop {
        match seq.attach() {
            Ok(()) => break,
            Err(e) => assert!(
                matches!(
                    e.code(),
                    ErrorCode::StoreUnavailable | ErrorCode::NodeIdsExhausted
                ),
                "{kind:?}: {e}"
            ),
        }
        assert!(
            back.elapsed() < Duration::from_secs(20),
            "{kind:?}: no attach after the store came back"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let last = *ids.last().unwrap();
    let after: Vec<u64> = (0..1000).map(|_| seq.next_id().unwrap()).collect();
    assert!(
        after[0] > last,
        "{kind:?}: re-attached below the old reservation"
    );
    ids.extend(after);
    assert_unique(&ids);
    seq.detach().unwrap();
}

#[test]
fn etcd_sequencer_reattaches_after_an_outage() {
    if servers().contains(&Kind::Etcd) {
        sequencer_reattaches_in_process(Kind::Etcd);
    }
}

#[test]
fn postgres_sequencer_reattaches_after_an_outage() {
    if servers().contains(&Kind::Postgres) {
        sequencer_reattaches_in_process(Kind::Postgres);
    }
}
