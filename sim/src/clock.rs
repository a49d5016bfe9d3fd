//! Simulated time: the true time every world shares (nanoseconds since the Unix epoch, starting at
//! `START_UNIX_NS`), one holder's clock over it (`SimClock`: stepped, smeared or frozen), and the trace line
//! of a replayed step.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use snowmint_coord::Time;

pub(crate) const MS: u64 = 1_000_000;
pub(crate) const START_UNIX_NS: u64 = 1_750_000_000_000 * MS;

/// One line of a world's `--trace` output: the step, the simulated time since the start, what happened.
pub(crate) fn trace_line(on: bool, step: u64, now: &AtomicU64, what: impl FnOnce() -> String) {
    if on {
        println!(
            "step {:>6} t={:>8}ms  {}",
            step,
            (now.load(Ordering::SeqCst) - START_UNIX_NS) / MS,
            what()
        );
    }
}

/// One holder's clock: the true time (shared, also the store's clock) plus an offset that may be stepped
/// or smeared, or frozen at a reading. Monotonic time is the true time (a process's monotonic clock).
#[derive(Debug)]
pub(crate) struct SimClock {
    pub(crate) now: Arc<AtomicU64>,
    pub(crate) offset_ns: AtomicI64,
    pub(crate) frozen: Mutex<Option<u64>>,
}

impl Time for SimClock {
    fn unix_ns(&self) -> u64 {
        if let Some(f) = *self.frozen.lock().unwrap() {
            return f;
        }
        let t =
            self.now.load(Ordering::SeqCst) as i128 + self.offset_ns.load(Ordering::SeqCst) as i128;
        t.clamp(0, u64::MAX as i128) as u64
    }
    fn monotonic_ns(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
    // The simulated time moves on by the wait (one world's steps run on one thread).
    fn sleep(&self, d: std::time::Duration) {
        self.now
            .fetch_add(d.as_nanos().min(u64::MAX as u128) as u64, Ordering::SeqCst);
    }
}

impl SimClock {
    pub(crate) fn unix_ns_unfrozen(&self) -> u64 {
        let t =
            self.now.load(Ordering::SeqCst) as i128 + self.offset_ns.load(Ordering::SeqCst) as i128;
        t.clamp(0, u64::MAX as i128) as u64
    }
}
