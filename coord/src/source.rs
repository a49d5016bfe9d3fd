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

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{ErrorCode, Layout};

use crate::error::{Error, Result};
use crate::lease::DEFAULT_TTL;
use crate::store::Store;

/// The variable `env` reads.
pub const DEFAULT_NODE_ENV: &str = "SNOWMINT_NODE_ID";
/// The sequencer a lease source uses unless `?sequencer=` names one.
pub const DEFAULT_SEQUENCER: &str = "default";

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

/// A lease source: where, which sequencer, how long a claim lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseSource {
    /// The store.
    pub store: StoreUrl,
    /// The sequencer's name.
    pub sequencer: String,
    /// Claim time-to-live.
    pub ttl: Duration,
    /// `?wait=30s`: how long a claim waits for a node ID to come free when all are held (default zero:
    /// `NODE_IDS_EXHAUSTED` at once; [`crate::LeaseOptions::wait_for_node`]).
    pub wait: Duration,
}

/// Where a store is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreUrl {
    /// The embedded store in a directory.
    File {
        /// The directory (absolute).
        dir: PathBuf,
        /// `?max_ahead=30s`: what any holder of this store may mint ahead of the clock (`None`: the
        /// default, [`crate::file::MAX_AHEAD`]; [`crate::file::FileStore::with_max_ahead`]).
        max_ahead: Option<Duration>,
    },
    /// An etcd cluster.
    Etcd(EtcdUrl),
    /// A PostgreSQL database.
    Postgres(PostgresUrl),
}

/// `etcd[+https]://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]/PREFIX[?cacert=&cert=&key=]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdUrl {
    /// `host:port` of every endpoint, in the order given (port 2379 where none was given).
    pub endpoints: Vec<String>,
    /// The key prefix every key of this store lives under (default `snowmint`), without slashes at
    /// either end.
    pub prefix: String,
    /// `etcd+https://`: TLS with these files; `None`: plain HTTP (`etcd://`).
    pub tls: Option<TlsFiles>,
    /// `USER:PASSWORD@`: etcd's own authentication.
    pub auth: Option<Credentials>,
}

/// The files of a TLS client (paths; the files are read when the store is opened).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM file of the certificate authorities trusted for the server (`None`: the Mozilla roots).
    pub ca: Option<PathBuf>,
    /// PEM file of the client certificate chain (for servers that ask for one).
    pub cert: Option<PathBuf>,
    /// PEM file of the client certificate's private key.
    pub key: Option<PathBuf>,
}

/// A user name and password; `Debug` shows the name only.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user.
    pub user: String,
    /// The password (percent-decoded).
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"***")
            .finish()
    }
}

/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?OPTIONS]`. `Debug` shows the URL without its password.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl {
    /// The connection URL as given, without the `sequencer` and `ttl` parameters (other parameters,
    /// such as `sslmode` or `connect_timeout`, are kept for the driver).
    pub url: String,
    /// The user.
    pub user: String,
    /// The host.
    pub host: String,
    /// The port (5432 where none was given).
    pub port: u16,
    /// The database.
    pub database: String,
}

impl std::fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresUrl")
            .field("url", &redacted(&self.url))
            .field("user", &self.user)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("database", &self.database)
            .finish()
    }
}

impl std::fmt::Display for StoreUrl {
    /// The URL without any password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreUrl::File { dir, max_ahead } => {
                write!(f, "file://{}", dir.display())?;
                match max_ahead {
                    Some(d) => write!(f, "?max_ahead={}ms", d.as_millis()),
                    None => Ok(()),
                }
            }
            StoreUrl::Etcd(e) => write!(
                f,
                "{}://{}{}/{}",
                if e.tls.is_some() {
                    "etcd+https"
                } else {
                    "etcd"
                },
                e.auth
                    .as_ref()
                    .map_or(String::new(), |a| format!("{}@", a.user)),
                e.endpoints.join(","),
                e.prefix
            ),
            StoreUrl::Postgres(p) => {
                write!(
                    f,
                    "postgres://{}@{}:{}/{}",
                    p.user, p.host, p.port, p.database
                )
            }
        }
    }
}

fn bad(source: &str, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("node source {:?}: {why}", redacted(source)))
}

/// A node source or store URL as errors and logs may show it: a password in its user part
/// (`postgres://user:secret@host/db`) or a `password=` parameter is replaced by `***`
/// ([`crate::error::redact_secrets`], which every [`Error`] message also passes through).
pub fn redacted(source: &str) -> String {
    crate::error::redact_secrets(source)
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

/// The query parameters a lease source of `scheme` takes (PostgreSQL's own pass through).
fn parameters(scheme: &str) -> Vec<&'static str> {
    let mut known = vec!["sequencer", "ttl", "wait"];
    if scheme == "file" {
        known.push("max_ahead");
    }
    if scheme == "etcd+https" {
        known.extend(["cacert", "cert", "key"]);
    }
    known
}

/// Whether a PostgreSQL URL's parameter `k` is a typo of one of ours (`sequncer`, `tll`) rather than
/// one of PostgreSQL's own (`sslmode`, `connect_timeout`, …, which pass through).
fn misspelt_parameter(k: &str) -> bool {
    const POSTGRES: [&str; 12] = [
        "sslmode",
        "sslrootcert",
        "sslcert",
        "sslkey",
        "connect_timeout",
        "application_name",
        "options",
        "keepalives",
        "keepalives_idle",
        "target_session_attrs",
        "channel_binding",
        "password",
    ];
    !POSTGRES.contains(&k) && snowmint::suggest(k, &parameters("postgres")).is_some()
}

fn parse_lease(source: &str, scheme: &str, s: &str) -> Result<LeaseSource> {
    let rest = &s[scheme.len() + 3..];
    let (body, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let mut sequencer = DEFAULT_SEQUENCER.to_string();
    let mut ttl = DEFAULT_TTL;
    let mut wait = Duration::ZERO;
    let mut max_ahead = None;
    let mut passthrough = Vec::new();
    let mut tls = TlsFiles::default();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            bad(
                source,
                format!("parameter {pair:?} has no value (write NAME=VALUE)"),
            )
        })?;
        match k {
            "sequencer" => {
                let name = percent_decode(v)
                    .ok_or_else(|| bad(source, "bad %-escape in the sequencer name"))?;
                crate::sequencer::check_name(&name)
                    .map_err(|e| e.context(format!("node source {:?}", redacted(source))))?;
                sequencer = name;
            }
            "ttl" => ttl = parse_ttl(v).map_err(|why| bad(source, why))?,
            "wait" => wait = parse_wait(v).map_err(|why| bad(source, why))?,
            "max_ahead" if scheme == "file" => {
                max_ahead = Some(parse_max_ahead(v).map_err(|why| bad(source, why))?)
            }
            "max_ahead" => {
                return Err(bad(
                    source,
                    "max_ahead= is the embedded store's (file:///DIR?max_ahead=30s): etcd and \
                     PostgreSQL keep their history, and a holder there mints ahead of the clock as \
                     far as its reservation",
                ))
            }
            // A misspelt parameter of ours is refused, not passed on to PostgreSQL.
            _ if scheme.starts_with("postgres") && !misspelt_parameter(k) => passthrough.push(pair),
            "cacert" | "cert" | "key" if scheme == "etcd+https" => {
                let path = PathBuf::from(
                    percent_decode(v).ok_or_else(|| bad(source, format!("bad %-escape in {k}")))?,
                );
                *match k {
                    "cacert" => &mut tls.ca,
                    "cert" => &mut tls.cert,
                    _ => &mut tls.key,
                } = Some(path);
            }
            "cacert" | "cert" | "key" => {
                return Err(bad(
                    source,
                    format!("{k}= is a TLS parameter: write etcd+https://…"),
                ))
            }
            _ => {
                return Err(bad(
                    source,
                    format!(
                        "unknown parameter {k:?}{} (known: sequencer, ttl, wait{})",
                        snowmint::suggest(k, &parameters(scheme))
                            .map(|p| format!("; did you mean {p}?"))
                            .unwrap_or_default(),
                        match scheme {
                            "etcd+https" => ", cacert, cert, key",
                            "file" => ", max_ahead",
                            _ => "",
                        }
                    ),
                ))
            }
        }
    }
    let store = match scheme {
        "file" => {
            let path = if let Some(p) = body.strip_prefix("localhost/") {
                format!("/{p}")
            } else {
                body.to_string()
            };
            if !path.starts_with('/') {
                return Err(bad(
                    source,
                    "a file URL names an absolute directory: file:///DIR (three slashes)",
                ));
            }
            let path =
                percent_decode(&path).ok_or_else(|| bad(source, "bad %-escape in the path"))?;
            let trimmed = path.trim_end_matches('/');
            StoreUrl::File {
                dir: PathBuf::from(if trimmed.is_empty() { "/" } else { trimmed }),
                max_ahead,
            }
        }
        "etcd" | "etcd+https" => {
            let (hosts, prefix) = body.split_once('/').unwrap_or((body, ""));
            let (auth, hosts) = match hosts.rsplit_once('@') {
                None => (None, hosts),
                Some((userinfo, hosts)) => {
                    let (user, password) = userinfo.split_once(':').ok_or_else(|| {
                        bad(
                            source,
                            "etcd authentication needs USER:PASSWORD@ (a password)",
                        )
                    })?;
                    let decode = |s: &str| {
                        percent_decode(s)
                            .ok_or_else(|| bad(source, "bad %-escape in the user or password"))
                    };
                    let (user, password) = (decode(user)?, decode(password)?);
                    if user.is_empty() {
                        return Err(bad(source, "empty user name"));
                    }
                    (Some(Credentials { user, password }), hosts)
                }
            };
            if hosts.is_empty() {
                return Err(bad(
                    source,
                    "no endpoint; write etcd://HOST:PORT[,HOST:PORT…]/PREFIX",
                ));
            }
            let mut endpoints = Vec::new();
            for h in hosts.split(',') {
                endpoints.push(host_port(h, 2379).map_err(|why| bad(source, why))?);
            }
            let prefix = prefix.trim_matches('/');
            StoreUrl::Etcd(EtcdUrl {
                endpoints,
                prefix: if prefix.is_empty() {
                    "snowmint".into()
                } else {
                    prefix.into()
                },
                tls: (scheme == "etcd+https").then_some(tls),
                auth,
            })
        }
        "postgres" | "postgresql" => {
            let (auth_host, database) = body
                .split_once('/')
                .filter(|(_, db)| !db.is_empty())
                .ok_or_else(|| bad(source, "no database; write postgres://USER@HOST:PORT/DB"))?;
            let (user_info, hostport) = auth_host
                .rsplit_once('@')
                .ok_or_else(|| bad(source, "no user; write postgres://USER@HOST:PORT/DB"))?;
            let user = user_info.split(':').next().unwrap_or("");
            if user.is_empty() {
                return Err(bad(source, "empty user name"));
            }
            let hp = host_port(hostport, 5432).map_err(|why| bad(source, why))?;
            let (host, port) = hp.rsplit_once(':').unwrap_or((&hp, "5432"));
            let mut url = format!("{scheme}://{body}");
            if !passthrough.is_empty() {
                url.push('?');
                url.push_str(&passthrough.join("&"));
            }
            StoreUrl::Postgres(PostgresUrl {
                url,
                user: percent_decode(user).unwrap_or_else(|| user.into()),
                host: host.trim_matches(|c| c == '[' || c == ']').into(),
                port: port.parse().unwrap_or(5432),
                database: database.into(),
            })
        }
        other => {
            return Err(bad(
                source,
                format!("unknown scheme {other:?} (file, etcd, etcd+https or postgres)"),
            ))
        }
    };
    Ok(LeaseSource {
        store,
        sequencer,
        ttl,
        wait,
    })
}

/// `HOST[:PORT]` (or `[V6]:PORT`) with a port in 1..=65535, as `host:port`.
fn host_port(s: &str, default_port: u16) -> std::result::Result<String, String> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("{s:?}: unclosed [ in an IPv6 address"))?;
        (format!("[{h}]"), after.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (s.to_string(), None),
        }
    };
    let valid_host = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b));
    if !valid_host {
        return Err(format!("{s:?} is not a valid HOST[:PORT]"));
    }
    let port = match port {
        None => default_port,
        Some(p) => match p.parse::<u16>() {
            Ok(p) if p > 0 => p,
            _ => return Err(format!("port {p:?} of {s:?} is not in 1..=65535")),
        },
    };
    Ok(format!("{host}:{port}"))
}

/// `file:///DIR?max_ahead=`: `30s`, `500ms`, `2m`; at least 1 ms, at most 1 hour
/// ([`crate::file::MAX_AHEAD_LIMIT`]).
pub fn parse_max_ahead(v: &str) -> std::result::Result<Duration, String> {
    parse_duration(
        "max_ahead",
        v,
        crate::file::MAX_AHEAD_LIMIT.as_millis() as u64,
    )
}

/// `?wait=`: `30s`, `500ms`, `2m`, or `0` (do not wait); at most 1 hour.
pub fn parse_wait(v: &str) -> std::result::Result<Duration, String> {
    if v.trim_end_matches(['m', 's']).chars().all(|c| c == '0') && v.starts_with('0') {
        return Ok(Duration::ZERO);
    }
    parse_duration("wait", v, 3_600_000)
}

/// A duration with its unit, `10s`, `500ms` or `2m` (the one duration syntax of every snowmint
/// option and parameter); at least 1 ms, at most 1 hour. A number without a unit is refused: `5`
/// could be meant as seconds or milliseconds.
pub fn parse_ttl(v: &str) -> std::result::Result<Duration, String> {
    parse_duration("ttl", v, 3_600_000)
}

/// [`parse_ttl`]'s rule for any duration named `what`, at most `max_ms`.
pub fn parse_duration(what: &str, v: &str, max_ms: u64) -> std::result::Result<Duration, String> {
    let (num, unit_ms) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = v.strip_suffix('m') {
        (n, 60_000)
    } else {
        (v, 0)
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{what} {v:?} is not a duration (e.g. 10s, 500ms, 2m)"))?;
    if n == 0 {
        return Err(format!("{what} {v:?} is zero; it must be at least 1 ms"));
    }
    if unit_ms == 0 {
        return Err(format!(
            "{what} {v:?} has no unit: write {v}s, {v}ms or {v}m"
        ));
    }
    let ms = n.saturating_mul(unit_ms);
    if ms > max_ms {
        return Err(format!("{what} {v:?} is over {}", human_ms(max_ms)));
    }
    Ok(Duration::from_millis(ms))
}

fn human_ms(ms: u64) -> String {
    match ms {
        3_600_000 => "one hour".into(),
        m if m % 60_000 == 0 => format!("{} min", m / 60_000),
        m if m % 1000 == 0 => format!("{} s", m / 1000),
        m => format!("{m} ms"),
    }
}

pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What opens a store by its URL: [`open_store`] in production; the code paths that open stores by URL
/// and keep connecting later (a range sequence's global store, [`crate::range::open_pair_through`];
/// the ID service's lease source) take one, so that the deterministic simulation puts its simulated
/// stores behind the same code.
pub type StoreOpener = dyn Fn(&StoreUrl) -> Result<Arc<dyn Store>> + Send + Sync;

/// Opens the store a URL names. **Dispatch point** for the server stores: `etcd://` goes to
/// `crate::etcd::open` and `postgres://` to `crate::postgres::open` (in `etcd.rs` / `postgres.rs`,
/// built with the features `etcd` / `postgres`).
///
/// An embedded store (`file:///DIR`) must exist: a missing directory is `STORE_NOT_FOUND`
/// ([`create_store`] creates it).
pub fn open_store(url: &StoreUrl) -> Result<Arc<dyn Store>> {
    match url {
        StoreUrl::File { dir, max_ahead } => Ok(Arc::new(
            crate::file::FileStore::open(dir)?
                .with_max_ahead(max_ahead.unwrap_or(crate::file::MAX_AHEAD)),
        )),
        #[cfg(feature = "etcd")]
        StoreUrl::Etcd(u) => crate::etcd::open(u),
        #[cfg(feature = "postgres")]
        StoreUrl::Postgres(u) => crate::postgres::open(u),
        #[allow(unreachable_patterns)]
        other => Err(Error::new(
            ErrorCode::StoreUnavailable,
            format!("{other}: this build of snowmint has no support for this store (not built)"),
        )),
    }
}

/// [`open_store`], creating an embedded store whose directory is missing: what creating a sequencer
/// does (the one deliberate act that creates a store).
pub fn create_store(url: &StoreUrl) -> Result<Arc<dyn Store>> {
    match url {
        StoreUrl::File { dir, max_ahead } => Ok(Arc::new(
            crate::file::FileStore::create(dir)?
                .with_max_ahead(max_ahead.unwrap_or(crate::file::MAX_AHEAD)),
        )),
        other => open_store(other),
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

/// This host's name (`/proc/sys/kernel/hostname`, else `HOSTNAME`).
pub fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
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
    choose_ip_node(interfaces, iface, node_bits, &Plant::default())
}

/// [`ip_node`] with a planted defect (feature `planted-defects`: the simulation's hosts world).
#[cfg(feature = "planted-defects")]
pub fn ip_node_planted(
    interfaces: &[Interface],
    iface: Option<&str>,
    node_bits: u32,
    defect: crate::lease::Defect,
) -> std::result::Result<u64, String> {
    choose_ip_node(interfaces, iface, node_bits, &Plant { defect })
}

/// The planted defect of [`ip_node_planted`] (none without the feature).
#[derive(Default)]
struct Plant {
    #[cfg(feature = "planted-defects")]
    defect: crate::lease::Defect,
}

fn choose_ip_node(
    interfaces: &[Interface],
    iface: Option<&str>,
    node_bits: u32,
    plant: &Plant,
) -> std::result::Result<u64, String> {
    let _ = plant; // read by `planted!` only with the feature
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
                i.up() && (!i.bridge || planted!(plant, IpTakesBridge)) && i.addr.is_private()
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
    if host > max && planted!(plant, IpHostTruncated) {
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
