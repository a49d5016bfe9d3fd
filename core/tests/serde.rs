//! The `serde` feature: round trips, the wire form, and that no invalid `Layout` comes through serde
//! (every rejection is the error `Layout::new` gives). Run with `cargo test -p snowmint --features serde`.
#![cfg(feature = "serde")]

use proptest::prelude::*;
use serde_json::{json, Value};
use snowmint::{Decoded, Layout, LayoutConfig, Order, PRESET_NAMES};

fn every_layout() -> Vec<Layout> {
    let mut v: Vec<Layout> = PRESET_NAMES
        .iter()
        .filter(|&&n| n != "snowcast")
        .map(|n| Layout::preset(n).unwrap())
        .collect();
    v.push(Layout::snowcast(1_704_067_200_000, 128).unwrap());
    v.push(Layout::snowcast(0, 8192).unwrap());
    v.push(Layout::snowcast(5, 300).unwrap()); // rounded up to 512
    v.push(Layout::hazelcast(100).unwrap());
    v.push(
        Layout::new(LayoutConfig {
            timestamp_bits: 64,
            node_bits: 0,
            sequence_bits: 0,
            tick_ns: 1,
            use_sign_bit: true,
            epoch_ms: 0,
            ..LayoutConfig::default()
        })
        .unwrap(),
    );
    v.push(
        Layout::new(LayoutConfig {
            timestamp_bits: 40,
            node_bits: 8,
            sequence_bits: 15,
            order: Order::TimestampSequenceNode,
            tick_ns: 250,
            epoch_ms: 1_704_067_200_000,
            node_id_offset: 7,
            use_sign_bit: false,
            node_split_bits: 3,
        })
        .unwrap(),
    );
    v
}

/// The config fields of `l` as JSON, with `preset`.
fn wire(preset: Value, c: &LayoutConfig) -> Value {
    json!({
        "preset": preset,
        "timestamp_bits": c.timestamp_bits,
        "node_bits": c.node_bits,
        "sequence_bits": c.sequence_bits,
        "order": c.order.name(),
        "tick_ns": c.tick_ns,
        "epoch_ms": c.epoch_ms,
        "node_id_offset": c.node_id_offset,
        "use_sign_bit": c.use_sign_bit,
        "node_split_bits": c.node_split_bits,
    })
}

#[test]
fn layouts_round_trip() {
    for l in every_layout() {
        let v = serde_json::to_value(l).unwrap();
        assert_eq!(
            v,
            wire(json!(l.preset_name()), l.config()),
            "wire form of {l:?}"
        );
        let back: Layout = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.preset_name(), l.preset_name());
        assert_eq!(back.fingerprint(), l.fingerprint());
        // From a string too (serde_json's borrowed path), and the config alone.
        let text = serde_json::to_string(&l).unwrap();
        assert_eq!(serde_json::from_str::<Layout>(&text).unwrap(), l);
        let cfg: LayoutConfig =
            serde_json::from_str(&serde_json::to_string(l.config()).unwrap()).unwrap();
        assert_eq!(&cfg, l.config());
    }
}

#[test]
fn decoded_round_trip_with_id_as_decimal_string() {
    for l in every_layout() {
        for id in [0u64, 1, 1212161512043450368, (1 << 53) + 1, u64::MAX] {
            let Ok(d) = l.decode(id) else { continue };
            let v = serde_json::to_value(d).unwrap();
            assert_eq!(v["id"], json!(id.to_string()), "{v}");
            assert_eq!(v["node"], json!(d.node));
            assert_eq!(v["shows_nanos"], json!(l.shows_nanos()));
            let back: Decoded = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(back, d);
            assert_eq!(back.iso(), d.iso());
            // A number is accepted for the ID as well.
            let mut as_number = v.clone();
            as_number["id"] = json!(id);
            assert_eq!(serde_json::from_value::<Decoded>(as_number).unwrap(), d);
        }
    }
}

#[test]
fn decoded_rejects_bad_ids_and_fields() {
    let d = Layout::twitter().decode(1212161512043450368).unwrap();
    let v = serde_json::to_value(d).unwrap();
    for bad in [
        json!("18446744073709551616"),
        json!("-1"),
        json!("12a"),
        json!(-1),
        json!(1.5),
    ] {
        let mut w = v.clone();
        w["id"] = bad.clone();
        assert!(
            serde_json::from_value::<Decoded>(w).is_err(),
            "id {bad} accepted"
        );
    }
    let mut w = v.clone();
    w["sub_ms_ns"] = json!(1_000_000);
    assert!(serde_json::from_value::<Decoded>(w).is_err());
    let mut w = v.clone();
    w["extra"] = json!(1);
    assert!(serde_json::from_value::<Decoded>(w).is_err());
    let mut w = v;
    w.as_object_mut().unwrap().remove("node");
    assert!(serde_json::from_value::<Decoded>(w).is_err());
}

/// Configs `Layout::new` rejects, one per rule.
fn invalid_configs() -> Vec<LayoutConfig> {
    let d = LayoutConfig::default();
    vec![
        LayoutConfig {
            timestamp_bits: 0,
            ..d
        },
        LayoutConfig {
            timestamp_bits: 65,
            use_sign_bit: true,
            ..d
        },
        LayoutConfig { node_bits: 64, ..d },
        LayoutConfig {
            sequence_bits: 64,
            ..d
        },
        LayoutConfig {
            sequence_bits: 13,
            ..d
        },
        LayoutConfig {
            timestamp_bits: 43,
            use_sign_bit: true,
            ..d
        },
        LayoutConfig { tick_ns: 0, ..d },
        LayoutConfig {
            epoch_ms: u64::MAX,
            ..d
        },
        LayoutConfig {
            node_id_offset: 1024,
            ..d
        },
        LayoutConfig {
            node_split_bits: 11,
            ..d
        },
        LayoutConfig {
            timestamp_bits: 63,
            node_bits: 0,
            sequence_bits: 0,
            tick_ns: u64::MAX,
            ..d
        },
    ]
}

#[test]
fn invalid_layouts_are_rejected_as_layout_new_rejects_them() {
    for cfg in invalid_configs() {
        let expected = Layout::new(cfg).unwrap_err().to_string();
        // The config itself is data: it reads back unchanged …
        let cfg_json = serde_json::to_value(cfg).unwrap();
        let back: LayoutConfig = serde_json::from_value(cfg_json).unwrap();
        assert_eq!(back, cfg);
        // … and a Layout of it is refused with Layout::new's message, custom or under a preset's name.
        for preset in [Value::Null, json!("twitter"), json!("snowcast")] {
            let err = serde_json::from_value::<Layout>(wire(preset.clone(), &cfg))
                .expect_err("an invalid layout came through serde");
            let text = err.to_string();
            if preset == json!("snowcast") {
                // snowcast's own parameters may be what is out of range first.
                assert!(text.starts_with("invalid layout"), "{preset}: {text}");
            } else {
                assert!(text.contains(&expected), "{preset}: {text} / {expected}");
            }
        }
    }
}

#[test]
fn a_preset_must_have_its_own_fields() {
    let discord = *Layout::preset("discord").unwrap().config();
    let err = serde_json::from_value::<Layout>(wire(json!("twitter"), &discord)).unwrap_err();
    assert!(
        err.to_string().contains("not those of the twitter preset"),
        "{err}"
    );
    // The same fields as a custom layout are fine, and it is not called twitter.
    let custom: Layout = serde_json::from_value(wire(Value::Null, &discord)).unwrap();
    assert_eq!(custom.preset_name(), None);
    assert_eq!(
        custom.fingerprint(),
        Layout::preset("discord").unwrap().fingerprint()
    );
    // snowcast's node count out of range: its own error.
    let mut sc = *Layout::snowcast(0, 128).unwrap().config();
    sc.node_bits = 6;
    sc.sequence_bits = 17;
    let err = serde_json::from_value::<Layout>(wire(json!("snowcast"), &sc)).unwrap_err();
    assert!(err.to_string().contains("node_count"), "{err}");
    // hazelcast's offset past its node count.
    let mut hz = *Layout::hazelcast(0).unwrap().config();
    hz.node_id_offset = 1 << 16;
    let err = serde_json::from_value::<Layout>(wire(json!("hazelcast"), &hz)).unwrap_err();
    assert!(err.to_string().contains("node_id_offset"), "{err}");
    // The decimal layout has no bit fields to change.
    let mut dec = *Layout::decimal().config();
    dec.tick_ns = 1000;
    assert!(serde_json::from_value::<Layout>(wire(json!("decimal"), &dec)).is_err());
}

#[test]
fn unknown_names_and_fields_are_rejected() {
    let base = wire(Value::Null, &LayoutConfig::default());
    let mut v = base.clone();
    v["preset"] = json!("Twitter");
    let err = serde_json::from_value::<Layout>(v).unwrap_err().to_string();
    assert!(err.contains("Twitter") && err.contains("twitter"), "{err}");
    let mut v = base.clone();
    v["order"] = json!("node_first");
    let err = serde_json::from_value::<Layout>(v).unwrap_err().to_string();
    assert!(err.contains("timestamp_sequence_node"), "{err}");
    let mut v = base.clone();
    v["order"] = json!("ts|seq|node");
    let l: Layout = serde_json::from_value(v).unwrap();
    assert_eq!(l.order(), Order::TimestampSequenceNode);
    let mut v = base.clone();
    v["node_bitz"] = json!(3);
    assert!(serde_json::from_value::<Layout>(v.clone()).is_err());
    v.as_object_mut().unwrap().remove("preset");
    assert!(serde_json::from_value::<LayoutConfig>(v).is_err());
    // A config has no preset; a layout without one is custom.
    assert!(serde_json::from_value::<LayoutConfig>(base.clone()).is_err());
    let mut v = base.clone();
    v.as_object_mut().unwrap().remove("preset");
    assert_eq!(
        serde_json::from_value::<LayoutConfig>(v.clone()).unwrap(),
        LayoutConfig::default()
    );
    assert_eq!(
        serde_json::from_value::<Layout>(v).unwrap().preset_name(),
        None
    );
    let mut v = base;
    v["timestamp_bits"] = json!(-1);
    assert!(serde_json::from_value::<Layout>(v).is_err());
}

proptest! {
    /// Any config: serde gives a Layout exactly when Layout::new does, with the same error otherwise.
    #[test]
    fn serde_validates_like_layout_new(
        ts in 0u32..70, nb in 0u32..70, sb in 0u32..70, order in any::<bool>(),
        tick in prop_oneof![Just(0u64), 1u64..10_000_000_000, Just(u64::MAX)],
        epoch in prop_oneof![0u64..2_000_000_000_000, Just(u64::MAX)],
        offset in 0u64..2048, sign in any::<bool>(), split in 0u32..16,
    ) {
        let cfg = LayoutConfig {
            timestamp_bits: ts, node_bits: nb, sequence_bits: sb,
            order: if order { Order::TimestampNodeSequence } else { Order::TimestampSequenceNode },
            tick_ns: tick, epoch_ms: epoch, node_id_offset: offset, use_sign_bit: sign,
            node_split_bits: split,
        };
        let via_serde = serde_json::from_value::<Layout>(wire(Value::Null, &cfg));
        match Layout::new(cfg) {
            Ok(l) => prop_assert_eq!(via_serde.unwrap(), l),
            Err(e) => prop_assert!(via_serde.unwrap_err().to_string().contains(&e.to_string())),
        }
    }
}
