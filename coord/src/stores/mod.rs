//! Layer 1, the stores: each implements [`crate::store::Store`] and imports only the base (and what
//! only the stores share: `remote`, re-sends and answer timeouts; `process_local`, nothing of a parent
//! process used after a fork; `tls`). [`open`] opens one from its URL. coord/tests/layers.rs checks
//! that nothing here imports the fleet logic above.

#[cfg(feature = "etcd")]
pub mod etcd;
pub mod file;
pub mod lazy;
pub mod memory;
pub mod open;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(any(feature = "etcd", feature = "postgres"))]
pub mod process_local;
#[cfg(any(feature = "etcd", feature = "postgres"))]
pub mod remote;
#[cfg(feature = "tls")]
pub mod tls;
