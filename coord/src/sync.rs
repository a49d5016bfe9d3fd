//! The lease's synchronisation primitives (coord/src/lease.rs): std's, or under the feature `shuttle`
//! shuttle's, whose scheduler then chooses at every lock, wait, notify and access of these atomics
//! which thread runs next (the randomized-scheduler model, coord/tests/shuttle.rs). The generator's
//! own words (its state, the lease's ceiling: [`crate::lease::Word`]) stay std atomics, shared with the
//! core's lock-free generator, which has its own loom model (core/tests/loom.rs).

#[cfg(feature = "shuttle")]
pub(crate) use shuttle::sync::{
    atomic::{AtomicBool, AtomicU64},
    Condvar, Mutex,
};
#[cfg(not(feature = "shuttle"))]
pub(crate) use std::sync::{
    atomic::{AtomicBool, AtomicU64},
    Condvar, Mutex,
};
