//! `snowmint serve` as a process on a real etcd and a real PostgreSQL reached through a proxy the test
//! stalls or cuts (SPEC §6a: a slow store never queues unrelated requests): every request is answered
//! within the store deadline while the store is stalled, `/metrics` at once; after a lost own lease the
//! service claims a node ID again once the store is back; SIGTERM exits 0 with the store gone.

mod common;

use std::time::{Duration, Instant};

use common::{once, server_url, Conn, Proxy, Served};

/// A lease source on `store` ("etcd" or "postgres") through `proxy`, with its own sequencer.
fn node(store: &str, proxy: &Proxy, base: &str, tag: &str, ttl: &str) -> String {
    let pid = std::process::id();
    match store {
        "etcd" => format!(
            "{}-{tag}-{pid}?sequencer=default&ttl={ttl}",
            proxy.url(base)
        ),
        _ => {
            // PostgreSQL: one database for every run, a sequencer of this run's own (created here:
            // only `default` is created implicitly).
            let name = format!("{tag}_{pid}");
            snowmint_coord::generator::create_sequencer(
                base,
                &name,
                snowmint::Layout::twitter(),
                1024,
                Default::default(),
            )
            .unwrap();
            format!("{}?sequencer={name}&ttl={ttl}", proxy.url(base))
        }
    }
}

fn stores() -> Vec<(&'static str, String)> {
    [
        ("etcd", "SNOWMINT_TEST_ETCD_URL"),
        ("postgres", "SNOWMINT_TEST_POSTGRES_URL"),
    ]
    .into_iter()
    .filter_map(|(s, var)| server_url(var).map(|u| (s, u)))
    .collect()
}

/// One request on a new connection: (status, error code or "", seconds taken).
fn timed(addr: std::net::SocketAddr, method: &str, target: &str) -> (u16, String, f64) {
    let t = Instant::now();
    let r = Conn::open(addr).request(method, target, b"");
    let code = if r.status >= 400 {
        r.error_code()
    } else {
        String::new()
    };
    (r.status, code, t.elapsed().as_secs_f64())
}

fn a_stalled_store_queues_nothing(store: &str, base: &str) {
    let proxy = Proxy::start(&Proxy::upstream_of(base));
    // Requests cut off by the deadline still claim their leases when the store answers: a cap above them.
    let mut s = Served::start(&[
        "--node",
        &node(store, &proxy, base, "stall", "30s"),
        "--max-leases-per-client",
        "100",
    ]);
    assert_eq!(once(s.addr, "POST", "/v1/leases", b"").status, 201);
    proxy.pause();
    let addr = s.addr;
    let mut threads = Vec::new();
    for (method, target, n) in [
        ("GET", "/metrics", 8),
        ("POST", "/v1/leases", 20),
        ("POST", "/v1/ids?count=10", 20),
        ("GET", "/healthz", 10),
    ] {
        for _ in 0..n {
            threads.push(std::thread::spawn(move || {
                (target, timed(addr, method, target))
            }));
        }
    }
    let bound = snowmint_service::STORE_DEADLINE.as_secs_f64() + 2.0;
    for t in threads {
        let (target, (status, code, secs)) = t.join().unwrap();
        if target == "/v1/leases" {
            assert_eq!(
                (status, code.as_str()),
                (503, "STORE_UNAVAILABLE"),
                "{store}"
            );
            assert!(secs < bound, "{store}: {target} took {secs:.1} s");
        } else {
            assert_eq!(status, 200, "{store} {target}: {code}");
            assert!(secs < 1.5, "{store}: {target} took {secs:.1} s");
        }
    }
    // The store back: leases again, within a few seconds.
    proxy.resume();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let r = once(s.addr, "POST", "/v1/leases", b"");
        if r.status == 201 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{store}: {} {}",
            r.status,
            r.text()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    s.signal(libc::SIGTERM);
    assert_eq!(s.wait(Duration::from_secs(15)), Some(0), "{store}");
}

#[test]
fn a_stalled_store_queues_no_request_on_etcd_and_postgres() {
    for (store, base) in stores() {
        a_stalled_store_queues_nothing(store, &base);
    }
}

fn the_own_lease_is_claimed_again(store: &str, base: &str) {
    let proxy = Proxy::start(&Proxy::upstream_of(base));
    let mut s = Served::start(&["--node", &node(store, &proxy, base, "reclaim", "2s")]);
    assert_eq!(once(s.addr, "GET", "/healthz", b"").status, 200);
    // The store gone past the TTL: the lease is lost.
    proxy.cut();
    let deadline = Instant::now() + Duration::from_secs(15);
    let lost = loop {
        let h = once(s.addr, "GET", "/healthz", b"");
        if h.status != 200 {
            break h;
        }
        assert!(
            Instant::now() < deadline,
            "{store}: the lease was never lost"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(lost.error_code(), "LEASE_LOST", "{store}");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(once(s.addr, "GET", "/healthz", b"").status, 503);
    // The store back: a node ID is claimed again, health and batches are 200 again.
    proxy.resume();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let h = once(s.addr, "GET", "/healthz", b"");
        if h.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "{store}: still {}", h.text());
        std::thread::sleep(Duration::from_millis(200));
    }
    let r = once(s.addr, "POST", "/v1/ids?count=5", b"");
    assert_eq!(r.ids().len(), 5, "{store}");
    s.signal(libc::SIGTERM);
    assert_eq!(s.wait(Duration::from_secs(15)), Some(0), "{store}");
}

#[test]
fn the_own_lease_is_claimed_again_when_etcd_and_postgres_return() {
    for (store, base) in stores() {
        the_own_lease_is_claimed_again(store, &base);
    }
}

fn sigterm_exits_0_without_the_store(store: &str, base: &str, cut: bool) {
    let proxy = Proxy::start(&Proxy::upstream_of(base));
    let mut s = Served::start(&["--node", &node(store, &proxy, base, "term", "30s")]);
    assert_eq!(once(s.addr, "GET", "/healthz", b"").status, 200);
    if cut {
        proxy.cut();
    } else {
        proxy.pause();
    }
    let t = Instant::now();
    s.signal(libc::SIGTERM);
    let code = s.wait(Duration::from_secs(15));
    if code == Some(-1) {
        use std::os::unix::process::ExitStatusExt;
        eprintln!("signal: {:?}", s.child.wait().unwrap().signal());
    }
    assert_eq!(
        code,
        Some(0),
        "{store}, store {}",
        if cut { "gone" } else { "stalled" }
    );
    assert!(t.elapsed() < Duration::from_secs(12), "{:?}", t.elapsed());
}

#[test]
fn sigterm_exits_0_with_etcd_and_postgres_gone_or_stalled() {
    for (store, base) in stores() {
        sigterm_exits_0_without_the_store(store, &base, true);
        sigterm_exits_0_without_the_store(store, &base, false);
    }
}
