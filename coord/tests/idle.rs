#![cfg(feature = "postgres")]
//! A store idled ([`Store::idle`]: a shared lease's member that is not its keeper closes its
//! connections while it waits to take over) holds no connection to the server afterwards, even one
//! whose login was still under way as it was idled. On a loaded host a login can outlast the quarter
//! of the answer timeout after which the store begins another (its hedged logins); the one that loses
//! the race used to become the store's spare once it completed, after the idle, and stayed open: 16
//! of 64 joined database backends held one in `pg/test.sh` (step 7a) under CI's load.
//!
//! Here a TCP proxy holds the first login's startup message 3 s (the server sees it late), the store
//! logs in through a second one, is idled, and the first login completes: the proxy counts the
//! connections the store still holds open. Skipped without a PostgreSQL server (coord/test.sh gives
//! one).

mod support;

use std::time::{Duration, Instant};

use snowmint_coord::postgres::PostgresStore;
use snowmint_coord::Store;
use support::proxy::{contains, Fault, Proxy, Rule};
use support::{fresh_url, server_of, servers, through, Kind};

#[test]
fn an_idled_store_closes_a_login_that_completes_after_the_idle() {
    if !servers().contains(&Kind::Postgres) {
        return;
    }
    let url = fresh_url(Kind::Postgres, "idle");
    // The startup message names the application: the first login's is held.
    let proxy = Proxy::start(
        &server_of(&url),
        Some(Rule {
            matches: Box::new(|request| contains(request, b"application_name")),
            nth: 1,
            fault: Fault::HoldRequest(Duration::from_secs(3)),
        }),
    );
    let store = PostgresStore::connect(&through(&url, proxy.addr())).unwrap();
    assert_eq!(proxy.fired(), 1, "the first login's startup was held");
    assert_eq!(store.sequencer("none").unwrap(), None);
    store.idle();
    // Until the held login has reached the server and the store holds no connection (10 s at most).
    let t0 = Instant::now();
    while (proxy.delivered() == 0 || proxy.open() > 0) && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(proxy.delivered(), 1, "the held login reached the server");
    assert_eq!(
        proxy.open(),
        0,
        "the idled store holds {} connection(s) open {:?} after the idle (the held login reached the server)",
        proxy.open(),
        t0.elapsed()
    );
    // The next call opens a connection again.
    assert_eq!(store.sequencer("none").unwrap(), None);
}
