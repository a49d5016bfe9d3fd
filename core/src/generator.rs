//! Minting: the one rule for clock regression and bursts, and the two generators that apply it.
//!
//! A generator keeps one number, the **next free logical position** `tick << sequence_bits | sequence`.
//! For a clock reading at tick `c` the next ID takes position `max(c << sequence_bits | start(c), next)`:
//! a clock that stepped back, or a tick whose sequence is used up, simply borrows positions ahead of the
//! clock (Hazelcast's Flake IDs, RFC 9562 §6.2 method 2). Logical time may run ahead of the clock by at
//! most `max_ahead`; past that the policy decides: wait (the host sleeps for the returned time), fail, or,
//! under `strict`, any backwards step of the clock is an error and a used-up tick waits for the next.
//!
//! The shared generator hands IDs out of **windows** ([`Window`]): one compare-and-swap takes positions of
//! the clock's present tick (1, then twice as many each time the holder uses them up in that tick, at
//! most [`MAX_WINDOW`]), and the holder — each thread, by default — hands them out one by one while its
//! clock reads that tick. Each holder's IDs are exactly those one-by-one minting would give it; across
//! holders, IDs of one tick interleave. [`SharedGenerator::ordered`] turns windows off.

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::stats::{borrowed, PlainCounts, Stats, Waited};

/// What to do when minting would put logical time more than `max_ahead` ahead of the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// The host sleeps until the clock catches up (the core returns how long): Rust std, Python, C.
    Wait,
    /// Return [`Error::TooFarAhead`] with how long to wait (JavaScript's default).
    Fail,
    /// Twitter's original rule: any backwards clock step is [`Error::ClockMovedBackwards`]; logical time
    /// never runs ahead of the clock, so a used-up tick waits for the next one.
    Strict,
}

impl Policy {
    /// `"wait"`, `"fail"` or `"strict"`.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Wait => "wait",
            Policy::Fail => "fail",
            Policy::Strict => "strict",
        }
    }

    /// Parses [`Policy::name`].
    pub fn from_name(s: &str) -> Result<Policy> {
        match s {
            "wait" => Ok(Policy::Wait),
            "fail" => Ok(Policy::Fail),
            "strict" => Ok(Policy::Strict),
            _ => Err(crate::NameKind::Policy.unknown(s)),
        }
    }
}

/// Default `max_ahead`: 15 seconds, as Hazelcast.
pub const DEFAULT_MAX_AHEAD_NS: u64 = 15_000_000_000;

/// The most IDs one batch call returns in every binding (Python `next_ids`, Node and WASM `nextIds`, C
/// `snowmint_next_ids`): 2^24 (16,777,216 IDs, 128 MiB). One limit for all, so a batch size valid in
/// one runtime is valid in every other; a larger request is `INVALID_ARGUMENT` (ask in several calls).
pub const MAX_BATCH: u64 = 1 << 24;

/// `n` as a batch length if it is at most [`MAX_BATCH`]; `INVALID_ARGUMENT` otherwise.
pub fn check_batch(n: u64) -> Result<usize> {
    if n > MAX_BATCH {
        return Err(Error::InvalidArgument {
            name: "batch size (IDs per call)",
            value: n,
            max: MAX_BATCH,
        });
    }
    Ok(n as usize)
}

/// How a generator behaves; every field has a default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    /// What to do past `max_ahead`.
    pub policy: Policy,
    /// How far logical time may run ahead of the clock, in nanoseconds (rounded down to whole ticks).
    ///
    /// One clock glitch of X seconds ahead moves logical time X seconds ahead; when the clock comes back,
    /// [`Policy::Wait`] stops minting for X − `max_ahead` (as Hazelcast: with the default 15 s, a 10-minute
    /// glitch is a 9¾-minute stall). Choose [`Policy::Fail`] to get [`Error::TooFarAhead`] at once instead
    /// (with how long until a retry succeeds), or a larger `max_ahead` to mint through longer glitches at
    /// the cost of timestamps that far in the future:
    ///
    /// ```
    /// use snowmint::{Options, Policy};
    /// let options = Options { policy: Policy::Fail, max_ahead_ns: 600_000_000_000, ..Options::default() };
    /// # let _ = options;
    /// ```
    pub max_ahead_ns: u64,
    /// `Some(seed)`: each tick's sequence starts at a pseudo-random value derived from the seed and the
    /// tick, so IDs do not reveal how many were minted per tick. Hosts seed it from the OS.
    pub random_start_seed: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            policy: Policy::Wait,
            max_ahead_ns: DEFAULT_MAX_AHEAD_NS,
            random_start_seed: None,
        }
    }
}

/// The outcome of a mint request that did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mint<T> {
    /// Minted.
    Ready(T),
    /// Nothing minted: sleep this many nanoseconds, read the clock again and retry.
    Wait(u64),
}

/// splitmix64's finaliser: the per-tick random sequence start, identical in every runtime.
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The rule, without state: shared by the plain and the lock-free generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rule {
    layout: Layout,
    node_field: u64,
    policy: Policy,
    max_ahead_ticks: u64,
    seed: Option<u64>,
    /// Every tick boundary is a multiple of this (1 ms for ticks of whole milliseconds, as epochs are in
    /// milliseconds; else 1 ns): any reading in the present window gives the present tick
    /// ([`Clock::now_ns_within`]).
    window_ns: u64,
}

/// Where a request lands: positions `first ..= first + n - 1`, and the new next free position.
#[derive(Clone, Copy, Debug)]
struct Plan {
    first: u64,
    next: u64,
}

impl Rule {
    fn new(layout: Layout, node_id: u64, options: Options) -> Result<Rule> {
        let node_field = layout.node_field(node_id)?;
        let max_ahead_ticks = match options.policy {
            Policy::Strict => 0,
            _ => options.max_ahead_ns / layout.tick_ns(),
        };
        if options.random_start_seed.is_some() && max_ahead_ticks == 0 {
            // A tick that starts at sequence r > 0 gives its full capacity only by borrowing r positions of
            // the next tick; without that room a random start would cost capacity.
            return Err(Error::InvalidOptions {
                reason: "a random sequence start needs max_ahead of at least one tick (and a policy other than strict) to keep the full per-tick capacity",
            });
        }
        Ok(Rule {
            layout,
            node_field,
            policy: options.policy,
            max_ahead_ticks,
            seed: options.random_start_seed,
            window_ns: if layout.tick_ns() % 1_000_000 == 0 {
                1_000_000
            } else {
                1
            },
        })
    }

    #[inline]
    fn start(&self, tick: u64) -> u64 {
        match self.seed {
            None => 0,
            Some(seed) => {
                mix64(seed.wrapping_add(tick.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
                    & self.layout.seq_mask()
            }
        }
    }

    /// Plans `n` (≥ 1) consecutive positions for a clock reading (`clock_tick` being its tick), given
    /// the next free position.
    #[inline(always)]
    fn plan(&self, next: u64, now_ns: u64, clock_tick: u64, n: u64) -> Result<Mint<Plan>> {
        let l = &self.layout;
        let seq_bits = l.sequence_bits();
        let tick_base = clock_tick << seq_bits;
        if self.policy == Policy::Strict && next > 0 {
            let last_tick = (next - 1) >> seq_bits;
            if clock_tick < last_tick {
                return Err(Error::ClockMovedBackwards {
                    by_ns: l.tick_start_ns(last_tick) - now_ns,
                });
            }
        }
        let at_clock = tick_base | self.start(clock_tick);
        let mut first = if at_clock > next { at_clock } else { next };
        let limit_tick = clock_tick.saturating_add(self.max_ahead_ticks);
        let mut last = match first.checked_add(n - 1) {
            Some(last) if last <= l.max_position() => last,
            _ => {
                return Err(Error::LayoutExhausted {
                    lifespan_end_ms: l.lifespan_end_ms(),
                })
            }
        };
        if last >> seq_bits > limit_tick && first == at_clock && at_clock > next {
            // A random start must never cost capacity: give it up rather than wait.
            first = if tick_base > next { tick_base } else { next };
            last = first + (n - 1);
        }
        let last_tick = last >> seq_bits;
        if last_tick > limit_tick {
            let window = (self.max_ahead_ticks as u128 + 1) * l.ids_per_tick() as u128;
            if n as u128 > window {
                return Err(Error::InvalidArgument {
                    name: "batch size (IDs per tick × (max_ahead ticks + 1))",
                    value: n,
                    max: window.min(u64::MAX as u128) as u64,
                });
            }
            let ready_at = l.tick_start_ns(last_tick - self.max_ahead_ticks);
            let wait_ns = ready_at - now_ns;
            return match self.policy {
                Policy::Fail => Err(Error::TooFarAhead {
                    ahead_ns: l.tick_start_ns(last_tick) - now_ns,
                    retry_after_ns: wait_ns,
                }),
                Policy::Wait | Policy::Strict => Ok(Mint::Wait(wait_ns)),
            };
        }
        Ok(Mint::Ready(Plan {
            first,
            next: last + 1,
        }))
    }

    #[inline(always)]
    fn id(&self, position: u64) -> u64 {
        self.layout.pack(position, self.node_field)
    }

    /// Writes the IDs of positions `first ..` into `out`, one tick's run at a time.
    fn fill(&self, first: u64, out: &mut [u64]) {
        let l = &self.layout;
        let seq_mask = l.seq_mask();
        // Within one tick, consecutive positions give IDs a fixed step apart.
        let step = match (l.family(), l.order()) {
            (crate::Family::Decimal, _) => 100,
            (_, crate::Order::TimestampSequenceNode) => 1u64 << l.node_bits(),
            (_, crate::Order::TimestampNodeSequence) => 1,
        };
        let mut pos = first;
        let mut rest = out;
        while !rest.is_empty() {
            let in_tick =
                ((seq_mask - (pos & seq_mask)) as u128 + 1).min(rest.len() as u128) as usize;
            let (run, tail) = rest.split_at_mut(in_tick);
            let base = self.id(pos);
            for (i, slot) in run.iter_mut().enumerate() {
                *slot = base + i as u64 * step;
            }
            pos += in_tick as u64;
            rest = tail;
        }
    }
}

/// The IDs of one batch request, computed as they are taken (no buffer): exactly the IDs that
/// `next_ids_*` would write for the same request, in order. The request itself (one state update, one
/// compare-and-swap for the shared generator) is already done when this is returned.
///
/// ```
/// use snowmint::{Generator, Layout, Mint, Options};
/// let mut a = Generator::new(Layout::twitter(), 7, Options::default()).unwrap();
/// let mut b = Generator::new(Layout::twitter(), 7, Options::default()).unwrap();
/// let now_ns = 1_700_000_000_000 * 1_000_000;
/// let mut buf = [0u64; 5];
/// assert_eq!(a.next_ids_at(now_ns, &mut buf).unwrap(), Mint::Ready(()));
/// let Mint::Ready(ids) = b.next_ids_iter_at(now_ns, 5).unwrap() else { unreachable!() };
/// assert!(ids.eq(buf));
/// ```
///
/// Not `Clone`: a copy would hand out the same IDs a second time.
#[derive(Debug)]
pub struct Ids<'a> {
    rule: &'a Rule,
    position: u64,
    left: usize,
}

impl Iterator for Ids<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        let id = self.rule.id(self.position);
        self.position += 1;
        self.left -= 1;
        Some(id)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Ids<'_> {}

impl core::iter::FusedIterator for Ids<'_> {}

/// Calls `attempt` with fresh clock readings, sleeping while it asks to wait. A clock that does not move
/// between two waits cannot be waited out: that ends in [`Error::TooFarAhead`] instead of a hang.
///
/// The first reading may be an earlier one of the present `window_ns` window
/// ([`Clock::now_ns_within`]): it gives the same tick, so a minted ID is exactly the one a fresh reading
/// gives; any other outcome is decided again on a fresh reading, so errors and waits always describe the
/// present (and a clock that is always exact, such as an injected one, is read once per attempt).
///
/// `strict`'s [`Error::ClockMovedBackwards`] is reported only when the clock really went back: the
/// reading must have been taken *after* the state it is compared with was loaded. A thread that reads
/// the clock, is preempted, and finds that another thread has meanwhile minted in a newer tick has a
/// stale reading, not a clock that stepped back. So that error stands only when the state it was judged
/// against was loaded before the reading (`snapshot()`, the state word — or a constant for a generator
/// that only one thread can touch — taken before the clock is read, and unchanged after the attempt);
/// otherwise [`settle`] decides on a fresh reading taken after a fresh snapshot.
///
/// The first attempt stands outside any loop: with no loop to hoist them out of, the generator's fields
/// are read after the clock, not loaded before it and spilled across the call (about 1 ns per ID for the
/// `&mut self` generator). Everything else is the cold path.
///
/// `seen()` is the generator's last clock tick seen (for [`Stats::regressions`]), loaded before each
/// reading and passed to `attempt` with it; the sleeps taken are added to `waited`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn with_clock<T, C: Clock + ?Sized>(
    clock: &C,
    window_ns: u64,
    strict: bool,
    snapshot: impl Fn() -> u64,
    seen: impl Fn() -> u64,
    sleep: impl FnMut(u64),
    waited: &mut Waited,
    mut attempt: impl FnMut(u64, u64) -> Result<Mint<T>>,
) -> Result<T> {
    // Under `strict`, the state before the reading: if the attempt's backwards step was judged against
    // this same state, the step is real (no other thread minted in between).
    let before = if strict { snapshot() } else { 0 };
    let last_seen = seen();
    let (now, exact) = clock.now_ns_within(window_ns)?;
    match attempt(now, last_seen) {
        Ok(Mint::Ready(v)) => Ok(v),
        Ok(Mint::Wait(ns)) if exact => settle(
            clock,
            snapshot,
            seen,
            sleep,
            waited,
            attempt,
            Some((now, ns)),
        ),
        Err(e)
            if exact
                && (!matches!(e, Error::ClockMovedBackwards { .. }) || snapshot() == before) =>
        {
            Err(e)
        }
        _ => settle(clock, snapshot, seen, sleep, waited, attempt, None),
    }
}

/// The cold path of [`with_clock`]: waits (after `pending`, a reading and the wait it asked for), fresh
/// readings, and the judgement of a backwards step.
#[cold]
#[inline(never)]
fn settle<T, C: Clock + ?Sized>(
    clock: &C,
    snapshot: impl Fn() -> u64,
    seen: impl Fn() -> u64,
    mut sleep: impl FnMut(u64),
    waited: &mut Waited,
    mut attempt: impl FnMut(u64, u64) -> Result<Mint<T>>,
    mut pending: Option<(u64, u64)>,
) -> Result<T> {
    // Each wait is at most max_ahead + one tick long, and a stale reading needs another thread to mint
    // in a newer tick between this thread's load and its reading: this many rounds means the clock is
    // not keeping up.
    for _ in 0..10_000 {
        let previous = pending.map(|(reading, ns)| {
            sleep(ns);
            waited.add(ns);
            reading
        });
        let before = snapshot();
        let last_seen = seen();
        let now = clock.now_ns()?;
        match attempt(now, last_seen) {
            Ok(Mint::Ready(v)) => return Ok(v),
            Ok(Mint::Wait(ns)) => {
                if previous.is_some_and(|p| now <= p) {
                    return Err(Error::TooFarAhead {
                        ahead_ns: ns,
                        retry_after_ns: ns,
                    });
                }
                pending = Some((now, ns));
            }
            // The state moved after this reading was taken: the reading is stale; read again.
            Err(Error::ClockMovedBackwards { .. }) if snapshot() != before => pending = None,
            Err(e) => return Err(e),
        }
    }
    Err(Error::TooFarAhead {
        ahead_ns: 0,
        retry_after_ns: 0,
    })
}

macro_rules! generator_common {
    ($($recv:tt)?) => {
        /// The layout IDs are minted in.
        pub fn layout(&self) -> &Layout {
            &self.rule.layout
        }

        /// The node ID this generator mints for (before any offset).
        pub fn node_id(&self) -> u64 {
            self.rule.node_field - self.rule.layout.node_id_offset()
        }

        /// The policy.
        pub fn policy(&self) -> Policy {
            self.rule.policy
        }

        /// Mints one ID for a reading (`seen`: see [`with_clock`]).
        #[inline(always)]
        fn one_at(&$($recv)? self, now_ns: u64, seen: u64) -> Result<Mint<u64>> {
            Ok(match self.reserve(now_ns, 1, seen)? {
                Mint::Ready(first) => Mint::Ready(self.rule.id(first)),
                Mint::Wait(ns) => Mint::Wait(ns),
            })
        }

        /// Requests `n` (≥ 1) positions as a batch: the first one.
        #[inline]
        fn batch_at(&$($recv)? self, now_ns: u64, seen: u64, n: u64) -> Result<Mint<u64>> {
            let r = self.reserve(now_ns, n, seen)?;
            if let Mint::Ready(_) = r {
                self.note_batch();
            }
            Ok(r)
        }

        /// Fills `out` (not empty) from one reading.
        fn fill_at(&$($recv)? self, now_ns: u64, seen: u64, out: &mut [u64]) -> Result<Mint<()>> {
            Ok(match self.batch_at(now_ns, seen, out.len() as u64)? {
                Mint::Ready(first) => {
                    self.rule.fill(first, out);
                    Mint::Ready(())
                }
                Mint::Wait(ns) => Mint::Wait(ns),
            })
        }

        /// Mints one ID for a clock reading in Unix nanoseconds.
        #[inline(always)]
        pub fn next_id_at(&$($recv)? self, now_ns: u64) -> Result<Mint<u64>> {
            self.close_mine();
            self.one_at(now_ns, self.seen_fn()())
        }

        /// Fills `out` with consecutive IDs for one clock reading (one state update for the whole batch;
        /// one compare-and-swap for the shared generator).
        pub fn next_ids_at(&$($recv)? self, now_ns: u64, out: &mut [u64]) -> Result<Mint<()>> {
            self.close_mine();
            if out.is_empty() {
                return Ok(Mint::Ready(()));
            }
            self.fill_at(now_ns, self.seen_fn()(), out)
        }

        /// Mints one ID from `clock`, sleeping with `sleep(ns)` while the policy says wait. (The shared
        /// generator hands it out from this thread's window, see [`Window`].)
        #[inline]
        pub fn next_id_with<C: Clock + ?Sized>(&$($recv)? self, clock: &C, sleep: impl FnMut(u64)) -> Result<u64> {
            self.mint_one_with(clock, sleep)
        }

        /// One ID, one position at a time (one state update per ID).
        #[inline(always)]
        fn ordered_one_with<C: Clock + ?Sized>(&$($recv)? self, clock: &C, sleep: impl FnMut(u64)) -> Result<u64> {
            let mut waited = Waited::default();
            let r = with_clock(clock, self.rule.window_ns, self.rule.policy == Policy::Strict, self.snapshot_fn(), self.seen_fn(), sleep, &mut waited, #[inline(always)] |now, seen| self.one_at(now, seen));
            if waited.count != 0 {
                self.note_waits(waited);
            }
            r
        }

        /// Fills `out` with consecutive IDs from one clock reading, sleeping while the policy says wait.
        pub fn next_ids_with<C: Clock + ?Sized>(
            &$($recv)? self,
            clock: &C,
            sleep: impl FnMut(u64),
            out: &mut [u64],
        ) -> Result<()> {
            if out.is_empty() {
                return Ok(());
            }
            self.close_mine();
            let mut waited = Waited::default();
            let r = with_clock(clock, self.rule.window_ns, self.rule.policy == Policy::Strict, self.snapshot_fn(), self.seen_fn(), sleep, &mut waited, #[inline(always)] |now, seen| self.fill_at(now, seen, out));
            self.note_waits(waited);
            r
        }

        /// Requests `n` consecutive IDs from one clock reading (one state update), sleeping with
        /// `sleep(ns)` while the policy says wait; the IDs are computed as the iterator is taken.
        pub fn next_ids_iter_with<C: Clock + ?Sized>(
            &$($recv)? self,
            clock: &C,
            sleep: impl FnMut(u64),
            n: usize,
        ) -> Result<Ids<'_>> {
            self.close_mine();
            let position = if n == 0 {
                0
            } else {
                let mut waited = Waited::default();
                let r = with_clock(clock, self.rule.window_ns, self.rule.policy == Policy::Strict, self.snapshot_fn(), self.seen_fn(), sleep, &mut waited, #[inline(always)] |now, seen| self.batch_at(now, seen, n as u64));
                self.note_waits(waited);
                r?
            };
            Ok(Ids { rule: &self.rule, position, left: n })
        }

        /// Requests `n` consecutive IDs from one clock reading (one state update); the IDs are computed as
        /// the iterator is taken. `n == 0` changes nothing.
        pub fn next_ids_iter_at(&$($recv)? self, now_ns: u64, n: usize) -> Result<Mint<Ids<'_>>> {
            self.close_mine();
            if n == 0 {
                return Ok(Mint::Ready(Ids { rule: &self.rule, position: 0, left: 0 }));
            }
            Ok(match self.batch_at(now_ns, self.seen_fn()(), n as u64)? {
                Mint::Ready(position) => Mint::Ready(Ids { rule: &self.rule, position, left: n }),
                Mint::Wait(ns) => Mint::Wait(ns),
            })
        }

        /// Mints one ID from `clock`; sleeps the thread while the policy says wait.
        #[cfg(feature = "std")]
        #[inline]
        pub fn next_id_from<C: Clock + ?Sized>(&$($recv)? self, clock: &C) -> Result<u64> {
            self.next_id_with(clock, crate::clock::sleep_ns)
        }

        /// Mints one ID from the system clock (read as [`FastClock`](crate::FastClock)); sleeps the thread
        /// while the policy says wait.
        ///
        /// ```
        /// let gen = snowmint::SharedGenerator::new(snowmint::Layout::twitter(), 7, Default::default()).unwrap();
        /// let (a, b) = (gen.next_id().unwrap(), gen.next_id().unwrap());
        /// assert!(b > a);
        /// ```
        #[cfg(feature = "std")]
        #[inline]
        pub fn next_id(&$($recv)? self) -> Result<u64> {
            self.next_id_from(&crate::FastClock)
        }

        /// Fills `out` with IDs from one system-clock reading (as [`FastClock`](crate::FastClock)); sleeps
        /// while the policy says wait.
        #[cfg(feature = "std")]
        pub fn next_ids(&$($recv)? self, out: &mut [u64]) -> Result<()> {
            self.next_ids_with(&crate::FastClock, crate::clock::sleep_ns, out)
        }
    };
}

mod plain;
/// The shared generator: everything that needs 64-bit atomics, under this one `cfg`.
#[cfg(target_has_atomic = "64")]
pub(crate) mod shared;
mod window;

pub use plain::Generator;
pub use window::{Window, MAX_WINDOW};
