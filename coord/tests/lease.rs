//! The lease algorithm on the in-memory and the embedded store, in one process, with injected clocks.

use std::sync::Arc;
use std::time::Duration;

use snowmint::{ErrorCode, Layout, Options, Policy};
use snowmint_coord::{
    layout_text, FileStore, Lease, LeaseOptions, LeaseState, MemoryStore, OffsetTime,
    SequencerConfig, Store, SystemTime, Time,
};

fn stores() -> Vec<(Arc<dyn Store>, tempdir::Dir)> {
    let dir = tempdir::Dir::new();
    vec![
        (
            Arc::new(MemoryStore::new()) as Arc<dyn Store>,
            tempdir::Dir::new(),
        ),
        (
            Arc::new(FileStore::open(dir.path()).unwrap()) as Arc<dyn Store>,
            dir,
        ),
    ]
}

mod tempdir {
    pub struct Dir(std::path::PathBuf);
    impl Dir {
        pub fn new() -> Dir {
            use std::sync::atomic::{AtomicU64, Ordering};
            static N: AtomicU64 = AtomicU64::new(0);
            let p = std::env::temp_dir().join(format!(
                "snowmint-coord-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn config(nodes: u64) -> SequencerConfig {
    SequencerConfig {
        layout: layout_text(&Layout::twitter()),
        nodes,
    }
}

fn opts(ttl_ms: u64) -> LeaseOptions {
    LeaseOptions {
        ttl: Duration::from_millis(ttl_ms),
        ..LeaseOptions::default()
    }
}

fn acquire(
    store: &Arc<dyn Store>,
    time: Arc<dyn Time>,
    nodes: u64,
    options: Options,
) -> snowmint_coord::Result<Lease> {
    let rec = store.create_sequencer("default", &config(nodes), time.unix_ns() / 1_000_000)?;
    Lease::acquire(
        store.clone(),
        time,
        rec,
        Layout::twitter(),
        options,
        opts(3000),
    )
}

#[test]
fn distinct_node_ids_then_exhausted() {
    for (store, _dir) in stores() {
        let a = acquire(&store, Arc::new(SystemTime), 2, Options::default()).unwrap();
        let b = acquire(&store, Arc::new(SystemTime), 2, Options::default()).unwrap();
        assert_ne!(a.node_id(), b.node_id());
        let err = acquire(&store, Arc::new(SystemTime), 2, Options::default()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NodeIdsExhausted, "{err}");
        assert!(err.to_string().contains("all 2 node IDs"), "{err}");
        drop(a);
        let c = acquire(&store, Arc::new(SystemTime), 2, Options::default()).unwrap();
        assert_ne!(c.node_id(), b.node_id());
    }
}

#[test]
fn new_holder_starts_after_reservation_even_with_clock_behind() {
    for (store, _dir) in stores() {
        let a = acquire(&store, Arc::new(SystemTime), 1, Options::default()).unwrap();
        let ids_a: Vec<u64> = (0..1000).map(|_| a.next_id().unwrap()).collect();
        let token_a = a.fencing_token();
        let pos = |id: u64| (id >> 22) << 12 | (id & 0xfff);
        assert!(a.ceiling() > pos(*ids_a.last().unwrap()));
        drop(a);
        // A clean release lowers the stored reservation to the last position minted.
        let r = store.reservation("default", 0).unwrap().unwrap();
        assert_eq!(r.position, pos(*ids_a.last().unwrap()));
        // Ten seconds behind (inside max_ahead): waits are short enough to mint.
        let behind: Arc<dyn Time> = Arc::new(OffsetTime::new(-10_000_000_000));
        let b = acquire(
            &store,
            behind,
            1,
            Options {
                policy: Policy::Wait,
                ..Options::default()
            },
        )
        .unwrap();
        assert!(b.fencing_token() > token_a);
        let first_b = b.next_id().unwrap();
        assert!(
            first_b > *ids_a.last().unwrap(),
            "B starts after A's reservation"
        );
        drop(b);
        // Minutes behind with the fail policy: TOO_FAR_AHEAD, never an old ID.
        let minutes: Arc<dyn Time> = Arc::new(OffsetTime::new(-300_000_000_000));
        let c = acquire(
            &store,
            minutes,
            1,
            Options {
                policy: Policy::Fail,
                ..Options::default()
            },
        )
        .unwrap();
        let err = c.next_id().unwrap_err();
        assert_eq!(err.code(), ErrorCode::TooFarAhead, "{err}");
    }
}

#[test]
fn lost_claim_stops_at_the_ceiling() {
    let mem = Arc::new(MemoryStore::new());
    let store: Arc<dyn Store> = mem.clone();
    let a = acquire(
        &store,
        Arc::new(SystemTime),
        1,
        Options {
            policy: Policy::Fail,
            ..Options::default()
        },
    )
    .unwrap();
    a.next_id().unwrap();
    mem.set_available(false);
    // Minting continues up to the reservation, then LEASE_LOST.
    let mut n = 0u64;
    let err = loop {
        match a.generator().next_id() {
            Ok(_) => n += 1,
            Err(e) => break e,
        }
        assert!(n < 1 << 40);
    };
    assert_eq!(err.code(), ErrorCode::LeaseLost);
    assert!(n > 1000, "minted {n} before the ceiling");
    mem.set_available(true);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while a.state() == LeaseState::Held && std::time::Instant::now() < deadline {
        a.poke();
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn destroyed_sequencer_fails_forever_and_recreate_never_repeats() {
    for (store, _dir) in stores() {
        let a = acquire(&store, Arc::new(SystemTime), 1, Options::default()).unwrap();
        let last_a = (0..100).map(|_| a.next_id().unwrap()).max().unwrap();
        assert!(store.destroy_sequencer("default").unwrap());
        a.poke();
        let t0 = std::time::Instant::now();
        let err = loop {
            match a.next_id() {
                Err(e) => break e,
                Ok(_) => assert!(t0.elapsed() < Duration::from_secs(2)),
            }
        };
        assert_eq!(err.code(), ErrorCode::SequencerDestroyed, "{err}");
        assert_eq!(a.state(), LeaseState::Destroyed);
        let b = acquire(&store, Arc::new(SystemTime), 1, Options::default()).unwrap();
        assert!(b.next_id().unwrap() > last_a);
        assert_eq!(
            a.next_id().unwrap_err().code(),
            ErrorCode::SequencerDestroyed
        );
    }
}
