//! Value floors (SPEC §3.3; [`crate::store`], "Value floor", which computes the floor a destroy
//! leaves): where a holder of a re-created sequencer may start above it.

use snowmint::{ErrorCode, Layout};

use crate::base::error::{Error, Result};
use crate::base::layout::layout_text;
use crate::base::store::{first_tick_at_or_above, SequencerRecord};

/// The first position a holder of `record` may mint under `layout`: every ID from it on is at or above
/// the record's floor. `SEQUENCER_CONFLICT` if the layout has no such tick.
pub fn floor_position(record: &SequencerRecord, layout: &Layout) -> Result<u64> {
    if record.floor == 0 {
        return Ok(0);
    }
    first_tick_at_or_above(layout, record.floor)
        .map(|t| t << layout.sequence_bits())
        .ok_or_else(|| {
            Error::new(
                ErrorCode::SequencerConflict,
                format!(
                    "sequencer {:?}: an earlier incarnation of this name may have minted IDs up to {}; layout {} mints no ID above that, so this sequencer would repeat them",
                    record.name,
                    record.floor,
                    layout_text(layout)
                ),
            )
        })
}

/// [`floor_position`], checked: `SEQUENCER_CONFLICT` if its tick begins more than `max_ahead_ns` after
/// `now_ns` (a holder would wait that long, or fail, before its first ID).
pub fn floor_start(
    record: &SequencerRecord,
    layout: &Layout,
    now_ns: u64,
    max_ahead_ns: u64,
) -> Result<u64> {
    let position = floor_position(record, layout)?;
    let start = position >> layout.sequence_bits();
    let start_ns = layout
        .epoch_ns()
        .saturating_add(start.saturating_mul(layout.tick_ns()));
    if start_ns > now_ns.saturating_add(max_ahead_ns) {
        return Err(Error::new(
            ErrorCode::SequencerConflict,
            format!(
                "sequencer {:?}: an earlier incarnation of this name may have minted IDs up to {}; under layout {} the first ID above that is minted at Unix ms {}, {} ms from now, beyond max_ahead ({} ms): it would repeat them. Use a later epoch (or wait), or another name",
                record.name,
                record.floor,
                layout_text(layout),
                start_ns / 1_000_000,
                (start_ns - now_ns) / 1_000_000,
                max_ahead_ns / 1_000_000
            ),
        ));
    }
    Ok(position)
}
