//! What a generator has done: IDs minted, batches, ticks borrowed ahead of the clock, waits and clock
//! regressions ([`Stats`], from `stats()` on every generator).
//!
//! Counting must not slow minting down. The plain [`Generator`](crate::Generator) owns its counters
//! (`&mut self`: register-cheap additions). The lock-free [`SharedGenerator`](crate::SharedGenerator)
//! adds no atomic operation to an ordinary mint: it counts only rare events, on their own paths (a move
//! to a new tick, a borrowed tick, a wait, a regression, a batch, a window taken or closed), and
//! *derives* the number of IDs minted from its state word, which already counts positions: minted =
//! positions taken − positions not handed out yet or never, the latter being those passed over when the
//! generator moves to the clock's tick (at most once per tick) and those of its threads' windows
//! (counted when a window is taken, and credited back, as far as they were handed out or returned to
//! the word, when it closes: one atomic addition at each end of a window, none per ID). Where the
//! state word is not the generator's alone (a state file shared by processes, a word a lease keeper
//! raises), the positions do not tell this generator's IDs apart from others', so each request adds
//! its IDs to a counter of the process instead (one atomic add per request; for a window, when it
//! closes).
//!
//! A window's IDs count as minted once it closes (at its thread's next request that needs a new one,
//! any other request of that thread, the thread's exit, or `stats()` on that thread), never before:
//! while windows are open in other threads, `minted` trails the truth by what they handed out, and it
//! is exact once every window is closed.
//!
//! The counting paths are inlined, not calls: a call (or a fence) inside the minting loop makes the
//! optimizer assume the generator's fields may have changed, and reloading them cost more than the
//! counting itself (measured: 9.7 → 16 ns per ID on the shared generator).

/// Counters of one generator since it was built (for a state file: of this process's generator, not of
/// every process sharing the file). Every field only grows (wrapping after 2^64, never in practice).
///
/// ```
/// use snowmint::{Generator, Layout, Mint, Options, Stats};
/// let mut gen = Generator::new(Layout::twitter(), 7, Options::default()).unwrap();
/// let now_ns = 1_700_000_000_000 * 1_000_000;
/// gen.next_id_at(now_ns).unwrap();
/// gen.next_id_at(now_ns - 5_000_000).unwrap(); // the clock stepped back 5 ms
/// let mut buf = [0u64; 3];
/// gen.next_ids_at(now_ns, &mut buf).unwrap();
/// assert_eq!(gen.stats(), Stats { minted: 5, batches: 1, regressions: 1, ..Stats::default() });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stats {
    /// IDs handed out: each single ID, and every ID of each batch.
    pub minted: u64,
    /// Batch requests that minted: calls of the `next_ids*` family with at least one ID (single-ID
    /// calls are not batches).
    pub batches: u64,
    /// Ticks the generator moved to ahead of the clock: each tick entered while the clock reading of the
    /// request was still in an earlier tick (a used-up tick's sequence, or a clock that stepped back,
    /// makes the generator borrow the next tick). A tick is counted once, when it is entered.
    pub borrowed_ticks: u64,
    /// Sleeps the generator took: under the `wait` policy, each time logical time was `max_ahead` ahead
    /// of the clock and the `*_with` / `next_id` methods slept for the time the core asked. (The `*_at`
    /// methods never sleep: a host that drives them sleeps on its own after a
    /// [`Mint::Wait`](crate::Mint::Wait), and a fast path that falls back to the `*_with` methods on
    /// one is not counted twice.)
    pub waits: u64,
    /// The total of those sleeps, in nanoseconds (as asked; a host's sleep may overshoot).
    pub wait_ns: u64,
    /// Clock readings below the last one seen, compared in whole ticks of the layout (a step back
    /// within one tick changes no ID and is not counted). One step back counts once, however many
    /// readings follow below the old time. With several threads, a reading counts only if it is below
    /// the last tick seen *before* it was taken, so a thread that was merely slow never counts; and of
    /// threads that see the same step back, one counts it.
    pub regressions: u64,
}

impl Stats {
    /// The sum of two generators' counters (e.g. of every generator a service runs), field by field,
    /// wrapping.
    pub fn merged(self, other: Stats) -> Stats {
        Stats {
            minted: self.minted.wrapping_add(other.minted),
            batches: self.batches.wrapping_add(other.batches),
            borrowed_ticks: self.borrowed_ticks.wrapping_add(other.borrowed_ticks),
            waits: self.waits.wrapping_add(other.waits),
            wait_ns: self.wait_ns.wrapping_add(other.wait_ns),
            regressions: self.regressions.wrapping_add(other.regressions),
        }
    }
}

/// Sleeps taken inside one `*_with` call, added to the generator's counters when it returns.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Waited {
    pub(crate) count: u64,
    pub(crate) ns: u64,
}

impl Waited {
    #[inline]
    pub(crate) fn add(&mut self, ns: u64) {
        self.count += 1;
        self.ns = self.ns.saturating_add(ns);
    }
}

/// Ticks newly entered ahead of the clock by a request that took positions up to `next - 1`, the state
/// having been `current` (positions before it already taken) and the clock at `clock_tick`.
#[inline(always)]
pub(crate) fn borrowed(current: u64, next: u64, clock_tick: u64, seq_bits: u32) -> u64 {
    let last_tick = (next - 1) >> seq_bits;
    if last_tick <= clock_tick {
        return 0;
    }
    let entered_before = current.saturating_sub(1) >> seq_bits;
    last_tick - entered_before.max(clock_tick).min(last_tick)
}

/// The plain generator's counters.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PlainCounts {
    pub(crate) stats: Stats,
    /// The tick of the last clock reading (0 before the first: no reading is below tick 0).
    pub(crate) last_tick: u64,
}

impl PlainCounts {
    #[inline(always)]
    pub(crate) fn see(&mut self, tick: u64) {
        if tick != self.last_tick {
            self.see_new(tick);
        }
    }

    #[cold]
    #[inline(never)]
    fn see_new(&mut self, tick: u64) {
        if tick < self.last_tick {
            self.stats.regressions += 1;
        }
        self.last_tick = tick;
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn note_borrowed(&mut self, ticks: u64) {
        self.stats.borrowed_ticks += ticks;
    }

    pub(crate) fn note_waits(&mut self, w: Waited) {
        self.stats.waits += w.count;
        self.stats.wait_ns = self.stats.wait_ns.saturating_add(w.ns);
    }
}

#[cfg(target_has_atomic = "64")]
pub(crate) use shared::SharedCounts;

#[cfg(target_has_atomic = "64")]
mod shared {
    use super::{Stats, Waited};
    // Not loom's atomics even under loom: the counters take no part in uniqueness, and leaving them out
    // of the model keeps its state space what it was.
    use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

    /// The shared generator's counters; see the module notes for what is counted where.
    #[derive(Debug)]
    pub(crate) struct SharedCounts {
        /// The state word is this generator's alone: minted is derived from it.
        exclusive: bool,
        /// Exclusive: positions the state word has passed without handing them out (including its
        /// value at construction) and positions taken into windows, added *before* the
        /// compare-and-swap that passes or takes them (and taken back if it fails), so a reader never
        /// sees the word's jump without it. Not exclusive: IDs minted outside windows.
        counted: AtomicU64,
        /// The largest `minted` reported: a reader in the middle of another thread's jump gets a little
        /// less, never more, and this keeps every later report from going below an earlier one.
        reported: AtomicU64,
        /// A window was taken: its IDs may be handed out before any of them counts in `minted`.
        took_window: AtomicBool,
        batches: AtomicU64,
        borrowed: AtomicU64,
        waits: AtomicU64,
        wait_ns: AtomicU64,
        regressions: AtomicU64,
        /// The tick of the latest clock reading.
        last_tick: AtomicU64,
    }

    impl SharedCounts {
        pub(crate) fn new(exclusive: bool, state: u64) -> SharedCounts {
            SharedCounts {
                exclusive,
                counted: AtomicU64::new(if exclusive { state } else { 0 }),
                reported: AtomicU64::new(0),
                took_window: AtomicBool::new(false),
                batches: AtomicU64::new(0),
                borrowed: AtomicU64::new(0),
                waits: AtomicU64::new(0),
                wait_ns: AtomicU64::new(0),
                regressions: AtomicU64::new(0),
                last_tick: AtomicU64::new(0),
            }
        }

        /// The tick of the latest reading, to be loaded before a clock reading is taken.
        #[inline(always)]
        pub(crate) fn seen(&self) -> u64 {
            self.last_tick.load(Relaxed)
        }

        /// A reading at `tick`, taken after `seen` was loaded.
        #[inline(always)]
        pub(crate) fn see(&self, seen: u64, tick: u64) {
            if tick != seen {
                self.see_new(seen, tick);
            }
        }

        #[inline(always)]
        fn see_new(&self, seen: u64, tick: u64) {
            // Only from the value this reading is judged against: a thread whose reading is older than
            // another's newer tick must not move the tick back (nor count that as a regression), and of
            // several threads seeing one step back, the first to move the tick counts it.
            if self
                .last_tick
                .compare_exchange(seen, tick, Relaxed, Relaxed)
                .is_ok()
                && tick < seen
            {
                self.regressions.fetch_add(1, Relaxed);
            }
        }

        /// About to move the state word `skip` positions past the last one taken without minting them,
        /// and to take `held` positions into a window.
        #[inline(always)]
        pub(crate) fn before_swap(&self, skip: u64, held: u64) {
            if skip + held != 0 && self.exclusive {
                self.add_passed(skip + held);
            }
        }

        #[inline(always)]
        fn add_passed(&self, n: u64) {
            // Ordered before the compare-and-swap that follows by that swap's release ordering: a
            // reader that loads the word (acquire) after the swap sees this addition too (the memory
            // model's guarantee, which Miri checks; a relaxed swap relied on x86's locked instructions,
            // which the model does not promise).
            self.counted.fetch_add(n, Relaxed);
        }

        /// The compare-and-swap announced by [`before_swap`](Self::before_swap) failed.
        #[inline(always)]
        pub(crate) fn swap_failed(&self, skip: u64, held: u64) {
            if skip + held != 0 && self.exclusive {
                self.counted.fetch_sub(skip + held, Relaxed);
            }
        }

        /// What a closed window adds to `minted` (the generator's `closed` counter): its positions
        /// handed out, plus, on an exclusive word, the rest if it went back to the word (`given_back`:
        /// the word's drop by the rest then balances it). All its positions were counted as passed
        /// when it was taken (exclusive), or none (not exclusive).
        #[inline(always)]
        pub(crate) fn window_credit(&self, handed: u64, rest: u64, given_back: bool) -> u64 {
            if given_back && self.exclusive {
                handed + rest
            } else {
                handed
            }
        }

        /// A window was taken (once per window; a store only for a generator's first).
        #[inline(always)]
        pub(crate) fn window_taken(&self) {
            if !self.took_window.load(Relaxed) {
                self.took_window.store(true, Release);
            }
        }

        /// Whether a window was ever taken (its IDs count in `minted` only when it closes).
        pub(crate) fn took_window(&self) -> bool {
            self.took_window.load(Acquire)
        }

        /// A request minted `n` IDs, entering `borrowed` ticks ahead of the clock.
        #[inline(always)]
        pub(crate) fn minted(&self, n: u64, borrowed: u64) {
            if n != 0 && !self.exclusive {
                self.counted.fetch_add(n, Relaxed);
            }
            if borrowed != 0 {
                self.add_borrowed(borrowed);
            }
        }

        #[inline(always)]
        fn add_borrowed(&self, ticks: u64) {
            self.borrowed.fetch_add(ticks, Relaxed);
        }

        pub(crate) fn batch(&self) {
            self.batches.fetch_add(1, Relaxed);
        }

        pub(crate) fn note_waits(&self, w: Waited) {
            if w.count != 0 {
                self.waits.fetch_add(w.count, Relaxed);
                self.wait_ns.fetch_add(w.ns, Relaxed);
            }
        }

        /// The counters, given the state word (for a derived `minted`) and the credits of closed
        /// windows (`closed`: see [`window_credit`](Self::window_credit); each added with release
        /// ordering after everything its window did to the word).
        ///
        /// Exclusive: minted = word + closed − counted, and a reader must never get more than the
        /// truth. It loads `closed` first (acquire), then the word (acquire), then `counted`:
        /// - a window's credit seen in `closed` was added after the window's swaps (its take, and its
        ///   give-back if any) in its holder's order, with release: the word loaded after it includes
        ///   them, so a give-back's credit never comes without the word's drop that balances it;
        /// - every swap the word includes was preceded by its addition to `counted` (a skip, a
        ///   window's positions), made visible by the swap's release (all swaps on the word are
        ///   read-modify-writes, so a later swap's value carries them): `counted`, loaded after the
        ///   word, includes it, so a jump of the word never comes without what it passed or took into
        ///   a window.
        ///
        /// Anything else a reader sees is more subtracted (an addition to `counted` whose swap is not
        /// seen, or failed) or less credited (a window whose close is not seen yet: open windows count
        /// none of their positions): below the truth, never above it. `reported` keeps reports from
        /// falling; once every window is closed and no request is in flight, the value is exact.
        pub(crate) fn stats(&self, closed: &impl Fn() -> u64, word: &impl Fn() -> u64) -> Stats {
            let minted = if self.exclusive {
                let closed = closed();
                let state = word();
                let counted = self.counted.load(Relaxed);
                // The word is at most 2^63 (63 bits of positions at most) and `closed` at most the
                // positions ever taken into windows, so their sum never saturates.
                let derived = state.saturating_add(closed).saturating_sub(counted);
                self.reported.fetch_max(derived, Relaxed).max(derived)
            } else {
                self.counted.load(Relaxed).wrapping_add(closed())
            };
            Stats {
                minted,
                batches: self.batches.load(Relaxed),
                borrowed_ticks: self.borrowed.load(Relaxed),
                waits: self.waits.load(Relaxed),
                wait_ns: self.wait_ns.load(Relaxed),
                regressions: self.regressions.load(Relaxed),
            }
        }
    }
}
