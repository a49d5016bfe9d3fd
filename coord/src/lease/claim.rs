//! Claiming a node ID: waiting for one to come free, and the `NODE_IDS_EXHAUSTED` that says when one
//! will.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use snowmint::ErrorCode;

use crate::base::error::{Error, Result};
use crate::base::store::{Claim, ClaimRequest, SequencerRecord, Store};
use crate::base::time::Time;

use super::options::{LeaseOptions, NODE_WAIT_POLL};
use super::shared::{deadline_after, duration_ms, ms};

/// Claims a node ID for `record` (the one [`LeaseOptions::node`] names, or any from `start` on), asking
/// the store again every [`NODE_WAIT_POLL`] for up to [`LeaseOptions::wait_for_node`] while all are
/// held; then `NODE_IDS_EXHAUSTED`, saying when the earliest held claim expires and how to wait.
pub(super) fn claim_waiting(
    store: &dyn Store,
    time: &dyn Time,
    record: &SequencerRecord,
    lease: &LeaseOptions,
    start: u64,
    ttl_ms: u64,
) -> Result<Claim> {
    let nodes = record.config.nodes;
    let deadline = deadline_after(time, lease.wait_for_node);
    loop {
        let claim = store.claim(&ClaimRequest {
            sequencer: &record.name,
            incarnation: record.incarnation,
            nodes,
            start,
            ttl_ms,
            holder: &lease.holder,
            now_unix_ms: ms(time.unix_ns()),
        })?;
        match (claim, lease.node) {
            (Some(c), Some(n)) if c.node_id != n => {
                let _ = store.release(&c);
            }
            (Some(c), _) => return Ok(c),
            (None, _) => {}
        }
        let now = time.monotonic_ns();
        if now >= deadline || lease.stepped {
            return Err(exhausted(store, time, record, lease));
        }
        let left = Duration::from_nanos(deadline - now);
        std::thread::sleep(left.min(NODE_WAIT_POLL));
    }
}

/// `NODE_IDS_EXHAUSTED` for `record`: which node IDs are held, when the earliest held claim expires
/// unless renewed (as the store reports its holders), and how to wait for one.
pub(super) fn exhausted(
    store: &dyn Store,
    time: &dyn Time,
    record: &SequencerRecord,
    lease: &LeaseOptions,
) -> Error {
    let nodes = record.config.nodes;
    let now_ms = ms(time.unix_ns());
    let which = match lease.node {
        Some(n) => format!("node ID {n} of sequencer {:?} is held", record.name),
        None => format!(
            "all {nodes} node IDs of sequencer {:?} are held",
            record.name
        ),
    };
    let earliest = store.holders(&record.name, now_ms).ok().and_then(|h| {
        h.into_iter()
            .filter(|s| lease.node.is_none_or(|n| n == s.node_id))
            .filter_map(|s| s.claim.map(|c| (c.expires_unix_ms, s.node_id)))
            .min()
    });
    let when = match earliest {
        Some((at, node)) => format!(
            "; the earliest held claim (node ID {node}) expires at {} (in {} ms) unless its holder renews it",
            snowmint::IsoTime::from_unix_ms(at).to_buf().as_str(),
            at.saturating_sub(now_ms)
        ),
        None => String::new(),
    };
    let waited = if lease.wait_for_node.is_zero() {
        "; to wait for a node ID to come free, add ?wait=30s to the source (wait_for_node_ms / waitForNodeMs in the bindings)".to_string()
    } else {
        format!(" after waiting {} ms", duration_ms(lease.wait_for_node))
    };
    Error::new(
        ErrorCode::NodeIdsExhausted,
        format!("{}: {which}{waited}{when}", store.describe()),
    )
}

/// A starting node ID that spreads concurrent claimers over the node space.
pub(super) fn spread(nodes: u64, now_ns: u64) -> u64 {
    if nodes == 0 {
        return 0;
    }
    snowmint::mix64(now_ns ^ (std::process::id() as u64) << 32 ^ thread_salt()) % nodes
}

pub(super) fn thread_salt() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
}
