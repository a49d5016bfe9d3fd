//! Compact integer IDs by hierarchical range allocation (SPEC §4): a **range sequence** hands out
//! integers of a fixed width (31 bits by default: a signed 32-bit column) from ranges leased by
//! compare-and-set on real stores, global → datacenter → process, each level pre-allocating its next
//! range in the background.
//!
//! # Rows
//!
//! Two kinds of [`Store`] rows (text, changed only by [`Store::swap_row`]):
//!
//! - the **global row** `NAME` on the global store (shared by every datacenter: Cassandra's SERIAL):
//!   `next`, the first value no datacenter has taken, plus the width, the start value and the last
//!   range each datacenter took (for [`RangeSequence::show`]);
//! - a **datacenter row** `NAME@DC` on the datacenter's own store (Cassandra's LOCAL_SERIAL): the
//!   ranges the datacenter holds and has not yet given to a process (in increasing order), `floor` —
//!   one past the last value given to any process of the datacenter — and a *fetch ticket* naming the
//!   process that is moving the next range from the global row (so that a datacenter's processes do
//!   not all fetch at once; the ticket expires, so a process killed while fetching does not block).
//!
//! A process takes `process_range` values from the first range of its datacenter row by one
//! compare-and-set; when what the datacenter row holds falls below the threshold (default 50 % of
//! `dc_range`), the process that noticed takes the ticket, moves `dc_range` values from the global row
//! to its datacenter row (one compare-and-set on each), and clears the ticket.
//!
//! # Why no value is ever handed out twice
//!
//! A value belongs to at most one range at each level: the global row only moves forward (`next` grows
//! by each compare-and-set, and a compare-and-set succeeds once for each value it compares against);
//! a datacenter row's ranges come from the global row, and a process's range is cut from the
//! datacenter row by one compare-and-set that removes it.
//!
//! A write's answer can be lost after the store applied it, and the store client then sends it again
//! (the etcd client after a timeout or "request timed out", the PostgreSQL store after a dropped
//! connection; [`crate::store`]'s re-send rule). Every write carries a fresh nonce (`by=`, 64 random
//! bits per process and a counter): a re-send, or a read-back after an error, that finds the row holding
//! the write's own text knows the write was applied. When the row was changed again by another
//! process in between, the write looks refused although it was applied; what happens then is safe at
//! every step:
//! - a process range or the global range looks not taken, and the next one is taken instead: the
//!   first is a hole;
//! - the fetch ticket looks not taken: it expires;
//! - a range moved from the global row looks not added to the datacenter row, and adding it is tried
//!   again: adding is a no-op when the row holds a range overlapping it (global ranges never overlap,
//!   so that is its own remainder) or the floor is at or past its end (processes took all of it).
//!
//! So a lost answer leaves at worst a hole, never a duplicate. A process killed after taking a range
//! leaves a hole too: a range leaves the row before any of it is used.
//!
//! # Why the values of a process strictly increase
//!
//! Within a range the process hands out values with an atomic cursor. Ranges taken later are higher:
//! every range given to a process of a datacenter starts at or above that datacenter's `floor`, which
//! the same compare-and-set raises to the end of the range given. A range that reaches the datacenter
//! row late (a fetcher whose ticket expired while the global store was slow) is clipped to `floor`, so
//! it can never be handed out below a range already given. A process uses its ranges in the order it
//! took them, so its values increase across ranges too. Values of one datacenter increase in the order
//! processes took their ranges; across datacenters and processes they are only unique.
//!
//! # Partitions
//!
//! With the global store unreachable, a datacenter keeps serving from the ranges in its row (size
//! `dc_range` to carry it through a long partition), and a process opens and mints from it: opening and
//! serving touch only the datacenter's store while its row holds values ([`open_pair`] connects the
//! global store on first use), the global store is needed only to move a new range. With its own store unreachable, a process keeps
//! minting from its current and pre-allocated ranges, then [`next_id`](RangeSequence::next_id) waits
//! at most [`RangeOptions::wait`] for a range and fails with `STORE_UNAVAILABLE`. When the width is used
//! up: `RANGE_EXHAUSTED`.
//!
//! # A fixed process range (no adaptive step)
//!
//! Leaf's segment mode doubles a process's step when a segment lasted under 15 minutes and halves it
//! past 30. We keep `process_range` fixed: in 31 bits values are scarce, and every range a process holds
//! becomes a hole when it restarts (deploys restart every process), so a step that grows with bursts
//! wastes the most exactly when processes churn; and pre-allocation at the threshold already keeps
//! minting off the network as long as one range lasts longer than one round trip to the datacenter's
//! store (1 000 values at 10^6 IDs/s is 1 ms). [`RangeStats::late`] says when a range came late, which
//! is the signal to raise `process_range`.

// The options (`options`); the rows as stored and shown (`rows`); the allocation algorithm over them
// (`allocator`); minting and the handle (`sequence`); opening the stores by URL (`open`); the
// allocator without a thread, for the simulation (`stepped`).
mod allocator;
mod open;
mod options;
mod rows;
mod sequence;
#[cfg(feature = "planted-defects")]
mod stepped;
#[cfg(test)]
mod tests;

#[cfg(doc)]
use crate::base::store::Store;

pub use open::{open_pair, open_pair_through};
pub use options::{RangeOptions, RangeStats};
pub use rows::{DatacenterRow, GlobalRow};
pub use sequence::{RangeSequence, MAX_BATCH};
#[cfg(feature = "planted-defects")]
pub use stepped::SteppedAllocator;
