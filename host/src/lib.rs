//! The host layer: what every binding does with host input, written once, below the bindings (Python,
//! Node and C call it; the WASM package keeps its own copy of [`options`]'s rule and of the clock adapter
//! to stay inside its size budget, and the host-input vectors in `tests/host-inputs/` hold all four to the
//! same results).
//!
//! - [`options`]: the generator's options from host values — the defaults, the `max_ahead` overflow
//!   check and the seed rule (a seed implies the random start and contradicts turning it off);
//! - [`os_seed`]: a seed from the operating system's randomness;
//! - [`with_host_clock`]: the injected-clock adapter that returns the core's error or the host's own;
//! - [`fork`]: the fork guard (SPEC §2: a generator created before `fork()` refuses to mint in the child);
//! - the batch limit is the core's ([`snowmint::check_batch`], [`snowmint::MAX_BATCH`]).

use snowmint::{ErrorCode, Options, Policy};

/// A refused host value: the stable code and a message naming the argument as the host spells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    /// The error code every runtime reports for this input.
    pub code: ErrorCode,
    /// The message, naming the argument in the host's spelling.
    pub message: String,
}

impl HostError {
    fn invalid(message: String) -> HostError {
        HostError {
            code: ErrorCode::InvalidArgument,
            message,
        }
    }
}

/// How a host spells the option names (in messages).
#[derive(Clone, Copy, Debug)]
pub struct OptionNames {
    /// `max_ahead_ms` (Python, C) or `maxAheadMs` (JavaScript).
    pub max_ahead_ms: &'static str,
    /// `random_start` or `randomStart`.
    pub random_start: &'static str,
    /// `random_seed` or `randomSeed`.
    pub random_seed: &'static str,
    /// How the host writes false (`False` in Python, `false` elsewhere).
    pub false_literal: &'static str,
}

/// Python's spelling.
pub const PYTHON_NAMES: OptionNames = OptionNames {
    max_ahead_ms: "max_ahead_ms",
    random_start: "random_start",
    random_seed: "random_seed",
    false_literal: "False",
};

/// JavaScript's spelling (Node and WASM).
pub const JS_NAMES: OptionNames = OptionNames {
    max_ahead_ms: "maxAheadMs",
    random_start: "randomStart",
    random_seed: "randomSeed",
    false_literal: "false",
};

/// The generator's options from host values already converted to integers (`None`: not given):
/// `max_ahead_ms` defaults to 15 s and must fit 64-bit nanoseconds; a `random_seed` turns the random
/// start on, and contradicts `random_start: false` (`INVALID_ARGUMENT`); `random_start: true` without a
/// seed takes one from [`os_seed`].
pub fn options(
    names: &OptionNames,
    policy: Policy,
    max_ahead_ms: Option<u64>,
    random_start: Option<bool>,
    random_seed: Option<u64>,
) -> Result<Options, HostError> {
    let max_ahead_ns = match max_ahead_ms {
        None => snowmint::DEFAULT_MAX_AHEAD_NS,
        Some(ms) => ms.checked_mul(1_000_000).ok_or_else(|| {
            HostError::invalid(format!(
                "{} is {ms}, allowed at most {} (64-bit nanoseconds)",
                names.max_ahead_ms,
                u64::MAX / 1_000_000
            ))
        })?,
    };
    let random_start_seed = match (random_start, random_seed) {
        (Some(false), Some(_)) => {
            return Err(HostError::invalid(format!(
                "{} is given but {} is {}: a seed only seeds a random start",
                names.random_seed, names.random_start, names.false_literal
            )))
        }
        (_, Some(seed)) => Some(seed),
        (Some(true), None) => Some(os_seed()),
        (_, None) => None,
    };
    Ok(Options {
        policy,
        max_ahead_ns,
        random_start_seed,
    })
}

/// A seed from the operating system's randomness (std's hash keys are drawn from it), mixed with the
/// process ID and the time so that two generators of one process differ too.
pub fn os_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

/// What went wrong reading a host's injected clock.
#[derive(Debug)]
pub enum ClockFault<H> {
    /// A reading the core refuses (NaN, negative, fractional, out of range: `INVALID_CLOCK`), or an
    /// error of the mint itself (`CLOCK_BEFORE_EPOCH`, `TOO_FAR_AHEAD` …).
    Core(snowmint::Error),
    /// The clock returned a value of the wrong host type: the host raises its `TypeError` with this
    /// error's code (`INVALID_CLOCK`) and message.
    WrongType(snowmint::Error),
    /// The clock raised: the host's own exception, passed on unchanged.
    Host(H),
}

/// Runs `mint` with an injected host clock: `read` calls the host function and converts its value (a
/// refused reading: `Err(ClockFault::Core)`; a wrong type: `Err(ClockFault::WrongType)`; an exception:
/// `Err(ClockFault::Host)`). The core sees every failure as `INVALID_CLOCK` and stops; the fault that
/// stopped it is returned as it was, so a host's exception reaches the caller unchanged and a wrong type
/// stays a type error. One adapter for every binding's injected clock.
pub fn with_host_clock<T, H>(
    read: impl Fn() -> Result<u64, ClockFault<H>>,
    mint: impl FnOnce(&dyn snowmint::Clock) -> snowmint::Result<T>,
) -> Result<T, ClockFault<H>> {
    let fault: std::cell::Cell<Option<ClockFault<H>>> = std::cell::Cell::new(None);
    let clock = || match read() {
        Ok(ns) => Ok(ns),
        Err(ClockFault::Core(e)) => Err(e),
        Err(other) => {
            let e = match &other {
                ClockFault::WrongType(e) => *e,
                _ => snowmint::Error::InvalidClock {
                    reason: "the clock raised an exception",
                },
            };
            fault.set(Some(other));
            Err(e)
        }
    };
    mint(&clock).map_err(|e| fault.take().unwrap_or(ClockFault::Core(e)))
}

/// The fork guard (SPEC §2: forked children must not repeat the parent's IDs). A process-wide counter is
/// bumped in every forked child (a `pthread_atfork` child handler, plus [`fork::note_child`] for hosts
/// with their own fork hook, such as Python's `os.register_at_fork`); a generator remembers
/// [`fork::count`] when it is created and [`fork::check`]s it on every mint: one relaxed load.
pub mod fork {
    use std::sync::atomic::{AtomicU64, Ordering};

    static FORKS: AtomicU64 = AtomicU64::new(0);

    /// Counts a fork in the child (async-signal-safe: one atomic add).
    pub fn note_child() {
        FORKS.fetch_add(1, Ordering::Relaxed);
    }

    #[cfg(unix)]
    extern "C" fn child_handler() {
        note_child();
    }

    #[cfg(unix)]
    extern "C" {
        fn pthread_atfork(
            prepare: Option<extern "C" fn()>,
            parent: Option<extern "C" fn()>,
            child: Option<extern "C" fn()>,
        ) -> std::os::raw::c_int;
    }

    /// Registers the `pthread_atfork` handler once; returns the current fork count.
    pub fn count() -> u64 {
        #[cfg(unix)]
        {
            static REGISTERED: std::sync::Once = std::sync::Once::new();
            // SAFETY: registers a handler that only touches a static atomic. The bindings that load this
            // code (extension modules, addons, the C library) are not unloaded while generators live.
            REGISTERED.call_once(|| unsafe {
                pthread_atfork(None, None, Some(child_handler));
            });
        }
        FORKS.load(Ordering::Relaxed)
    }

    /// `FORKED` if a fork happened since `created_under` (a [`count`]).
    #[inline(always)]
    pub fn check(created_under: u64) -> snowmint::Result<()> {
        if FORKS.load(Ordering::Relaxed) != created_under {
            return Err(snowmint::Error::Forked);
        }
        Ok(())
    }

    /// Whether a fork happened since `created_under` (for handles that are safe in a child anyway).
    #[inline(always)]
    pub fn forked_since(created_under: u64) -> bool {
        FORKS.load(Ordering::Relaxed) != created_under
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_rule_and_the_overflow_check() {
        let o = options(&JS_NAMES, Policy::Fail, None, None, None).unwrap();
        assert_eq!(o.max_ahead_ns, snowmint::DEFAULT_MAX_AHEAD_NS);
        assert_eq!(o.random_start_seed, None);
        let o = options(&JS_NAMES, Policy::Fail, Some(0), None, Some(5)).unwrap();
        assert_eq!((o.max_ahead_ns, o.random_start_seed), (0, Some(5)));
        assert!(options(&JS_NAMES, Policy::Fail, None, Some(true), None)
            .unwrap()
            .random_start_seed
            .is_some());
        let e = options(&PYTHON_NAMES, Policy::Wait, None, Some(false), Some(5)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(
            e.message
                .contains("random_seed is given but random_start is False"),
            "{e:?}"
        );
        let e = options(
            &JS_NAMES,
            Policy::Wait,
            Some(u64::MAX / 1_000_000 + 1),
            None,
            None,
        )
        .unwrap_err();
        assert!(e.message.starts_with("maxAheadMs is "), "{e:?}");
        assert!(options(
            &JS_NAMES,
            Policy::Wait,
            Some(u64::MAX / 1_000_000),
            None,
            None
        )
        .is_ok());
    }

    #[test]
    fn the_clock_adapter_keeps_the_host_fault() {
        let layout = snowmint::Layout::preset("twitter").unwrap();
        let gen = snowmint::SharedGenerator::new(layout, 1, snowmint::Options::default()).unwrap();
        let ok = with_host_clock::<_, &str>(
            || Ok(1_750_000_000_000 * 1_000_000),
            |c| gen.next_id_from(c),
        );
        assert!(ok.is_ok());
        let threw = with_host_clock(|| Err(ClockFault::Host("boom")), |c| gen.next_id_from(c));
        assert!(matches!(threw, Err(ClockFault::Host("boom"))));
        let wrong = snowmint::Error::InvalidClock {
            reason: "not a number",
        };
        let typed = with_host_clock::<_, ()>(
            || Err(ClockFault::WrongType(wrong)),
            |c| gen.next_id_from(c),
        );
        assert!(matches!(typed, Err(ClockFault::WrongType(e)) if e == wrong));
        let early = with_host_clock::<_, ()>(|| Ok(1), |c| gen.next_id_from(c));
        assert!(
            matches!(early, Err(ClockFault::Core(e)) if e.code() == ErrorCode::ClockBeforeEpoch)
        );
    }

    #[test]
    fn os_seeds_differ() {
        assert_ne!(os_seed(), os_seed());
    }

    #[test]
    fn the_fork_guard_counts_forks() {
        let c = fork::count();
        assert!(fork::check(c).is_ok());
        fork::note_child();
        assert_eq!(fork::check(c), Err(snowmint::Error::Forked));
        assert!(fork::forked_since(c));
        assert!(fork::check(fork::count()).is_ok());
    }
}
