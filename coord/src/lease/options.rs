//! How a lease is kept: its options and their defaults.

use std::path::PathBuf;
use std::time::Duration;

#[cfg(doc)]
use super::handle::Lease;
use crate::base::defect::Hook;
#[cfg(doc)]
use crate::base::store::Store;
use crate::base::url::DEFAULT_TTL;

/// How often a claim that waits for a node ID ([`LeaseOptions::wait_for_node`]) asks the store again.
pub const NODE_WAIT_POLL: Duration = Duration::from_millis(100);

/// How a lease is kept.
#[derive(Clone, Debug)]
pub struct LeaseOptions {
    /// Claim time-to-live (at least 1 ms). The claim is renewed every `ttl / 3` at most.
    pub ttl: Duration,
    /// How far ahead of the clock the reservation is kept (default: 4 s, capped at half of the
    /// generator's `max_ahead`, at least 3 renewal rounds).
    pub reserve_ahead: Duration,
    /// Under the `wait` policy, how long a mint at the ceiling waits for the keeper to raise it before
    /// failing with `LEASE_LOST` (default: the TTL).
    pub wait_bound: Option<Duration>,
    /// Who holds the claim, as [`Store::holders`] shows it (default `pid N on HOST`).
    pub holder: String,
    /// No keeper thread: the caller runs each keeper round with [`Lease::keeper_round`] (a deterministic
    /// simulation decides when rounds happen). Default `false`. (The simulation's and the tests' entry
    /// point: hidden from the documentation.)
    #[doc(hidden)]
    pub stepped: bool,
    /// Claim exactly this node ID (a process configured with a fixed node ID that takes part in a
    /// sequencer's node-ID space, such as `snowmint serve --node N --leases URL`): refused with
    /// `NODE_IDS_EXHAUSTED` while another holder has it. Default `None`: any free node ID.
    pub node: Option<u64>,
    /// Share the lease with every process of the host that opens the same state file (`state_file=` /
    /// `stateFile` in the bindings): the first claims a node ID and records it in the file; the others
    /// mint from the file under that node ID; the lease is kept while any of them lives and released
    /// by the last one (see [`crate::shared_lease`] and the module docs). Default `None`: this process's
    /// own lease.
    pub state_file: Option<PathBuf>,
    /// How long a claim waits for a node ID to come free when all are held (`?wait=30s` in a lease
    /// source; the bindings' `wait_for_node_ms` / `waitForNodeMs`). Default zero: `NODE_IDS_EXHAUSTED`
    /// at once. The claim is tried again every [`NODE_WAIT_POLL`] (sooner at the bound); the error after
    /// the bound says when the earliest held claim expires.
    pub wait_for_node: Duration,
    /// A defect planted on purpose, so the simulator can prove it catches it (only with the feature
    /// `planted-defects`, for the simulation's own tests; zero-sized and never on without it).
    #[doc(hidden)]
    pub defect: Hook,
}

impl Default for LeaseOptions {
    fn default() -> Self {
        LeaseOptions {
            ttl: DEFAULT_TTL,
            reserve_ahead: Duration::from_secs(4),
            wait_bound: None,
            holder: default_holder(),
            stepped: false,
            node: None,
            state_file: None,
            wait_for_node: Duration::ZERO,
            defect: Hook::NONE,
        }
    }
}

/// `pid N on HOST`.
pub fn default_holder() -> String {
    format!(
        "pid {} on {}",
        std::process::id(),
        crate::base::hostname::hostname().unwrap_or_else(|| "?".into())
    )
}
