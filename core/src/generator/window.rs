//! A window ([`Window`]): positions of one tick taken ahead with one compare-and-swap and handed out one
//! by one by their holder.

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
///
/// [`SharedGenerator::next_id_in`]: crate::SharedGenerator::next_id_in
/// [`SharedGenerator::close_window`]: crate::SharedGenerator::close_window
/// [`Stats::minted`]: crate::Stats::minted
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// The tick's first nanosecond (Unix): a reading `r` is in the tick iff `r - start_ns < tick_ns`.
    pub(super) start_ns: u64,
    pub(super) tick: u64,
    /// The first position taken; the next one to hand out; the end (exclusive). `next == end`: nothing
    /// left; all three zero: closed (`first < next` while open: its first ID is handed out when taken).
    pub(super) first: u64,
    pub(super) next: u64,
    pub(super) end: u64,
    /// How many positions the last window of this tick asked for.
    pub(super) size: u64,
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
    pub(super) fn handed(&self) -> u64 {
        self.next - self.first
    }
}
