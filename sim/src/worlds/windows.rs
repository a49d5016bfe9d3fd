//! The windows world (`--world windows`, `--replay SEED --windows`): the per-object ID windows of the
//! Python and Node bindings (`snowmint_host::window::OwnWindow`, `host/src/window.rs`), driven as the
//! bindings drive them, on a simulated clock. Four binding objects of one process mint from the
//! generators of a host's two node IDs (one state word each, as generators on one state file share
//! it): each object one ID at a time through its own window, in place (`try_mint_from`) or, where a
//! wait may begin, taken out of the cell (`mint_from`) while its sleep runs, and a sleep may let
//! another call of the same object in (Python's GIL released during the wait: the window put back
//! last is kept, the other closed). An object's lease changes now and then (its next generator is
//! another node ID's, as a lease source's generator is after a lease was lost and another taken: the
//! window of the earlier one must be closed, never handed out under the new one), and it closes its
//! window (before a batch, its statistics, a release); the host's clock steps back up to 3 ms now and
//! then, so that waits also end inside a tick that windows are taken in. After every ID: no ID twice across the objects,
//! and each object's IDs under one generator strictly increasing (SPEC §2; the window's promise: the
//! object's next ID follows every ID it handed out).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use snowmint::{ErrorCode, Layout, LayoutConfig, Options, Policy};

use crate::clock::{trace_line, MS, START_UNIX_NS};
use crate::rng::Rng;
use snowmint::{Clock, SharedGenerator};
use snowmint_host::window::{OwnWindow, WindowDefect};
use std::cell::RefCell;

/// The simulated clock: the true time, read by every object.
struct Now<'a>(&'a AtomicU64);

impl Clock for Now<'_> {
    fn now_ns(&self) -> snowmint::Result<u64> {
        Ok(self.0.load(Ordering::SeqCst))
    }
}

/// What the checker keeps: every ID, and per object the generator it mints under and its last ID.
struct Seen {
    ids: HashSet<u64>,
    last: Vec<(usize, Option<u64>)>,
    minted: u64,
    /// Waits (sleeps of `mint_from`), and the calls a sleep let in.
    waits: u64,
    nested: u64,
}

impl Seen {
    fn note(&mut self, object: usize, node: usize, id: u64) -> std::result::Result<(), String> {
        if !self.ids.insert(id) {
            return Err(format!(
                "windows: object {object} (node {node}): ID {id} was minted before"
            ));
        }
        let (on, last) = &mut self.last[object];
        if *on != node {
            (*on, *last) = (node, None);
        }
        if let Some(l) = last.filter(|&l| id <= l) {
            return Err(format!(
                "windows: object {object} (node {node}): ID {id} does not follow its ID {l}"
            ));
        }
        *last = Some(id);
        self.minted += 1;
        Ok(())
    }
}

/// One seed of the windows world: the IDs minted.
pub(crate) fn run_windows(
    seed: u64,
    steps: u64,
    defect: Option<WindowDefect>,
    trace: bool,
) -> std::result::Result<u64, String> {
    const OBJECTS: usize = 4;
    const NODES: usize = 2;
    let rng = RefCell::new(Rng(seed ^ 0x0057_1D05));
    let now = AtomicU64::new(START_UNIX_NS);
    let clock = Now(&now);
    let layout = Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits: 2,
        sequence_bits: 4,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .expect("the simulation's layout");
    // A wait begins once a tick's 16 positions and 1 ms ahead are used: the sleeps `mint_from` runs.
    let options = Options {
        policy: Policy::Wait,
        max_ahead_ns: MS,
        ..Options::default()
    };
    let generators: Vec<SharedGenerator<AtomicU64>> = (0..NODES)
        .map(|n| SharedGenerator::new(layout, n as u64, options).expect("a generator"))
        .collect();
    let windows: Vec<OwnWindow<SharedGenerator<AtomicU64>>> = (0..OBJECTS)
        .map(|_| match defect {
            Some(d) => OwnWindow::planted(d),
            None => OwnWindow::new(),
        })
        .collect();
    let mut node_of: Vec<usize> = (0..OBJECTS).map(|o| o % NODES).collect();
    let seen = RefCell::new(Seen {
        ids: HashSet::new(),
        last: node_of.iter().map(|&n| (n, None)).collect(),
        minted: 0,
        waits: 0,
        nested: 0,
    });
    let log = |step: u64, what: &dyn Fn() -> String| trace_line(trace, step, &now, what);
    // One ID of object `o` under node `n`'s generator, as the binding's `next_id` mints it. `nest`: its
    // sleep may let one more call of the object in (that call's own sleep lets none in).
    fn one(
        o: usize,
        n: usize,
        nest: bool,
        w: &OwnWindow<SharedGenerator<AtomicU64>>,
        g: &SharedGenerator<AtomicU64>,
        (clock, rng, seen): (&Now<'_>, &RefCell<Rng>, &RefCell<Seen>),
    ) -> std::result::Result<(), String> {
        // SAFETY: one call at a time reaches the window (this thread), but for the call a sleep lets
        // in, which the window's rules allow (the cell is empty while the sleep runs); every generator
        // outlives the windows.
        let r = match unsafe { w.try_mint_from(g, clock) } {
            Some(r) => r,
            None => {
                let mut inner: std::result::Result<(), String> = Ok(());
                let sleep = |ns: u64| {
                    // A sleep lasts what it was asked, or (the scheduler's delay) up to 2 ms more.
                    let over = {
                        let mut r = rng.borrow_mut();
                        match r.chance(50) {
                            true => r.below(2 * MS),
                            false => 0,
                        }
                    };
                    clock.0.fetch_add(ns.max(1) + over, Ordering::SeqCst);
                    let go = nest && rng.borrow_mut().chance(40);
                    seen.borrow_mut().waits += 1;
                    if go && inner.is_ok() {
                        // Another thread's calls on the object, while this one waits (1 to 6 IDs).
                        let k = 1 + rng.borrow_mut().below(6);
                        seen.borrow_mut().nested += k;
                        for _ in 0..k {
                            if inner.is_ok() {
                                inner = one(o, n, false, w, g, (clock, rng, seen));
                            }
                        }
                    }
                };
                // SAFETY: as above.
                let r = unsafe { w.mint_from(g, clock, sleep) };
                inner?;
                r
            }
        };
        let id = match r {
            Ok(id) => id,
            // A step back past what the policy waits out.
            Err(e) if e.code() == ErrorCode::ClockMovedBackwards => return Ok(()),
            Err(e) => {
                return Err(format!(
                    "windows: object {o}: unexpected error {}: {e}",
                    e.code()
                ))
            }
        };
        seen.borrow_mut().note(o, n, id)
    }
    for step in 1..=steps {
        now.fetch_add(rng.borrow_mut().below(MS / 4), Ordering::SeqCst);
        let (o, roll) = {
            let mut r = rng.borrow_mut();
            (r.below(OBJECTS as u64) as usize, r.below(100))
        };
        match roll {
            0..=79 => {
                let k = 1 + rng.borrow_mut().below(16);
                let n = node_of[o];
                for _ in 0..k {
                    one(
                        o,
                        n,
                        true,
                        &windows[o],
                        &generators[n],
                        (&clock, &rng, &seen),
                    )?;
                }
                log(step, &|| format!("object {o} (node {n}) mints {k}"));
            }
            80..=87 => {
                // Its lease changes: the next generator is another node ID's.
                let n = rng.borrow_mut().below(NODES as u64) as usize;
                node_of[o] = n;
                log(step, &|| format!("object {o}'s lease changes: node {n}"));
            }
            88..=90 if now.load(Ordering::SeqCst) > START_UNIX_NS + 10 * MS => {
                // The host's clock steps back (NTP): the objects' next calls wait for it to catch up,
                // and a wait lets other calls in while the clock is in a tick they mint in.
                let d = rng.borrow_mut().below(3 * MS);
                now.fetch_sub(d, Ordering::SeqCst);
                log(step, &|| format!("the clock steps back {} µs", d / 1_000));
            }
            88..=93 => {
                // SAFETY: as in `one`.
                unsafe { windows[o].close() };
                log(step, &|| format!("object {o} closes its window"));
            }
            _ => {
                let d = rng.borrow_mut().below(3 * MS);
                now.fetch_add(d, Ordering::SeqCst);
                log(step, &|| format!("{} µs pass", d / 1_000));
            }
        }
    }
    for w in &windows {
        // SAFETY: as in `one`.
        unsafe { w.close() };
    }
    let seen = seen.into_inner();
    if trace {
        println!(
            "windows: {} IDs, {} waits, {} calls let in by waits",
            seen.minted, seen.waits, seen.nested
        );
    }
    Ok(seen.minted)
}
