//! What `snowmint serve` is configured with ([`Config`]) and its defaults.

use super::*;

/// The largest request body accepted (bytes); a larger one is `413`.
pub const MAX_BODY: usize = 4096;
/// The client sequencer's name with a fixed `--node` unless `--client-sequencer` names one.
pub const DEFAULT_CLIENT_SEQUENCER: &str = "clients";
/// How far ahead of the clock the service's generator may mint with a node ID that is not leased; a
/// restarted instance waits this long before minting (so it never repeats what the one before it minted
/// ahead of the clock).
pub const FIXED_NODE_MAX_AHEAD: Duration = Duration::from_secs(2);

/// What `snowmint serve` is configured with.
#[derive(Clone, Debug)]
pub struct Config {
    /// The node source of the service's own generator (SPEC §3.1).
    pub node: String,
    /// The layout.
    pub layout: Layout,
    /// The layout as clients read it: a preset's name, or the canonical layout text of a custom one.
    pub layout_name: String,
    /// `valid_for_ms` of every batch (`--validity`, default 600 s).
    pub validity: Duration,
    /// The largest `count` of `POST /v1/ids` (`--max-count`, default 10000).
    pub max_count: u64,
    /// The store of client leases when `--node` is a fixed node ID (`--store URL`, formerly `--leases`); the service then
    /// claims that node ID on the client sequencer (refused while another holds it) and keeps the claim
    /// like any lease. Refused with a lease source as `--node` (its store is the store of client leases).
    pub leases: Option<String>,
    /// The sequencer of client leases and of every instance's node ID (`--client-sequencer`); `None`:
    /// the node source's sequencer when `--node` is a lease source, else [`DEFAULT_CLIENT_SEQUENCER`].
    /// With a lease source, any other name is refused: the service and its clients draw node IDs from
    /// one sequencer, so no client is leased a node ID an instance mints with.
    pub client_sequencer: Option<String>,
    /// Claim time-to-live of a client lease (`--lease-ttl`, default 70 s); longer than the reservation.
    pub lease_ttl: Duration,
    /// How far past the clock a client lease's reservation reaches (`--lease-reservation`, default 60 s).
    pub lease_reservation: Duration,
    /// Web origins whose pages may call the service (`--cors-origin`, CORS); `*` allows any. Empty: no
    /// CORS headers, so only pages of the service's own origin can read its answers.
    pub cors_origins: Vec<String>,
    /// Host names a request may name in `Host` (`--allowed-host`; IP addresses are always accepted).
    /// Empty: any. `snowmint serve` on a loopback address defaults to `localhost` (DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// Bearer tokens required on `/v1/ids` and `/v1/leases…` (`--auth-token-file`); empty: none.
    pub auth_tokens: Tokens,
    /// Client leases one client (token, else source address) may hold at once
    /// (`--max-leases-per-client`, default [`DEFAULT_MAX_LEASES_PER_CLIENT`]).
    pub max_leases_per_client: usize,
    /// Client leases the clients of one network (IPv4 /24, IPv6 /64) may hold together without a token
    /// (`--max-leases-per-network`); `None`: twice [`Config::max_leases_per_client`].
    pub max_leases_per_network: Option<usize>,
    /// Client leases every client without a token may hold together (`--max-unauthenticated-leases`);
    /// `None`: a quarter of the client sequencer's node IDs ([`default_unauthenticated_share`]).
    pub max_unauthenticated_leases: Option<usize>,
    /// Connections served at once (`--max-connections`, default [`DEFAULT_MAX_CONNECTIONS`]); one more
    /// is answered `503` and closed.
    pub max_connections: usize,
    /// Connections one source (an IPv4 address, an IPv6 /64) may hold at once
    /// (`--max-connections-per-source`); `None`: a quarter of [`Config::max_connections`]
    /// ([`slots::default_per_source`]). One more from it is answered `503` and closed.
    pub max_connections_per_source: Option<usize>,
    /// `--tls-cert`: the PEM certificate chain to serve HTTPS with (with [`Config::tls_key`]).
    pub tls_cert: Option<std::path::PathBuf>,
    /// `--tls-key`: the PEM private key of [`Config::tls_cert`].
    pub tls_key: Option<std::path::PathBuf>,
}

/// The default of `--max-leases-per-client`.
pub const DEFAULT_MAX_LEASES_PER_CLIENT: usize = 8;
/// The default of `--max-connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// Checks a `--cors-origin` value: `*`, or `scheme://host[:port]` with no path (what browsers send in
/// `Origin`).
pub fn check_origin(origin: &str) -> Result<(), String> {
    if origin == "*" {
        return Ok(());
    }
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or_else(|| {
            format!("{origin:?} is not * or an origin such as https://app.example.com")
        })?;
    let ok = !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{origin:?} is not an origin (scheme://host[:port], no path): e.g. https://app.example.com"
        ))
    }
}

impl Config {
    /// The `access-control-allow-origin` value for a request from `origin` (its `Origin` header), if
    /// the service lets that origin's pages read its answers.
    pub fn cors_allow(&self, origin: Option<&str>) -> Option<String> {
        if self.cors_origins.iter().any(|o| o == "*") {
            return Some("*".to_string());
        }
        let origin = origin?;
        self.cors_origins
            .iter()
            .any(|o| o == origin)
            .then(|| origin.to_string())
    }

    /// A configuration with the defaults of `snowmint serve` for `node` and a preset layout.
    pub fn new(node: impl Into<String>, layout_name: &str) -> Result<Config, snowmint::Error> {
        Ok(Config {
            node: node.into(),
            layout: Layout::preset(layout_name)?,
            layout_name: layout_name.to_string(),
            validity: Duration::from_secs(600),
            max_count: 10_000,
            leases: None,
            client_sequencer: None,
            lease_ttl: Duration::from_secs(70),
            lease_reservation: Duration::from_secs(60),
            cors_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            auth_tokens: Tokens::default(),
            max_leases_per_client: DEFAULT_MAX_LEASES_PER_CLIENT,
            max_leases_per_network: None,
            max_unauthenticated_leases: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_source: None,
            tls_cert: None,
            tls_key: None,
        })
    }
}
