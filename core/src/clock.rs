//! Clocks are inputs: the core never reads time itself. Hosts pass readings in, or a [`Clock`].

use crate::error::Result;

/// A source of Unix time in nanoseconds. Injected clocks (a Python callable, a JS function, a C function
/// pointer) implement this in their binding and report bad readings as errors.
pub trait Clock {
    /// The current Unix time in nanoseconds.
    fn now_ns(&self) -> Result<u64>;
}

impl<F: Fn() -> Result<u64>> Clock for F {
    fn now_ns(&self) -> Result<u64> {
        self()
    }
}

/// A clock that always reads the same instant (tests, replays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedClock(pub u64);

impl Clock for FixedClock {
    fn now_ns(&self) -> Result<u64> {
        Ok(self.0)
    }
}

/// The operating system's real-time clock (`std::time::SystemTime`).
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SystemClock;

#[cfg(feature = "std")]
impl Clock for SystemClock {
    #[inline]
    fn now_ns(&self) -> Result<u64> {
        match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => Ok(d
                .as_secs()
                .saturating_mul(1_000_000_000)
                .saturating_add(d.subsec_nanos() as u64)),
            Err(_) => Err(crate::Error::ClockBeforeEpoch {
                unix_ns: 0,
                epoch_ms: 0,
            }),
        }
    }
}

/// Sleeps the current thread (the `wait` policy's host side).
#[cfg(feature = "std")]
pub fn sleep_ns(ns: u64) {
    std::thread::sleep(std::time::Duration::from_nanos(ns));
}
