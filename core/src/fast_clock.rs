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
//! Why "provably": the window is converted from nanoseconds to cycles with a counter rate measured
//! against `CLOCK_MONOTONIC` (which runs at the real-time clock's rate) and then lowered by a quarter,
//! more than the clock's rate can change between two measurements: NTP slews by at most ±0.05 %, the
//! kernel's tick adjustment by at most ±10 % (a rate measured at −10 % and used at +10 % is 1.22× the
//! true one; 3/4 of it is still short). The window also ends 1 µs before the millisecond does, which
//! covers a counter read that the CPU executed slightly early (`rdtsc` is not serialising) and tiny
//! differences between cores' counters. A step of the system clock (someone setting the time) is seen
//! at the next anchor, at most one millisecond later, exactly as if the step had happened a moment later.
//!
//! The gate is used only where the operating system itself trusts the counter as its clock: Linux on
//! x86-64 with the `tsc` clocksource (synchronised across cores and constant-rate, checked by the
//! kernel). Anywhere else, under Miri, or with the environment variable `SNOWMINT_FAST_CLOCK=0`, every
//! reading asks the operating system, as [`SystemClock`](crate::SystemClock) does, and the counter is
//! never read. Where the gate is allowed, its first calibration also measures what a gated reading and
//! a system reading cost on this machine, and keeps the gate only if it is the cheaper exact test (on a
//! VM whose `clock_gettime` is cheaper than `rdtsc`, every reading is a system reading).
//!
//! ## Upkeep, and what it cannot see
//! The refresh path (a system reading, about once per millisecond under load) keeps the gate honest at
//! a low, bounded rate: every 50 ms it measures the counter's rate against `CLOCK_MONOTONIC` again — a
//! counter that paused while time moved on (a VM paused or restored from a snapshot), jumped, or now
//! runs at another rate (a live migration) by more than a quarter drops the anchor and is calibrated
//! from scratch (10 ms of plain system readings); a smaller change becomes the new rate. Every second it
//! reads the kernel's clocksource again: a kernel that stopped trusting the TSC turns the gate off for
//! good. What remains: between a pause and the next refresh, the gate can serve the pre-pause
//! millisecond for at most one window (less than a millisecond of counter time), and a migration to a
//! slower counter can make windows too long until the next check (at most 50 ms).
//!
//! These limits affect only how exactly an ID's timestamp names the present millisecond, never
//! uniqueness: a generator takes `max(clock, last + 1)` whatever the clock says, so a stale or early
//! reading can only place an ID a millisecond off, never repeat one.

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
    /// What calibration measured here: the CPU cycles of 32 gated readings and of 32 system readings
    /// (the gate stays on only where it is the cheaper exact test); `None` before calibration, or where
    /// the gate is never used.
    pub fn calibration_costs() -> Option<(u64, u64)> {
        #[cfg(all(
            feature = "std",
            target_os = "linux",
            target_arch = "x86_64",
            not(miri)
        ))]
        {
            gate::GATE.costs()
        }
        #[cfg(not(all(
            feature = "std",
            target_os = "linux",
            target_arch = "x86_64",
            not(miri)
        )))]
        {
            None
        }
    }

    /// Whether readings are being served from the time-stamp counter: the gate is allowed here, its
    /// calibration (about 10 ms after the first reading) is done, and it measured a gated reading
    /// cheaper than a system reading.
    pub fn is_gated() -> bool {
        #[cfg(all(
            feature = "std",
            target_os = "linux",
            target_arch = "x86_64",
            not(miri)
        ))]
        {
            gate::GATE.is_calibrated()
        }
        #[cfg(not(all(
            feature = "std",
            target_os = "linux",
            target_arch = "x86_64",
            not(miri)
        )))]
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
        #[cfg(all(
            feature = "std",
            target_os = "linux",
            target_arch = "x86_64",
            not(miri)
        ))]
        // A 1 ms tick first: one comparison where a caller cannot keep the answer between calls.
        if window_ns == 1_000_000 || window_ns % 1_000_000 == 0 {
            return gate::GATE.now_ns_within(gate::rdtsc);
        }
        let _ = window_ns;
        Ok((system_now_ns()?, true))
    }
}

// Under Miri the gate is compiled (its logic is tested there) but not used: FastClock reads the system
// clock, as Miri cannot run `rdtsc`.
#[cfg(all(feature = "std", target_os = "linux", target_arch = "x86_64"))]
#[cfg_attr(miri, allow(dead_code))]
pub(crate) mod gate {
    use core::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, Ordering};
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
    /// How often (system-clock time, on the refresh path) the rate is checked against
    /// `CLOCK_MONOTONIC`: a pause, a jump or a new rate of the counter is noticed at the next check.
    pub(crate) const CHECK_NS: u64 = 50 * MS;
    /// How often (system-clock time, on the refresh path) the kernel's clocksource is read again.
    pub(crate) const SOURCE_CHECK_NS: u64 = 1_000 * MS;

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

    /// Whether the kernel's current clocksource is the TSC.
    fn kernel_uses_tsc() -> bool {
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .is_ok_and(|s| s.trim() == "tsc")
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

    impl Sample {
        fn take(counter: &impl Fn() -> u64) -> Option<Sample> {
            let c0 = counter();
            let mono_ns = monotonic_ns()?;
            let c1 = counter();
            Some(Sample {
                tsc: c0.wrapping_add(c1.wrapping_sub(c0) / 2),
                width: c1.wrapping_sub(c0),
                mono_ns,
            })
        }
    }

    const UNDECIDED: u8 = 0;
    const ALLOWED: u8 = 1;
    const OFF: u8 = 2;

    /// What the refresh path keeps to calibrate and check the counter (one thread at a time).
    #[derive(Debug)]
    struct Upkeep {
        /// Until calibrated: the first sample. After: the sample of the last check.
        last: Option<Sample>,
        /// The measured rate (cycles per ns × 2^32, not lowered); 0 until calibrated.
        measured: u64,
        /// System-clock time of the last clocksource check.
        source_checked_ns: u64,
    }

    /// The anchor (a seqlock of three words), the rate and its upkeep.
    #[derive(Debug)]
    pub(crate) struct Gate {
        /// Even: the anchor is stable; odd: a writer is replacing it.
        seq: AtomicU64,
        /// The counter read just before the anchor's system reading.
        anchor_tsc: AtomicU64,
        /// Cycles after `anchor_tsc` during which the present is provably in the anchor's millisecond;
        /// 0: no anchor (the counter is not even read).
        span: AtomicU64,
        /// The anchor: a system reading, Unix nanoseconds.
        anchor_ns: AtomicU64,
        /// Counter cycles per nanosecond × 2^32, already lowered by the safety margin; 0 until calibrated.
        rate: AtomicU64,
        /// UNDECIDED, ALLOWED or OFF.
        mode: AtomicU8,
        /// System-clock time of the last rate check.
        checked_ns: AtomicU64,
        upkeep: Mutex<Upkeep>,
        /// How many times the counter was found paused, jumped or at a new rate, and recalibrated.
        resets: AtomicU64,
        /// Whether the costs of a gated and a system reading were compared ([`Gate::gate_pays`]).
        picked: AtomicBool,
        /// What that comparison measured: gated cycles << 32 | system cycles (0: not yet).
        costs: AtomicU64,
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
                checked_ns: AtomicU64::new(0),
                upkeep: Mutex::new(Upkeep {
                    last: None,
                    measured: 0,
                    source_checked_ns: 0,
                }),
                resets: AtomicU64::new(0),
                picked: AtomicBool::new(false),
                costs: AtomicU64::new(0),
            }
        }

        /// A reading of the present's millisecond: the anchor where the counter proves it, else a system
        /// reading (which becomes the anchor). `(ns, exact)` as [`Clock::now_ns_within`].
        ///
        /// [`Clock::now_ns_within`]: crate::Clock::now_ns_within
        #[inline(always)]
        pub(crate) fn now_ns_within(&self, counter: impl Fn() -> u64) -> Result<(u64, bool)> {
            if let Some(ns) = self.cached(&counter) {
                return Ok((ns, false));
            }
            self.refresh(&counter).map(|ns| (ns, true))
        }

        /// The anchor, if the counter proves the present is still in its millisecond. With no anchor (the
        /// gate off, or not calibrated yet) the counter is not read.
        #[inline(always)]
        pub(crate) fn cached(&self, counter: &impl Fn() -> u64) -> Option<u64> {
            let s1 = self.seq.load(Ordering::Acquire);
            let anchor_tsc = self.anchor_tsc.load(Ordering::Relaxed);
            let span = self.span.load(Ordering::Relaxed);
            let ns = self.anchor_ns.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            let s2 = self.seq.load(Ordering::Relaxed);
            if s1 != s2 || s1 & 1 == 1 || span == 0 {
                return None;
            }
            // A counter below the anchor's wraps to a huge distance: not cached.
            (counter().wrapping_sub(anchor_tsc) < span).then_some(ns)
        }

        /// A system reading, which becomes the anchor; with the gate off, only a system reading.
        #[cold]
        #[inline(never)]
        pub(crate) fn refresh(&self, counter: &impl Fn() -> u64) -> Result<u64> {
            if !self.allowed() {
                return system_now_ns();
            }
            let t0 = counter();
            let ns = system_now_ns()?;
            if self.rate.load(Ordering::Relaxed) == 0
                || ns.wrapping_sub(self.checked_ns.load(Ordering::Relaxed)) >= CHECK_NS
            {
                if let Some(sample) = Sample::take(counter) {
                    self.upkeep(sample, ns, kernel_uses_tsc);
                }
            }
            self.anchor(t0, ns);
            if self.rate.load(Ordering::Relaxed) != 0
                && self
                    .picked
                    .compare_exchange(false, true, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                && !self.gate_pays(counter)
            {
                // A system reading is the cheaper exact test here: read it every time.
                self.mode.store(OFF, Ordering::Relaxed);
                self.rate.store(0, Ordering::Relaxed);
                self.drop_anchor();
            }
            Ok(ns)
        }

        /// Whether a gated reading (the anchor's seqlock and a counter read) costs less than a system
        /// reading on this machine: measured once, when the gate is first calibrated and anchored, as
        /// the fastest of a few rounds of each (timed with the counter itself). Where the system clock
        /// is the cheaper exact test (a vDSO `clock_gettime` faster than `rdtsc`, as on some VMs that
        /// trap or emulate the counter), the gate turns itself off.
        fn gate_pays(&self, counter: &impl Fn() -> u64) -> bool {
            const K: u64 = 32;
            let (mut gated, mut system) = (u64::MAX, u64::MAX);
            for _ in 0..5 {
                let t0 = counter();
                for _ in 0..K {
                    core::hint::black_box(self.cached(counter));
                }
                let t1 = counter();
                for _ in 0..K {
                    let _ = core::hint::black_box(system_now_ns());
                }
                let t2 = counter();
                gated = gated.min(t1.wrapping_sub(t0));
                system = system.min(t2.wrapping_sub(t1));
            }
            self.costs.store(
                (gated.min(u32::MAX as u64) << 32) | system.min(u32::MAX as u64),
                Ordering::Relaxed,
            );
            gated < system
        }

        /// The cycles `K` gated readings and `K` system readings took when the gate was calibrated
        /// ([`gate_pays`](Self::gate_pays)); `None` before.
        pub(crate) fn costs(&self) -> Option<(u64, u64)> {
            let c = self.costs.load(Ordering::Relaxed);
            (c != 0).then_some((c >> 32, c & u64::from(u32::MAX)))
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
            self.write_anchor(t0, span, ns);
        }

        /// Drops the anchor: nothing is served from the counter until the next one.
        fn drop_anchor(&self) {
            // Retried: a writer that is busy would otherwise leave its anchor in place.
            for _ in 0..1_000 {
                if self.write_anchor(0, 0, 0) {
                    return;
                }
                std::thread::yield_now();
            }
        }

        fn write_anchor(&self, t0: u64, span: u64, ns: u64) -> bool {
            let s = self.seq.load(Ordering::Relaxed);
            // Another thread is writing: its anchor is as good as ours.
            if s & 1 == 1
                || self
                    .seq
                    .compare_exchange(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
            {
                return false;
            }
            fence(Ordering::Release);
            self.anchor_tsc.store(t0, Ordering::Relaxed);
            self.span.store(span, Ordering::Relaxed);
            self.anchor_ns.store(ns, Ordering::Relaxed);
            self.seq.store(s + 2, Ordering::Release);
            true
        }

        /// The refresh path's upkeep, for one thread at a time (others go on): the first calibration;
        /// then, every [`CHECK_NS`], the rate measured again against `CLOCK_MONOTONIC` (a counter that
        /// paused, jumped or changed its rate by more than a quarter — a VM paused, restored or migrated —
        /// drops the anchor and calibrates from scratch; a smaller change, such as the kernel's tick
        /// adjustment, becomes the new rate); every [`SOURCE_CHECK_NS`], the kernel's clocksource (no
        /// longer `tsc`: the gate is off for good).
        pub(crate) fn upkeep(&self, s: Sample, ns: u64, uses_tsc: impl FnOnce() -> bool) {
            let Ok(mut u) = self.upkeep.try_lock() else {
                return;
            };
            self.checked_ns.store(ns, Ordering::Relaxed);
            if ns.wrapping_sub(u.source_checked_ns) >= SOURCE_CHECK_NS {
                u.source_checked_ns = ns;
                if !uses_tsc() {
                    self.mode.store(OFF, Ordering::Relaxed);
                    self.rate.store(0, Ordering::Relaxed);
                    self.drop_anchor();
                    return;
                }
            }
            let Some(f) = u.last else {
                u.last = Some(s);
                return;
            };
            let (Some(dns), Some(dc)) =
                (s.mono_ns.checked_sub(f.mono_ns), s.tsc.checked_sub(f.tsc))
            else {
                // A counter (or, impossibly, the monotonic clock) that went backwards.
                self.reset(&mut u, s);
                return;
            };
            if dns < CALIBRATION_NS {
                return;
            }
            let slack = f.width + s.width;
            if u.measured != 0 {
                let expected = ((dns as u128 * u.measured as u128) >> 32) as u64;
                if dc.saturating_add(slack) < expected - expected / 4
                    || dc.saturating_sub(slack) > expected + expected / 4
                {
                    self.reset(&mut u, s);
                    return;
                }
            }
            if slack.saturating_mul(CALIBRATION_PRECISION) > dc {
                // Not precise enough (a thread preempted while sampling): keep the narrower sample.
                if u.measured == 0 && s.width < f.width {
                    u.last = Some(s);
                }
                return;
            }
            // Plausible counters run at 100 MHz ..= 20 GHz.
            if dc.saturating_mul(10) < dns || dc > dns.saturating_mul(20) {
                self.reset(&mut u, s);
                return;
            }
            let measured = (((dc as u128) << 32) / dns as u128).min(u64::MAX as u128) as u64;
            u.measured = measured;
            u.last = Some(s);
            self.rate.store(lowered(measured), Ordering::Relaxed);
        }

        fn reset(&self, u: &mut Upkeep, s: Sample) {
            let was_calibrated = u.measured != 0;
            u.measured = 0;
            u.last = Some(s);
            self.rate.store(0, Ordering::Relaxed);
            self.drop_anchor();
            if was_calibrated {
                self.resets.fetch_add(1, Ordering::Relaxed);
            }
        }

        pub(crate) fn is_calibrated(&self) -> bool {
            self.allowed() && self.rate.load(Ordering::Relaxed) != 0
        }

        /// Whether the counter may gate readings here: decided at the first reading from
        /// `SNOWMINT_FAST_CLOCK` and the kernel's clocksource; turned off for good when a later check
        /// finds another clocksource.
        fn allowed(&self) -> bool {
            match self.mode.load(Ordering::Relaxed) {
                ALLOWED => true,
                OFF => false,
                _ => {
                    let allowed = std::env::var_os("SNOWMINT_FAST_CLOCK")
                        .map_or(true, |v| v != "0")
                        && kernel_uses_tsc();
                    // A concurrent check that turned the gate off wins.
                    let _ = self.mode.compare_exchange(
                        UNDECIDED,
                        if allowed { ALLOWED } else { OFF },
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                    self.mode.load(Ordering::Relaxed) == ALLOWED
                }
            }
        }

        /// For tests: a gate already decided, with a given rate (cycles per ns × 2^32, lowered).
        #[cfg(test)]
        pub(crate) fn with_rate(rate: u64) -> Gate {
            let g = Gate::new();
            g.mode.store(ALLOWED, Ordering::Relaxed);
            g.rate.store(rate, Ordering::Relaxed);
            // The tests' counters are scripted: comparing costs with them would measure nothing.
            g.picked.store(true, Ordering::Relaxed);
            g
        }

        /// For tests: a gate with a rate, checked at `now_ns`, that has not compared costs yet.
        #[cfg(test)]
        pub(crate) fn unpicked(rate: u64, now_ns: u64) -> Gate {
            let g = Gate::with_rate(rate);
            g.picked.store(false, Ordering::Relaxed);
            g.checked_ns.store(now_ns, Ordering::Relaxed);
            g
        }

        /// For tests: a gate that is off.
        #[cfg(test)]
        pub(crate) fn off() -> Gate {
            let g = Gate::new();
            g.mode.store(OFF, Ordering::Relaxed);
            g
        }

        #[cfg(test)]
        pub(crate) fn rate(&self) -> u64 {
            self.rate.load(Ordering::Relaxed)
        }

        #[cfg(test)]
        pub(crate) fn resets(&self) -> u64 {
            self.resets.load(Ordering::Relaxed)
        }

        #[cfg(test)]
        pub(crate) fn is_off(&self) -> bool {
            self.mode.load(Ordering::Relaxed) == OFF
        }
    }

    /// The rate windows are computed with: the measured one lowered by a quarter. Between two checks the
    /// kernel may move the clock's rate by its whole tick-adjustment range (±10 %, so a rate measured at
    /// −10 % meets a clock running at +10 %: 1.22× as many cycles per nanosecond measured as there are);
    /// 3/4 × 1.22 < 1 keeps even that window inside its millisecond. NTP's ±0.05 % is far inside it.
    pub(crate) const fn lowered(measured: u64) -> u64 {
        (measured as u128 * 3 / 4) as u64
    }

    /// `CLOCK_MONOTONIC`, nanoseconds (it runs at the real-time clock's rate, but never steps).
    fn monotonic_ns() -> Option<u64> {
        const CLOCK_MONOTONIC: i32 = 1;
        crate::clock::clock_gettime_ns(CLOCK_MONOTONIC)
    }
}

#[cfg(all(test, feature = "std", target_os = "linux", target_arch = "x86_64"))]
mod tests {
    use super::gate::{lowered, Gate, Sample, CALIBRATION_NS, GUARD_NS, SOURCE_CHECK_NS};
    use super::*;
    use crate::SystemClock;
    use std::time::{Duration, Instant};

    const MS: u64 = 1_000_000;
    /// 2.5 cycles per ns, × 2^32, lowered by the margin (what calibration stores for a 2.5 GHz TSC).
    const RATE: u64 = lowered((5u64 << 32) / 2);

    fn tsc(v: u64) -> impl Fn() -> u64 {
        move || v
    }

    #[test]
    fn window_is_the_rest_of_the_millisecond_at_the_lowered_rate() {
        let g = Gate::with_rate(RATE);
        let t0 = 1_000_000_000;
        let ns = 1_700_000_000_000 * MS + 400_000; // 400 µs into its millisecond
        g.anchor(t0, ns);
        // 599 µs left less the 1 µs guard, at 2.5 × 3/4 cycles per ns.
        let span = (((600_000 - GUARD_NS) as u128 * RATE as u128) >> 32) as u64;
        assert_eq!(g.cached(&tsc(t0)), Some(ns));
        assert_eq!(g.cached(&tsc(t0 + span - 1)), Some(ns));
        assert_eq!(g.cached(&tsc(t0 + span)), None);
        // Even at the true rate (4/3 faster than the lowered one) the window ends before the millisecond.
        let true_cycles_to_boundary = 600_000 * 5 / 2;
        assert!(span < true_cycles_to_boundary * 3 / 4 + 1);
        // A counter below the anchor's (another core's, or wrapped) proves nothing.
        assert_eq!(g.cached(&tsc(t0 - 1)), None);
    }

    /// The margin covers the kernel's whole tick-adjustment range: a rate measured while the clock ran
    /// 10 % slow, used while it runs 10 % fast, still gives windows inside the millisecond.
    #[test]
    fn the_margin_covers_the_tick_adjustment_range() {
        let true_cycles_per_ns = 2.5f64;
        // Measured against a clock at 0.9× speed: 1/0.9 as many cycles per clock nanosecond.
        let measured = ((true_cycles_per_ns / 0.9) * (1u64 << 32) as f64) as u64;
        let g = Gate::with_rate(lowered(measured));
        let t0 = 1_000;
        g.anchor(t0, 5 * MS); // the start of a millisecond: a whole window
        assert!(g.cached(&tsc(t0 + 1)).is_some());
        // The clock now runs at 1.1× speed: its millisecond ends after 1 ms / 1.1 of real time, and from
        // that counter value on nothing may be served.
        let cycles_to_boundary = ((MS as f64 / 1.1) * true_cycles_per_ns) as u64;
        assert_eq!(g.cached(&tsc(t0 + cycles_to_boundary)), None);
    }

    #[test]
    fn no_window_at_the_end_of_a_millisecond_or_before_calibration() {
        let g = Gate::with_rate(RATE);
        g.anchor(5, 7 * MS + MS - GUARD_NS); // exactly at the guard: nothing left
        assert_eq!(g.cached(&tsc(5)), None);
        let uncalibrated = Gate::with_rate(0);
        uncalibrated.anchor(5, 7 * MS);
        assert_eq!(uncalibrated.cached(&tsc(5)), None);
    }

    fn s(tsc: u64, width: u64, mono_ns: u64) -> Sample {
        Sample {
            tsc,
            width,
            mono_ns,
        }
    }

    /// `upkeep` with the kernel's clocksource still `tsc`.
    fn upkeep(g: &Gate, sample: Sample) {
        g.upkeep(sample, sample.mono_ns, || true);
    }

    #[test]
    fn calibration_needs_distance_and_narrow_windows() {
        let g = Gate::with_rate(0);
        upkeep(&g, s(1_000, 100, 0));
        // Too soon.
        upkeep(&g, s(1_000 + 25_000_000, 100, CALIBRATION_NS - 1));
        assert_eq!(g.rate(), 0);
        // Far enough, but the windows are too wide for < 1 % error: a narrower sample replaces the first.
        upkeep(&g, s(25_001_000, 200_000, CALIBRATION_NS));
        assert_eq!(g.rate(), 0);
        // 2.5 GHz over 10 ms with 100-cycle windows.
        upkeep(&g, s(1_000 + 25_000_000, 100, CALIBRATION_NS));
        let expected = lowered(((25_000_000u128 << 32) / CALIBRATION_NS as u128) as u64);
        assert_eq!(g.rate(), expected);
        // Implausible rates are refused.
        let slow = Gate::with_rate(0);
        upkeep(&slow, s(0, 1, 0));
        upkeep(&slow, s(100_000, 1, CALIBRATION_NS)); // 10 MHz
        assert_eq!(slow.rate(), 0);
    }

    /// A calibrated gate at 2.5 GHz, anchored at the start of a millisecond.
    fn calibrated() -> Gate {
        let g = Gate::with_rate(0);
        upkeep(&g, s(0, 100, 0));
        upkeep(&g, s(25_000_000, 100, CALIBRATION_NS));
        assert_ne!(g.rate(), 0);
        g.anchor(25_000_000, 7 * MS);
        assert!(g.cached(&tsc(25_000_001)).is_some());
        g
    }

    #[test]
    fn a_paused_counter_is_noticed_at_the_next_check_and_recalibrated() {
        let g = calibrated();
        // A VM paused for 5 s with its counter stopped: monotonic time moved on, the counter did not.
        upkeep(&g, s(25_000_000 + 1_000, 100, CALIBRATION_NS + 5_000 * MS));
        assert_eq!(g.rate(), 0, "rate dropped");
        assert_eq!(g.cached(&tsc(25_000_001)), None, "anchor dropped");
        assert_eq!(g.resets(), 1);
        // Calibrated again from the next samples.
        upkeep(
            &g,
            s(
                25_001_000 + 25_000_000,
                100,
                2 * CALIBRATION_NS + 5_000 * MS,
            ),
        );
        assert_ne!(g.rate(), 0);
    }

    #[test]
    fn a_counter_at_a_new_rate_is_recalibrated_and_a_small_change_is_tracked() {
        // Migrated to a host whose counter runs 30 % slower: noticed, recalibrated.
        let g = calibrated();
        upkeep(
            &g,
            s(25_000_000 + 35_000_000, 100, CALIBRATION_NS + 20 * MS),
        );
        assert_eq!(g.rate(), 0);
        assert_eq!(g.resets(), 1);
        // A jump forward (a restore onto a host whose counter is ahead): the same.
        let g = calibrated();
        upkeep(
            &g,
            s(25_000_000 + 500_000_000, 100, CALIBRATION_NS + 20 * MS),
        );
        assert_eq!(g.rate(), 0);
        // The clock's rate moved by 10 % (the kernel's tick adjustment): tracked, no reset.
        let g = calibrated();
        upkeep(
            &g,
            s(25_000_000 + 55_000_000, 100, CALIBRATION_NS + 20 * MS),
        );
        let expected = lowered(((55_000_000u128 << 32) / (20 * MS) as u128) as u64);
        assert_eq!(g.rate(), expected);
        assert_eq!(g.resets(), 0);
    }

    #[test]
    fn a_clocksource_other_than_tsc_turns_the_gate_off_for_good() {
        let g = calibrated();
        // The first upkeep checked the source (at time 0); the next check is a second later.
        g.upkeep(
            s(25_000_000 + 25_000_000, 100, 2 * CALIBRATION_NS),
            2 * CALIBRATION_NS,
            || panic!("not due yet"),
        );
        g.upkeep(
            s(25_000_000 + 2_500_000_000, 100, SOURCE_CHECK_NS),
            SOURCE_CHECK_NS,
            || false,
        );
        assert!(g.is_off());
        assert_eq!(g.rate(), 0);
        assert_eq!(g.cached(&tsc(25_000_001)), None);
    }

    /// The cheaper exact test wins: a counter that costs more to read than the system clock (here one
    /// that spins ~20 µs per read) turns the gate off at its first anchor, and calibration records
    /// both costs.
    #[test]
    #[cfg_attr(miri, ignore = "reads the CPU's counter, which Miri cannot run")]
    fn a_counter_dearer_than_the_system_clock_turns_the_gate_off() {
        let slow = || {
            let t = super::gate::rdtsc();
            while super::gate::rdtsc().wrapping_sub(t) < 50_000 {}
            super::gate::rdtsc()
        };
        let g = Gate::unpicked(1 << 32, SystemClock.now_ns().unwrap());
        g.refresh(&slow).unwrap();
        let (gated, system) = g.costs().expect("costs measured at the first anchor");
        assert!(gated > system, "gated {gated} cycles, system {system}");
        assert!(g.is_off(), "the dearer test was kept");
        assert!(g.cached(&slow).is_none());
    }

    /// With the gate off the counter is never read: only the system clock.
    #[test]
    fn with_the_gate_off_the_counter_is_never_read() {
        use std::sync::atomic::{AtomicU64, Ordering};
        let reads = AtomicU64::new(0);
        let counter = || {
            reads.fetch_add(1, Ordering::Relaxed);
            rdtsc_for_tests()
        };
        let g = Gate::off();
        for _ in 0..1_000 {
            let before = SystemClock.now_ns().unwrap();
            let (ns, exact) = g.now_ns_within(counter).unwrap();
            assert!(exact && ns >= before && ns <= SystemClock.now_ns().unwrap());
        }
        assert_eq!(reads.load(Ordering::Relaxed), 0);
        if cfg!(miri) {
            return; // Miri cannot run `rdtsc`
        }
        // An allowed gate does read it.
        let on = Gate::with_rate(0);
        on.now_ns_within(counter).unwrap();
        assert!(reads.load(Ordering::Relaxed) > 0);
    }

    fn rdtsc_for_tests() -> u64 {
        super::gate::rdtsc()
    }

    /// The property that matters: a same-ms reading names the millisecond that the system clock shows
    /// at that moment (between a system reading before and one after), in two threads at once, with
    /// dense calls and gaps that cross milliseconds.
    #[test]
    #[cfg_attr(miri, ignore = "reads the CPU's counter, which Miri cannot run")]
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
