//! Faults injected between holders and the store, on the in-memory store with per-holder views:
//! a holder cut off from the store past its TTL while another takes its node ID, with clocks that
//! disagree, and acknowledgements lost after the store applied a write. No ID is ever minted twice.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, LayoutConfig, Options, Policy};
use snowmint_coord::{
    layout_text, Claim, ClaimRequest, Error, Lease, LeaseOptions, LeaseState, MemoryStore,
    NodeState, OffsetTime, Reservation, Result, SequencerConfig, SequencerRecord, Store,
    SystemTime, Time,
};

/// One holder's view of a shared store: `cut` makes every request fail (a partition), `lose_acks`
/// applies reservation writes but reports them failed (the acknowledgement is lost on the way back),
/// `destroy_before_renew` has another handle destroy the sequencer just before the next renewal
/// reaches the store (after the keeper's check of the record in the same round).
#[derive(Debug)]
struct View {
    store: Arc<MemoryStore>,
    cut: AtomicBool,
    lose_acks: AtomicBool,
    destroy_before_renew: AtomicBool,
}

impl View {
    fn new(store: &Arc<MemoryStore>) -> Arc<View> {
        Arc::new(View {
            store: store.clone(),
            cut: AtomicBool::new(false),
            lose_acks: AtomicBool::new(false),
            destroy_before_renew: AtomicBool::new(false),
        })
    }

    fn check(&self) -> Result<()> {
        if self.cut.load(Ordering::SeqCst) {
            return Err(Error::unavailable("partitioned (injected)"));
        }
        Ok(())
    }
}

impl Store for View {
    fn describe(&self) -> String {
        "memory store through a faulty link".into()
    }
    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now: u64,
    ) -> Result<SequencerRecord> {
        self.check()?;
        self.store.create_sequencer(name, config, now)
    }
    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        self.check()?;
        self.store.sequencer(name)
    }
    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        self.check()?;
        self.store.sequencers()
    }
    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        self.check()?;
        self.store.destroy_sequencer(name, incarnation)
    }
    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        self.check()?;
        self.store.claim(request)
    }
    fn renew(&self, claim: &Claim, ttl_ms: u64, now: u64) -> Result<Claim> {
        self.check()?;
        if self.destroy_before_renew.swap(false, Ordering::SeqCst) {
            // As on PostgreSQL, where the claims go with the record (ON DELETE CASCADE).
            if let Some(r) = self.store.sequencer(&claim.sequencer)? {
                self.store
                    .destroy_sequencer(&claim.sequencer, r.incarnation)?;
            }
            self.store.release(claim)?;
        }
        self.store.renew(claim, ttl_ms, now)
    }
    fn release(&self, claim: &Claim) -> Result<()> {
        self.check()?;
        self.store.release(claim)
    }
    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        self.check()?;
        self.store.reservation(sequencer, node_id)
    }
    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.check()?;
        self.store.reserve(claim, reservation)?;
        if self.lose_acks.load(Ordering::SeqCst) {
            return Err(Error::unavailable("acknowledgement lost (injected)"));
        }
        Ok(())
    }
    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.check()?;
        self.store.lower_reservation(claim, reservation)?;
        if self.lose_acks.load(Ordering::SeqCst) {
            return Err(Error::unavailable("acknowledgement lost (injected)"));
        }
        Ok(())
    }
    fn holders(&self, sequencer: &str, now: u64) -> Result<Vec<NodeState>> {
        self.check()?;
        self.store.holders(sequencer, now)
    }
    fn row(&self, key: &str) -> Result<Option<String>> {
        self.check()?;
        self.store.row(key)
    }
    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        self.check()?;
        self.store.swap_row(key, expected, new)
    }
}

/// 16 IDs per 1 ms tick: a holder that mints flat out reaches its ceiling within a second.
fn small() -> Layout {
    Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits: 2,
        sequence_bits: 4,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .unwrap()
}

fn lease(view: &Arc<View>, time: Arc<dyn Time>, policy: Policy) -> Result<Lease> {
    let config = SequencerConfig {
        layout: layout_text(&small()),
        nodes: 1,
    };
    let record = view.create_sequencer("p", &config, time.unix_ns() / 1_000_000)?;
    let options = LeaseOptions {
        ttl: Duration::from_millis(400),
        reserve_ahead: Duration::from_millis(300),
        ..LeaseOptions::default()
    };
    Lease::acquire(
        view.clone(),
        time,
        record,
        small(),
        Options {
            policy,
            ..Options::default()
        },
        options,
    )
}

/// Mints until the first error, for at most `for_`. TOO_FAR_AHEAD (the `fail` policy's answer at the
/// ceiling of a lease still held, or past `max_ahead`) only asks to retry shortly.
fn mint_until_error(l: &Lease, ids: &mut Vec<u64>, for_: Duration) -> Option<ErrorCode> {
    let t0 = Instant::now();
    while t0.elapsed() < for_ {
        match l.next_id() {
            Ok(id) => ids.push(id),
            Err(e) if e.code() == ErrorCode::TooFarAhead => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) => return Some(e.code()),
        }
    }
    None
}

#[test]
fn partitioned_holder_and_its_successor_never_collide() {
    let store = Arc::new(MemoryStore::new());
    let (va, vb) = (View::new(&store), View::new(&store));
    // A's clock runs 2 s ahead of B's: B's own clock would put it far behind A's IDs.
    let a = lease(&va, Arc::new(OffsetTime::new(2_000_000_000)), Policy::Fail).unwrap();
    let mut ids_a = Vec::new();
    assert_eq!(
        mint_until_error(&a, &mut ids_a, Duration::from_millis(100)),
        None
    );
    va.cut.store(true, Ordering::SeqCst);
    // Cut off, A mints up to its ceiling, then stops: TOO_FAR_AHEAD while its claim may still be held,
    // LEASE_LOST once its keeper gives the claim up (one TTL after its last renewal).
    let code = mint_until_error(&a, &mut ids_a, Duration::from_secs(5));
    assert_eq!(code, Some(ErrorCode::LeaseLost));
    let a_ceiling = a.ceiling();
    // Past A's TTL, B takes the node ID and starts after A's reservation. (The in-memory store judges
    // expiry by the caller's clock, and A's runs 2 s ahead of B's: B waits those 2 s out too.)
    let t0 = Instant::now();
    let b = loop {
        match lease(&vb, Arc::new(SystemTime), Policy::Fail) {
            Ok(b) => break b,
            Err(e) => assert_eq!(e.code(), ErrorCode::NodeIdsExhausted, "{e}"),
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "A's claim expires");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(b.fencing_token() > a.fencing_token());
    let mut ids_b = Vec::new();
    assert_eq!(
        mint_until_error(&b, &mut ids_b, Duration::from_millis(200)),
        None
    );
    assert!(!ids_b.is_empty());
    // The partition heals: A's keeper learns the claim is gone; A never mints again.
    va.cut.store(false, Ordering::SeqCst);
    let t0 = Instant::now();
    while a.state() == LeaseState::Held {
        a.poke();
        assert!(t0.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(a.next_id().unwrap_err().code(), ErrorCode::LeaseLost);
    assert_eq!(
        a.ceiling(),
        a_ceiling,
        "a stale holder's ceiling never rises"
    );
    let pos = |id: u64| (id >> 6) << 4 | (id & 0xf);
    assert!(ids_a.iter().all(|&x| pos(x) < a_ceiling));
    assert!(
        ids_b.iter().all(|&x| pos(x) >= a_ceiling),
        "B starts after everything A may mint"
    );
    let all: HashSet<u64> = ids_a.iter().chain(&ids_b).copied().collect();
    assert_eq!(all.len(), ids_a.len() + ids_b.len(), "no ID minted twice");
}

#[test]
fn lost_acknowledgements_never_raise_the_ceiling() {
    let store = Arc::new(MemoryStore::new());
    let va = View::new(&store);
    let a = lease(&va, Arc::new(SystemTime), Policy::Wait).unwrap();
    let before = a.ceiling();
    va.lose_acks.store(true, Ordering::SeqCst);
    let mut ids = Vec::new();
    // The store records every extension, but A never hears of one: it stops at its old ceiling, waits up
    // to one TTL (the `wait` policy) for an extension, then LEASE_LOST.
    let code = mint_until_error(&a, &mut ids, Duration::from_secs(5));
    assert_eq!(code, Some(ErrorCode::LeaseLost));
    assert_eq!(a.ceiling(), before);
    let stored = store.reservation("p", 0).unwrap().unwrap();
    assert!(
        stored.position + 1 >= before,
        "the store is at or past the ceiling the holder uses"
    );
    let pos = |id: u64| (id >> 6) << 4 | (id & 0xf);
    assert!(ids.iter().all(|&x| pos(x) < before));
}

#[test]
fn a_destroy_between_the_check_and_the_renewal_is_seen_as_destroyed() {
    let store = Arc::new(MemoryStore::new());
    let v = View::new(&store);
    let a = lease(&v, Arc::new(SystemTime), Policy::Fail).unwrap();
    assert!(a.next_id().is_ok());
    // The keeper's round finds the record, then the renewal finds the claim gone with it.
    v.destroy_before_renew.store(true, Ordering::SeqCst);
    a.poke();
    let t0 = Instant::now();
    while a.state() == LeaseState::Held && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        !v.destroy_before_renew.load(Ordering::SeqCst),
        "the renewal ran"
    );
    assert_eq!(a.state(), LeaseState::Destroyed);
    assert_eq!(
        a.next_id().unwrap_err().code(),
        ErrorCode::SequencerDestroyed
    );
}
