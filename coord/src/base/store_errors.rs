//! The refusals every store words alike: a sequencer that exists with another configuration, a
//! claim of a destroyed incarnation, a claim that is no longer held.

use snowmint::ErrorCode;

use crate::base::error::Error;
use crate::base::store::{Claim, SequencerConfig};

/// `SEQUENCER_CONFLICT`: `name` exists with `existing`, not `wanted`.
pub(crate) fn conflict(name: &str, existing: &SequencerConfig, wanted: &SequencerConfig) -> Error {
    Error::new(
        ErrorCode::SequencerConflict,
        format!(
            "sequencer {name:?} exists with another configuration: {} nodes, layout {}; asked for {} nodes, layout {}",
            existing.nodes, existing.layout, wanted.nodes, wanted.layout
        ),
    )
}

/// `SEQUENCER_DESTROYED` for a claim of an incarnation that is no longer the live record.
pub(crate) fn not_live(store: &str, name: &str, incarnation: u64) -> crate::base::error::Error {
    crate::base::error::Error::new(
        snowmint::ErrorCode::SequencerDestroyed,
        format!("{store}: sequencer {name:?} (incarnation {incarnation}) was destroyed; nothing was claimed"),
    )
}

/// `LEASE_LOST` for a claim that is no longer the current one.
pub(crate) fn lost(claim: &Claim) -> Error {
    Error::new(
        ErrorCode::LeaseLost,
        format!(
            "the claim on node ID {} of sequencer {:?} (fencing token {}) is no longer held",
            claim.node_id, claim.sequencer, claim.token
        ),
    )
}
