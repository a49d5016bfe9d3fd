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

/// The state word of a shared state file while a process claims under its join lock (no lease is live
/// under the file then: its token is 0, or the record was written a moment before the state goes
/// [`HELD`]). Found by the next process to take the join lock, it says that the claimer died
/// mid-claim: its claim may be live at the store until its TTL runs out
/// ([`super::join::Joined::Claim`]'s `orphan`).
pub(super) const CLAIMING: u64 = 3;
