//! What the keeper and the minting side of a lease share, and the rules they both apply (the
//! reservation target, the room under the ceiling, the state).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use snowmint::Layout;

use crate::base::defect::Defect;
use crate::base::error::{Error, Result};
use crate::base::store::{Claim, Reservation, SequencerRecord, Store};
use crate::base::sync::{self, Condvar, Mutex};
use crate::base::time::Time;
use crate::shared_lease::{self, SharedFile};

use super::options::LeaseOptions;
use super::position::{reservation_for, start_after, unknown_history_start};
use super::state::{LeaseState, DESTROYED, HELD, LOST};
use super::word::Word;

/// What the keeper and the minting side share.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) store: Arc<dyn Store>,
    pub(super) time: Arc<dyn Time>,
    pub(super) layout: Layout,
    pub(super) fingerprint: u64,
    pub(super) record: SequencerRecord,
    pub(super) options: LeaseOptions,
    /// The store's bound on what any holder mints ahead of the clock ([`Store::max_ahead`], ns): the
    /// reservation never reaches further ahead of the clock than this.
    pub(super) bound_ns: Option<u64>,
    /// Where this process's generator started (a fresh claim): a release waits out what was minted past it.
    pub(super) started_at: sync::AtomicU64,
    /// The first position the generator may not mint (a shared lease: the state file's, for every
    /// process).
    pub(super) ceiling: Word,
    /// This process's cap on the ceiling ([`LeaseCeiling`]): `u64::MAX`, 0 once released or forked.
    pub(super) cap: Arc<sync::AtomicU64>,
    /// The end (first position after) of the largest request that met the ceiling: the keeper's
    /// reservation covers it ([`Shared::target`]). Only grows.
    pub(super) wanted: Word,
    /// The claim is good until this monotonic instant (ns), measured from before the request that last
    /// renewed it: past it, the store may have expired the claim and handed the node ID to another.
    pub(super) good_until: Word,
    pub(super) state: Word,
    /// The state file of a shared lease.
    pub(super) file: Option<SharedFile>,
    pub(super) claim: Mutex<Claim>,
    /// Set to wake the keeper early: `stop` ends it, `urgent` asks for a round now.
    pub(super) wake: Mutex<Wake>,
    pub(super) wake_cv: Condvar,
    /// Signalled whenever the ceiling or the state changes.
    pub(super) changed: Mutex<()>,
    pub(super) changed_cv: Condvar,
}

#[derive(Debug, Default)]
pub(super) struct Wake {
    pub(super) stop: bool,
    pub(super) urgent: bool,
    /// A mint met the ceiling: extend the reservation now (one store write, no renewal).
    pub(super) extend: bool,
}

pub(super) fn ms(ns: u64) -> u64 {
    ns / 1_000_000
}

pub(super) fn duration_ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

impl Shared {
    pub(super) fn seq_bits(&self) -> u32 {
        self.layout.sequence_bits()
    }

    /// The last position of the tick that holds `unix_ns` (clamped to the layout's range).
    pub(super) fn position_at(&self, unix_ns: u64) -> Result<u64> {
        let tick = self.layout.tick_at_ns(unix_ns).map_err(Error::from)?;
        Ok((tick << self.seq_bits()) | ((1u64 << self.seq_bits()) - 1))
    }

    /// The reservation record for "every position up to `position`".
    pub(super) fn reservation_for(&self, position: u64) -> Reservation {
        reservation_for(&self.layout, self.fingerprint, position)
    }

    /// The first position a new holder may mint after `r`.
    pub(super) fn start_after(&self, r: &Reservation) -> u64 {
        start_after(&self.layout, self.fingerprint, r)
    }

    pub(super) fn state(&self) -> LeaseState {
        match self.state.load(Ordering::SeqCst) {
            HELD => LeaseState::Held,
            LOST => LeaseState::Lost,
            _ => LeaseState::Destroyed,
        }
    }

    pub(super) fn set_state(&self, s: u64) {
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
    pub(super) fn forked(&self) {
        self.cap.store(0, Ordering::SeqCst);
        match &self.file {
            Some(f) => shared_lease::let_go_in_child(f.lock_fd()),
            None => {
                self.state.store(LOST, Ordering::SeqCst);
                self.ceiling.store(0, Ordering::SeqCst);
            }
        }
    }

    pub(super) fn notify_changed(&self) {
        let _g = self.changed.lock().unwrap_or_else(|p| p.into_inner());
        self.changed_cv.notify_all();
    }

    /// Past the claim's TTL since the request that last renewed it: the store may have expired it.
    pub(super) fn past_ttl(&self) -> bool {
        self.time.monotonic_ns() >= self.good_until.load(Ordering::SeqCst)
    }

    pub(super) fn claim(&self) -> Claim {
        self.claim.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Writes a reservation up to `position` and, once the store acknowledged it, raises the ceiling.
    pub(super) fn extend_to(&self, position: u64) -> Result<()> {
        let claim = self.claim();
        let r = self.reservation_for(position);
        if self.options.defect.is(Defect::CeilingBeforeAck) {
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
    pub(super) fn target(&self, next_free: u64) -> Result<u64> {
        let generator = next_free;
        let next_free = next_free.max(self.wanted.load(Ordering::SeqCst));
        let next_free = if self.options.defect.is(Defect::KeeperIgnoresWanted) {
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
    pub(super) fn unknown_history_start(&self) -> u64 {
        unknown_history_start(&self.layout, self.bound_ns, self.time.unix_ns())
    }

    /// Sleeps (bounded by the store's bound and a tick) until the clock has left the tick of position
    /// `last`: a process leaves nothing minted ahead of the clock behind it (SPEC §3.2).
    pub(super) fn wait_out(&self, last: u64) {
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
    pub(super) fn room_low(&self, next_free: u64) -> bool {
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
    pub(super) fn room_left(&self, next_free: u64) -> bool {
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
    pub(super) fn period(&self) -> Duration {
        let by_ttl = self.options.ttl / 3;
        let by_reserve = self.options.reserve_ahead / 3;
        by_ttl.min(by_reserve).max(Duration::from_millis(1))
    }

    /// Checks that the sequencer still exists as this incarnation.
    pub(super) fn check_sequencer(&self) -> Result<bool> {
        Ok(
            matches!(self.store.sequencer(&self.record.name)?, Some(r) if r.incarnation == self.record.incarnation),
        )
    }

    /// The store refused the claim: a destroy that landed between this round's sequencer check and its
    /// renewal removes the claims too, so the record is asked once more to report the right end.
    pub(super) fn lost_or_destroyed(&self) {
        match self.check_sequencer() {
            Ok(false) => self.set_state(DESTROYED),
            _ => self.set_state(LOST),
        }
    }
}

/// A (renewal) deadline in the time source's monotonic clock.
pub(super) fn deadline_after(time: &dyn Time, d: Duration) -> u64 {
    time.monotonic_ns()
        .saturating_add(d.as_nanos().min(u64::MAX as u128) as u64)
}
