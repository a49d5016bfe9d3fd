//! The [`Lease`] handle: a held node-ID lease, its generator and its keeper.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::base::store::{Claim, SequencerRecord};
use crate::base::sync::{self, Mutex};

use super::keeper::keeper_round;
#[cfg(doc)]
use super::options::LeaseOptions;
use super::shared::Shared;
use super::state::LeaseState;
use super::word::{CeiledGenerator, Word};

/// A held node-ID lease with its generator and keeper thread. Dropping it stops the keeper and releases
/// the claim (the reservation stays in the store).
#[derive(Debug)]
pub struct Lease {
    pub(super) shared: Arc<Shared>,
    pub(super) generator: CeiledGenerator,
    /// The generator's state word (the next free position), also read by the keeper.
    pub(super) state_word: Word,
    /// `Time::is_system`, read once: minting then reads the clock as the core's `FastClock`.
    pub(super) system_time: bool,
    /// The claim's node ID and fencing token (fixed for the lease's life; read without a lock).
    pub(super) node_id: u64,
    pub(super) token: u64,
    /// The process that acquired the lease: a forked child owns neither its keeper nor its claim.
    pub(super) pid: u32,
    pub(super) keeper: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// A stepped lease (no keeper thread; [`Lease::keeper_round`] runs a round, one at a time).
    pub(super) stepped: Option<Mutex<()>>,
    /// Released (or abandoned): dropping does nothing more.
    pub(super) released: sync::AtomicBool,
}

impl Lease {
    /// Runs one keeper round now, on the calling thread (a [`LeaseOptions::stepped`] lease):
    /// checks the sequencer, renews the claim, extends the reservation. `false` once the lease has
    /// ended (then it stays ended), or if the lease has a keeper thread of its own. (The simulation's
    /// and the tests' entry point: hidden from the documentation.)
    #[doc(hidden)]
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
