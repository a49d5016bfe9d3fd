//! Node sources (SPEC §3.1): the one parser every front end uses (Rust, the CLI, and through them the
//! Python, Node, WASM and C bindings).
//!
//! | source | meaning |
//! |---|---|
//! | `7` | this node ID |
//! | `env` / `env:NAME` | the integer in `SNOWMINT_NODE_ID` / in `NAME` |
//! | `k8s` / `k8s:OFFSET` | the StatefulSet ordinal at the end of the hostname (`web-3` → 3), plus OFFSET |
//! | `ip` / `ip:IFACE` | the host part of the private IPv4 address of an interface that is up (not loopback, bridge or link-local), Sonyflake style; refused when it does not fit the node field |
//! | `file:///DIR` | a lease in the embedded store in DIR (processes of one host, no server) |
//! | `etcd://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]/PREFIX` | a lease on an etcd cluster (plain HTTP), keys under `PREFIX/` (port 2379 and prefix `snowmint` when omitted) |
//! | `etcd+https://[USER:PASSWORD@]HOST:PORT[,…]/PREFIX[?cacert=PATH&cert=PATH&key=PATH]` | the same over TLS |
//! | `postgres://USER[:PASSWORD]@HOST:PORT/DB[?sslmode=…&sslrootcert=…&sslcert=…&sslkey=…]` | a lease in a PostgreSQL table |
//!
//! etcd over TLS checks the server's certificate against `cacert` (else the Mozilla roots) and its
//! host name, and offers the client certificate `cert` with its key `key` to a cluster that runs with
//! `--client-cert-auth` (etcdctl's parameter names). `USER:PASSWORD@` signs in with etcd's own
//! authentication (`/v3/auth/authenticate`; the token is fetched again when the cluster says it expired).
//! PostgreSQL's TLS parameters have libpq's names and meanings ([`crate::postgres`]).
//! No password ever appears in a message, a `Debug` form or a [`StoreUrl`]'s `Display`.
//!
//! Lease sources take `?sequencer=NAME` (default `default`), `?ttl=10s` (`ms`, `s` or `m`; default
//! 10 s) and `?wait=30s` (how long a claim waits for a node ID to come free when all are held; default
//! 0: `NODE_IDS_EXHAUSTED` at once); the embedded store `?max_ahead=30s` too (what any holder mints
//! ahead of the clock, [`crate::file::MAX_AHEAD`] by default; refused on the server stores). Every
//! error names the source and says why.
//!
//! **`ip`**: the node ID is the **host part** of an IPv4 address: the address bits below its
//! interface's prefix length (`10.0.4.5/16` → `0.0.4.5` = 1029; `10.0.0.5/24` → 5). `ip` takes the
//! first interface, in the operating system's order, that is up, not loopback, not a bridge (`docker0`,
//! CNI bridges: the same address on many hosts) and has a private IPv4 address (10/8, 172.16/12,
//! 192.168/16; never link-local 169.254/16, also the same on many hosts). `ip:IFACE` takes the first
//! IPv4 address of the interface IFACE, which must be up (a named bridge is taken; loopback and
//! link-local addresses are not). A host part that does not fit the node field is refused, never
//! truncated (two hosts of one /16 would share a node ID under a 10-bit node field), and so is an
//! address whose prefix leaves no host bits (/32). Every refusal is `INVALID_ARGUMENT`, as for the other
//! sources that cannot give a node ID. [`ip_node`] decides from a list of [`Interface`] records
//! ([`interfaces`] reads the host's).

use snowmint::Layout;

use crate::base::defect::{Defect, Hook};
use crate::base::error::{Error, Result};
use crate::base::url::{bad, parse_lease};

// The public paths of the store URLs, durations and store opening this module used to hold.
pub use crate::base::duration::{parse_duration, parse_max_ahead, parse_ttl, parse_wait};
pub use crate::base::hostname::hostname;
pub use crate::base::name::DEFAULT_SEQUENCER;
pub use crate::base::url::{
    redacted, Credentials, EtcdUrl, LeaseSource, PostgresUrl, StoreUrl, TlsFiles,
};
pub use crate::stores::open::{create_store, open_store, StoreOpener};

/// The variable `env` reads.
pub const DEFAULT_NODE_ENV: &str = "SNOWMINT_NODE_ID";

/// A parsed node source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeSource {
    /// A fixed node ID.
    Fixed(u64),
    /// The integer in an environment variable.
    Env {
        /// The variable's name.
        var: String,
    },
    /// The StatefulSet ordinal at the end of the hostname, plus an offset.
    K8s {
        /// Added to the ordinal.
        offset: u64,
    },
    /// The host part of a private IPv4 address of an interface (module docs).
    Ip {
        /// `ip:IFACE`: this interface; `None`: the first eligible one.
        iface: Option<String>,
    },
    /// A lease from a store.
    Lease(LeaseSource),
}

impl NodeSource {
    /// Parses a node source string.
    ///
    /// ```
    /// use snowmint_coord::source::{NodeSource, StoreUrl};
    /// assert_eq!(NodeSource::parse("7").unwrap(), NodeSource::Fixed(7));
    /// let NodeSource::Lease(l) = NodeSource::parse("file:///tmp/ids?sequencer=orders&ttl=5s").unwrap() else { panic!() };
    /// assert_eq!(l.sequencer, "orders");
    /// assert_eq!(l.ttl, std::time::Duration::from_secs(5));
    /// assert_eq!(l.store, StoreUrl::File { dir: "/tmp/ids".into(), max_ahead: None });
    /// let err = NodeSource::parse("zookeeper://h:2181").unwrap_err();
    /// assert!(err.to_string().contains("unknown scheme"));
    /// ```
    pub fn parse(source: &str) -> Result<NodeSource> {
        let s = source.trim();
        if s.is_empty() {
            return Err(bad(source, "empty; give a node ID, env[:NAME], k8s[:OFFSET], ip[:IFACE], file:///DIR, etcd://… or postgres://…"));
        }
        if s.bytes().all(|b| b.is_ascii_digit()) {
            return s
                .parse()
                .map(NodeSource::Fixed)
                .map_err(|_| bad(source, "the node ID does not fit in 64 bits"));
        }
        if s.strip_prefix('-')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(bad(source, "a node ID is not negative; give 0 or more"));
        }
        if let Some((scheme, _)) = s.split_once("://") {
            return parse_lease(source, scheme, s).map(NodeSource::Lease);
        }
        let (kind, arg) = match s.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (s, None),
        };
        match (kind, arg) {
            ("env", None) => Ok(NodeSource::Env {
                var: DEFAULT_NODE_ENV.into(),
            }),
            ("env", Some(name)) => {
                let ok = !name.is_empty()
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                if !ok {
                    return Err(bad(source, "the variable name must be letters, digits and _, not starting with a digit"));
                }
                Ok(NodeSource::Env { var: name.into() })
            }
            ("k8s", None) => Ok(NodeSource::K8s { offset: 0 }),
            ("k8s", Some(off)) => off
                .parse()
                .map(|offset| NodeSource::K8s { offset })
                .map_err(|_| bad(source, "the offset after k8s: must be a non-negative integer")),
            ("ip", None) => Ok(NodeSource::Ip { iface: None }),
            ("ip", Some(name)) => {
                // Linux's rule for interface names: 1 to 15 bytes, no '/', no whitespace.
                let ok = !name.is_empty()
                    && name.len() <= 15
                    && !name.bytes().any(|b| b == b'/' || b.is_ascii_whitespace() || b.is_ascii_control());
                if !ok {
                    return Err(bad(source, "the interface name after ip: must be 1 to 15 characters without '/' or spaces"));
                }
                Ok(NodeSource::Ip {
                    iface: Some(name.into()),
                })
            }
            _ => Err(bad(source, "not a node source; give a node ID, env[:NAME], k8s[:OFFSET], ip[:IFACE], file:///DIR, etcd://HOST:PORT/PREFIX or postgres://USER@HOST:PORT/DB")),
        }
    }

    /// The node ID of a source that needs no store (`Fixed`, `Env`, `K8s`, `Ip`), checked against
    /// `layout`. A lease source is an error here: open it with [`crate::NodeGenerator`].
    pub fn resolve(&self, source: &str, layout: &Layout) -> Result<u64> {
        let node = match self {
            NodeSource::Fixed(n) => *n,
            NodeSource::Env { var } => match std::env::var(var) {
                Ok(v) => v.trim().parse().map_err(|_| {
                    bad(
                        source,
                        format!("${var} is {v:?}, not a non-negative integer"),
                    )
                })?,
                Err(std::env::VarError::NotPresent) => {
                    return Err(bad(
                        source,
                        format!("the environment variable {var} is not set"),
                    ))
                }
                Err(_) => return Err(bad(source, format!("${var} is not valid text"))),
            },
            NodeSource::K8s { offset } => {
                let host = std::env::var("HOSTNAME")
                    .ok()
                    .filter(|h| !h.is_empty())
                    .or_else(hostname)
                    .ok_or_else(|| bad(source, "cannot read this host's name"))?;
                let ordinal = host
                    .rsplit_once('-')
                    .and_then(|(_, n)| (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(n))
                    .and_then(|n| n.parse::<u64>().ok())
                    .ok_or_else(|| {
                        bad(source, format!("the hostname {host:?} does not end in a StatefulSet ordinal (NAME-N)"))
                    })?;
                ordinal
                    .checked_add(*offset)
                    .ok_or_else(|| bad(source, "ordinal + offset does not fit in 64 bits"))?
            }
            NodeSource::Ip { iface } => {
                ip_node(&interfaces(), iface.as_deref(), layout.node_bits())
                    .map_err(|why| bad(source, why))?
            }
            NodeSource::Lease(_) => {
                return Err(bad(
                    source,
                    "a lease source needs a store; open it as a generator",
                ))
            }
        };
        layout.node_field(node).map_err(|e| {
            Error::new(e.code(), format!("node source {:?}: {e}", redacted(source)))
        })?;
        Ok(node)
    }
}

/// Parses a store URL (`file:///DIR`, `etcd://…`, `postgres://…`) as a lease source without a node
/// part (the CLI's `--store`); parameters other than the driver's are rejected.
pub fn parse_store_url(url: &str) -> Result<StoreUrl> {
    match NodeSource::parse(url)? {
        NodeSource::Lease(l) => Ok(l.store),
        _ => Err(Error::invalid(format!(
            "store {:?}: not a store URL (file:///DIR, etcd://HOST:PORT/PREFIX or postgres://USER@HOST:PORT/DB)",
            redacted(url)
        ))),
    }
}

/// One IPv4 address of a network interface, as the `ip` node source sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// The interface's name (`eth0`).
    pub name: String,
    /// Its `IFF_*` flags (`libc::IFF_UP`, `libc::IFF_LOOPBACK`, …).
    pub flags: u32,
    /// A bridge (`docker0`, `cni0`, `virbr0`): its address is the same on many hosts.
    pub bridge: bool,
    /// The address.
    pub addr: std::net::Ipv4Addr,
    /// The prefix length of its network (`24` for `10.0.0.5/24`).
    pub prefix_len: u8,
}

impl Interface {
    fn up(&self) -> bool {
        self.flags & libc::IFF_UP as u32 != 0
    }

    fn loopback(&self) -> bool {
        self.flags & libc::IFF_LOOPBACK as u32 != 0 || self.addr.is_loopback()
    }

    /// What the node ID of this address is: the address bits below the prefix length (none for /32).
    fn host_part(&self) -> Option<u64> {
        let host_bits = 32u32
            .checked_sub(self.prefix_len as u32)
            .filter(|&b| b > 0)?;
        Some(u64::from(u32::from(self.addr)) & ((1u64 << host_bits) - 1))
    }
}

/// The node ID the `ip` node source gives on a host with `interfaces` (module docs): of the interface
/// `iface` if given, else of the first one up, not loopback, not a bridge, with a private address not
/// link-local. Errors say why (for [`NodeSource::resolve`] to name the source).
pub fn ip_node(
    interfaces: &[Interface],
    iface: Option<&str>,
    node_bits: u32,
) -> std::result::Result<u64, String> {
    choose_ip_node(interfaces, iface, node_bits, Hook::NONE)
}

/// [`ip_node`] with a planted defect (feature `planted-defects`: the simulation's hosts world).
#[cfg(feature = "planted-defects")]
pub fn ip_node_planted(
    interfaces: &[Interface],
    iface: Option<&str>,
    node_bits: u32,
    defect: Defect,
) -> std::result::Result<u64, String> {
    choose_ip_node(interfaces, iface, node_bits, Hook::planted(defect))
}

fn choose_ip_node(
    interfaces: &[Interface],
    iface: Option<&str>,
    node_bits: u32,
    defect: Hook,
) -> std::result::Result<u64, String> {
    let usable = |i: &&Interface| !i.loopback() && !i.addr.is_link_local();
    let chosen = match iface {
        Some(name) => {
            let named: Vec<&Interface> = interfaces.iter().filter(|i| i.name == name).collect();
            if named.is_empty() {
                return Err(format!("this host has no interface {name:?}"));
            }
            if !named.iter().any(|i| i.up()) {
                return Err(format!("the interface {name:?} is down"));
            }
            named.into_iter().find(usable).ok_or_else(|| {
                format!("the interface {name:?} has no IPv4 address (other than loopback or link-local 169.254/16)")
            })?
        }
        None => interfaces
            .iter()
            .filter(|i| {
                i.up() && (!i.bridge || defect.is(Defect::IpTakesBridge)) && i.addr.is_private()
            })
            .find(usable)
            .ok_or_else(|| {
                "no interface that is up, not loopback and not a bridge has a private IPv4 address (10/8, 172.16/12, 192.168/16; link-local 169.254/16 is not taken); name one with ip:IFACE".to_string()
            })?,
    };
    let at = format!("{}/{} of {}", chosen.addr, chosen.prefix_len, chosen.name);
    let host = chosen.host_part().ok_or_else(|| {
        format!("the address {at} has no host part (no address bits below its prefix length)")
    })?;
    let max = if node_bits >= 64 {
        u64::MAX
    } else {
        (1u64 << node_bits) - 1
    };
    if host > max && defect.is(Defect::IpHostTruncated) {
        return Ok(host & max); // the defect: the host part's low bits
    }
    if host > max {
        return Err(format!(
            "the host part of the address {at} (the bits below its /{} prefix) is {host}, over the node field's maximum {max} ({node_bits} bits); it is refused, not truncated: choose an interface with ip:IFACE or another node source",
            chosen.prefix_len
        ));
    }
    Ok(host)
}

/// The IPv4 addresses of this host's interfaces, in the operating system's order (`getifaddrs`; a
/// bridge is an interface with `/sys/class/net/NAME/bridge`).
pub fn interfaces() -> Vec<Interface> {
    let mut out = Vec::new();
    // SAFETY: getifaddrs fills a list that freeifaddrs frees; every pointer is checked before use.
    unsafe {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut list) != 0 {
            return out;
        }
        let mut p = list;
        while !p.is_null() {
            let a = (*p).ifa_addr;
            let m = (*p).ifa_netmask;
            if !a.is_null() && (*a).sa_family as i32 == libc::AF_INET && !(*p).ifa_name.is_null() {
                let v4 = |s: *const libc::sockaddr| {
                    u32::from_be((*(s as *const libc::sockaddr_in)).sin_addr.s_addr)
                };
                let name = std::ffi::CStr::from_ptr((*p).ifa_name)
                    .to_string_lossy()
                    .into_owned();
                // An alias label (`eth0:1`) is a bridge when its device is.
                let device = name.split(':').next().unwrap_or(&name);
                out.push(Interface {
                    bridge: std::path::Path::new("/sys/class/net")
                        .join(device)
                        .join("bridge")
                        .exists(),
                    flags: (*p).ifa_flags,
                    addr: std::net::Ipv4Addr::from(v4(a)),
                    prefix_len: if m.is_null() {
                        32
                    } else {
                        v4(m).count_ones() as u8
                    },
                    name,
                });
            }
            p = (*p).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    out
}
