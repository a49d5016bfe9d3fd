//! `snowmint serve` as a real process: graceful shutdown (a request in flight finishes, the service's
//! own lease is released, exit 0) and, on a real etcd (`SNOWMINT_TEST_ETCD_URL`, from scripts/servers.sh;
//! skipped without it unless `SNOWMINT_REQUIRE_SERVERS=1`), client leases that outlive the service
//! stopped by SIGTERM and killed by SIGKILL, and two instances on one store.

mod common;

use std::net::TcpStream;
use std::time::Duration;

use common::{now_ms, once, server_url, Conn, Served, TempDir};
use snowmint_coord::{FileStore, Store};

#[test]
fn graceful_shutdown_finishes_requests_in_flight_and_releases_the_own_lease() {
    let dir = TempDir::new("shutdown");
    let node = dir.url("?sequencer=default");
    let mut s = Served::start(&["--node", &node]);
    let own = once(s.addr, "GET", "/healthz", b"").json()["node_id"]
        .as_u64()
        .unwrap();
    let store = FileStore::create(&dir.0).unwrap();
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
    c.send_raw(b"POST /v1/ids?count=5 HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n\r\n{");
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
    let store = FileStore::create(&dir.0).unwrap();
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
    server_url("SNOWMINT_TEST_ETCD_URL")
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
    ); // The store answers: the service claims a node ID again (service/tests/outage.rs has the store
       // itself gone, on etcd and PostgreSQL).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while once(s.addr, "GET", "/healthz", b"").status != 200 {
        assert!(std::time::Instant::now() < deadline, "never recovered");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(once(s.addr, "POST", "/v1/ids?count=3", b"").ids().len(), 3);
}

/// A layout of 4 node IDs (2 node bits), so that client leases reach every node ID that is free (and
/// all four within the reach of clients without a token; the caps are tests/lease_caps.rs's).
const FOUR_NODES: [&str; 10] = [
    "--timestamp-bits",
    "41",
    "--node-bits",
    "2",
    "--sequence-bits",
    "20",
    "--epoch-ms",
    "1288834974657",
    "--max-unauthenticated-leases",
    "4",
];

fn four_nodes() -> snowmint::Layout {
    snowmint::Layout::new(snowmint::LayoutConfig {
        timestamp_bits: 41,
        node_bits: 2,
        sequence_bits: 20,
        epoch_ms: 1_288_834_974_657,
        ..snowmint::LayoutConfig::default()
    })
    .unwrap()
}

fn serve(args: &[&str]) -> Served {
    let all: Vec<&str> = args.iter().chain(FOUR_NODES.iter()).copied().collect();
    Served::start(&all)
}

/// `snowmint serve` that must refuse to start: its exit status (`None`: still serving after 5 s, then
/// killed) and standard error.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(common::snowmint_bin())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .args(FOUR_NODES)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut status = None;
    while status.is_none() && std::time::Instant::now() < deadline {
        status = child.try_wait().unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    if status.is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    (
        status.and_then(|s| s.code()),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Takes client leases from `instances` in turn until every node ID is held, and mints under each as a
/// client would (restored to `start`, below `limit`) at the very tick of a batch each instance minted:
/// the number of IDs minted by both an instance and a client, and the node IDs leased.
fn fleet_collisions(instances: &[&Served]) -> (usize, Vec<u64>) {
    let layout = four_nodes();
    let mut leases = Vec::new();
    'take: for _ in 0..8 {
        for s in instances {
            let l = once(s.addr, "POST", "/v1/leases", b"");
            if l.status == 503 && l.error_code() == "NODE_IDS_EXHAUSTED" {
                break 'take;
            }
            assert_eq!(l.status, 201, "{}", l.text());
            leases.push(l.json());
        }
    }
    let mut minted = std::collections::HashSet::new();
    let mut batches = Vec::new();
    for s in instances {
        let ids = once(s.addr, "POST", "/v1/ids?count=1000", b"").ids();
        assert_eq!(ids.len(), 1000);
        minted.extend(ids.iter().copied());
        batches.push(layout.decode(ids[0]).unwrap().unix_ns().unwrap());
    }
    let dec = |v: &serde_json::Value| v.as_str().unwrap().parse::<u64>().unwrap();
    let mut collisions = 0;
    for l in &leases {
        let node = l["node_id"].as_u64().unwrap();
        for &at_ns in &batches {
            let mut client = snowmint::Generator::new(layout, node, Default::default()).unwrap();
            client.restore(dec(&l["start"]));
            let mut ids = [0u64; 1000];
            client.next_ids_at(at_ns, &mut ids).unwrap();
            assert!(client.state() <= dec(&l["limit"]), "within the lease {l}");
            collisions += ids.iter().filter(|id| minted.contains(id)).count();
        }
    }
    let nodes = leases
        .iter()
        .map(|l| l["node_id"].as_u64().unwrap())
        .collect();
    (collisions, nodes)
}

fn own_node(s: &Served) -> u64 {
    once(s.addr, "GET", "/healthz", b"").json()["node_id"]
        .as_u64()
        .unwrap()
}

/// Set-up (a): a lease source as `--node` with another `--client-sequencer` is refused at start; on its
/// own sequencer (the default), no client lease gets the service's node ID and no ID is minted twice.
fn lease_source_and_client_sequencer(node: &str) {
    // Only `default` is created implicitly: the operator creates the sequencer first.
    let snowmint_coord::NodeSource::Lease(l) = snowmint_coord::NodeSource::parse(node).unwrap()
    else {
        panic!("{node}: not a lease source")
    };
    let store = snowmint_coord::source::open_store(&l.store).unwrap();
    snowmint_coord::Sequencer::create(store, &l.sequencer, four_nodes(), 4).unwrap();
    let (status, err) = refused(&["--node", node, "--client-sequencer", "clients"]);
    if status.is_none() || status == Some(0) {
        // The old service started: count what its clients mint twice.
        let s = serve(&["--node", node, "--client-sequencer", "clients"]);
        let (collisions, nodes) = fleet_collisions(&[&s]);
        panic!(
            "started with another client sequencer: service node {}, client leases {nodes:?}, {collisions} IDs minted twice",
            own_node(&s)
        );
    }
    assert!(
        err.contains("INVALID_ARGUMENT") && err.contains("--client-sequencer"),
        "{err}"
    );
    let s = serve(&["--node", node]);
    let own = own_node(&s);
    let (collisions, nodes) = fleet_collisions(&[&s]);
    eprintln!("set-up (a): service node {own}, client leases {nodes:?}, {collisions} collisions");
    assert_eq!(nodes.len(), 3, "every other node ID leased: {nodes:?}");
    assert!(!nodes.contains(&own), "{own} leased: {nodes:?}");
    assert_eq!(collisions, 0);
}

/// Set-up (b): instances `--node 1` and `--node 2` sharing one `--leases` store claim their node IDs
/// there: no client lease gets either, no ID is minted twice, a third `--node 1` is refused while the
/// first runs, and each instance releases its node ID at shutdown.
fn fixed_nodes_sharing_leases(store: &str, sequencer: &str) {
    // A client sequencer other than the service's default `clients` must exist.
    let parsed = snowmint_coord::source::parse_store_url(store).unwrap();
    let opened = snowmint_coord::source::open_store(&parsed).unwrap();
    snowmint_coord::Sequencer::create(opened, sequencer, four_nodes(), 4).unwrap();
    let common = ["--leases", store, "--client-sequencer", sequencer];
    let with = |node| [&["--node", node][..], &common[..]].concat();
    let mut a = serve(&with("1"));
    let mut b = serve(&with("2"));
    // Leases from B first: the old B handed out A's node ID.
    let (collisions, nodes) = fleet_collisions(&[&b, &a]);
    eprintln!("set-up (b): instances on 1 and 2, client leases {nodes:?}, {collisions} collisions");
    assert!(
        !nodes.contains(&1) && !nodes.contains(&2),
        "an instance's node ID leased: {nodes:?}"
    );
    assert_eq!(collisions, 0);
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    let (status, err) = refused(&with("1"));
    assert_ne!(status, Some(0));
    assert!(
        err.contains("NODE_IDS_EXHAUSTED") && err.contains("node ID 1"),
        "{err}"
    );
    a.signal(libc::SIGTERM);
    assert_eq!(a.wait(Duration::from_secs(8)), Some(0));
    b.signal(libc::SIGTERM);
    assert_eq!(b.wait(Duration::from_secs(8)), Some(0));
    let left = held_on(store, sequencer);
    assert!(!left.contains(&1) && !left.contains(&2), "{left:?}");
}

fn held_on(store: &str, sequencer: &str) -> Vec<u64> {
    let parsed = snowmint_coord::source::parse_store_url(store).unwrap();
    snowmint_coord::source::open_store(&parsed)
        .unwrap()
        .holders(sequencer, now_ms())
        .unwrap()
        .into_iter()
        .filter(|n| n.claim.is_some())
        .map(|n| n.node_id)
        .collect()
}

#[test]
fn a_lease_source_with_another_client_sequencer_is_refused_on_the_embedded_store() {
    let dir = TempDir::new("fleet-a");
    lease_source_and_client_sequencer(&dir.url("?sequencer=web"));
}

#[test]
fn fixed_nodes_sharing_leases_claim_them_on_the_embedded_store() {
    let dir = TempDir::new("fleet-b");
    let store = dir.url("");
    fixed_nodes_sharing_leases(&store, "clients");
}

#[test]
fn on_etcd_a_lease_source_with_another_client_sequencer_is_refused() {
    let Some(base) = etcd_url() else { return };
    let pid = std::process::id();
    lease_source_and_client_sequencer(&format!("{base}-fleet-a-{pid}?sequencer=web"));
}

#[test]
fn on_etcd_fixed_nodes_sharing_leases_claim_them() {
    let Some(base) = etcd_url() else { return };
    let store = format!("{base}-fleet-b-{}", std::process::id());
    fixed_nodes_sharing_leases(&store, "clients");
}

fn postgres_url() -> Option<String> {
    server_url("SNOWMINT_TEST_POSTGRES_URL")
}

#[test]
fn on_postgres_a_lease_source_with_another_client_sequencer_is_refused() {
    let Some(url) = postgres_url() else { return };
    // One database for every run: a sequencer of this run's own.
    lease_source_and_client_sequencer(&format!("{url}?sequencer=web_{}", std::process::id()));
}

#[test]
fn on_postgres_fixed_nodes_sharing_leases_claim_them() {
    let Some(url) = postgres_url() else { return };
    fixed_nodes_sharing_leases(&url, &format!("clients_{}", std::process::id()));
}
