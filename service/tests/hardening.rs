//! A hardened `snowmint serve` on a real 127.0.0.1 socket (SPEC §6a, on a network): foreign origins,
//! unlisted hosts and non-JSON bodies refused, bearer tokens, the per-client lease cap, the connection
//! cap, strict queries and JSON, HEAD, `--max-count`'s bound, and TLS verified by curl against a CA the
//! test makes with openssl.

mod common;

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::{raw, Conn, InProcess, TempDir};
use snowmint_coord::{MemoryStore, SystemTime};
use snowmint_service::{Config, Service, Tokens};

fn start(config: Config) -> InProcess {
    let store = Arc::new(MemoryStore::new());
    InProcess::start(Service::open_with(config, Arc::new(SystemTime), Some(store), false).unwrap())
}

const TOKEN_A: &str = "token-a-0123456789abcdef";
const TOKEN_B: &str = "token-b-0123456789abcdef";

#[test]
fn a_foreign_origin_and_a_text_plain_body_are_refused() {
    let s = start(common::config("7"));
    let host = format!("127.0.0.1:{}", s.addr.port());
    // What a page of another site can send without a preflight: refused, and nothing was leased.
    let evil = raw(
        s.addr,
        &format!("POST /v1/leases HTTP/1.1\nhost: {host}\norigin: https://evil.example\ncontent-type: text/plain"),
        b"{\"holder\":\"x\"}",
    );
    assert_eq!(evil.status, 403, "{}", evil.text());
    assert_eq!(evil.json()["error"]["field"], "origin");
    let evil = raw(
        s.addr,
        &format!("POST /v1/ids HTTP/1.1\nhost: {host}\norigin: null"),
        b"",
    );
    assert_eq!(evil.status, 403);
    // text/plain (or a form) without an Origin: 415.
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let r = raw(
            s.addr,
            &format!("POST /v1/leases HTTP/1.1\nhost: {host}\ncontent-type: {ct}"),
            b"{}",
        );
        assert_eq!(r.status, 415, "{ct}: {}", r.text());
        assert_eq!(r.json()["error"]["field"], "content-type");
    }
    let metrics = common::once(s.addr, "GET", "/metrics", b"").text();
    assert!(
        !metrics.contains("route=\"/v1/leases\",status=\"201\""),
        "{metrics}"
    );
    // The service's own origin, JSON: served.
    let own = raw(
        s.addr,
        &format!("POST /v1/leases HTTP/1.1\nhost: {host}\norigin: http://{host}\ncontent-type: application/json; charset=utf-8"),
        b"{\"holder\":\"tab\"}",
    );
    assert_eq!(own.status, 201, "{}", own.text());
}

#[test]
fn a_guarded_header_with_a_non_ascii_byte_or_twice_is_400() {
    let mut config = common::config("7");
    config.allowed_hosts = vec!["localhost".into()];
    let s = start(config);
    let host = format!("127.0.0.1:{}", s.addr.port());
    // Raw bytes on the wire: obs-text (0x80..0xff) and UTF-8, in each header the guard judges.
    let cases: [(&str, &[u8]); 6] = [
        ("/v1/ids", b"origin: https://evil.example\xff"),
        ("/v1/ids", "origin: https://\u{e9}vil.example".as_bytes()),
        ("/v1/leases", b"content-type: text/plain\x80"),
        ("/v1/leases", b"host: evil.example\xe9"),
        (
            "/v1/ids",
            b"origin: https://evil.example\r\norigin: http://127.0.0.1",
        ),
        (
            "/v1/leases",
            b"content-type: application/json\r\ncontent-type: text/plain",
        ),
    ];
    for (path, header) in cases {
        let mut req = format!("POST {path} HTTP/1.1\r\n").into_bytes();
        if !header.starts_with(b"host:") {
            req.extend_from_slice(format!("host: {host}\r\n").as_bytes());
        }
        req.extend_from_slice(header);
        req.extend_from_slice(b"\r\ncontent-length: 2\r\n\r\n{}");
        let mut c = Conn::open(s.addr);
        c.send_raw(&req);
        let r = c.read_reply();
        let shown = String::from_utf8_lossy(header);
        assert_eq!(r.status, 400, "{shown}: {}", r.text());
        assert_eq!(r.error_code(), "INVALID_ARGUMENT", "{shown}");
    }
    // Nothing was minted or leased.
    let metrics = common::once(s.addr, "GET", "/metrics", b"").text();
    assert!(
        !metrics.contains("status=\"201\"") && !metrics.contains("status=\"200\"}"),
        "{metrics}"
    );
}

#[test]
fn an_unlisted_host_is_refused() {
    let mut config = common::config("7");
    config.allowed_hosts = vec!["localhost".into(), "ids.example".into()];
    let s = start(config);
    let port = s.addr.port();
    for (host, status) in [
        (format!("rebind.attacker.example:{port}"), 403),
        ("localhost.attacker.example".to_string(), 403),
        (format!("localhost:{port}"), 200),
        ("IDS.example".to_string(), 200),
        (format!("127.0.0.1:{port}"), 200),
        ("[::1]".to_string(), 200),
    ] {
        let r = raw(s.addr, &format!("GET /healthz HTTP/1.1\nhost: {host}"), b"");
        assert_eq!(r.status, status, "{host}: {}", r.text());
    }
    let r = raw(
        s.addr,
        &format!("POST /v1/ids HTTP/1.1\nhost: rebind.attacker.example:{port}\norigin: http://rebind.attacker.example:{port}"),
        b"",
    );
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["error"]["field"], "host");
}

#[test]
fn bearer_tokens_guard_the_data_routes() {
    let mut config = common::config("7");
    config.auth_tokens = Tokens::parse(&format!("# two clients\n{TOKEN_A}\n{TOKEN_B}\n")).unwrap();
    let s = start(config);
    for (auth, status) in [
        (None, 401),
        (Some("Bearer wrong-token-0123456789".to_string()), 401),
        (Some(format!("Basic {TOKEN_A}")), 401),
        (
            Some(format!("Bearer {}", &TOKEN_A[..TOKEN_A.len() - 1])),
            401,
        ),
        (Some(format!("Bearer {TOKEN_A}")), 200),
        (Some(format!("bearer {TOKEN_B}")), 200),
    ] {
        let head = match &auth {
            Some(a) => format!("POST /v1/ids?count=2 HTTP/1.1\nhost: x\nauthorization: {a}"),
            None => "POST /v1/ids?count=2 HTTP/1.1\nhost: x".to_string(),
        };
        let r = raw(s.addr, &head, b"");
        assert_eq!(r.status, status, "{auth:?}: {}", r.text());
        if status == 401 {
            assert_eq!(r.header("www-authenticate"), Some("Bearer"));
            assert_eq!(r.json()["error"]["field"], "authorization");
            assert!(!r.text().contains("token-a"), "{}", r.text());
        }
    }
    for target in ["/v1/leases", "/v1/leases/x/renew"] {
        let r = raw(s.addr, &format!("POST {target} HTTP/1.1\nhost: x"), b"");
        assert_eq!(r.status, 401, "{target}");
    }
    let r = raw(s.addr, "DELETE /v1/leases/x HTTP/1.1\nhost: x", b"");
    assert_eq!(r.status, 401);
    // Health and metrics stay open, and the tokens are nowhere in the metrics.
    assert_eq!(common::once(s.addr, "GET", "/healthz", b"").status, 200);
    let m = common::once(s.addr, "GET", "/metrics", b"");
    assert_eq!(m.status, 200);
    assert!(!m.text().contains("token-"));
}

#[test]
fn unknown_query_parameters_head_and_duplicate_keys() {
    let s = start(common::config("7"));
    for target in [
        "/metrics?x=1",
        "/healthz?x=1",
        "/v1/ids?count=1&x=1",
        "/v1/leases?x=1",
    ] {
        let method = if target.starts_with("/v1") {
            "POST"
        } else {
            "GET"
        };
        let r = common::once(s.addr, method, target, b"");
        assert_eq!(r.status, 400, "{target}: {}", r.text());
        assert_eq!(r.json()["error"]["field"], "query", "{target}");
    }
    // HEAD on the GET routes: the GET's status and headers, no body.
    for target in ["/healthz", "/metrics"] {
        let mut r = String::new();
        use std::io::Read;
        let mut stream = std::net::TcpStream::connect(s.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        use std::io::Write;
        stream
            .write_all(
                format!("HEAD {target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                    .as_bytes(),
            )
            .unwrap();
        let _ = stream.read_to_string(&mut r);
        assert!(r.starts_with("HTTP/1.1 200"), "{target}: {r}");
        let (_, body) = r.split_once("\r\n\r\n").unwrap();
        assert_eq!(body, "", "{target}");
    }
    let mut c = Conn::open(s.addr);
    c.send_raw(b"HEAD /v1/ids HTTP/1.1\r\nhost: x\r\n\r\n");
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(c.stream()), &mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 405"), "{line}");
    let r = common::once(s.addr, "POST", "/healthz", b"");
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    // One key twice: 400, not the last one silently.
    for body in [
        &b"{\"holder\":\"a\",\"holder\":\"b\"}"[..],
        b"{\"holder\":null,\"holder\":\"b\"}",
    ] {
        let r = common::once(s.addr, "POST", "/v1/leases", body);
        assert_eq!(r.status, 400, "{}", r.text());
        assert!(r.text().contains("twice"), "{}", r.text());
    }
    let r = common::once(s.addr, "POST", "/v1/ids", b"{\"a\":1,\"a\":1}");
    assert_eq!(r.status, 400);
}

#[test]
fn max_count_above_the_batch_limit_is_refused_at_start() {
    for (n, ok) in [
        (snowmint::MAX_BATCH, true),
        (snowmint::MAX_BATCH + 1, false),
        (1_000_000_000_000, false),
    ] {
        let mut config = common::config("7");
        config.max_count = n;
        let r = Service::open_with(config, Arc::new(SystemTime), None, false);
        assert_eq!(r.is_ok(), ok, "{n}");
        if let Err(e) = r {
            assert_eq!(e.code(), snowmint::ErrorCode::InvalidArgument);
            assert!(e.to_string().contains("--max-count"), "{e}");
        }
    }
}

#[test]
fn one_client_holds_at_most_its_cap_of_leases() {
    let mut config = common::config("7");
    config.max_leases_per_client = 3;
    config.auth_tokens = Tokens::parse(&format!("{TOKEN_A}\n{TOKEN_B}\n")).unwrap();
    let s = start(config);
    let take = |token: &str| {
        raw(
            s.addr,
            &format!("POST /v1/leases HTTP/1.1\nhost: x\nauthorization: Bearer {token}"),
            b"",
        )
    };
    let mut mine = Vec::new();
    for _ in 0..3 {
        let r = take(TOKEN_A);
        assert_eq!(r.status, 201, "{}", r.text());
        mine.push(r.json()["token"].as_str().unwrap().to_string());
    }
    let r = take(TOKEN_A);
    assert_eq!(r.status, 429, "{}", r.text());
    assert_eq!(r.error_code(), "NODE_IDS_EXHAUSTED");
    assert!(r.header("retry-after").is_some());
    // Another client is not held back by the first.
    assert_eq!(take(TOKEN_B).status, 201);
    // A renewal keeps the count; a release frees a place.
    let renew = raw(
        s.addr,
        &format!(
            "POST /v1/leases/{}/renew HTTP/1.1\nhost: x\nauthorization: Bearer {TOKEN_A}",
            mine[0]
        ),
        b"",
    );
    assert_eq!(renew.status, 200);
    assert_eq!(take(TOKEN_A).status, 429);
    let rel = raw(
        s.addr,
        &format!(
            "DELETE /v1/leases/{} HTTP/1.1\nhost: x\nauthorization: Bearer {TOKEN_A}",
            mine[1]
        ),
        b"",
    );
    assert_eq!(rel.status, 204);
    assert_eq!(take(TOKEN_A).status, 201);
    assert_eq!(take(TOKEN_A).status, 429);
}

#[test]
fn without_tokens_the_cap_is_per_source_address() {
    let mut config = common::config("7");
    config.max_leases_per_client = 2;
    let s = start(config);
    let statuses: Vec<u16> = (0..4)
        .map(|_| common::once(s.addr, "POST", "/v1/leases", b"").status)
        .collect();
    assert_eq!(statuses, [201, 201, 429, 429]);
}

#[test]
fn connections_over_the_cap_are_answered_503_and_closed() {
    let mut config = common::config("7");
    config.max_connections = 2;
    // All from 127.0.0.1: this source may hold every slot (its share is tests/hostile.rs's).
    config.max_connections_per_source = Some(2);
    let s = start(config);
    let mut a = Conn::open(s.addr);
    let mut b = Conn::open(s.addr);
    assert_eq!(a.request("GET", "/healthz", b"").status, 200);
    assert_eq!(b.request("GET", "/healthz", b"").status, 200);
    let mut c = Conn::open(s.addr);
    let r = c.read_reply();
    assert_eq!(r.status, 503);
    assert_eq!(r.error_code(), "SERVICE_UNAVAILABLE");
    drop(a);
    // The slot comes back once the first connection is gone.
    let t = std::time::Instant::now();
    loop {
        let mut d = Conn::open(s.addr);
        let r = d.request("GET", "/healthz", b"");
        if r.status == 200 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "no slot came back");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(b.request("GET", "/healthz", b"").status, 200);
}

#[test]
fn tls_with_a_certificate_of_a_test_ca() {
    let dir = TempDir::new("tls");
    common::make_ca(&dir.0);
    let tls =
        snowmint_service::server::tls_config(&dir.0.join("server.pem"), &dir.0.join("server.key"))
            .unwrap();
    let store = Arc::new(MemoryStore::new());
    let service = Service::open_with(
        common::config("7"),
        Arc::new(SystemTime),
        Some(store),
        false,
    )
    .unwrap();
    let s = InProcess::start_tls(service, Some(tls));
    let url = format!("https://127.0.0.1:{}/v1/ids?count=3", s.addr.port());
    let curl = |extra: &[&str]| {
        Command::new("curl")
            .args([
                "-sS",
                "--max-time",
                "5",
                "-X",
                "POST",
                "-w",
                "\n%{http_code}",
            ])
            .args(extra)
            .arg(&url)
            .output()
            .expect("curl")
    };
    let ok = curl(&["--cacert", dir.0.join("ca.pem").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(text.ends_with("\n200"), "{text}");
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(v["ids"].as_array().unwrap().len(), 3);
    // Without the CA the certificate is not trusted; plain HTTP gets no answer.
    let untrusted = curl(&[]);
    assert!(!untrusted.status.success());
    let plain = Command::new("curl")
        .args(["-sS", "--max-time", "5", "-X", "POST"])
        .arg(format!("http://127.0.0.1:{}/v1/ids", s.addr.port()))
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("\"ids\""));
    // A key that is not a key: refused with the path, never the file's text.
    std::fs::write(dir.0.join("bad.key"), "SECRET-MATERIAL").unwrap();
    let e = snowmint_service::server::tls_config(&dir.0.join("server.pem"), &dir.0.join("bad.key"))
        .unwrap_err();
    assert!(
        e.to_string().contains("--tls-key") && !e.to_string().contains("SECRET"),
        "{e}"
    );
}

#[test]
fn the_token_key_on_the_embedded_store_is_mode_0600() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("key-mode");
    let store = snowmint_coord::source::open_store(
        &snowmint_coord::source::parse_store_url(&dir.url("")).unwrap(),
    )
    .unwrap();
    snowmint_service::TokenKey::load(store.as_ref(), "clients").unwrap();
    let row = dir
        .0
        .join("rows")
        .join("snowmint-service-secret.clients.row");
    let mode = std::fs::metadata(&row).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", row.display());
}
