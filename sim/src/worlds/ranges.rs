//! The range world (`--world ranges`, `etcd ranges`, `postgres ranges`; `--replay SEED --ranges`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use snowmint::ErrorCode;
use snowmint_coord::defect::Defect;
use snowmint_coord::range::{RangeSequence, SteppedAllocator};
use snowmint_coord::{Error, MemoryStore, RangeOptions, Store};

use crate::clock::{SimClock, MS, START_UNIX_NS};
use crate::defects::StoreDefect;
use crate::etcd::{etcd_client, SimEtcd};
use crate::link::{Link, Race, RaceLink};
use crate::net::Faults;
use crate::postgres::{pg_client, SimPg};
use crate::rng::Rng;

/// What the range world's stores are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Over {
    /// In-memory stores behind `Link`'s faults.
    Memory,
    /// The real etcd client, a simulated network and cluster per store.
    Etcd,
    /// The real PostgreSQL store, a simulated database per store.
    Postgres,
}

/// Range sequences (SPEC §4): 6 processes in two datacenters (one global store, one store per
/// datacenter), each through links of its own with faults (failed requests, writes answered late,
/// partitions), clocks stepped (fetch tickets expire by them), processes crashed and restarted (also
/// with the global store partitioned away), and races: another process's whole take may land between
/// a read and the compare-and-set after it. A process opens as `RangeSequence::open_urls` does, its
/// stores opened by URL through its links. After every step: every range handed out is disjoint from
/// every other, each process's ranges increase, and no process failed to open while its datacenter's
/// store answered and its row held values.
pub(crate) fn run_ranges(
    seed: u64,
    steps: u64,
    (defect, store_defect): (Defect, StoreDefect),
    over: Over,
    trace: bool,
) -> std::result::Result<u64, String> {
    const PROCS: usize = 6;
    let now = Arc::new(AtomicU64::new(START_UNIX_NS));
    let mut rng = Rng(seed ^ 0x0A11_0CA7);
    let global = Arc::new(MemoryStore::new());
    let dcs = [Arc::new(MemoryStore::new()), Arc::new(MemoryStore::new())];
    // Over etcd: one simulated cluster for the global row, one per datacenter.
    let clusters = [1, 2, 3].map(|k| SimEtcd::new(&now, seed ^ (0xE7CD_0010 + k)));
    // Over PostgreSQL: one simulated database for the global row, one per datacenter.
    let databases = [1, 2, 3].map(|k| SimPg::new(&now, seed ^ (0x9057_0010 + k)));
    let options = RangeOptions {
        bits: 24,
        start: 1,
        dc_range: 1_000,
        process_range: 100,
        threshold_percent: 50,
        wait: Duration::ZERO,
    };
    let race = Arc::new(Race {
        rng: Mutex::new(Rng(rng.next())),
        busy: AtomicBool::new(false),
        percent: 25,
        allocs: Mutex::new(Vec::new()),
        taken: Mutex::new(Vec::new()),
    });
    // `which`: 0 the global store, 1 and 2 the datacenters'.
    let link = |which: usize, rng: &mut Rng, me: usize| {
        let seed = rng.next();
        let race = Some((race.clone(), me));
        let faults: Arc<Faults> = Arc::default();
        // A real client's own defect (`defect`) is planted in it; the range code's too.
        let client = match over {
            Over::Memory => {
                let store = [&global, &dcs[0], &dcs[1]][which].clone();
                return Arc::new(Link::new(store, &now, seed, race, store_defect));
            }
            Over::Etcd => etcd_client(&clusters[which], &now, &faults, seed, race.clone(), defect),
            Over::Postgres => {
                pg_client(&databases[which], &now, &faults, seed, race.clone(), defect).0
            }
        };
        Arc::new(Link {
            faults,
            net: true,
            ..Link::new(client, &now, seed, race, store_defect)
        })
    };
    let mut links = Vec::new();
    let mut clocks = Vec::new();
    for i in 0..PROCS {
        links.push((link(0, &mut rng, i), link(1 + i % 2, &mut rng, i)));
        clocks.push(Arc::new(SimClock {
            now: now.clone(),
            offset_ns: AtomicI64::new(0),
            frozen: Mutex::new(None),
        }));
    }
    // The operator's view of each datacenter's row (no faults).
    let operator: Vec<Arc<dyn Store>> = (1..3)
        .map(|k| -> Arc<dyn Store> {
            let none = &Arc::default();
            match over {
                Over::Memory => dcs[k - 1].clone(),
                Over::Etcd => etcd_client(&clusters[k], &now, none, seed, None, Defect::None),
                Over::Postgres => pg_client(&databases[k], &now, none, seed, None, Defect::None).0,
            }
        })
        .collect();
    const GLOBAL_URL: &str = "file:///proc/simulated/global";
    // Process `i` opens as `RangeSequence::open_urls` does (`SteppedAllocator::open`: the stores by
    // their URLs, the global one connected on first use; then the first process range), its stores
    // opened through its links (connecting fails while a link is cut).
    let open = |i: usize| {
        let (global, local) = links[i].clone();
        let race = race.clone();
        let opener: Arc<snowmint_coord::source::StoreOpener> = Arc::new(move |url| {
            let link = if url.to_string() == GLOBAL_URL {
                &global
            } else {
                &local
            };
            if link.faults.cut.load(Ordering::SeqCst) {
                return Err(Error::unavailable("simulated: cannot connect to the store"));
            }
            Ok(Arc::new(RaceLink {
                inner: link.clone(),
                race: race.clone(),
                me: i,
            }) as Arc<dyn Store>)
        });
        let dc = ["a", "b"][i % 2];
        let urls = (GLOBAL_URL, &*format!("file:///proc/simulated/{dc}"));
        SteppedAllocator::open(
            "sim",
            dc,
            urls,
            opener,
            options.clone(),
            clocks[i].clone(),
            defect,
        )
    };
    // The values datacenter `dc` (0 or 1) holds, as the operator reads them (`None`: the read failed).
    let held = |dc: usize| -> Option<u64> {
        let row = RangeSequence::show_datacenter(&*operator[dc], "sim", ["a", "b"][dc]).ok()?;
        Some(row.map_or(0, |r| r.ranges.iter().map(|(s, e)| e - s).sum()))
    };
    // Process `i` (re)starts: its first range, or a refusal. SPEC §4: opening touches only the
    // datacenter's store while its row holds values, so a refusal with that store healthy and the row
    // holding values before and after the attempt is a violation, whatever the global store does.
    let reopen = |i: usize, rng: &mut Rng| -> std::result::Result<Option<(u64, u64)>, String> {
        race.allocs.lock().unwrap()[i] = None;
        let before = held(i % 2);
        match open(i) {
            Ok((a, first, low)) => {
                let a = Arc::new(a);
                // The datacenter-level pre-allocation `RangeSequence` starts on a thread of its own.
                if low && rng.chance(50) {
                    let _ = a.prefetch_dc();
                }
                race.allocs.lock().unwrap()[i] = Some(a);
                Ok(Some(first))
            }
            Err(e)
                if matches!(
                    e.code(),
                    ErrorCode::StoreUnavailable | ErrorCode::RangeExhausted
                ) =>
            {
                let after = held(i % 2);
                if links[i].1.healthy() && before.unwrap_or(0) > 0 && after.unwrap_or(0) > 0 {
                    return Err(format!(
                        "ranges: process {i} cannot open though its datacenter's store answers and \
                         its row holds {} values: {e}",
                        after.unwrap_or(0)
                    ));
                }
                Ok(None)
            }
            Err(e) => Err(format!(
                "ranges: process {i}: opening, unexpected error {}: {e}",
                e.code()
            )),
        }
    };
    for _ in 0..PROCS {
        race.allocs.lock().unwrap().push(None);
    }
    // Every range handed out (start → end, process), and each process's last end.
    let mut ranges: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
    let mut last_end = [0u64; PROCS];
    let mut values = 0u64;
    let mut record = |p: usize, s: u64, e: u64, how: &str| -> std::result::Result<(), String> {
        if s >= e || e > 1 << options.bits {
            return Err(format!("ranges: process {p} took {s}..{e} ({how})"));
        }
        if s < last_end[p] {
            return Err(format!(
                "ranges: process {p} took {s}..{e} after a range ending at {} ({how})",
                last_end[p]
            ));
        }
        if let Some((&s0, &(e0, p0))) = ranges.range(..e).next_back() {
            if e0 > s {
                return Err(format!("ranges: process {p} took {s}..{e}, overlapping process {p0}'s {s0}..{e0} ({how})"));
            }
        }
        ranges.insert(s, (e, p));
        last_end[p] = e;
        values += e - s;
        if trace {
            println!("ranges: process {p} takes {s}..{e} ({how})");
        }
        Ok(())
    };
    for step in 0..steps {
        now.fetch_add(rng.below(50 * MS), Ordering::SeqCst);
        let i = rng.below(PROCS as u64) as usize;
        let roll = rng.below(100);
        let what = match roll {
            0..=59 if race.allocs.lock().unwrap()[i].is_none() => match reopen(i, &mut rng)? {
                Some((s, e)) => {
                    record(i, s, e, "its first, opening")?;
                    format!("process {i} opens")
                }
                None => format!("process {i} cannot open"),
            },
            0..=59 => {
                let a = race.allocs.lock().unwrap()[i].clone().expect("open");
                match a.take_process_range() {
                    Ok(((s, e), low)) => {
                        record(i, s, e, "its own take")?;
                        if low && rng.chance(50) {
                            let _ = a.prefetch_dc();
                        }
                        String::new()
                    }
                    Err(e)
                        if matches!(
                            e.code(),
                            ErrorCode::StoreUnavailable | ErrorCode::RangeExhausted
                        ) =>
                    {
                        format!("process {i} takes no range: {}", e.code())
                    }
                    Err(e) => {
                        return Err(format!(
                            "ranges: process {i}: unexpected error {}: {e}",
                            e.code()
                        ))
                    }
                }
            }
            60..=67 => {
                let a = race.allocs.lock().unwrap()[i].clone();
                let r = a.map_or(Ok(()), |a| a.prefetch_dc());
                format!(
                    "process {i} pre-allocates for its datacenter: {}",
                    r.map_or_else(|e| e.code().to_string(), |_| "ok".into())
                )
            }
            68..=75 => {
                let (g, l) = &links[i];
                let which = if rng.chance(50) { g } else { l };
                let flaky = [0, 0, 10, 30][rng.below(4) as usize];
                let late = [0, 0, 20, 50][rng.below(4) as usize];
                which.faults.flaky.store(flaky, Ordering::SeqCst);
                which.faults.late.store(late, Ordering::SeqCst);
                let cut = rng.chance(20);
                which.faults.cut.store(cut, Ordering::SeqCst);
                let network = which.set_network(&mut rng);
                format!(
                    "process {i}: a link fails {flaky}%, answers late {late}%, {network}, cut {cut}"
                )
            }
            76..=81 => {
                let by = rng.below(8_000) as i64 - 4_000;
                clocks[i]
                    .offset_ns
                    .fetch_add(by * MS as i64, Ordering::SeqCst);
                format!("process {i}'s clock steps {by} ms")
            }
            82..=86 => {
                // A crash: the ranges it held are holes; a new process takes its place.
                // Its successor's ranges still start above its last one: every range of a datacenter
                // starts at or above the row's floor, which each take raises.
                if let Some((s, e)) = reopen(i, &mut rng)? {
                    record(i, s, e, "its first, after a restart")?;
                }
                format!("process {i} crashes and restarts")
            }
            87..=89 => {
                // The global store partitioned away from a process that restarts, its datacenter's
                // store answering: it must open and serve from the datacenter row.
                let (g, l) = &links[i];
                g.faults.cut.store(true, Ordering::SeqCst);
                l.heal();
                if let Some((s, e)) = reopen(i, &mut rng)? {
                    record(i, s, e, "its first, the global store partitioned")?;
                }
                format!("process {i} restarts, the global store partitioned away")
            }
            _ => {
                let d = rng.below(6_000) * MS;
                now.fetch_add(d, Ordering::SeqCst);
                format!("{} ms pass", d / MS)
            }
        };
        let raced: Vec<_> = std::mem::take(&mut *race.taken.lock().unwrap());
        for (p, s, e) in raced {
            record(p, s, e, "inside another process's compare-and-set")?;
        }
        if trace && !what.is_empty() {
            println!("ranges: step {step}: {what}");
        }
    }
    Ok(values)
}
