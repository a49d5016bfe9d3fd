//! Liveness under moderate faults, on REAL servers (run through `coord/test.sh`): a TCP proxy
//! ([`support::proxy`]) between the store client and the server holds back (past the client's request
//! timeout) or loses (closes the connection instead of forwarding) a seeded random share of the
//! server's answers. A generator opened from a lease source through it, as an application opens one
//! (`SequencerGenerator::open`, opened again when that fails, attached again when its lease is lost),
//! must take its lease within a bounded time and keep minting for most of the time.
//!
//! `liveness_curve` (ignored: `scripts/liveness-curve.sh`, in `make test-long`, about 5 minutes)
//! prints the share of time minting works against the share of answers faulted, 0 to 30 %, per
//! store and fault: the README's table.
//!
//! ```sh
//! scripts/liveness-curve.sh
//! ```

mod support;

use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, Options};
use snowmint_coord::{Opened, SequencerGenerator};
use support::proxy::{Fault, Proxy, Random};
use support::{fresh_url, open, server_of, servers, through, twitter_config, unique, Kind};

/// Past both clients' answer timeout (2 s), so a held answer is a timed-out request.
const HELD: Duration = Duration::from_secs(3);

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// What one run saw.
#[derive(Debug)]
struct Run {
    /// When the first ID was minted (from the start), if one was.
    first_id: Option<Duration>,
    /// The share of the window during which minting worked.
    share: f64,
    /// IDs minted.
    ids: u64,
    /// Answers the proxy saw, and how many it faulted.
    answers: usize,
    faulted: usize,
    /// The last error, if any.
    last_error: Option<String>,
    /// Each error's code and where in the window it was first and last seen (s), and how often.
    errors: std::collections::BTreeMap<String, (f64, f64, usize)>,
}

/// A generator on a fresh sequencer of `kind` (8 node IDs, the default TTL), reached through a proxy
/// that faults `fraction` of the answers with `fault`, for `window` from the first open: minting is
/// tried every 10 ms, and each interval between two tries counts as working when the later try minted
/// (an open or attach in between counts as not working).
fn run(kind: Kind, fraction: f64, fault: Fault, seed: u64, window: Duration) -> Run {
    let url = fresh_url(kind, "live");
    let name = unique("live").replace('-', "_");
    open(&url)
        .create_sequencer(&name, &twitter_config(8), now_ms())
        .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    let proxy = Proxy::start_random(
        &server_of(&url),
        Random {
            seed,
            fraction,
            fault,
        },
    );
    let source = support::with_params(&through(&url, proxy.addr()), &format!("sequencer={name}"));
    let start = Instant::now();
    let end = start + window;
    let (mut first_id, mut ids, mut working) = (None, 0u64, Duration::ZERO);
    let mut last_error = None;
    let mut errors = std::collections::BTreeMap::new();
    let mut note = |e: &snowmint_coord::Error, last_error: &mut Option<String>| {
        let at = start.elapsed().as_secs_f64();
        let seen = errors
            .entry(format!(
                "{:?} {}",
                e.code(),
                e.message()
                    .chars()
                    .rev()
                    .take(60)
                    .collect::<String>()
                    .chars()
                    .rev()
                    .collect::<String>()
            ))
            .or_insert((at, at, 0));
        seen.1 = at;
        seen.2 += 1;
        *last_error = Some(e.to_string());
    };
    let mut generator: Option<Box<SequencerGenerator>> = None;
    let mut last = start;
    while Instant::now() < end {
        let minted = match &generator {
            None => {
                match SequencerGenerator::open(&source, Layout::twitter(), Options::default()) {
                    Ok(Opened::Leased(g)) => generator = Some(g),
                    Ok(Opened::Plain(_)) => unreachable!("a lease source"),
                    Err(e) => note(&e, &mut last_error),
                }
                false
            }
            Some(g) => match g.next_id() {
                Ok(_) => true,
                Err(e) => {
                    note(&e, &mut last_error);
                    if e.code() == ErrorCode::LeaseLost {
                        if let Err(e) = g.attach() {
                            note(&e, &mut last_error);
                        }
                    }
                    false
                }
            },
        };
        let now = Instant::now().min(end);
        if minted {
            ids += 1;
            first_id.get_or_insert(now - start);
            working += now - last;
        }
        last = now;
        std::thread::sleep(Duration::from_millis(10));
    }
    let run = Run {
        first_id,
        share: working.as_secs_f64() / window.as_secs_f64(),
        ids,
        answers: proxy.answers(),
        faulted: proxy.fired(),
        last_error,
        errors,
    };
    // Given back without faults (the release is no part of the window).
    drop(proxy);
    drop(generator);
    run
}

/// With 15 % of the answers held back past the request timeout, a generator on each store takes its
/// lease within 20 s and mints during at least half of the 40 s window (before the re-sends of
/// `crate::remote::Resend` and the keeper's renewal after an unanswered sequencer check: PostgreSQL
/// 0 to 7 % of 60 s, its first ID after 20 s or never). Both stores at once: about 40 s.
#[test]
fn leases_are_taken_and_kept_with_15_percent_of_answers_held_back() {
    let kinds = servers();
    let runs: Vec<(Kind, Run)> = std::thread::scope(|s| {
        let handles: Vec<_> = kinds
            .iter()
            .map(|&kind| {
                s.spawn(move || {
                    (
                        kind,
                        run(kind, 0.15, Fault::Hold(HELD), 15, Duration::from_secs(40)),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (kind, run) in runs {
        eprintln!("{kind:?}: {run:?}");
        assert!(
            run.faulted * 10 >= run.answers,
            "{kind:?}: too few faults to prove anything: {run:?}"
        );
        let first = run
            .first_id
            .unwrap_or_else(|| panic!("{kind:?}: no ID in 40 s: {run:?}"));
        assert!(
            first <= Duration::from_secs(20),
            "{kind:?}: the first ID came after {first:?}: {run:?}"
        );
        assert!(
            run.share >= 0.5,
            "{kind:?}: minting worked {:.0} % of the time: {run:?}",
            run.share * 100.0
        );
    }
}

/// The README's curve: the share of time minting works against the share of answers held back or
/// lost, per store. `SNOWMINT_LIVENESS_WINDOW_S` sets each run's window (default 20 s); both stores
/// run at once.
#[test]
#[ignore = "a measurement (about 5 minutes): scripts/liveness-curve.sh, make test-long"]
fn liveness_curve() {
    let window = Duration::from_secs(
        std::env::var("SNOWMINT_LIVENESS_WINDOW_S")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20),
    );
    // `SNOWMINT_LIVENESS_FRACTIONS` (percent, comma-separated), `SNOWMINT_LIVENESS_FAULTS` (`held`,
    // `lost`) and `SNOWMINT_LIVENESS_STORES` (`etcd`, `postgres`) pick some cells of the table.
    let pick = |var: &str| std::env::var(var).ok().filter(|v| !v.is_empty());
    let fractions: Vec<f64> = pick("SNOWMINT_LIVENESS_FRACTIONS").map_or(
        vec![0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30],
        |v| {
            v.split(',')
                .map(|p| p.trim().parse::<f64>().unwrap() / 100.0)
                .collect()
        },
    );
    let faults: Vec<(&str, Fault)> = [("held 3 s", Fault::Hold(HELD)), ("lost", Fault::Close)]
        .into_iter()
        .filter(|(what, _)| pick("SNOWMINT_LIVENESS_FAULTS").is_none_or(|v| v.contains(&what[..4])))
        .collect();
    let kinds: Vec<Kind> = servers()
        .into_iter()
        .filter(|k| pick("SNOWMINT_LIVENESS_STORES").is_none_or(|v| v.contains(k.name())))
        .collect();
    let (fractions, faults) = (&fractions, &faults);
    let lines: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = kinds
            .iter()
            .map(|&kind| {
                s.spawn(move || {
                    let mut lines = Vec::new();
                    for &(what, fault) in faults {
                        for &fraction in fractions {
                            // Seeded by the fraction (5 % steps: 1000 to 1006), so that a cell
                            // measured alone sees the faults it sees in the whole table.
                            let seed = 1000 + (fraction * 20.0).round() as u64;
                            let r = run(kind, fraction, fault, seed, window);
                            let line = format!(
                                "| {} | {what} | {:.0} % | {:.0} % | {} | {} | {} of {} |",
                                kind.name(),
                                fraction * 100.0,
                                r.share * 100.0,
                                r.first_id.map_or("none".to_string(), |d| format!(
                                    "{:.1} s",
                                    d.as_secs_f64()
                                )),
                                r.ids,
                                r.faulted,
                                r.answers
                            );
                            eprintln!("{line} {:?} {:?}", r.last_error, r.errors);
                            lines.push(line);
                        }
                    }
                    lines
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    println!("window {window:?} per run");
    println!("| store | fault | answers faulted | minting works | first ID after | IDs (one per 10 ms) | answers faulted / seen |");
    println!("|---|---|---|---|---|---|---|");
    for line in lines.into_iter().flatten() {
        println!("{line}");
    }
}
