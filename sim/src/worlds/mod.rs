//! The worlds, one file each (the runner's `Sim` names them).

pub(crate) mod embedded;
pub(crate) mod hosts;
pub(crate) mod leases;
pub(crate) mod ranges;
pub(crate) mod service;
pub(crate) mod shared_lease;
pub(crate) mod state_file;
pub(crate) mod windows;
