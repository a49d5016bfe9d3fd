//! Acquiring a lease: claim (or join a shared lease), start after the reservation and the value floor,
//! write the first reservation, start the keeper.

use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{ErrorCode, Layout, Options, Policy, SharedGenerator};

use crate::base::defect::Defect;
use crate::base::error::{Error, Result};
use crate::base::store::{SequencerRecord, Store};
use crate::base::sync::{self, Condvar, Mutex};
use crate::base::time::Time;
use crate::shared_lease::{self, Record, SharedFile};

use super::claim::{claim_waiting, spread};
use super::forks;
use super::handle::Lease;
use super::join::{join, Joined};
use super::keeper::keeper;
use super::options::LeaseOptions;
use super::shared::{deadline_after, duration_ms, ms, Shared, Wake};
use super::state::HELD;
use super::word::{LeaseCeiling, Word};

/// How an open goes on after its claim was taken: a step (reading the node ID's reservation, writing
/// the first one) that fails with `STORE_UNAVAILABLE` (its sends timed out, or their connections
/// broke: answers held back or lost) is tried again under the same claim rather than the open giving
/// the claim back and starting over (a new claim: more calls, each able to fail). Bounded: at most
/// [`Resume::TRIES`] tries of each step, and none begun once a third of the TTL has passed since the
/// claim was taken (the keeper, not yet started, then still has two thirds of it to renew the claim).
/// Safe as every re-send is: the reservation write is conditional on the claim's token, and a claim
/// that expired meanwhile fails it with `LEASE_LOST`, which is not tried again.
pub(super) struct Resume {
    pub(super) until: u64,
}

impl Resume {
    /// Tries of one step at most.
    pub(super) const TRIES: u32 = 4;

    pub(super) fn after_claim(time: &dyn Time, ttl: Duration) -> Resume {
        Resume {
            until: deadline_after(time, ttl / 3),
        }
    }

    pub(super) fn retry<T>(
        &self,
        time: &dyn Time,
        mut step: impl FnMut() -> Result<T>,
    ) -> Result<T> {
        let mut tries = 1;
        loop {
            match step() {
                Err(e)
                    if e.code() == ErrorCode::StoreUnavailable
                        && tries < Self::TRIES
                        && time.monotonic_ns() < self.until =>
                {
                    tries += 1;
                }
                done => return done,
            }
        }
    }
}

impl Lease {
    /// Claims a node ID of the sequencer `record` on `store` and starts its keeper (unless
    /// [`LeaseOptions::stepped`]); the generator mints under `layout` with `options`.
    pub fn acquire(
        store: Arc<dyn Store>,
        time: Arc<dyn Time>,
        record: SequencerRecord,
        layout: Layout,
        options: Options,
        lease: LeaseOptions,
    ) -> Result<Lease> {
        let ttl_ms = duration_ms(lease.ttl);
        if ttl_ms == 0 {
            return Err(Error::invalid("the lease TTL must be at least 1 ms"));
        }
        let mut lease = lease;
        let stepped = lease.stepped;
        // A store whose history can be lost bounds what any holder mints ahead of the clock (at least
        // two ticks of the layout, so that a layout of long ticks still mints ahead by one).
        let bound_ns = store.max_ahead().map(|b| {
            (b.as_nanos().min(u64::MAX as u128) as u64).max(layout.tick_ns().saturating_mul(2))
        });
        let mut options = options;
        if let Some(b) = bound_ns {
            options.max_ahead_ns = options.max_ahead_ns.min(b);
        }
        // Well inside max_ahead, so that the generator never waits on the reservation while it may mint.
        let half_ahead = Duration::from_nanos(options.max_ahead_ns / 2);
        if options.policy != Policy::Strict
            && lease.reserve_ahead > half_ahead
            && !half_ahead.is_zero()
        {
            lease.reserve_ahead = half_ahead;
        }
        let nodes = record.config.nodes;
        if let Some(n) = lease.node.filter(|&n| n >= nodes) {
            return Err(Error::invalid(format!(
                "node ID {n} is not one of sequencer {:?}'s node IDs (0..{nodes})",
                record.name
            )));
        }
        let start = if let Some(n) = lease.node {
            n
        } else if stepped {
            // A simulation replays exactly: the start follows from the holder and its clock only.
            let h = lease
                .holder
                .bytes()
                .fold(0u64, |h, b| snowmint::mix64(h ^ b as u64));
            snowmint::mix64(h ^ time.unix_ns()) % nodes.max(1)
        } else {
            spread(nodes, time.unix_ns())
        };
        let file = match &lease.state_file {
            Some(path) if stepped => {
                return Err(Error::invalid(format!(
                    "state file {}: a shared lease has a keeper thread (not stepped)",
                    path.display()
                )))
            }
            Some(path) => {
                let mut f = SharedFile::open(path, &layout)?;
                f.defect = lease.defect;
                Some(f)
            }
            None => None,
        };
        // A shared lease: joins and leaves happen one at a time (the join lock, held to the end).
        let joining = file.as_ref().map(SharedFile::join_lock).transpose()?;
        let source = shared_lease::source_fingerprint(&store.describe(), &record.name);
        let joined = match &file {
            Some(f) => join(f, &*store, &*time, &record, &lease, source)?,
            None => Joined::Claim {
                last_node: None,
                orphan: false,
            },
        };
        let fresh = !matches!(joined, Joined::Adopted(_));
        let claim = match joined {
            Joined::Adopted(c) => c,
            // The host claims again the node ID its processes last held, when it is free: processes
            // that did not overlap (one exits before the next has joined) stay on one node ID.
            Joined::Claim { last_node, orphan } => {
                let start = lease.node.or(last_node).unwrap_or(start);
                let mut waiting = lease.clone();
                if orphan {
                    // A process of the host died mid-claim: its claim ends within its TTL (the store
                    // may round it up: twice the TTL covers etcd's whole seconds).
                    waiting.wait_for_node = waiting.wait_for_node.max(lease.ttl.saturating_mul(2));
                }
                claim_waiting(&*store, &*time, &record, &waiting, start, ttl_ms).inspect_err(
                    |e| {
                        // Nothing claimed: no claim of this process's can outlive it. But a claim whose
                        // answer never came (STORE_UNAVAILABLE) may yet be applied: the state stays
                        // CLAIMING for the next process.
                        if let (Some(f), false) = (&file, e.code() == ErrorCode::StoreUnavailable) {
                            f.word(shared_lease::STATE).store(HELD, Ordering::SeqCst);
                        }
                    },
                )?
            }
        };
        let word = |index: usize, value: u64| match &file {
            Some(f) => Word::in_file(f, index),
            None => Word::memory(value),
        };
        let ceiling = word(shared_lease::CEILING, 0);
        let good_until = word(shared_lease::GOOD_UNTIL, 0);
        let wanted = word(shared_lease::WANTED, 0);
        let state = word(shared_lease::STATE, HELD);
        let state_word = match &file {
            Some(f) => Word {
                ptr: NonNull::from(snowmint::StateWord::word(&*f.file)),
                _owner: f.file.clone(),
            },
            None => Word::memory(0),
        };
        if fresh {
            good_until.store(deadline_after(&*time, lease.ttl), Ordering::SeqCst);
        }
        let cap = Arc::new(sync::AtomicU64::new(u64::MAX));
        let shared = Arc::new(Shared {
            fingerprint: crate::base::layout::layout_fingerprint(&layout),
            store,
            time,
            layout,
            record,
            options: lease,
            bound_ns,
            started_at: sync::AtomicU64::new(0),
            ceiling: ceiling.clone(),
            cap: cap.clone(),
            wanted,
            good_until,
            state,
            file,
            claim: Mutex::new(claim.clone()),
            wake: Mutex::new(Wake::default()),
            wake_cv: Condvar::new(),
            changed: Mutex::new(()),
            changed_cv: Condvar::new(),
        });
        let release_on_error = |e: Error| {
            if fresh {
                if let Some(f) = &shared.file {
                    // Nobody mints under a record this process failed to complete (the only member).
                    f.clear_record();
                }
                let _ = shared.store.release(&claim);
            } else {
                let _ = shared.store.leave(&claim);
            }
            if let Some(f) = &shared.file {
                f.exit();
            }
            e
        };
        let generator = SharedGenerator::with_ceiling(
            layout,
            claim.node_id,
            options,
            state_word.clone(),
            LeaseCeiling { word: ceiling, cap },
        )
        .map_err(|e| release_on_error(e.into()))?;
        if fresh {
            // After the node ID's reservation, and at or above the value floor of earlier incarnations.
            let floor = crate::base::floor::floor_start(
                &shared.record,
                &layout,
                shared.time.unix_ns(),
                options.max_ahead_ns,
            )
            .map_err(release_on_error)?;
            let floor = if shared.options.defect.is(Defect::StartIgnoresFloor) {
                0
            } else {
                floor
            };
            // And above what an earlier holder could have reached in a history this store has lost.
            let unknown = shared.unknown_history_start();
            let resume = Resume::after_claim(&*shared.time, shared.options.ttl);
            let start_at = match resume.retry(&*shared.time, || {
                shared.store.reservation(&claim.sequencer, claim.node_id)
            }) {
                Ok(r) => r
                    .map_or(0, |r| shared.start_after(&r))
                    .max(floor)
                    .max(unknown),
                Err(e) => return Err(release_on_error(e)),
            };
            let start_at = if shared.options.defect.is(Defect::IgnoreReservation) {
                0
            } else {
                start_at
            };
            generator.restore(start_at);
            if let Some(f) = &shared.file {
                // The state word is past the node ID's reservation before the record names the claim:
                // a process that adopts the record finds it so, whenever this one is killed.
                shared
                    .store
                    .adopt(&claim, ttl_ms, ms(shared.time.unix_ns()))
                    .map_err(release_on_error)?;
                f.write_record(&Record {
                    node_id: claim.node_id,
                    token: claim.token,
                    incarnation: shared.record.incarnation,
                    source,
                });
                // Complete: no longer a claim that a death could leave behind unrecorded.
                f.word(shared_lease::STATE).store(HELD, Ordering::SeqCst);
            }
            shared.started_at.store(start_at, Ordering::SeqCst);
            let target = shared.target(start_at).map_err(release_on_error)?;
            resume
                .retry(&*shared.time, || shared.extend_to(target))
                .map_err(release_on_error)?;
            // Started at the bound: the first reservation that covers the start comes a tick later.
            if let (Some(b), false) = (bound_ns, stepped) {
                for _ in 0..3 {
                    if shared.ceiling.load(Ordering::SeqCst) > start_at {
                        break;
                    }
                    std::thread::sleep(Duration::from_nanos(super::position::bound_reaches_in_ns(
                        &shared.layout,
                        b,
                        start_at,
                        shared.time.unix_ns(),
                    )));
                    let target = shared.target(start_at).map_err(release_on_error)?;
                    shared.extend_to(target).map_err(release_on_error)?;
                }
            }
        }
        drop(joining);
        let keeper = if stepped {
            None
        } else {
            let keeper_shared = shared.clone();
            let k = std::thread::Builder::new()
                .name(format!("snowmint-lease-{}", claim.node_id))
                .spawn({
                    let state_word = state_word.clone();
                    move || keeper(keeper_shared, move || state_word.load(Ordering::Relaxed))
                })
                .map_err(|e| {
                    release_on_error(Error::unavailable(format!(
                        "cannot start the lease keeper: {e}"
                    )))
                })?;
            Some(k)
        };
        let stepped = stepped.then(|| Mutex::new(()));
        forks::register(&shared);
        Ok(Lease {
            node_id: claim.node_id,
            token: claim.token,
            pid: std::process::id(),
            system_time: shared.time.is_system(),
            shared,
            generator,
            state_word,
            keeper: Mutex::new(keeper),
            stepped,
            released: sync::AtomicBool::new(false),
        })
    }
}
