//! Store writes whose answer is lost after the server applied them, on REAL servers (run through
//! `coord/test.sh`), with a TCP proxy ([`support::proxy`]) between the store client and the server. The
//! client sends the write again; SPEC §3.1: every store write is safe so.
//!
//! - a row write and a claim: the re-send reports what the first send did;
//! - the answer to the write that adds a range to a datacenter row is lost after the server applied it
//!   (held back past the etcd client's timeout, or its connection closed); the client sends the write
//!   again, which finds the row changed. No value may be handed out twice (SPEC §4);
//! - the global store is unreachable: a process still opens and mints from what its datacenter row
//!   holds, on PostgreSQL and on the embedded store;
//! - a reservation write *delayed* rather than lost (the request held back past the client's timeout,
//!   then delivered after the keeper wrote a higher one) leaves the higher one, and a new holder of
//!   the node ID starts after it.

mod support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use snowmint::{ErrorCode, Layout, Options};
use snowmint_coord::{
    ClaimRequest, Lease, LeaseOptions, LeaseState, RangeOptions, RangeSequence, Store, SystemTime,
};
use support::proxy::{Fault, Proxy, Rule};
use support::{fresh_url, open, server_of, servers, through, twitter_config, unique, Kind};

/// A proxy to the server of `kind` that closes the connection instead of forwarding the answer to
/// the first request carrying `marker`.
fn losing_first(kind: Kind, marker: &'static str) -> Proxy {
    Proxy::start(
        &server_of(&fresh_url(kind, "x")),
        Some(Rule {
            matches: Box::new(move |r| texts(r).contains(marker)),
            nth: 1,
            fault: Fault::Close,
        }),
    )
}

/// Every text a request carries: the raw bytes (PostgreSQL sends parameters as they are) and, for the
/// etcd gateway, each base64 JSON string of the body decoded.
fn texts(request: &[u8]) -> String {
    let mut out = String::from_utf8_lossy(request).into_owned();
    let body = request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| &request[at + 4..]);
    if let Some(Ok(json)) = body.map(serde_json::from_slice::<serde_json::Value>) {
        let mut stack = vec![json];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::String(s) => {
                    if let Ok(bytes) = STANDARD.decode(&s) {
                        out.push('\n');
                        out.push_str(&String::from_utf8_lossy(&bytes));
                    }
                }
                serde_json::Value::Array(a) => stack.extend(a),
                serde_json::Value::Object(o) => stack.extend(o.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }
    out
}

/// The write that moves a range into a datacenter row: it compares with the row under a fetch ticket
/// and no range (`ranges=- fetch=WHO@UNTIL`) and writes a range with the ticket cleared.
fn adds_a_range(request: &[u8]) -> bool {
    let t = texts(request);
    let under_ticket = t
        .match_indices("ranges=- fetch=")
        .any(|(at, m)| t[at + m.len()..].chars().next().is_some_and(|c| c != '-'));
    let with_range = t
        .match_indices("ranges=")
        .any(|(at, m)| t[at + m.len()..].starts_with(|c: char| c.is_ascii_digit()));
    under_ticket && with_range && t.contains("fetch=- ")
}

/// Four handles of one datacenter (each its own connection, through the proxy to `kind`'s server),
/// the answer to the first range move lost by `fault`: the values taken, and how many are distinct.
fn four_handles_lose_one_answer(kind: Kind, fault: Fault) -> (usize, usize) {
    let global = open(&fresh_url(Kind::Etcd, "lost-global"));
    let proxy = Proxy::start(
        &server_of(&fresh_url(kind, "x")),
        Some(Rule {
            matches: Box::new(adds_a_range),
            nth: 1,
            fault,
        }),
    );
    let local_url = through(&fresh_url(kind, "lost-local"), proxy.addr());
    let options = RangeOptions {
        dc_range: 10,
        process_range: 2,
        threshold_percent: 100,
        wait: Duration::from_secs(10),
        ..RangeOptions::default()
    };
    let name = unique("lost").replace('-', "_");
    let handles: Vec<RangeSequence> = (0..4)
        .map(|_| {
            let local: Arc<dyn Store> = open(&local_url);
            RangeSequence::open(&name, "dc", global.clone(), local, options.clone())
                .unwrap_or_else(|e| panic!("{kind:?}: {e}"))
        })
        .collect();
    let mut taken = Vec::new();
    for _ in 0..5 {
        for h in &handles {
            taken.push(h.next_id().unwrap_or_else(|e| panic!("{kind:?}: {e}")));
        }
    }
    assert_eq!(
        proxy.fired(),
        1,
        "{kind:?}: the range move's answer was not lost"
    );
    let distinct = taken.iter().collect::<HashSet<_>>().len();
    eprintln!(
        "{kind:?} {fault:?}: {} values taken, {distinct} distinct: {taken:?}",
        taken.len()
    );
    (taken.len(), distinct)
}

#[test]
fn a_range_move_whose_answer_is_lost_is_never_handed_out_twice() {
    if servers().is_empty() {
        return;
    }
    let counts = [
        // Past the etcd client's 2 s answer timeout: it sends the transaction again.
        (Kind::Etcd, Fault::Hold(Duration::from_secs(3))),
        (Kind::Etcd, Fault::Close),
        // A dropped connection: the PostgreSQL store sends the statement again on a new one.
        (Kind::Postgres, Fault::Close),
    ]
    .map(|(kind, fault)| (kind, fault, four_handles_lose_one_answer(kind, fault)));
    for (kind, fault, (taken, distinct)) in counts {
        assert_eq!(
            taken - distinct,
            0,
            "{kind:?} {fault:?}: {taken} values taken, {distinct} distinct (all: {counts:?})"
        );
    }
}

/// The store's own answer to a re-sent row write: a compare-and-set (creating, then changing a row)
/// whose first send was applied and its answer lost is reported written, by its own text.
#[test]
fn a_resent_row_write_that_was_applied_reports_written() {
    if servers().is_empty() {
        return;
    }
    for kind in [Kind::Etcd, Kind::Postgres] {
        let proxy = losing_first(kind, "lost-answer");
        let proxy2 = losing_first(kind, "lost-again");
        let url = fresh_url(kind, "resent");
        let store = open(&through(&url, proxy.addr()));
        // A read first: the connection is kept alive, so the write goes on a reused one.
        assert_eq!(store.row("r").unwrap(), None);
        assert!(
            store.swap_row("r", None, "lost-answer n1").unwrap(),
            "{kind:?}"
        );
        assert_eq!(proxy.fired(), 1, "{kind:?}");
        let store = open(&through(&url, proxy2.addr()));
        assert_eq!(store.row("r").unwrap().as_deref(), Some("lost-answer n1"));
        assert!(
            store
                .swap_row("r", Some("lost-answer n1"), "lost-again n2")
                .unwrap(),
            "{kind:?}"
        );
        assert_eq!(proxy2.fired(), 1, "{kind:?}");
        assert_eq!(store.row("r").unwrap().as_deref(), Some("lost-again n2"));
        // Not a blanket "yes": a compare that fails against another writer's text is still refused.
        assert!(!store.swap_row("r", Some("lost-answer n1"), "n3").unwrap());
    }
}

/// A claim whose first send was applied and its answer lost: the re-send reports that claim (the one
/// node ID of the sequencer, held by us), not "every node ID is held".
#[test]
fn a_resent_claim_that_was_applied_reports_the_claim() {
    if servers().is_empty() {
        return;
    }
    for kind in [Kind::Etcd, Kind::Postgres] {
        let proxy = losing_first(kind, "lost-claim");
        let url = fresh_url(kind, "claim");
        let direct = open(&url);
        let incarnation = direct
            .create_sequencer("one", &twitter_config(1), 0)
            .unwrap()
            .incarnation;
        let store = open(&through(&url, proxy.addr()));
        // A read first: the connection is kept alive, so the claim goes on a reused one.
        assert!(store.holders("one", 0).unwrap().is_empty());
        let now_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let claim = store
            .claim(&ClaimRequest {
                sequencer: "one",
                nodes: 1,
                start: 0,
                ttl_ms: 10_000,
                holder: "lost-claim test",
                now_unix_ms,
                incarnation,
            })
            .unwrap();
        assert_eq!(proxy.fired(), 1, "{kind:?}");
        let claim =
            claim.unwrap_or_else(|| panic!("{kind:?}: our own claim reported as none free"));
        let held = direct.holders("one", now_unix_ms).unwrap();
        let by = held[0].claim.as_ref().expect("held");
        assert_eq!(
            (by.holder.as_str(), by.token),
            ("lost-claim test", claim.token),
            "{kind:?}"
        );
        store.renew(&claim, 10_000, now_unix_ms).unwrap();
        store.release(&claim).unwrap();
    }
}

/// With the global store unreachable, a process opens and mints from what its datacenter row holds.
#[test]
fn a_process_opens_and_mints_while_the_global_store_is_unreachable() {
    if servers().is_empty() {
        return;
    }
    let dir = std::env::temp_dir().join(unique("snowmint-range-global-down"));
    std::fs::create_dir_all(&dir).unwrap();
    let locals = [
        fresh_url(Kind::Postgres, "global-down"),
        format!("file://{}", dir.display()),
    ];
    for local in locals {
        let proxy = Proxy::start(&server_of(&fresh_url(Kind::Etcd, "x")), None);
        let global = through(&fresh_url(Kind::Etcd, "global-down"), proxy.addr());
        let options = RangeOptions {
            dc_range: 1_000,
            process_range: 10,
            ..RangeOptions::default()
        };
        let name = unique("down").replace('-', "_");
        let first = RangeSequence::open_urls(&name, "dc", &global, &local, options.clone())
            .unwrap_or_else(|e| panic!("{local}: {e}"));
        let before = first.next_id().unwrap();
        drop(first);
        proxy.stop();
        let seq = RangeSequence::open_urls(&name, "dc", &global, &local, options)
            .unwrap_or_else(|e| panic!("{local}: global store unreachable: {e}"));
        let ids = seq.next_ids(25).unwrap();
        assert!(ids[0] > before, "{local}: {ids:?} after {before}");
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{local}: {ids:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bind of a PostgreSQL extended-protocol statement with `params` parameters, the first of them
/// `first` (as the client sends it: text as it is).
fn binds(request: &[u8], params: usize, first: &[u8]) -> bool {
    // The request's Bind message: after a Parse when the statement is sent with its text, parse,
    // bind and execute at once (`query_typed`), first when it was prepared before.
    let mut message = request;
    while let Some((&tag, rest)) = message.split_first() {
        if tag == b'B' {
            return bind_of(message, params, first);
        }
        let Some(len) = rest.get(..4) else {
            return false;
        };
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let Some(next) = rest.get(len..) else {
            return false;
        };
        message = next;
    }
    false
}

/// Whether the Bind message `request` starts with has `params` parameters, the first `first`.
fn bind_of(request: &[u8], params: usize, first: &[u8]) -> bool {
    let bind = || -> Option<bool> {
        let (&tag, rest) = request.split_first()?;
        let rest = rest.get(4..)?; // the message length
                                   // The portal's and the prepared statement's names.
        let mut at = 0;
        for _ in 0..2 {
            at += rest.get(at..)?.iter().position(|&b| b == 0)? + 1;
        }
        let int16 = |at: usize| -> Option<usize> {
            let b = rest.get(at..at + 2)?;
            Some(u16::from_be_bytes([b[0], b[1]]) as usize)
        };
        at += 2 + 2 * int16(at)?; // the parameter formats
        let count = int16(at)?;
        at += 2;
        let len = rest.get(at..at + 4)?;
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        let value = rest.get(at + 4..at + 4 + usize::try_from(len).ok()?)?;
        Some(tag == b'B' && count == params && value == first)
    };
    bind().unwrap_or(false)
}

/// Whether `request` writes the reservation of a node ID of `sequencer` (a PostgreSQL statement with
/// the reservation's six parameters; an etcd transaction putting a reservation key, except one that
/// assumes the key absent: on a key that exists it only reads it back).
fn writes_a_reservation(kind: Kind, sequencer: &str, request: &[u8]) -> bool {
    match kind {
        Kind::Postgres => binds(request, 6, sequencer.as_bytes()),
        Kind::Etcd => {
            let t = texts(request);
            t.contains("/v3/kv/txn")
                && t.contains(&format!("resv/{sequencer}/"))
                && t.contains("request_put")
                && !t.contains(r#""mod_revision":"0""#)
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The logical position of a Twitter-layout ID (node 0).
fn position(id: u64) -> u64 {
    (id >> 22) << 12 | (id & 0xfff)
}

/// A reservation write of the keeper delayed in the network (SPEC §3.2: reservations never move back):
/// its request is held back past the client's timeout (etcd sends it again, PostgreSQL drops the
/// connection with the statement queued on it), the keeper's next round writes a higher reservation,
/// and only then does the held request reach the server, while the claim is still held. The stored
/// reservation must still be the higher one, and a new holder of the node ID (after the first one
/// vanished without a release) must start after it.
#[test]
fn a_delayed_reservation_write_never_moves_the_reservation_back() {
    if servers().is_empty() {
        return;
    }
    for kind in [Kind::Etcd, Kind::Postgres] {
        let name = unique("delayed").replace('-', "_");
        // Armed once the lease is acquired: the write held is a keeper round's.
        let armed = Arc::new(AtomicBool::new(false));
        let proxy = Proxy::start(&server_of(&fresh_url(kind, "x")), {
            let (armed, name) = (armed.clone(), name.clone());
            Some(Rule {
                matches: Box::new(move |r| {
                    armed.load(Ordering::SeqCst) && writes_a_reservation(kind, &name, r)
                }),
                nth: 1,
                fault: Fault::ParkRequest,
            })
        });
        let url = fresh_url(kind, "delayed");
        let direct = open(&url);
        let record = direct
            .create_sequencer(&name, &twitter_config(1), now_ms())
            .unwrap();
        // A reservation a minute ahead (so that the clock cannot pass it during the test), a TTL of
        // 4 s (the etcd client's answer timeout is then 1 s; PostgreSQL's is 2 s).
        let options = Options {
            max_ahead_ns: 120_000_000_000,
            ..Options::default()
        };
        let lease_options = LeaseOptions {
            ttl: Duration::from_secs(4),
            reserve_ahead: Duration::from_secs(60),
            stepped: true,
            ..LeaseOptions::default()
        };
        let lease = Lease::acquire(
            open(&through(&url, proxy.addr())),
            Arc::new(SystemTime),
            record.clone(),
            Layout::twitter(),
            options,
            lease_options.clone(),
        )
        .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let first = lease.next_id().unwrap();
        armed.store(true, Ordering::SeqCst);
        // The round whose reservation write is held: etcd sends it again (applied), PostgreSQL gives
        // up on it (the round fails; the ceiling stays).
        assert!(lease.keeper_round(), "{kind:?}");
        assert_eq!(
            proxy.fired(),
            1,
            "{kind:?}: the reservation write was not held"
        );
        let before = direct.reservation(&name, 0).unwrap().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(lease.keeper_round(), "{kind:?}");
        let higher = direct.reservation(&name, 0).unwrap().unwrap();
        assert!(
            higher.position > before.position,
            "{kind:?}: {higher:?} after {before:?}"
        );
        assert!(lease.ceiling() > higher.position, "{kind:?}");
        let held = direct.holders(&name, now_ms()).unwrap();
        assert_eq!(
            held[0].claim.as_ref().map(|c| c.token),
            Some(lease.fencing_token()),
            "{kind:?}: the claim is still held when the delayed write arrives"
        );
        proxy.release();
        let deadline = Instant::now() + Duration::from_secs(10);
        while proxy.delivered() == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(
            proxy.delivered(),
            1,
            "{kind:?}: the held write was not delivered"
        );
        assert_eq!(
            direct.reservation(&name, 0).unwrap(),
            Some(higher),
            "{kind:?}: the delayed write moved the reservation back"
        );
        // The holder vanishes (no release, no final reservation); the next one starts after the stored
        // reservation once the claim expired.
        let token = lease.fencing_token();
        lease.abandon();
        let deadline = Instant::now() + Duration::from_secs(15);
        let next = loop {
            match Lease::acquire(
                direct.clone(),
                Arc::new(SystemTime),
                record.clone(),
                Layout::twitter(),
                options,
                lease_options.clone(),
            ) {
                Ok(next) => break next,
                // Held until its TTL; or, on a loaded host, the claim's answer later than this
                // test's short answer timeout (STORE_UNAVAILABLE: nothing taken, tried again).
                Err(e)
                    if matches!(
                        e.code(),
                        ErrorCode::NodeIdsExhausted | ErrorCode::StoreUnavailable
                    ) && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Err(e) => panic!("{kind:?}: {e}"),
            }
        };
        assert!(next.fencing_token() > token, "{kind:?}");
        assert_eq!(next.state(), LeaseState::Held);
        let id = next.next_id().unwrap();
        assert!(
            position(id) > higher.position,
            "{kind:?}: the new holder starts at {} ({id}), inside the reservation {higher:?} \
             (the old holder's first ID was {first})",
            position(id)
        );
        next.release().unwrap();
    }
}
