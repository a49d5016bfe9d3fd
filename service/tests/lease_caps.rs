//! What clients may hold of the client sequencer (issue 42), on real 127.0.0.x sockets: every client
//! without a token together at most a share of it, one network (IPv4 /24) at most its cap, counts read
//! from the leases the store holds (a restarted service counts the same), a lease taken past the store
//! deadline released, and with bearer tokens a lease only renewed or released by the bearer that took it.

mod common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{now_ms, request_from, InProcess, Reply};
use snowmint::{Layout, LayoutConfig};
use snowmint_coord::{
    Claim, ClaimRequest, MemoryStore, NodeState, Reservation, SequencerConfig, SequencerRecord,
    Store, SystemTime,
};
use snowmint_service::{Config, Service, Tokens};

const TOKEN_A: &str = "token-a-0123456789abcdef";
const TOKEN_B: &str = "token-b-0123456789abcdef";

fn ip(a: u8, b: u8, c: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, a, b, c))
}

/// A layout of 32 node IDs (the service's own is one of them).
fn nodes32(node: &str) -> Config {
    let layout = Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits: 5,
        sequence_bits: 12,
        epoch_ms: 1_288_834_974_657,
        ..LayoutConfig::default()
    })
    .unwrap();
    let mut c = common::config(node);
    c.layout = layout;
    c.layout_name = snowmint_coord::layout_text(&layout);
    c
}

fn start(config: Config, store: Arc<dyn Store>) -> InProcess {
    InProcess::start(Service::open_with(config, Arc::new(SystemTime), Some(store), false).unwrap())
}

fn take(addr: SocketAddr, from: IpAddr, token: Option<&str>) -> Reply {
    request_from(addr, from, None, "POST", "/v1/leases", token).expect("an answer")
}

/// Live claims on the client sequencer other than the service's own node ID 0.
fn client_leases(store: &dyn Store) -> usize {
    store
        .holders("clients", now_ms())
        .unwrap()
        .iter()
        .filter(|n| n.node_id != 0 && n.claim.is_some())
        .count()
}

#[test]
fn clients_without_a_token_hold_at_most_a_quarter_of_the_node_ids_together() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let s = start(nodes32("0"), store.clone());
    // Four addresses in four /24s, each under its own cap of 8: together at most 32 / 4 = 8.
    let mut taken = 0;
    let mut refused = None;
    for net in 1..=4u8 {
        for _ in 0..8 {
            let r = take(s.addr, ip(net, 0, 1), None);
            match r.status {
                201 => taken += 1,
                _ => {
                    refused.get_or_insert((r.status, r.error_code()));
                }
            }
        }
    }
    eprintln!("four networks took {taken} of the 31 client node IDs; then {refused:?}");
    assert_eq!(taken, 8);
    assert_eq!(refused, Some((429, "NODE_IDS_EXHAUSTED".to_string())));
    assert_eq!(client_leases(store.as_ref()), 8);
}

#[test]
fn one_network_holds_at_most_its_cap() {
    let mut config = nodes32("0");
    config.max_leases_per_client = 2;
    let s = start(config, Arc::new(MemoryStore::new()));
    let statuses = |from| -> Vec<u16> { (0..3).map(|_| take(s.addr, from, None).status).collect() };
    assert_eq!(statuses(ip(0, 0, 1)), [201, 201, 429]);
    assert_eq!(statuses(ip(0, 0, 2)), [201, 201, 429]);
    // 127.0.0.0/24 holds 4, twice the per-client cap: a third address of it gets nothing.
    let third = take(s.addr, ip(0, 0, 3), None);
    assert_eq!(third.status, 429, "{}", third.text());
    assert!(
        third.text().contains("--max-leases-per-network"),
        "{}",
        third.text()
    );
    // Another /24 does.
    assert_eq!(take(s.addr, ip(0, 1, 1), None).status, 201);
}

#[test]
fn the_counts_come_from_the_store_and_survive_a_restart() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut config = nodes32("1");
    config.max_leases_per_client = 2;
    let mut first = start(config.clone(), store.clone());
    let me = ip(0, 0, 1);
    assert_eq!(take(first.addr, me, None).status, 201);
    assert_eq!(take(first.addr, me, None).status, 201);
    // Restarted: stopped, its own node ID released, and opened again on the store.
    first.stop();
    first.service.release().unwrap();
    let second = start(config, store.clone());
    let r = take(second.addr, me, None);
    assert_eq!(r.status, 429, "{}", r.text());
    assert_eq!(take(second.addr, ip(0, 0, 2), None).status, 201);
}

#[test]
fn a_lease_belongs_to_the_bearer_that_took_it() {
    let mut config = nodes32("0");
    config.auth_tokens = Tokens::parse(&format!("{TOKEN_A}\n{TOKEN_B}\n")).unwrap();
    let s = start(config, Arc::new(MemoryStore::new()));
    let me = ip(0, 0, 1);
    let a = take(s.addr, me, Some(TOKEN_A));
    assert_eq!(a.status, 201, "{}", a.text());
    let lease = a.json()["token"].as_str().unwrap().to_string();
    let renew = format!("/v1/leases/{lease}/renew");
    let release = format!("/v1/leases/{lease}");
    let by = |method, target: &str, token| {
        request_from(s.addr, me, None, method, target, Some(token))
            .expect("an answer")
            .status
    };
    assert_eq!(by("POST", &renew, TOKEN_B), 404, "another bearer renews");
    assert_eq!(
        by("DELETE", &release, TOKEN_B),
        404,
        "another bearer releases"
    );
    assert_eq!(by("POST", &renew, TOKEN_A), 200);
    assert_eq!(by("DELETE", &release, TOKEN_A), 204);
}

/// A memory store whose claims take `delay_ms` (a store past the service's 3 s deadline).
#[derive(Debug)]
struct Slow {
    inner: MemoryStore,
    delay_ms: AtomicU64,
    /// Claims answered.
    claims: AtomicU64,
}

impl Store for Slow {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now_unix_ms: u64,
    ) -> snowmint_coord::Result<SequencerRecord> {
        self.inner.create_sequencer(name, config, now_unix_ms)
    }
    fn sequencer(&self, name: &str) -> snowmint_coord::Result<Option<SequencerRecord>> {
        self.inner.sequencer(name)
    }
    fn sequencers(&self) -> snowmint_coord::Result<Vec<SequencerRecord>> {
        self.inner.sequencers()
    }
    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> snowmint_coord::Result<bool> {
        self.inner.destroy_sequencer(name, incarnation)
    }
    fn claim(&self, request: &ClaimRequest<'_>) -> snowmint_coord::Result<Option<Claim>> {
        std::thread::sleep(Duration::from_millis(self.delay_ms.load(Ordering::SeqCst)));
        let r = self.inner.claim(request);
        self.claims.fetch_add(1, Ordering::SeqCst);
        r
    }
    fn renew(&self, claim: &Claim, ttl_ms: u64, now: u64) -> snowmint_coord::Result<Claim> {
        self.inner.renew(claim, ttl_ms, now)
    }
    fn release(&self, claim: &Claim) -> snowmint_coord::Result<()> {
        self.inner.release(claim)
    }
    fn reservation(&self, seq: &str, node: u64) -> snowmint_coord::Result<Option<Reservation>> {
        self.inner.reservation(seq, node)
    }
    fn reserve(&self, claim: &Claim, r: &Reservation) -> snowmint_coord::Result<()> {
        self.inner.reserve(claim, r)
    }
    fn holders(&self, seq: &str, now: u64) -> snowmint_coord::Result<Vec<NodeState>> {
        self.inner.holders(seq, now)
    }
    fn row(&self, key: &str) -> snowmint_coord::Result<Option<String>> {
        self.inner.row(key)
    }
    fn swap_row(
        &self,
        key: &str,
        expected: Option<&str>,
        new: &str,
    ) -> snowmint_coord::Result<bool> {
        self.inner.swap_row(key, expected, new)
    }
}

#[test]
fn a_lease_taken_past_the_deadline_is_released() {
    let slow = Arc::new(Slow {
        inner: MemoryStore::new(),
        delay_ms: AtomicU64::new(0),
        claims: AtomicU64::new(0),
    });
    let mut config = nodes32("0");
    config.max_leases_per_client = 1;
    let s = start(config, slow.clone());
    slow.delay_ms.store(4000, Ordering::SeqCst);
    let claims = slow.claims.load(Ordering::SeqCst);
    let me = ip(0, 0, 1);
    let late = take(s.addr, me, None);
    assert_eq!(late.status, 503, "{}", late.text());
    assert_eq!(late.error_code(), "STORE_UNAVAILABLE");
    slow.delay_ms.store(0, Ordering::SeqCst);
    // The take finishes in the background about 1 s later; what it took is released.
    let t = std::time::Instant::now();
    while slow.claims.load(Ordering::SeqCst) == claims {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the late claim never finished"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let t = std::time::Instant::now();
    while client_leases(slow.as_ref()) > 0 {
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "the late lease is still held"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // So it does not count against the client: its cap of 1 is free.
    let r = take(s.addr, me, None);
    assert_eq!(r.status, 201, "{}", r.text());
}
