//! A cheaper exact clock for x86-64: the CPU's time-stamp counter (TSC), calibrated against the system
//! clock and re-synchronised with it, so that it reads Unix time like [`SystemClock`] for the price of an
//! `rdtsc` and a multiply.
//!
//! Only an *invariant* TSC (Linux's `constant_tsc` and `nonstop_tsc` flags: one rate on every core, not
//! stopped in sleep states) is a clock; [`TscClock::new`] refuses to start on any other
//! ([`Error::InvalidClock`]), and [`FastClock`] falls back to the system clock there.
//!
//! How it stays exact: every `resync_ns` (default 1 ms) of counter time, the next reading takes a fresh
//! pair (TSC, system clock) and re-anchors the conversion on it. Between anchors the error is the
//! calibration's rate error times the interval (parts per million of a millisecond: nanoseconds); a step
//! of the system clock itself (an administrator or NTP setting the time) is followed within one interval.
//! Like the system clock it follows, it is not monotonic: a re-anchoring may step it back by the drift
//! since the previous one, which the generators absorb like any clock regression.
//!
//! ```
//! # fn main() -> snowmint::Result<()> {
//! use snowmint::{FastClock, Layout, Options, SharedGenerator};
//! let clock = FastClock::new(); // the TSC where it is invariant, else the system clock
//! let gen = SharedGenerator::new(Layout::twitter(), 7, Options::default())?;
//! let id = gen.next_id_from(&clock)?;
//! assert_eq!(gen.layout().decode(id)?.node, 7);
//! # Ok(()) }
//! ```

use core::sync::atomic::{fence, AtomicU64, Ordering};

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};

/// Default re-synchronisation interval: 1 ms of counter time.
pub const DEFAULT_RESYNC_NS: u64 = 1_000_000;

/// How long [`TscClock::new`] measures the counter's rate against the system clock.
const CALIBRATION_NS: u64 = 10_000_000;

#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: `rdtsc` exists on every x86-64 CPU and has no preconditions.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
}

/// The system clock, as Unix nanoseconds.
#[inline]
fn system_ns() -> Result<u64> {
    SystemClock.now_ns()
}

/// One (TSC, system time) pair: the counter read on both sides of the system clock, keeping the midpoint.
/// Returns the pair and the width of the window in cycles.
#[inline]
fn pair() -> Result<(u64, u64, u64)> {
    let t0 = rdtsc();
    let ns = system_ns()?;
    let t1 = rdtsc();
    let width = t1.wrapping_sub(t0);
    Ok((t0.wrapping_add(width / 2), ns, width))
}

/// The narrowest of a few pairs (a pre-empted read makes a wide window).
fn best_pair() -> Result<(u64, u64)> {
    let mut best = pair()?;
    for _ in 0..8 {
        let p = pair()?;
        if p.2 < best.2 {
            best = p;
        }
    }
    Ok((best.0, best.1))
}

/// Whether `/proc/cpuinfo` text says the TSC is invariant (`constant_tsc` and `nonstop_tsc` on every CPU).
pub(crate) fn cpuinfo_says_invariant(cpuinfo: &str) -> bool {
    let mut cpus = 0;
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.trim() != "flags" {
            continue;
        }
        cpus += 1;
        let mut flags = value.split_whitespace();
        let has = |name: &str, flags: &mut core::str::SplitWhitespace<'_>| {
            flags.clone().any(|f| f == name)
        };
        if !(has("constant_tsc", &mut flags) && has("nonstop_tsc", &mut flags)) {
            return false;
        }
    }
    cpus > 0
}

/// Whether this machine's TSC can serve as a clock: on Linux from `/proc/cpuinfo`'s flags, elsewhere from
/// CPUID's invariant-TSC bit (leaf 0x8000_0007, EDX bit 8).
pub(crate) fn tsc_is_invariant() -> bool {
    match std::fs::read_to_string("/proc/cpuinfo") {
        Ok(text) => cpuinfo_says_invariant(&text),
        Err(_) => {
            #[allow(unused_unsafe)]
            // SAFETY: CPUID exists on every x86-64 CPU; leaf 0x8000_0000 tells whether 0x8000_0007 does.
            unsafe {
                use core::arch::x86_64::__cpuid;
                __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
            }
        }
    }
}

/// Unix time from the CPU's invariant time-stamp counter, kept within a millisecond of the system clock.
///
/// `Send + Sync`: one clock may serve every thread. Readings are lock-free; the anchor is a seqlock that a
/// reader re-anchoring holds for a few nanoseconds, and a reader finding it held reads the system clock
/// instead of waiting.
#[derive(Debug)]
#[repr(align(64))]
pub struct TscClock {
    /// Even: the anchor is stable; odd: a re-anchoring is writing it.
    seq: AtomicU64,
    /// TSC value of the anchor.
    base_tsc: AtomicU64,
    /// Unix nanoseconds of the anchor.
    base_ns: AtomicU64,
    /// Nanoseconds per cycle, times 2^32.
    mult: AtomicU64,
    /// Re-anchor after this many cycles.
    resync_cycles: u64,
    /// Measured counter rate, Hz.
    hz: u64,
}

impl TscClock {
    /// Calibrates a clock (about 10 ms) re-synchronised every millisecond. [`Error::InvalidClock`] where
    /// the TSC is not invariant, or calibration gives an implausible rate.
    pub fn new() -> Result<TscClock> {
        TscClock::with_resync_interval(DEFAULT_RESYNC_NS)
    }

    /// As [`TscClock::new`], re-synchronising every `resync_ns` nanoseconds (1 µs ..= 1 s). A longer
    /// interval makes sparse readings cheaper and follows a step of the system clock later.
    pub fn with_resync_interval(resync_ns: u64) -> Result<TscClock> {
        if !(1_000..=1_000_000_000).contains(&resync_ns) {
            return Err(Error::InvalidArgument {
                name: "resync_ns",
                value: resync_ns,
                max: 1_000_000_000,
            });
        }
        if !tsc_is_invariant() {
            return Err(Error::InvalidClock {
                reason: "the CPU's time-stamp counter is not invariant (no constant_tsc and nonstop_tsc)",
            });
        }
        let (t0, n0) = best_pair()?;
        std::thread::sleep(std::time::Duration::from_nanos(CALIBRATION_NS));
        let (t1, n1) = best_pair()?;
        let (cycles, ns) = (t1.wrapping_sub(t0), n1.wrapping_sub(n0));
        let implausible = Error::InvalidClock {
            reason: "TSC calibration against the system clock gave an implausible rate",
        };
        // The system clock or the counter moved backwards, or the sleep was far off.
        if t1 <= t0 || n1 <= n0 || !(CALIBRATION_NS / 2..=CALIBRATION_NS * 100).contains(&ns) {
            return Err(implausible);
        }
        let hz = (cycles as u128 * 1_000_000_000 / ns as u128) as u64;
        if !(100_000_000..=20_000_000_000).contains(&hz) {
            return Err(implausible);
        }
        let mult = ((ns as u128) << 32) / cycles as u128;
        let resync_cycles = ((resync_ns as u128) << 32) / mult;
        Ok(TscClock {
            seq: AtomicU64::new(0),
            base_tsc: AtomicU64::new(t1),
            base_ns: AtomicU64::new(n1),
            mult: AtomicU64::new(mult as u64),
            resync_cycles: resync_cycles.min(u64::MAX as u128) as u64,
            hz,
        })
    }

    /// Whether [`TscClock::new`] can work here (the TSC is invariant).
    pub fn is_supported() -> bool {
        tsc_is_invariant()
    }

    /// The counter's rate as calibrated, in Hz.
    pub fn frequency_hz(&self) -> u64 {
        self.hz
    }

    /// Re-anchors on a fresh (TSC, system clock) pair and returns the system reading.
    #[cold]
    #[inline(never)]
    fn resync(&self) -> Result<u64> {
        let (tsc, ns, _) = pair()?;
        let s = self.seq.load(Ordering::Relaxed);
        if s & 1 == 0
            && self
                .seq
                .compare_exchange(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            fence(Ordering::Release);
            self.base_tsc.store(tsc, Ordering::Relaxed);
            self.base_ns.store(ns, Ordering::Relaxed);
            self.seq.store(s + 2, Ordering::Release);
        }
        // Another thread is re-anchoring: our own system reading is as good.
        Ok(ns)
    }
}

impl Clock for TscClock {
    /// Unix nanoseconds: `base_ns + (rdtsc - base_tsc) × ns-per-cycle`, re-anchored on the system clock
    /// when the anchor is older than the resync interval (or the counter reads before it).
    #[inline]
    fn now_ns(&self) -> Result<u64> {
        let tsc = rdtsc();
        let s1 = self.seq.load(Ordering::Acquire);
        let base_tsc = self.base_tsc.load(Ordering::Relaxed);
        let base_ns = self.base_ns.load(Ordering::Relaxed);
        let mult = self.mult.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let s2 = self.seq.load(Ordering::Relaxed);
        // A counter reading before the anchor wraps to a huge distance and re-anchors too.
        let dt = tsc.wrapping_sub(base_tsc);
        if s1 == s2 && s1 & 1 == 0 && dt <= self.resync_cycles {
            return Ok(base_ns + ((dt as u128 * mult as u128) >> 32) as u64);
        }
        self.resync()
    }
}

/// The cheapest exact clock available: a [`TscClock`] where the TSC is invariant, else the system clock.
#[derive(Debug)]
pub enum FastClock {
    /// The calibrated time-stamp counter.
    Tsc(TscClock),
    /// The system clock (no invariant TSC, or calibration failed).
    System(SystemClock),
}

impl FastClock {
    /// A [`TscClock`] if one can start here, else the system clock.
    pub fn new() -> FastClock {
        match TscClock::new() {
            Ok(tsc) => FastClock::Tsc(tsc),
            Err(_) => FastClock::System(SystemClock),
        }
    }

    /// Whether this clock uses the TSC.
    pub fn is_tsc(&self) -> bool {
        matches!(self, FastClock::Tsc(_))
    }
}

impl Default for FastClock {
    fn default() -> Self {
        FastClock::new()
    }
}

impl Clock for FastClock {
    #[inline]
    fn now_ns(&self) -> Result<u64> {
        match self {
            FastClock::Tsc(c) => c.now_ns(),
            FastClock::System(c) => c.now_ns(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use std::time::{Duration, Instant};

    const MS: u64 = 1_000_000;

    #[test]
    fn cpuinfo_flags() {
        let good = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc cpuid\n\n\
                    processor\t: 1\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n";
        assert!(cpuinfo_says_invariant(good));
        let one_cpu_lacks = "flags\t: constant_tsc nonstop_tsc\nflags\t: constant_tsc\n";
        assert!(!cpuinfo_says_invariant(one_cpu_lacks));
        assert!(!cpuinfo_says_invariant("flags\t: tsc constant_tsc\n"));
        assert!(!cpuinfo_says_invariant(
            "flags\t: nonstop_tsc_s3 constant_tsc\n"
        ));
        assert!(!cpuinfo_says_invariant("processor: 0\n"));
    }

    #[test]
    fn refuses_bad_interval() {
        assert_eq!(
            TscClock::with_resync_interval(0).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }

    /// Checks `clock` against the system clock read on both sides, for `run` or `max_reads`.
    fn within_1ms(clock: &TscClock, run: Duration, max_reads: u64) -> u64 {
        let start = Instant::now();
        let mut worst = 0;
        let mut i = 0u64;
        while i < max_reads && start.elapsed() < run {
            let before = system_ns().unwrap();
            let t = clock.now_ns().unwrap();
            let after = system_ns().unwrap();
            assert!(
                t + MS >= before && t <= after + MS,
                "TSC clock {t} outside [{before} - 1 ms, {after} + 1 ms] at read {i}"
            );
            let off = if t < before {
                before - t
            } else {
                t.saturating_sub(after)
            };
            worst = worst.max(off);
            // Mix dense reads with gaps that cross the resync interval.
            match i % 4096 {
                0 => std::thread::sleep(Duration::from_millis(3)),
                1 => std::thread::sleep(Duration::from_micros(300)),
                _ => {}
            }
            i += 1;
        }
        worst
    }

    #[test]
    fn stays_within_1ms_of_system_time() {
        let clock = match TscClock::new() {
            Ok(c) => c,
            Err(e) => {
                assert!(!TscClock::is_supported() || e.code() == ErrorCode::InvalidClock);
                assert!(!FastClock::new().is_tsc());
                return;
            }
        };
        assert!(clock.frequency_hz() > 100_000_000);
        let worst = std::thread::scope(|s| {
            let a = s.spawn(|| within_1ms(&clock, Duration::from_millis(1500), 20_000_000));
            let b = s.spawn(|| within_1ms(&clock, Duration::from_millis(1500), 20_000_000));
            a.join().unwrap().max(b.join().unwrap())
        });
        std::println!(
            "TSC {} MHz: worst distance outside the system-clock window {worst} ns",
            clock.frequency_hz() / 1_000_000
        );
        // A longer interval still stays within a millisecond.
        let slow = TscClock::with_resync_interval(100 * MS).unwrap();
        within_1ms(&slow, Duration::from_millis(500), 5_000_000);
    }

    #[test]
    fn mints_with_generators() {
        use crate::{Generator, Layout, Options, SharedGenerator};
        let clock = FastClock::new();
        let shared = SharedGenerator::new(Layout::twitter(), 3, Options::default()).unwrap();
        let mut plain = Generator::new(Layout::twitter(), 3, Options::default()).unwrap();
        let mut last = (0, 0);
        for _ in 0..100_000 {
            let a = shared.next_id_from(&clock).unwrap();
            let b = plain.next_id_from(&clock).unwrap();
            assert!(a > last.0 && b > last.1);
            last = (a, b);
        }
        let sys_ms = system_ns().unwrap() / MS;
        let t = Layout::twitter().decode(last.0).unwrap().unix_ms;
        // 200 000 IDs fit in well under the 15 s run-ahead limit; the last one's time is near now.
        assert!(t <= sys_ms + 100 && t + 60_000 >= sys_ms, "{t} vs {sys_ms}");
    }
}
