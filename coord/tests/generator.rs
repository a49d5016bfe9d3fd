//! `SequencerGenerator`, the type the Python, Node and C bindings wrap: open from a source, the current
//! lease read without a lock, detach/attach, the local (no store round trip) error paths, destroy.

use snowmint::{ErrorCode, Layout, Options};
use snowmint_coord::generator::{create_sequencer, list_sequencers, open_sequencer};
use snowmint_coord::{Opened, SequencerGenerator, SequencerState};

fn dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("snowmint-gen-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn fixed_sources_resolve_and_lease_sources_attach() {
    let twitter = Layout::twitter();
    assert!(matches!(
        SequencerGenerator::open("7", twitter, Options::default()).unwrap(),
        Opened::Plain(7)
    ));
    let e = SequencerGenerator::open("4096", twitter, Options::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NodeIdOutOfRange);
    let e = SequencerGenerator::open("zookeeper://h/x", twitter, Options::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);

    let d = dir("open");
    let src = format!("file://{}?ttl=2s", d.display());
    let Opened::Leased(g) = SequencerGenerator::open(&src, twitter, Options::default()).unwrap()
    else {
        panic!("a lease source gives a leased generator")
    };
    assert_eq!(g.state(), SequencerState::Attached);
    let lease = g.current().expect("attached");
    assert_eq!(lease.node_id(), g.node_id());
    let a = g.next_id().unwrap();
    let mut batch = [0u64; 100];
    g.next_ids(&mut batch).unwrap();
    assert!(batch[0] > a && batch.windows(2).all(|w| w[1] > w[0]));
    let s = g.stats();
    assert_eq!((s.minted, s.batches), (101, 1));
    assert_eq!(lease.stats(), s);

    g.detach().unwrap();
    assert!(g.current().is_none() && g.lease().is_none());
    assert_eq!(g.known_state(), SequencerState::Detached);
    assert_eq!(g.next_id_local().unwrap_err().code(), ErrorCode::LeaseLost);
    assert_eq!(
        g.next_ids_local(&mut batch).unwrap_err().code(),
        ErrorCode::LeaseLost
    );
    assert_eq!(g.next_id().unwrap_err().code(), ErrorCode::LeaseLost);

    g.attach().unwrap();
    assert!(g.next_id().unwrap() > batch[99]);
    // Counted over every lease held: the first one's 101 IDs and the new one's.
    assert_eq!((g.stats().minted, g.stats().batches), (102, 1));
    g.destroy().unwrap();
    assert_eq!(g.known_state(), SequencerState::Destroyed);
    assert_eq!(
        g.next_id_local().unwrap_err().code(),
        ErrorCode::SequencerDestroyed
    );
    assert_eq!(
        g.attach().unwrap_err().code(),
        ErrorCode::SequencerDestroyed
    );
    drop(g);
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn sequencers_by_store_url() {
    let d = dir("seq");
    let store = format!("file://{}?ttl=2s", d.display());
    let twitter = Layout::twitter();
    let seq = create_sequencer(&store, "orders", twitter, 2, Options::default()).unwrap();
    assert_eq!(list_sequencers(&store).unwrap(), vec!["orders".to_string()]);
    let e = create_sequencer(&store, "orders", twitter, 3, Options::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SequencerConflict);
    assert_eq!(
        create_sequencer("7", "x", twitter, 2, Options::default())
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    let a = SequencerGenerator::attach_new(seq.new_handle()).unwrap();
    let b = SequencerGenerator::attach_new(seq.new_handle()).unwrap();
    assert_ne!(a.node_id(), b.node_id());
    let e = SequencerGenerator::attach_new(seq.new_handle()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NodeIdsExhausted);
    // Destroyed through another handle: a detached generator sees it when it asks the store.
    a.detach().unwrap();
    open_sequencer(&store, "orders", Options::default())
        .unwrap()
        .destroy()
        .unwrap();
    assert_eq!(a.state(), SequencerState::Destroyed);
    assert!(list_sequencers(&store).unwrap().is_empty());
    drop((a, b));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn node_generators_report_stats_for_fixed_and_leased_nodes() {
    let d = dir("stats");
    let src = format!("file://{}?ttl=2s", d.display());
    for source in ["7", src.as_str()] {
        let g = snowmint_coord::NodeGenerator::open(source, Layout::twitter(), Options::default())
            .unwrap();
        for _ in 0..10 {
            g.next_id().unwrap();
        }
        let mut out = [0u64; 5];
        g.next_ids(&mut out).unwrap();
        let s = g.stats();
        assert_eq!(
            (s.minted, s.batches, s.waits, s.regressions),
            (15, 1, 0, 0),
            "{source}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}
