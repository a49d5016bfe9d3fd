//! Properties over random layouts, IDs, strings and clock scripts.

use proptest::prelude::*;
use snowmint::{
    parse_any, Encoding, ErrorCode, Generator, Layout, LayoutConfig, Mint, Options, Order, Policy,
    SharedGenerator, ENCODINGS,
};

fn any_layout() -> impl Strategy<Value = Layout> {
    (
        1u32..=64,
        0u32..=63,
        0u32..=63,
        any::<bool>(),
        prop_oneof![
            Just(1u64),
            Just(100),
            Just(1_000_000),
            Just(10_000_000),
            1u64..5_000_000_000
        ],
        0u64..=2_000_000_000_000,
    )
        .prop_filter_map("fits", |(ts, node, seq, order, tick, epoch)| {
            Layout::new(LayoutConfig {
                timestamp_bits: ts,
                node_bits: node,
                sequence_bits: seq,
                order: if order {
                    Order::TimestampNodeSequence
                } else {
                    Order::TimestampSequenceNode
                },
                tick_ns: tick,
                epoch_ms: epoch,
                node_id_offset: 0,
                use_sign_bit: true,
                node_split_bits: 0,
            })
            .ok()
        })
}

/// IDs per step and steps per case of the generation properties (Miri, which interprets every step,
/// runs smaller cases).
const MAX_RUN: usize = if cfg!(miri) { 20 } else { 300 };
const MAX_STEPS: usize = if cfg!(miri) { 8 } else { 60 };

/// Any text of up to 24 characters; under Miri, where building the whole Unicode class costs minutes,
/// printable ASCII with some multi-byte characters.
const ARBITRARY_TEXT: &str = if cfg!(miri) {
    "[ -~é€😀]{0,24}"
} else {
    "\\PC{0,24}"
};

/// 2000 cases each, unless `PROPTEST_CASES` says otherwise (the Miri stage runs a few).
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn compose_then_decode_gives_the_fields_back(layout in any_layout(), t in any::<u64>(), n in any::<u64>(), s in any::<u64>()) {
        // A 64-bit timestamp field takes every tick.
        let tick = layout.max_tick().checked_add(1).map_or(t, |ticks| t % ticks);
        let node = n % layout.node_count();
        let seq = s % layout.ids_per_tick();
        let id = layout.compose(tick, node, seq).unwrap();
        let d = layout.decode(id).unwrap();
        prop_assert_eq!((d.timestamp_ticks, d.node, d.sequence), (tick, node, seq));
        prop_assert_eq!(layout.compose(d.timestamp_ticks, d.node, d.sequence).unwrap(), id);
        // Later ticks always give larger IDs.
        if tick < layout.max_tick() {
            prop_assert!(layout.compose(tick + 1, 0, 0).unwrap() > id);
        }
    }

    #[test]
    fn decode_rejects_or_round_trips_any_id(layout in any_layout(), id in any::<u64>()) {
        match layout.decode(id) {
            Ok(d) => prop_assert_eq!(layout.compose(d.timestamp_ticks, d.node, d.sequence).unwrap(), id),
            Err(e) => {
                prop_assert_eq!(e.code(), ErrorCode::InvalidId);
                prop_assert!(layout.total_bits() < 64 && id >> layout.total_bits() != 0);
            }
        }
    }

    #[test]
    fn every_string_form_round_trips_and_sorts(a in any::<u64>(), b in any::<u64>()) {
        for enc in ENCODINGS {
            let (sa, sb) = (enc.encode(a), enc.encode(b));
            prop_assert_eq!(enc.parse(sa.as_str()).unwrap(), a);
            // Auto-detection reads all-digit text as decimal; every other fixed-width form is recognised.
            if !sa.as_str().bytes().all(|c| c.is_ascii_digit()) {
                prop_assert_eq!(parse_any(sa.as_str()).unwrap(), a);
            }
            if enc != Encoding::Decimal {
                prop_assert_eq!(sa.as_str().len(), enc.width());
                prop_assert_eq!(sa.as_str().cmp(sb.as_str()), a.cmp(&b));
            }
        }
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(s in ARBITRARY_TEXT) {
        for enc in ENCODINGS {
            if let Err(e) = enc.parse(&s) {
                prop_assert_eq!(e.code(), ErrorCode::Parse);
            }
        }
        let _ = parse_any(&s);
    }

    #[test]
    fn generated_ids_strictly_increase_under_any_clock(
        steps in proptest::collection::vec((0u64..40_000, 1usize..MAX_RUN), 1..MAX_STEPS),
        policy in prop_oneof![Just(Policy::Wait), Just(Policy::Fail), Just(Policy::Strict)],
        seed in proptest::option::of(any::<u64>()),
    ) {
        let layout = Layout::preset("hazelcast").unwrap();
        let options = Options { policy, max_ahead_ns: 5_000_000, random_start_seed: seed };
        let Ok(mut g) = Generator::new(layout, 9, options) else {
            // Strict with a random start is refused (it could not keep the full per-tick capacity).
            prop_assert!(policy == Policy::Strict && seed.is_some());
            return Ok(());
        };
        let base_ns = 1_700_000_000_000u64 * 1_000_000;
        let mut last = None::<u64>;
        let mut latest = 0u64;
        let mut out = vec![0u64; MAX_RUN];
        for (offset_us, n) in steps {
            let now = base_ns + offset_us * 1_000;
            latest = latest.max(now);
            match g.next_ids_at(now, &mut out[..n]) {
                Ok(Mint::Ready(())) => {
                    for &id in &out[..n] {
                        prop_assert!(last.map_or(true, |l| id > l));
                        last = Some(id);
                        let d = layout.decode(id).unwrap();
                        prop_assert_eq!(d.node, 9);
                        // Never more than max_ahead (+ the current tick) ahead of the clock.
                        prop_assert!(d.unix_ms * 1_000_000 <= now + 6_000_000);
                    }
                }
                // A wait covers at most how far the clock fell back, plus max_ahead and the batch's ticks.
                Ok(Mint::Wait(ns)) => prop_assert!(policy != Policy::Fail && ns > 0 && ns <= latest - now + 11_000_000),
                Err(e) => prop_assert!(matches!(e.code(), ErrorCode::TooFarAhead | ErrorCode::ClockMovedBackwards | ErrorCode::InvalidArgument), "{e}"),
            }
        }
    }

    #[test]
    fn an_ids_iterator_gives_exactly_what_a_batch_writes(
        layout in prop_oneof![
            any_layout(),
            Just(Layout::preset("decimal").unwrap()),
            Just(Layout::preset("sonyflake").unwrap()),
        ],
        seed in prop::option::of(any::<u64>()),
        steps in prop::collection::vec((0u64..20_000, 0usize..MAX_RUN), 1..12),
    ) {
        let options = Options { random_start_seed: seed, ..Options::default() };
        let Ok(mut a) = Generator::new(layout, 0, options) else { return Ok(()) };
        let mut b = Generator::new(layout, 0, options).unwrap();
        let shared = SharedGenerator::new(layout, 0, options).unwrap();
        let base_ns = 1_700_000_000_000u64 * 1_000_000;
        let mut out = vec![0u64; MAX_RUN];
        for (offset_us, n) in steps {
            let now = base_ns + offset_us * 1_000;
            let written = a.next_ids_at(now, &mut out[..n]);
            let iterated = collected(b.next_ids_iter_at(now, n));
            match (&written, &iterated) {
                (Ok(Mint::Ready(())), Ok(Mint::Ready(ids))) => prop_assert_eq!(&ids[..], &out[..n]),
                (Ok(Mint::Wait(x)), Ok(Mint::Wait(y))) => prop_assert_eq!(x, y),
                (Err(x), Err(y)) => prop_assert_eq!(x.code(), y.code()),
                (x, y) => prop_assert!(false, "batch {x:?}, iterator {y:?}"),
            }
            let from_shared = collected(shared.next_ids_iter_at(now, n));
            prop_assert_eq!(format!("{from_shared:?}"), format!("{iterated:?}"));
            prop_assert_eq!(a.state(), b.state());
            prop_assert_eq!(a.state(), shared.state());
        }
    }
}

/// An iterator's IDs, collected (checking its exact length on the way).
fn collected(r: snowmint::Result<Mint<snowmint::Ids<'_>>>) -> snowmint::Result<Mint<Vec<u64>>> {
    r.map(|m| match m {
        Mint::Ready(ids) => {
            let n = ids.len();
            let v: Vec<u64> = ids.collect();
            assert_eq!(v.len(), n);
            Mint::Ready(v)
        }
        Mint::Wait(ns) => Mint::Wait(ns),
    })
}

/// The widest timestamp field: 64 bits, no node or sequence bits, every u64 a tick (the random
/// layouts reach it about once in 260,000 cases; at a 1 ns tick its lifespan fits).
#[test]
fn a_64_bit_timestamp_field_round_trips_every_tick() {
    let layout = Layout::new(LayoutConfig {
        timestamp_bits: 64,
        node_bits: 0,
        sequence_bits: 0,
        order: Order::TimestampNodeSequence,
        tick_ns: 1,
        epoch_ms: 0,
        node_id_offset: 0,
        use_sign_bit: true,
        node_split_bits: 0,
    })
    .unwrap();
    assert_eq!(layout.max_tick(), u64::MAX);
    for tick in [0, 1, u64::MAX / 2, u64::MAX - 1, u64::MAX] {
        let id = layout.compose(tick, 0, 0).unwrap();
        let d = layout.decode(id).unwrap();
        assert_eq!((d.timestamp_ticks, d.node, d.sequence), (tick, 0, 0));
    }
}
