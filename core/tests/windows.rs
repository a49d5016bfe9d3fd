//! Windows (`SharedGenerator::next_id_in`, and `next_id_with` on the thread's own window) against
//! minting one by one, on scripted clocks: a single holder must mint exactly the IDs, errors, statistics
//! and high-water marks of the plain `Generator` called for every reading; several holders interleaved
//! must mint only what one-by-one minting allows (unique IDs, each holder's strictly increasing, never a
//! tick the clock had not reached unless one-by-one minting would have borrowed it too, `minted` exact
//! once the windows are closed, the state word past every ID).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use snowmint::{
    Generator, Layout, LayoutConfig, Options, Policy, Result, SharedGenerator, Window, MAX_WINDOW,
};

const NS_PER_MS: u64 = 1_000_000;
const START_MS: u64 = 1_700_000_000_000;
const STEPS: usize = if cfg!(miri) { 60 } else { 4000 };
const SEEDS: u64 = if cfg!(miri) { 1 } else { 12 };

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn layout(sequence_bits: u32) -> Layout {
    Layout::new(LayoutConfig {
        sequence_bits,
        ..LayoutConfig::default()
    })
    .unwrap()
}

fn options(rng: &mut Rng) -> Options {
    let policy = [Policy::Wait, Policy::Fail, Policy::Strict][rng.below(3) as usize];
    let max_ahead_ns = rng.below(4) * NS_PER_MS;
    let random = policy != Policy::Strict && max_ahead_ns != 0 && rng.below(2) == 0;
    Options {
        policy,
        max_ahead_ns,
        random_start_seed: random.then_some(rng.next()),
    }
}

/// A clock script step: mostly the same millisecond (so windows grow), sometimes the next ones,
/// sometimes a step back.
fn step(rng: &mut Rng, now: u64) -> u64 {
    match rng.below(20) {
        0 => now.saturating_sub(rng.below(3) * NS_PER_MS),
        1..=3 => now + NS_PER_MS * (1 + rng.below(2)),
        _ => now + rng.below(1000),
    }
}

/// How a holder mints: through an explicit window; through the thread's own; or as a binding that holds
/// its window in place does (`try_next_id_in` first, `next_id_in` where that would wait).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Holder {
    Window,
    Thread,
    InPlaceFirst,
}

/// Sleeps never happen in these scripts: `Fail` errors, and `Wait`/`Strict` move the script's clock.
fn mint_one(gen: &SharedGenerator, holder: Holder, w: &mut Window, now: &Cell<u64>) -> Result<u64> {
    let clock = || Ok(now.get());
    let sleep = |ns: u64| now.set(now.get() + ns);
    match holder {
        Holder::Window => gen.next_id_in(w, &clock, sleep),
        Holder::Thread => gen.next_id_with(&clock, sleep),
        Holder::InPlaceFirst => match gen.try_next_id_in(w, &clock) {
            Some(r) => r,
            None => gen.next_id_in(w, &clock, sleep),
        },
    }
}

/// One holder: exactly one-by-one minting, whether through an explicit window, the thread's own, or a
/// window held in place.
#[test]
fn a_single_holder_mints_exactly_what_one_by_one_minting_does() {
    for seed in 1..=SEEDS {
        for (k, holder) in [Holder::Window, Holder::Thread, Holder::InPlaceFirst]
            .into_iter()
            .enumerate()
        {
            let thread_window = holder == Holder::Thread;
            let mut rng = Rng(seed * 0x9E37_79B9 + k as u64);
            let sb = [0, 1, 3, 6][rng.below(4) as usize];
            let opts = options(&mut rng);
            let (l, node) = (layout(sb), 5);
            let shared = SharedGenerator::new(l, node, opts).unwrap();
            let mut plain = Generator::new(l, node, opts).unwrap();
            let mut w = Window::EMPTY;
            let (a, b) = (
                Cell::new(START_MS * NS_PER_MS),
                Cell::new(START_MS * NS_PER_MS),
            );
            let mut grown = false;
            for i in 0..STEPS {
                let t = step(&mut rng, a.get());
                a.set(t);
                b.set(t);
                let got = mint_one(&shared, holder, &mut w, &a);
                let want = plain.next_id_with(&|| Ok(b.get()), |ns| b.set(b.get() + ns));
                assert_eq!(got, want, "seed {seed} step {i}");
                assert_eq!(a.get(), b.get(), "the same waits");
                grown |= w.rest() > 1;
                if rng.below(50) == 0 {
                    // Anything else closes the window first: state, stats, a batch.
                    if !thread_window {
                        shared.close_window(&mut w);
                    }
                    assert_eq!(shared.state(), plain.state(), "seed {seed} step {i}");
                    assert_eq!(shared.stats(), plain.stats(), "seed {seed} step {i}");
                    let (mut x, mut y) = ([0u64; 3], [0u64; 3]);
                    let r1 =
                        shared.next_ids_with(&|| Ok(a.get()), |ns| a.set(a.get() + ns), &mut x);
                    let r2 = plain.next_ids_with(&|| Ok(b.get()), |ns| b.set(b.get() + ns), &mut y);
                    assert_eq!((r1, x), (r2, y));
                }
            }
            if !thread_window {
                shared.close_window(&mut w);
                assert!(grown || sb < 3, "windows grew past one position");
            }
            assert_eq!(shared.state(), plain.state());
            assert_eq!(shared.stats(), plain.stats());
        }
    }
}

/// Several holders interleaved on one clock: only what one-by-one minting allows.
#[test]
fn interleaved_holders_mint_only_what_one_by_one_minting_allows() {
    for seed in 1..=SEEDS {
        let mut rng = Rng(seed * 0x85EB_CA6B);
        let sb = [2, 4, 8][rng.below(3) as usize];
        let opts = Options {
            policy: Policy::Fail,
            max_ahead_ns: rng.below(3) * NS_PER_MS,
            random_start_seed: None,
        };
        let l = layout(sb);
        let shared = SharedGenerator::new(l, 1, opts).unwrap();
        let holders = 1 + rng.below(4) as usize;
        let mut windows = vec![Window::EMPTY; holders];
        let mut minted: Vec<Vec<u64>> = vec![Vec::new(); holders];
        let now = Cell::new(START_MS * NS_PER_MS);
        for _ in 0..STEPS {
            let t = step(&mut rng, now.get());
            now.set(t.max(now.get()));
            let h = rng.below(holders as u64) as usize;
            let reading_tick = l.tick_at_ns(now.get()).unwrap();
            let position = |id: u64| {
                let d = l.decode(id).unwrap();
                d.timestamp_ticks << sb | d.sequence
            };
            // One by one from where the generator stands (every position any window took counts as
            // taken): what this holder must mint when it has nothing left in its window.
            let mut reference = Generator::new(l, 1, opts).unwrap();
            reference.restore(shared.state());
            let want = reference.next_id_with(&|| Ok(now.get()), |_| {});
            let held = windows[h].rest();
            let holder = [Holder::Window, Holder::InPlaceFirst][seed as usize % 2];
            let got = mint_one(&shared, holder, &mut windows[h], &now);
            match minted[h].last() {
                // Still in the tick of its last ID, with positions left: the next one.
                Some(&last)
                    if held > 0 && l.decode(last).unwrap().timestamp_ticks == reading_tick =>
                {
                    assert_eq!(got.map(position), Ok(position(last) + 1), "seed {seed}")
                }
                // Nothing left: exactly one-by-one minting.
                _ if held == 0 => assert_eq!(got, want, "seed {seed}"),
                // A new tick: the rest goes back or is skipped; then one by one.
                _ => {}
            }
            let Ok(id) = got else {
                continue;
            };
            let d = l.decode(id).unwrap();
            assert!(
                d.timestamp_ticks >= reading_tick,
                "an ID before its reading's tick"
            );
            assert!(
                d.timestamp_ticks <= reading_tick + opts.max_ahead_ns / NS_PER_MS,
                "past max_ahead"
            );
            if let Some(last) = minted[h].last() {
                assert!(id > *last, "holder {h}: {id} after {last}");
            }
            minted[h].push(id);
        }
        for w in &mut windows {
            assert!(w.rest() <= MAX_WINDOW);
            shared.close_window(w);
        }
        let mut all: Vec<u64> = minted.concat();
        let n = all.len() as u64;
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len() as u64, n, "seed {seed}: duplicate IDs");
        assert_eq!(
            shared.stats().minted,
            n,
            "seed {seed}: minted counts IDs handed out"
        );
        let last = l.decode(*all.last().unwrap()).unwrap();
        assert!(shared.state() > (last.timestamp_ticks << sb | last.sequence));
    }
}

/// A window never hands out past its generator's ceiling: a lowered ceiling (a lease released, lost or
/// forked away) stops the very next ID, even with positions left in the window.
#[test]
fn a_lowered_ceiling_stops_the_window_at_once() {
    let l = layout(12);
    let state = Arc::new(AtomicU64::new(0));
    let ceiling = Arc::new(AtomicU64::new(u64::MAX));
    let gen =
        SharedGenerator::with_ceiling(l, 1, Options::default(), state.clone(), ceiling.clone())
            .unwrap();
    let now = START_MS * NS_PER_MS;
    let mut w = Window::EMPTY;
    for _ in 0..8 {
        gen.next_id_in(&mut w, &|| Ok(now), |_| {}).unwrap();
    }
    assert!(w.rest() > 0, "the window holds positions ahead");
    ceiling.store(0, Ordering::SeqCst);
    assert_eq!(
        gen.next_id_in(&mut w, &|| Ok(now), |_| {}),
        Err(snowmint::Error::LeaseLost)
    );
    assert_eq!(gen.stats().minted, 8);
    // The thread's own window, likewise.
    ceiling.store(u64::MAX, Ordering::SeqCst);
    for _ in 0..8 {
        gen.next_id_with(&|| Ok(now), |_| {}).unwrap();
    }
    ceiling.store(0, Ordering::SeqCst);
    assert_eq!(
        gen.next_id_with(&|| Ok(now), |_| {}),
        Err(snowmint::Error::LeaseLost)
    );
    assert_eq!(gen.stats().minted, 16);
}

/// An ID of a borrowed tick (the clock's tick used up) is minted as one by one: no window holds it
/// (one compare-and-swap, nothing to close or credit), so `minted` counts it at once.
#[test]
fn a_borrowed_tick_is_minted_without_a_window() {
    let gen = SharedGenerator::new(layout(2), 1, Options::default()).unwrap();
    let now = START_MS * NS_PER_MS;
    let mut w = Window::EMPTY;
    let ids: Vec<u64> = (0..7)
        .map(|_| gen.next_id_in(&mut w, &|| Ok(now), |_| {}).unwrap())
        .collect();
    assert!(ids.windows(2).all(|p| p[0] < p[1]), "{ids:?}");
    // Four IDs of the clock's tick (windows of 1, 2 and the tick's last one), three borrowed: every
    // one counted though `w` is still the caller's, unclosed.
    assert_eq!(w.rest(), 0);
    assert_eq!(gen.stats().minted, 7);
    assert_eq!(
        gen.state(),
        7 + ((START_MS - Layout::twitter().epoch_ms()) << 2)
    );
}

/// Threads on one generator's thread windows: unique, each thread's increasing, `minted` exact once
/// the threads have exited (their windows' rests are counted as unused).
#[test]
fn threads_on_their_own_windows() {
    let gen = SharedGenerator::new(layout(12), 2, Options::default()).unwrap();
    let per = if cfg!(miri) { 50 } else { 20_000 };
    let ids: Vec<Vec<u64>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    let v: Vec<u64> = (0..per).map(|_| gen.next_id().unwrap()).collect();
                    assert!(v.windows(2).all(|p| p[0] < p[1]));
                    v
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all = ids.concat();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 3 * per);
    assert_eq!(gen.stats().minted, 3 * per as u64);
    // Strictly ordered: one compare-and-swap per ID, IDs in the order they were minted.
    let ordered = SharedGenerator::new(layout(12), 2, Options::default())
        .unwrap()
        .ordered(true);
    assert!(ordered.is_ordered());
    let a = ordered.next_id().unwrap();
    assert_eq!(ordered.state() & 0xFFF, (a & 0xFFF) + 1);
}

/// A forked child drops the window it inherited: nothing goes back to the word (the parent hands the
/// rest out), and what it handed out before the fork counts as minted, as at a close.
#[test]
fn an_abandoned_window_gives_nothing_back_and_counts_what_it_handed_out() {
    let l = layout(8);
    let now = START_MS * NS_PER_MS;
    let [kept, dropped] = [(); 2].map(|_| SharedGenerator::new(l, 1, Options::default()).unwrap());
    let (mut a, mut b) = (Window::EMPTY, Window::EMPTY);
    for (g, w) in [(&kept, &mut a), (&dropped, &mut b)] {
        // Windows of 1, 2 and 4 positions: 7 IDs, the last window's 4th position taken.
        for _ in 0..7 {
            g.next_id_in(w, &|| Ok(now), |_| {}).unwrap();
        }
        assert_eq!(w.rest(), 0);
        // A fresh window of 8 positions: one ID when taken, the next one in place.
        let first = g.try_next_id_in(w, &|| Ok(now)).unwrap().unwrap();
        assert_eq!(g.try_next_id_in(w, &|| Ok(now)), Some(Ok(first + 1)));
        assert_eq!(w.rest(), 6);
    }
    let word = dropped.state_holder().load(Ordering::Relaxed);
    dropped.abandon_window(&mut b);
    assert_eq!(b.rest(), 0);
    assert_eq!(
        dropped.state_holder().load(Ordering::Relaxed),
        word,
        "nothing given back"
    );
    assert_eq!(dropped.stats().minted, 9);
    kept.close_window(&mut a);
    assert_eq!(
        kept.state_holder().load(Ordering::Relaxed),
        word - 6,
        "the rest given back"
    );
    assert_eq!(kept.stats().minted, 9);
}
