//! One hostile client on real 127.0.0.1 sockets (issue 42): connections that pipeline large batches and
//! never read their answers, idle keep-alive connections, and a flood of them from one address, over
//! HTTP and HTTPS, with and without bearer tokens. Another loopback address (127.0.0.2) is another
//! client.

mod common;

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{connect_from, read_reply_from, request_from, InProcess, Reply, TempDir};
use snowmint_coord::{MemoryStore, SystemTime};
use snowmint_service::deadline::WRITE_STALL;
use snowmint_service::server::READ_TIMEOUT;
use snowmint_service::{Config, Service, Tokens};

const ATTACKER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
const TOKEN_A: &str = "token-a-0123456789abcdef";
const TOKEN_B: &str = "token-b-0123456789abcdef";

fn start(config: Config, tls: Option<Arc<rustls::ServerConfig>>) -> InProcess {
    let store = Arc::new(MemoryStore::new());
    let service = Service::open_with(config, Arc::new(SystemTime), Some(store), false).unwrap();
    InProcess::start_tls(service, tls)
}

/// `n` pipelined `POST /v1/ids?count=10000`, with a bearer token if given.
fn pipeline(n: usize, token: Option<&str>) -> Vec<u8> {
    let auth = token.map_or(String::new(), |t| format!("authorization: Bearer {t}\r\n"));
    let one = format!(
        "POST /v1/ids?count=10000 HTTP/1.1\r\nhost: 127.0.0.1\r\n{auth}content-length: 0\r\n\r\n"
    );
    one.repeat(n).into_bytes()
}

/// A `GET /healthz` (or, with a token, a batch of 3) from `from` on a new connection, and how long it
/// took.
fn probe(
    addr: SocketAddr,
    from: IpAddr,
    tls: Option<&Arc<rustls::ClientConfig>>,
    token: Option<&str>,
) -> (Option<Reply>, Duration) {
    let t = Instant::now();
    let (method, target) = match token {
        Some(_) => ("POST", "/v1/ids?count=3"),
        None => ("GET", "/healthz"),
    };
    let reply = request_from(addr, from, tls, method, target, token);
    (reply, t.elapsed())
}

/// Polls `probe` from `from` every 100 ms until it answers 200; the time that took.
fn until_served(
    addr: SocketAddr,
    from: IpAddr,
    limit: Duration,
    tls: Option<&Arc<rustls::ClientConfig>>,
    token: Option<&str>,
) -> Duration {
    let t = Instant::now();
    loop {
        if let (Some(r), _) = probe(addr, from, tls, token) {
            if r.status == 200 {
                return t.elapsed();
            }
        }
        assert!(
            t.elapsed() < limit,
            "{from} was not served within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_connection_that_never_reads_its_answers_gives_its_slot_back() {
    let mut config = common::config("7");
    config.max_connections = 1;
    let s = start(config, None);
    // A small receive window: the service's writes block after a few answers.
    let mut stuck = connect_from(ATTACKER, s.addr, Some(4096));
    stuck.write_all(&pipeline(200, None)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let (r, _) = probe(s.addr, OTHER, None, None);
    assert_eq!(r.expect("an answer").status, 503, "the slot is held");
    let took = until_served(s.addr, OTHER, WRITE_STALL * 3, None, None);
    eprintln!(
        "a non-reading connection held its slot for {took:?} (write stall bound {WRITE_STALL:?})"
    );
    assert!(took >= Duration::from_secs(5), "{took:?}");
    drop(stuck);
}

#[test]
fn an_idle_keep_alive_connection_gives_its_slot_back() {
    let mut config = common::config("7");
    config.max_connections = 1;
    let s = start(config, None);
    let mut idle = connect_from(ATTACKER, s.addr, None);
    idle.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .unwrap();
    assert_eq!(read_reply_from(&mut idle).unwrap().status, 200);
    let took = until_served(s.addr, OTHER, READ_TIMEOUT * 2, None, None);
    eprintln!("an idle keep-alive connection held its slot for {took:?} (bound {READ_TIMEOUT:?})");
    assert!(took >= READ_TIMEOUT / 2, "{took:?}");
}

/// 512 sockets from 127.0.0.1, each pipelining 64 batches of 10000 (14 MB of answers) and never reading; then a client
/// from 127.0.0.2 is served within 1 s, and 127.0.0.1 itself again once its connections have timed out.
fn flood(tls: bool, tokens: bool) {
    // One flood at a time: the 1 s is the service's answer under one attacker, not under two.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = TempDir::new("hostile");
    let mut config = common::config("7");
    if tokens {
        config.auth_tokens = Tokens::parse(&format!("{TOKEN_A}\n{TOKEN_B}\n")).unwrap();
    }
    let (server_tls, client_tls) = if tls {
        common::make_ca(&dir.0);
        let st = snowmint_service::server::tls_config(
            &dir.0.join("server.pem"),
            &dir.0.join("server.key"),
        )
        .unwrap();
        (Some(st), Some(common::tls_client(&dir.0)))
    } else {
        (None, None)
    };
    let s = start(config, server_tls);
    let attack = pipeline(64, tokens.then_some(TOKEN_A));
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..512 {
        let tcp = connect_from(ATTACKER, s.addr, Some(4096));
        tcp.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        match &client_tls {
            None => {
                let mut tcp = tcp;
                if tcp.write_all(&attack).is_err() {
                    refused += 1;
                }
                held.push(Box::new(tcp) as Box<dyn Send>);
            }
            Some(c) => {
                let mut st = common::tls_over(c, tcp);
                if st.write_all(&attack).and_then(|_| st.flush()).is_err() {
                    refused += 1;
                }
                held.push(Box::new(st) as Box<dyn Send>);
            }
        }
    }
    let token = tokens.then_some(TOKEN_B);
    let (r, took) = probe(s.addr, OTHER, client_tls.as_ref(), token);
    let status = r.map(|r| r.status);
    eprintln!(
        "tls {tls}, tokens {tokens}: {} attacking sockets ({refused} refused while writing); another address: {status:?} in {took:?}",
        held.len()
    );
    assert_eq!(status, Some(200), "another address was not served");
    assert!(took < Duration::from_secs(1), "{took:?}");
    // The attacker's own address is served again once its connections' writes have stalled out, while
    // they are all still open.
    let again = until_served(
        s.addr,
        ATTACKER,
        WRITE_STALL + READ_TIMEOUT + Duration::from_secs(20),
        client_tls.as_ref(),
        token,
    );
    eprintln!("tls {tls}, tokens {tokens}: the attacking address was served again after {again:?}");
    drop(held);
}

#[test]
fn one_address_cannot_take_every_slot_http() {
    flood(false, false);
}

#[test]
fn one_address_cannot_take_every_slot_http_with_tokens() {
    flood(false, true);
}

#[test]
fn one_address_cannot_take_every_slot_https() {
    flood(true, false);
}

#[test]
fn one_address_cannot_take_every_slot_https_with_tokens() {
    flood(true, true);
}
