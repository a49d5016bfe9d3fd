//! The host layer: what every binding does with host input, written once, below the bindings (Python,
//! Node, WASM and C call it; the host-input vectors in `tests/host-inputs/` hold all four to the same
//! results).
//!
//! - [`options`] / [`options_seeded`]: the generator's options from host values — the defaults, the
//!   `max_ahead` overflow check and the seed rule (a seed implies the random start and contradicts
//!   turning it off);
//! - [`os_seed`]: a seed from the operating system's randomness (a host without one, such as a browser,
//!   passes its own source to [`options_seeded`]);
//! - [`with_host_clock`]: the injected-clock adapter that returns the core's error or the host's own;
//! - [`fork`]: the fork guard (SPEC §2: a generator created before `fork()` refuses to mint in the child);
//! - [`LayoutFields`]: a custom layout's constructor, the same fields and defaults in every binding;
//! - [`JsNumbers`]: which of a layout's fields JavaScript gets as Numbers and which as bigints;
//! - [`window::OwnWindow`]: a binding object's own window (Python's generators under the GIL, Node's);
//! - [`js`]: the JavaScript integer rule (a `number` or a `bigint` as `u64`), one for Node and WASM;
//! - [`state_file::shared_generator`]: check the options, then open the state file (every binding's
//!   `state_file` / `stateFile`);
//! - [`sequencer_state_name!`]: a sequencer handle's state as every binding names it;
//! - the batch limit is the core's ([`snowmint::check_batch`], [`snowmint::MAX_BATCH`]).
//!
//! `no_std` with `alloc`, messages built without `core::fmt` (for hosts without an operating system);
//! the `std` feature (on by default) adds [`os_seed`], [`options`] and [`fork`].
#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

use alloc::string::String;
use core::cell::Cell;

use snowmint::{ErrorCode, Layout, LayoutConfig, Options, Order, Policy};

/// The fields of a custom layout's constructor in every binding (Python `Layout(timestamp_bits=…)`, Node
/// and WASM `new Layout({ timestampBits, … })`, C `snowmint_layout_config`), by their Python and C
/// names (JavaScript's are [`JS_LAYOUT_KEYS`]): the first four are required, the others default as
/// [`LayoutFields::config`] says. The host-input vectors' `layout` cases pin both.
pub const LAYOUT_FIELDS: [&str; 8] = [
    "timestamp_bits",
    "node_bits",
    "sequence_bits",
    "epoch_ms",
    "order",
    "tick_ns",
    "node_id_offset",
    "use_sign_bit",
];

/// A custom layout as a host's constructor was given it: the required fields, and the optional ones
/// (`None`: not given). A host that cannot omit a field (C's struct) starts from
/// `LayoutConfig::default()`, whose optional fields are these defaults.
#[derive(Clone, Copy, Debug)]
pub struct LayoutFields {
    pub timestamp_bits: u32,
    pub node_bits: u32,
    pub sequence_bits: u32,
    pub epoch_ms: u64,
    pub order: Option<Order>,
    pub tick_ns: Option<u64>,
    pub node_id_offset: Option<u64>,
    pub use_sign_bit: Option<bool>,
}

impl LayoutFields {
    /// The configuration, the optional fields defaulted: `order` timestamp, node, sequence; `tick_ns`
    /// one millisecond; `node_id_offset` 0; `use_sign_bit` false (the core checks every field).
    pub fn config(&self) -> LayoutConfig {
        let d = LayoutConfig::default();
        LayoutConfig {
            timestamp_bits: self.timestamp_bits,
            node_bits: self.node_bits,
            sequence_bits: self.sequence_bits,
            epoch_ms: self.epoch_ms,
            order: self.order.unwrap_or(d.order),
            tick_ns: self.tick_ns.unwrap_or(d.tick_ns),
            node_id_offset: self.node_id_offset.unwrap_or(d.node_id_offset),
            use_sign_bit: self.use_sign_bit.unwrap_or(d.use_sign_bit),
            node_split_bits: 0,
        }
    }
}

/// JavaScript's `Number.MAX_SAFE_INTEGER`, 2^53 - 1: the largest integer every Number below it is exact.
pub const JS_MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Which of a layout's fields the JavaScript packages (native and WASM, identically) give as a Number
/// rather than a bigint: a field is a Number when every value the layout allows in it is at most
/// 2^53 - 1, and a bigint otherwise. The type depends on the layout, never on the value, so a program
/// sees one type per layout and no value is ever rounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsNumbers {
    /// `nodeId` (a generator's, a lease's and `decode()`'s): the node field's largest value.
    pub node_id: bool,
    /// `decode().sequence`: the sequence field's largest value.
    pub sequence: bool,
    /// `decode().timestampMs`: the last Unix millisecond the layout represents.
    pub timestamp_ms: bool,
}

impl JsNumbers {
    /// The choice for `layout`.
    #[inline(never)]
    pub fn of(layout: &Layout) -> JsNumbers {
        JsNumbers {
            node_id: JsNumbers::node_id(layout),
            sequence: layout.ids_per_tick() - 1 <= JS_MAX_SAFE_INTEGER,
            timestamp_ms: layout.lifespan_end_ms() - 1 <= JS_MAX_SAFE_INTEGER,
        }
    }

    /// `node_id` alone (a generator's `nodeId` getter needs no other field).
    pub fn node_id(layout: &Layout) -> bool {
        layout.node_count() - 1 <= JS_MAX_SAFE_INTEGER
    }
}

/// A refused host value: the stable code and a message naming the argument as the host spells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    /// The error code every runtime reports for this input.
    pub code: ErrorCode,
    /// The message, naming the argument in the host's spelling.
    pub message: String,
}

impl HostError {
    fn invalid(parts: &[&str]) -> HostError {
        HostError {
            code: ErrorCode::InvalidArgument,
            message: cat(parts),
        }
    }
}

/// The parts, one after another: messages without `core::fmt` (whose machinery a WebAssembly module
/// pays for in size).
pub fn cat(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        s.push_str(p);
    }
    s
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

/// The option keys of a custom layout in JavaScript, in the order their messages list them (both
/// packages): [`LAYOUT_FIELDS`] in camelCase, the four required ones first.
pub const JS_LAYOUT_KEYS: [&str; 8] = [
    "timestampBits",
    "nodeBits",
    "sequenceBits",
    "epochMs",
    "order",
    "tickNs",
    "nodeIdOffset",
    "useSignBit",
];

/// The option keys of `new Generator({...})` in JavaScript: the first seven in both packages; the
/// native package also takes `stateFile` and (`Generator.open`, lease sources) `waitForNodeMs` (the
/// WASM package uses `JS_GENERATOR_KEYS[..7]`, so those are unknown options there).
pub const JS_GENERATOR_KEYS: [&str; 9] = [
    "nodeId",
    "layout",
    "clock",
    "policy",
    "maxAheadMs",
    "randomStart",
    "randomSeed",
    "stateFile",
    "waitForNodeMs",
];

/// The generator's options from host values already converted to integers (`None`: not given):
/// `max_ahead_ms` defaults to 15 s and must fit 64-bit nanoseconds; a `random_seed` turns the random
/// start on, and contradicts `random_start: false` (`INVALID_ARGUMENT`); `random_start: true` without a
/// seed takes one from `seed` (the host's source of randomness).
pub fn options_seeded(
    names: &OptionNames,
    policy: Policy,
    max_ahead_ms: Option<u64>,
    random_start: Option<bool>,
    random_seed: Option<u64>,
    seed: impl FnOnce() -> u64,
) -> Result<Options, HostError> {
    let max_ahead_ns = match max_ahead_ms {
        None => snowmint::DEFAULT_MAX_AHEAD_NS,
        Some(ms) => ms.checked_mul(1_000_000).ok_or_else(|| {
            HostError::invalid(&[
                names.max_ahead_ms,
                " is ",
                snowmint::Encoding::Decimal.encode(ms).as_str(),
                ", allowed at most 18446744073709 (64-bit nanoseconds)",
            ])
        })?,
    };
    let random_start_seed = match (random_start, random_seed) {
        (Some(false), Some(_)) => {
            return Err(HostError::invalid(&[
                names.random_seed,
                " is given but ",
                names.random_start,
                " is ",
                names.false_literal,
                ": a seed only seeds a random start",
            ]))
        }
        (_, Some(seed)) => Some(seed),
        (Some(true), None) => Some(seed()),
        (_, None) => None,
    };
    Ok(Options {
        policy,
        max_ahead_ns,
        random_start_seed,
    })
}

/// [`options_seeded`] with the operating system's randomness ([`os_seed`]).
#[cfg(feature = "std")]
pub fn options(
    names: &OptionNames,
    policy: Policy,
    max_ahead_ms: Option<u64>,
    random_start: Option<bool>,
    random_seed: Option<u64>,
) -> Result<Options, HostError> {
    options_seeded(
        names,
        policy,
        max_ahead_ms,
        random_start,
        random_seed,
        os_seed,
    )
}

/// A seed from the operating system's randomness (std's hash keys are drawn from it), mixed with the
/// process ID and the time so that two generators of one process differ too.
#[cfg(feature = "std")]
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

/// A host's injected clock: one reading, converted (a refused reading: `Err(ClockFault::Core)`; a wrong
/// type: `Err(ClockFault::WrongType)`; an exception: `Err(ClockFault::Host)`). Closures are readers; a
/// host may also name its own type, so that the core's code is generated for one concrete clock.
pub trait HostRead {
    /// The host's exception.
    type Fault;
    /// Calls the host function and converts its value.
    fn read(&self) -> Result<u64, ClockFault<Self::Fault>>;
}

impl<H, F: Fn() -> Result<u64, ClockFault<H>>> HostRead for F {
    type Fault = H;
    #[inline]
    fn read(&self) -> Result<u64, ClockFault<H>> {
        self()
    }
}

/// The core's view of a host's clock during one [`with_host_clock`] call: every failure is
/// `INVALID_CLOCK` to the core (which stops), and the fault that stopped it is kept for the host.
pub struct HostClock<'a, R: HostRead> {
    read: R,
    fault: &'a Cell<Option<ClockFault<R::Fault>>>,
}

impl<R: HostRead> HostClock<'_, R> {
    /// Keeps the fault that stops the core and gives the core its error: out of line, so the reading
    /// the core inlines into each of its loops is only the read (module size in WebAssembly).
    #[inline(never)]
    #[cold]
    fn stop(&self, fault: ClockFault<R::Fault>) -> snowmint::Error {
        let e = match &fault {
            ClockFault::Core(e) => return *e,
            ClockFault::WrongType(e) => *e,
            ClockFault::Host(_) => snowmint::Error::InvalidClock {
                reason: "the clock raised an exception",
            },
        };
        self.fault.set(Some(fault));
        e
    }
}

impl<R: HostRead> snowmint::Clock for HostClock<'_, R> {
    #[inline]
    fn now_ns(&self) -> snowmint::Result<u64> {
        self.read.read().map_err(|f| self.stop(f))
    }
}

/// Runs `mint` with an injected host clock read by `read`. The core sees every failure as
/// `INVALID_CLOCK` and stops; the fault that stopped it is returned as it was, so a host's exception
/// reaches the caller unchanged and a wrong type stays a type error. One adapter for every binding's
/// injected clock.
pub fn with_host_clock<T, R: HostRead>(
    read: R,
    mint: impl FnOnce(&HostClock<'_, R>) -> snowmint::Result<T>,
) -> Result<T, ClockFault<R::Fault>> {
    let fault = Cell::new(None);
    let clock = HostClock {
        read,
        fault: &fault,
    };
    mint(&clock).map_err(|e| match fault.take() {
        Some(f) => f,
        None => ClockFault::Core(e),
    })
}

pub mod js;

#[cfg(all(feature = "std", unix, target_has_atomic = "64"))]
pub mod state_file;

/// The names of a sequencer handle's states, as every binding gives them (Python's and Node's `state`
/// getters; C's `snowmint_lease_state` has the same three): attached, detached, destroyed.
pub const SEQUENCER_STATE_NAMES: [&str; 3] = ["attached", "detached", "destroyed"];

/// The name of a sequencer handle's state (`snowmint_coord::SequencerState`, which this crate does not
/// depend on: the binding names the type), one of [`SEQUENCER_STATE_NAMES`]:
/// `sequencer_state_name!(coord::SequencerState, s)`.
#[macro_export]
macro_rules! sequencer_state_name {
    ($state:ty, $s:expr) => {{
        type State = $state;
        match $s {
            State::Attached => $crate::SEQUENCER_STATE_NAMES[0],
            State::Detached => $crate::SEQUENCER_STATE_NAMES[1],
            State::Destroyed => $crate::SEQUENCER_STATE_NAMES[2],
        }
    }};
}

/// The fork guard (SPEC §2: forked children must not repeat the parent's IDs). A process-wide counter is
/// bumped in every forked child (a `pthread_atfork` child handler, plus [`fork::note_child`] for hosts
/// with their own fork hook, such as Python's `os.register_at_fork`); a generator remembers
/// [`fork::count`] when it is created and [`fork::check`]s it on every mint: one relaxed load.
#[cfg(feature = "std")]
pub mod window;

#[cfg(feature = "std")]
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
    #[test]
    fn layout_fields_default_as_layout_config_default_and_name_the_js_keys() {
        let f = super::LayoutFields {
            timestamp_bits: 39,
            node_bits: 5,
            sequence_bits: 19,
            epoch_ms: 1_700_000_000_000,
            order: None,
            tick_ns: None,
            node_id_offset: None,
            use_sign_bit: None,
        };
        let c = f.config();
        assert_eq!(c.order, snowmint::Order::TimestampNodeSequence);
        assert_eq!(
            (c.tick_ns, c.node_id_offset, c.use_sign_bit),
            (1_000_000, 0, false)
        );
        for (py, js) in super::LAYOUT_FIELDS.iter().zip(super::JS_LAYOUT_KEYS) {
            let camel: alloc::string::String = py
                .split('_')
                .enumerate()
                .map(|(i, w)| {
                    if i == 0 {
                        alloc::string::String::from(w)
                    } else {
                        w[..1].to_uppercase() + &w[1..]
                    }
                })
                .collect();
            assert_eq!(camel, js);
        }
    }

    use super::*;

    #[test]
    fn js_numbers_follow_the_layout_fields_not_the_values() {
        let twitter = Layout::preset("twitter").unwrap();
        let all = JsNumbers {
            node_id: true,
            sequence: true,
            timestamp_ms: true,
        };
        assert_eq!(JsNumbers::of(&twitter), all);
        let layout = |timestamp_bits, node_bits, sequence_bits, use_sign_bit| {
            Layout::new(snowmint::LayoutConfig {
                timestamp_bits,
                node_bits,
                sequence_bits,
                use_sign_bit,
                node_split_bits: 0,
                ..*twitter.config()
            })
            .unwrap()
        };
        // 60 node bits: node IDs up to 2^60 - 1 are bigints (a Number would round them).
        let wide_node = JsNumbers::of(&layout(3, 60, 0, false));
        assert_eq!(
            wide_node,
            JsNumbers {
                node_id: false,
                ..all
            }
        );
        // 53 bits is the widest field that is still a Number; 54 is not.
        assert!(JsNumbers::of(&layout(10, 53, 0, false)).node_id);
        assert!(!JsNumbers::of(&layout(9, 54, 0, false)).node_id);
        assert!(!JsNumbers::of(&layout(1, 0, 63, true)).sequence);
    }

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
        // The message names the largest value allowed, which is the one accepted below.
        let largest = std::format!("allowed at most {} (", u64::MAX / 1_000_000);
        assert!(e.message.contains(&largest), "{e:?}");
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
        type Read<H> = fn() -> Result<u64, ClockFault<H>>;
        let ok = with_host_clock((|| Ok(1_750_000_000_000 * 1_000_000)) as Read<&str>, |c| {
            gen.next_id_from(c)
        });
        assert!(ok.is_ok());
        let threw = with_host_clock((|| Err(ClockFault::Host("boom"))) as Read<&str>, |c| {
            gen.next_id_from(c)
        });
        assert!(matches!(threw, Err(ClockFault::Host("boom"))));
        const WRONG: snowmint::Error = snowmint::Error::InvalidClock {
            reason: "not a number",
        };
        let typed = with_host_clock((|| Err(ClockFault::WrongType(WRONG))) as Read<()>, |c| {
            gen.next_id_from(c)
        });
        assert!(matches!(typed, Err(ClockFault::WrongType(e)) if e == WRONG));
        let early = with_host_clock((|| Ok(1)) as Read<()>, |c| gen.next_id_from(c));
        assert!(
            matches!(early, Err(ClockFault::Core(e)) if e.code() == ErrorCode::ClockBeforeEpoch)
        );
    }

    #[test]
    fn the_state_names() {
        #[allow(dead_code)]
        enum SequencerState {
            Attached,
            Detached,
            Destroyed,
        }
        let names = [
            SequencerState::Attached,
            SequencerState::Detached,
            SequencerState::Destroyed,
        ]
        .map(|s| crate::sequencer_state_name!(SequencerState, s));
        assert_eq!(names, ["attached", "detached", "destroyed"]);
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
