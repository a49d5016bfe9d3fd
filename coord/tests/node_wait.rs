//! Waiting for a node ID (`?wait=` / `LeaseOptions::wait_for_node`): with every node ID held by another
//! process, a claim without a wait fails at once with `NODE_IDS_EXHAUSTED` saying when the earliest held
//! claim expires; with a wait it fails only after the bound, and succeeds as soon as the holder exits —
//! on the embedded store and, when the harness started them, on real etcd and PostgreSQL servers.

mod support;

use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, Options};
use snowmint_coord::{NodeGenerator, SystemTime, Time};
use support::*;

/// The child side of [`support::spawn_holder`].
#[test]
fn holder_child() {
    holder_main();
}

/// One-node sequencer sources: the embedded store always, the servers of this run.
fn sources(tag: &str) -> Vec<(String, String)> {
    let dir = std::env::temp_dir().join(unique(&format!("snowmint-wait-{tag}")));
    let mut urls = vec![("embedded".to_string(), format!("file://{}", dir.display()))];
    for kind in servers() {
        urls.push((kind.name().to_string(), fresh_url(kind, tag)));
    }
    let now_ms = SystemTime.unix_ns() / 1_000_000;
    urls.into_iter()
        .map(|(name, url)| {
            open(&url)
                .create_sequencer("one", &twitter_config(1), now_ms)
                .unwrap();
            (name, with_params(&url, "sequencer=one&ttl=3s"))
        })
        .collect()
}

fn open_gen(source: &str) -> Result<NodeGenerator, snowmint_coord::Error> {
    NodeGenerator::open(source, Layout::twitter(), Options::default())
}

#[test]
fn a_claim_waits_for_a_node_id_up_to_its_bound() {
    for (store, source) in sources("bound") {
        let mut holder = spawn_holder(&source).unwrap_or_else(|e| panic!("{store}: {e:?}"));
        let minted = holder.mint(5).ids;
        assert_eq!(minted.len(), 5, "{store}");

        // No wait: refused at once, saying when the held claim expires and how to wait.
        let t0 = Instant::now();
        let e = open_gen(&source).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NodeIdsExhausted, "{store}: {e}");
        assert!(t0.elapsed() < Duration::from_secs(2), "{store}: at once");
        let m = e.message();
        assert!(
            m.contains("the earliest held claim (node ID 0) expires at 20")
                && m.contains("ms) unless its holder renews it")
                && m.contains("?wait=30s"),
            "{store}: {m}"
        );

        // A bounded wait while the holder lives: refused after the bound, not before.
        let t0 = Instant::now();
        let e = open_gen(&with_params(&source, "wait=400ms")).unwrap_err();
        let waited = t0.elapsed();
        assert_eq!(e.code(), ErrorCode::NodeIdsExhausted, "{store}: {e}");
        assert!(
            waited >= Duration::from_millis(400) && waited < Duration::from_secs(3),
            "{store}: waited {waited:?}"
        );
        assert!(e.message().contains("after waiting 400 ms"), "{store}: {e}");

        // The holder exits 600 ms into a 10 s wait: the waiting claim takes the node ID then, and starts
        // after everything the holder minted.
        let quitter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(600));
            holder.quit();
        });
        let t0 = Instant::now();
        let g = open_gen(&with_params(&source, "wait=10s"))
            .unwrap_or_else(|e| panic!("{store}: the wait should end with a claim: {e}"));
        let waited = t0.elapsed();
        quitter.join().unwrap();
        assert!(
            waited >= Duration::from_millis(500) && waited < Duration::from_secs(8),
            "{store}: waited {waited:?}"
        );
        let id = g.next_id().unwrap();
        assert_eq!(node_of(id), 0);
        assert!(
            id > *minted.last().unwrap(),
            "{store}: after the holder's IDs"
        );
    }
}

#[test]
fn wait_parameter_is_checked() {
    for bad in ["wait=soon", "wait=2h", "wait="] {
        let e = open_gen(&format!("file:///tmp/x?{bad}")).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}: {e}");
        assert!(e.message().contains("wait"), "{bad}: {e}");
    }
}
