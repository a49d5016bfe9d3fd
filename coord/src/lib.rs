//! # snowmint-coord
//!
//! Node identity for fleets of ID generators (SPEC §3): node sources, node-ID leases whose reservations
//! make two holders of one node ID never mint the same ID, and named sequencers (snowcast's lifecycle),
//! on an embedded store (a directory on this host), etcd or PostgreSQL; and compact 32-bit IDs by
//! hierarchical range allocation (SPEC §4, [`range`]) on the same stores.
//!
//! The algorithm is written once against the [`Store`] trait with an injected clock ([`Time`]); the
//! core crate `snowmint` stays `#![no_std]` and knows only one hook of it: a ceiling on the logical
//! positions a generator may mint.
#![warn(missing_docs)]

/// Whether the planted defect `$d` ([`crate::lease::Defect`]) is on this store: always `false` without the
/// feature `planted-defects`.
#[allow(unused_macros)] // used by the server stores only
macro_rules! planted {
    ($store:expr, $d:ident) => {{
        #[cfg(feature = "planted-defects")]
        let on = $store.defect == crate::lease::Defect::$d;
        #[cfg(not(feature = "planted-defects"))]
        let on = false;
        on
    }};
}

mod error;
// The server stores (`etcd`, `postgres`) and what only they use (`remote`: re-sends and answer
// timeouts; `process_local`: nothing of a parent process used after a fork; `tls`) are declared below,
// each behind its feature; `source::open_store` dispatches to their `open` functions.
pub mod file;
pub mod generator;
pub mod lease;
mod lock_sections;
pub mod memory;
pub mod range;
pub mod sequencer;
pub mod shared_lease;
pub mod source;
pub mod store;
mod sync;
pub mod time;

#[cfg(feature = "etcd")]
pub mod etcd;
mod lazy;
mod nonce;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(any(feature = "etcd", feature = "postgres"))]
mod process_local;
#[cfg(any(feature = "etcd", feature = "postgres"))]
mod remote;
#[cfg(feature = "tls")]
mod tls;

pub use error::{redact_secrets, without_urls, Error, Result};
pub use file::FileStore;
pub use generator::{Opened, SequencerGenerator};
pub use lease::{Lease, LeaseOptions, LeaseState, DEFAULT_TTL};
pub use memory::MemoryStore;
pub use range::{DatacenterRow, GlobalRow, RangeOptions, RangeSequence, RangeStats};
pub use sequencer::{NodeGenerator, Sequencer, SequencerState};
pub use source::{NodeSource, StoreUrl};
pub use store::{
    Claim, ClaimRequest, HeldBy, NodeState, Reservation, SequencerConfig, SequencerRecord, Store,
};
pub use time::{OffsetTime, SystemTime, Time};

use snowmint::Layout;

/// The canonical text form of a layout, as sequencer configurations store and compare it.
///
/// ```
/// let text = snowmint_coord::layout_text(&snowmint::Layout::twitter());
/// assert_eq!(text, "v1;ts=41;node=10;seq=12;order=timestamp_node_sequence;tick_ns=1000000;epoch_ms=1288834974657;offset=0;sign=false;split=5");
/// ```
pub fn layout_text(layout: &Layout) -> String {
    let c = layout.config();
    format!(
        "v1;ts={};node={};seq={};order={};tick_ns={};epoch_ms={};offset={};sign={};split={}",
        c.timestamp_bits,
        c.node_bits,
        c.sequence_bits,
        c.order.name(),
        c.tick_ns,
        c.epoch_ms,
        c.node_id_offset,
        c.use_sign_bit,
        c.node_split_bits
    )
}

/// A 63-bit fingerprint of a layout (FNV-1a of [`layout_text`], top bit clear so that it fits a signed
/// 64-bit column): reservations name the layout their position is in.
pub fn layout_fingerprint(layout: &Layout) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in layout_text(layout).bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h & (u64::MAX >> 1)
}
