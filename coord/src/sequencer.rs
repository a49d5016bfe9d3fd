//! Named sequencers (SPEC §3.3, snowcast's lifecycle). Filled in below.

use crate::error::Error;
use crate::store::SequencerConfig;
use snowmint::ErrorCode;

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
