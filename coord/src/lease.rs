//! The lease algorithm (SPEC §3.2), written once over [`Store`] and [`Time`].
//!
//! - **Claim**: the store takes a free node ID of the sequencer (`NODE_IDS_EXHAUSTED` when all are held,
//!   saying when the earliest held claim expires; [`LeaseOptions::wait_for_node`] asks again every
//!   [`NODE_WAIT_POLL`] up to that bound first).
//! - **Start**: the new holder reads the node ID's persisted reservation and starts strictly after it
//!   (after its position under the same layout, and after the ticks it covers in time under any layout),
//!   and at or above the sequencer's value floor (the IDs of destroyed incarnations of its name,
//!   [`crate::store`]).
//! - **Reserve, then mint**: the generator's [`Ceiling`](snowmint::Ceiling) is the first position it may
//!   not mint. It is raised only after the store acknowledged a reservation up to it, written on the
//!   condition that the claim is still held (fencing token). So whatever a holder mints was durably
//!   reserved while it held the claim, and a later holder starts past it: two holders of one node ID never
//!   mint the same ID, whatever their clocks say, however long one of them was paused.
//! - **Keeper**: a thread renews the claim every `ttl / 3` (or more often, see [`LeaseOptions`]) and
//!   extends the reservation a few seconds ahead of the clock. When the claim is lost (expired, taken, the
//!   store unreachable past the claim's TTL) it stops: the generator runs up to its ceiling, then fails
//!   with `LEASE_LOST` (or, under the `wait` policy, waits a bounded time for an extension first). A
//!   holder whose claim is still held but who reaches its ceiling (a burst faster than the keeper extends)
//!   waits for the extension under `wait`, and gets `TOO_FAR_AHEAD` (retry shortly) under `fail`, as a
//!   generator past `max_ahead` does.
//! - **Batches past the ceiling**: a mint that needs more than the ceiling allows (a batch larger than
//!   the keeper's reservation step) tells the keeper the position its request ends at. The keeper
//!   reserves `reserve_ahead` past the later of the clock, the generator and that end, in one write
//!   conditioned on the claim (only that write: no renewal round), and raises the ceiling once the store
//!   acknowledged it; the mint then succeeds (under `wait` it waits for it, at most `wait_bound`, by
//!   default the TTL; under `fail` its retry does). What the request may need is bounded by `max_ahead`:
//!   a batch the generator could never mint (more IDs than `max_ahead` holds) fails with the core's
//!   `INVALID_ARGUMENT` before any reservation is asked for.
//! - **One lease per host** ([`LeaseOptions::state_file`], [`crate::shared_lease`]): the processes that
//!   open one state file share one claim. The ceiling, the state, the renewal deadline and the wanted end
//!   live in the file's lease words ([`Word`]) and the generator mints from the file's state word, so the
//!   code above runs unchanged on them; the keeper runs in the process holding the file's keeper lock,
//!   and another process takes it over (adopting the same claim, [`Store::adopt`]) when that one exits or
//!   is killed. The first process claims (and starts after the reservation before it records the claim
//!   in the file), the others adopt, the last one releases. A forked child keeps none of it: its
//!   ceiling is capped at zero ([`LeaseCeiling`]) and it lets go of the parent's locks.
//! - **Sequencer destroyed**: the keeper checks the sequencer's record on every round; once it is gone
//!   (or re-created: another incarnation), the ceiling drops to zero and every mint fails with
//!   `SEQUENCER_DESTROYED`, forever.

use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use snowmint::{ErrorCode, Layout, Options, Policy, SharedGenerator};

use crate::base::error::{Error, Result};
use crate::base::store::{Claim, ClaimRequest, Reservation, SequencerRecord, Store};
use crate::base::sync::{self, Condvar, Mutex};
use crate::base::time::Time;
use crate::shared_lease::{self, Record, SharedFile};

// The public paths of the default TTL and the planted defects this module used to hold.
#[cfg(feature = "planted-defects")]
pub use crate::base::defect::Defect;
pub use crate::base::url::DEFAULT_TTL;

/// How often a claim that waits for a node ID ([`LeaseOptions::wait_for_node`]) asks the store again.
pub const NODE_WAIT_POLL: Duration = Duration::from_millis(100);

/// How a lease is kept.
#[derive(Clone, Debug)]
pub struct LeaseOptions {
    /// Claim time-to-live (at least 1 ms). The claim is renewed every `ttl / 3` at most.
    pub ttl: Duration,
    /// How far ahead of the clock the reservation is kept (default: 4 s, capped at half of the
    /// generator's `max_ahead`, at least 3 renewal rounds).
    pub reserve_ahead: Duration,
    /// Under the `wait` policy, how long a mint at the ceiling waits for the keeper to raise it before
    /// failing with `LEASE_LOST` (default: the TTL).
    pub wait_bound: Option<Duration>,
    /// Who holds the claim, as [`Store::holders`] shows it (default `pid N on HOST`).
    pub holder: String,
    /// No keeper thread: the caller runs each keeper round with [`Lease::keeper_round`] (a deterministic
    /// simulation decides when rounds happen). Default `false`.
    pub stepped: bool,
    /// Claim exactly this node ID (a process configured with a fixed node ID that takes part in a
    /// sequencer's node-ID space, such as `snowmint serve --node N --leases URL`): refused with
    /// `NODE_IDS_EXHAUSTED` while another holder has it. Default `None`: any free node ID.
    pub node: Option<u64>,
    /// Share the lease with every process of the host that opens the same state file (`state_file=` /
    /// `stateFile` in the bindings): the first claims a node ID and records it in the file; the others
    /// mint from the file under that node ID; the lease is kept while any of them lives and released
    /// by the last one (see [`crate::shared_lease`] and the module docs). Default `None`: this process's
    /// own lease.
    pub state_file: Option<PathBuf>,
    /// How long a claim waits for a node ID to come free when all are held (`?wait=30s` in a lease
    /// source; the bindings' `wait_for_node_ms` / `waitForNodeMs`). Default zero: `NODE_IDS_EXHAUSTED`
    /// at once. The claim is tried again every [`NODE_WAIT_POLL`] (sooner at the bound); the error after
    /// the bound says when the earliest held claim expires.
    pub wait_for_node: Duration,
    /// A defect planted on purpose, so the simulator can prove it catches it (feature
    /// `planted-defects`, for the simulation's own tests only).
    #[cfg(feature = "planted-defects")]
    pub defect: Defect,
}

impl Default for LeaseOptions {
    fn default() -> Self {
        LeaseOptions {
            ttl: DEFAULT_TTL,
            reserve_ahead: Duration::from_secs(4),
            wait_bound: None,
            holder: default_holder(),
            stepped: false,
            node: None,
            state_file: None,
            wait_for_node: Duration::ZERO,
            #[cfg(feature = "planted-defects")]
            defect: Defect::None,
        }
    }
}

/// `pid N on HOST`.
pub fn default_holder() -> String {
    format!(
        "pid {} on {}",
        std::process::id(),
        crate::base::hostname::hostname().unwrap_or_else(|| "?".into())
    )
}

/// The state of a lease (a sequencer handle adds `Detached` by having none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaseState {
    /// The claim is held and kept.
    Held,
    /// The claim was lost (or released): minting stops at the ceiling.
    Lost,
    /// The sequencer was destroyed: minting fails with `SEQUENCER_DESTROYED`.
    Destroyed,
}

const HELD: u64 = 0;
const LOST: u64 = 1;
const DESTROYED: u64 = 2;

/// A 64-bit word of a lease: in this process's memory, or one of a state file's words (a lease shared
/// by the host's processes), kept alive by its owner as long as the word is.
#[derive(Clone)]
pub struct Word {
    ptr: NonNull<AtomicU64>,
    _owner: Arc<dyn std::any::Any + Send + Sync>,
}

// SAFETY: `ptr` points into `_owner` (an `Arc<AtomicU64>` or a mapped state file) and is only used
// through atomics.
unsafe impl Send for Word {}
unsafe impl Sync for Word {}

impl Word {
    fn memory(value: u64) -> Word {
        let owner = Arc::new(AtomicU64::new(value));
        Word {
            ptr: NonNull::from(&*owner),
            _owner: owner,
        }
    }

    fn in_file(file: &SharedFile, index: usize) -> Word {
        Word {
            ptr: NonNull::from(file.word(index)),
            _owner: file.file.clone(),
        }
    }
}

impl std::ops::Deref for Word {
    type Target = AtomicU64;

    #[inline(always)]
    fn deref(&self) -> &AtomicU64 {
        // SAFETY: see the Send/Sync impls: the pointee lives as long as `self`.
        unsafe { self.ptr.as_ref() }
    }
}

impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Word({})", self.load(Ordering::Relaxed))
    }
}

impl snowmint::StateWord for Word {
    #[inline(always)]
    fn word(&self) -> &AtomicU64 {
        self
    }
}

/// A lease generator's ceiling: the lease's (in this process, or the shared state file's), capped by
/// this process (zero once it released the lease or in a forked child, which must not mint under a
/// claim other processes keep).
#[derive(Clone, Debug)]
pub struct LeaseCeiling {
    word: Word,
    cap: Arc<sync::AtomicU64>,
}

impl snowmint::Ceiling for LeaseCeiling {
    #[inline(always)]
    fn limit(&self) -> u64 {
        self.word
            .load(Ordering::Relaxed)
            .min(self.cap.load(Ordering::Relaxed))
    }
}

/// What the keeper and the minting side share.
#[derive(Debug)]
struct Shared {
    store: Arc<dyn Store>,
    time: Arc<dyn Time>,
    layout: Layout,
    fingerprint: u64,
    record: SequencerRecord,
    options: LeaseOptions,
    /// The store's bound on what any holder mints ahead of the clock ([`Store::max_ahead`], ns): the
    /// reservation never reaches further ahead of the clock than this.
    bound_ns: Option<u64>,
    /// Where this process's generator started (a fresh claim): a release waits out what was minted past it.
    started_at: sync::AtomicU64,
    /// The first position the generator may not mint (a shared lease: the state file's, for every
    /// process).
    ceiling: Word,
    /// This process's cap on the ceiling ([`LeaseCeiling`]): `u64::MAX`, 0 once released or forked.
    cap: Arc<sync::AtomicU64>,
    /// The end (first position after) of the largest request that met the ceiling: the keeper's
    /// reservation covers it ([`Shared::target`]). Only grows.
    wanted: Word,
    /// The claim is good until this monotonic instant (ns), measured from before the request that last
    /// renewed it: past it, the store may have expired the claim and handed the node ID to another.
    good_until: Word,
    state: Word,
    /// The state file of a shared lease.
    file: Option<SharedFile>,
    claim: Mutex<Claim>,
    /// Set to wake the keeper early: `stop` ends it, `urgent` asks for a round now.
    wake: Mutex<Wake>,
    wake_cv: Condvar,
    /// Signalled whenever the ceiling or the state changes.
    changed: Mutex<()>,
    changed_cv: Condvar,
}

#[derive(Debug, Default)]
struct Wake {
    stop: bool,
    urgent: bool,
    /// A mint met the ceiling: extend the reservation now (one store write, no renewal).
    extend: bool,
}

/// A generator that mints under a node-ID lease: the lock-free [`SharedGenerator`] with a ceiling (its
/// state word and ceiling in this process, or in the state file of a shared lease).
pub type CeiledGenerator = SharedGenerator<Word, LeaseCeiling>;

/// A held node-ID lease with its generator and keeper thread. Dropping it stops the keeper and releases
/// the claim (the reservation stays in the store).
#[derive(Debug)]
pub struct Lease {
    shared: Arc<Shared>,
    generator: CeiledGenerator,
    /// The generator's state word (the next free position), also read by the keeper.
    state_word: Word,
    /// `Time::is_system`, read once: minting then reads the clock as the core's `FastClock`.
    system_time: bool,
    /// The claim's node ID and fencing token (fixed for the lease's life; read without a lock).
    node_id: u64,
    token: u64,
    /// The process that acquired the lease: a forked child owns neither its keeper nor its claim.
    pid: u32,
    keeper: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// A stepped lease (no keeper thread; [`Lease::keeper_round`] runs a round, one at a time).
    stepped: Option<Mutex<()>>,
    /// Released (or abandoned): dropping does nothing more.
    released: sync::AtomicBool,
}

fn ms(ns: u64) -> u64 {
    ns / 1_000_000
}

fn duration_ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

impl Shared {
    fn seq_bits(&self) -> u32 {
        self.layout.sequence_bits()
    }

    /// The last position of the tick that holds `unix_ns` (clamped to the layout's range).
    fn position_at(&self, unix_ns: u64) -> Result<u64> {
        let tick = self.layout.tick_at_ns(unix_ns).map_err(Error::from)?;
        Ok((tick << self.seq_bits()) | ((1u64 << self.seq_bits()) - 1))
    }

    /// The reservation record for "every position up to `position`".
    fn reservation_for(&self, position: u64) -> Reservation {
        reservation_for(&self.layout, self.fingerprint, position)
    }

    /// The first position a new holder may mint after `r`.
    fn start_after(&self, r: &Reservation) -> u64 {
        start_after(&self.layout, self.fingerprint, r)
    }

    fn state(&self) -> LeaseState {
        match self.state.load(Ordering::SeqCst) {
            HELD => LeaseState::Held,
            LOST => LeaseState::Lost,
            _ => LeaseState::Destroyed,
        }
    }

    fn set_state(&self, s: u64) {
        // Destroyed is final; Lost never goes back to Held.
        let _ = self
            .state
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |cur| {
                (s > cur).then_some(s)
            });
        if s == DESTROYED {
            self.ceiling.store(0, Ordering::SeqCst);
        }
        self.notify_changed();
    }

    /// In a forked child: never mint again (atomics only: no lock is safe to take there). A shared
    /// lease's words are the other processes' too: only this process stops, and lets go of the locks
    /// of the file description it inherited.
    fn forked(&self) {
        self.cap.store(0, Ordering::SeqCst);
        match &self.file {
            Some(f) => shared_lease::let_go_in_child(f.lock_fd()),
            None => {
                self.state.store(LOST, Ordering::SeqCst);
                self.ceiling.store(0, Ordering::SeqCst);
            }
        }
    }

    fn notify_changed(&self) {
        let _g = self.changed.lock().unwrap_or_else(|p| p.into_inner());
        self.changed_cv.notify_all();
    }

    /// Past the claim's TTL since the request that last renewed it: the store may have expired it.
    fn past_ttl(&self) -> bool {
        self.time.monotonic_ns() >= self.good_until.load(Ordering::SeqCst)
    }

    fn claim(&self) -> Claim {
        self.claim.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Writes a reservation up to `position` and, once the store acknowledged it, raises the ceiling.
    fn extend_to(&self, position: u64) -> Result<()> {
        let claim = self.claim();
        let r = self.reservation_for(position);
        #[cfg(feature = "planted-defects")]
        if self.options.defect == Defect::CeilingBeforeAck {
            self.ceiling
                .fetch_max(position.saturating_add(1), Ordering::SeqCst);
        }
        self.store.reserve(&claim, &r)?;
        if self.state.load(Ordering::SeqCst) == HELD {
            self.ceiling
                .fetch_max(position.saturating_add(1), Ordering::SeqCst);
        }
        self.notify_changed();
        Ok(())
    }

    /// The keeper's reservation target: `reserve_ahead` past the later of the clock, the generator
    /// (`next_free`) and the end of a request that met the ceiling ([`Shared::wanted`]).
    fn target(&self, next_free: u64) -> Result<u64> {
        #[cfg(feature = "planted-defects")]
        let generator = next_free;
        let next_free = next_free.max(self.wanted.load(Ordering::SeqCst));
        #[cfg(feature = "planted-defects")]
        let next_free = if self.options.defect == Defect::KeeperIgnoresWanted {
            generator // the defect: the generator's position only, as before `wanted`
        } else {
            next_free
        };
        let ahead = duration_ms(self.options.reserve_ahead).saturating_mul(1_000_000);
        let by_clock = self.position_at(self.time.unix_ns().saturating_add(ahead))?;
        // Ahead of a generator that runs ahead of the clock (a burst, a clock behind), by the same span.
        let span_ticks = ahead / self.layout.tick_ns();
        let by_state = ((next_free >> self.seq_bits()).saturating_add(span_ticks)
            << self.seq_bits())
            | ((1u64 << self.seq_bits()) - 1);
        let max = self.layout.max_tick() << self.seq_bits() | ((1u64 << self.seq_bits()) - 1);
        let target = by_clock.max(by_state).min(max);
        // A store whose history can be lost: never reserved further ahead of the clock than its bound,
        // which is what a holder finding no history starts above ([`Shared::unknown_history_start`]).
        match self.bound_ns {
            Some(b) => Ok(target.min(self.position_at(self.time.unix_ns().saturating_add(b))?)),
            None => Ok(target),
        }
    }

    /// On a store whose history can be lost ([`Store::max_ahead`]), the first position a new holder may
    /// mint whatever the store holds: past every tick that starts before `now + bound`, the furthest any
    /// earlier holder of the node ID could have reserved (its last write was before now). `0` elsewhere.
    fn unknown_history_start(&self) -> u64 {
        match self.bound_ns {
            Some(b) => start_after_ns(&self.layout, self.time.unix_ns().saturating_add(b)),
            None => 0,
        }
    }

    /// Sleeps (bounded by the store's bound and a tick) until the clock has left the tick of position
    /// `last`: a process leaves nothing minted ahead of the clock behind it (SPEC §3.2).
    fn wait_out(&self, last: u64) {
        let Some(b) = self.bound_ns else { return };
        let tick = last >> self.seq_bits();
        let end_ns = self
            .layout
            .epoch_ns()
            .saturating_add(tick.saturating_add(1).saturating_mul(self.layout.tick_ns()));
        let left = end_ns.saturating_sub(self.time.unix_ns());
        let most = b.saturating_add(self.layout.tick_ns());
        if left > 0 {
            std::thread::sleep(Duration::from_nanos(left.min(most)));
        }
    }

    /// On a store with a bound ([`Store::max_ahead`]), whether the room between the next position the
    /// generator mints (`next_free`, or the clock's tick) and the ceiling is under half the bound. The
    /// ceiling never reaches past `now + bound`, and a new holder starts there: in its first second
    /// the room is what the clock has moved since the last extension; a light keeper round then
    /// writes the reservation ([`Shared::room_left`]).
    fn room_low(&self, next_free: u64) -> bool {
        let Some(b) = self.bound_ns else {
            return false;
        };
        if self.state() != LeaseState::Held {
            return false;
        }
        let Ok(at_clock) = self.position_at(self.time.unix_ns()) else {
            return false;
        };
        let next = next_free.max(at_clock) >> self.seq_bits();
        let ceiling = self.ceiling.load(Ordering::SeqCst) >> self.seq_bits();
        ceiling
            .saturating_sub(next)
            .saturating_mul(self.layout.tick_ns())
            < b / 2
    }

    /// Whether the ceiling is at least half the reservation step past the next position the generator
    /// mints (`next_free`, or the clock's tick), and the room is not low ([`Shared::room_low`]): a
    /// light keeper round then writes no reservation.
    fn room_left(&self, next_free: u64) -> bool {
        if self.room_low(next_free) {
            return false;
        }
        let Ok(at_clock) = self.position_at(self.time.unix_ns()) else {
            return false;
        };
        let next = next_free
            .max(at_clock)
            .max(self.wanted.load(Ordering::SeqCst))
            >> self.seq_bits();
        let ceiling = self.ceiling.load(Ordering::SeqCst) >> self.seq_bits();
        let half_step = duration_ms(self.options.reserve_ahead).saturating_mul(1_000_000) / 2;
        ceiling
            .saturating_sub(next)
            .saturating_mul(self.layout.tick_ns())
            >= half_step
    }

    /// The interval between keeper rounds.
    fn period(&self) -> Duration {
        let by_ttl = self.options.ttl / 3;
        let by_reserve = self.options.reserve_ahead / 3;
        by_ttl.min(by_reserve).max(Duration::from_millis(1))
    }

    /// Checks that the sequencer still exists as this incarnation.
    fn check_sequencer(&self) -> Result<bool> {
        Ok(
            matches!(self.store.sequencer(&self.record.name)?, Some(r) if r.incarnation == self.record.incarnation),
        )
    }

    /// The store refused the claim: a destroy that landed between this round's sequencer check and its
    /// renewal removes the claims too, so the record is asked once more to report the right end.
    fn lost_or_destroyed(&self) {
        match self.check_sequencer() {
            Ok(false) => self.set_state(DESTROYED),
            _ => self.set_state(LOST),
        }
    }
}

/// The reservation record for "every position up to `position`" under `layout` (whose
/// [`crate::layout_fingerprint`] is `fingerprint`): it also covers, in time, the end of `position`'s tick.
pub fn reservation_for(layout: &Layout, fingerprint: u64, position: u64) -> Reservation {
    let tick = position >> layout.sequence_bits();
    let end_ns = layout
        .epoch_ns()
        .saturating_add((tick + 1).saturating_mul(layout.tick_ns()));
    Reservation {
        position,
        layout_fingerprint: fingerprint,
        until_unix_ms: end_ns.div_ceil(1_000_000),
    }
}

/// The first position a new holder of a node ID may mint under `layout` (fingerprint `fingerprint`)
/// after the stored reservation `r`: after its position under the same layout, and after every tick
/// that starts before its `until_unix_ms` under any layout (SPEC §3.2).
pub fn start_after(layout: &Layout, fingerprint: u64, r: &Reservation) -> u64 {
    let mut start = 0;
    if r.layout_fingerprint == fingerprint {
        start = r.position.saturating_add(1);
    }
    // Every tick that starts before `until_unix_ms` is taken, under any layout.
    start.max(start_after_ns(
        layout,
        r.until_unix_ms.saturating_mul(1_000_000),
    ))
}

/// The first position of the first tick of `layout` that starts at or after `until_ns` (Unix ns).
pub fn start_after_ns(layout: &Layout, until_ns: u64) -> u64 {
    let since = until_ns.saturating_sub(layout.epoch_ns());
    let tick = since.div_ceil(layout.tick_ns());
    tick.saturating_mul(1u64 << layout.sequence_bits())
}

/// A (renewal) deadline in the time source's monotonic clock.
/// How an open goes on after its claim was taken: a step (reading the node ID's reservation, writing
/// the first one) that fails with `STORE_UNAVAILABLE` (its sends timed out, or their connections
/// broke: answers held back or lost) is tried again under the same claim rather than the open giving
/// the claim back and starting over (a new claim: more calls, each able to fail). Bounded: at most
/// [`Resume::TRIES`] tries of each step, and none begun once a third of the TTL has passed since the
/// claim was taken (the keeper, not yet started, then still has two thirds of it to renew the claim).
/// Safe as every re-send is: the reservation write is conditional on the claim's token, and a claim
/// that expired meanwhile fails it with `LEASE_LOST`, which is not tried again.
struct Resume {
    until: u64,
}

impl Resume {
    /// Tries of one step at most.
    const TRIES: u32 = 4;

    fn after_claim(time: &dyn Time, ttl: Duration) -> Resume {
        Resume {
            until: deadline_after(time, ttl / 3),
        }
    }

    fn retry<T>(&self, time: &dyn Time, mut step: impl FnMut() -> Result<T>) -> Result<T> {
        let mut tries = 1;
        loop {
            match step() {
                Err(e)
                    if e.code() == ErrorCode::StoreUnavailable
                        && tries < Self::TRIES
                        && time.monotonic_ns() < self.until =>
                {
                    tries += 1;
                }
                done => return done,
            }
        }
    }
}

fn deadline_after(time: &dyn Time, d: Duration) -> u64 {
    time.monotonic_ns()
        .saturating_add(d.as_nanos().min(u64::MAX as u128) as u64)
}

fn keeper(shared: Arc<Shared>, state_of: impl Fn() -> u64) {
    // A shared lease: one process of the host keeps it; the others wait to take over.
    if shared.file.is_some() && !become_keeper(&shared) {
        return;
    }
    // A shared lease's keeper also looks for requests of other processes that met the ceiling.
    let poll = shared.file.as_ref().map(|_| shared_lease::POLL);
    let others_want = || {
        poll.is_some()
            && shared.state() == LeaseState::Held
            && shared.wanted.load(Ordering::SeqCst) > shared.ceiling.load(Ordering::SeqCst)
    };
    // Full rounds keep their period however often a mint asks for an extension in between.
    let mut next_round = std::time::Instant::now() + shared.period();
    // Rounds since the last sequencer check ([`keeper_round_light`]).
    let mut rounds = 0u32;
    // A round asked for now ([`Lease::poke`]) is a full one.
    let mut urgent;
    loop {
        let full = {
            let mut w = shared.wake.lock().unwrap_or_else(|p| p.into_inner());
            let now = std::time::Instant::now();
            if !w.stop && !w.urgent && !w.extend && now < next_round && !others_want() {
                let wait = next_round - now;
                w = shared
                    .wake_cv
                    .wait_timeout(w, poll.map_or(wait, |p| p.min(wait)))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            if w.stop {
                return;
            }
            let now = std::time::Instant::now();
            urgent = w.urgent;
            let full = w.urgent || now >= next_round;
            let extend = w.extend || others_want();
            // A full round extends too.
            w.urgent = false;
            w.extend = false;
            if !full && !extend {
                continue; // a spurious wake-up
            }
            full
        };
        let going = if full {
            next_round = std::time::Instant::now() + shared.period();
            rounds += 1;
            let check = rounds >= CHECK_EVERY;
            if check || urgent {
                rounds = 0;
            }
            if urgent {
                keeper_round(&shared, state_of())
            } else {
                keeper_round_light(&shared, state_of(), check)
            }
        } else {
            extend_round(&shared, state_of())
        };
        if !going {
            return;
        }
    }
}

/// A process of a shared lease waits until it holds the keeper lock (the keeper before it left or was
/// killed), then adopts the claim ([`Store::adopt`]: renews the same claim, same fencing token, from
/// this process; an expired or taken claim is not brought back: the lease is then lost for every
/// process). `false`: the lease ended (or this process stopped) first.
fn become_keeper(shared: &Shared) -> bool {
    let Some(file) = &shared.file else {
        return true;
    };
    let ttl_ms = duration_ms(shared.options.ttl);
    loop {
        {
            let w = shared.wake.lock().unwrap_or_else(|p| p.into_inner());
            if w.stop || shared.state() != LeaseState::Held {
                return false;
            }
            if !file.try_keeper().unwrap_or(false) {
                let _ = shared.wake_cv.wait_timeout(w, shared_lease::POLL);
                continue;
            }
        }
        let started = shared.time.monotonic_ns();
        match shared
            .store
            .adopt(&shared.claim(), ttl_ms, ms(shared.time.unix_ns()))
        {
            Ok(renewed) => {
                *shared.claim.lock().unwrap_or_else(|p| p.into_inner()) = renewed;
                shared.good_until.store(
                    started.saturating_add(ttl_ms.saturating_mul(1_000_000)),
                    Ordering::SeqCst,
                );
                return true;
            }
            Err(e) if e.code() == ErrorCode::LeaseLost => {
                shared.lost_or_destroyed();
                return false;
            }
            Err(_) if shared.past_ttl() => {
                shared.set_state(LOST);
                return false;
            }
            Err(_) => {
                // The store is unreachable for now: try again (another process may take over first).
                file.resign_keeper();
                let w = shared.wake.lock().unwrap_or_else(|p| p.into_inner());
                let _ = shared.wake_cv.wait_timeout(w, shared_lease::POLL);
            }
        }
    }
}

/// One full keeper round (a stepped lease's, [`Lease::keeper_round`]): check the sequencer, renew the
/// claim, extend the reservation. `false` once the lease has ended (lost or destroyed): the keeper
/// stops. The keeper thread's rounds are light ([`keeper_round_light`]).
fn keeper_round(shared: &Shared, next_free: u64) -> bool {
    match shared.check_sequencer() {
        Ok(true) => {}
        Ok(false) => {
            shared.set_state(DESTROYED);
            let _ = shared.store.release(&shared.claim());
            return false;
        }
        // Unanswered: the renewal is still tried (a store that answers some requests keeps the claim;
        // a sequencer destroyed meanwhile ended it, and the renewal fails with LEASE_LOST).
        Err(_) if !shared.past_ttl() => {}
        Err(_) => {
            shared.set_state(LOST);
            return false;
        }
    }
    if let Err(going) = renew_claim(shared) {
        return going;
    }
    extend_round(shared, next_free)
}

/// Renews the claim. `Err(going)` when the renewal failed: `false` once the lease has ended (lost,
/// destroyed, or past its TTL), `true` to try again next round.
fn renew_claim(shared: &Shared) -> std::result::Result<(), bool> {
    let ttl_ms = duration_ms(shared.options.ttl);
    // Before the renewal is sent: the store's new expiry is at least this plus the TTL.
    let started = shared.time.monotonic_ns();
    let claim = shared.claim();
    match shared
        .store
        .renew(&claim, ttl_ms, ms(shared.time.unix_ns()))
    {
        Ok(renewed) => {
            *shared.claim.lock().unwrap_or_else(|p| p.into_inner()) = renewed;
            shared.good_until.store(
                started.saturating_add(ttl_ms.saturating_mul(1_000_000)),
                Ordering::SeqCst,
            );
        }
        Err(e) if e.code() == ErrorCode::LeaseLost => {
            shared.lost_or_destroyed();
            return Err(false);
        }
        Err(_) => {
            if shared.past_ttl() {
                shared.set_state(LOST);
                return Err(false);
            }
            return Err(true);
        }
    }
    Ok(())
}

/// The keeper thread's rounds check the sequencer every this many rounds (about once per TTL).
const CHECK_EVERY: u32 = 3;

/// A round of the keeper thread: renew the claim first, then write the reservation only when the
/// room under the ceiling is under half the step (or low, [`Shared::room_low`]), and check the
/// sequencer every [`CHECK_EVERY`] rounds (`check`). `false` once the lease has ended.
///
/// Every store call between two renewals delays the next one, and the claim's TTL counts from the
/// renewal's send: under faults (answers late, each call waiting out a late answer and its re-send,
/// [`crate::stores::remote`]) a check and a reservation in front of every renewal lost leases (PostgreSQL
/// with 30 % of answers held back 3 s). A destroy ends the claims (the renewal or the reservation
/// then fails with `LEASE_LOST`, and [`Shared::lost_or_destroyed`] reads the record) and the store
/// refuses a destroyed incarnation's reservation; the check ends the lease of a destroyed sequencer
/// on a store where the claims outlive it. A stepped lease's rounds stay full ([`keeper_round`]).
fn keeper_round_light(shared: &Shared, next_free: u64, check: bool) -> bool {
    if let Err(going) = renew_claim(shared) {
        return going;
    }
    if !shared.room_left(next_free) && !extend_round(shared, next_free) {
        if shared.state() == LeaseState::Destroyed {
            // The store refused a destroyed incarnation's reservation: its claim is given back.
            let _ = shared.store.release(&shared.claim());
        }
        return false;
    }
    if !check {
        return true;
    }
    match shared.check_sequencer() {
        Ok(true) => true,
        Ok(false) => {
            shared.set_state(DESTROYED);
            let _ = shared.store.release(&shared.claim());
            false
        }
        // Unanswered: the claim was renewed; the next round asks again.
        Err(_) => true,
    }
}

/// Extends the reservation to [`Shared::target`] when the ceiling is below it (one store write,
/// conditioned on the claim). `false` once the store said the claim is lost: the keeper stops. Other
/// errors leave the ceiling as it is for the next round.
fn extend_round(shared: &Shared, next_free: u64) -> bool {
    let extended = shared.target(next_free).and_then(|target| {
        if target >= shared.ceiling.load(Ordering::SeqCst) {
            shared.extend_to(target)
        } else {
            Ok(())
        }
    });
    if let Err(e) = extended {
        if e.code() == ErrorCode::LeaseLost {
            shared.lost_or_destroyed();
            return false;
        }
    }
    true
}

impl Lease {
    /// Claims a node ID of the sequencer `record` on `store` and starts its keeper (unless
    /// [`LeaseOptions::stepped`]); the generator mints under `layout` with `options`.
    pub fn acquire(
        store: Arc<dyn Store>,
        time: Arc<dyn Time>,
        record: SequencerRecord,
        layout: Layout,
        options: Options,
        lease: LeaseOptions,
    ) -> Result<Lease> {
        let ttl_ms = duration_ms(lease.ttl);
        if ttl_ms == 0 {
            return Err(Error::invalid("the lease TTL must be at least 1 ms"));
        }
        let mut lease = lease;
        let stepped = lease.stepped;
        // A store whose history can be lost bounds what any holder mints ahead of the clock (at least
        // two ticks of the layout, so that a layout of long ticks still mints ahead by one).
        let bound_ns = store.max_ahead().map(|b| {
            (b.as_nanos().min(u64::MAX as u128) as u64).max(layout.tick_ns().saturating_mul(2))
        });
        let mut options = options;
        if let Some(b) = bound_ns {
            options.max_ahead_ns = options.max_ahead_ns.min(b);
        }
        // Well inside max_ahead, so that the generator never waits on the reservation while it may mint.
        let half_ahead = Duration::from_nanos(options.max_ahead_ns / 2);
        if options.policy != Policy::Strict
            && lease.reserve_ahead > half_ahead
            && !half_ahead.is_zero()
        {
            lease.reserve_ahead = half_ahead;
        }
        let nodes = record.config.nodes;
        if let Some(n) = lease.node.filter(|&n| n >= nodes) {
            return Err(Error::invalid(format!(
                "node ID {n} is not one of sequencer {:?}'s node IDs (0..{nodes})",
                record.name
            )));
        }
        let start = if let Some(n) = lease.node {
            n
        } else if stepped {
            // A simulation replays exactly: the start follows from the holder and its clock only.
            let h = lease
                .holder
                .bytes()
                .fold(0u64, |h, b| snowmint::mix64(h ^ b as u64));
            snowmint::mix64(h ^ time.unix_ns()) % nodes.max(1)
        } else {
            spread(nodes, time.unix_ns())
        };
        let file = match &lease.state_file {
            Some(path) if stepped => {
                return Err(Error::invalid(format!(
                    "state file {}: a shared lease has a keeper thread (not stepped)",
                    path.display()
                )))
            }
            Some(path) => {
                #[allow(unused_mut)]
                let mut f = SharedFile::open(path, &layout)?;
                #[cfg(feature = "planted-defects")]
                {
                    f.defect = lease.defect;
                }
                Some(f)
            }
            None => None,
        };
        // A shared lease: joins and leaves happen one at a time (the join lock, held to the end).
        let joining = file.as_ref().map(SharedFile::join_lock).transpose()?;
        let source = shared_lease::source_fingerprint(&store.describe(), &record.name);
        let joined = match &file {
            Some(f) => join(f, &*store, &*time, &record, &lease, source)?,
            None => Joined::Claim { last_node: None },
        };
        let fresh = !matches!(joined, Joined::Adopted(_));
        let claim = match joined {
            Joined::Adopted(c) => c,
            // The host claims again the node ID its processes last held, when it is free: processes
            // that did not overlap (one exits before the next has joined) stay on one node ID.
            Joined::Claim { last_node } => {
                let start = lease.node.or(last_node).unwrap_or(start);
                claim_waiting(&*store, &*time, &record, &lease, start, ttl_ms)?
            }
        };
        let word = |index: usize, value: u64| match &file {
            Some(f) => Word::in_file(f, index),
            None => Word::memory(value),
        };
        let ceiling = word(shared_lease::CEILING, 0);
        let good_until = word(shared_lease::GOOD_UNTIL, 0);
        let wanted = word(shared_lease::WANTED, 0);
        let state = word(shared_lease::STATE, HELD);
        let state_word = match &file {
            Some(f) => Word {
                ptr: NonNull::from(snowmint::StateWord::word(&*f.file)),
                _owner: f.file.clone(),
            },
            None => Word::memory(0),
        };
        if fresh {
            good_until.store(deadline_after(&*time, lease.ttl), Ordering::SeqCst);
        }
        let cap = Arc::new(sync::AtomicU64::new(u64::MAX));
        let shared = Arc::new(Shared {
            fingerprint: crate::base::layout::layout_fingerprint(&layout),
            store,
            time,
            layout,
            record,
            options: lease,
            bound_ns,
            started_at: sync::AtomicU64::new(0),
            ceiling: ceiling.clone(),
            cap: cap.clone(),
            wanted,
            good_until,
            state,
            file,
            claim: Mutex::new(claim.clone()),
            wake: Mutex::new(Wake::default()),
            wake_cv: Condvar::new(),
            changed: Mutex::new(()),
            changed_cv: Condvar::new(),
        });
        let release_on_error = |e: Error| {
            if fresh {
                if let Some(f) = &shared.file {
                    // Nobody mints under a record this process failed to complete (the only member).
                    f.clear_record();
                }
                let _ = shared.store.release(&claim);
            } else {
                let _ = shared.store.leave(&claim);
            }
            if let Some(f) = &shared.file {
                f.exit();
            }
            e
        };
        let generator = SharedGenerator::with_ceiling(
            layout,
            claim.node_id,
            options,
            state_word.clone(),
            LeaseCeiling { word: ceiling, cap },
        )
        .map_err(|e| release_on_error(e.into()))?;
        if fresh {
            // After the node ID's reservation, and at or above the value floor of earlier incarnations.
            let floor = crate::base::floor::floor_start(
                &shared.record,
                &layout,
                shared.time.unix_ns(),
                options.max_ahead_ns,
            )
            .map_err(release_on_error)?;
            #[cfg(feature = "planted-defects")]
            let floor = if shared.options.defect == Defect::StartIgnoresFloor {
                0
            } else {
                floor
            };
            // And above what an earlier holder could have reached in a history this store has lost.
            let unknown = shared.unknown_history_start();
            let resume = Resume::after_claim(&*shared.time, shared.options.ttl);
            let start_at = match resume.retry(&*shared.time, || {
                shared.store.reservation(&claim.sequencer, claim.node_id)
            }) {
                Ok(r) => r
                    .map_or(0, |r| shared.start_after(&r))
                    .max(floor)
                    .max(unknown),
                Err(e) => return Err(release_on_error(e)),
            };
            #[cfg(feature = "planted-defects")]
            let start_at = if shared.options.defect == Defect::IgnoreReservation {
                0
            } else {
                start_at
            };
            generator.restore(start_at);
            if let Some(f) = &shared.file {
                // The state word is past the node ID's reservation before the record names the claim:
                // a process that adopts the record finds it so, whenever this one is killed.
                shared
                    .store
                    .adopt(&claim, ttl_ms, ms(shared.time.unix_ns()))
                    .map_err(release_on_error)?;
                f.write_record(&Record {
                    node_id: claim.node_id,
                    token: claim.token,
                    incarnation: shared.record.incarnation,
                    source,
                });
            }
            shared.started_at.store(start_at, Ordering::SeqCst);
            let target = shared.target(start_at).map_err(release_on_error)?;
            resume
                .retry(&*shared.time, || shared.extend_to(target))
                .map_err(release_on_error)?;
            // Started at the bound: the first reservation that covers the start comes a tick later.
            if let (Some(b), false) = (bound_ns, stepped) {
                for _ in 0..3 {
                    if shared.ceiling.load(Ordering::SeqCst) > start_at {
                        break;
                    }
                    let tick_start = shared.layout.epoch_ns().saturating_add(
                        (start_at >> shared.seq_bits()).saturating_mul(shared.layout.tick_ns()),
                    );
                    let left = tick_start
                        .saturating_sub(b)
                        .saturating_sub(shared.time.unix_ns());
                    std::thread::sleep(Duration::from_nanos(
                        left.min(shared.layout.tick_ns()).saturating_add(100_000),
                    ));
                    let target = shared.target(start_at).map_err(release_on_error)?;
                    shared.extend_to(target).map_err(release_on_error)?;
                }
            }
        }
        drop(joining);
        let keeper = if stepped {
            None
        } else {
            let keeper_shared = shared.clone();
            let k = std::thread::Builder::new()
                .name(format!("snowmint-lease-{}", claim.node_id))
                .spawn({
                    let state_word = state_word.clone();
                    move || keeper(keeper_shared, move || state_word.load(Ordering::Relaxed))
                })
                .map_err(|e| {
                    release_on_error(Error::unavailable(format!(
                        "cannot start the lease keeper: {e}"
                    )))
                })?;
            Some(k)
        };
        let stepped = stepped.then(|| Mutex::new(()));
        forks::register(&shared);
        Ok(Lease {
            node_id: claim.node_id,
            token: claim.token,
            pid: std::process::id(),
            system_time: shared.time.is_system(),
            shared,
            generator,
            state_word,
            keeper: Mutex::new(keeper),
            stepped,
            released: sync::AtomicBool::new(false),
        })
    }

    /// Runs one keeper round now, on the calling thread (a [`LeaseOptions::stepped`] lease):
    /// checks the sequencer, renews the claim, extends the reservation. `false` once the lease has
    /// ended (then it stays ended), or if the lease has a keeper thread of its own.
    pub fn keeper_round(&self) -> bool {
        let Some(one_at_a_time) = &self.stepped else {
            return false;
        };
        if self.shared.state() != LeaseState::Held || self.released.load(Ordering::SeqCst) {
            return false;
        }
        let _round = one_at_a_time.lock().unwrap_or_else(|p| p.into_inner());
        keeper_round(&self.shared, self.state_word.load(Ordering::Relaxed))
    }

    /// Ends the lease as a crash would: no release, no final reservation; the claim stays in the store
    /// until it expires (or, on the embedded store, until the file lock is dropped with the store).
    pub fn abandon(self) {
        self.released.store(true, Ordering::SeqCst);
        self.shared.forked();
        {
            let mut w = self.shared.wake.lock().unwrap_or_else(|p| p.into_inner());
            w.stop = true;
            self.shared.wake_cv.notify_all();
        }
    }

    /// The generator (lock-free; mint through [`Lease::next_id`] to get `wait` and destroyed handling).
    pub fn generator(&self) -> &CeiledGenerator {
        &self.generator
    }

    /// The node ID held.
    pub fn node_id(&self) -> u64 {
        self.node_id
    }

    /// What the lease's generator has done ([`snowmint::Stats`]). Waits for the keeper to raise the
    /// ceiling are not clock waits and are not counted in `waits`.
    pub fn stats(&self) -> snowmint::Stats {
        self.generator.stats()
    }

    /// The fencing token of the claim (strictly greater than every earlier claim's of this node ID).
    pub fn fencing_token(&self) -> u64 {
        self.token
    }

    /// When the claim expires unless renewed, Unix ms, as the store last reported.
    pub fn expires_unix_ms(&self) -> u64 {
        self.shared.claim().expires_unix_ms
    }

    /// The claim as last renewed.
    pub fn claim(&self) -> Claim {
        self.shared.claim()
    }

    /// The state.
    pub fn state(&self) -> LeaseState {
        self.shared.state()
    }

    /// The sequencer record the lease was taken under.
    pub fn sequencer(&self) -> &SequencerRecord {
        &self.shared.record
    }

    /// The first logical position the generator may not mint (raised by the keeper).
    pub fn ceiling(&self) -> u64 {
        self.shared.ceiling.load(Ordering::SeqCst)
    }

    /// Mints one ID under the lease.
    #[inline]
    pub fn next_id(&self) -> Result<u64> {
        let r = if self.system_time {
            self.generator.next_id()
        } else {
            let time = &*self.shared.time;
            self.generator.next_id_from(&|| Ok(time.unix_ns()))
        };
        match r {
            Ok(id) => Ok(id),
            Err(e) => self.at_ceiling(e, 1, |g| self.next_id_once(g)),
        }
    }

    /// Fills `out` with consecutive IDs under the lease (one state update). A batch past the ceiling
    /// has the keeper reserve up to its end first (see the module docs).
    pub fn next_ids(&self, out: &mut [u64]) -> Result<()> {
        let n = out.len() as u64;
        match self.next_ids_once(&self.generator, out) {
            Ok(()) => Ok(()),
            Err(e) => self.at_ceiling(e, n, |g| self.next_ids_once(g, out)),
        }
    }

    fn next_id_once(&self, g: &CeiledGenerator) -> snowmint::Result<u64> {
        let time = &*self.shared.time;
        g.next_id_from(&|| Ok(time.unix_ns()))
    }

    fn next_ids_once(&self, g: &CeiledGenerator, out: &mut [u64]) -> snowmint::Result<()> {
        let time = &*self.shared.time;
        g.next_ids_with(&|| Ok(time.unix_ns()), snowmint::sleep_ns, out)
    }

    /// A request of `n` positions met the ceiling: asks the keeper for a reservation that covers it.
    /// The request starts at the generator's next free position or at the clock's tick, whichever is
    /// later (at most the tick's last position), and ends `n` positions on.
    fn want(&self, n: u64) {
        let s = &self.shared;
        if let Ok(at_clock) = s.position_at(s.time.unix_ns()) {
            let first = self.state_word.load(Ordering::SeqCst).max(at_clock);
            s.wanted
                .fetch_max(first.saturating_add(n), Ordering::SeqCst);
        }
        let mut w = s.wake.lock().unwrap_or_else(|p| p.into_inner());
        w.extend = true;
        s.wake_cv.notify_all();
    }

    /// A mint of `n` positions failed: at the ceiling, `SEQUENCER_DESTROYED` or `LEASE_LOST` once the
    /// lease is gone or not renewed within its TTL (then the store may have handed the node ID to
    /// another: a paused store, a paused process); while it is held, the keeper is asked to reserve
    /// past the request's end, and the
    /// mint waits a bounded time for it (`wait`; then `LEASE_LOST`) or fails with `TOO_FAR_AHEAD` (other
    /// policies: retry shortly).
    #[cold]
    #[inline(never)]
    fn at_ceiling<T>(
        &self,
        e: snowmint::Error,
        n: u64,
        mut again: impl FnMut(&CeiledGenerator) -> snowmint::Result<T>,
    ) -> Result<T> {
        let s = &self.shared;
        if s.cap.load(Ordering::SeqCst) == 0 {
            // Released by this process, or a forked child of the one that holds it.
            return Err(self.lost());
        }
        match s.state() {
            LeaseState::Destroyed => return Err(self.destroyed()),
            LeaseState::Lost => return Err(self.lost()),
            LeaseState::Held if e.code() != ErrorCode::LeaseLost => return Err(e.into()),
            LeaseState::Held => {}
        }
        let bound = s.options.wait_bound.unwrap_or(s.options.ttl);
        let deadline = deadline_after(&*s.time, bound);
        loop {
            match s.state() {
                LeaseState::Destroyed => return Err(self.destroyed()),
                LeaseState::Lost => return Err(self.lost()),
                LeaseState::Held => {}
            }
            if s.time.monotonic_ns() >= deadline || s.past_ttl() {
                // Not renewed within its TTL (the store unreachable or paused, this process paused):
                // the claim may be another holder's by now; no reservation is asked for it.
                return Err(self.lost_at_ceiling());
            }
            let seen = s.ceiling.load(Ordering::SeqCst);
            self.want(n);
            if self.generator.policy() != Policy::Wait {
                // The claim is held: the keeper extends the reservation within one store round trip.
                return Err(self.at_reservation());
            }
            {
                let g = s.changed.lock().unwrap_or_else(|p| p.into_inner());
                if s.ceiling.load(Ordering::SeqCst) == seen && s.state() == LeaseState::Held {
                    let _ = s.changed_cv.wait_timeout(g, Duration::from_millis(50));
                }
            }
            match again(&self.generator) {
                Ok(v) => return Ok(v),
                Err(e) if e.code() == ErrorCode::LeaseLost => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn destroyed(&self) -> Error {
        Error::new(
            ErrorCode::SequencerDestroyed,
            format!(
                "sequencer {:?} was destroyed; this handle never mints again",
                self.shared.record.name
            ),
        )
    }

    fn lost(&self) -> Error {
        if std::process::id() != self.pid {
            return Error::lease_lost(format!(
                "node ID {} of sequencer {:?} is leased by the parent process; a forked child opens a lease of its own",
                self.node_id, self.shared.record.name
            ));
        }
        Error::lease_lost(format!(
            "{}: the lease on node ID {} of sequencer {:?} (fencing token {}) was lost; minting stopped at its reservation",
            self.shared.store.describe(),
            self.node_id,
            self.shared.record.name,
            self.token
        ))
    }

    fn at_reservation(&self) -> Error {
        Error::new(
            ErrorCode::TooFarAhead,
            format!(
                "{}: node ID {} of sequencer {:?} reached the reservation its lease has written; retry shortly (the keeper is extending it)",
                self.shared.store.describe(),
                self.node_id,
                self.shared.record.name
            ),
        )
    }

    fn lost_at_ceiling(&self) -> Error {
        Error::lease_lost(format!(
            "{}: node ID {} of sequencer {:?} reached its reservation and the lease was not renewed in time (TTL {} ms): the node ID may be another holder's; minting stopped",
            self.shared.store.describe(),
            self.node_id,
            self.shared.record.name,
            duration_ms(self.shared.options.ttl)
        ))
    }

    /// Stops the keeper and releases the claim now (also done on drop). Minting then fails with
    /// `LEASE_LOST`.
    ///
    /// A clean release first lowers the stored reservation to the last position actually minted (the
    /// generator is sealed first, so nothing is minted after it is read), so that the next holder of the
    /// node ID starts right after it rather than `reserve_ahead` later.
    pub fn release(&self) -> Result<()> {
        #[cfg(feature = "planted-defects")]
        let read_early = (self.shared.options.defect == Defect::ReleaseReadsBeforeSeal)
            .then(|| self.state_word.load(Ordering::SeqCst));
        self.released.store(true, Ordering::SeqCst);
        if std::process::id() != self.pid {
            // A forked child: the keeper thread and the claim are the parent's (and so may be the locks
            // the keeper held at the fork). Stop minting here, touch nothing else.
            self.shared.forked();
            return Ok(());
        }
        self.stop_keeper();
        self.shared.cap.store(0, Ordering::SeqCst);
        let claim = self.shared.claim();
        let leaving = match &self.shared.file {
            Some(f) => {
                // A shared lease: one process leaves at a time; the last one releases the claim.
                let leaving = f.join_lock()?;
                f.resign_keeper();
                let last = !f.others()?;
                if !last {
                    f.exit();
                    return self.shared.store.leave(&claim);
                }
                Some(leaving)
            }
            None => None,
        };
        let held = self.shared.state() == LeaseState::Held;
        self.shared.set_state(LOST);
        self.shared.ceiling.store(0, Ordering::SeqCst);
        // This thread's window goes back first, so `next` is the position after the last one minted
        // (another thread's open window is skipped: its rest is recorded as if minted).
        self.generator.close_thread_window();
        // Any compare-and-swap of a mint that passed the old ceiling either landed before this swap
        // (and is counted in `next`) or fails against the changed word and then meets the new ceiling.
        let next = self.state_word.swap(u64::MAX, Ordering::SeqCst);
        #[cfg(feature = "planted-defects")]
        let next = read_early.unwrap_or(next);
        if let Some(f) = &self.shared.file {
            // The state file's word stays the next free position for whoever opens the file next.
            self.state_word.store(next, Ordering::SeqCst);
            f.clear_record();
            f.exit();
        }
        if held && next > 0 {
            // Best effort: on failure the higher reservation stays, which is safe.
            let _ = self
                .shared
                .store
                .lower_reservation(&claim, &self.shared.reservation_for(next - 1));
        }
        let released = self.shared.store.release(&claim);
        drop(leaving); // the other processes of a shared lease need not wait for this one's wait below
                       // On a store whose history can be lost, what was minted ahead of the clock is waited out before
                       // the process may go on to exit (bounded by the store's bound).
        if self.stepped.is_none()
            && next != u64::MAX
            && next > self.shared.started_at.load(Ordering::SeqCst)
        {
            self.shared.wait_out(next - 1);
        }
        released
    }

    fn stop_keeper(&self) {
        {
            let mut w = self.shared.wake.lock().unwrap_or_else(|p| p.into_inner());
            w.stop = true;
            self.shared.wake_cv.notify_all();
        }
        let keeper = self.keeper.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(k) = keeper {
            // The keeper never joins itself: it runs no user code that could drop the lease.
            let _ = k.join();
        }
    }

    /// Wakes the keeper for a round now (tests: see a destroy or a loss without waiting a period).
    pub fn poke(&self) {
        let mut w = self.shared.wake.lock().unwrap_or_else(|p| p.into_inner());
        w.urgent = true;
        self.shared.wake_cv.notify_all();
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if !self.released.load(Ordering::SeqCst) {
            let _ = self.release();
        }
    }
}

/// What joining the processes of a shared state file gave.
enum Joined {
    /// The claim of the record the other processes mint under.
    Adopted(Claim),
    /// None to adopt and no other member: this process claims a node ID (the record cleared),
    /// preferably the one the file's last record of this source and incarnation named.
    Claim { last_node: Option<u64> },
}

/// Joins the processes of the host that share the lease of state file `f` (under its join lock): as a
/// member, adopts the claim its record names ([`Store::adopt`]: the same node ID and fencing token).
/// [`Joined::Claim`] when there is none to adopt and no other member.
/// With other members, a record that names another lease source, or a lost lease (they are stopping),
/// is an error: `STATE_FILE_MISMATCH`, `LEASE_LOST`.
fn join(
    f: &SharedFile,
    store: &dyn Store,
    time: &dyn Time,
    record: &SequencerRecord,
    lease: &LeaseOptions,
    source: u64,
) -> Result<Joined> {
    f.enter()?;
    let fail = |e: Error| {
        f.exit();
        e
    };
    let others = f.others().map_err(fail)?;
    let r = f.record();
    let path = f.file.path().display();
    let state = f.word(shared_lease::STATE);
    if r.token != 0 && r.source != source {
        if others {
            return Err(fail(Error::new(
                ErrorCode::StateFileMismatch,
                format!("state file {path}: the processes using it share a lease of another source (store or sequencer); use one state file per lease source"),
            )));
        }
    } else if r.token != 0
        && r.incarnation == record.incarnation
        && state.load(Ordering::SeqCst) == HELD
    {
        let claim = Claim {
            sequencer: record.name.clone(),
            node_id: r.node_id,
            token: r.token,
            expires_unix_ms: 0,
        };
        let ttl_ms = duration_ms(lease.ttl);
        let started = time.monotonic_ns();
        match store.adopt(&claim, ttl_ms, ms(time.unix_ns())) {
            Ok(c) => {
                f.word(shared_lease::GOOD_UNTIL).fetch_max(
                    started.saturating_add(ttl_ms.saturating_mul(1_000_000)),
                    Ordering::SeqCst,
                );
                return Ok(Joined::Adopted(c));
            }
            Err(e) if e.code() == ErrorCode::LeaseLost => {
                // Never brought back: the processes minting under it stop at their ceiling.
                state.fetch_max(LOST, Ordering::SeqCst);
                if others {
                    return Err(fail(e.context(format!(
                        "state file {path}: the lease its processes share (node ID {}, fencing token {}) was lost",
                        r.node_id, r.token
                    ))));
                }
            }
            Err(e) => return Err(fail(e)),
        }
    } else if others {
        return Err(fail(Error::lease_lost(format!(
            "state file {path}: the lease its processes share (node ID {}, fencing token {}) was lost; they are stopping: open again once they have exited",
            r.node_id, r.token
        ))));
    }
    // The node ID of the last record (its token cleared when the last process released it; the node
    // word is kept), for this source and incarnation.
    let last_node = (r.source == source
        && r.incarnation == record.incarnation
        && r.node_id < record.config.nodes)
        .then_some(r.node_id);
    f.clear_record();
    Ok(Joined::Claim { last_node })
}

/// Claims a node ID for `record` (the one [`LeaseOptions::node`] names, or any from `start` on), asking
/// the store again every [`NODE_WAIT_POLL`] for up to [`LeaseOptions::wait_for_node`] while all are
/// held; then `NODE_IDS_EXHAUSTED`, saying when the earliest held claim expires and how to wait.
fn claim_waiting(
    store: &dyn Store,
    time: &dyn Time,
    record: &SequencerRecord,
    lease: &LeaseOptions,
    start: u64,
    ttl_ms: u64,
) -> Result<Claim> {
    let nodes = record.config.nodes;
    let deadline = deadline_after(time, lease.wait_for_node);
    loop {
        let claim = store.claim(&ClaimRequest {
            sequencer: &record.name,
            incarnation: record.incarnation,
            nodes,
            start,
            ttl_ms,
            holder: &lease.holder,
            now_unix_ms: ms(time.unix_ns()),
        })?;
        match (claim, lease.node) {
            (Some(c), Some(n)) if c.node_id != n => {
                let _ = store.release(&c);
            }
            (Some(c), _) => return Ok(c),
            (None, _) => {}
        }
        let now = time.monotonic_ns();
        if now >= deadline || lease.stepped {
            return Err(exhausted(store, time, record, lease));
        }
        let left = Duration::from_nanos(deadline - now);
        std::thread::sleep(left.min(NODE_WAIT_POLL));
    }
}

/// `NODE_IDS_EXHAUSTED` for `record`: which node IDs are held, when the earliest held claim expires
/// unless renewed (as the store reports its holders), and how to wait for one.
fn exhausted(
    store: &dyn Store,
    time: &dyn Time,
    record: &SequencerRecord,
    lease: &LeaseOptions,
) -> Error {
    let nodes = record.config.nodes;
    let now_ms = ms(time.unix_ns());
    let which = match lease.node {
        Some(n) => format!("node ID {n} of sequencer {:?} is held", record.name),
        None => format!(
            "all {nodes} node IDs of sequencer {:?} are held",
            record.name
        ),
    };
    let earliest = store.holders(&record.name, now_ms).ok().and_then(|h| {
        h.into_iter()
            .filter(|s| lease.node.is_none_or(|n| n == s.node_id))
            .filter_map(|s| s.claim.map(|c| (c.expires_unix_ms, s.node_id)))
            .min()
    });
    let when = match earliest {
        Some((at, node)) => format!(
            "; the earliest held claim (node ID {node}) expires at {} (in {} ms) unless its holder renews it",
            snowmint::IsoTime::from_unix_ms(at).to_buf().as_str(),
            at.saturating_sub(now_ms)
        ),
        None => String::new(),
    };
    let waited = if lease.wait_for_node.is_zero() {
        "; to wait for a node ID to come free, add ?wait=30s to the source (wait_for_node_ms / waitForNodeMs in the bindings)".to_string()
    } else {
        format!(" after waiting {} ms", duration_ms(lease.wait_for_node))
    };
    Error::new(
        ErrorCode::NodeIdsExhausted,
        format!("{}: {which}{waited}{when}", store.describe()),
    )
}

/// A starting node ID that spreads concurrent claimers over the node space.
fn spread(nodes: u64, now_ns: u64) -> u64 {
    if nodes == 0 {
        return 0;
    }
    snowmint::mix64(now_ns ^ (std::process::id() as u64) << 32 ^ thread_salt()) % nodes
}

fn thread_salt() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
}

/// Fork safety: a child process forked from one holding leases shares their generators' memory but not
/// their keepers, and its claims are the parent's. At the fork, every lease in the child stops at once
/// (ceiling zero, state lost), so the child can never mint an ID its parent mints.
mod forks {
    use std::cell::UnsafeCell;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Once, Weak};

    use super::Shared;

    /// The live leases, guarded by a spin lock the fork handlers can take and release (a mutex held
    /// across `fork` would stay locked in the child).
    struct Registry {
        locked: AtomicBool,
        leases: UnsafeCell<Vec<Weak<Shared>>>,
    }

    // SAFETY: `leases` is only touched while `locked` is held.
    unsafe impl Sync for Registry {}

    static REGISTRY: Registry = Registry {
        locked: AtomicBool::new(false),
        leases: UnsafeCell::new(Vec::new()),
    };
    static INSTALL: Once = Once::new();

    fn lock() {
        while REGISTRY
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }

    fn unlock() {
        REGISTRY.locked.store(false, Ordering::Release);
    }

    extern "C" fn prepare() {
        lock();
    }

    extern "C" fn parent() {
        unlock();
    }

    extern "C" fn child() {
        // SAFETY: the lock is held (taken in `prepare`, before the fork).
        let leases = unsafe { &*REGISTRY.leases.get() };
        for l in leases {
            // Only atomic operations here: `upgrade` and the stores of `forked`.
            if let Some(shared) = l.upgrade() {
                shared.forked();
                // Keep the count as it was: dropping here could run destructors in the child.
                std::mem::forget(shared);
            }
        }
        unlock();
    }

    pub(super) fn register(shared: &Arc<Shared>) {
        INSTALL.call_once(|| {
            // SAFETY: three plain functions that take no locks but the registry's spin lock.
            unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
        });
        lock();
        // SAFETY: the lock is held.
        let leases = unsafe { &mut *REGISTRY.leases.get() };
        leases.retain(|l| l.strong_count() > 0);
        leases.push(Arc::downgrade(shared));
        unlock();
    }
}
