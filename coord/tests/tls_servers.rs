//! The server stores over TLS and with authentication, against REAL servers started by
//! `scripts/servers.sh` (`tls_servers`, run by `coord/test.sh`): etcd serving only HTTPS with
//! `--client-cert-auth` and a CA the script made, etcd with authentication on and tokens living 1 s, and
//! PostgreSQL with `ssl = on` and only `hostssl … scram-sha-256`. Each works with the right settings;
//! a wrong CA, a missing or expired client certificate and a wrong password each fail with
//! `STORE_UNAVAILABLE` (or `INVALID_ARGUMENT` for a file that cannot be read) and a message naming the
//! failure, never the password.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use snowmint::{ErrorCode, Layout, Options};
use snowmint_coord::source::{open_store, parse_store_url};
use snowmint_coord::{Opened, SequencerGenerator};

/// The URL the harness exported, or `None` (the test skips with a note) unless
/// `SNOWMINT_REQUIRE_SERVERS=1`, when a missing one fails the test.
fn url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(u) if !u.is_empty() => Some(u),
        _ if std::env::var("SNOWMINT_REQUIRE_SERVERS").is_ok_and(|v| v == "1") => {
            panic!("SNOWMINT_REQUIRE_SERVERS=1 but {var} is not set (run coord/test.sh)")
        }
        _ => {
            eprintln!("skipped: {var} is not set (scripts/servers.sh: tls_servers)");
            None
        }
    }
}

fn tls_dir() -> String {
    std::env::var("SNOWMINT_TEST_TLS_DIR").expect("SNOWMINT_TEST_TLS_DIR")
}

fn unique(tag: &str) -> String {
    let ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{tag}-{}-{ns}", std::process::id())
}

/// Opens a lease on `url` (sequencer `default`) and mints one ID.
fn mint(url: &str) -> Result<u64, snowmint_coord::Error> {
    let sep = if url.contains('?') { '&' } else { '?' };
    let source = format!("{url}{sep}ttl=3s");
    match SequencerGenerator::open(&source, Layout::twitter(), Options::default())? {
        Opened::Leased(generator) => {
            let id = generator.next_id_local()?;
            generator.detach()?;
            Ok(id)
        }
        Opened::Plain(n) => panic!("a lease source opened as the fixed node {n}"),
    }
}

/// `url` fails with `code` and a message holding every one of `words`, and no `secret`.
fn fails(url: &str, code: ErrorCode, words: &[&str], secret: &str) {
    let e = mint(url).expect_err(url);
    eprintln!("{:?}: {e}", e.code());
    assert_eq!(e.code(), code, "{url}: {e}");
    for word in words {
        assert!(e.message().contains(word), "{url}: {word:?} not in: {e}");
    }
    assert!(!e.message().contains(secret), "{url}: the password in: {e}");
}

#[test]
fn etcd_over_tls_with_a_client_certificate() {
    let Some(good) = url("SNOWMINT_TEST_ETCD_TLS_URL") else {
        return;
    };
    mint(&good).unwrap();
    let dir = tls_dir();
    // The store's description names the TLS scheme, not the files' contents.
    let store = open_store(&parse_store_url(&good).unwrap()).unwrap();
    assert!(
        store.describe().starts_with("etcd+https://127.0.0.1:"),
        "{}",
        store.describe()
    );
    // Nor does its Debug form show the client key.
    let key = std::fs::read_to_string(format!("{dir}/client.key")).unwrap();
    let body = key.lines().nth(1).unwrap();
    assert!(!format!("{store:?}").contains(body));

    let wrong_ca = good.replace(&format!("{dir}/ca.pem"), &format!("{dir}/other-ca.pem"));
    fails(
        &wrong_ca,
        ErrorCode::StoreUnavailable,
        &["TLS", "UnknownIssuer"],
        "-----",
    );
    // Without cacert: the Mozilla roots, which do not hold the test CA.
    let system_roots = good.replace(&format!("cacert={dir}/ca.pem&"), "");
    fails(
        &system_roots,
        ErrorCode::StoreUnavailable,
        &["TLS", "UnknownIssuer"],
        "-----",
    );
    let no_client_cert = good.split("&cert=").next().unwrap().to_string();
    fails(
        &no_client_cert,
        ErrorCode::StoreUnavailable,
        &["TLS", "alert"],
        "-----",
    );
    let expired = good
        .replace(&format!("{dir}/client.pem"), &format!("{dir}/expired.pem"))
        .replace(&format!("{dir}/client.key"), &format!("{dir}/expired.key"));
    fails(
        &expired,
        ErrorCode::StoreUnavailable,
        &["TLS", "alert"],
        "-----",
    );
    // Plain HTTP to an HTTPS-only member.
    let plain = no_client_cert
        .replacen("etcd+https://", "etcd://", 1)
        .split('?')
        .next()
        .unwrap()
        .to_string();
    fails(
        &plain,
        ErrorCode::StoreUnavailable,
        &["etcd://127.0.0.1:"],
        "-----",
    );
    // A key file that is not there: named, and INVALID_ARGUMENT.
    let missing_key = good.replace(&format!("{dir}/client.key"), &format!("{dir}/absent.key"));
    fails(
        &missing_key,
        ErrorCode::InvalidArgument,
        &["client key file", "absent.key"],
        "-----",
    );
    // A key file given as the CA: named, and no byte of the key in the message.
    let key_as_ca = good.replace(&format!("{dir}/ca.pem"), &format!("{dir}/client.key"));
    fails(
        &key_as_ca,
        ErrorCode::InvalidArgument,
        &["CA file", "client.key"],
        body,
    );
}

/// etcd's authentication over plain HTTP (`etcd://USER:PASSWORD@…`) and over TLS
/// (`etcd+https://USER:PASSWORD@…?cacert=…`), one member serving both.
#[test]
fn etcd_authentication_signs_in_again_when_the_token_expires() {
    for var in [
        "SNOWMINT_TEST_ETCD_AUTH_URL",
        "SNOWMINT_TEST_ETCD_AUTH_TLS_URL",
    ] {
        if let Some(good) = url(var) {
            signs_in_again(&good);
        }
    }
}

fn signs_in_again(good: &str) {
    let good = good.to_string();
    let password = good
        .split("://")
        .nth(1)
        .and_then(|r| r.split('@').next())
        .and_then(|u| u.split_once(':'))
        .map(|(_, p)| p.to_string())
        .unwrap();
    let store = open_store(&parse_store_url(&good).unwrap()).unwrap();
    assert!(
        !store.describe().contains(&password),
        "{}",
        store.describe()
    );
    assert!(!format!("{store:?}").contains(&password));
    let key = unique("auth");
    assert!(store.swap_row(&key, None, "1").unwrap());
    // The cluster's tokens live 1 s (--auth-token-ttl 1): past it, the store signs in again.
    std::thread::sleep(Duration::from_millis(2500));
    assert!(store.swap_row(&key, Some("1"), "2").unwrap());
    assert_eq!(store.row(&key).unwrap().as_deref(), Some("2"));
    mint(&good).unwrap();

    let wrong = good.replacen(&format!(":{password}@"), ":wrong-password@", 1);
    fails(
        &wrong,
        ErrorCode::StoreUnavailable,
        &["authentication", "root", "invalid user ID or password"],
        "wrong-password",
    );
    let anonymous = good.replacen(&format!("root:{password}@"), "", 1);
    fails(
        &anonymous,
        ErrorCode::StoreUnavailable,
        &["user name"],
        &password,
    );
}

#[test]
fn postgres_over_tls_with_scram() {
    let Some(good) = url("SNOWMINT_TEST_POSTGRES_TLS_URL") else {
        return;
    };
    let dir = tls_dir();
    mint(&good).unwrap();
    // libpq's modes: require without a root file checks nothing; with one, the chain (verify-ca);
    // verify-ca does not check the name (localhost is in the certificate, but the chain is all it needs);
    // prefer takes TLS when offered.
    let base = good.split('?').next().unwrap().to_string();
    let root = format!("sslrootcert={dir}/ca.pem");
    let other = format!("sslrootcert={dir}/other-ca.pem");
    for ok in [
        format!("{base}?sslmode=require"),
        format!("{base}?sslmode=prefer"),
        format!("{base}?sslmode=verify-ca&{root}"),
        format!("{base}?{root}"),
    ] {
        mint(&ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let password = "snowmint-test";
    fails(
        &format!("{base}?sslmode=verify-full&{other}"),
        ErrorCode::StoreUnavailable,
        &["TLS", "UnknownIssuer"],
        password,
    );
    // require with a root file is verify-ca: the wrong CA fails too.
    fails(
        &format!("{base}?sslmode=require&{other}"),
        ErrorCode::StoreUnavailable,
        &["TLS", "UnknownIssuer"],
        password,
    );
    // The server takes only TLS: plain is refused by pg_hba.conf.
    fails(
        &format!("{base}?sslmode=disable"),
        ErrorCode::StoreUnavailable,
        &["pg_hba.conf", "no encryption"],
        password,
    );
    fails(
        &good.replacen(&format!(":{password}@"), ":wrong-password@", 1),
        ErrorCode::StoreUnavailable,
        &["password authentication failed", "snowmint"],
        "wrong-password",
    );
    fails(
        &format!("{base}?sslmode=verify-full&sslrootcert={dir}/absent.pem"),
        ErrorCode::InvalidArgument,
        &["CA file", "absent.pem"],
        password,
    );
    fails(
        &format!("{base}?sslmode=verify-all"),
        ErrorCode::InvalidArgument,
        &["verify-all", "verify-full"],
        password,
    );
}
