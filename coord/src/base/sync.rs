//! The synchronisation primitives of the lease (coord/src/lease/), the sequencer handle's lease slot
//! and the generator's current lease (coord/src/sequencer.rs, coord/src/generator/) and the range
//! sequence (coord/src/range/): std's, or under the feature `shuttle` shuttle's, whose scheduler then chooses
//! at every lock, wait, notify, spawn, sleep and access of these atomics which thread runs next (the
//! randomized-scheduler model, coord/tests/shuttle.rs). The lease generator's own words (its state,
//! the lease's ceiling: [`crate::lease::Word`]) stay std atomics, shared with the core's lock-free
//! generator, which has its own loom model (core/tests/loom.rs).

#[cfg(feature = "shuttle")]
pub(crate) use shuttle::sync::{
    atomic::{AtomicBool, AtomicPtr, AtomicU64},
    Condvar, Mutex, MutexGuard, RwLock,
};
#[cfg(feature = "shuttle")]
pub(crate) use shuttle::thread;
#[cfg(not(feature = "shuttle"))]
pub(crate) use std::sync::{
    atomic::{AtomicBool, AtomicPtr, AtomicU64},
    Condvar, Mutex, MutexGuard, RwLock,
};
#[cfg(not(feature = "shuttle"))]
pub(crate) use std::thread;
