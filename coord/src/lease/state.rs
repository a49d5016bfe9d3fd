//! The state of a lease, and its encoding in the lease's state word.

/// The state of a lease (a sequencer handle adds `Detached` by having none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaseState {
    /// The claim is held and kept.
    Held,
    /// The claim was lost (or released): minting stops at the ceiling.
    Lost,
    /// The sequencer was destroyed: minting fails with `SEQUENCER_DESTROYED`.
    Destroyed,
}

pub(super) const HELD: u64 = 0;

pub(super) const LOST: u64 = 1;

pub(super) const DESTROYED: u64 = 2;
