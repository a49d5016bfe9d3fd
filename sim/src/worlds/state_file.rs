//! The state-file world (`--world "state file"`, `--replay SEED --state-file`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use snowmint::{ErrorCode, Layout, LayoutConfig, Options, Policy};
use snowmint_coord::Time;

use crate::clock::{SimClock, MS, START_UNIX_NS};
use crate::rng::Rng;

/// The shared state file (SPEC §4a): 4 processes of one host, each with its own clock (stepped, frozen,
/// smeared), mint from one real memory-mapped file; a process crashes (drops its mapping) and opens the
/// file again. After every step: no ID twice, IDs strictly increasing per process life.
pub(crate) fn run_state_file(
    seed: u64,
    steps: u64,
    dir: &std::path::Path,
    trace: bool,
) -> std::result::Result<u64, String> {
    use snowmint::{SharedGenerator, StateFile};
    let path = dir.join(format!("seed-{seed}.state"));
    let _ = std::fs::remove_file(&path);
    let layout = Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits: 2,
        sequence_bits: 4,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .expect("the simulation's layout");
    let options = Options {
        policy: Policy::Fail,
        ..Options::default()
    };
    let open = || {
        SharedGenerator::<StateFile>::open_file(&path, layout, 1, options)
            .map_err(|e| format!("state file: open: {e}"))
    };
    struct Proc {
        clock: SimClock,
        gen: Option<SharedGenerator<StateFile>>,
        last: Option<u64>,
        smear_ns_per_ms: i64,
    }
    let now = Arc::new(AtomicU64::new(START_UNIX_NS));
    let mut rng = Rng(seed ^ 0x5EED_F11E);
    let mut procs = Vec::new();
    for _ in 0..4 {
        procs.push(Proc {
            clock: SimClock {
                now: now.clone(),
                offset_ns: AtomicI64::new(0),
                frozen: Mutex::new(None),
            },
            gen: Some(open()?),
            last: None,
            smear_ns_per_ms: 0,
        });
    }
    let mut seen = HashSet::new();
    for step in 0..steps {
        let d = rng.below(3 * MS);
        now.fetch_add(d, Ordering::SeqCst);
        for p in &procs {
            let by = p.smear_ns_per_ms * (d / MS) as i64;
            p.clock.offset_ns.fetch_add(by, Ordering::SeqCst);
        }
        let i = rng.below(procs.len() as u64) as usize;
        let roll = rng.below(100);
        let p = &mut procs[i];
        let what = match roll {
            0..=69 => match &p.gen {
                None => {
                    p.gen = Some(open()?);
                    p.last = None;
                    format!("process {i} opens the file again")
                }
                Some(g) => {
                    let clock = || Ok(p.clock.unix_ns());
                    let n = 1 + rng.below(24);
                    let mut minted = 0;
                    for _ in 0..n {
                        match g.next_id_from(&clock) {
                            Ok(id) => {
                                if let Some(l) = p.last.filter(|&l| id <= l) {
                                    return Err(format!(
                                        "state file: process {i}: ID {id} does not follow {l}"
                                    ));
                                }
                                if !seen.insert(id) {
                                    return Err(format!(
                                        "state file: process {i}: ID {id} was minted before"
                                    ));
                                }
                                p.last = Some(id);
                                minted += 1;
                            }
                            Err(e) if e.code() == ErrorCode::TooFarAhead => break,
                            Err(e) => {
                                return Err(format!(
                                    "state file: process {i}: unexpected error {}: {e}",
                                    e.code()
                                ))
                            }
                        }
                    }
                    format!("process {i} mints {minted}")
                }
            },
            70..=77 => {
                let by = rng.below(6_000) as i64 - 3_000;
                p.clock
                    .offset_ns
                    .fetch_add(by * MS as i64, Ordering::SeqCst);
                format!("process {i}'s clock steps {by} ms")
            }
            78..=80 => {
                let mut f = p.clock.frozen.lock().unwrap();
                *f = match *f {
                    Some(_) => None,
                    None => Some(p.clock.unix_ns_unfrozen()),
                };
                let frozen = f.is_some();
                format!(
                    "process {i}'s clock {}",
                    if frozen { "freezes" } else { "runs again" }
                )
            }
            81..=83 => {
                p.smear_ns_per_ms = if p.smear_ns_per_ms == 0 {
                    (rng.below(401) as i64 - 200) * 1_000
                } else {
                    0
                };
                format!(
                    "process {i}'s clock smears {} µs per ms",
                    p.smear_ns_per_ms / 1_000
                )
            }
            84..=89 => {
                p.gen = None;
                format!("process {i} crashes")
            }
            _ => {
                let d = rng.below(2_000) * MS;
                now.fetch_add(d, Ordering::SeqCst);
                format!("{} ms pass", d / MS)
            }
        };
        if trace {
            println!("state file: step {step}: {what}");
        }
    }
    let _ = std::fs::remove_file(&path);
    Ok(seen.len() as u64)
}
