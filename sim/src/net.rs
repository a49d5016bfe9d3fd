//! The network fault layer of the real clients (the etcd client on `crate::etcd`'s simulated network, the
//! PostgreSQL store on `crate::postgres`'s simulated connections): one client's fault knobs (`Faults`, the
//! same knobs the in-memory `Link` has), the requests it has in flight (delayed or duplicated, landing
//! after later ones), and its side of the wire (`Wire`: the true time, its seeded choices, and another
//! process that may act while its answer is lost).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::link::Race;
use crate::rng::Rng;

/// Fault knobs of one client's link (percent each; `cut`: a partition).
#[derive(Debug, Default)]
pub struct Faults {
    pub cut: AtomicBool,
    pub flaky: AtomicU64,
    pub late: AtomicU64,
    pub resend: AtomicU64,
    pub dup: AtomicU64,
    pub delay: AtomicU64,
}

impl Faults {
    pub fn heal(&self) {
        for p in [
            &self.flaky,
            &self.late,
            &self.resend,
            &self.dup,
            &self.delay,
        ] {
            p.store(0, Ordering::SeqCst);
        }
        self.cut.store(false, Ordering::SeqCst);
    }
    pub fn healthy(&self) -> bool {
        !self.cut.load(Ordering::SeqCst)
            && [
                &self.flaky,
                &self.late,
                &self.resend,
                &self.dup,
                &self.delay,
            ]
            .iter()
            .all(|p| p.load(Ordering::SeqCst) == 0)
    }
}

/// Requests in flight (delayed or duplicated), each with the simulated time before which it cannot
/// land; each lands before a later request (of any client) with a chance of 20% once that time has
/// come. Half of them are stalled up to 1.5 s (a proposal stuck in a slow member, a backend waiting on
/// a lock): they land after the sender has moved on by several keeper rounds.
#[derive(Debug)]
pub struct InFlight<T>(Vec<(T, u64)>);

impl<T> Default for InFlight<T> {
    fn default() -> Self {
        InFlight(Vec::new())
    }
}

impl<T> InFlight<T> {
    /// Holds `m`, sent at `now`.
    pub fn hold(&mut self, m: T, now: u64, rng: &mut Rng) {
        let stall = if rng.chance(50) {
            rng.below(1_500_000_000)
        } else {
            0
        };
        self.0.push((m, now + stall));
    }
    /// The requests that land before one sent at `now`.
    pub fn landing(&mut self, now: u64, rng: &mut Rng) -> Vec<T> {
        let (land, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.0)
            .into_iter()
            .partition(|m| now >= m.1 && rng.chance(20));
        self.0 = keep;
        land.into_iter().map(|m| m.0).collect()
    }
}

/// One client's side of a simulated network: the true time, its faults, its own seeded choices, and
/// another process that may act while its answer is lost (the range world's races).
#[derive(Debug)]
pub struct Wire {
    pub now: Arc<AtomicU64>,
    pub faults: Arc<Faults>,
    pub rng: Mutex<Rng>,
    pub race: Option<(Arc<Race>, usize)>,
}

impl Wire {
    pub fn new(
        now: &Arc<AtomicU64>,
        faults: &Arc<Faults>,
        seed: u64,
        race: Option<(Arc<Race>, usize)>,
    ) -> Wire {
        Wire {
            now: now.clone(),
            faults: faults.clone(),
            rng: Mutex::new(Rng(seed)),
            race,
        }
    }
    pub fn roll(&self, percent: &AtomicU64) -> bool {
        let p = percent.load(Ordering::SeqCst);
        p > 0 && self.rng.lock().unwrap().chance(p)
    }
    /// While this client's answer is lost: another process of the world may act.
    pub fn interleave(&self) {
        if let Some((race, me)) = &self.race {
            race.interleave_always(*me);
        }
    }
}
