//! What the server stores (etcd, PostgreSQL) share.

use crate::error::{Error, Result};
use crate::store::{SequencerConfig, SequencerRecord};

/// The outcome of one "create if absent" attempt on a server.
pub(crate) enum Created {
    /// The record was created.
    New(SequencerRecord),
    /// The name was taken: the record found (`None` if it was destroyed since).
    Exists(Option<SequencerRecord>),
}

/// [`crate::Store::create_sequencer`] over one "create if absent" `attempt`: an existing record with the
/// same configuration is returned, another configuration is `SEQUENCER_CONFLICT`, and a record destroyed
/// between the attempt and its read is tried again (a bounded number of times).
pub(crate) fn create_or_existing(
    store: &str,
    name: &str,
    config: &SequencerConfig,
    mut attempt: impl FnMut() -> Result<Created>,
) -> Result<SequencerRecord> {
    for _ in 0..8 {
        match attempt()? {
            Created::New(record) => return Ok(record),
            Created::Exists(Some(existing)) if existing.config == *config => return Ok(existing),
            Created::Exists(Some(existing)) => {
                return Err(
                    crate::sequencer::conflict(name, &existing.config, config).context(store)
                )
            }
            Created::Exists(None) => {}
        }
    }
    Err(Error::unavailable(format!(
        "{store}: sequencer {name} was created and destroyed concurrently too many times"
    )))
}
