//! The runner: the worlds (`Sim`), the command line, each world's bounded seeds, then the proof that
//! every planted defect of the table (`crate::defects`) is caught within the seed bound.

use std::time::Instant;

use crate::defects::{Planted, DEFECTS};
use crate::worlds::leases::{long_run, run_seed, Shape};
use crate::worlds::ranges::{run_ranges, Over};
use crate::worlds::state_file::run_state_file;
use crate::worlds::{hosts, service, shared_lease, windows};

pub(crate) fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
        })
}

/// The worlds a run is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sim {
    /// Leases over the in-memory store behind `Link`'s faults.
    Leases,
    /// Range sequences over in-memory stores.
    Ranges,
    /// Leases over the real etcd client, a simulated network and cluster.
    EtcdLeases,
    /// Range sequences over the real etcd client (one simulated cluster per store).
    EtcdRanges,
    /// Leases over the real PostgreSQL store, a simulated database behind its statement seam.
    PgLeases,
    /// Range sequences over the real PostgreSQL store (one simulated database per store).
    PgRanges,
    /// Leases over the embedded store (a directory deleted or replaced under running holders).
    FileLeases,
    /// Instances of the ID service and clients under their leases, on the in-memory store.
    Service,
    /// A fleet of hosts deriving their node IDs with the `ip` node source, minting.
    Hosts,
    /// The processes of hosts sharing one lease per host through a state file (real time, threads).
    SharedLease,
    /// The bindings' per-object ID windows (`snowmint_host::window`).
    Windows,
}

impl Sim {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Sim::Leases => "leases",
            Sim::Ranges => "ranges",
            Sim::EtcdLeases => "etcd leases",
            Sim::EtcdRanges => "etcd ranges",
            Sim::PgLeases => "postgres leases",
            Sim::PgRanges => "postgres ranges",
            Sim::FileLeases => "embedded leases",
            Sim::Service => "service",
            Sim::Hosts => "hosts",
            Sim::SharedLease => "shared lease",
            Sim::Windows => "windows",
        }
    }
    /// The replay option that selects this world.
    pub(crate) fn option(self) -> &'static str {
        match self {
            Sim::Leases => "",
            Sim::Ranges => " --ranges",
            Sim::EtcdLeases => " --etcd",
            Sim::EtcdRanges => " --ranges --etcd",
            Sim::PgLeases => " --postgres",
            Sim::PgRanges => " --ranges --postgres",
            Sim::FileLeases => " --embedded",
            Sim::Service => " --service",
            Sim::Hosts => " --hosts",
            Sim::SharedLease => " --shared-lease",
            Sim::Windows => " --windows",
        }
    }
    /// Steps of one seed of this world, from the lease world's `steps`.
    pub(crate) fn steps(self, steps: u64) -> u64 {
        match self {
            Sim::Leases => steps,
            Sim::Ranges | Sim::EtcdRanges | Sim::PgRanges => steps / 4,
            Sim::EtcdLeases | Sim::PgLeases | Sim::FileLeases | Sim::Service => steps / 2,
            Sim::Hosts => steps / 4,
            // Rounds (start, mint, exit or crash) of each process.
            Sim::SharedLease => (steps / 1_000).max(1),
            Sim::Windows => steps / 2,
        }
    }
    /// One seed of `steps` (this world's own).
    pub(crate) fn run(
        self,
        seed: u64,
        steps: u64,
        shape: Shape,
        p: Planted,
        trace: bool,
    ) -> std::result::Result<u64, String> {
        match self {
            Sim::Leases => run_seed(seed, Shape { steps, ..shape }, p.code, trace),
            Sim::FileLeases => run_seed(
                seed,
                Shape {
                    steps,
                    file: true,
                    ..shape
                },
                p.code,
                trace,
            ),
            Sim::EtcdLeases => run_seed(
                seed,
                Shape {
                    late_reservations: shape.late_reservations,
                    ..Shape::etcd(steps)
                },
                p.code,
                trace,
            ),
            Sim::PgLeases => run_seed(
                seed,
                Shape {
                    late_reservations: shape.late_reservations,
                    ..Shape::postgres(steps)
                },
                p.code,
                trace,
            ),
            Sim::Ranges => run_ranges(seed, steps, (p.code, p.store), Over::Memory, trace),
            Sim::EtcdRanges => run_ranges(seed, steps, (p.code, p.store), Over::Etcd, trace),
            Sim::PgRanges => run_ranges(seed, steps, (p.code, p.store), Over::Postgres, trace),
            Sim::Service => service::run_service(seed, steps, p.code, trace),
            Sim::Hosts => hosts::run_hosts(seed, steps, p.code, trace),
            Sim::SharedLease => shared_lease::run_shared_lease(seed, steps, p.code, trace),
            Sim::Windows => windows::run_windows(seed, steps, p.window, trace),
        }
    }
}

/// The simulation's command line (the crate's documentation lists its options).
pub fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |name: &str| args.iter().any(|a| a == name);
    let steps: u64 = arg(&args, "--steps").unwrap_or(4000);
    let shape = Shape {
        late_reservations: !has("--no-late-reservations"),
        ..Shape::bounded(steps)
    };
    if let Some(seed) = arg::<u64>(&args, "--replay") {
        let planted = match arg::<String>(&args, "--defect") {
            None => Planted::NONE,
            Some(name) => *DEFECTS
                .iter()
                .find(|p| p.name == name)
                .unwrap_or_else(|| panic!("--defect {name}: no such planted defect")),
        };
        let r = if has("--state-file") {
            run_state_file(seed, steps, &std::env::temp_dir(), true)
        } else {
            let world = match (has("--ranges"), has("--etcd")) {
                _ if has("--embedded") => Sim::FileLeases,
                _ if has("--service") => Sim::Service,
                _ if has("--hosts") => Sim::Hosts,
                _ if has("--shared-lease") => Sim::SharedLease,
                _ if has("--windows") => Sim::Windows,
                (false, _) if has("--postgres") => Sim::PgLeases,
                (true, _) if has("--postgres") => Sim::PgRanges,
                (false, false) => Sim::Leases,
                (true, false) => Sim::Ranges,
                (false, true) => Sim::EtcdLeases,
                (true, true) => Sim::EtcdRanges,
            };
            // `--steps` is the replayed world's own.
            world.run(seed, steps, shape, planted, true)
        };
        match r {
            Ok(n) => println!("seed {seed}: {n} IDs, no duplicate"),
            Err(e) => {
                println!("seed {seed}: FAILED: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    if has("--long") {
        long_run(arg(&args, "--ids").unwrap_or(1_000_000_000));
        return;
    }
    let seeds: u64 = arg(&args, "--seeds").unwrap_or(500);
    let first: u64 = arg(&args, "--first").unwrap_or(0);
    let defect_seeds: u64 = arg(&args, "--defect-seeds").unwrap_or(2000);
    let replay = |world: Sim, seed: u64, extra: &str| {
        println!(
            "  replay: cargo test -p snowmint-sim --test simulation -- --replay {seed} --steps {}{}{extra}{}",
            world.steps(steps),
            world.option(),
            if shape.late_reservations { "" } else { " --no-late-reservations" }
        );
    };
    let mut failed = false;
    if !has("--defects") {
        // Each world's seeds: (world, number of seeds, what its count is of).
        let worlds = [
            (Sim::Leases, seeds, "IDs"),
            (Sim::Ranges, seeds / 5, "values"),
            (Sim::EtcdLeases, seeds / 50, "IDs"),
            (Sim::EtcdRanges, seeds / 25, "values"),
            (Sim::PgLeases, seeds / 25, "IDs"),
            (Sim::PgRanges, seeds / 10, "values"),
            (Sim::FileLeases, seeds / 50, "IDs"),
            (Sim::Service, seeds / 25, "IDs"),
            (Sim::Hosts, seeds / 5, "IDs"),
            (Sim::SharedLease, seeds / 50, "IDs"),
            (Sim::Windows, seeds / 10, "IDs"),
        ];
        let only: Option<String> = arg(&args, "--world");
        let chosen = |name: &str| only.as_deref().is_none_or(|o| o == name);
        for (world, n, what) in worlds.into_iter().filter(|w| chosen(w.0.name())) {
            let t0 = Instant::now();
            let (mut count, mut w_failed) = (0, false);
            for seed in first..first + n {
                match world.run(seed, world.steps(steps), shape, Planted::NONE, false) {
                    Ok(k) => count += k,
                    Err(e) => {
                        println!("simulation: {}, seed {seed} FAILED: {e}", world.name());
                        replay(world, seed, "");
                        w_failed = true;
                    }
                }
            }
            println!(
                "simulation: {}, {n} seeds × {} {}, {count} {what}, {} ({:.1} s)",
                world.name(),
                world.steps(steps),
                match world {
                    Sim::SharedLease => "rounds per process",
                    _ => "steps",
                },
                if w_failed { "FAILED" } else { "no duplicate" },
                t0.elapsed().as_secs_f64()
            );
            failed |= w_failed;
        }
        let t0 = Instant::now();
        let state_file_seeds = if chosen("state file") { seeds / 50 } else { 0 };
        let dir = std::env::temp_dir().join(format!("snowmint-sim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let (mut ids, mut sf_failed) = (0, false);
        for seed in first..first + state_file_seeds {
            match run_state_file(seed, steps / 2, &dir, false) {
                Ok(n) => ids += n,
                Err(e) => {
                    println!("simulation: state file, seed {seed} FAILED: {e}");
                    println!(
                        "  replay: cargo test -p snowmint-sim --test simulation -- --replay {seed} --steps {} --state-file",
                        steps / 2
                    );
                    sf_failed = true;
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        println!(
            "simulation: state file, {} seeds × {} steps, 4 processes, {ids} IDs, {} ({:.1} s)",
            state_file_seeds,
            steps / 2,
            if sf_failed { "FAILED" } else { "no duplicate" },
            t0.elapsed().as_secs_f64()
        );
        failed |= sf_failed;
    }
    if !has("--no-defects") {
        // Each planted defect must be caught within the bound, or the simulation proves nothing.
        let only: Option<String> = arg(&args, "--defect");
        println!(
            "planted defect                                 world          seeds to catch   time"
        );
        for p in DEFECTS
            .iter()
            .filter(|p| only.as_deref().is_none_or(|o| o == p.name))
        {
            let t0 = Instant::now();
            let caught = (0..defect_seeds).find_map(|seed| {
                p.world
                    .run(seed, p.world.steps(steps), shape, *p, false)
                    .err()
                    .map(|e| (seed, e))
            });
            let world = p.world.name();
            match caught {
                Some((seed, e)) => println!(
                    "{:<46} {world:<14} {:>14} {:>6.1} s   {e}",
                    p.name,
                    seed + 1,
                    t0.elapsed().as_secs_f64()
                ),
                None => {
                    println!(
                        "{:<46} {world:<14} NOT caught in {defect_seeds} seeds",
                        p.name
                    );
                    failed = true;
                }
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
