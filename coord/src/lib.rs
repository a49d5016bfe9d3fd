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
//!
//! The crate is built in three layers (ARCHITECTURE.md, "coord in layers"; coord/tests/layers.rs
//! checks them): `base/` (the store contract and what every layer shares) ← `stores/` (memory,
//! embedded, etcd, PostgreSQL, TLS, opening a store from its URL) ← the fleet logic here at the top
//! (leases, shared leases, node sources, sequencers, generators, range sequences). A module imports
//! only its own layer and those below. The public paths are this file's re-exports.
#![warn(missing_docs)]

// Layer 0: the base. Layer 1: the stores.
mod base;
mod stores;

// Layer 2: the fleet logic.
pub mod generator;
pub mod lease;
pub mod range;
pub mod sequencer;
pub mod shared_lease;
pub mod source;

// The public paths of the lower layers' modules.
/// The planted defects' one seam (`base/defect.rs`): test machinery, hidden from the documentation.
#[doc(hidden)]
pub use base::defect;
pub use base::{store, time};
#[cfg(feature = "etcd")]
pub use stores::etcd;
#[cfg(feature = "postgres")]
pub use stores::postgres;
pub use stores::{file, memory};

pub use base::error::{redact_secrets, without_urls, Error, Result};
pub use base::layout::{layout_fingerprint, layout_text};
pub use file::FileStore;
pub use generator::{NodeGenerator, Opened, SequencerGenerator};
pub use lease::{Lease, LeaseOptions, LeaseState, DEFAULT_TTL};
pub use memory::MemoryStore;
pub use range::{DatacenterRow, GlobalRow, RangeOptions, RangeSequence, RangeStats};
pub use sequencer::{Sequencer, SequencerState};
pub use source::{NodeSource, StoreUrl};
pub use store::{
    Claim, ClaimRequest, HeldBy, NodeState, Reservation, SequencerConfig, SequencerRecord, Store,
};
pub use time::{OffsetTime, SystemTime, Time};
