//! A lease token of the ID service on the embedded store stays the lease of its claim across a lost
//! history of the store's directory (SPEC §3.2): a backup taken after the service's first start (the
//! token key's row in it) restored, the service restarted, and the node ID leased again to another
//! client. The new claim's fencing token is above the clock's floor, so the old lease token, signed
//! with the same restored key, names a token the store never gives again: its renewal is `LEASE_LOST`.
//! Before: the restored directory gave fencing token 1 again, the old token renewed with 200 against
//! the new client's claim, and its limit reached into the new client's range (two clients minting the
//! same IDs).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Conn, Served, TempDir};
use snowmint::{Layout, Options};
use snowmint_coord::{FileStore, LeaseOptions, Sequencer, SystemTime};

/// `snowmint serve` with the fixed node ID 1 on the embedded store `url`, leasing node IDs of the
/// two-node client sequencer `c`: every client lease is node 0.
fn serve(url: &str) -> Served {
    Served::start(&["--node", "1", "--store", url, "--client-sequencer", "c"])
}

/// Takes a client lease: its token and node ID.
fn lease(s: &Served, holder: &str) -> (String, u64) {
    let mut c = Conn::open(s.addr);
    let body = format!("{{\"holder\": \"{holder}\"}}");
    let r = c.request("POST", "/v1/leases", body.as_bytes());
    assert_eq!(r.status, 201, "{}", r.text());
    let a = r.json();
    (
        a["token"].as_str().unwrap().to_string(),
        a["node_id"].as_u64().unwrap(),
    )
}

/// Stops the service (SIGTERM; its client leases outlive it).
fn stop(mut s: Served) {
    s.signal(libc::SIGTERM);
    assert_eq!(s.wait(Duration::from_secs(8)), Some(0), "exit status 0");
}

#[test]
fn a_lease_token_from_before_a_restore_is_lost_not_renewed() {
    let base = TempDir::new("restored");
    let (dir, backup) = (base.0.join("store"), base.0.join("backup"));
    let url = format!("file://{}", dir.display());
    let store = FileStore::create(&dir).unwrap();
    let layout = Layout::twitter();
    Sequencer::create_with(
        Arc::new(store),
        Arc::new(SystemTime),
        "c",
        layout,
        2,
        Options::default(),
        LeaseOptions::default(),
    )
    .unwrap();

    let s = serve(&url);
    // The backup, after the first start: the token key's row is in it.
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&dir)
        .arg(&backup)
        .status()
        .unwrap();
    assert!(copied.success());
    assert!(
        std::fs::read_dir(backup.join("rows")).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("secret")),
        "the token key's row is in the backup"
    );
    let (a, node_a) = lease(&s, "client A");
    assert_eq!(node_a, 0);
    stop(s);

    // The backup restored, the service restarted, node 0 leased to client B.
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::rename(&backup, &dir).unwrap();
    let s = serve(&url);
    let (b, node_b) = lease(&s, "client B");
    assert_eq!(node_b, 0);
    let fencing = |token: &str| token.split('.').nth(2).unwrap().parse::<u64>().unwrap();
    let (fa, fb) = (fencing(&a), fencing(&b));

    let mut c = Conn::open(s.addr);
    let r = c.request("POST", &format!("/v1/leases/{a}/renew"), b"");
    assert!(
        [404, 409].contains(&r.status) && r.error_code() == "LEASE_LOST",
        "client A's lease token (fencing token {fa}) from before the restore renewed against client B's claim (fencing token {fb}): {} {}",
        r.status,
        r.text()
    );
    assert!(fb > fa, "client B's fencing token {fb}, client A's {fa}");
    let r = c.request("POST", &format!("/v1/leases/{b}/renew"), b"");
    assert_eq!(r.status, 200, "{}", r.text());
    stop(s);
}
