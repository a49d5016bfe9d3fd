//! The plain generator ([`Generator`]): owned by one thread (`&mut self`), no atomics, every target.

use super::*;

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
