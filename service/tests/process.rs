//! `snowmint serve` as a real process: graceful shutdown (a request in flight finishes, the service's
//! own lease is released, exit 0) and, on a real etcd (`SNOWMINT_TEST_ETCD_URL`, from scripts/servers.sh;
//! skipped without it unless `SNOWMINT_REQUIRE_SERVERS=1`), client leases that outlive the service
//! stopped by SIGTERM and killed by SIGKILL, and two instances on one store.

mod common;

use std::net::TcpStream;
use std::time::Duration;

use common::{once, Conn, Served, TempDir};
use snowmint_coord::{FileStore, Store};

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn graceful_shutdown_finishes_requests_in_flight_and_releases_the_own_lease() {
    let dir = TempDir::new("shutdown");
    let node = dir.url("?sequencer=default");
    let mut s = Served::start(&["--node", &node]);
    let own = once(s.addr, "GET", "/healthz", b"").json()["node_id"]
        .as_u64()
        .unwrap();
    let store = FileStore::open(&dir.0).unwrap();
    let held = |store: &FileStore| {
        store
            .holders("default", now_ms())
            .unwrap()
            .into_iter()
            .filter(|n| n.claim.is_some())
            .map(|n| n.node_id)
            .collect::<Vec<_>>()
    };
    assert_eq!(held(&store), vec![own]);
    // A client lease, which must outlive the shutdown.
    let lease = once(s.addr, "POST", "/v1/leases", b"").json();
    // A request in flight: its head sent, its body not yet.
    let mut c = Conn::open(s.addr);
    c.send_raw(b"POST /v1/ids?count=5 HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{");
    std::thread::sleep(Duration::from_millis(300));
    s.signal(libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(300));
    // No new connections once shutdown began.
    assert!(
        TcpStream::connect_timeout(&s.addr, Duration::from_secs(1)).is_err(),
        "still accepting"
    );
    c.send_raw(b"}");
    let r = c.read_reply();
    assert_eq!(r.ids().len(), 5, "the request in flight finished");
    assert_eq!(s.wait(Duration::from_secs(8)), Some(0), "exit status 0");
    // The file store's claims end with the process; the service released its own before exiting, and
    // the client lease's reservation is still in the store.
    let store = FileStore::open(&dir.0).unwrap();
    assert!(held(&store).is_empty());
    let node = lease["node_id"].as_u64().unwrap();
    let r = store
        .reservation("default", node)
        .unwrap()
        .expect("the client reservation stays");
    assert_eq!(
        r.position + 1,
        lease["limit"].as_str().unwrap().parse::<u64>().unwrap()
    );
}

fn etcd_url() -> Option<String> {
    match std::env::var("SNOWMINT_TEST_ETCD_URL") {
        Ok(u) => Some(u),
        Err(_) => {
            assert!(
                std::env::var("SNOWMINT_REQUIRE_SERVERS").is_err(),
                "SNOWMINT_REQUIRE_SERVERS is set but SNOWMINT_TEST_ETCD_URL is not"
            );
            eprintln!("skipped: no SNOWMINT_TEST_ETCD_URL (service/test.sh starts etcd)");
            None
        }
    }
}

#[test]
fn on_etcd_client_leases_survive_sigterm_and_sigkill_and_instances_share_the_store() {
    let Some(base) = etcd_url() else { return };
    let node = format!(
        "{base}-service-{}?sequencer=default&ttl=3s",
        std::process::id()
    );
    let args = [
        "--node",
        node.as_str(),
        "--lease-ttl",
        "20s",
        "--lease-reservation",
        "15s",
    ];
    let renew = |addr, token: &str| once(addr, "POST", &format!("/v1/leases/{token}/renew"), b"");

    let mut a = Served::start(&args);
    let taken = once(a.addr, "POST", "/v1/leases", b"{\"holder\": \"browser 1\"}");
    assert_eq!(taken.status, 201, "{}", taken.text());
    let taken = taken.json();
    let token = taken["token"].as_str().unwrap().to_string();
    let a_node = once(a.addr, "GET", "/healthz", b"").json()["node_id"]
        .as_u64()
        .unwrap();
    assert_ne!(
        a_node,
        taken["node_id"].as_u64().unwrap(),
        "one node-ID space for service and clients"
    );
    a.signal(libc::SIGTERM);
    assert_eq!(a.wait(Duration::from_secs(8)), Some(0));

    // A restarted instance renews with the old token.
    let mut b = Served::start(&args);
    let r = renew(b.addr, &token);
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(
        (&r["node_id"], &r["start"], &r["token"]),
        (&taken["node_id"], &taken["start"], &taken["token"])
    );
    assert!(
        r["limit"].as_str().unwrap().parse::<u64>().unwrap()
            >= taken["limit"].as_str().unwrap().parse::<u64>().unwrap()
    );
    b.signal(libc::SIGKILL);
    assert!(b.wait(Duration::from_secs(5)).is_some());

    // After a SIGKILL too; and two instances at once hand out distinct node IDs.
    let c = Served::start(&args);
    let d = Served::start(&args);
    let r = renew(d.addr, &token);
    assert_eq!(r.status, 200, "{}", r.text());
    let c_node = once(c.addr, "GET", "/healthz", b"").json()["node_id"]
        .as_u64()
        .unwrap();
    let d_node = once(d.addr, "GET", "/healthz", b"").json()["node_id"]
        .as_u64()
        .unwrap();
    assert_ne!(c_node, d_node);
    let mut nodes = vec![c_node, d_node, taken["node_id"].as_u64().unwrap()];
    let mut tokens = Vec::new();
    for i in 0..6 {
        let addr = if i % 2 == 0 { c.addr } else { d.addr };
        let l = once(addr, "POST", "/v1/leases", b"");
        assert_eq!(l.status, 201, "{}", l.text());
        let l = l.json();
        nodes.push(l["node_id"].as_u64().unwrap());
        tokens.push(l["token"].as_str().unwrap().to_string());
    }
    let mut unique = nodes.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        nodes.len(),
        "node IDs held at once: {nodes:?}"
    );
    // Release through the other instance than the one that took it, and the old token through C.
    for (i, t) in tokens.iter().enumerate() {
        let addr = if i % 2 == 0 { d.addr } else { c.addr };
        assert_eq!(
            once(addr, "DELETE", &format!("/v1/leases/{t}"), b"").status,
            204
        );
        assert_eq!(renew(c.addr, t).status, 409);
    }
    assert_eq!(
        once(c.addr, "DELETE", &format!("/v1/leases/{token}"), b"").status,
        204
    );
    // IDs of the two instances differ (distinct node IDs) and each is increasing.
    let ic = once(c.addr, "POST", "/v1/ids?count=1000", b"").ids();
    let id = once(d.addr, "POST", "/v1/ids?count=1000", b"").ids();
    let mut all: Vec<u64> = ic.iter().chain(&id).copied().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 2000);
}

#[test]
fn on_etcd_a_lost_own_lease_turns_health_and_batches_to_503() {
    let Some(base) = etcd_url() else { return };
    let node = format!(
        "{base}-service-lost-{}?sequencer=default&ttl=1s",
        std::process::id()
    );
    let s = Served::start(&["--node", &node]);
    assert_eq!(once(s.addr, "GET", "/healthz", b"").status, 200);
    // Paused past its TTL: etcd expires the claim; once resumed, the keeper learns the lease is lost.
    s.signal(libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(3_000));
    s.signal(libc::SIGCONT);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let h = loop {
        let h = once(s.addr, "GET", "/healthz", b"");
        if h.status != 200 || std::time::Instant::now() > deadline {
            break h;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        (h.status, h.error_code().as_str()),
        (503, "LEASE_LOST"),
        "{}",
        h.text()
    );
    let r = once(s.addr, "POST", "/v1/ids", b"");
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (503, "LEASE_LOST"),
        "{}",
        r.text()
    );
}
