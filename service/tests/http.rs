//! The protocol of SPEC §6a on a real 127.0.0.1 socket, the service in this process (a fixed node ID,
//! client leases on an in-memory store): batches, every bad request, metrics, leases.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use common::{once, parse_prometheus, Conn, InProcess};
use snowmint::{Layout, LayoutConfig};
use snowmint_coord::{MemoryStore, Store, SystemTime};
use snowmint_service::{Config, Service};

fn service(config: Config, store: Option<Arc<dyn Store>>) -> InProcess {
    InProcess::start(Service::open_with(config, Arc::new(SystemTime), store, false).unwrap())
}

fn with_store(config: Config) -> InProcess {
    service(config, Some(Arc::new(MemoryStore::new())))
}

#[test]
fn concurrent_batch_fetchers_get_unique_increasing_ids() {
    let s = with_store(common::config("7"));
    let addr = s.addr;
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Conn::open(addr);
                let mut all = Vec::new();
                for i in 0..150 {
                    let count = [1, 1000, 37, 10_000][i % 4];
                    let r = c.request("POST", &format!("/v1/ids?count={count}"), b"");
                    let v = r.json();
                    assert_eq!(v["node_id"], 7);
                    assert_eq!(v["layout"], "twitter");
                    assert_eq!(v["valid_for_ms"], 600_000);
                    let ids = r.ids();
                    assert_eq!(ids.len(), count);
                    all.extend(ids);
                }
                // Strictly increasing within each batch and across this connection's batches.
                assert!(all.windows(2).all(|w| w[0] < w[1]));
                all
            })
        })
        .collect();
    let mut seen = HashSet::new();
    let mut total = 0;
    for t in threads {
        for id in t.join().unwrap() {
            total += 1;
            assert!(seen.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(total, 4 * (150 / 4 * 11_038 + 1 + 1000));
    let layout = Layout::twitter();
    for id in seen.iter().take(100) {
        assert_eq!(layout.decode(*id).unwrap().node, 7);
    }
}

#[test]
fn batch_answer_shape_and_validity() {
    let s = with_store(common::config("3"));
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    for (target, body, n) in [
        ("/v1/ids", &b""[..], 1),
        ("/v1/ids?count=5", b"{}", 5),
        ("/v1/ids?count=2", b"  {  } ", 2),
    ] {
        let r = once(s.addr, "POST", target, body);
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.ids().len(), n);
        let v = r.json();
        let until = v["valid_until"].as_u64().unwrap();
        assert!(
            until >= before + 600_000 && until < before + 600_000 + 60_000,
            "{v}"
        );
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys.len(), 5, "{v}");
    }
    let h = once(s.addr, "GET", "/healthz", b"");
    assert_eq!(h.status, 200);
    assert_eq!(
        h.json(),
        serde_json::json!({"status": "ok", "node_id": 3, "layout": "twitter"})
    );
}

#[test]
fn every_bad_request_gets_its_status_and_code() {
    let s = with_store(common::config("1"));
    let big = vec![b' '; 5000];
    /// method, target, body, status, code, field
    type Case<'a> = (&'a str, &'a str, &'a [u8], u16, &'a str, Option<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "POST",
            "/v1/ids?count=0",
            b"",
            400,
            "INVALID_ARGUMENT",
            Some("count"),
        ),
        (
            "POST",
            "/v1/ids?count=10001",
            b"",
            400,
            "INVALID_ARGUMENT",
            Some("count"),
        ),
        (
            "POST",
            "/v1/ids?count=99999999999999999999999",
            b"",
            400,
            "INVALID_ARGUMENT",
            Some("count"),
        ),
        (
            "POST",
            "/v1/ids?count=abc",
            b"",
            400,
            "INVALID_ARGUMENT",
            Some("count"),
        ),
        (
            "POST",
            "/v1/ids?count=-1",
            b"",
            400,
            "INVALID_ARGUMENT",
            Some("count"),
        ),
        (
            "POST",
            "/v1/ids?count=",
            b"",
            400,
            "INVALID_ARGUMENT",
            Some("count"),
        ),
        (
            "POST",
            "/v1/ids?count=1&count=2",
            b"",
            400,
            "INVALID_ARGUMENT",
            Some("count"),
        ),
        (
            "POST",
            "/v1/ids?cout=5",
            b"",
            400,
            "INVALID_ARGUMENT",
            Some("query"),
        ),
        (
            "POST",
            "/v1/ids",
            b"{\"count\": 3}",
            400,
            "INVALID_ARGUMENT",
            Some("body"),
        ),
        ("POST", "/v1/ids", b"{nope", 400, "PARSE", Some("body")),
        (
            "POST",
            "/v1/ids",
            &big,
            413,
            "INVALID_ARGUMENT",
            Some("body"),
        ),
        (
            "GET",
            "/v1/ids",
            b"",
            405,
            "INVALID_ARGUMENT",
            Some("method"),
        ),
        (
            "PUT",
            "/healthz",
            b"",
            405,
            "INVALID_ARGUMENT",
            Some("method"),
        ),
        (
            "GET",
            "/v1/leases",
            b"",
            405,
            "INVALID_ARGUMENT",
            Some("method"),
        ),
        (
            "POST",
            "/v1/leases/x",
            b"",
            405,
            "INVALID_ARGUMENT",
            Some("method"),
        ),
        ("GET", "/v2/ids", b"", 404, "INVALID_ARGUMENT", Some("path")),
        ("POST", "/", b"", 404, "INVALID_ARGUMENT", Some("path")),
        (
            "POST",
            "/v1/leases/a/b/renew",
            b"",
            404,
            "INVALID_ARGUMENT",
            Some("path"),
        ),
        (
            "POST",
            "/v1/leases/not-a-token/renew",
            b"",
            404,
            "LEASE_LOST",
            Some("token"),
        ),
        (
            "DELETE",
            "/v1/leases/1.2.3.4.other-sequencer",
            b"",
            404,
            "LEASE_LOST",
            Some("token"),
        ),
        (
            // Well formed, but not tagged by this store's key: a token nobody was given.
            "POST",
            "/v1/leases/2.5.999.0.00000000000000000000000000000000.clients/renew",
            b"",
            404,
            "LEASE_LOST",
            Some("token"),
        ),
        (
            "POST",
            "/v1/leases",
            b"[1]",
            400,
            "INVALID_ARGUMENT",
            Some("body"),
        ),
        (
            "POST",
            "/v1/leases",
            b"{\"holder\": 5}",
            400,
            "INVALID_ARGUMENT",
            Some("body"),
        ),
        (
            "POST",
            "/v1/leases",
            b"{\"who\": \"x\"}",
            400,
            "INVALID_ARGUMENT",
            Some("body"),
        ),
        (
            "POST",
            "/v1/leases",
            b"{\"holder\": \"x\"",
            400,
            "PARSE",
            Some("body"),
        ),
    ];
    let mut c = Conn::open(s.addr);
    for (method, target, body, status, code, field) in cases {
        // Each on the same keep-alive connection, except the 413 (the server may close it).
        let r = if status == 413 {
            once(s.addr, method, target, body)
        } else {
            c.request(method, target, body)
        };
        assert_eq!(r.status, status, "{method} {target}: {}", r.text());
        assert_eq!(
            r.header("content-type"),
            Some("application/json"),
            "{method} {target}"
        );
        assert_eq!(r.error_code(), code, "{method} {target}: {}", r.text());
        assert_eq!(
            r.json()["error"]["field"].as_str(),
            field,
            "{method} {target}"
        );
        if status == 405 {
            assert!(
                r.header("allow").is_some(),
                "{method} {target}: no allow header"
            );
        }
    }
    assert_eq!(
        c.request("POST", "/v1/ids", b"").status,
        200,
        "the connection survived"
    );
    // A lying content-length above the limit is refused before any body is read.
    let mut raw = Conn::open(s.addr);
    raw.send_raw(b"POST /v1/ids HTTP/1.1\r\nhost: x\r\ncontent-length: 1000000\r\n\r\n");
    let r = raw.read_reply();
    assert_eq!(
        (r.status, r.error_code()),
        (413, "INVALID_ARGUMENT".to_string())
    );
}

#[test]
fn leases_need_a_store() {
    let s = service(common::config("1"), None);
    let r = once(s.addr, "POST", "/v1/leases", b"");
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (404, "INVALID_ARGUMENT")
    );
    assert!(r.text().contains("--store URL"), "{}", r.text());
    assert!(r.text().contains("\"field\":\"path\""), "{}", r.text());
    // Renew and release too: the routes of a service without client leases.
    for (method, path) in [("POST", "/v1/leases/x/renew"), ("DELETE", "/v1/leases/x")] {
        let r = once(s.addr, method, path, b"");
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (404, "INVALID_ARGUMENT"),
            "{method} {path}"
        );
    }
}

fn metrics(addr: std::net::SocketAddr) -> std::collections::BTreeMap<String, f64> {
    let r = once(addr, "GET", "/metrics", b"");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    parse_prometheus(&r.text())
}

#[test]
fn metrics_parse_and_move() {
    let s = with_store(common::config("2"));
    let m0 = metrics(s.addr);
    for name in [
        "snowmint_ids_minted_total",
        "snowmint_batches_total",
        "snowmint_borrowed_ticks_total",
        "snowmint_waits_total",
        "snowmint_wait_seconds_total",
        "snowmint_clock_regressions_total",
        "snowmint_leases_active",
        "snowmint_lease_holders{sequencer=\"clients\"}",
    ] {
        assert!(m0.contains_key(name), "{name} missing: {m0:?}");
    }
    let mut c = Conn::open(s.addr);
    for _ in 0..3 {
        c.request("POST", "/v1/ids?count=100", b"").ids();
    }
    c.request("POST", "/v1/ids?count=0", b"");
    let lease = c.request("POST", "/v1/leases", b"");
    assert_eq!(lease.status, 201);
    let m1 = metrics(s.addr);
    let d = |k: &str| m1.get(k).copied().unwrap_or(0.0) - m0.get(k).copied().unwrap_or(0.0);
    assert_eq!(d("snowmint_ids_minted_total"), 300.0);
    assert_eq!(d("snowmint_batches_total"), 3.0);
    assert_eq!(
        d("snowmint_http_requests_total{route=\"/v1/ids\",status=\"200\"}"),
        3.0
    );
    assert_eq!(
        d("snowmint_http_requests_total{route=\"/v1/ids\",status=\"400\"}"),
        1.0
    );
    assert_eq!(
        d("snowmint_http_requests_total{route=\"/v1/leases\",status=\"201\"}"),
        1.0
    );
    assert_eq!(
        d("snowmint_http_requests_total{route=\"/metrics\",status=\"200\"}"),
        1.0
    );
    assert_eq!(m1["snowmint_leases_active"], 1.0);
    // The client's claim and the service's own (its fixed node ID 2, claimed on the client sequencer).
    assert_eq!(m1["snowmint_lease_holders{sequencer=\"clients\"}"], 2.0);
    let token = lease.json()["token"].as_str().unwrap().to_string();
    assert_eq!(
        c.request("DELETE", &format!("/v1/leases/{token}"), b"")
            .status,
        204
    );
    let m2 = metrics(s.addr);
    assert_eq!(m2["snowmint_leases_active"], 0.0);
    // 10000 IDs at one clock reading span three ticks of 4096: at least two borrowed ahead of the clock.
    c.request("POST", "/v1/ids?count=10000", b"").ids();
    let m3 = metrics(s.addr);
    assert!(
        m3["snowmint_borrowed_ticks_total"] >= m2["snowmint_borrowed_ticks_total"] + 2.0,
        "{m2:?} then {m3:?}"
    );
    assert_eq!(
        m3["snowmint_ids_minted_total"],
        m2["snowmint_ids_minted_total"] + 10_000.0
    );
}

fn dec(v: &serde_json::Value) -> u64 {
    v.as_str().expect("a decimal string").parse().unwrap()
}

/// A layout of 4 node IDs (2 node bits).
fn small() -> Config {
    let cfg = LayoutConfig {
        timestamp_bits: 41,
        node_bits: 2,
        sequence_bits: 12,
        epoch_ms: 1_288_834_974_657,
        ..LayoutConfig::default()
    };
    let layout = Layout::new(cfg).unwrap();
    let mut c = common::config("0");
    c.layout = layout;
    c.layout_name = snowmint_coord::layout_text(&layout);
    c.lease_ttl = Duration::from_secs(3);
    c.lease_reservation = Duration::from_secs(2);
    // Every node ID to one client: these tests are about exhaustion, not the caps (tests/hostile.rs).
    c.max_unauthenticated_leases = Some(usize::MAX);
    c
}

#[test]
fn leases_take_renew_release_exhaust_and_follow_reservations() {
    let s = with_store(small());
    let mut c = Conn::open(s.addr);
    let a = c.request("POST", "/v1/leases", b"{\"holder\": \"tab 1\"}");
    assert_eq!(a.status, 201, "{}", a.text());
    let a = a.json();
    let token = a["token"].as_str().unwrap().to_string();
    assert!(token.len() <= 200);
    assert!(token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)));
    assert_eq!(a["sequencer"], "clients");
    assert_eq!(a["renew_after_ms"], 666);
    let node = a["node_id"].as_u64().unwrap();
    assert!(
        (1..4).contains(&node),
        "the service's own node 0 is never handed out: {a}"
    );
    let (start, limit) = (dec(&a["start"]), dec(&a["limit"]));
    assert!(limit > start);
    assert!(
        a["expires_unix_ms"].as_u64().unwrap() > a["limit_unix_ms"].as_u64().unwrap(),
        "{a}"
    );
    // The limit reaches about 2 s past the clock.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let limit_ms = a["limit_unix_ms"].as_u64().unwrap();
    assert!(
        limit_ms > now_ms + 1_500 && limit_ms < now_ms + 3_000,
        "{a}"
    );

    std::thread::sleep(Duration::from_millis(50));
    let r = c.request("POST", &format!("/v1/leases/{token}/renew"), b"");
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(r["token"], a["token"]);
    assert_eq!(r["node_id"], a["node_id"]);
    assert_eq!(r["start"], a["start"]);
    assert!(dec(&r["limit"]) > limit, "the limit grows: {a} then {r}");
    assert!(r["expires_unix_ms"].as_u64() >= a["expires_unix_ms"].as_u64());
    let last_limit = dec(&r["limit"]);

    // The two other node IDs, then none.
    let b = c.request("POST", "/v1/leases", b"").json();
    let d = c.request("POST", "/v1/leases", b"").json();
    let mut nodes: Vec<u64> = [&a, &b, &d]
        .iter()
        .map(|v| v["node_id"].as_u64().unwrap())
        .collect();
    nodes.sort();
    assert_eq!(nodes, vec![1, 2, 3]);
    let e = c.request("POST", "/v1/leases", b"");
    assert_eq!(
        (e.status, e.error_code().as_str()),
        (503, "NODE_IDS_EXHAUSTED")
    );

    // Released: renewing fails with 409; the next holder of the node starts after the reservation.
    assert_eq!(
        c.request("DELETE", &format!("/v1/leases/{token}"), b"")
            .status,
        204
    );
    let again = c.request("POST", &format!("/v1/leases/{token}/renew"), b"");
    assert_eq!(
        (again.status, again.error_code().as_str()),
        (409, "LEASE_LOST")
    );
    let n = c.request("POST", "/v1/leases", b"");
    assert_eq!(n.status, 201, "{}", n.text());
    let n = n.json();
    assert_eq!(n["node_id"].as_u64(), Some(node));
    assert!(n["fencing_token"].as_str() != a["fencing_token"].as_str());
    assert!(
        dec(&n["start"]) >= last_limit,
        "start {} after the stored limit {last_limit}",
        n["start"]
    );
    // A second release is harmless.
    assert_eq!(
        c.request("DELETE", &format!("/v1/leases/{token}"), b"")
            .status,
        204
    );
}

/// Every store expires a client lease at its TTL (SPEC §6a): a renewal after it is 409 `LEASE_LOST`, and
/// every node ID is free again for other clients, on the in-memory store and on the embedded store
/// (whose claims are OS locks held by the service's process, which lives on).
#[test]
fn an_expired_lease_cannot_be_renewed_and_its_node_id_is_free_again() {
    let dir = common::TempDir::new("expiry");
    let stores: [Arc<dyn Store>; 2] = [
        Arc::new(MemoryStore::new()),
        Arc::new(snowmint_coord::FileStore::create(&dir.0).unwrap()),
    ];
    for store in stores {
        let what = store.describe();
        let mut cfg = small();
        cfg.lease_ttl = Duration::from_millis(300);
        cfg.lease_reservation = Duration::from_millis(200);
        let s = service(cfg, Some(store));
        let take = || once(s.addr, "POST", "/v1/leases", b"");
        // The three node IDs the service does not mint with, then none.
        let first: Vec<_> = (0..3).map(|_| take()).collect();
        for a in &first {
            assert_eq!(a.status, 201, "{what}: {}", a.text());
        }
        let e = take();
        assert_eq!(
            (e.status, e.error_code().as_str()),
            (503, "NODE_IDS_EXHAUSTED"),
            "{what}"
        );
        // Clients are never told where the store is (its URL could hold a password).
        assert!(!e.text().contains("://"), "{what}: {}", e.text());
        std::thread::sleep(Duration::from_millis(450));
        let token = first[0].json()["token"].as_str().unwrap().to_string();
        let r = once(s.addr, "POST", &format!("/v1/leases/{token}/renew"), b"");
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (409, "LEASE_LOST"),
            "{what}: {}",
            r.text()
        );
        // Past the TTL every node ID is free again, with a larger fencing token.
        let mut nodes = Vec::new();
        for _ in 0..3 {
            let n = take();
            assert_eq!(
                n.status,
                201,
                "{what}: expired leases still hold their node IDs: {}",
                n.text()
            );
            nodes.push(n.json()["node_id"].as_u64().unwrap());
        }
        nodes.sort();
        assert_eq!(nodes, vec![1, 2, 3], "{what}");
    }
}

#[test]
fn shutdown_answers_503_and_health_follows() {
    let mut s = with_store(common::config("4"));
    let mut c = Conn::open(s.addr);
    assert_eq!(c.request("GET", "/healthz", b"").status, 200);
    s.service.begin_shutdown();
    let h = c.request("GET", "/healthz", b"");
    assert_eq!(
        (h.status, h.error_code().as_str()),
        (503, "SERVICE_UNAVAILABLE")
    );
    let r = c.request("POST", "/v1/ids", b"");
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (503, "SERVICE_UNAVAILABLE")
    );
    s.stop();
}

#[test]
fn too_far_ahead_says_when_to_retry() {
    // 4 IDs per millisecond, at most 2 s ahead of the clock.
    let cfg = LayoutConfig {
        timestamp_bits: 41,
        node_bits: 10,
        sequence_bits: 2,
        epoch_ms: 1_288_834_974_657,
        ..LayoutConfig::default()
    };
    let layout = Layout::new(cfg).unwrap();
    let mut c = common::config("9");
    c.layout = layout;
    c.layout_name = snowmint_coord::layout_text(&layout);
    let s = service(c, None);
    // More than the layout can ever mint at once (2 s ahead holds 8004): 400 on count.
    let r = once(s.addr, "POST", "/v1/ids?count=10000", b"");
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (400, "INVALID_ARGUMENT"),
        "{}",
        r.text()
    );
    assert_eq!(r.json()["error"]["field"], "count");
    // 5000 fit (1.25 s ahead); 5000 more would be 2.5 s ahead.
    assert_eq!(
        once(s.addr, "POST", "/v1/ids?count=5000", b"").ids().len(),
        5000
    );
    let r = once(s.addr, "POST", "/v1/ids?count=5000", b"");
    assert_eq!(
        (r.status, r.error_code().as_str()),
        (503, "TOO_FAR_AHEAD"),
        "{}",
        r.text()
    );
    let ms = r.json()["error"]["retry_after_ms"]
        .as_u64()
        .expect("retry_after_ms");
    assert!((1..=5_000).contains(&ms), "{ms}");
    let header: u64 = r
        .header("retry-after")
        .expect("retry-after")
        .parse()
        .unwrap();
    assert_eq!(header, ms.div_ceil(1000));
    // A batch that fits is served.
    assert_eq!(
        once(s.addr, "POST", "/v1/ids?count=100", b"").ids().len(),
        100
    );
}

#[test]
fn cors_for_the_origins_given_and_no_other() {
    let mut config = common::config("7");
    config.cors_origins = vec!["http://app.test:8000".to_string()];
    let s = with_store(config);
    let raw = |req: String| {
        let mut c = Conn::open(s.addr);
        c.send_raw(req.as_bytes());
        c.read_reply()
    };
    // The browser's preflight for a JSON POST: answered before the protocol, with what may follow.
    let pre = raw(
        "OPTIONS /v1/leases HTTP/1.1\r\nhost: x\r\norigin: http://app.test:8000\r\n\
         access-control-request-method: POST\r\naccess-control-request-headers: content-type\r\n\
         content-length: 0\r\n\r\n"
            .to_string(),
    );
    assert_eq!(pre.status, 204, "{}", pre.text());
    assert_eq!(
        pre.header("access-control-allow-origin"),
        Some("http://app.test:8000")
    );
    assert_eq!(
        pre.header("access-control-allow-methods"),
        Some("GET, POST, DELETE")
    );
    assert_eq!(
        pre.header("access-control-allow-headers"),
        Some("content-type, authorization")
    );
    // The request itself: its answer readable by that origin, errors too.
    let ids = raw(
        "POST /v1/ids?count=2 HTTP/1.1\r\nhost: x\r\norigin: http://app.test:8000\r\ncontent-length: 0\r\n\r\n"
            .to_string(),
    );
    assert_eq!(ids.status, 200);
    assert_eq!(ids.ids().len(), 2);
    assert_eq!(
        ids.header("access-control-allow-origin"),
        Some("http://app.test:8000")
    );
    assert_eq!(ids.header("vary"), Some("origin"));
    let bad = raw(
        "POST /v1/ids?count=0 HTTP/1.1\r\nhost: x\r\norigin: http://app.test:8000\r\ncontent-length: 0\r\n\r\n"
            .to_string(),
    );
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.header("access-control-allow-origin"),
        Some("http://app.test:8000")
    );
    // Another origin: refused, with no CORS headers, and its preflight is not answered as one.
    let other = raw(
        "POST /v1/ids HTTP/1.1\r\nhost: x\r\norigin: http://evil.test\r\ncontent-length: 0\r\n\r\n"
            .to_string(),
    );
    assert_eq!(other.status, 403);
    assert_eq!(other.error_code(), "INVALID_ARGUMENT");
    assert_eq!(other.header("access-control-allow-origin"), None);
    let other_pre = raw(
        "OPTIONS /v1/ids HTTP/1.1\r\nhost: x\r\norigin: http://evil.test\r\n\
         access-control-request-method: POST\r\ncontent-length: 0\r\n\r\n"
            .to_string(),
    );
    assert_eq!(other_pre.status, 403, "{}", other_pre.text());
    assert_eq!(other_pre.header("access-control-allow-origin"), None);
    // Without --cors-origin: a foreign origin is refused, the service's own is served, neither with
    // CORS headers.
    let plain = with_store(common::config("8"));
    let mut c = Conn::open(plain.addr);
    c.send_raw(b"POST /v1/ids HTTP/1.1\r\nhost: x\r\norigin: http://app.test:8000\r\ncontent-length: 0\r\n\r\n");
    let r = c.read_reply();
    assert_eq!(r.status, 403);
    assert_eq!(r.header("access-control-allow-origin"), None);
    c.send_raw(
        b"POST /v1/ids HTTP/1.1\r\nhost: x:1\r\norigin: http://x:1\r\ncontent-length: 0\r\n\r\n",
    );
    let r = c.read_reply();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), None);
}

#[test]
fn cors_origins_are_checked() {
    for good in [
        "*",
        "https://app.example.com",
        "http://127.0.0.1:8080",
        "http://[::1]:3000",
    ] {
        assert_eq!(snowmint_service::check_origin(good), Ok(()), "{good}");
    }
    for bad in [
        "",
        "app.example.com",
        "https://",
        "https://app.example.com/path",
        "ftp://x",
    ] {
        assert!(snowmint_service::check_origin(bad).is_err(), "{bad}");
    }
}

/// SPEC §3.3 for client leases: the client sequencer re-created under another layout (an epoch 1 s
/// later) hands out leases whose first ID is above every ID the destroyed one could have minted.
#[test]
fn client_leases_start_above_the_ids_of_a_destroyed_client_sequencer() {
    let epoch = 1_600_000_000_000;
    // 256 IDs per 1 ms tick: 100,000 IDs per node run ahead of the clock, as busy clients do.
    let layout = |epoch_ms| {
        Layout::new(LayoutConfig {
            timestamp_bits: 41,
            node_bits: 2,
            sequence_bits: 8,
            epoch_ms,
            ..LayoutConfig::default()
        })
        .unwrap()
    };
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let old =
        snowmint_coord::Sequencer::create(store.clone(), "clients", layout(epoch), 4).unwrap();
    let mut old_max = 0;
    for _ in 0..4 {
        let h = old.new_handle();
        h.attach().unwrap();
        for _ in 0..100_000 {
            old_max = old_max.max(h.next_id().unwrap());
        }
        h.detach().unwrap();
    }
    old.destroy().unwrap();
    let new = layout(epoch + 1000);
    let mut config = common::config("0");
    config.layout = new;
    config.layout_name = snowmint_coord::layout_text(&new);
    config.max_unauthenticated_leases = Some(usize::MAX);
    let s = service(config, Some(store));
    let mut c = Conn::open(s.addr);
    for _ in 0..3 {
        let a = c.request("POST", "/v1/leases", b"{}");
        assert_eq!(a.status, 201, "{}", a.text());
        let a = a.json();
        let (node, start) = (a["node_id"].as_u64().unwrap(), dec(&a["start"]));
        let first = new.compose(start >> 8, node, start & 0xff).unwrap();
        assert!(
            first > old_max,
            "node {node}: first ID {first} at or below the old sequencer's {old_max}"
        );
    }
}
