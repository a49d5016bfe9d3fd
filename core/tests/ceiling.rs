//! The ceiling hook of `SharedGenerator`: a generator mints only positions below its ceiling's limit,
//! fails with `LEASE_LOST` at it without changing its state, and goes on when the limit is raised.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use snowmint::{ErrorCode, Layout, Mint, Options, Policy, SharedGenerator};

const NOW_NS: u64 = 1_700_000_000_000 * 1_000_000;

#[test]
fn mints_up_to_the_limit_then_lease_lost_until_raised() {
    let layout = Layout::twitter();
    let start = layout.tick_at_ns(NOW_NS).unwrap() << layout.sequence_bits();
    let ceiling = Arc::new(AtomicU64::new(start + 3));
    let gen = SharedGenerator::with_ceiling(
        layout,
        5,
        Options::default(),
        AtomicU64::new(0),
        ceiling.clone(),
    )
    .unwrap();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let Mint::Ready(id) = gen.next_id_at(NOW_NS).unwrap() else {
            panic!("wait")
        };
        ids.push(id);
    }
    assert_eq!(gen.state(), start + 3);
    let err = gen.next_id_at(NOW_NS).unwrap_err();
    assert_eq!(err.code(), ErrorCode::LeaseLost);
    // A batch that would cross the limit takes nothing.
    ceiling.store(start + 5, Ordering::Relaxed);
    let mut three = [0u64; 3];
    assert_eq!(
        gen.next_ids_at(NOW_NS, &mut three).unwrap_err().code(),
        ErrorCode::LeaseLost
    );
    assert_eq!(gen.state(), start + 3);
    let mut two = [0u64; 2];
    assert_eq!(gen.next_ids_at(NOW_NS, &mut two).unwrap(), Mint::Ready(()));
    ids.extend(two);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        gen.next_id_at(NOW_NS + 10_000_000).unwrap_err().code(),
        ErrorCode::LeaseLost
    );
}

#[test]
fn every_policy_stops_at_the_ceiling() {
    for policy in [Policy::Wait, Policy::Fail, Policy::Strict] {
        let options = Options {
            policy,
            ..Options::default()
        };
        let gen = SharedGenerator::with_ceiling(
            Layout::twitter(),
            1,
            options,
            AtomicU64::new(0),
            AtomicU64::new(0),
        )
        .unwrap();
        assert_eq!(
            gen.next_id_at(NOW_NS).unwrap_err().code(),
            ErrorCode::LeaseLost
        );
        assert_eq!(gen.state(), 0);
    }
}
