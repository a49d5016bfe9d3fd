//! Store URLs (`file:///DIR`, `etcd[+https]://…`, `postgres://…`; the table in [`crate::source`]) and
//! the lease parameters they carry (`?sequencer=`, `?ttl=`, `?wait=`), TLS files and credentials. No
//! password ever appears in a message, a `Debug` form or a [`StoreUrl`]'s `Display`.

use std::path::PathBuf;
use std::time::Duration;

use crate::base::duration::{parse_max_ahead, parse_ttl, parse_wait};
use crate::base::error::{Error, Result};
use crate::base::name::{check_name, DEFAULT_SEQUENCER};

/// Default claim time-to-live: 10 s.
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);

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
        /// default, the embedded store's `MAX_AHEAD`; `FileStore::with_max_ahead`).
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

/// `INVALID_ARGUMENT` for the node source (or store URL) `source`, redacted, saying why.
pub(crate) fn bad(source: &str, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("node source {:?}: {why}", redacted(source)))
}

/// A node source or store URL as errors and logs may show it: a password in its user part
/// (`postgres://user:secret@host/db`) or a `password=` parameter is replaced by `***`
/// ([`crate::redact_secrets`], which every [`Error`] message also passes through).
pub fn redacted(source: &str) -> String {
    crate::base::error::redact_secrets(source)
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

/// The store and lease parameters of the node source `source` whose text `s` is a URL of `scheme`
/// (the parameters checked first, in their order, then the URL's body).
pub(crate) fn parse_lease(source: &str, scheme: &str, s: &str) -> Result<LeaseSource> {
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
                check_name(&name)
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
