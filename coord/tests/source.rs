//! Node-source parsing: every form, and every error names the source and says why.

use std::time::Duration;

use snowmint::{ErrorCode, Layout};
use snowmint_coord::source::{
    ip_node, parse_ttl, redacted, Credentials, EtcdUrl, Interface, LeaseSource, NodeSource,
    PostgresUrl, StoreUrl, TlsFiles,
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
    assert_eq!(
        NodeSource::parse("ip").unwrap(),
        NodeSource::Ip { iface: None }
    );
    assert_eq!(
        NodeSource::parse("ip:eth0").unwrap(),
        NodeSource::Ip {
            iface: Some("eth0".into())
        }
    );
    assert_eq!(
        NodeSource::parse("ip:eth0:1").unwrap(),
        NodeSource::Ip {
            iface: Some("eth0:1".into())
        },
        "an alias label"
    );
    for bad in ["ip:", "ip:a/b", "ip:a b", "ip:sixteen-chars-xy"] {
        let e = NodeSource::parse(bad).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}: {e}");
        assert!(e.to_string().contains("interface name"), "{bad}: {e}");
    }

    let l = lease("file:///var/lib/ids");
    assert_eq!(
        l.store,
        StoreUrl::File {
            dir: "/var/lib/ids".into(),
            max_ahead: None
        }
    );
    assert_eq!(
        (l.sequencer.as_str(), l.ttl),
        ("default", Duration::from_secs(10))
    );
    assert_eq!(
        lease("file://localhost/tmp/a%20b/").store,
        StoreUrl::File {
            dir: "/tmp/a b".into(),
            max_ahead: None
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
            prefix: "ids/prod".into(),
            tls: None,
            auth: None,
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
            prefix: "snowmint".into(),
            tls: None,
            auth: None,
        })
    );
    // TLS (etcdctl's parameter names) and etcd's own authentication.
    let l = lease(
        "etcd+https://root:p%40ss@h1:2379,h2/ids?cacert=/ca.pem&cert=/c%20d.pem&key=/k.pem&ttl=3s",
    );
    assert_eq!(
        l.store,
        StoreUrl::Etcd(EtcdUrl {
            endpoints: vec!["h1:2379".into(), "h2:2379".into()],
            prefix: "ids".into(),
            tls: Some(TlsFiles {
                ca: Some("/ca.pem".into()),
                cert: Some("/c d.pem".into()),
                key: Some("/k.pem".into()),
            }),
            auth: Some(Credentials {
                user: "root".into(),
                password: "p@ss".into()
            }),
        })
    );
    assert_eq!(l.store.to_string(), "etcd+https://root@h1:2379,h2:2379/ids");
    assert!(!format!("{:?}", l.store).contains("p@ss"));
    assert_eq!(
        lease("etcd+https://h").store,
        StoreUrl::Etcd(EtcdUrl {
            endpoints: vec!["h:2379".into()],
            prefix: "snowmint".into(),
            tls: Some(TlsFiles::default()),
            auth: None,
        })
    );
    for (bad, why) in [
        ("etcd://h/p?cacert=/ca.pem", "etcd+https"),
        ("etcd://root@h/p", "USER:PASSWORD@"),
        ("etcd+https://h/p?ca=/x", "cacert, cert, key"),
    ] {
        let e = NodeSource::parse(bad).unwrap_err();
        assert!(e.to_string().contains(why), "{bad}: {e}");
    }

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
    assert!(!format!("{:?}", l.store).contains("secret"));
    assert!(matches!(lease("postgresql://u@h/db").store, StoreUrl::Postgres(p) if p.port == 5432));
}

/// `file:///DIR?max_ahead=`: the embedded store's bound on what any holder mints ahead of the clock
/// (issue 39), kept in the URL's text, given to the store it opens; refused on the server stores.
#[test]
fn the_embedded_stores_bound_is_a_url_parameter() {
    let l = lease("file:///var/lib/ids?max_ahead=30s&sequencer=orders");
    assert_eq!(
        l.store,
        StoreUrl::File {
            dir: "/var/lib/ids".into(),
            max_ahead: Some(Duration::from_secs(30))
        }
    );
    assert_eq!(l.store.to_string(), "file:///var/lib/ids?max_ahead=30000ms");
    let again = snowmint_coord::source::parse_store_url(&l.store.to_string()).unwrap();
    assert_eq!(again, l.store);
    let dir = std::env::temp_dir().join(format!("snowmint-max-ahead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (query, bound) in [
        ("", 1_000),
        ("?max_ahead=2m", 120_000),
        ("?max_ahead=250ms", 250),
    ] {
        let url = format!("file://{}{query}", dir.display());
        let store = snowmint_coord::source::open_store(
            &snowmint_coord::source::parse_store_url(&url).unwrap(),
        )
        .unwrap();
        assert_eq!(
            store.max_ahead(),
            Some(Duration::from_millis(bound)),
            "{url}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // Its errors: `errors_name_the_source`.
}

#[test]
fn errors_name_the_source() {
    for (s, why) in [
        ("", "empty"),
        ("-1", "a node ID is not negative"),
        ("18446744073709551616", "does not fit in 64 bits"),
        ("env:", "variable name"),
        ("k8s:x", "offset"),
        ("ip:a/b", "interface name"),
        ("redis://h/x", "unknown scheme \"redis\""),
        ("file://tmp/x", "absolute directory"),
        ("file:///x?ttl=0s", "zero"),
        ("file:///x?ttl=2h", "not a duration"),
        ("file:///x?ttl=61m", "over one hour"),
        ("file:///x?sequencer=", "sequencer name"),
        ("file:///x?sequencer=.hidden", "sequencer name"),
        ("file:///x?other=1", "unknown parameter"),
        ("file:///x?ttl=5", "has no unit: write 5s, 5ms or 5m"),
        ("file:///x?wait=30", "has no unit: write 30s, 30ms or 30m"),
        ("file:///x?sequncer=orders", "did you mean sequencer?"),
        ("etcd://h:1/p?tll=5s", "did you mean ttl?"),
        (
            "postgres://u@h/db?sequncer=orders",
            "did you mean sequencer?",
        ),
        ("file:///x?max_ahead=0s", "zero"),
        ("file:///x?max_ahead=61m", "over one hour"),
        ("file:///x?max_ahead=5", "has no unit"),
        ("etcd://h:1/p?max_ahead=5s", "embedded store's"),
        ("postgres://u@h/db?max_ahead=5s", "embedded store's"),
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
    assert!(parse_ttl("10s").is_ok());
    // PostgreSQL's own parameters still pass through.
    assert!(NodeSource::parse("postgres://u@h/db?sslmode=disable&sequencer=orders").is_ok());
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

/// Opening a lease source whose store cannot be reached: the error names the source, never its
/// password (every runtime's generator opens through here: Python, Node, C, the CLI).
#[test]
fn an_unreachable_store_error_shows_no_password() {
    for source in [
        "postgres://app:secret@127.0.0.1:1/ids",
        "postgres://app@127.0.0.1:1/ids?password=secret",
        "etcd://root:secret@127.0.0.1:1/ids",
        "etcd+https://root:secret@127.0.0.1:1/ids",
    ] {
        let e = snowmint_coord::SequencerGenerator::open(
            source,
            Layout::twitter(),
            snowmint::Options::default(),
        )
        .err()
        .unwrap_or_else(|| panic!("{source}: opened"));
        assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{e}");
        assert!(!e.message().contains("secret"), "{source}: {e}");
        assert!(e.message().contains("127.0.0.1:1"), "{source}: {e}");
    }
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
    // `ip` on this host gives a node ID that fits, or says why not, naming the source.
    match NodeSource::parse("ip").unwrap().resolve("ip", &twitter) {
        Ok(n) => assert!(n < 1024),
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
            assert!(e.to_string().contains("node source \"ip\""), "{e}");
        }
    }
    let e = NodeSource::parse("ip:sm-absent0")
        .unwrap()
        .resolve("ip:sm-absent0", &twitter)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.to_string().contains("no interface \"sm-absent0\""), "{e}");
}

/// An interface record for [`ip_node`]: up unless `down`, a bridge if `bridge`.
fn iface(name: &str, addr: &str, prefix_len: u8, up: bool, bridge: bool) -> Interface {
    Interface {
        name: name.into(),
        flags: if up { libc::IFF_UP as u32 } else { 0 },
        bridge,
        addr: addr.parse().unwrap(),
        prefix_len,
    }
}

fn lo() -> Interface {
    Interface {
        flags: (libc::IFF_UP | libc::IFF_LOOPBACK) as u32,
        ..iface("lo", "127.0.0.1", 8, true, false)
    }
}

const TWITTER_BITS: u32 = 10;
const SONYFLAKE_BITS: u32 = 16;

#[test]
fn ip_takes_an_interface_that_is_up_not_loopback_bridge_or_link_local() {
    let eth0 = iface("eth0", "10.0.0.5", 24, true, false);
    // docker0 (172.17.0.1, the same on every Docker host) comes first, down or up: never taken.
    for docker_up in [false, true] {
        let host = [
            lo(),
            iface("docker0", "172.17.0.1", 16, docker_up, true),
            eth0.clone(),
        ];
        assert_eq!(
            ip_node(&host, None, TWITTER_BITS),
            Ok(5),
            "docker0 up: {docker_up}"
        );
    }
    // A CNI bridge and a link-local address are skipped the same way; a down interface too.
    let host = [
        lo(),
        iface("cni0", "10.244.0.1", 24, true, true),
        iface("eth1", "169.254.3.4", 16, true, false),
        iface("eth2", "192.168.1.9", 24, false, false),
        iface("eth3", "192.168.7.33", 24, true, false),
    ];
    assert_eq!(ip_node(&host, None, TWITTER_BITS), Ok(33));
    // Two eligible interfaces: the first in the host's order; ip:IFACE chooses.
    let two = [
        lo(),
        iface("eth0", "10.0.0.5", 24, true, false),
        iface("eth1", "192.168.0.77", 24, true, false),
    ];
    assert_eq!(ip_node(&two, None, TWITTER_BITS), Ok(5));
    assert_eq!(ip_node(&two, Some("eth1"), TWITTER_BITS), Ok(77));
    // A named bridge is the caller's choice.
    let host = [iface("docker0", "172.17.0.9", 16, true, true)];
    assert_eq!(ip_node(&host, Some("docker0"), TWITTER_BITS), Ok(9));
    // Nothing eligible: only loopback, a bridge, a link-local address, a public one.
    let none = [
        lo(),
        iface("docker0", "172.17.0.1", 16, true, true),
        iface("eth0", "169.254.10.20", 16, true, false),
        iface("eth1", "8.8.4.4", 24, true, false),
    ];
    let e = ip_node(&none, None, TWITTER_BITS).unwrap_err();
    assert!(
        e.contains("no interface that is up") && e.contains("ip:IFACE"),
        "{e}"
    );
}

#[test]
fn ip_gives_the_host_part_and_refuses_one_that_does_not_fit() {
    // /24: the last byte; /16: the last two bytes.
    let host = |addr: &str, prefix| [iface("eth0", addr, prefix, true, false)];
    assert_eq!(ip_node(&host("10.0.0.5", 24), None, TWITTER_BITS), Ok(5));
    assert_eq!(ip_node(&host("10.0.4.5", 24), None, TWITTER_BITS), Ok(5));
    assert_eq!(ip_node(&host("10.0.0.5", 16), None, TWITTER_BITS), Ok(5));
    // 10.0.4.5/16: host part 0.0.4.5 = 1029, past Twitter's 10-bit node field: refused, not
    // truncated to 5 (which 10.0.0.5 has).
    let e = ip_node(&host("10.0.4.5", 16), None, TWITTER_BITS).unwrap_err();
    for part in [
        "10.0.4.5/16 of eth0",
        "1029",
        "1023",
        "10 bits",
        "not truncated",
    ] {
        assert!(e.contains(part), "{part:?} in {e}");
    }
    // Sonyflake's 16-bit node field holds a /16's host part.
    assert_eq!(
        ip_node(&host("10.0.4.5", 16), None, SONYFLAKE_BITS),
        Ok(1029)
    );
    assert_eq!(
        ip_node(&host("172.16.255.254", 16), None, SONYFLAKE_BITS),
        Ok(65534)
    );
    // ... but not an /8's.
    let e = ip_node(&host("10.1.0.5", 8), None, SONYFLAKE_BITS).unwrap_err();
    assert!(
        e.contains("65541") && e.contains("65535") && e.contains("16 bits"),
        "{e}"
    );
    // A /32 has no host part at all: every host would get 0.
    let e = ip_node(&host("10.0.0.5", 32), None, SONYFLAKE_BITS).unwrap_err();
    assert!(e.contains("no host part"), "{e}");
}

#[test]
fn ip_iface_names_a_missing_down_or_addressless_interface() {
    let host = [
        lo(),
        iface("eth0", "10.0.0.5", 24, true, false),
        iface("eth1", "10.0.1.6", 24, false, false),
        iface("eth2", "169.254.0.9", 16, true, false),
    ];
    let e = ip_node(&host, Some("wlan0"), TWITTER_BITS).unwrap_err();
    assert!(e.contains("no interface \"wlan0\""), "{e}");
    let e = ip_node(&host, Some("eth1"), TWITTER_BITS).unwrap_err();
    assert!(e.contains("\"eth1\" is down"), "{e}");
    let e = ip_node(&host, Some("eth2"), TWITTER_BITS).unwrap_err();
    assert!(e.contains("\"eth2\" has no IPv4 address"), "{e}");
    let e = ip_node(&host, Some("lo"), TWITTER_BITS).unwrap_err();
    assert!(e.contains("\"lo\" has no IPv4 address"), "{e}");
}
