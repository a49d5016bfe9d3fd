//! The etcd and PostgreSQL stores against REAL servers (started by `scripts/servers.sh`; run through
//! `coord/test.sh`): the store contract, the lease algorithm on them, and many processes.
//! Tests that stop or pause a server live in `servers_outage.rs`.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, Options, Policy};
use snowmint_coord::{
    ClaimRequest, Lease, LeaseOptions, NodeGenerator, OffsetTime, Reservation, Store, SystemTime,
    Time,
};
use support::*;

/// The child side of [`support::spawn_holder`].
#[test]
fn holder_child() {
    holder_main();
}

fn now_ms() -> u64 {
    SystemTime.unix_ns() / 1_000_000
}

fn claim(
    store: &Arc<dyn Store>,
    seq: &str,
    nodes: u64,
    start: u64,
    ttl_ms: u64,
) -> Option<snowmint_coord::Claim> {
    // Claims are taken under a live record: created here on first use (the same record afterwards).
    let record = store
        .create_sequencer(seq, &twitter_config(nodes), now_ms())
        .unwrap();
    store
        .claim(&ClaimRequest {
            sequencer: seq,
            incarnation: record.incarnation,
            nodes,
            start,
            ttl_ms,
            holder: "test",
            now_unix_ms: now_ms(),
        })
        .unwrap()
}

#[test]
fn sequencer_records_conflict_list_destroy_recreate() {
    for kind in servers() {
        let url = fresh_url(kind, "records");
        let store = open(&url);
        let a = store
            .create_sequencer("orders", &twitter_config(8), now_ms())
            .unwrap();
        let again = store
            .create_sequencer("orders", &twitter_config(8), now_ms() + 5)
            .unwrap();
        assert_eq!(
            a, again,
            "{kind:?}: the same config returns the existing record"
        );
        let e = store
            .create_sequencer("orders", &twitter_config(9), now_ms())
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::SequencerConflict, "{kind:?}: {e}");
        assert!(
            e.message().contains("orders") && e.message().contains("8 nodes"),
            "{e}"
        );
        store
            .create_sequencer("a/b%c", &twitter_config(2), now_ms())
            .unwrap();
        let names: Vec<String> = store
            .sequencers()
            .unwrap()
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(names, ["a/b%c", "orders"], "{kind:?}");
        assert_eq!(store.sequencer("orders").unwrap(), Some(a.clone()));
        assert_eq!(store.sequencer("missing").unwrap(), None);
        assert!(store.destroy_sequencer("orders", a.incarnation).unwrap());
        assert!(!store.destroy_sequencer("orders", a.incarnation).unwrap());
        assert_eq!(store.sequencer("orders").unwrap(), None);
        let b = store
            .create_sequencer("orders", &twitter_config(9), now_ms())
            .unwrap();
        assert!(b.incarnation > a.incarnation, "{kind:?}: {b:?} after {a:?}");
        // A second handle on the same store sees the same records.
        let other = open(&url);
        assert_eq!(other.sequencer("orders").unwrap(), Some(b));
    }
}

#[test]
fn claims_tokens_reservations_and_release() {
    for kind in servers() {
        let store = open(&fresh_url(kind, "claims"));
        let seq = "s";
        let claims: Vec<_> = (0..3)
            .map(|i| claim(&store, seq, 3, i * 7, 10_000).unwrap())
            .collect();
        let mut nodes: Vec<u64> = claims.iter().map(|c| c.node_id).collect();
        nodes.sort();
        assert_eq!(nodes, [0, 1, 2], "{kind:?}: distinct node IDs");
        assert!(
            claims.iter().all(|c| c.expires_unix_ms > now_ms()),
            "{kind:?}"
        );
        assert_eq!(claim(&store, seq, 3, 0, 10_000), None, "{kind:?}: all held");
        let c0 = claims.iter().find(|c| c.node_id == 0).unwrap().clone();
        let r = Reservation {
            position: u64::MAX - 5, // every bit of a u64 survives the store
            layout_fingerprint: 77,
            until_unix_ms: now_ms() + 4000,
        };
        store.reserve(&c0, &r).unwrap();
        assert_eq!(store.reservation(seq, 0).unwrap(), Some(r));
        assert_eq!(store.reservation(seq, 1).unwrap(), None);
        let renewed = store.renew(&c0, 10_000, now_ms()).unwrap();
        assert_eq!((renewed.node_id, renewed.token), (c0.node_id, c0.token));
        // Release, re-claim: the same node ID under a greater fencing token; the old claim is fenced off.
        store.release(&c0).unwrap();
        let c0b = claim(&store, seq, 3, 0, 10_000).unwrap();
        assert_eq!(c0b.node_id, 0);
        assert!(
            c0b.token > c0.token,
            "{kind:?}: {} then {}",
            c0.token,
            c0b.token
        );
        let e = store
            .reserve(&c0, &Reservation { position: 1, ..r })
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::LeaseLost, "{kind:?}: {e}");
        assert_eq!(
            store.renew(&c0, 10_000, now_ms()).unwrap_err().code(),
            ErrorCode::LeaseLost
        );
        store.release(&c0).unwrap(); // no effect on the new claim
                                     // Never moved back under a layout, whoever writes: the stored reservation covers position 9
                                     // (the write succeeds and changes nothing); under another layout a write replaces it.
        store
            .reserve(&c0b, &Reservation { position: 9, ..r })
            .unwrap();
        assert_eq!(store.reservation(seq, 0).unwrap(), Some(r), "{kind:?}");
        store
            .reserve(
                &c0b,
                &Reservation {
                    position: 9,
                    layout_fingerprint: 78,
                    ..r
                },
            )
            .unwrap();
        // The reservation survives release and the sequencer's destruction.
        let record = store
            .create_sequencer(seq, &twitter_config(3), now_ms())
            .unwrap();
        store.release(&c0b).unwrap();
        assert!(store.destroy_sequencer(seq, record.incarnation).unwrap());
        assert_eq!(store.reservation(seq, 0).unwrap().unwrap().position, 9);
        // The destroy ended every claim of the name (held ones included): only the reservation is left,
        // and the fenced-off holders can neither renew nor reserve.
        let holders = store.holders(seq, now_ms()).unwrap();
        let ids: Vec<u64> = holders.iter().map(|h| h.node_id).collect();
        assert_eq!(ids, [0], "{kind:?}: {holders:?}");
        assert!(
            holders[0].claim.is_none() && holders[0].reservation.is_some(),
            "{holders:?}"
        );
        let c1 = claims.iter().find(|c| c.node_id == 1).unwrap();
        assert_eq!(
            store.reserve(c1, &r).unwrap_err().code(),
            ErrorCode::LeaseLost,
            "{kind:?}"
        );
    }
}

#[test]
fn an_expired_claim_is_taken_and_fenced_off() {
    for kind in servers() {
        let store = open(&fresh_url(kind, "expiry"));
        let old = claim(&store, "s", 1, 0, 1000).unwrap();
        assert_eq!(claim(&store, "s", 1, 0, 1000), None);
        // Judged by the store's clock (etcd: lease TTLs in whole seconds, at least its minimum).
        let t0 = Instant::now();
        let new = loop {
            if let Some(c) = claim(&store, "s", 1, 0, 5000) {
                break c;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "{kind:?}: never expired"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        eprintln!(
            "{kind:?}: a 1 s claim was free again after {:?}",
            t0.elapsed()
        );
        assert!(new.token > old.token);
        let r = Reservation {
            position: 1,
            layout_fingerprint: 1,
            until_unix_ms: 1,
        };
        assert_eq!(
            store.reserve(&old, &r).unwrap_err().code(),
            ErrorCode::LeaseLost,
            "{kind:?}"
        );
        assert_eq!(
            store.renew(&old, 1000, now_ms()).unwrap_err().code(),
            ErrorCode::LeaseLost,
            "{kind:?}"
        );
        store.reserve(&new, &r).unwrap();
    }
}

/// The lease algorithm on the server stores, with an injected clock minutes behind.
#[test]
fn a_new_holder_with_its_clock_behind_never_repeats_an_id() {
    for kind in servers() {
        let store = open(&fresh_url(kind, "behind"));
        let rec = store
            .create_sequencer("default", &twitter_config(1), now_ms())
            .unwrap();
        let opts = LeaseOptions {
            ttl: Duration::from_secs(5),
            ..LeaseOptions::default()
        };
        let a = Lease::acquire(
            store.clone(),
            Arc::new(SystemTime),
            rec.clone(),
            Layout::twitter(),
            Options::default(),
            opts.clone(),
        )
        .unwrap();
        let ids_a: Vec<u64> = (0..2000).map(|_| a.next_id().unwrap()).collect();
        let token_a = a.fencing_token();
        drop(a);
        let behind: Arc<dyn Time> = Arc::new(OffsetTime::new(-10_000_000_000));
        let wait = Options {
            policy: Policy::Wait,
            ..Options::default()
        };
        let b = Lease::acquire(
            store.clone(),
            behind,
            rec.clone(),
            Layout::twitter(),
            wait,
            opts.clone(),
        )
        .unwrap();
        assert!(b.fencing_token() > token_a, "{kind:?}");
        let ids_b: Vec<u64> = (0..2000).map(|_| b.next_id().unwrap()).collect();
        assert!(
            ids_b[0] > *ids_a.last().unwrap(),
            "{kind:?}: B starts after A's reservation"
        );
        drop(b);
        let minutes: Arc<dyn Time> = Arc::new(OffsetTime::new(-300_000_000_000));
        let fail = Options {
            policy: Policy::Fail,
            ..Options::default()
        };
        let c = Lease::acquire(store.clone(), minutes, rec, Layout::twitter(), fail, opts).unwrap();
        match c.next_id() {
            Ok(id) => assert!(id > *ids_b.last().unwrap(), "{kind:?}"),
            Err(e) => assert_eq!(e.code(), ErrorCode::TooFarAhead, "{kind:?}: {e}"),
        }
        let mut all = ids_a;
        all.extend(ids_b);
        assert_unique(&all);
    }
}

#[test]
fn sixteen_processes_claim_distinct_node_ids() {
    for kind in servers() {
        let url = fresh_url(kind, "many");
        open(&url)
            .create_sequencer("fleet", &twitter_config(20), now_ms())
            .unwrap();
        let source = with_params(&url, "sequencer=fleet&ttl=10s");
        let mut holders: Vec<Holder> = (0..16).map(|_| start_holder(&source)).collect();
        for h in holders.iter_mut() {
            h.ready().unwrap_or_else(|e| panic!("{kind:?}: {e:?}"));
        }
        let mut nodes: Vec<u64> = holders.iter().map(|h| h.node_id).collect();
        nodes.sort();
        nodes.dedup();
        assert_eq!(
            nodes.len(),
            16,
            "{kind:?}: node IDs held at once: {nodes:?}"
        );
        let mut all = Vec::new();
        for h in holders.iter_mut() {
            let a = h.mint(2000);
            assert!(a.error.is_none(), "{kind:?}: {:?}", a.error);
            assert!(a.ids.iter().all(|&id| node_of(id) == h.node_id));
            all.extend(a.ids);
        }
        assert_eq!(all.len(), 32_000);
        assert_unique(&all);
        // The 17th … 20th take the rest; the 21st finds none.
        let more: Vec<Holder> = (0..4).map(|_| spawn_holder(&source).unwrap()).collect();
        let (code, message) = spawn_holder(&source).err().expect("all 20 held");
        assert_eq!(code, "NODE_IDS_EXHAUSTED", "{kind:?}: {message}");
        assert!(message.contains("all 20 node IDs"), "{message}");
        drop(more);
        for h in holders {
            h.quit();
        }
    }
}

/// SPEC §3.2 under the worst pause: a holder stopped (SIGSTOP) past its TTL, its node ID taken by
/// another process that mints, then resumed: it gets LEASE_LOST or mints only below its old
/// reservation, which the new holder starts after; no ID twice across both.
#[test]
fn a_holder_paused_past_its_ttl_never_mints_an_id_twice() {
    for kind in servers() {
        let source = one_node_source(kind, "pause");
        let mut a = spawn_holder(&source).unwrap();
        let mut ids_a = a.mint(3000).ids;
        assert_eq!(ids_a.len(), 3000);
        a.signal(libc::SIGSTOP);
        let t0 = Instant::now();
        // B waits for the node ID: free once A's claim expired (the store's clock, not A's).
        let mut b = holder_when_free(&source, Duration::from_secs(15), &["NODE_IDS_EXHAUSTED"]);
        eprintln!(
            "{kind:?}: B took node {} {:?} after A was stopped",
            b.node_id,
            t0.elapsed()
        );
        assert!(
            b.token > a.token,
            "{kind:?}: fencing token {} after {}",
            b.token,
            a.token
        );
        let ids_b = b.mint(3000).ids;
        assert_eq!(ids_b.len(), 3000);
        a.signal(libc::SIGCONT);
        // A mints for up to 10 s: whatever it mints lies below B's first ID, and it ends in LEASE_LOST.
        let after = a.command("run 10000", Duration::from_secs(30));
        let (code, ms, message) = after
            .error
            .clone()
            .unwrap_or_else(|| panic!("{kind:?}: A minted on for 10 s"));
        assert_eq!(code, "LEASE_LOST", "{kind:?}: {message}");
        eprintln!(
            "{kind:?}: resumed A minted {} more IDs, then LEASE_LOST after {ms} ms",
            after.ids.len()
        );
        assert!(
            after.ids.iter().all(|&id| id < ids_b[0]),
            "{kind:?}: A minted past its old reservation"
        );
        ids_a.extend(&after.ids);
        let more_b = b.mint(1000);
        assert!(more_b.error.is_none(), "{kind:?}: {:?}", more_b.error);
        let mut all = ids_a;
        all.extend(ids_b);
        all.extend(more_b.ids);
        assert_unique(&all);
        b.quit();
    }
}

#[test]
fn a_killed_holder_frees_its_node_id_after_the_ttl() {
    for kind in servers() {
        let source = one_node_source(kind, "kill");
        let mut a = spawn_holder(&source).unwrap();
        let ids_a = a.mint(2000).ids;
        a.signal(libc::SIGKILL);
        let t0 = Instant::now();
        let (code, _) = spawn_holder(&source)
            .err()
            .expect("still held right after the kill");
        assert_eq!(code, "NODE_IDS_EXHAUSTED");
        let mut b = holder_when_free(&source, Duration::from_secs(10), &["NODE_IDS_EXHAUSTED"]);
        let freed = t0.elapsed();
        eprintln!("{kind:?}: node ID free {freed:?} after SIGKILL (TTL 2 s)");
        assert!(
            freed >= Duration::from_millis(500),
            "{kind:?}: freed before the TTL ran out: {freed:?}"
        );
        let ids_b = b.mint(2000).ids;
        assert!(ids_b[0] > *ids_a.last().unwrap());
        let mut all = ids_a;
        all.extend(ids_b);
        assert_unique(&all);
        b.quit();
    }
}

#[test]
fn unreachable_servers_fail_fast_with_the_source_named() {
    let dead = || {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (p1, p2, p3) = (dead(), dead(), dead());
    for source in [
        format!("etcd://127.0.0.1:{p1},127.0.0.1:{p2}/x?sequencer=s"),
        format!("postgres://u:pw@127.0.0.1:{p3}/db?ttl=3s"),
    ] {
        let t0 = Instant::now();
        let e = NodeGenerator::open(&source, Layout::twitter(), Options::default()).unwrap_err();
        let took = t0.elapsed();
        assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{source}: {e}");
        assert!(
            e.message().contains(&format!(
                "127.0.0.1:{}",
                if source.starts_with("etcd") { p1 } else { p3 }
            )),
            "{e}"
        );
        // No part of the message shows the password.
        assert!(!e.message().contains("pw@"), "{e}");
        assert!(took < Duration::from_secs(5), "{source}: {took:?}");
    }
}

#[test]
fn a_schema_owned_by_someone_else_is_a_clear_error() {
    if !servers().contains(&Kind::Postgres) {
        return;
    }
    let url = std::env::var("SNOWMINT_TEST_POSTGRES_FOREIGN_URL")
        .expect("the harness's foreign database");
    let e =
        snowmint_coord::source::open_store(&snowmint_coord::source::parse_store_url(&url).unwrap())
            .unwrap_err();
    assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{e}");
    for part in [
        "schema snowmint",
        "belongs to role stranger",
        "GRANT USAGE, CREATE ON SCHEMA snowmint TO snowmint",
        "?schema=",
    ] {
        assert!(e.message().contains(part), "{part:?} not in {e}");
    }
    // With a schema of its own in that database (which it may not create: the database is not its own),
    // the error says so too.
    let e = snowmint_coord::source::open_store(
        &snowmint_coord::source::parse_store_url(&format!("{url}?schema=mine")).unwrap(),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{e}");
    assert!(
        e.message().contains("may not create the schema mine"),
        "{e}"
    );
}

/// Opened, used and dropped on an async runtime's thread (an async service calling the blocking API):
/// no "runtime inside a runtime" panic from the PostgreSQL store's private runtime.
#[test]
fn server_stores_work_inside_an_async_runtime() {
    for kind in servers() {
        let source = with_params(&fresh_url(kind, "async"), "sequencer=default&ttl=5s");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let g = NodeGenerator::open(&source, Layout::twitter(), Options::default()).unwrap();
            let (a, b) = (g.next_id().unwrap(), g.next_id().unwrap());
            assert!(b > a, "{kind:?}");
            drop(g);
        });
    }
}
