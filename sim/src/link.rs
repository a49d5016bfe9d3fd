//! The store fault layer: `Link`, one holder's or process's link to the in-memory store (a partition,
//! failed requests, writes applied and answered late, row writes re-sent after a lost answer, writes
//! duplicated or delayed past the next one; each claim's expiry noted for the checker), and `Race`, another
//! process's whole range take landing between a read and the compare-and-set after it (`RaceLink`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use snowmint_coord::range::SteppedAllocator;
use snowmint_coord::{
    Claim, ClaimRequest, Error, NodeState, Reservation, Result, SequencerConfig, SequencerRecord,
    Store,
};

use crate::clock::{MS, START_UNIX_NS};
use crate::defects::StoreDefect;
use crate::net::Faults;
use crate::postgres::PgNet;
use crate::rng::Rng;

/// One holder's link to the shared store. The store judges claim expiry by its own clock (the true
/// time), as etcd and PostgreSQL do. `cut`: every request fails; `flaky` percent of requests fail before
/// reaching the store; `late` percent of writes are applied but answered with a failure.
///
/// Faults of a real client's network (`set_network`): `resend` percent of row writes lose their answer
/// (half of them after the store applied the write, half before it reached the store) and the client
/// sends them again, after another process of the world may have acted (`race`); the store answers the
/// re-send by its re-send rule ([`Store::swap_row`]: a re-send that finds the row holding its own text,
/// nonce included, was written; the planted defects `ResendNotWritten` and `ResendByValue` are the
/// stores that answer otherwise). `dup` percent of writes are delivered twice, the copy landing after
/// this client's next write; `delay` percent are held back (answered with a failure) and applied after
/// this client's next write: an older reservation landing after a newer one, an old compare-and-set
/// after a later one.
///
/// Over a real client (`net`: the etcd client on a simulated network, `etcd::SimNet`), the same knobs
/// act at the network instead, and this link passes every call through.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) now: Arc<AtomicU64>,
    pub(crate) faults: Arc<Faults>,
    /// The store is a real client whose network has the faults: pass every call through.
    pub(crate) net: bool,
    /// Writes held back or duplicated, landing after this client's next write.
    pub(crate) pending: Mutex<Vec<Write>>,
    /// Another process that may act while an answer is lost (the range world's races).
    pub(crate) race: Option<(Arc<Race>, usize)>,
    pub(crate) defect: StoreDefect,
    /// Reservations too may be delayed and duplicated (on by default; `--no-late-reservations`).
    pub(crate) late_reservations: bool,
    pub(crate) rng: Mutex<Rng>,
    /// Over the PostgreSQL store: its simulated network, whose log tells whether a claim call took
    /// more than one node ID; and the first such call seen (the world fails on it).
    pub(crate) pg: Option<Arc<PgNet>>,
    pub(crate) violation: Mutex<Option<String>>,
    /// Each claim's expiry as the store last answered it (claims and renewals of every link of the
    /// world): a renewal answered after it is a violation.
    pub(crate) expiries: Expiries,
    /// A bound on a lost history ([`Store::max_ahead`]) this link declares for a store that has none
    /// of its own (the service world's stand-in for the embedded store): `None`, the store's own.
    pub(crate) bound: Option<Duration>,
}

/// Per claim (sequencer, node ID, fencing token), its expiry (Unix ms) as the store last set it.
pub(crate) type Expiries = Arc<Mutex<std::collections::HashMap<(String, u64, u64), u64>>>;

/// A write in flight.
#[derive(Debug)]
pub(crate) enum Write {
    Swap(String, Option<String>, String),
    Reserve(Claim, Reservation),
}

impl Link {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        now: &Arc<AtomicU64>,
        seed: u64,
        race: Option<(Arc<Race>, usize)>,
        defect: StoreDefect,
    ) -> Link {
        Link {
            store,
            now: now.clone(),
            faults: Arc::default(),
            net: false,
            pending: Mutex::new(Vec::new()),
            race,
            defect,
            late_reservations: false,
            rng: Mutex::new(Rng(seed)),
            pg: None,
            violation: Mutex::new(None),
            expiries: Expiries::default(),
            bound: None,
        }
    }
    pub(crate) fn true_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst) / MS
    }
    pub(crate) fn roll(&self, percent: &AtomicU64) -> bool {
        let p = percent.load(Ordering::SeqCst);
        p > 0 && self.rng.lock().unwrap().chance(p)
    }
    /// Sets the network faults (percent each) and says so.
    pub(crate) fn set_network(&self, rng: &mut Rng) -> String {
        let pick = |rng: &mut Rng| [0, 0, 10, 30][rng.below(4) as usize];
        let (resend, dup, delay) = (pick(rng), pick(rng), pick(rng));
        self.faults.resend.store(resend, Ordering::SeqCst);
        self.faults.dup.store(dup, Ordering::SeqCst);
        self.faults.delay.store(delay, Ordering::SeqCst);
        if self.net {
            // At the network, `resend` is a connection dropped after the server applied the request.
            return format!("dropped after commit {resend}%, duplicated {dup}%, delayed {delay}%");
        }
        format!("re-sent {resend}%, duplicated {dup}%, delayed {delay}%")
    }
    pub(crate) fn heal(&self) {
        self.faults.heal()
    }
    pub(crate) fn healthy(&self) -> bool {
        self.faults.healthy()
    }
    pub(crate) fn before(&self) -> Result<()> {
        if self.net {
            return Ok(());
        }
        let flaky = self.faults.flaky.load(Ordering::SeqCst);
        if self.faults.cut.load(Ordering::SeqCst) || self.rng.lock().unwrap().chance(flaky) {
            return Err(Error::unavailable("simulated: the store is unreachable"));
        }
        Ok(())
    }
    pub(crate) fn after<T>(&self, r: Result<T>) -> Result<T> {
        if self.net {
            return r;
        }
        let late = self.faults.late.load(Ordering::SeqCst);
        if r.is_ok() && self.rng.lock().unwrap().chance(late) {
            return Err(Error::unavailable(
                "simulated: applied, but answered after the holder gave up",
            ));
        }
        r
    }
    pub(crate) fn apply(&self, w: &Write) -> Result<bool> {
        match w {
            Write::Swap(key, expected, new) => self.store.swap_row(key, expected.as_deref(), new),
            Write::Reserve(claim, r) => self.store.reserve(claim, r).map(|()| true),
        }
    }
    /// Sends a write: held back, or applied (then what was held back lands, and a duplicate may be
    /// queued).
    pub(crate) fn send(&self, w: Write) -> Result<bool> {
        if self.net {
            return self.apply(&w);
        }
        let reorder = self.late_reservations || matches!(w, Write::Swap(..));
        if reorder && self.roll(&self.faults.delay) {
            self.pending.lock().unwrap().push(w);
            return Err(Error::unavailable(
                "simulated: the request is delayed in the network (it lands later)",
            ));
        }
        let r = self.apply(&w);
        let landed: Vec<Write> = std::mem::take(&mut *self.pending.lock().unwrap());
        for old in &landed {
            let _ = self.apply(old);
        }
        if reorder && self.roll(&self.faults.dup) {
            self.pending.lock().unwrap().push(w);
        }
        r
    }
    /// Another process of the world acts (while this client's answer is lost).
    pub(crate) fn interleave(&self) {
        if let Some((race, me)) = &self.race {
            race.interleave_always(*me);
        }
    }
    /// The store's answer to a re-sent row write whose compare failed.
    pub(crate) fn resend_answer(&self, key: &str, new: &str) -> Result<bool> {
        let row = self.store.row(key)?;
        Ok(match self.defect {
            StoreDefect::ResendNotWritten => false,
            StoreDefect::ResendByValue => {
                row.is_some_and(|r| without_nonce(&r) == without_nonce(new))
            }
            StoreDefect::None => row.as_deref() == Some(new),
        })
    }
}

impl Link {
    /// Notes `c`'s expiry as the store answered it.
    pub(crate) fn expires(&self, c: &Claim) {
        let key = (c.sequencer.clone(), c.node_id, c.token);
        self.expiries.lock().unwrap().insert(key, c.expires_unix_ms);
    }
}

/// A row's text without its nonce (`by=…`).
pub(crate) fn without_nonce(text: &str) -> String {
    text.split_whitespace()
        .filter(|w| !w.starts_with("by="))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Store for Link {
    fn describe(&self) -> String {
        "simulated store".into()
    }
    // The embedded store's bound on a lost history (what its holders apply): the store's own.
    fn max_ahead(&self) -> Option<Duration> {
        self.bound.or_else(|| self.store.max_ahead())
    }
    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now: u64,
    ) -> Result<SequencerRecord> {
        self.before()?;
        self.after(self.store.create_sequencer(name, config, now))
    }
    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        self.before()?;
        self.store.sequencer(name)
    }
    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        self.before()?;
        self.store.sequencers()
    }
    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        self.before()?;
        self.after(self.store.destroy_sequencer(name, incarnation))
    }
    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        self.before()?;
        let r = ClaimRequest {
            now_unix_ms: if self.net {
                request.now_unix_ms
            } else {
                self.true_ms()
            },
            ..*request
        };
        let call = self.pg.as_ref().map(|net| net.begin_call());
        let r = self.store.claim(&r);
        // The re-send rule (`crate::store`): a claim call that answered one node ID took no other.
        if let (Some(net), Some(call), Ok(Some(c))) = (&self.pg, call, &r) {
            if let Some(e) = net.extra_grant(call, &c.sequencer, c.node_id) {
                self.violation.lock().unwrap().get_or_insert(e);
            }
        }
        if let Ok(Some(c)) = &r {
            self.expires(c);
        }
        self.after(r)
    }
    fn renew(&self, claim: &Claim, ttl_ms: u64, now: u64) -> Result<Claim> {
        self.before()?;
        let now = if self.net { now } else { self.true_ms() };
        let r = self.store.renew(claim, ttl_ms, now);
        if let Ok(c) = &r {
            // Every store expires a claim at its TTL and refuses its renewal after that (SPEC §3.2): an
            // expired claim nobody took again would not mint a duplicate, so the rule is checked
            // itself. The in-memory and embedded stores judge by the time they are given (the true
            // time here: no tolerance); the server stores' own clocks are not this world's.
            let key = (claim.sequencer.clone(), claim.node_id, claim.token);
            let was = self.expiries.lock().unwrap().get(&key).copied();
            if let Some(at) = was.filter(|&at| !self.net && now >= at) {
                self.violation.lock().unwrap().get_or_insert(format!(
                    "the renewal of node {}'s claim (fencing token {}) was answered at {} ms, after \
                     the claim expired at {} ms",
                    claim.node_id,
                    claim.token,
                    now - START_UNIX_NS / MS,
                    at - START_UNIX_NS / MS
                ));
            }
            self.expires(c);
        }
        self.after(r)
    }
    fn release(&self, claim: &Claim) -> Result<()> {
        self.before()?;
        self.after(self.store.release(claim))
    }
    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        self.before()?;
        self.store.reservation(sequencer, node_id)
    }
    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.before()?;
        let r = self.send(Write::Reserve(claim.clone(), *reservation));
        self.after(r.map(|_| ()))
    }
    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.before()?;
        self.after(self.store.lower_reservation(claim, reservation))
    }
    fn holders(&self, sequencer: &str, now: u64) -> Result<Vec<NodeState>> {
        self.before()?;
        let now = if self.net { now } else { self.true_ms() };
        self.store.holders(sequencer, now)
    }
    fn row(&self, key: &str) -> Result<Option<String>> {
        self.before()?;
        self.store.row(key)
    }
    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        self.before()?;
        let write = || Write::Swap(key.into(), expected.map(String::from), new.into());
        if !self.net && self.roll(&self.faults.resend) {
            // The answer is lost: after the store applied the write, or before it reached it.
            let applied = self.rng.lock().unwrap().chance(50);
            if applied {
                self.send(write())?;
            }
            self.interleave();
            // The client sends it again.
            return match self.send(write())? {
                true => Ok(true),
                false => self.resend_answer(key, new),
            };
        }
        let r = self.send(write());
        self.after(r)
    }
}

/// A process's store, through its link, where another process's whole range take may land between a
/// read of a row and the compare-and-set that follows it (`Race`): the interleaving a real
/// datacenter's processes produce.
#[derive(Debug)]
pub(crate) struct RaceLink {
    pub(crate) inner: Arc<Link>,
    pub(crate) race: Arc<Race>,
    pub(crate) me: usize,
}

/// The processes a race may interleave, and the ranges taken inside races.
#[derive(Debug)]
pub(crate) struct Race {
    pub(crate) rng: Mutex<Rng>,
    pub(crate) busy: AtomicBool,
    pub(crate) percent: u64,
    /// Each process's allocator (`None`: not open, its last open refused).
    pub(crate) allocs: Mutex<Vec<Option<Arc<SteppedAllocator>>>>,
    pub(crate) taken: Mutex<Vec<(usize, u64, u64)>>,
}

impl Race {
    pub(crate) fn interleave(&self, me: usize) {
        self.interleave_by(me, self.percent)
    }
    /// While `me`'s answer is lost: another process acts (unless one is acting already).
    pub(crate) fn interleave_always(&self, me: usize) {
        self.interleave_by(me, 100)
    }
    pub(crate) fn interleave_by(&self, me: usize, percent: u64) {
        if self.busy.swap(true, Ordering::SeqCst) {
            return;
        }
        let other = {
            let mut rng = self.rng.lock().unwrap();
            let n = self.allocs.lock().unwrap().len();
            if n > 1 && rng.chance(percent) {
                Some((me + 1 + rng.below(n as u64 - 1) as usize) % n)
            } else {
                None
            }
        };
        if let Some(j) = other {
            let a = self.allocs.lock().unwrap()[j].clone();
            if let Some(Ok(((s, e), _))) = a.map(|a| a.take_process_range()) {
                self.taken.lock().unwrap().push((j, s, e));
            }
        }
        self.busy.store(false, Ordering::SeqCst);
    }
}

impl Store for RaceLink {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn max_ahead(&self) -> Option<Duration> {
        self.inner.max_ahead()
    }
    fn create_sequencer(&self, n: &str, c: &SequencerConfig, now: u64) -> Result<SequencerRecord> {
        self.inner.create_sequencer(n, c, now)
    }
    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        self.inner.sequencer(name)
    }
    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        self.inner.sequencers()
    }
    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        self.inner.destroy_sequencer(name, incarnation)
    }
    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        self.inner.claim(request)
    }
    fn renew(&self, claim: &Claim, ttl_ms: u64, now: u64) -> Result<Claim> {
        self.inner.renew(claim, ttl_ms, now)
    }
    fn release(&self, claim: &Claim) -> Result<()> {
        self.inner.release(claim)
    }
    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        self.inner.reservation(sequencer, node_id)
    }
    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.inner.reserve(claim, reservation)
    }
    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.inner.lower_reservation(claim, reservation)
    }
    fn holders(&self, sequencer: &str, now: u64) -> Result<Vec<NodeState>> {
        self.inner.holders(sequencer, now)
    }
    fn row(&self, key: &str) -> Result<Option<String>> {
        // What this process read may be stale by the time it writes.
        let r = self.inner.row(key);
        self.race.interleave(self.me);
        r
    }
    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        self.inner.swap_row(key, expected, new)
    }
}
