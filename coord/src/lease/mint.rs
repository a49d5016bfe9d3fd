//! Minting under a lease: at the ceiling, the keeper is asked for more (or the lease is found lost or
//! destroyed).

use std::sync::atomic::Ordering;
use std::time::Duration;

use snowmint::{ErrorCode, Policy};

use crate::base::error::{Error, Result};

use super::handle::Lease;
use super::shared::{deadline_after, duration_ms};
use super::state::LeaseState;
use super::word::CeiledGenerator;

impl Lease {
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
}
