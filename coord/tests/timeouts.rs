#![cfg(all(feature = "etcd", feature = "postgres"))]
//! The server stores' timeouts as their messages state them: against a server that accepts the
//! connection and never answers (a paused process, a hung proxy), the call fails within the stated
//! bound, and the message names the bound and the endpoint (not the OS's "Resource temporarily
//! unavailable").

use std::net::TcpListener;
use std::time::{Duration, Instant};

use snowmint::ErrorCode;
use snowmint_coord::etcd::EtcdStore;
use snowmint_coord::postgres::PostgresStore;

/// A listener that accepts connections (the kernel completes the handshake) and never answers.
fn silent() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    (listener, addr)
}

#[test]
fn an_etcd_answer_timeout_names_the_bound_and_the_endpoint() {
    let (_listener, addr) = silent();
    let t0 = Instant::now();
    let e = EtcdStore::connect_with_timeouts(
        std::slice::from_ref(&addr),
        "timeouts",
        Duration::from_secs(1),
        Duration::from_millis(300),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&format!("{addr}: no answer within 300 ms")),
        "{text}"
    );
    assert!(!text.contains("os error"), "{text}");
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
}

/// `PostgresStore::CONNECT_TIMEOUT` alone bounds the whole connection (TCP, startup,
/// authentication), as the README says: 4 s, and the message names it (it was the connect and the
/// request timeouts added: a connect timeout of 300 ms gave up after 2300 ms, saying so).
#[test]
fn a_postgres_connect_timeout_is_the_connect_timeout() {
    assert_eq!(PostgresStore::CONNECT_TIMEOUT, Duration::from_secs(4));
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    assert!(
        readme.contains("4 s to connect and 2 s per answer for PostgreSQL"),
        "the README states the PostgreSQL timeouts"
    );
    let (_listener, addr) = silent();
    let url = format!("postgres://u@{addr}/db");
    let t0 = Instant::now();
    let e = PostgresStore::connect_with_timeouts(
        &url,
        Duration::from_millis(300),
        Duration::from_secs(2),
    )
    .unwrap_err();
    let took = t0.elapsed();
    assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{e}");
    assert!(e.to_string().contains("within 300 ms"), "{e}");
    assert!(took < Duration::from_millis(1500), "{took:?}: {e}");
}
