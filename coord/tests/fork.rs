//! A process forked from one holding a lease (gunicorn, PM2, a C program's workers) shares the lease's
//! generator memory but not its keeper or its claim: in the child every mint fails with LEASE_LOST and
//! dropping the lease touches nothing of the parent's; the parent goes on minting under its claim.

use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, Options};
use snowmint_coord::{
    layout_text, FileStore, Lease, LeaseOptions, LeaseState, SequencerConfig, Store, SystemTime,
};

#[test]
fn a_forked_child_never_mints_under_its_parents_lease() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("snowmint-fork-{}", std::process::id()));
    let store: Arc<dyn Store> = Arc::new(FileStore::open(&dir).unwrap());
    let config = SequencerConfig {
        layout: layout_text(&Layout::twitter()),
        nodes: 4,
    };
    let record = store.create_sequencer("fork", &config, 0).unwrap();
    let lease = Lease::acquire(
        store.clone(),
        Arc::new(SystemTime),
        record,
        Layout::twitter(),
        Options::default(),
        LeaseOptions::default(),
    )
    .unwrap();
    let before = lease.next_id().unwrap();

    // SAFETY: the child only mints, drops the lease and leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = match lease.next_id() {
            Err(e)
                if e.code() == ErrorCode::LeaseLost && e.to_string().contains("forked child") =>
            {
                0
            }
            Err(_) => 1,
            Ok(_) => 2,
        };
        let code = if lease.state() == LeaseState::Lost {
            code
        } else {
            3
        };
        drop(lease); // must neither hang on the parent's keeper nor release the parent's claim
        unsafe { libc::_exit(code) };
    }
    let t0 = Instant::now();
    let status = loop {
        let mut status = 0;
        // SAFETY: our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break status;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "the child hangs");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(libc::WIFEXITED(status), "child status {status}");
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "0: LEASE_LOST in the child; 1: another error; 2: minted; 3: state"
    );
    // The parent's lease is untouched: still held (the claim too), still minting.
    assert_eq!(lease.state(), LeaseState::Held);
    assert!(lease.next_id().unwrap() > before);
    let held = store.holders("fork", 0).unwrap();
    assert!(held.iter().any(|n| n.node_id == lease.node_id()
        && n.claim
            .as_ref()
            .is_some_and(|c| c.token == lease.fencing_token())));
    drop(lease);
    let _ = std::fs::remove_dir_all(dir);
}
