//! The shared generator ([`SharedGenerator`]): lock-free, `&self`, one compare-and-swap per window of
//! positions; its state word ([`StateWord`]), its ceiling ([`Ceiling`]) and the windows of its holders.
//! Everything here needs 64-bit atomics: the module is compiled where the target has them
//! (`generator.rs`: one `cfg`).

use super::*;

/// Holder of a shared generator's state word: the generator's own [`AtomicU64`], or one that lives
/// elsewhere (a reference into memory the caller provides, such as a memory-mapped file).
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

#[cfg(not(loom))]
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};

impl StateWord for AtomicU64 {
    fn word(&self) -> &AtomicU64 {
        self
    }

    fn exclusive(&self) -> bool {
        true
    }
}

impl StateWord for &AtomicU64 {
    fn word(&self) -> &AtomicU64 {
        self
    }
}

#[cfg(feature = "std")]
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
pub trait Ceiling {
    /// The first logical position that may not be minted.
    fn limit(&self) -> u64;
}

/// No ceiling: every position may be minted (the check compiles away).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unbounded;

impl Ceiling for Unbounded {
    #[inline(always)]
    fn limit(&self) -> u64 {
        u64::MAX
    }
}

/// A ceiling another thread raises (a lease keeper): the limit is the word's value.
impl Ceiling for AtomicU64 {
    #[inline(always)]
    fn limit(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }
}

#[cfg(feature = "std")]
impl Ceiling for std::sync::Arc<AtomicU64> {
    #[inline(always)]
    fn limit(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }
}

use crate::stats::SharedCounts;

/// A shared generator's windows: whether it hands IDs out of them, and the credits of its closed
/// windows to [`Stats::minted`] (`closed`: what each handed out, see `SharedCounts::window_credit`).
/// With `std`, each thread keeps one window in a thread-local slot, tagged with the generator's `uid`;
/// the slot holds the tally, so a thread that moves on to another generator (or exits) still credits
/// what its window handed out.
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
fn credit(closed: &core::sync::atomic::AtomicU64, n: u64) {
    closed.fetch_add(n, Ordering::Release);
}

/// Each thread's window (`local.rs`).
#[cfg(all(feature = "std", not(loom)))]
mod local;

fn counts_for<S: StateWord>(state: &S) -> SharedCounts {
    SharedCounts::new(state.exclusive(), state.word().load(Ordering::Relaxed))
}

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

impl<S: StateWord, L: Ceiling> SharedGenerator<S, L> {
    generator_common!();
}
