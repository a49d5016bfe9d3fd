//! Releasing a lease: seal the generator, lower the reservation to what was minted, give the claim back.

use std::sync::atomic::Ordering;

use crate::base::defect::Defect;
use crate::base::error::Result;

use super::acquire::Resume;
use super::handle::Lease;
use super::shared::deadline_after;
use super::state::{LeaseState, LOST};

impl Lease {
    /// Stops the keeper and releases the claim now (also done on drop). Minting then fails with
    /// `LEASE_LOST`.
    ///
    /// A clean release first lowers the stored reservation to the last position actually minted (the
    /// generator is sealed first, so nothing is minted after it is read), so that the next holder of the
    /// node ID starts right after it rather than `reserve_ahead` later.
    pub fn release(&self) -> Result<()> {
        let read_early = self
            .shared
            .options
            .defect
            .is(Defect::ReleaseReadsBeforeSeal)
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
        // A release whose answer comes late (each send waits a quarter of the TTL, as the keeper's do)
        // is tried again while the claim may still be live, its TTL: given up, it would leave the node
        // ID held until then, where the store was only slow. Not in a stepped lease (a simulation
        // replays its store's answers exactly).
        let released = match self.stepped {
            None => Resume {
                until: deadline_after(&*self.shared.time, self.shared.options.ttl),
            }
            .retry(&*self.shared.time, || self.shared.store.release(&claim)),
            Some(_) => self.shared.store.release(&claim),
        };
        // The other processes of a shared lease need not wait for this one's wait below.
        drop(leaving);
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
}
