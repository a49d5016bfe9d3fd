//! Opaque IDs through the public API: round trips and injectivity over random keys and widths
//! (proptest), and statistical sanity: tokens of consecutive IDs show no order and no shared bits.

use proptest::prelude::*;
use snowmint::{ErrorCode, Layout, Opaque};

fn mask(bits: u32) -> u64 {
    u64::MAX >> (64 - bits)
}

/// Cases per property (few under Miri, which runs each SipHash round a million times slower).
const CASES: u32 = if cfg!(miri) { 8 } else { 2000 };

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn round_trip_any_key_and_width(key in any::<[u8; 16]>(), bits in 32u32..=64, x in any::<u64>()) {
        let o = Opaque::new(&key, bits).unwrap();
        let id = x & mask(bits);
        let token = o.encode(id).unwrap();
        prop_assert!(token <= mask(bits));
        prop_assert_eq!(o.decode(token).unwrap(), id);
        prop_assert_eq!(o.encode(o.decode(id).unwrap()).unwrap(), id);
        if bits < 64 {
            prop_assert_eq!(o.encode(id | 1 << bits).unwrap_err().code(), ErrorCode::InvalidId);
            prop_assert_eq!(o.decode(x | 1 << bits).unwrap_err().code(), ErrorCode::InvalidId);
        }
    }

    /// Distinct IDs give distinct tokens (a bijection: injective on a finite set of equal size).
    #[test]
    fn distinct_ids_distinct_tokens(key in any::<[u8; 16]>(), bits in 32u32..=64,
                                    xs in proptest::collection::btree_set(any::<u64>(), 2..200)) {
        let o = Opaque::new(&key, bits).unwrap();
        let ids: std::collections::BTreeSet<u64> = xs.iter().map(|x| x & mask(bits)).collect();
        let tokens: std::collections::BTreeSet<u64> = ids.iter().map(|&x| o.encode(x).unwrap()).collect();
        prop_assert_eq!(ids.len(), tokens.len());
    }

    /// One key gives unrelated permutations at different widths, and another key another permutation.
    #[test]
    fn key_and_width_matter(key in any::<[u8; 16]>(), flip in 0usize..128, x in any::<u32>()) {
        let mut other = key;
        other[flip / 8] ^= 1 << (flip % 8);
        let id = u64::from(x);
        let a = Opaque::new(&key, 40).unwrap();
        let b = Opaque::new(&other, 40).unwrap();
        let c = Opaque::new(&key, 41).unwrap();
        let ta = a.encode(id).unwrap();
        // Equal by chance with probability 2^-40 each.
        prop_assert_ne!(ta, b.encode(id).unwrap());
        prop_assert_ne!(ta, c.encode(id).unwrap());
    }
}

/// Consecutive IDs (as one generator mints them) at every width: about half of the token bits flip
/// between neighbours, each bit flips about half the time, and token order agrees with ID order about
/// half the time.
#[test]
#[cfg_attr(
    miri,
    ignore = "statistics need 120 000 encodes; under Miri the round trips above run"
)]
fn neighbours_tokens_look_unrelated() {
    let key = *b"opaque-test-key!";
    let n = 20_000u64;
    for bits in [32u32, 33, 47, 53, 63, 64] {
        let o = Opaque::new(&key, bits).unwrap();
        let start = 0x1234_5678_9abc & mask(bits - 1);
        let tokens: Vec<u64> = (start..start + n).map(|id| o.encode(id).unwrap()).collect();
        let mut flipped = 0u64;
        let mut per_bit = vec![0u64; bits as usize];
        let mut ascending = 0u64;
        for w in tokens.windows(2) {
            let d = w[0] ^ w[1];
            flipped += u64::from(d.count_ones());
            for (b, count) in per_bit.iter_mut().enumerate() {
                *count += d >> b & 1;
            }
            ascending += u64::from(w[1] > w[0]);
        }
        let pairs = (n - 1) as f64;
        // Binomial: mean bits/2 flips per pair, standard deviation of the average ~ sqrt(bits/4/pairs).
        let mean_flips = flipped as f64 / pairs;
        assert!(
            (mean_flips - bits as f64 / 2.0).abs() < 0.1,
            "{bits} bits: {mean_flips} bits flip on average"
        );
        for (b, &count) in per_bit.iter().enumerate() {
            let p = count as f64 / pairs;
            // 6 standard deviations of a proportion over ~20 000 pairs (0.0035 each).
            assert!(
                (p - 0.5).abs() < 0.022,
                "{bits} bits: bit {b} flips with probability {p}"
            );
        }
        let agree = ascending as f64 / pairs;
        assert!(
            (agree - 0.5).abs() < 0.022,
            "{bits} bits: token order agrees with ID order {agree}"
        );
        // The high bits of tokens (what a sort would group by) spread over the whole range.
        let mut buckets = [0u32; 16];
        for t in &tokens {
            buckets[(t >> (bits - 4)) as usize] += 1;
        }
        let expect = n as f64 / 16.0;
        let chi2: f64 = buckets
            .iter()
            .map(|&c| (c as f64 - expect).powi(2) / expect)
            .sum();
        assert!(
            chi2 < 45.0,
            "{bits} bits: top-4-bit buckets {buckets:?} (chi2 {chi2})"
        );
    }
}

#[test]
fn layouts_give_their_widths() {
    let key = [9u8; 16];
    for (preset, bits) in [
        ("twitter", 63),
        ("js53", 53),
        ("discord", 64),
        ("sonyflake", 63),
        ("decimal", 64),
    ] {
        let o = Opaque::for_layout(&key, &Layout::preset(preset).unwrap()).unwrap();
        assert_eq!(o.bits(), bits, "{preset}");
    }
}

#[test]
fn public_api_example() {
    // The public API end to end: a key from bytes, encode, decode, a key of the wrong length.
    let key: [u8; 16] = *b"0123456789abcdef";
    let opaque = Opaque::for_layout(&key, &Layout::preset("js53").unwrap()).unwrap();
    let token = opaque.encode(123_456_789).unwrap();
    assert!(token < 1 << 53);
    assert_eq!(opaque.decode(token).unwrap(), 123_456_789);
    assert_eq!(
        Opaque::new(&key[..8], 53).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
}

/// The batch forms (four values at a time, then the rest) give exactly the single-value answers.
#[test]
fn batches_equal_single_calls() {
    let key = [5u8; 16];
    for bits in [32u32, 33, 53, 63, 64] {
        let o = Opaque::new(&key, bits).unwrap();
        for len in 0..14u64 {
            let ids: Vec<u64> = (0..len)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask(bits))
                .collect();
            let mut batch = ids.clone();
            o.encode_in_place(&mut batch).unwrap();
            let single: Vec<u64> = ids.iter().map(|&i| o.encode(i).unwrap()).collect();
            assert_eq!(batch, single, "{bits} bits, {len} IDs");
            o.decode_in_place(&mut batch).unwrap();
            assert_eq!(batch, ids);
        }
    }
}

/// The README's Rust example in its "Opaque IDs" section is the module's doctest (which runs), line for
/// line: the README cannot be one crate's doctest (its other examples use other crates).
#[test]
fn readme_example_is_the_doctest() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../README.md")).unwrap();
    let section = readme
        .split("## Opaque IDs")
        .nth(1)
        .expect("an Opaque IDs section");
    let block = section
        .split("```rust\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let source = std::fs::read_to_string(root.join("src/opaque.rs")).unwrap();
    let doc: String = source
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let doctest = doc
        .split_once("```\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("a doctest in src/opaque.rs")
        .0;
    assert_eq!(block.trim_end(), doctest.trim_end());
}
