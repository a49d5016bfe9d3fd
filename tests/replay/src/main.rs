//! Replays one case of `tests/vectors/generate.json` (a layout, a node ID, a policy and a scripted clock)
//! and prints each minted ID in decimal, one per line (`error CODE` for a failing step). With `--live N`
//! mints N IDs from the system clock (Twitter layout, node 7). Used by the README's demo to show every
//! runtime minting the same IDs.
//!
//! `cargo run -p snowmint-replay -- CASE.json` or `… -- --live 3`.

use std::cell::Cell;

use serde_json::Value;
use snowmint::{Clock, Layout, LayoutConfig, Options, Order, Policy, SharedGenerator};

fn num(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().expect("u64 as a decimal string"),
        Value::Number(n) => n.as_u64().expect("a whole number"),
        _ => panic!("not a number: {v}"),
    }
}

fn layout(spec: &Value) -> Result<Layout, snowmint::Error> {
    if let Some(name) = spec.get("preset").and_then(Value::as_str) {
        return match name {
            "snowcast" => Layout::snowcast(num(&spec["epoch_ms"]), num(&spec["node_count"])),
            "hazelcast" => Layout::hazelcast(spec.get("node_id_offset").map_or(0, num)),
            other => Layout::preset(other),
        };
    }
    let bits = |k: &str| num(&spec[k]).try_into().unwrap_or(u32::MAX);
    Layout::new(LayoutConfig {
        timestamp_bits: bits("timestamp_bits"),
        node_bits: bits("node_bits"),
        sequence_bits: bits("sequence_bits"),
        order: Order::from_name(spec["order"].as_str().unwrap_or(""))?,
        tick_ns: num(&spec["tick_ns"]),
        epoch_ms: num(&spec["epoch_ms"]),
        node_id_offset: spec.get("node_id_offset").map_or(0, num),
        use_sign_bit: spec
            .get("use_sign_bit")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        node_split_bits: 0,
    })
}

/// Returns the step's readings in order, then repeats the last one.
struct Script<'a> {
    readings: Cell<&'a [Value]>,
    unit: snowmint::ClockUnit,
}

impl Clock for Script<'_> {
    fn now_ns(&self) -> snowmint::Result<u64> {
        let r = self.readings.get();
        if r.len() > 1 {
            self.readings.set(&r[1..]);
        }
        self.unit.to_ns(num(&r[0]))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--live") {
        let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
        let gen = SharedGenerator::new(Layout::twitter(), 7, Options::default()).unwrap();
        for _ in 0..n {
            println!("{}", gen.next_id().unwrap());
        }
        return;
    }
    let text =
        std::fs::read_to_string(args.first().expect("usage: replay CASE.json | --live N")).unwrap();
    let case: Value = serde_json::from_str(&text).unwrap();
    let result = layout(&case["layout"]).and_then(|layout| {
        let options = Options {
            policy: Policy::from_name(
                case.get("policy").and_then(Value::as_str).unwrap_or("wait"),
            )?,
            max_ahead_ns: case.get("max_ahead_ms").map_or(15_000, num) * 1_000_000,
            random_start_seed: case.get("random_seed").map(num),
        };
        SharedGenerator::new(layout, num(&case["node_id"]), options)
    });
    let gen = match result {
        Ok(gen) => gen,
        Err(e) => return println!("error {}", e.code()),
    };
    for step in case["steps"].as_array().into_iter().flatten() {
        let clock = Script {
            readings: Cell::new(step["clock"].as_array().unwrap()),
            unit: gen.layout().clock_unit(),
        };
        let count = num(&step["count"]) as usize;
        let outcome = if step["op"] == "batch" {
            let mut out = vec![0; count];
            gen.next_ids_with(&clock, snowmint::sleep_ns, &mut out)
                .map(|()| out)
        } else {
            (0..count).map(|_| gen.next_id_from(&clock)).collect()
        };
        match outcome {
            Ok(ids) => ids.iter().for_each(|id| println!("{id}")),
            Err(e) => println!("error {}", e.code()),
        }
    }
}
