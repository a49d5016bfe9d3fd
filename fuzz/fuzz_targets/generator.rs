//! The generation rule under arbitrary clocks: any sequence of readings (backwards, frozen, huge jumps,
//! before the epoch, past the lifespan) and batch sizes, under each policy and sequence start, on a
//! preset layout. Never a panic; every ID minted is greater than the one before; a persisted state
//! restored into a new generator never lets it repeat.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use snowmint::{Generator, Layout, Options, Policy, PRESET_NAMES};

#[derive(Arbitrary, Debug)]
struct Input {
    preset: u8,
    node_id: u16,
    strict: bool,
    random_start: bool,
    seed: u64,
    max_ahead_ms: u16,
    steps: Vec<(u64, u8)>,
}

fuzz_target!(|i: Input| {
    let Ok(layout) = Layout::preset(PRESET_NAMES[i.preset as usize % PRESET_NAMES.len()]) else {
        return;
    };
    let options = Options {
        // `wait` would sleep: the fuzzer's clock is not real time.
        policy: if i.strict { Policy::Strict } else { Policy::Fail },
        max_ahead_ns: u64::from(i.max_ahead_ms) * 1_000_000,
        random_start_seed: i.random_start.then_some(i.seed),
    };
    let Ok(mut g) = Generator::new(layout, u64::from(i.node_id), options) else { return };
    let mut last = None;
    let mut buf = [0u64; 64];
    for (k, &(reading_ms, n)) in i.steps.iter().take(256).enumerate() {
        let now = reading_ms.saturating_mul(1_000_000);
        let clock = || Ok(now);
        let got: &[u64] = if n % 4 == 0 {
            let out = &mut buf[..(n as usize % 64).max(1)];
            match g.next_ids_with(&clock, |_| {}, out) {
                Ok(()) => out,
                Err(_) => &[],
            }
        } else {
            match g.next_id_from(&clock) {
                Ok(id) => {
                    buf[0] = id;
                    &buf[..1]
                }
                Err(_) => &[],
            }
        };
        for &id in got {
            assert!(last.map_or(true, |l| id > l), "step {k}: {id} after {last:?}");
            last = Some(id);
        }
        if k == 128 {
            // A restart from the persisted high-water mark, clock unchanged: never a repeat.
            let state = g.state();
            g = Generator::new(layout, u64::from(i.node_id), options).expect("same options");
            g.restore(state);
        }
    }
});
