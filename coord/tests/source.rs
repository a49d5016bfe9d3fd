//! Node-source parsing: every form, and every error names the source and says why.

use std::time::Duration;

use snowmint::{ErrorCode, Layout};
use snowmint_coord::source::{
    parse_ttl, redacted, EtcdUrl, LeaseSource, NodeSource, PostgresUrl, StoreUrl,
};

fn lease(s: &str) -> LeaseSource {
    match NodeSource::parse(s).unwrap() {
        NodeSource::Lease(l) => l,
        other => panic!("{s}: {other:?}"),
    }
}

#[test]
fn every_form() {
    assert_eq!(NodeSource::parse("0").unwrap(), NodeSource::Fixed(0));
    assert_eq!(
        NodeSource::parse(" 1023 ").unwrap(),
        NodeSource::Fixed(1023)
    );
    assert_eq!(
        NodeSource::parse("env").unwrap(),
        NodeSource::Env {
            var: "SNOWMINT_NODE_ID".into()
        }
    );
    assert_eq!(
        NodeSource::parse("env:POD_NODE").unwrap(),
        NodeSource::Env {
            var: "POD_NODE".into()
        }
    );
    assert_eq!(
        NodeSource::parse("k8s").unwrap(),
        NodeSource::K8s { offset: 0 }
    );
    assert_eq!(
        NodeSource::parse("k8s:100").unwrap(),
        NodeSource::K8s { offset: 100 }
    );
    assert_eq!(NodeSource::parse("ip").unwrap(), NodeSource::Ip);

    let l = lease("file:///var/lib/ids");
    assert_eq!(
        l.store,
        StoreUrl::File {
            dir: "/var/lib/ids".into()
        }
    );
    assert_eq!(
        (l.sequencer.as_str(), l.ttl),
        ("default", Duration::from_secs(10))
    );
    assert_eq!(
        lease("file://localhost/tmp/a%20b/").store,
        StoreUrl::File {
            dir: "/tmp/a b".into()
        }
    );

    let l = lease("etcd://10.0.0.1:2379,10.0.0.2,[::1]:2380/ids/prod?sequencer=orders&ttl=500ms");
    assert_eq!(
        l.store,
        StoreUrl::Etcd(EtcdUrl {
            endpoints: vec![
                "10.0.0.1:2379".into(),
                "10.0.0.2:2379".into(),
                "[::1]:2380".into()
            ],
            prefix: "ids/prod".into()
        })
    );
    assert_eq!(
        (l.sequencer.as_str(), l.ttl),
        ("orders", Duration::from_millis(500))
    );
    assert_eq!(
        lease("etcd://h").store,
        StoreUrl::Etcd(EtcdUrl {
            endpoints: vec!["h:2379".into()],
            prefix: "snowmint".into()
        })
    );

    let l =
        lease("postgres://app:secret@db.local:6543/ids?sslmode=disable&ttl=2m&connect_timeout=3");
    assert_eq!(
        l.store,
        StoreUrl::Postgres(PostgresUrl {
            url: "postgres://app:secret@db.local:6543/ids?sslmode=disable&connect_timeout=3".into(),
            user: "app".into(),
            host: "db.local".into(),
            port: 6543,
            database: "ids".into(),
        })
    );
    assert_eq!(l.ttl, Duration::from_secs(120));
    // The password never shows in messages.
    assert_eq!(l.store.to_string(), "postgres://app@db.local:6543/ids");
    assert!(matches!(lease("postgresql://u@h/db").store, StoreUrl::Postgres(p) if p.port == 5432));
}

#[test]
fn errors_name_the_source() {
    for (s, why) in [
        ("", "empty"),
        ("-1", "not a node source"),
        ("18446744073709551616", "does not fit in 64 bits"),
        ("env:", "variable name"),
        ("k8s:x", "offset"),
        ("ip:4", "no argument"),
        ("redis://h/x", "unknown scheme \"redis\""),
        ("file://tmp/x", "absolute directory"),
        ("file:///x?ttl=0s", "zero"),
        ("file:///x?ttl=2h", "not a duration"),
        ("file:///x?ttl=61m", "over one hour"),
        ("file:///x?sequencer=", "sequencer name"),
        ("file:///x?sequencer=.hidden", "sequencer name"),
        ("file:///x?other=1", "unknown parameter"),
        ("file:///x?ttl", "no value"),
        ("etcd:///p", "no endpoint"),
        ("etcd://h:0/p", "not in 1..=65535"),
        ("etcd://h x:1/p", "not a valid HOST"),
        ("postgres://u@h", "no database"),
        ("postgres://h/db", "no user"),
        ("postgres://:pw@h/db", "empty user"),
    ] {
        let e = NodeSource::parse(s).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{s}");
        assert!(
            e.to_string().contains(&format!("{:?}", redacted(s))),
            "{s}: {e}"
        );
        assert!(e.to_string().contains(why), "{s}: {e}");
        assert!(
            !e.to_string().contains("pw@"),
            "a password in an error: {e}"
        );
    }
    assert!(parse_ttl("10").is_ok());
}

/// Errors and logs never show a password given in a source's user part.
#[test]
fn passwords_are_redacted_in_what_errors_show() {
    assert_eq!(
        redacted("postgres://app:secret@db:5432/ids?ttl=2s"),
        "postgres://app:***@db:5432/ids?ttl=2s"
    );
    assert_eq!(redacted("postgres://:pw@h/db"), "postgres://:***@h/db");
    assert_eq!(redacted("postgres://app@db/ids"), "postgres://app@db/ids");
    assert_eq!(
        redacted("etcd://h:1,h:2/p?sequencer=a@b"),
        "etcd://h:1,h:2/p?sequencer=a@b"
    );
    assert_eq!(redacted("file:///var/lib/x"), "file:///var/lib/x");
    assert_eq!(redacted("7"), "7");
    let e = NodeSource::parse("postgres://app:secret@db:5432/ids?ttl=0s").unwrap_err();
    assert!(!e.to_string().contains("secret"), "{e}");
}

#[test]
fn fixed_sources_resolve_and_check_the_layout() {
    let twitter = Layout::twitter();
    assert_eq!(
        NodeSource::parse("7")
            .unwrap()
            .resolve("7", &twitter)
            .unwrap(),
        7
    );
    let e = NodeSource::parse("1024")
        .unwrap()
        .resolve("1024", &twitter)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NodeIdOutOfRange);
    assert!(e.to_string().contains("\"1024\""), "{e}");
    std::env::set_var("SNOWMINT_COORD_TEST_NODE", " 12 ");
    let src = NodeSource::parse("env:SNOWMINT_COORD_TEST_NODE").unwrap();
    assert_eq!(
        src.resolve("env:SNOWMINT_COORD_TEST_NODE", &twitter)
            .unwrap(),
        12
    );
    std::env::set_var("SNOWMINT_COORD_TEST_NODE", "twelve");
    let e = src
        .resolve("env:SNOWMINT_COORD_TEST_NODE", &twitter)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("\"twelve\", not a non-negative integer"),
        "{e}"
    );
    let e = NodeSource::parse("file:///x")
        .unwrap()
        .resolve("file:///x", &twitter)
        .unwrap_err();
    assert!(e.to_string().contains("needs a store"), "{e}");
    // `ip` gives the low bits of a private address, or says there is none.
    match NodeSource::Ip.resolve("ip", &twitter) {
        Ok(n) => assert!(n < 1024),
        Err(e) => assert!(e.to_string().contains("no private IPv4"), "{e}"),
    }
}
