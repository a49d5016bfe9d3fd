//! What the server stores (etcd, PostgreSQL) share.

use crate::base::error::{Error, Result};
use crate::base::store::{SequencerConfig, SequencerRecord};

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
                    crate::base::store_errors::conflict(name, &existing.config, config)
                        .context(store),
                )
            }
            Created::Exists(None) => {}
        }
    }
    Err(Error::unavailable(format!(
        "{store}: sequencer {name} was created and destroyed concurrently too many times"
    )))
}

/// How many times one request is sent at most: the first send and one re-send. (Three sends took the
/// simulation's range world (`sim/src/worlds/ranges.rs`, PostgreSQL, seed 16) to a process that could
/// not open from its datacenter row, each failed call costing three timeouts; two measured the same
/// liveness.)
pub(crate) const SENDS: u32 = 2;

/// When a server store sends a request again after its answer timed out or its connection broke
/// (the re-send rule of [`crate::store`]: every write is safe so). Answers that are held back or lost
/// now and then (a congested link, a proxy or a member that drops some) then cost a re-send, not the
/// call: with a share `p` of answers faulted independently, a call fails with about `p²`, not `p`, so
/// a claim (several calls in a row) and a keeper round still succeed. At most [`SENDS`] sends, and no
/// new one once `budget` has passed since the call began (so a server that is down or stopped fails
/// a call within the budget and one more send's timeouts).
#[derive(Debug)]
pub(crate) struct Resend {
    began: std::time::Instant,
    budget: std::time::Duration,
    sent: u32,
}

impl Resend {
    /// A call beginning now, re-sending within `budget`.
    pub(crate) fn new(budget: std::time::Duration) -> Resend {
        Resend {
            began: std::time::Instant::now(),
            budget,
            sent: 0,
        }
    }

    /// Whether the budget has not passed yet (a send may still begin).
    pub(crate) fn in_budget(&self) -> bool {
        self.began.elapsed() < self.budget
    }

    /// Counts a send that failed (timed out, or its connection broke); `true` if the request may be
    /// sent again.
    pub(crate) fn again(&mut self) -> bool {
        self.sent += 1;
        self.sent < SENDS && self.began.elapsed() < self.budget
    }
}

/// The shortest wait for a call's first answer ([`first_answer_timeout`]).
const FIRST_ANSWER_MIN: std::time::Duration = std::time::Duration::from_millis(250);

/// How long a call's first send waits for its answer: a quarter of the answer `timeout`, at least
/// [`FIRST_ANSWER_MIN`] (never more than `timeout`). An answer that has not come by then is more
/// likely held back (a congested link, a proxy, a connection behind a late answer) than slow, and a
/// re-send on another connection, which waits the whole timeout, costs less than waiting it out (a
/// slow server still answers the re-send; the first send may have been applied too, which every
/// write allows: the re-send rule of [`crate::store`]). With answers held back 3 s, a held first
/// answer then costs 0.5 s, not 2 s.
pub(crate) fn first_answer_timeout(timeout: std::time::Duration) -> std::time::Duration {
    (timeout / 4).max(FIRST_ANSWER_MIN).min(timeout)
}
