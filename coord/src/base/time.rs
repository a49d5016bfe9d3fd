//! Time is an input of the algorithm: it reads clocks and sleeps only through [`Time`], so a test or a
//! simulator can run it on an injected clock (minutes behind, jumping, frozen).

use std::sync::atomic::{AtomicI64, Ordering};

/// A clock the lease algorithm reads.
pub trait Time: Send + Sync + std::fmt::Debug + 'static {
    /// The wall clock, Unix nanoseconds (what IDs are minted from and reservations are measured in).
    fn unix_ns(&self) -> u64;

    /// A clock that never goes back, nanoseconds from any origin (what renewal deadlines are measured in;
    /// a lease shared through a state file needs the host's clock, which [`SystemTime`] reads).
    fn monotonic_ns(&self) -> u64;

    /// `true` if [`Time::unix_ns`] is the operating system's clock, so minting may read it as the core's
    /// `FastClock` (the same clock, read more cheaply).
    fn is_system(&self) -> bool {
        false
    }

    /// Waits `d` on this clock: the thread sleeps (a simulated clock may move its time on instead). The
    /// ID service's client lease waits through it for a start above `now + max_ahead` (SPEC §3.2).
    fn sleep(&self, d: std::time::Duration) {
        std::thread::sleep(d);
    }
}

/// The operating system's clocks.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemTime;

/// `CLOCK_MONOTONIC`: the same clock in every process of the host, so a renewal deadline one process
/// records in a shared state file means the same instant to the others ([`crate::lease`]).
fn host_monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

impl Time for SystemTime {
    fn unix_ns(&self) -> u64 {
        snowmint::Clock::now_ns(&snowmint::SystemClock).unwrap_or(0)
    }

    fn monotonic_ns(&self) -> u64 {
        host_monotonic_ns()
    }

    fn is_system(&self) -> bool {
        true
    }
}

/// The system clock shifted by a fixed, adjustable offset (a host whose clock is behind or ahead).
#[derive(Debug, Default)]
pub struct OffsetTime {
    offset_ns: AtomicI64,
}

impl OffsetTime {
    /// The system clock plus `offset_ns` (negative: behind).
    pub fn new(offset_ns: i64) -> OffsetTime {
        OffsetTime {
            offset_ns: AtomicI64::new(offset_ns),
        }
    }

    /// Changes the offset (a clock step).
    pub fn set_offset_ns(&self, offset_ns: i64) {
        self.offset_ns.store(offset_ns, Ordering::Relaxed);
    }
}

impl Time for OffsetTime {
    fn unix_ns(&self) -> u64 {
        let now = SystemTime.unix_ns() as i128 + self.offset_ns.load(Ordering::Relaxed) as i128;
        now.clamp(0, u64::MAX as i128) as u64
    }

    fn monotonic_ns(&self) -> u64 {
        SystemTime.monotonic_ns()
    }
}
