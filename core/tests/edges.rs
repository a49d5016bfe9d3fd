//! The edges a new user hits first: `parse_any` never choosing silently, unknown names with the nearest
//! allowed one, presets that need parameters, and clock readings in the wrong unit.

use snowmint::{
    fixed_width_reading, parse_any, parse_any_form, Encoding, Error, ErrorCode, Layout,
    LayoutConfig, NameKind, Order, Policy,
};

#[test]
fn sixteen_digits_are_decimal_or_hex() {
    let err = parse_any("1970065334000000").unwrap_err();
    assert_eq!(err.code(), ErrorCode::Parse);
    assert_eq!(
        err,
        Error::AmbiguousId {
            decimal: 1_970_065_334_000_000,
            other: Encoding::Hex,
            other_value: 1_832_972_002_764_259_328,
        }
    );
    assert_eq!(
        err.to_string(),
        "ambiguous ID string: it reads as dec 1970065334000000 or as hex 1832972002764259328; \
         parse it with the encoding named (\"dec\" or \"hex\")"
    );
    // Every 16-digit string, zeros too.
    assert!(matches!(
        parse_any("0000000000000000"),
        Err(Error::AmbiguousId {
            decimal: 0,
            other: Encoding::Hex,
            other_value: 0
        })
    ));
    assert!(matches!(
        parse_any("9999999999999999"),
        Err(Error::AmbiguousId {
            other: Encoding::Hex,
            other_value: 0x9999_9999_9999_9999,
            ..
        })
    ));
}

#[test]
fn thirteen_digits_are_always_ambiguous() {
    // 13 base32 characters carry 65 bits, but a decimal digit in front (at most 9·2^60) always fits.
    let err = parse_any("1000000000000").unwrap_err();
    assert_eq!(
        err,
        Error::AmbiguousId {
            decimal: 1_000_000_000_000,
            other: Encoding::Base32,
            other_value: 1 << 60,
        }
    );
    assert_eq!(
        parse_any("0123456789012"),
        Err(Error::AmbiguousId {
            decimal: 123_456_789_012,
            other: Encoding::Base32,
            other_value: Encoding::Base32.parse("0123456789012").unwrap(),
        })
    );
    assert!(matches!(
        parse_any("9999999999999"),
        Err(Error::AmbiguousId {
            decimal: 9_999_999_999_999,
            other: Encoding::Base32,
            ..
        })
    ));
    assert_eq!(
        fixed_width_reading("9999999999999"),
        Some((
            Encoding::Base32,
            Encoding::Base32.parse("9999999999999").unwrap()
        ))
    );
    // The only 13-character base32 strings that do not fit start with G or later.
    assert_eq!(
        Encoding::Base32.parse("G000000000000").unwrap_err().code(),
        ErrorCode::Parse
    );
}

#[test]
fn eleven_digits_are_ambiguous_only_without_a_zero() {
    let err = parse_any("12345678912").unwrap_err();
    assert_eq!(
        err,
        Error::AmbiguousId {
            decimal: 12_345_678_912,
            other: Encoding::Base58,
            other_value: Encoding::Base58.parse("12345678912").unwrap(),
        }
    );
    assert!(err.to_string().contains("\"dec\" or \"base58\""));
    // '0' is not a base58 digit: decimal only.
    assert_eq!(parse_any("10000000000").unwrap(), 10_000_000_000);
    assert_eq!(fixed_width_reading("10000000000"), None);
    // 99999999999 in base58 is 8·(58^10 + … + 1) — it fits, so still ambiguous.
    assert!(matches!(
        parse_any("99999999999"),
        Err(Error::AmbiguousId { .. })
    ));
}

#[test]
fn neighbouring_widths_are_decimal() {
    for s in [
        "123456789012345",
        "12345678901234567",
        "123456789012",
        "12345678901401",
        "1234567891",
        "123456789123",
    ] {
        assert_eq!(
            parse_any_form(s).unwrap(),
            (Encoding::Decimal, s.parse().unwrap()),
            "{s}"
        );
    }
    // Forms with letters are not ambiguous.
    assert_eq!(parse_any_form("1a70065334000000").unwrap().0, Encoding::Hex);
    assert_eq!(
        parse_any_form("0x1970065334000000").unwrap(),
        (Encoding::Hex, 1_832_972_002_764_259_328)
    );
}

#[test]
fn unknown_names_say_the_name_the_nearest_and_the_allowed() {
    let e = Layout::preset("Twitter").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidLayout);
    assert_eq!(
        e.to_string(),
        "unknown layout preset \"Twitter\" (did you mean twitter?); allowed: twitter, discord, instagram, \
         sonyflake, hazelcast, snowcast, js53, decimal"
    );
    let e = Policy::from_name("Fail").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "unknown policy \"Fail\" (did you mean fail?); allowed: wait, fail, strict"
    );
    let e = Encoding::from_name("bas58").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "unknown encoding \"bas58\" (did you mean base58?); allowed: dec, hex, base32, base58"
    );
    let e = Order::from_name("nonsense").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidLayout);
    assert_eq!(
        e.to_string(),
        "unknown order \"nonsense\"; allowed: timestamp_node_sequence, timestamp_sequence_node"
    );
    match NameKind::Layout.unknown("discrod") {
        Error::UnknownName {
            kind,
            given,
            suggestion,
        } => {
            assert_eq!(
                (kind, given.as_str(), suggestion),
                (NameKind::Layout, "discrod", Some("discord"))
            )
        }
        other => panic!("{other:?}"),
    }
    // A long name is cut for the message, never past a character boundary.
    let e = Layout::preset(&"é".repeat(40)).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("unknown layout preset \"{}\"…;", "é".repeat(12))),
        "{e}"
    );
    // Aliases still work.
    assert_eq!(Layout::preset("chronicle").unwrap(), Layout::decimal());
    assert_eq!(Encoding::from_name("decimal").unwrap(), Encoding::Decimal);
}

#[test]
fn snowcast_by_name_asks_for_its_parameters() {
    let e = Layout::preset("snowcast").unwrap_err();
    assert_eq!(e, Error::PresetNeedsParameters { preset: "snowcast" });
    assert_eq!(e.code(), ErrorCode::InvalidLayout);
    assert!(
        e.to_string().contains("needs an epoch and a node count"),
        "{e}"
    );
}

#[test]
fn clock_readings_in_another_unit_say_so() {
    let ms = Layout::twitter().clock_reader();
    let hint = |r: u64| ms.to_ns(r).unwrap_err().to_string();
    assert_eq!(
        hint(1_700_000_000),
        "invalid clock reading 1700000000: expected Unix milliseconds, but it looks like seconds: multiply by 1000"
    );
    assert!(hint(1_700_000_000_000_000).ends_with("looks like microseconds: divide by 1000"));
    assert!(hint(1_700_000_000_000_000_000).ends_with("looks like nanoseconds: divide by 1000000"));
    assert_eq!(
        ms.to_ns(1_700_000_000).unwrap_err().code(),
        ErrorCode::InvalidClock
    );
    // Readings the layout can use pass; a reading no unit explains keeps its own error.
    assert_eq!(
        ms.to_ns(1_288_834_974_657).unwrap(),
        1_288_834_974_657_000_000
    );
    assert_eq!(ms.to_ns(5).unwrap(), 5_000_000); // before the epoch in every unit: the generator says so
    assert_eq!(
        ms.to_ns(u64::MAX).unwrap_err().code(),
        ErrorCode::InvalidClock
    );
    assert!(matches!(
        ms.to_ns(u64::MAX),
        Err(Error::InvalidClock { .. })
    ));
    // Floating-point readings (JS, Python floats): huge ones still get the hint.
    assert!(matches!(
        ms.f64_to_ns(1.7e18),
        Err(Error::ClockUnit {
            looks_like_ns: 1,
            ..
        })
    ));
    assert!(matches!(
        ms.f64_to_ns(1.7e9),
        Err(Error::ClockUnit {
            looks_like_ns: 1_000_000_000,
            ..
        })
    ));
    assert!(matches!(ms.f64_to_ns(1.5), Err(Error::InvalidClock { .. })));
    // Python's time.time(): seconds with a fraction.
    assert!(matches!(
        ms.f64_to_ns(1_700_000_000.25),
        Err(Error::ClockUnit {
            looks_like_ns: 1_000_000_000,
            ..
        })
    ));
    assert!(matches!(
        ms.f64_to_ns(1_700_000_000_000.5),
        Err(Error::InvalidClock { .. })
    ));

    // A sub-millisecond layout takes nanoseconds.
    let ns = Layout::new(LayoutConfig {
        tick_ns: 100,
        timestamp_bits: 54,
        node_bits: 1,
        sequence_bits: 8,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .unwrap()
    .clock_reader();
    let e = ns.to_ns(1_700_000_000_000).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid clock reading 1700000000000: expected Unix nanoseconds, but it looks like milliseconds: multiply by 1000000"
    );
    assert!(ns
        .to_ns(1_700_000_000)
        .unwrap_err()
        .to_string()
        .ends_with("seconds: multiply by 1000000000"));
    assert!(ns
        .to_ns(1_700_000_000_000_000)
        .unwrap_err()
        .to_string()
        .ends_with("microseconds: multiply by 1000"));
    assert_eq!(
        ns.to_ns(1_700_000_000_000_000_000).unwrap(),
        1_700_000_000_000_000_000
    );
}
