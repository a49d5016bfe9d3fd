//! # snowmint-service
//!
//! The ID service of SPEC §6a (`snowmint serve`): batches of IDs with a validity for clients that do not
//! hold a node ID (Hazelcast's `prefetchCount` / `prefetchValidityMillis`), node-ID leases for clients
//! that mint locally (browsers, offline pages), `/healthz` and Prometheus `/metrics`, over HTTP/1.1.
//!
//! The protocol lives in one function, [`Service::handle`]: method, path with query, body in; status,
//! headers, body out. The HTTP server ([`server`]), the tests, the fuzz target and the bench all go
//! through it. It never panics across a request (a panic becomes `500 PANIC`), and it never blocks on a
//! store unless [`Route::blocks`] says so (the server then runs it on a blocking thread).
#![warn(missing_docs)]

mod api;
mod config;
pub mod deadline;
mod guard;
mod handle;
mod json;
mod leases;
mod metrics;
mod route;
pub mod server;
mod service;
mod simulated;
pub mod slots;
pub mod source;

pub use api::*;
pub use config::*;
pub use route::*;
pub use service::*;
use simulated::*;

// The imports the crate's files share: each file takes them, and its siblings' items, with
// `use super::*`.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use snowmint::{ErrorCode, Layout, Options, Policy};
use snowmint_coord::source::{open_store, StoreOpener};
use snowmint_coord::{
    LeaseOptions, LeaseState, NodeGenerator, NodeSource, Store, SystemTime, Time,
};

pub use guard::{judged_header, ClientKey, Head, Tokens};
pub use leases::{default_unauthenticated_share, LeaseToken, TokenKey};
