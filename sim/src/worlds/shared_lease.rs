//! The shared-lease world (`--world "shared lease"`, `--replay SEED --shared-lease`): one lease per
//! host (SPEC §4a, `coord/src/shared_lease.rs`). Three hosts, each with three processes that open the
//! same lease source (one in-memory sequencer of four node IDs, TTL 1 s) with their host's state file;
//! the processes of a host start at once (a barrier: the race of workers started together), mint under
//! the lease, then exit cleanly (`release`) or crash (`abandon`: no release; the kernel drops the
//! crashed process's locks when its files close), and start again after a pause drawn from the seed.
//!
//! Unlike the other worlds this one runs in real time on real threads (a shared lease has a keeper
//! thread and its processes coordinate by the kernel's open-file-description locks, which conflict
//! between the open file descriptions of one process as between processes), so a seed draws each
//! process's schedule, not the interleaving: a failure names its seed, and a replay runs the same
//! schedules. Checked: no ID twice across hosts; the processes of a host that hold their lease at once
//! hold one node ID (the first claimer wins, every other one adopts its record: issue 40); and a
//! process's clean exit never releases the claim while another process of its host still holds it
//! (only the last one releases it).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, LayoutConfig, Options, Policy};
use snowmint_coord::defect::{Defect, Hook};
use snowmint_coord::{
    layout_text, Claim, ClaimRequest, Lease, LeaseOptions, MemoryStore, NodeState, Reservation,
    Result, SequencerConfig, SequencerRecord, Store, Time,
};

use crate::clock::MS;
use crate::rng::Rng;
use crate::worlds::embedded::embedded_dir;
use crate::worlds::leases::NAME;
use std::path::PathBuf;
use std::sync::Barrier;

/// A process's handle on the shared in-memory store, noting whether it released a claim.
#[derive(Debug)]
struct Tap {
    inner: Arc<MemoryStore>,
    released: AtomicBool,
}

impl Store for Tap {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now: u64,
    ) -> Result<SequencerRecord> {
        self.inner.create_sequencer(name, config, now)
    }
    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        self.inner.sequencer(name)
    }
    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        self.inner.sequencers()
    }
    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        self.inner.destroy_sequencer(name, incarnation)
    }
    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        self.inner.claim(request)
    }
    fn renew(&self, claim: &Claim, ttl_ms: u64, now: u64) -> Result<Claim> {
        self.inner.renew(claim, ttl_ms, now)
    }
    fn adopt(&self, claim: &Claim, ttl_ms: u64, now: u64) -> Result<Claim> {
        self.inner.adopt(claim, ttl_ms, now)
    }
    fn leave(&self, claim: &Claim) -> Result<()> {
        self.inner.leave(claim)
    }
    fn release(&self, claim: &Claim) -> Result<()> {
        self.released.store(true, Ordering::SeqCst);
        self.inner.release(claim)
    }
    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        self.inner.reservation(sequencer, node_id)
    }
    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.inner.reserve(claim, reservation)
    }
    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.inner.lower_reservation(claim, reservation)
    }
    fn holders(&self, sequencer: &str, now: u64) -> Result<Vec<NodeState>> {
        self.inner.holders(sequencer, now)
    }
    fn row(&self, key: &str) -> Result<Option<String>> {
        self.inner.row(key)
    }
    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        self.inner.swap_row(key, expected, new)
    }
}

const HOSTS: usize = 3;
const PROCS: usize = 3;

/// The checker, shared by every process's thread.
#[derive(Default)]
struct Check {
    seen: HashSet<u64>,
    /// Per host and process, the node ID of the lease it holds (`None`: none).
    open: Vec<Vec<Option<u64>>>,
    violation: Option<String>,
    minted: u64,
    log: Vec<String>,
}

impl Check {
    fn fail(&mut self, what: String) {
        self.violation.get_or_insert(what);
    }
}

/// One seed of the shared-lease world: the IDs minted.
pub(crate) fn run_shared_lease(
    seed: u64,
    rounds: u64,
    defect: Defect,
    trace: bool,
) -> std::result::Result<u64, String> {
    let base = embedded_dir().with_file_name(format!("shared-{seed}"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).map_err(|e| format!("shared lease: {e}"))?;
    let r = run_in(seed, rounds.max(1), defect, trace, &base);
    let _ = std::fs::remove_dir_all(&base);
    // The world's parent folder, once empty (the embedded world's own removes it too).
    if let Some(parent) = base.parent() {
        let _ = std::fs::remove_dir(parent);
    }
    r
}

fn run_in(
    seed: u64,
    rounds: u64,
    defect: Defect,
    trace: bool,
    base: &std::path::Path,
) -> std::result::Result<u64, String> {
    let store = Arc::new(MemoryStore::new());
    let layout = Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits: 2,
        sequence_bits: 8,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .expect("the simulation's layout");
    let config = SequencerConfig {
        layout: layout_text(&layout),
        nodes: 4,
    };
    let time = Arc::new(snowmint_coord::SystemTime);
    store
        .create_sequencer(NAME, &config, time.unix_ns() / MS)
        .map_err(|e| format!("shared lease: {e}"))?;
    let check = Arc::new(Mutex::new(Check {
        open: vec![vec![None; PROCS]; HOSTS],
        ..Check::default()
    }));
    let t0 = Instant::now();
    let note = |check: &Mutex<Check>, what: String| {
        if trace {
            let line = format!("{:>6} ms  {what}", t0.elapsed().as_millis());
            check.lock().unwrap().log.push(line);
        }
    };
    let barriers: Vec<Arc<Barrier>> = (0..HOSTS).map(|_| Arc::new(Barrier::new(PROCS))).collect();
    std::thread::scope(|scope| {
        for (h, barrier) in barriers.iter().enumerate() {
            for p in 0..PROCS {
                let (store, time, check) = (store.clone(), time.clone(), check.clone());
                let barrier = barrier.clone();
                let state_file: PathBuf = base.join(format!("host-{h}.state"));
                let mut rng = Rng(seed ^ 0x05A4_ED00 ^ ((h * PROCS + p) as u64) << 20);
                scope.spawn(move || {
                    for round in 0..rounds {
                        if round == 0 {
                            // The host's processes start at once (every one of them reaches this).
                            barrier.wait();
                        } else if check.lock().unwrap().violation.is_some() {
                            break;
                        } else {
                            std::thread::sleep(Duration::from_millis(rng.below(40)));
                        }
                        let tap = Arc::new(Tap {
                            inner: store.clone(),
                            released: AtomicBool::new(false),
                        });
                        let record = match tap.sequencer(NAME) {
                            Ok(Some(r)) => r,
                            other => {
                                check.lock().unwrap().fail(format!("the sequencer: {other:?}"));
                                break;
                            }
                        };
                        let lease = Lease::acquire(
                            tap.clone(),
                            time.clone(),
                            record,
                            layout,
                            Options {
                                policy: Policy::Fail,
                                ..Options::default()
                            },
                            LeaseOptions {
                                ttl: Duration::from_secs(1),
                                holder: format!("host {h} process {p}"),
                                state_file: Some(state_file.clone()),
                                wait_for_node: Duration::from_millis(300),
                                defect: Hook::planted(defect),
                                ..LeaseOptions::default()
                            },
                        );
                        let lease = match lease {
                            Ok(l) => l,
                            Err(e)
                                if matches!(
                                    e.code(),
                                    ErrorCode::NodeIdsExhausted | ErrorCode::LeaseLost
                                ) =>
                            {
                                note(&check, format!("host {h} process {p} cannot start: {}", e.code()));
                                continue;
                            }
                            Err(e) => {
                                check.lock().unwrap().fail(format!(
                                    "shared lease: host {h} process {p}: starting, unexpected error {}: {e}",
                                    e.code()
                                ));
                                break;
                            }
                        };
                        let node = lease.node_id();
                        {
                            let mut c = check.lock().unwrap();
                            // Every process of the host holding its lease now holds this node ID.
                            let others: Vec<(usize, u64)> = (0..PROCS)
                                .filter_map(|q| c.open[h][q].map(|n| (q, n)))
                                .filter(|&(_, n)| n != node)
                                .collect();
                            if let Some(&(q, n)) = others.first() {
                                c.fail(format!(
                                    "shared lease: host {h}: process {p} starts under node {node} while \
                                     process {q} holds the host's lease on node {n}"
                                ));
                            }
                            c.open[h][p] = Some(node);
                        }
                        note(&check, format!("host {h} process {p} starts under node {node}"));
                        // Mints for 10 to 80 ms.
                        let until = Instant::now() + Duration::from_millis(10 + rng.below(70));
                        let mut buf = [0u64; 16];
                        let mut lost = false;
                        while Instant::now() < until && !lost {
                            let k = 1 + rng.below(buf.len() as u64) as usize;
                            match lease.next_ids(&mut buf[..k]) {
                                Ok(()) => {
                                    let mut c = check.lock().unwrap();
                                    for &id in &buf[..k] {
                                        if !c.seen.insert(id) {
                                            c.fail(format!(
                                                "shared lease: host {h} process {p} (node {node}): \
                                                 ID {id} was minted before"
                                            ));
                                        }
                                    }
                                    c.minted += k as u64;
                                }
                                Err(e) if e.code() == ErrorCode::TooFarAhead => {}
                                Err(e) if e.code() == ErrorCode::LeaseLost => lost = true,
                                Err(e) => {
                                    check.lock().unwrap().fail(format!(
                                        "shared lease: host {h} process {p}: minting, unexpected error {}: {e}",
                                        e.code()
                                    ));
                                    lost = true;
                                }
                            }
                            std::thread::sleep(Duration::from_micros(200 + rng.below(800)));
                        }
                        if rng.chance(30) {
                            check.lock().unwrap().open[h][p] = None;
                            lease.abandon();
                            note(&check, format!("host {h} process {p} crashes"));
                            continue;
                        }
                        // A clean exit: the last process of the host releases the claim, the others
                        // leave it to those still holding it (judged under the checker's lock: nobody
                        // of the host starts or exits meanwhile).
                        let mut c = check.lock().unwrap();
                        c.open[h][p] = None;
                        let holding: Vec<usize> =
                            (0..PROCS).filter(|&q| c.open[h][q].is_some()).collect();
                        let r = lease.release();
                        if tap.released.load(Ordering::SeqCst) && !holding.is_empty() {
                            c.fail(format!(
                                "shared lease: host {h}: process {p}'s clean exit released the claim on \
                                 node {node} while process(es) {holding:?} of the host still hold it"
                            ));
                        }
                        drop(c);
                        note(&check, format!("host {h} process {p} exits ({})", r.err().map_or("released".into(), |e| e.code().to_string())));
                    }
                });
            }
        }
    });
    let c = check.lock().unwrap();
    for line in &c.log {
        println!("{line}");
    }
    match &c.violation {
        Some(v) => Err(v.clone()),
        None => Ok(c.minted),
    }
}
