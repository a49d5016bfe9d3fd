//! The lease algorithm (SPEC §3.2), written once over [`Store`] and [`Time`].
//!
//! - **Claim**: the store takes a free node ID of the sequencer (`NODE_IDS_EXHAUSTED` when all are held,
//!   saying when the earliest held claim expires; [`LeaseOptions::wait_for_node`] asks again every
//!   [`NODE_WAIT_POLL`] up to that bound first).
//! - **Start**: the new holder reads the node ID's persisted reservation and starts strictly after it
//!   (after its position under the same layout, and after the ticks it covers in time under any layout),
//!   and at or above the sequencer's value floor (the IDs of destroyed incarnations of its name,
//!   [`crate::store`]).
//! - **Reserve, then mint**: the generator's [`Ceiling`](snowmint::Ceiling) is the first position it may
//!   not mint. It is raised only after the store acknowledged a reservation up to it, written on the
//!   condition that the claim is still held (fencing token). So whatever a holder mints was durably
//!   reserved while it held the claim, and a later holder starts past it: two holders of one node ID never
//!   mint the same ID, whatever their clocks say, however long one of them was paused.
//! - **Keeper**: a thread renews the claim every `ttl / 3` (or more often, see [`LeaseOptions`]) and
//!   extends the reservation a few seconds ahead of the clock. When the claim is lost (expired, taken, the
//!   store unreachable past the claim's TTL) it stops: the generator runs up to its ceiling, then fails
//!   with `LEASE_LOST` (or, under the `wait` policy, waits a bounded time for an extension first). A
//!   holder whose claim is still held but who reaches its ceiling (a burst faster than the keeper extends)
//!   waits for the extension under `wait`, and gets `TOO_FAR_AHEAD` (retry shortly) under `fail`, as a
//!   generator past `max_ahead` does.
//! - **Batches past the ceiling**: a mint that needs more than the ceiling allows (a batch larger than
//!   the keeper's reservation step) tells the keeper the position its request ends at. The keeper
//!   reserves `reserve_ahead` past the later of the clock, the generator and that end, in one write
//!   conditioned on the claim (only that write: no renewal round), and raises the ceiling once the store
//!   acknowledged it; the mint then succeeds (under `wait` it waits for it, at most `wait_bound`, by
//!   default the TTL; under `fail` its retry does). What the request may need is bounded by `max_ahead`:
//!   a batch the generator could never mint (more IDs than `max_ahead` holds) fails with the core's
//!   `INVALID_ARGUMENT` before any reservation is asked for.
//! - **One lease per host** ([`LeaseOptions::state_file`], [`crate::shared_lease`]): the processes that
//!   open one state file share one claim. The ceiling, the state, the renewal deadline and the wanted end
//!   live in the file's lease words ([`Word`]) and the generator mints from the file's state word, so the
//!   code above runs unchanged on them; the keeper runs in the process holding the file's keeper lock,
//!   and another process takes it over (adopting the same claim, [`Store::adopt`]) when that one exits or
//!   is killed. The first process claims (and starts after the reservation before it records the claim
//!   in the file), the others adopt, the last one releases. A forked child keeps none of it: its
//!   ceiling is capped at zero ([`LeaseCeiling`]) and it lets go of the parent's locks.
//! - **Sequencer destroyed**: the keeper checks the sequencer's record on every round; once it is gone
//!   (or re-created: another incarnation), the ceiling drops to zero and every mint fails with
//!   `SEQUENCER_DESTROYED`, forever.

// The lease handle (`handle`); how it is kept (`options`), its `state` and the `word`s its generator mints
// under; what its keeper and minting side share (`shared`); where a holder starts (`position`);
// acquiring it (`acquire`: `claim`ing a node ID, or `join`ing a shared lease); the `keeper`; minting
// (`mint`); `release`; and what a fork does to it (`forks`).
mod acquire;
mod claim;
mod forks;
mod handle;
mod join;
mod keeper;
mod mint;
mod options;
mod position;
mod release;
mod shared;
mod state;
mod word;

#[cfg(doc)]
use crate::base::store::Store;
#[cfg(doc)]
use crate::base::time::Time;

pub use handle::Lease;
pub use options::{default_holder, LeaseOptions, NODE_WAIT_POLL};
pub use position::{
    bound_reaches_in_ns, reservation_for, start_after, start_after_ns, unknown_history_start,
};
pub use state::LeaseState;
pub use word::{CeiledGenerator, LeaseCeiling, Word};

// The public path of the default TTL this module used to hold. (The planted defects' type, which it
// held too, is `crate::defect::Defect`.)
pub use crate::base::url::DEFAULT_TTL;
