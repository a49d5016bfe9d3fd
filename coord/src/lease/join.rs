//! Joining the processes of the host that share a lease through a state file.

use std::sync::atomic::Ordering;

use snowmint::ErrorCode;

use crate::base::error::{Error, Result};
use crate::base::store::{Claim, SequencerRecord, Store};
use crate::base::time::Time;
use crate::shared_lease::{self, SharedFile};

use super::options::LeaseOptions;
use super::shared::{duration_ms, ms};
use super::state::{CLAIMING, HELD, LOST};

/// What joining the processes of a shared state file gave.
pub(super) enum Joined {
    /// The claim of the record the other processes mint under.
    Adopted(Claim),
    /// None to adopt and no other member: this process claims a node ID (the record cleared, the
    /// state [`CLAIMING`] until the record is written), preferably the one the file's last record of
    /// this source and incarnation named. `orphan`: the last process to claim through the file died
    /// mid-claim (the state was still [`CLAIMING`]), so its claim may hold a node ID until its TTL:
    /// this claim waits for one to come free that long.
    Claim {
        last_node: Option<u64>,
        orphan: bool,
    },
}

/// Joins the processes of the host that share the lease of state file `f` (under its join lock): as a
/// member, adopts the claim its record names ([`Store::adopt`]: the same node ID and fencing token).
/// [`Joined::Claim`] when there is none to adopt and no other member.
/// With other members, a record that names another lease source, or a lost lease (they are stopping),
/// is an error: `STATE_FILE_MISMATCH`, `LEASE_LOST`.
pub(super) fn join(
    f: &SharedFile,
    store: &dyn Store,
    time: &dyn Time,
    record: &SequencerRecord,
    lease: &LeaseOptions,
    source: u64,
) -> Result<Joined> {
    f.enter()?;
    let fail = |e: Error| {
        f.exit();
        e
    };
    let others = f.others().map_err(fail)?;
    let r = f.record();
    let path = f.file.path().display();
    let state = f.word(shared_lease::STATE);
    if r.token != 0 && r.source != source {
        if others {
            return Err(fail(Error::new(
                ErrorCode::StateFileMismatch,
                format!("state file {path}: the processes using it share a lease of another source (store or sequencer); use one state file per lease source"),
            )));
        }
    } else if r.token != 0
        && r.incarnation == record.incarnation
        && matches!(state.load(Ordering::SeqCst), HELD | CLAIMING)
    {
        // A record written by a claimer that died before its state went HELD is as complete as one
        // after (the state word was past the claim's reservation before the record named it).
        let _ = state.compare_exchange(CLAIMING, HELD, Ordering::SeqCst, Ordering::SeqCst);
        let claim = Claim {
            sequencer: record.name.clone(),
            node_id: r.node_id,
            token: r.token,
            expires_unix_ms: 0,
        };
        let ttl_ms = duration_ms(lease.ttl);
        let started = time.monotonic_ns();
        match store.adopt(&claim, ttl_ms, ms(time.unix_ns())) {
            Ok(c) => {
                f.word(shared_lease::GOOD_UNTIL).fetch_max(
                    started.saturating_add(ttl_ms.saturating_mul(1_000_000)),
                    Ordering::SeqCst,
                );
                return Ok(Joined::Adopted(c));
            }
            Err(e) if e.code() == ErrorCode::LeaseLost => {
                // Never brought back: the processes minting under it stop at their ceiling.
                state.fetch_max(LOST, Ordering::SeqCst);
                if others {
                    return Err(fail(e.context(format!(
                        "state file {path}: the lease its processes share (node ID {}, fencing token {}) was lost",
                        r.node_id, r.token
                    ))));
                }
            }
            Err(e) => return Err(fail(e)),
        }
    } else if others {
        return Err(fail(Error::lease_lost(format!(
            "state file {path}: the lease its processes share (node ID {}, fencing token {}) was lost; they are stopping: open again once they have exited",
            r.node_id, r.token
        ))));
    }
    // The node ID of the last record (its token cleared when the last process released it; the node
    // word is kept), for this source and incarnation.
    let last_node = (r.source == source
        && r.incarnation == record.incarnation
        && r.node_id < record.config.nodes)
        .then_some(r.node_id);
    let orphan = r.token == 0 && state.load(Ordering::SeqCst) == CLAIMING;
    f.clear_record();
    state.store(CLAIMING, Ordering::SeqCst);
    Ok(Joined::Claim { last_node, orphan })
}
