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

/// A generator owned by one thread (`&mut self`): no atomics, so it works on every target.
///
/// ```
/// use snowmint::{Generator, Layout, Mint, Options};
/// let mut gen = Generator::new(Layout::twitter(), 7, Options::default()).unwrap();
/// let now_ns = 1_700_000_000_000 * 1_000_000;
/// assert_eq!(gen.next_id_at(now_ns).unwrap(), Mint::Ready(1724551110456274944));
/// assert_eq!(gen.next_id_at(now_ns).unwrap(), Mint::Ready(1724551110456274945));
/// ```
///
/// A generator is deliberately not `Clone`: two copies of one state mint the same IDs. To hand a
/// generator's state to another one (a restart, a new owner), persist [`Generator::state`] and
/// [`Generator::restore`] it, and stop using the old one.
///
/// ```compile_fail
/// let gen = snowmint::Generator::new(snowmint::Layout::twitter(), 7, Default::default()).unwrap();
/// let copy = gen.clone(); // error: a generator cannot be duplicated
/// ```
#[derive(Debug)]
pub struct Generator {
    rule: Rule,
    next: u64,
    counts: PlainCounts,
}

impl Generator {
    /// A generator for `node_id` under `layout`.
    pub fn new(layout: Layout, node_id: u64, options: Options) -> Result<Generator> {
        Ok(Generator {
            rule: Rule::new(layout, node_id, options)?,
            next: 0,
            counts: PlainCounts::default(),
        })
    }

    /// Takes `n` (≥ 1) positions for a clock reading: the first one. (`&mut self`: the generator's own
    /// last tick is the one seen before the reading; the argument is for the shared generator.)
    #[inline(always)]
    fn reserve(&mut self, now_ns: u64, n: u64, _seen: u64) -> Result<Mint<u64>> {
        let tick = self.rule.layout.tick_at_ns(now_ns)?;
        self.counts.see(tick);
        Ok(match self.rule.plan(self.next, now_ns, tick, n)? {
            Mint::Ready(p) => {
                let ahead = borrowed(self.next, p.next, tick, self.rule.layout.sequence_bits());
                if ahead != 0 {
                    self.counts.note_borrowed(ahead);
                }
                self.counts.stats.minted += n;
                self.next = p.next;
                Mint::Ready(p.first)
            }
            Mint::Wait(ns) => Mint::Wait(ns),
        })
    }

    /// What this generator has done since it was built ([`Stats`]).
    pub fn stats(&self) -> Stats {
        self.counts.stats
    }

    #[inline(always)]
    fn note_batch(&mut self) {
        self.counts.stats.batches += 1;
    }

    fn note_waits(&mut self, w: Waited) {
        self.counts.note_waits(w);
    }

    /// The generator keeps its last tick itself (see [`Generator::reserve`]).
    #[inline(always)]
    fn seen_fn(&self) -> impl Fn() -> u64 {
        || 0
    }

    /// The next free logical position: persist it as a high-water mark.
    pub fn state(&self) -> u64 {
        self.next
    }

    /// Nothing but the caller (`&mut self`) changes this generator's state between its clock reading and
    /// its check: every `strict` backwards step it sees is real.
    #[inline(always)]
    fn snapshot_fn(&self) -> impl Fn() -> u64 {
        || 0
    }

    /// Continues from a persisted high-water mark (never moves backwards).
    pub fn restore(&mut self, state: u64) {
        self.next = self.next.max(state);
    }

    /// `&mut self` has nothing to hand out ahead: one state update per ID costs no more than a window.
    #[inline(always)]
    fn mint_one_with<C: Clock + ?Sized>(
        &mut self,
        clock: &C,
        sleep: impl FnMut(u64),
    ) -> Result<u64> {
        self.ordered_one_with(clock, sleep)
    }

    #[inline(always)]
    fn close_mine(&self) {}
}

// `&mut self` for the plain generator, `&self` for the shared one.
impl Generator {
    generator_common!(mut);
}

/// Holder of a shared generator's state word: the generator's own [`AtomicU64`], or one that lives
/// elsewhere (a reference into memory the caller provides, such as a memory-mapped file).
#[cfg(target_has_atomic = "64")]
pub trait StateWord {
    /// The word.
    fn word(&self) -> &AtomicU64;

    /// Whether only the generator holding this changes the word (then [`Stats::minted`] is derived from
    /// it at no cost per ID; otherwise each request adds to a counter). The default, `false`, is always
    /// correct.
    fn exclusive(&self) -> bool {
        false
    }
}

#[cfg(all(target_has_atomic = "64", not(loom)))]
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(all(target_has_atomic = "64", loom))]
use loom::sync::atomic::{AtomicU64, Ordering};

#[cfg(target_has_atomic = "64")]
impl StateWord for AtomicU64 {
    fn word(&self) -> &AtomicU64 {
        self
    }

    fn exclusive(&self) -> bool {
        true
    }
}

#[cfg(target_has_atomic = "64")]
impl StateWord for &AtomicU64 {
    fn word(&self) -> &AtomicU64 {
        self
    }
}

#[cfg(all(target_has_atomic = "64", feature = "std"))]
impl StateWord for std::sync::Arc<AtomicU64> {
    fn word(&self) -> &AtomicU64 {
        self
    }
}

/// A lock-free generator shared by threads (`&self`, `Send + Sync`): each request is one
/// compare-and-swap on a single 64-bit state word; a single ID comes out of the calling thread's
/// window ([`Window`]) and costs a swap only when the window is used up or its tick is over.
///
/// ```
/// use snowmint::{SharedGenerator, Layout, Options};
/// let gen = SharedGenerator::new(Layout::preset("sonyflake").unwrap(), 1, Options::default()).unwrap();
/// std::thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| gen.next_id().unwrap());
///     }
/// });
/// ```
#[cfg(target_has_atomic = "64")]
#[derive(Debug)]
pub struct SharedGenerator<S: StateWord = AtomicU64, L: Ceiling = Unbounded> {
    rule: Rule,
    state: S,
    ceiling: L,
    counts: SharedCounts,
    windows: Windows,
}

/// A bound on the logical positions a [`SharedGenerator`] may mint: a request whose positions reach
/// [`Ceiling::limit`] fails with [`Error::LeaseLost`] and changes nothing. A node-ID lease raises the
/// limit only after its store has durably recorded the reservation up to it, so a holder never mints a
/// position another holder of the node ID could take ([`Unbounded`], the default, compiles away).
#[cfg(target_has_atomic = "64")]
pub trait Ceiling {
    /// The first logical position that may not be minted.
    fn limit(&self) -> u64;
}

/// No ceiling: every position may be minted (the check compiles away).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg(target_has_atomic = "64")]
pub struct Unbounded;

#[cfg(target_has_atomic = "64")]
impl Ceiling for Unbounded {
    #[inline(always)]
    fn limit(&self) -> u64 {
        u64::MAX
    }
}

/// A ceiling another thread raises (a lease keeper): the limit is the word's value.
#[cfg(target_has_atomic = "64")]
impl Ceiling for AtomicU64 {
    #[inline(always)]
    fn limit(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }
}

#[cfg(all(target_has_atomic = "64", feature = "std"))]
impl Ceiling for std::sync::Arc<AtomicU64> {
    #[inline(always)]
    fn limit(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }
}

#[cfg(target_has_atomic = "64")]
use crate::stats::SharedCounts;

/// The largest window, in positions: a thread that mints this fast takes one compare-and-swap per 64
/// IDs, and leaves at most 63 positions of a tick unused when it stops.
pub const MAX_WINDOW: u64 = 64;

/// Positions of one tick taken ahead with one compare-and-swap, handed out one by one by their holder
/// (a thread, or a binding's generator object) while the clock is provably in that tick
/// ([`SharedGenerator::next_id_in`]).
///
/// A window is sized to demand: the first ID of a tick takes one position; each time the holder uses
/// its window up within the same tick, the next one is twice as large (up to [`MAX_WINDOW`]), so a
/// quiet generator's IDs stay as dense as one-by-one minting's. It holds positions of the clock's own
/// tick only (never ahead of the clock), under the ceiling when it was taken, and each ID it hands out
/// is checked against the ceiling again. The holder's IDs are exactly those it would mint one by one
/// in that tick, in order; across holders, IDs of one tick may interleave (SPEC §2). Anything else the
/// generator does for the holder first closes the window ([`SharedGenerator::close_window`]): the rest
/// goes back to the state word when nothing was taken after it, otherwise it is skipped (and not
/// counted as minted). The IDs a window handed out count in [`Stats::minted`] when it closes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// The tick's first nanosecond (Unix): a reading `r` is in the tick iff `r - start_ns < tick_ns`.
    start_ns: u64,
    tick: u64,
    /// The first position taken; the next one to hand out; the end (exclusive). `next == end`: nothing
    /// left; all three zero: closed (`first < next` while open: its first ID is handed out when taken).
    first: u64,
    next: u64,
    end: u64,
    /// How many positions the last window of this tick asked for.
    size: u64,
}

impl Window {
    /// No positions.
    pub const EMPTY: Window = Window {
        start_ns: 0,
        tick: 0,
        first: 0,
        next: 0,
        end: 0,
        size: 0,
    };

    /// Positions taken and not handed out yet.
    pub fn rest(&self) -> u64 {
        self.end - self.next
    }

    /// Positions handed out.
    fn handed(&self) -> u64 {
        self.next - self.first
    }
}

/// A shared generator's windows: whether it hands IDs out of them, and the credits of its closed
/// windows to [`Stats::minted`] (`closed`: what each handed out, see `SharedCounts::window_credit`).
/// With `std`, each thread keeps one window in a thread-local slot, tagged with the generator's `uid`;
/// the slot holds the tally, so a thread that moves on to another generator (or exits) still credits
/// what its window handed out.
#[cfg(target_has_atomic = "64")]
#[derive(Debug)]
struct Windows {
    ordered: bool,
    #[cfg(all(feature = "std", not(loom)))]
    uid: u64,
    #[cfg(all(feature = "std", not(loom)))]
    closed: std::sync::Arc<core::sync::atomic::AtomicU64>,
    #[cfg(not(all(feature = "std", not(loom))))]
    closed: core::sync::atomic::AtomicU64,
}

#[cfg(target_has_atomic = "64")]
impl Windows {
    fn new() -> Windows {
        #[cfg(all(feature = "std", not(loom)))]
        static UIDS: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);
        Windows {
            ordered: false,
            #[cfg(all(feature = "std", not(loom)))]
            uid: UIDS.fetch_add(1, Ordering::Relaxed),
            closed: Default::default(),
        }
    }

    /// A window closed: its credit, after everything it did to the state word (release: see
    /// `SharedCounts::stats`).
    fn credit(&self, n: u64) {
        credit(&self.closed, n);
    }
}

/// Adds a closed window's credit to a generator's `closed` counter: with release, after the window's
/// swaps on the state word in its holder's order, so a `stats()` reader that sees the credit (acquire)
/// sees them too.
#[cfg(target_has_atomic = "64")]
fn credit(closed: &core::sync::atomic::AtomicU64, n: u64) {
    closed.fetch_add(n, Ordering::Release);
}

/// Each thread's window (see [`Windows`]): the generator it is of and the window, in thread-locals
/// without a destructor (reaching them costs an address computation); the generator's tally of closed
/// windows beside them, whose destructor credits the window when the thread exits.
#[cfg(all(target_has_atomic = "64", feature = "std", not(loom)))]
mod local {
    use super::Window;
    use core::cell::Cell;
    use core::sync::atomic::AtomicU64;
    use std::cell::RefCell;
    use std::sync::Arc;

    std::thread_local! {
        /// The window and the generator it is of, in one thread-local (one address to compute).
        pub(super) static SLOT: Slot = const { Slot::new() };
        static TALLY: Tally = const { Tally(RefCell::new(None)) };
    }

    /// A thread's window, field by field: the hot path reads three fields and writes `next` alone
    /// (copying the whole window in and out of a `Cell` made the optimizer reload it across stores
    /// of different widths, which stalled store forwarding).
    pub(super) struct Slot {
        /// The generator the window is of (0: none).
        pub(super) uid: Cell<u64>,
        pub(super) start_ns: Cell<u64>,
        tick: Cell<u64>,
        first: Cell<u64>,
        pub(super) next: Cell<u64>,
        pub(super) end: Cell<u64>,
        size: Cell<u64>,
    }

    impl Slot {
        const fn new() -> Slot {
            Slot {
                uid: Cell::new(0),
                start_ns: Cell::new(0),
                tick: Cell::new(0),
                first: Cell::new(0),
                next: Cell::new(0),
                end: Cell::new(0),
                size: Cell::new(0),
            }
        }

        pub(super) fn get(&self) -> Window {
            Window {
                start_ns: self.start_ns.get(),
                tick: self.tick.get(),
                first: self.first.get(),
                next: self.next.get(),
                end: self.end.get(),
                size: self.size.get(),
            }
        }

        pub(super) fn set(&self, w: Window) {
            self.start_ns.set(w.start_ns);
            self.tick.set(w.tick);
            self.first.set(w.first);
            self.next.set(w.next);
            self.end.set(w.end);
            self.size.set(w.size);
        }

        fn take(&self) -> Window {
            let w = self.get();
            self.set(Window::EMPTY);
            self.uid.set(0);
            w
        }
    }

    /// The tally of `UID`'s generator.
    struct Tally(RefCell<Option<Arc<AtomicU64>>>);

    impl Drop for Tally {
        fn drop(&mut self) {
            leave(self.0.get_mut().take());
        }
    }

    #[cfg(all(unix, not(miri)))]
    extern "C" {
        fn pthread_atfork(
            prepare: Option<unsafe extern "C" fn()>,
            parent: Option<unsafe extern "C" fn()>,
            child: Option<unsafe extern "C" fn()>,
        ) -> i32;
    }

    /// In a forked child (the one thread there is the one that forked): drops the window inherited
    /// from the parent, whose rest the parent hands out (a state file's word is shared with it). The
    /// child's counters are a copy of the parent's: they get the window's credit as at a close (its
    /// IDs handed out before the fork; the rest skipped), so the child's `minted` is exact too. Only
    /// plain loads and stores and one atomic addition (async-signal-safe): the tally was set up
    /// with the window, and is not borrowed mutably outside `adopt`, which does not fork.
    #[cfg(all(unix, not(miri)))]
    unsafe extern "C" fn forked_child() {
        let w = SLOT.try_with(Slot::take).unwrap_or(Window::EMPTY);
        if w.handed() != 0 {
            let _ = TALLY.try_with(|t| {
                if let Ok(t) = t.0.try_borrow() {
                    if let Some(closed) = t.as_ref() {
                        super::credit(closed, w.handed());
                    }
                }
            });
        }
    }

    /// Leaves the thread's window: its rest is skipped, and what it handed out credited to `closed`
    /// (the tally of the generator it is of).
    fn leave(closed: Option<Arc<AtomicU64>>) {
        let w = SLOT.try_with(Slot::take).unwrap_or(Window::EMPTY);
        if let Some(closed) = closed {
            if w.handed() != 0 {
                super::credit(&closed, w.handed());
            }
        }
    }

    /// Makes the thread's window one of generator `uid` (tally `closed`), leaving the one it had.
    /// During thread exit this does nothing, and the caller mints without a window.
    pub(super) fn adopt(uid: u64, closed: &Arc<AtomicU64>) {
        #[cfg(all(unix, not(miri)))]
        {
            static REGISTERED: std::sync::Once = std::sync::Once::new();
            REGISTERED.call_once(|| {
                // SAFETY: registers a handler that touches only this thread's destructor-free
                // thread-locals (plain stores: async-signal-safe).
                unsafe { pthread_atfork(None, None, Some(forked_child)) };
            });
        }
        let _ = TALLY.try_with(|t| {
            if let Ok(mut t) = t.0.try_borrow_mut() {
                leave(t.replace(closed.clone()));
                SLOT.with(|s| s.uid.set(uid));
            }
        });
    }
}

#[cfg(target_has_atomic = "64")]
fn counts_for<S: StateWord>(state: &S) -> SharedCounts {
    SharedCounts::new(state.exclusive(), state.word().load(Ordering::Relaxed))
}

#[cfg(target_has_atomic = "64")]
impl SharedGenerator<AtomicU64> {
    /// A generator with its own state word.
    pub fn new(layout: Layout, node_id: u64, options: Options) -> Result<Self> {
        let state = AtomicU64::new(0);
        Ok(SharedGenerator {
            rule: Rule::new(layout, node_id, options)?,
            counts: SharedCounts::new(true, 0),
            windows: Windows::new(),
            state,
            ceiling: Unbounded,
        })
    }
}

#[cfg(target_has_atomic = "64")]
impl<S: StateWord> SharedGenerator<S> {
    /// A generator whose state word lives in `state` (e.g. shared memory). The word holds the next free
    /// logical position; zero for a fresh one.
    pub fn with_state(layout: Layout, node_id: u64, options: Options, state: S) -> Result<Self> {
        Ok(SharedGenerator {
            rule: Rule::new(layout, node_id, options)?,
            counts: counts_for(&state),
            windows: Windows::new(),
            state,
            ceiling: Unbounded,
        })
    }
}

#[cfg(target_has_atomic = "64")]
impl<S: StateWord, L: Ceiling> SharedGenerator<S, L> {
    /// A generator that mints only positions below `ceiling`'s limit ([`Ceiling`]), continuing after
    /// the position `state` (its state word: the next free position).
    pub fn with_ceiling(
        layout: Layout,
        node_id: u64,
        options: Options,
        state: S,
        ceiling: L,
    ) -> Result<Self> {
        Ok(SharedGenerator {
            rule: Rule::new(layout, node_id, options)?,
            counts: counts_for(&state),
            windows: Windows::new(),
            state,
            ceiling,
        })
    }

    /// The ceiling.
    pub fn ceiling(&self) -> &L {
        &self.ceiling
    }

    /// Strictly ordered (`true`): every ID takes its own position with one compare-and-swap, so IDs
    /// minted by all threads are ordered as the swaps were. The default (`false`) hands IDs out of
    /// per-thread windows ([`Window`]): each thread's IDs strictly increase, but across threads IDs of
    /// one tick may interleave.
    pub fn ordered(mut self, ordered: bool) -> Self {
        self.windows.ordered = ordered;
        self
    }

    /// Whether this generator is strictly ordered ([`ordered`](Self::ordered)).
    pub fn is_ordered(&self) -> bool {
        self.windows.ordered
    }

    /// Mints one ID from `clock` out of `window` (the caller's: one per thread, or per binding object
    /// that only one thread uses at a time), sleeping with `sleep(ns)` while the policy says wait. The
    /// caller closes the window ([`close_window`](Self::close_window)) before it asks the generator
    /// for anything else, and before it drops the window.
    #[inline]
    pub fn next_id_in<C: Clock + ?Sized>(
        &self,
        window: &mut Window,
        clock: &C,
        sleep: impl FnMut(u64),
    ) -> Result<u64> {
        let mut waited = Waited::default();
        let r = with_clock(
            clock,
            self.rule.window_ns,
            self.rule.policy == Policy::Strict,
            self.snapshot_fn(),
            self.seen_fn(),
            sleep,
            &mut waited,
            #[inline(always)]
            |now, seen| self.window_one(window, now, seen),
        );
        if waited.count != 0 {
            self.note_waits(waited);
        }
        r
    }

    /// [`next_id_in`](Self::next_id_in) up to the point where it would wait: one reading of `clock`,
    /// then the window's next position, or a new window (one compare-and-swap), or the error the
    /// reading proves. `None` where `next_id_in` would sleep or read the clock again (a wait, a reading
    /// to confirm, a backwards step to judge): then `next_id_in` decides from a fresh reading, and
    /// mints exactly what it would have minted had this not been called. Nothing here sleeps or calls
    /// out but the clock: a binding whose window is reached under a lock that a wait releases
    /// (Python's GIL) mints with this while the window stays in place, and takes the window out of
    /// place for `next_id_in`.
    #[inline(always)]
    pub fn try_next_id_in<C: Clock + ?Sized>(
        &self,
        window: &mut Window,
        clock: &C,
    ) -> Option<Result<u64>> {
        // As `with_clock`'s first attempt.
        let snapshot = self.snapshot_fn();
        let strict = self.rule.policy == Policy::Strict;
        let before = if strict { snapshot() } else { 0 };
        let seen = self.seen_fn()();
        let (now, exact) = match clock.now_ns_within(self.rule.window_ns) {
            Ok(reading) => reading,
            Err(e) => return Some(Err(e)),
        };
        if self.in_window(window, now) {
            let p = window.next;
            window.next = p + 1;
            return Some(Ok(self.rule.id(p)));
        }
        self.try_refill(window, now, exact, seen, before)
    }

    /// [`try_next_id_in`](Self::try_next_id_in) when the window has no position for the reading.
    #[cold]
    #[inline(never)]
    fn try_refill(
        &self,
        window: &mut Window,
        now: u64,
        exact: bool,
        seen: u64,
        before: u64,
    ) -> Option<Result<u64>> {
        match self.refill(window, now, seen) {
            Ok(Mint::Ready(id)) => Some(Ok(id)),
            Err(e)
                if exact
                    && (!matches!(e, Error::ClockMovedBackwards { .. })
                        || (self.snapshot_fn())() == before) =>
            {
                Some(Err(e))
            }
            _ => None,
        }
    }

    /// One ID for a reading out of `window`: its next position while the reading is in the window's
    /// tick and under the ceiling; otherwise a new window.
    #[inline(always)]
    fn window_one(&self, w: &mut Window, now_ns: u64, seen: u64) -> Result<Mint<u64>> {
        if self.in_window(w, now_ns) {
            let p = w.next;
            w.next = p + 1;
            return Ok(Mint::Ready(self.rule.id(p)));
        }
        self.refill(w, now_ns, seen)
    }

    /// Whether `w` has a position for a reading: one left, the reading in the window's tick, and the
    /// position under the ceiling (which a lease lowers when it is released, lost or forked away).
    #[inline(always)]
    fn in_window(&self, w: &Window, now_ns: u64) -> bool {
        self.has_position(w.next, w.end, w.start_ns, now_ns)
    }

    /// [`in_window`](Self::in_window) of a window's `next`, `end` and `start_ns`.
    #[inline(always)]
    fn has_position(&self, next: u64, end: u64, start_ns: u64, now_ns: u64) -> bool {
        next < end
            && now_ns.wrapping_sub(start_ns) < self.rule.layout.tick_ns()
            && next < self.ceiling.limit()
    }

    /// Closes `w` and takes a new window for a reading: its first ID. Twice the last one's size when
    /// that one was used up in this same tick, else one position.
    #[cold]
    #[inline(never)]
    fn refill(&self, w: &mut Window, now_ns: u64, seen: u64) -> Result<Mint<u64>> {
        let l = &self.rule.layout;
        let tick = l.tick_at_ns(now_ns)?;
        let upto = if w.end != 0 && w.next == w.end && w.tick == tick {
            (w.size * 2).clamp(1, MAX_WINDOW)
        } else {
            1
        };
        self.close_window(w);
        Ok(match self.reserve_upto(now_ns, tick, 1, upto, seen)? {
            Mint::Ready((first, end)) => {
                if first >> l.sequence_bits() == tick {
                    *w = Window {
                        start_ns: l.tick_start_ns(tick),
                        tick,
                        first,
                        next: first + 1,
                        end,
                        size: upto,
                    };
                }
                // Otherwise a position of a borrowed tick, counted as minted: `w` stays closed.
                Mint::Ready(self.rule.id(first))
            }
            Mint::Wait(ns) => Mint::Wait(ns),
        })
    }

    /// Closes `window`: its rest goes back to the state word if nothing was taken after it, and is
    /// otherwise skipped; either way it is not counted as minted. The IDs it handed out are counted
    /// now.
    pub fn close_window(&self, window: &mut Window) {
        let (handed, rest) = (window.handed(), window.rest());
        if handed != 0 {
            let back = rest != 0
                && self
                    .state
                    .word()
                    .compare_exchange(
                        window.end,
                        window.next,
                        Ordering::Release,
                        Ordering::Relaxed,
                    )
                    .is_ok();
            // After the give-back (release: see `SharedCounts::stats`).
            self.windows
                .credit(self.counts.window_credit(handed, rest, back));
        }
        *window = Window {
            first: 0,
            end: 0,
            next: 0,
            ..*window
        };
    }

    /// Drops `window` as a forked child must drop a window it inherited: its rest is neither handed out
    /// nor given back (the parent, which holds the same window, hands it out; on a state file the word
    /// is the parent's too). The IDs it handed out before the fork are credited as at a close, so the
    /// child's [`Stats::minted`] (a copy of the parent's counters) stays exact.
    pub fn abandon_window(&self, window: &mut Window) {
        let (handed, rest) = (window.handed(), window.rest());
        if handed != 0 {
            self.windows
                .credit(self.counts.window_credit(handed, rest, false));
        }
        *window = Window {
            first: 0,
            end: 0,
            next: 0,
            ..*window
        };
    }

    /// One ID from `clock`: out of this thread's window, or ordered (see [`ordered`](Self::ordered)).
    #[inline(always)]
    fn mint_one_with<C: Clock + ?Sized>(&self, clock: &C, sleep: impl FnMut(u64)) -> Result<u64> {
        #[cfg(all(feature = "std", not(loom)))]
        if !self.windows.ordered {
            let mut waited = Waited::default();
            let r = with_clock(
                clock,
                self.rule.window_ns,
                self.rule.policy == Policy::Strict,
                self.snapshot_fn(),
                self.seen_fn(),
                sleep,
                &mut waited,
                #[inline(always)]
                |now, seen| self.local_one(now, seen),
            );
            if waited.count != 0 {
                self.note_waits(waited);
            }
            return r;
        }
        self.ordered_one_with(clock, sleep)
    }

    /// [`window_one`](Self::window_one) on this thread's window. Nothing here calls out (the clock was
    /// read before), so a clock that mints re-entrantly finds the window as it left it. During thread
    /// exit (the window gone) it mints without one.
    #[cfg(all(feature = "std", not(loom)))]
    #[inline(always)]
    fn local_one(&self, now_ns: u64, seen: u64) -> Result<Mint<u64>> {
        let uid = self.windows.uid;
        // One thread-local access (one address, also where a shared library computes it by a call)
        // in a small closure with a small result: the fast path reads the fields `has_position`
        // needs and writes `next` alone.
        let p = local::SLOT.with(
            #[inline(always)]
            |slot| {
                let p = slot.next.get();
                let ours = slot.uid.get() == uid;
                if ours && self.has_position(p, slot.end.get(), slot.start_ns.get(), now_ns) {
                    slot.next.set(p + 1);
                    Some(p)
                } else {
                    None
                }
            },
        );
        match p {
            Some(p) => Ok(Mint::Ready(self.rule.id(p))),
            None => self.local_refill(now_ns, seen),
        }
    }

    /// [`local_one`](Self::local_one) when this thread's window has no position for the reading:
    /// makes the window this generator's if it is another's, and takes a new one.
    #[cfg(all(feature = "std", not(loom)))]
    #[cold]
    #[inline(never)]
    fn local_refill(&self, now_ns: u64, seen: u64) -> Result<Mint<u64>> {
        let uid = self.windows.uid;
        if local::SLOT.with(|slot| slot.uid.get()) != uid {
            local::adopt(uid, &self.windows.closed);
            if local::SLOT.with(|slot| slot.uid.get()) != uid {
                return self.one_at(now_ns, seen);
            }
        }
        let mut w = local::SLOT.with(local::Slot::get);
        let r = self.refill(&mut w, now_ns, seen);
        local::SLOT.with(|slot| slot.set(w));
        r
    }

    /// Closes the calling thread's window of this generator, if it has one
    /// ([`close_window`](Self::close_window)): before the state word is read as the last position
    /// minted (a lease's release records it), so it is exactly that.
    pub fn close_thread_window(&self) {
        self.close_mine();
    }

    /// Closes this thread's window of this generator, if it has one.
    #[inline(always)]
    fn close_mine(&self) {
        #[cfg(all(feature = "std", not(loom)))]
        if !self.windows.ordered {
            local::SLOT.with(|slot| {
                if slot.uid.get() == self.windows.uid {
                    let mut w = slot.get();
                    self.close_window(&mut w);
                    slot.set(w);
                }
            });
        }
    }

    /// Takes `n` (≥ 1) positions for a clock reading: the first one. `seen`: the last tick seen, loaded
    /// before the reading was taken. (WebAssembly's module has a size budget: there the optimizer, set
    /// for size, decides, and keeps one copy.)
    #[cfg_attr(not(target_family = "wasm"), inline(always))]
    fn reserve(&self, now_ns: u64, n: u64, seen: u64) -> Result<Mint<u64>> {
        let tick = self.rule.layout.tick_at_ns(now_ns)?;
        Ok(match self.reserve_upto(now_ns, tick, n, 0, seen)? {
            Mint::Ready((first, _)) => Mint::Ready(first),
            Mint::Wait(ns) => Mint::Wait(ns),
        })
    }

    /// [`reserve`](Self::reserve) for a reading at `tick`, taking up to `upto` positions instead of
    /// `n` when the first one is in the clock's own tick (a window): more positions of that tick only,
    /// within the layout and the ceiling. Returns the first position and the end (exclusive). Inlined
    /// everywhere: WebAssembly's module (no windows there) keeps one copy, in `reserve`, with the
    /// window's branch folded away.
    #[inline(always)]
    fn reserve_upto(
        &self,
        now_ns: u64,
        tick: u64,
        n: u64,
        upto: u64,
        seen: u64,
    ) -> Result<Mint<(u64, u64)>> {
        self.counts.see(seen, tick);
        let word = self.state.word();
        let mut current = word.load(Ordering::Relaxed);
        loop {
            match self.rule.plan(current, now_ns, tick, n)? {
                Mint::Wait(ns) => return Ok(Mint::Wait(ns)),
                Mint::Ready(mut p) => {
                    let limit = self.ceiling.limit();
                    if p.next > limit {
                        return Err(Error::LeaseLost);
                    }
                    let sb = self.rule.layout.sequence_bits();
                    // A window only in the clock's own tick: a position ahead of it (a borrowed
                    // tick) is minted as one by one, with no window to close.
                    let windowed = upto != 0 && p.first >> sb == tick;
                    if windowed && upto > n {
                        // The rest of the clock's tick, at most `upto` positions: never ahead of the
                        // clock, so within max_ahead and borrowing nothing.
                        let tick_end = (p.first | self.rule.layout.seq_mask())
                            .min(self.rule.layout.max_position())
                            + 1;
                        p.next = (p.first + upto).min(tick_end).min(limit).max(p.next);
                    }
                    let n = p.next - p.first;
                    // Positions passed over to reach the clock's tick (zero on the common path), and
                    // those taken into a window (counted when it closes, as far as handed out).
                    let skip = p.first - current;
                    let held = if windowed { n } else { 0 };
                    self.counts.before_swap(skip, held);
                    // Uniqueness needs only the atomicity of this one read-modify-write. Release on
                    // success: a `stats()` reader that loads the word (acquire) then sees the skip
                    // counted before it (the same locked instruction on x86: free there).
                    match word.compare_exchange_weak(
                        current,
                        p.next,
                        Ordering::Release,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => {
                            if held != 0 {
                                self.counts.window_taken();
                            }
                            self.counts
                                .minted(n - held, borrowed(current, p.next, tick, sb));
                            return Ok(Mint::Ready((p.first, p.next)));
                        }
                        Err(seen) => {
                            self.counts.swap_failed(skip, held);
                            current = seen
                        }
                    }
                }
            }
        }
    }

    /// Takes up to `out.len()` consecutive positions for a clock reading in Unix milliseconds and writes
    /// their IDs to `out`: the IDs [`next_id_at`](Self::next_id_at) would give one by one for readings
    /// in that millisecond, taken ahead so that a host can hand them out without a call per ID while its
    /// clock still reads that millisecond (the WebAssembly package's `nextId()`: a call into the module
    /// costs more than an ID). Only the simple case: the generator is in the reading's tick already, or
    /// ahead of it within `max_ahead`, and the positions stay in the tick it is in. Before the generator
    /// does anything else, the host gives back what it did not hand out
    /// ([`give_back`](Self::give_back)): then the IDs, their order and the statistics are exactly those
    /// of minting one by one. Returns the first position taken and how many IDs it wrote (at least
    /// one), or `None` with nothing changed when the layout's tick is not one millisecond, the state
    /// word is shared, or the reading asks anything else of the generator (a new tick, a step back, a
    /// lease's ceiling, a random start not reached yet, a wait).
    #[doc(hidden)]
    pub fn take_in_tick_ms(&self, now_ms: u64, out: &mut [u64]) -> Option<(u64, usize)> {
        let l = &self.rule.layout;
        if out.is_empty() || l.tick_ns() != 1_000_000 || !self.state.exclusive() {
            return None;
        }
        self.close_mine();
        let tick = now_ms.checked_sub(l.epoch_ms())?;
        let sb = l.sequence_bits();
        let word = self.state.word();
        let current = word.load(Ordering::Relaxed);
        let at = current >> sb;
        let limit = self.ceiling.limit();
        // In the reading's tick or ahead of it within max_ahead (`plan` then starts at `current`), the
        // reading's tick the last one seen (no regression to count), within the layout, at or past the
        // tick's (random) start, and under the ceiling.
        if at < tick
            || at > tick.saturating_add(self.rule.max_ahead_ticks)
            || self.counts.seen() != tick
            || current > l.max_position()
            || current < (tick << sb | self.rule.start(tick))
            || current >= limit
        {
            return None;
        }
        // The last position to take: within the tick `current` is in, the layout and the ceiling.
        let last = (current | l.seq_mask())
            .min(l.max_position())
            .min(limit - 1)
            .min(current + (out.len() as u64 - 1));
        match word.compare_exchange(current, last + 1, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => {
                let n = (last - current + 1) as usize;
                // As in `reserve` (nothing skipped). A tick entered ahead of the clock is entered by
                // the first ID, which the host hands out before it could give anything back.
                self.counts
                    .minted(n as u64, borrowed(current, last + 1, tick, sb));
                self.rule.fill(current, &mut out[..n]);
                Some((current, n))
            }
            Err(_) => None,
        }
    }

    /// Gives back the positions from `first_unused` to `end` (exclusive) of a
    /// [`take_in_tick_ms`](Self::take_in_tick_ms) that left the state at `end` (its first position plus
    /// its count), as if they had never been taken. Returns false, changing nothing, when the state is
    /// no longer at `end`. (Statistics read while positions are out count them as minted: give back
    /// first.)
    #[doc(hidden)]
    pub fn give_back(&self, end: u64, first_unused: u64) -> bool {
        first_unused <= end
            && self
                .state
                .word()
                .compare_exchange(end, first_unused, Ordering::Release, Ordering::Relaxed)
                .is_ok()
    }

    /// What this generator has done since it was built ([`Stats`]). On a state file: this process's
    /// generator only. The calling thread's window closes first. While other threads mint, `minted`
    /// may trail the truth by the requests in flight and by the IDs their open windows handed out
    /// (counted when those close); it is never above the truth, never goes backwards from one call to
    /// the next, and is exact once no other thread holds a window (they close at the thread's next
    /// request of another kind, and when it exits).
    pub fn stats(&self) -> Stats {
        self.close_mine();
        // `closed` is loaded before the word, the word before `counted`: see `SharedCounts::stats`.
        self.counts
            .stats(&|| self.windows.closed.load(Ordering::Acquire), &|| {
                self.state.word().load(Ordering::Acquire)
            })
    }

    /// Whether this generator has handed out any ID, counting the IDs of windows still open in other
    /// threads, which [`stats`](Self::stats) counts only once they close (a pre-fork master asks this
    /// before it gives its lease back as unused).
    pub fn has_minted(&self) -> bool {
        self.counts.took_window() || self.stats().minted > 0
    }

    fn note_batch(&self) {
        self.counts.batch();
    }

    fn note_waits(&self, w: Waited) {
        self.counts.note_waits(w);
    }

    /// The last tick seen, loaded before a clock reading.
    #[inline(always)]
    fn seen_fn(&self) -> impl Fn() -> u64 + '_ {
        || self.counts.seen()
    }

    /// The next free logical position: persist it as a high-water mark.
    pub fn state(&self) -> u64 {
        self.close_mine();
        self.state.word().load(Ordering::Relaxed)
    }

    /// The state word, loaded before a clock reading that is to be judged against it (`strict`).
    #[cfg(not(all(target_family = "wasm", not(target_feature = "atomics"))))]
    #[inline(always)]
    fn snapshot_fn(&self) -> impl Fn() -> u64 + '_ {
        || self.state.word().load(Ordering::Acquire)
    }

    /// WebAssembly without threads: no other thread can mint between this thread's clock reading and
    /// its check (a clock callback that mints re-entrantly does so before its reading is returned), so
    /// every `strict` backwards step it sees is real, as for the plain generator.
    #[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
    #[inline(always)]
    fn snapshot_fn(&self) -> impl Fn() -> u64 + '_ {
        || 0
    }

    /// Continues from a persisted high-water mark (never moves backwards).
    pub fn restore(&self, state: u64) {
        self.close_mine();
        let word = self.state.word();
        let mut current = word.load(Ordering::Relaxed);
        // As a mint that moves to the clock's tick: the positions passed over are not IDs minted.
        while state > current {
            let skip = state - current;
            self.counts.before_swap(skip, 0);
            match word.compare_exchange_weak(current, state, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => {
                    self.counts.swap_failed(skip, 0);
                    current = seen;
                }
            }
        }
    }

    /// What holds the state word (e.g. a [`StateFile`](crate::StateFile)).
    pub fn state_holder(&self) -> &S {
        &self.state
    }
}

#[cfg(target_has_atomic = "64")]
impl<S: StateWord, L: Ceiling> SharedGenerator<S, L> {
    generator_common!();
}
