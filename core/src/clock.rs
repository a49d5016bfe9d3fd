//! Clocks are inputs: the core never reads time itself. Hosts pass readings in, or a [`Clock`].

use crate::error::Result;

/// A source of Unix time in nanoseconds. Injected clocks (a Python callable, a JS function, a C function
/// pointer) implement this in their binding and report bad readings as errors.
pub trait Clock {
    /// The current Unix time in nanoseconds.
    fn now_ns(&self) -> Result<u64>;

    /// A reading for a caller that needs only the `window_ns`-aligned window of Unix time the present
    /// lies in (a generator whose tick boundaries are all multiples of `window_ns`):
    /// `(now_ns()?, true)`, or `(earlier, false)`, an earlier reading of this clock that the clock has
    /// *proved* lies in the present's window. Both give the same tick, so a generator mints exactly the
    /// ID a fresh reading would give; for any other outcome (an error, a wait) it reads
    /// [`Clock::now_ns`] again, so error details and waits are always computed from the present.
    ///
    /// The default is exact. [`FastClock`](crate::FastClock) overrides it for whole-millisecond windows
    /// with a cached reading checked against the CPU's time-stamp counter.
    #[inline(always)]
    fn now_ns_within(&self, window_ns: u64) -> Result<(u64, bool)> {
        let _ = window_ns;
        Ok((self.now_ns()?, true))
    }
}

impl<F: Fn() -> Result<u64>> Clock for F {
    #[inline(always)]
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

/// The operating system's real-time clock: `clock_gettime(CLOCK_REALTIME)` on Linux, `SystemTime`
/// elsewhere. Every reading asks the operating system; [`FastClock`](crate::FastClock) is the same clock,
/// read more cheaply where the ticks allow.
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SystemClock;

#[cfg(feature = "std")]
impl Clock for SystemClock {
    #[inline(always)]
    fn now_ns(&self) -> Result<u64> {
        system_now_ns()
    }
}

/// Unix nanoseconds of `CLOCK_REALTIME`, read directly (the `SystemTime` round trip is an out-of-line
/// call that costs several nanoseconds per ID across a static library).
#[cfg(all(
    feature = "std",
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[inline(always)]
pub(crate) fn system_now_ns() -> Result<u64> {
    const CLOCK_REALTIME: i32 = 0;
    match clock_gettime_ns(CLOCK_REALTIME) {
        Some(ns) => Ok(ns),
        None => std_system_now_ns(),
    }
}

/// `clock_gettime(clock_id)` in nanoseconds; `None` if it fails or reads before 1970.
#[cfg(all(
    feature = "std",
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[inline(always)]
pub(crate) fn clock_gettime_ns(clock_id: i32) -> Option<u64> {
    // The 64-bit Linux `struct timespec`.
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock_id: i32, tp: *mut Timespec) -> i32;
    }
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a timespec of this platform's layout.
    let rc = unsafe { clock_gettime(clock_id, &mut ts) };
    (rc == 0 && ts.tv_sec >= 0 && (0..1_000_000_000).contains(&ts.tv_nsec)).then(|| {
        (ts.tv_sec as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(ts.tv_nsec as u64)
    })
}

#[cfg(all(
    feature = "std",
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))
))]
#[inline(always)]
pub(crate) fn system_now_ns() -> Result<u64> {
    std_system_now_ns()
}

/// `SystemTime::now()` as Unix nanoseconds; a time before 1970 is `CLOCK_BEFORE_EPOCH`.
#[cfg(feature = "std")]
#[cold]
fn std_system_now_ns() -> Result<u64> {
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

/// Sleeps the current thread (the `wait` policy's host side).
#[cfg(feature = "std")]
pub fn sleep_ns(ns: u64) {
    std::thread::sleep(std::time::Duration::from_nanos(ns));
}
