//! [`FastClock`]: the system clock, read for a fraction of its price when the caller needs only the
//! millisecond (every layout whose ticks are whole milliseconds).
//!
//! A system-clock reading costs about 30 ns on common virtual machines; reading the CPU's time-stamp
//! counter (TSC) costs about a third of that. The gate keeps the last system reading (the *anchor*) and
//! the counter value just before it was taken. A later call reads only the counter: if fewer cycles have
//! passed than the rest of the anchor's millisecond could hold, the present is provably in the same
//! millisecond, and the anchor is returned as a reading of it. Otherwise the system clock is read and
//! becomes the new anchor. Nothing is interpolated: every value returned is a real system-clock reading,
//! and the millisecond it names is the one the system clock shows now.
//!
//! Why "provably": the window is converted from nanoseconds to cycles with a counter rate calibrated
//! against `CLOCK_MONOTONIC` (which runs at the real-time clock's rate) and then lowered by one eighth,
//! more than NTP can ever change the clock's rate (±0.05 %) or the kernel's tick adjustment can (±10 %).
//! The window also ends 1 µs before the millisecond does, which covers a counter read that the CPU
//! executed slightly early (`rdtsc` is not serialising) and tiny differences between cores' counters.
//! A step of the system clock (someone setting the time) is seen at the next anchor, at most one
//! millisecond later, exactly as if the step had happened a moment later.
//!
//! The gate is used only where the operating system itself trusts the counter as its clock: Linux on
//! x86-64 with the `tsc` clocksource (synchronised across cores and constant-rate, checked by the
//! kernel). Anywhere else, or with the environment variable `SNOWMINT_FAST_CLOCK=0`, every reading asks
//! the operating system, as [`SystemClock`](crate::SystemClock) does.

use crate::clock::{system_now_ns, Clock};
use crate::error::Result;

/// The system clock, read cheaply where the caller needs only the millisecond (see the module docs).
///
/// [`Clock::now_ns`] is an ordinary system reading. [`Clock::now_ns_within`] a window of whole
/// milliseconds, which generators ask for when their ticks are whole milliseconds, returns a cached
/// system reading whenever the CPU's time-stamp counter proves the present is still in its millisecond. Every generator method that takes no clock
/// (`next_id()`, `next_ids()`) uses this clock, and so do the bindings' default clocks.
///
/// ```
/// use snowmint::{Clock, FastClock, SystemClock};
/// let before = SystemClock.now_ns()? / 1_000_000;
/// let (ns, _exact) = FastClock.now_ns_within(1_000_000)?;
/// let after = SystemClock.now_ns()? / 1_000_000;
/// assert!(before <= ns / 1_000_000 && ns / 1_000_000 <= after);
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FastClock;

impl FastClock {
    /// Whether readings are being served from the time-stamp counter: the gate is allowed here and its
    /// calibration (about 10 ms after the first reading) is done.
    pub fn is_gated() -> bool {
        #[cfg(all(feature = "std", target_os = "linux", target_arch = "x86_64"))]
        {
            gate::GATE.is_calibrated()
        }
        #[cfg(not(all(feature = "std", target_os = "linux", target_arch = "x86_64")))]
        {
            false
        }
    }
}

impl Clock for FastClock {
    #[inline(always)]
    fn now_ns(&self) -> Result<u64> {
        system_now_ns()
    }

    /// For windows of whole milliseconds, a cached reading of the present millisecond where the counter
    /// proves it; otherwise an exact reading.
    #[inline(always)]
    fn now_ns_within(&self, window_ns: u64) -> Result<(u64, bool)> {
        #[cfg(all(feature = "std", target_os = "linux", target_arch = "x86_64"))]
        if window_ns % 1_000_000 == 0 {
            if let Some(ns) = gate::GATE.cached(gate::rdtsc()) {
                return Ok((ns, false));
            }
            return gate::GATE.refresh().map(|ns| (ns, true));
        }
        let _ = window_ns;
        Ok((system_now_ns()?, true))
    }
}

#[cfg(all(feature = "std", target_os = "linux", target_arch = "x86_64"))]
pub(crate) mod gate {
    use core::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering};
    use std::sync::Mutex;

    use crate::clock::system_now_ns;
    use crate::error::Result;

    const MS: u64 = 1_000_000;
    /// A window ends this long before its millisecond does.
    pub(crate) const GUARD_NS: u64 = 1_000;
    /// Calibration samples at least this far apart (monotonic time).
    pub(crate) const CALIBRATION_NS: u64 = 10 * MS;
    /// Each calibration sample's counter window, times this, must fit in the interval (error < 1 %).
    const CALIBRATION_PRECISION: u64 = 128;

    /// The process's gate: all `FastClock`s share one anchor and one calibration.
    pub(crate) static GATE: Gate = Gate::new();

    #[inline(always)]
    pub(crate) fn rdtsc() -> u64 {
        // SAFETY: `rdtsc` exists on every x86-64 CPU and has no preconditions.
        #[allow(unused_unsafe)]
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }

    /// One calibration sample: the counter around a monotonic-clock reading.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct Sample {
        /// Midpoint of the counter values read before and after.
        pub(crate) tsc: u64,
        /// Cycles between them.
        pub(crate) width: u64,
        /// `CLOCK_MONOTONIC`, nanoseconds.
        pub(crate) mono_ns: u64,
    }

    const UNDECIDED: u8 = 0;
    const ALLOWED: u8 = 1;
    const OFF: u8 = 2;

    /// The anchor (a seqlock of three words) and the calibration.
    #[derive(Debug)]
    pub(crate) struct Gate {
        /// Even: the anchor is stable; odd: a writer is replacing it.
        seq: AtomicU64,
        /// The counter read just before the anchor's system reading.
        anchor_tsc: AtomicU64,
        /// Cycles after `anchor_tsc` during which the present is provably in the anchor's millisecond.
        span: AtomicU64,
        /// The anchor: a system reading, Unix nanoseconds.
        anchor_ns: AtomicU64,
        /// Counter cycles per nanosecond × 2^32, already lowered by the safety margin; 0 until calibrated.
        rate: AtomicU64,
        /// UNDECIDED, ALLOWED or OFF.
        mode: AtomicU8,
        /// The first calibration sample, until `rate` is set.
        first: Mutex<Option<Sample>>,
    }

    impl Gate {
        pub(crate) const fn new() -> Gate {
            Gate {
                seq: AtomicU64::new(0),
                anchor_tsc: AtomicU64::new(0),
                span: AtomicU64::new(0),
                anchor_ns: AtomicU64::new(0),
                rate: AtomicU64::new(0),
                mode: AtomicU8::new(UNDECIDED),
                first: Mutex::new(None),
            }
        }

        /// The anchor, if counter value `tsc` proves the present is still in its millisecond.
        #[inline(always)]
        pub(crate) fn cached(&self, tsc: u64) -> Option<u64> {
            let s1 = self.seq.load(Ordering::Acquire);
            let anchor_tsc = self.anchor_tsc.load(Ordering::Relaxed);
            let span = self.span.load(Ordering::Relaxed);
            let ns = self.anchor_ns.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            let s2 = self.seq.load(Ordering::Relaxed);
            // A counter below the anchor's wraps to a huge distance: not cached.
            if s1 == s2 && s1 & 1 == 0 && tsc.wrapping_sub(anchor_tsc) < span {
                Some(ns)
            } else {
                None
            }
        }

        /// A system reading, which becomes the anchor (and, until calibrated, feeds the calibration).
        #[cold]
        #[inline(never)]
        pub(crate) fn refresh(&self) -> Result<u64> {
            let t0 = rdtsc();
            let ns = system_now_ns()?;
            if self.allowed() {
                if self.rate.load(Ordering::Relaxed) == 0 {
                    let c0 = rdtsc();
                    let mono_ns = monotonic_ns();
                    let c1 = rdtsc();
                    if let Some(mono_ns) = mono_ns {
                        self.calibrate(Sample {
                            tsc: c0 + c1.wrapping_sub(c0) / 2,
                            width: c1.wrapping_sub(c0),
                            mono_ns,
                        });
                    }
                }
                self.anchor(t0, ns);
            }
            Ok(ns)
        }

        /// Makes system reading `ns`, taken after counter value `t0`, the anchor (once calibrated). Its
        /// window: the rest of its millisecond less the guard, in cycles at the lowered rate.
        pub(crate) fn anchor(&self, t0: u64, ns: u64) {
            let rate = self.rate.load(Ordering::Relaxed);
            if rate == 0 {
                return;
            }
            let left = (MS - ns % MS).saturating_sub(GUARD_NS);
            let span = ((left as u128 * rate as u128) >> 32).min(u64::MAX as u128) as u64;
            let s = self.seq.load(Ordering::Relaxed);
            // Another thread is writing: its anchor is as good as ours.
            if s & 1 == 1
                || self
                    .seq
                    .compare_exchange(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
            {
                return;
            }
            fence(Ordering::Release);
            self.anchor_tsc.store(t0, Ordering::Relaxed);
            self.span.store(span, Ordering::Relaxed);
            self.anchor_ns.store(ns, Ordering::Relaxed);
            self.seq.store(s + 2, Ordering::Release);
        }

        /// Calibrates the counter's rate from two samples at least `CALIBRATION_NS` apart whose windows are
        /// narrow enough; a wider first sample is replaced by a narrower later one.
        pub(crate) fn calibrate(&self, s: Sample) {
            let Ok(mut first) = self.first.try_lock() else {
                return; // another thread is calibrating
            };
            let f = match *first {
                None => {
                    *first = Some(s);
                    return;
                }
                Some(f) => f,
            };
            let (Some(dns), Some(dc)) =
                (s.mono_ns.checked_sub(f.mono_ns), s.tsc.checked_sub(f.tsc))
            else {
                *first = Some(s); // a clock went backwards: start again
                return;
            };
            if dns < CALIBRATION_NS {
                return;
            }
            if (f.width + s.width).saturating_mul(CALIBRATION_PRECISION) > dc {
                if s.width < f.width {
                    *first = Some(s);
                }
                return;
            }
            // Plausible counters run at 100 MHz ..= 20 GHz.
            if dc.saturating_mul(10) < dns || dc > dns.saturating_mul(20) {
                *first = Some(s);
                return;
            }
            // Cycles per ns × 2^32, times 7/8: the safety margin.
            let rate = ((dc as u128) << 32) / dns as u128 * 7 / 8;
            self.rate.store(rate as u64, Ordering::Relaxed);
        }

        pub(crate) fn is_calibrated(&self) -> bool {
            self.allowed() && self.rate.load(Ordering::Relaxed) != 0
        }

        /// Whether the counter may gate readings here (decided once per process).
        fn allowed(&self) -> bool {
            match self.mode.load(Ordering::Relaxed) {
                ALLOWED => true,
                OFF => false,
                _ => {
                    let allowed = std::env::var_os("SNOWMINT_FAST_CLOCK")
                        .map_or(true, |v| v != "0")
                        && std::fs::read_to_string(
                            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
                        )
                        .is_ok_and(|s| s.trim() == "tsc");
                    self.mode
                        .store(if allowed { ALLOWED } else { OFF }, Ordering::Relaxed);
                    allowed
                }
            }
        }

        /// For tests: a gate already decided, with a given rate (cycles per ns × 2^32, lowered).
        #[cfg(test)]
        pub(crate) fn with_rate(rate: u64) -> Gate {
            let g = Gate::new();
            g.mode.store(ALLOWED, Ordering::Relaxed);
            g.rate.store(rate, Ordering::Relaxed);
            g
        }

        #[cfg(test)]
        pub(crate) fn rate(&self) -> u64 {
            self.rate.load(Ordering::Relaxed)
        }
    }

    /// `CLOCK_MONOTONIC`, nanoseconds (it runs at the real-time clock's rate, but never steps).
    fn monotonic_ns() -> Option<u64> {
        const CLOCK_MONOTONIC: i32 = 1;
        crate::clock::clock_gettime_ns(CLOCK_MONOTONIC)
    }
}

#[cfg(all(test, feature = "std", target_os = "linux", target_arch = "x86_64"))]
mod tests {
    use super::gate::{Gate, Sample, CALIBRATION_NS, GUARD_NS};
    use super::*;
    use crate::SystemClock;
    use std::time::{Duration, Instant};

    const MS: u64 = 1_000_000;
    /// 2.5 cycles per ns, × 2^32, lowered by the 7/8 margin (what calibration stores for a 2.5 GHz TSC).
    const RATE: u64 = (5u64 << 32) / 2 * 7 / 8;

    #[test]
    fn window_is_the_rest_of_the_millisecond_at_the_lowered_rate() {
        let g = Gate::with_rate(RATE);
        let t0 = 1_000_000_000;
        let ns = 1_700_000_000_000 * MS + 400_000; // 400 µs into its millisecond
        g.anchor(t0, ns);
        // 599 µs left less the 1 µs guard, at 2.5 × 7/8 cycles per ns.
        let span = (((600_000 - GUARD_NS) as u128 * RATE as u128) >> 32) as u64;
        assert_eq!(g.cached(t0), Some(ns));
        assert_eq!(g.cached(t0 + span - 1), Some(ns));
        assert_eq!(g.cached(t0 + span), None);
        // Even at the true rate (8/7 faster than the lowered one) the window ends before the millisecond.
        let true_cycles_to_boundary = 600_000 * 5 / 2;
        assert!(span < true_cycles_to_boundary * 7 / 8 + 1);
        // A counter below the anchor's (another core's, or wrapped) proves nothing.
        assert_eq!(g.cached(t0 - 1), None);
    }

    #[test]
    fn no_window_at_the_end_of_a_millisecond_or_before_calibration() {
        let g = Gate::with_rate(RATE);
        g.anchor(5, 7 * MS + MS - GUARD_NS); // exactly at the guard: nothing left
        assert_eq!(g.cached(5), None);
        let uncalibrated = Gate::with_rate(0);
        uncalibrated.anchor(5, 7 * MS);
        assert_eq!(uncalibrated.cached(5), None);
    }

    #[test]
    fn calibration_needs_distance_and_narrow_windows() {
        let g = Gate::with_rate(0);
        let s = |tsc, width, mono_ns| Sample {
            tsc,
            width,
            mono_ns,
        };
        g.calibrate(s(1_000, 100, 0));
        // Too soon.
        g.calibrate(s(1_000 + 25_000_000, 100, CALIBRATION_NS - 1));
        assert_eq!(g.rate(), 0);
        // Far enough, but the windows are too wide for < 1 % error: a narrower sample replaces the first.
        g.calibrate(s(25_001_000, 200_000, CALIBRATION_NS));
        assert_eq!(g.rate(), 0);
        // 2.5 GHz over 10 ms with 100-cycle windows.
        g.calibrate(s(1_000 + 25_000_000, 100, CALIBRATION_NS));
        let expected = ((25_000_000u128 << 32) / CALIBRATION_NS as u128 * 7 / 8) as u64;
        assert_eq!(g.rate(), expected);
        // Implausible rates are refused.
        let slow = Gate::with_rate(0);
        slow.calibrate(s(0, 1, 0));
        slow.calibrate(s(100_000, 1, CALIBRATION_NS)); // 10 MHz
        assert_eq!(slow.rate(), 0);
    }

    /// The property that matters: a same-ms reading names the millisecond that the system clock shows
    /// at that moment (between a system reading before and one after), in two threads at once, with
    /// dense calls and gaps that cross milliseconds.
    #[test]
    fn same_ms_readings_name_the_present_millisecond() {
        fn run(max: u64) -> (u64, u64) {
            let start = Instant::now();
            let (mut cached, mut n) = (0, 0);
            while n < max && start.elapsed() < Duration::from_millis(1500) {
                let before = SystemClock.now_ns().unwrap() / MS;
                let (ns, exact) = FastClock.now_ns_within(MS).unwrap();
                let after = SystemClock.now_ns().unwrap() / MS;
                assert!(
                    before <= ns / MS && ns / MS <= after,
                    "reading {ns} (exact: {exact}) outside the system clock's [{before}, {after}] ms"
                );
                cached += u64::from(!exact);
                match n % 5000 {
                    0 => std::thread::sleep(Duration::from_micros(1300)),
                    1 => std::thread::sleep(Duration::from_micros(150)),
                    _ => {}
                }
                n += 1;
            }
            (cached, n)
        }
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| run(30_000_000));
            let b = s.spawn(|| run(30_000_000));
            (a.join().unwrap(), b.join().unwrap())
        });
        let (cached, total) = (a.0 + b.0, a.1 + b.1);
        std::println!(
            "FastClock: {cached} of {total} readings served from the counter (gated: {})",
            FastClock::is_gated()
        );
        if FastClock::is_gated() {
            // Calibration takes ~10 ms of a 1.5 s run: most dense readings come from the counter.
            assert!(cached * 2 > total, "{cached} of {total}");
        } else {
            assert_eq!(cached, 0);
        }
        // Exact readings are plain system readings.
        let before = SystemClock.now_ns().unwrap();
        let t = FastClock.now_ns().unwrap();
        assert!(t >= before && t <= SystemClock.now_ns().unwrap());
    }
}
