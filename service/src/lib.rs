//! # snowmint-service
//!
//! The ID service of SPEC §6a (`snowmint serve`): batches of IDs with a validity for clients that do not
//! hold a node ID (Hazelcast's `prefetchCount` / `prefetchValidityMillis`), node-ID leases for clients
//! that mint locally (browsers, offline pages), `/healthz` and Prometheus `/metrics`, over HTTP/1.1.
//!
//! The protocol lives in one function, [`Service::handle`]: method, path with query, body in; status,
//! headers, body out. The HTTP server ([`server`]), the tests, the fuzz target and the bench all go
//! through it. It never panics across a request (a panic becomes `500 PANIC`), and it never blocks on a
//! store unless [`Route::blocks`] says so (the server then runs it on a blocking thread).
#![warn(missing_docs)]

pub mod deadline;
mod guard;
mod json;
mod leases;
mod metrics;
pub mod server;
pub mod slots;
pub mod source;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use snowmint::{ErrorCode, Layout, Options, Policy};
use snowmint_coord::source::{open_store, StoreOpener};
use snowmint_coord::{
    LeaseOptions, LeaseState, NodeGenerator, NodeSource, Store, SystemTime, Time,
};

pub use guard::{judged_header, ClientKey, Head, Tokens};
pub use leases::{default_unauthenticated_share, LeaseToken, TokenKey};

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

/// An answer: status, content type, extra headers and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// `content-type` (empty for a body-less 204).
    pub content_type: &'static str,
    /// Extra headers (`allow`, `retry-after`).
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// A failed request: status and the error body's fields.
#[derive(Clone, Debug)]
pub struct ApiError {
    status: u16,
    code: ErrorCode,
    message: String,
    field: Option<&'static str>,
    retry_after_ms: Option<u64>,
    allow: Option<&'static str>,
    /// `www-authenticate: Bearer` (a 401).
    www_authenticate: bool,
}

impl ApiError {
    /// An answer's error. Clients are not told where the store is: every URL in `message` (and so any
    /// password in one) becomes `<store>`.
    fn new(status: u16, code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: snowmint_coord::without_urls(&message.into()),
            field: None,
            retry_after_ms: None,
            allow: None,
            www_authenticate: false,
        }
    }

    fn field(mut self, field: &'static str) -> ApiError {
        self.field = Some(field);
        self
    }

    pub(crate) fn bad(field: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(400, ErrorCode::InvalidArgument, message).field(field)
    }

    /// The status a store or generator error answers with (SERVICE-API.md's mapping).
    fn from_coord(e: snowmint_coord::Error) -> ApiError {
        let status = match e.code() {
            ErrorCode::StoreUnavailable
            | ErrorCode::NodeIdsExhausted
            | ErrorCode::TooFarAhead
            | ErrorCode::ServiceUnavailable => 503,
            ErrorCode::LeaseLost | ErrorCode::SequencerDestroyed | ErrorCode::SequencerConflict => {
                409
            }
            ErrorCode::SequencerNotFound => 404,
            ErrorCode::InvalidArgument | ErrorCode::Parse => 400,
            _ => 500,
        };
        ApiError::new(status, e.code(), e.message())
    }

    fn into_response(self) -> Response {
        let mut headers = Vec::new();
        if let Some(allow) = self.allow {
            headers.push(("allow", allow.to_string()));
        }
        if self.www_authenticate {
            headers.push(("www-authenticate", "Bearer".to_string()));
        }
        if let Some(ms) = self.retry_after_ms {
            headers.push(("retry-after", ms.div_ceil(1000).max(1).to_string()));
        }
        Response {
            status: self.status,
            content_type: json::CONTENT_TYPE,
            headers,
            body: json::error(
                self.code.as_str(),
                &self.message,
                self.field,
                self.retry_after_ms,
            ),
        }
    }
}

/// The routes of the protocol (what `/metrics` counts requests by).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Route {
    /// `POST /v1/ids`
    Ids,
    /// `POST /v1/leases`
    Leases,
    /// `POST /v1/leases/{token}/renew`
    Renew,
    /// `DELETE /v1/leases/{token}`
    Release,
    /// `GET /healthz`
    Health,
    /// `GET /metrics`
    Metrics,
    /// Anything else.
    Unknown,
}

impl Route {
    /// The route of a path (the query removed).
    pub fn of(path: &str) -> Route {
        match path {
            "/v1/ids" => Route::Ids,
            "/v1/leases" => Route::Leases,
            "/healthz" => Route::Health,
            "/metrics" => Route::Metrics,
            p => match p.strip_prefix("/v1/leases/") {
                Some(rest)
                    if rest
                        .strip_suffix("/renew")
                        .is_some_and(|t| !t.is_empty() && !t.contains('/')) =>
                {
                    Route::Renew
                }
                Some(rest) if !rest.is_empty() && !rest.contains('/') => Route::Release,
                _ => Route::Unknown,
            },
        }
    }

    /// The route's label in `snowmint_http_requests_total{route=…}`.
    pub fn label(self) -> &'static str {
        match self {
            Route::Ids => "/v1/ids",
            Route::Leases => "/v1/leases",
            Route::Renew => "/v1/leases/{token}/renew",
            Route::Release => "/v1/leases/{token}",
            Route::Health => "/healthz",
            Route::Metrics => "/metrics",
            Route::Unknown => "other",
        }
    }

    /// `true` if answering may wait on the store (run it off the reactor).
    pub fn blocks(self) -> bool {
        matches!(self, Route::Leases | Route::Renew | Route::Release)
    }

    /// `true` for the routes `--auth-token-file` guards (the data routes; `/healthz` and `/metrics`
    /// stay open).
    pub fn needs_token(self) -> bool {
        matches!(
            self,
            Route::Ids | Route::Leases | Route::Renew | Route::Release
        )
    }

    fn allows(self, method: &str) -> bool {
        match self {
            Route::Ids | Route::Leases | Route::Renew => method == "POST",
            Route::Release => method == "DELETE",
            Route::Health | Route::Metrics => method == "GET" || method == "HEAD",
            Route::Unknown => false,
        }
    }

    fn allow(self) -> &'static str {
        match self {
            Route::Ids | Route::Leases | Route::Renew => "POST",
            Route::Release => "DELETE",
            Route::Health | Route::Metrics => "GET, HEAD",
            Route::Unknown => "",
        }
    }
}

/// How [`Service::open_simulated`] opens an instance: the own lease stepped, and (feature
/// `planted-defects`) a defect planted.
#[derive(Clone, Copy, Debug, Default)]
struct Simulated {
    stepped: bool,
    #[cfg(feature = "planted-defects")]
    defect: snowmint_coord::lease::Defect,
}

#[cfg(feature = "planted-defects")]
use snowmint_coord::lease::Defect;

/// The planted defects of the service (a stand-in without the feature, where none is ever on).
#[cfg(not(feature = "planted-defects"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Defect {
    ServiceFixedNodeUnclaimed,
    ServiceOtherClientSequencer,
}

impl Simulated {
    /// The lease options of the service's own lease and client sequencer: stepped or not, with the
    /// planted defect.
    fn lease_options(&self) -> LeaseOptions {
        LeaseOptions {
            stepped: self.stepped,
            #[cfg(feature = "planted-defects")]
            defect: self.defect,
            ..LeaseOptions::default()
        }
    }

    /// The own lease's holder string: this process's, or (stepped) one that names no process, so that a
    /// simulated run replays exactly (a stepped lease's first node ID to try follows from its holder).
    fn holder(&self) -> String {
        match self.stepped {
            true => "snowmint serve (simulated)".to_string(),
            false => format!(
                "snowmint serve, {}",
                snowmint_coord::lease::default_holder()
            ),
        }
    }

    /// Whether the planted defect `d` is on: always `false` without the feature `planted-defects`.
    fn planted(&self, d: Defect) -> bool {
        #[cfg(feature = "planted-defects")]
        return self.defect == d;
        #[cfg(not(feature = "planted-defects"))]
        {
            let _ = d;
            false
        }
    }
}

/// Makes the service's generator: a claim on the store (again, after a loss).
struct Reclaim(Box<dyn Fn() -> Result<NodeGenerator, snowmint_coord::Error> + Send + Sync>);

impl std::fmt::Debug for Reclaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reclaim(..)")
    }
}

/// Store handles the client-lease routes use in turn (each its own connection), besides the one of
/// the service's own lease.
pub const STORE_POOL: usize = 4;
/// How long a request that calls the store may take before it is answered `503 STORE_UNAVAILABLE`
/// (the store call itself finishes, or fails, in the background).
pub const STORE_DEADLINE: Duration = Duration::from_secs(3);
/// Requests that call the store at once (one waiting on a store that does not answer included).
pub const MAX_STORE_CALLS: usize = 32;
/// How often [`Service::supervise`] looks at the own lease.
pub const SUPERVISE_EVERY: Duration = Duration::from_millis(250);
/// How often it reads the lease gauges of `/metrics` from the store (and after every lease taken or
/// released by this instance).
pub const GAUGES_EVERY: Duration = Duration::from_secs(2);
/// Attempts to claim a node ID again after a loss (the pause doubles from 250 ms up to 5 s: about ten
/// minutes in all), then the service stays `LEASE_LOST` until restarted.
pub const RECLAIM_ATTEMPTS: u32 = 130;

/// The service: its generator, the store of client leases, counters.
#[derive(Debug)]
pub struct Service {
    config: Config,
    /// The generator in use: replaced by a new claim after the lease was lost ([`Service::supervise`]).
    generator: RwLock<Arc<NodeGenerator>>,
    /// Makes a new generator under a new claim (a store-backed node source), for recovery.
    reclaim: Option<Reclaim>,
    /// What generators replaced after a loss minted (so the counters never go back).
    retired: Mutex<snowmint::Stats>,
    time: Arc<dyn Time>,
    leases: Option<leases::Leases>,
    /// The lease gauges of `/metrics`, as last read from the store by [`Service::supervise`] (so
    /// `/metrics` never waits on the store).
    gauges: Mutex<Option<leases::Gauges>>,
    /// The store the pool of the lease routes grows on ([`STORE_POOL`] handles; none for the embedded
    /// store, whose claims are file locks of the handle that took them), until the supervisor has.
    pool_url: Mutex<Option<snowmint_coord::source::StoreUrl>>,
    /// Store calls in flight (at most [`MAX_STORE_CALLS`]; one past its deadline still holds its slot).
    store_calls: Arc<tokio::sync::Semaphore>,
    /// Why the lease routes answer `404 INVALID_ARGUMENT` when there is no store.
    no_store: String,
    /// Said once at start (`snowmint serve` writes it to stderr): the client leases' reservation
    /// clipped to the store's bound ([`Service::notice`]).
    notice: Option<String>,
    metrics: metrics::Metrics,
    shutting_down: AtomicBool,
}

impl Service {
    /// Opens the node source (a lease source claims a node ID first; a fixed node ID with a store of
    /// client leases is claimed on the client sequencer), the store of client leases and the client
    /// sequencer. Blocking. A fixed node ID without a store waits [`FIXED_NODE_MAX_AHEAD`] first.
    pub fn open(config: Config) -> Result<Service, snowmint_coord::Error> {
        Service::open_with(config, Arc::new(SystemTime), None, true)
    }

    /// [`Service::open`] with a clock, a store given directly (the fuzz target's in-memory store: it
    /// serves client leases as `--store` would, and the node source must then be a fixed node ID), and
    /// whether a fixed node ID without a store waits out [`FIXED_NODE_MAX_AHEAD`] (the fuzz target and
    /// unit tests do not).
    pub fn open_with(
        config: Config,
        time: Arc<dyn Time>,
        store: Option<Arc<dyn Store>>,
        wait_out_fixed: bool,
    ) -> Result<Service, snowmint_coord::Error> {
        let open: Arc<StoreOpener> = Arc::new(open_store);
        Service::open_inner(
            config,
            time,
            store,
            wait_out_fixed,
            Simulated::default(),
            open,
        )
    }

    /// [`Service::open_with`] as the deterministic simulation opens an instance (coord's
    /// `tests/simulation/service.rs`): the stores its node source (a lease source) or `--store` names
    /// opened by `open` (the simulated store behind the real code paths that open them by URL), the own
    /// lease [stepped](LeaseOptions::stepped) (no keeper thread: [`Service::keeper_round`] runs a
    /// round), and with feature `planted-defects` a defect planted in the service.
    #[doc(hidden)]
    pub fn open_simulated(
        config: Config,
        time: Arc<dyn Time>,
        open: Arc<StoreOpener>,
        #[cfg(feature = "planted-defects")] defect: snowmint_coord::lease::Defect,
    ) -> Result<Service, snowmint_coord::Error> {
        let sim = Simulated {
            stepped: true,
            #[cfg(feature = "planted-defects")]
            defect,
        };
        Service::open_inner(config, time, None, false, sim, open)
    }

    /// One keeper round of the own lease, on the calling thread (an instance of
    /// [`Service::open_simulated`]); `false` when there is no stepped lease held.
    #[doc(hidden)]
    pub fn keeper_round(&self) -> bool {
        self.generator().lease().is_some_and(|l| l.keeper_round())
    }

    fn open_inner(
        config: Config,
        time: Arc<dyn Time>,
        store: Option<Arc<dyn Store>>,
        wait_out_fixed: bool,
        sim: Simulated,
        open: Arc<StoreOpener>,
    ) -> Result<Service, snowmint_coord::Error> {
        if config.lease_ttl <= config.lease_reservation {
            return Err(snowmint_coord::Error::invalid(format!(
                "the client lease TTL ({} ms) must be longer than its reservation ({} ms): a node ID is handed out again only after its holder's reservation has passed",
                config.lease_ttl.as_millis(),
                config.lease_reservation.as_millis()
            )));
        }
        if config.max_count == 0 || config.max_count > snowmint::MAX_BATCH {
            return Err(snowmint_coord::Error::invalid(format!(
                "--max-count must be 1..={} (the generator's largest batch), got {}",
                snowmint::MAX_BATCH,
                config.max_count
            )));
        }
        if config.max_leases_per_client == 0
            || config.max_leases_per_network == Some(0)
            || config.max_unauthenticated_leases == Some(0)
            || config.max_connections == 0
            || config.max_connections_per_source == Some(0)
        {
            return Err(snowmint_coord::Error::invalid(
                "--max-leases-per-client, --max-leases-per-network, --max-unauthenticated-leases, --max-connections and --max-connections-per-source must be at least 1",
            ));
        }
        let parsed = NodeSource::parse(&config.node)?;
        // The store of client leases: the node source's (a lease source), else `--store` (or the
        // store given directly). The service's node ID and the client leases come from one sequencer on
        // it, so that no client is ever leased a node ID an instance mints with.
        let from_caller = store.is_some();
        let (store, sequencer) = match &parsed {
            NodeSource::Lease(l) => {
                if config.leases.is_some() || store.is_some() {
                    return Err(snowmint_coord::Error::invalid(
                        "--store is for a fixed --node: with a lease source as --node, client leases come from the node source's store and sequencer",
                    ));
                }
                if let Some(c) = config.client_sequencer.as_ref().filter(|&c| {
                    *c != l.sequencer && !sim.planted(Defect::ServiceOtherClientSequencer)
                }) {
                    return Err(snowmint_coord::Error::invalid(format!(
                        "--client-sequencer {c:?} is not the node source's sequencer {:?}: the service and its clients must draw node IDs from one sequencer, or a client could be leased the node ID the service mints with",
                        l.sequencer
                    )));
                }
                let s = open(&l.store).map_err(|e| {
                    e.context(format!(
                        "node source {:?}",
                        snowmint_coord::source::redacted(&config.node)
                    ))
                })?;
                (Some(s), l.sequencer.clone())
            }
            _ => {
                let store = match (store, &config.leases) {
                    (Some(s), _) => Some(s),
                    (None, Some(url)) => {
                        let parsed = snowmint_coord::source::parse_store_url(url)
                            .map_err(|e| e.context("--store"))?;
                        Some(open(&parsed).map_err(|e| e.context("--store"))?)
                    }
                    (None, None) => None,
                };
                let sequencer = config
                    .client_sequencer
                    .clone()
                    .unwrap_or_else(|| DEFAULT_CLIENT_SEQUENCER.to_string());
                (store, sequencer)
            }
        };
        snowmint_coord::sequencer::check_name(&sequencer)
            .map_err(|e| e.context("--client-sequencer"))?;
        // The lease routes use the handles of a pool in turn; the own lease keeps the first handle. The
        // others connect in the background once the service serves ([`Service::supervise`]).
        let pool_url = match (&parsed, &config.leases) {
            (NodeSource::Lease(l), _) => Some(l.store.clone()),
            (_, Some(url)) if !from_caller => Some(snowmint_coord::source::parse_store_url(url)?),
            _ => None,
        }
        .filter(|u| !matches!(u, snowmint_coord::source::StoreUrl::File { .. }));
        let mut reclaim: Option<Reclaim> = None;
        let generator = match (&parsed, &store) {
            // (The planted defect is a fixed node ID's: a lease source always claims.)
            (_, Some(s))
                if !sim.planted(Defect::ServiceFixedNodeUnclaimed)
                    || matches!(parsed, NodeSource::Lease(_)) =>
            {
                // A lease on the store: a lease source's any free node ID, a fixed node ID exactly that
                // one (refused while another instance or a client holds it). Under `fail`: a request
                // never waits on the reactor; at the ceiling it is TOO_FAR_AHEAD (503, retry) while the
                // keeper extends the reservation.
                let (ttl, node) = match &parsed {
                    NodeSource::Lease(l) => (l.ttl, None),
                    fixed => {
                        // The client sequencer the fixed node ID is claimed on (created if it is
                        // the service's own default one).
                        leases::client_sequencer(
                            s,
                            &time,
                            &sequencer,
                            &config,
                            sim.lease_options(),
                        )?;
                        (
                            LeaseOptions::default().ttl,
                            Some(fixed.resolve(&config.node, &config.layout)?),
                        )
                    }
                };
                let options = Options {
                    policy: Policy::Fail,
                    ..Options::default()
                };
                let (s, seq, layout, time) =
                    (s.clone(), sequencer.clone(), config.layout, time.clone());
                let make = Reclaim(Box::new(move || {
                    NodeGenerator::lease_from(
                        s.clone(),
                        &seq,
                        layout,
                        options,
                        time.clone(),
                        LeaseOptions {
                            ttl,
                            node,
                            holder: sim.holder(),
                            ..sim.lease_options()
                        },
                    )
                }));
                let g = (make.0)()?;
                reclaim = Some(make);
                g
            }
            _ => {
                let options = Options {
                    policy: Policy::Fail,
                    max_ahead_ns: FIXED_NODE_MAX_AHEAD.as_nanos() as u64,
                    random_start_seed: None,
                };
                let g = NodeGenerator::open_with(
                    &config.node,
                    config.layout,
                    options,
                    time.clone(),
                    LeaseOptions::default(),
                )?;
                if wait_out_fixed {
                    // An instance before this one (killed, restarted) may have minted up to
                    // FIXED_NODE_MAX_AHEAD ahead of the clock with this node ID.
                    std::thread::sleep(FIXED_NODE_MAX_AHEAD);
                }
                g
            }
        };
        // The defect: client leases from `--client-sequencer`, the own lease from the node source's.
        let sequencer = match &config.client_sequencer {
            Some(c) if sim.planted(Defect::ServiceOtherClientSequencer) => c.clone(),
            _ => sequencer,
        };
        let leases = match &store {
            Some(s) => Some(leases::Leases::open(
                vec![s.clone()],
                time.clone(),
                &sequencer,
                &config,
                sim.lease_options(),
            )?),
            None => None,
        };
        let notice = leases
            .as_ref()
            .map(|l| l.reservation())
            .filter(|&r| r < config.lease_reservation)
            .map(|r| {
                format!(
                    "client leases reserve {} ms ahead of the clock, not --lease-reservation's {} ms: the store {} bounds what any holder mints ahead of the clock (max_ahead {} ms), so that a holder that finds no history for its node ID starts above anything a client could have minted; give the store a larger bound for longer offline minting (every process of the store the same: file:///DIR?max_ahead={}s)",
                    r.as_millis(),
                    config.lease_reservation.as_millis(),
                    store.as_ref().map_or(String::new(), |s| s.describe()),
                    r.as_millis(),
                    config.lease_reservation.as_secs().max(1)
                )
            });
        let service = Service {
            notice,
            no_store: "this service serves no client leases (started without a store of them): start it with a lease source as --node (file:///DIR, etcd://…, postgres://…) or give --store URL".into(),
            config,
            generator: RwLock::new(Arc::new(generator)),
            reclaim,
            retired: Mutex::new(snowmint::Stats::default()),
            time,
            leases,
            gauges: Mutex::new(None),
            store_calls: Arc::new(tokio::sync::Semaphore::new(MAX_STORE_CALLS)),
            pool_url: Mutex::new(pool_url),
            metrics: metrics::Metrics::default(),
            shutting_down: AtomicBool::new(false),
        };
        service.refresh_gauges();
        Ok(service)
    }

    /// What the service says once at start, if anything: on a store that bounds what any holder mints
    /// ahead of the clock (the embedded store's `max_ahead`, 1 s by default) below
    /// `--lease-reservation`, the client leases' reservation is clipped to that bound, and this says
    /// so (and how to give the store a larger bound).
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The service's own node ID.
    pub fn node_id(&self) -> u64 {
        self.generator().node_id()
    }

    /// The service's generator (the one in use: a new one after a lost lease was claimed again).
    pub fn generator(&self) -> Arc<NodeGenerator> {
        self.generator
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Keeps the service going until it is dropped or shuts down (a thread of its own): claims a node
    /// ID again after the own lease was lost (at most [`RECLAIM_ATTEMPTS`] attempts, backing off), and
    /// reads the lease gauges of `/metrics` from the store every [`GAUGES_EVERY`].
    pub fn supervise(self: &Arc<Self>) {
        let weak: Weak<Service> = Arc::downgrade(self);
        let _ = std::thread::Builder::new()
            .name("snowmint-serve-supervisor".into())
            .spawn(move || {
                if let Some(s) = weak.upgrade() {
                    s.grow_pool();
                }
                let mut attempts = 0u32;
                let mut pause = SUPERVISE_EVERY;
                let mut last_read = std::time::Instant::now();
                loop {
                    std::thread::sleep(pause);
                    let Some(s) = weak.upgrade() else { return };
                    if s.is_shutting_down() {
                        return;
                    }
                    if last_read.elapsed() >= GAUGES_EVERY {
                        s.refresh_gauges();
                        last_read = std::time::Instant::now();
                    }
                    let lost = s.generator().state() == Some(LeaseState::Lost);
                    pause = SUPERVISE_EVERY;
                    if lost && attempts < RECLAIM_ATTEMPTS {
                        attempts += 1;
                        if s.reclaim_once() {
                            attempts = 0;
                        } else {
                            pause = (SUPERVISE_EVERY * 2u32.pow(attempts.min(5)))
                                .min(Duration::from_secs(5));
                        }
                    } else if !lost {
                        attempts = 0;
                    }
                }
            });
    }

    /// One attempt to claim a node ID in place of a lost lease: `true` when the new generator is in use.
    fn reclaim_once(&self) -> bool {
        let Some(make) = &self.reclaim else {
            return false;
        };
        match (make.0)() {
            Ok(g) => {
                let old = std::mem::replace(
                    &mut *self.generator.write().unwrap_or_else(|p| p.into_inner()),
                    Arc::new(g),
                );
                let mut retired = self.retired.lock().unwrap_or_else(|p| p.into_inner());
                *retired = retired.merged(old.stats());
                true
            }
            Err(_) => false,
        }
    }

    /// Connects the other handles of the lease routes' pool (a handle that cannot connect is skipped).
    fn grow_pool(&self) {
        let url = self
            .pool_url
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let (Some(url), Some(leases)) = (url, &self.leases) {
            for _ in 1..STORE_POOL {
                if let Ok(s) = open_store(&url) {
                    leases.add_handle(s);
                }
            }
        }
    }

    /// Moves the lease gauges by a lease this instance took (`1`) or released (`-1`), until the
    /// supervisor reads them from the store again.
    fn count_lease(&self, delta: i64) {
        let Some(leases) = &self.leases else { return };
        let mut gauges = self.gauges.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(g) = gauges.as_mut() {
            g.active = g.active.saturating_add_signed(delta);
            for (name, n) in g.holders.iter_mut() {
                if name == leases.sequencer() {
                    *n = n.saturating_add_signed(delta);
                }
            }
        }
    }

    fn refresh_gauges(&self) {
        let Some(leases) = &self.leases else { return };
        let g = self.generator();
        let own = g
            .lease()
            .map(|l| (l.sequencer().name.as_str(), l.node_id()));
        let fresh = leases.gauges(own);
        *self.gauges.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh);
    }

    /// Graceful shutdown has begun: `/healthz` answers 503, and the server answers every request that
    /// arrives from now on (but `/metrics`) with `503 SERVICE_UNAVAILABLE` ([`Service::shutdown_error`]);
    /// requests already received finish.
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    /// `true` once [`Service::begin_shutdown`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    /// Slots of store calls in flight (the server takes one per request that calls the store).
    pub fn store_calls(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.store_calls
    }

    /// The answer of a request whose store calls did not finish within [`STORE_DEADLINE`].
    pub fn store_timeout(&self, route: Route) -> Response {
        let mut e = ApiError::new(
            503,
            ErrorCode::StoreUnavailable,
            format!(
                "the store did not answer within {} s",
                STORE_DEADLINE.as_secs()
            ),
        );
        e.retry_after_ms = Some(1000);
        self.refuse(route, e)
    }

    /// Undoes an answer its client was never given (it was told [`Service::store_timeout`] instead):
    /// a lease taken past the deadline is released, so that it does not count against the client
    /// until its TTL. Other answers change nothing that needs undoing.
    pub fn abandon(&self, client: &ClientKey, route: Route, answer: &Response) {
        if route != Route::Leases || answer.status != 201 {
            return;
        }
        let token = serde_json::from_slice::<serde_json::Value>(&answer.body)
            .ok()
            .and_then(|v| v["token"].as_str().map(str::to_string));
        if let (Some(token), Ok(leases)) = (token, self.leases()) {
            if leases.release(client, &token).is_ok() {
                self.count_lease(-1);
            }
        }
    }

    /// The error of a request that arrives during shutdown.
    pub fn shutdown_error() -> ApiError {
        ApiError::new(
            503,
            ErrorCode::ServiceUnavailable,
            "the service is shutting down",
        )
    }

    /// Releases the service's own lease (if `--node` is a lease source); client leases stay.
    pub fn release(&self) -> Result<(), snowmint_coord::Error> {
        self.generator().release()
    }

    /// Answers with `error` for a request the server refused before [`Service::handle`] (a body too
    /// large or too slow), counted like every answer.
    pub fn refuse(&self, route: Route, error: ApiError) -> Response {
        let r = error.into_response();
        self.metrics.count(route, r.status);
        r
    }

    /// Answers one request. `target` is the request target (path and query). Never panics: a panic
    /// inside becomes `500 PANIC`. Every answer is counted by route and status.
    pub fn handle(&self, method: &str, target: &str, body: &[u8]) -> Response {
        self.handle_as(
            &ClientKey::Addr(std::net::Ipv4Addr::LOCALHOST.into()),
            method,
            target,
            body,
        )
    }

    /// [`Service::handle`] for a request that counts as `client` (the per-client lease cap).
    pub fn handle_as(
        &self,
        client: &ClientKey,
        method: &str,
        target: &str,
        body: &[u8],
    ) -> Response {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        let route = Route::of(path);
        let response = catch_unwind(AssertUnwindSafe(|| {
            self.route(client, route, method, path, query, body)
        }))
        .unwrap_or_else(|_| {
            Err(ApiError::new(
                500,
                ErrorCode::Panic,
                "the service failed on this request (a bug: please report it)",
            ))
        })
        .unwrap_or_else(ApiError::into_response);
        self.metrics.count(route, response.status);
        response
    }

    fn route(
        &self,
        client: &ClientKey,
        route: Route,
        method: &str,
        path: &str,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<Response, ApiError> {
        if route == Route::Unknown {
            return Err(ApiError::new(
                404,
                ErrorCode::InvalidArgument,
                format!(
                    "no route {:?}; the routes are POST /v1/ids, POST /v1/leases, POST /v1/leases/{{token}}/renew, DELETE /v1/leases/{{token}}, GET /healthz, GET /metrics",
                    json::clip(path, 100)
                ),
            )
            .field("path"));
        }
        if !route.allows(method) {
            let mut e = ApiError::new(
                405,
                ErrorCode::InvalidArgument,
                format!(
                    "{} {} is not allowed; use {}",
                    json::clip(method, 20),
                    route.label(),
                    route.allow()
                ),
            )
            .field("method");
            e.allow = Some(route.allow());
            return Err(e);
        }
        if body.len() > MAX_BODY {
            return Err(body_too_large(body.len()));
        }
        if route == Route::Metrics {
            no_query(query)?;
            return Ok(self.metrics());
        }
        match route {
            Route::Ids => self.ids(query, body),
            Route::Health => self.health(query),
            Route::Leases => {
                no_query(query)?;
                let holder = json::holder(body)?;
                let r = self.leases()?.take(client, holder.as_deref())?;
                // The gauges follow at once, without a store call (the supervisor reads them again).
                self.count_lease(1);
                Ok(r)
            }
            Route::Renew => {
                no_query(query)?;
                json::empty_body(body)?;
                let token = &path["/v1/leases/".len()..path.len() - "/renew".len()];
                self.leases()?.renew(client, token)
            }
            Route::Release => {
                no_query(query)?;
                json::empty_body(body)?;
                let r = self
                    .leases()?
                    .release(client, &path["/v1/leases/".len()..])?;
                self.count_lease(-1);
                Ok(r)
            }
            Route::Metrics | Route::Unknown => unreachable!("answered above"),
        }
    }

    fn leases(&self) -> Result<&leases::Leases, ApiError> {
        self.leases
            .as_ref()
            // A configuration of this service, not a passing outage: not the retryable 503.
            .ok_or_else(|| {
                ApiError::new(404, ErrorCode::InvalidArgument, self.no_store.clone()).field("path")
            })
    }

    /// `LEASE_LOST` (503) when the service's own lease is gone.
    fn own_lease(&self) -> Result<(), ApiError> {
        let g = self.generator();
        match g.state() {
            None | Some(LeaseState::Held) => Ok(()),
            Some(LeaseState::Lost) => Err(ApiError::new(
                503,
                ErrorCode::LeaseLost,
                format!(
                    "the service lost the lease on its node ID {}; it claims another as soon as the store answers",
                    g.node_id()
                ),
            )),
            Some(LeaseState::Destroyed) => Err(ApiError::new(
                503,
                ErrorCode::SequencerDestroyed,
                "the sequencer of the service's node ID was destroyed",
            )),
        }
    }

    fn health(&self, query: Option<&str>) -> Result<Response, ApiError> {
        no_query(query)?;
        if self.is_shutting_down() {
            return Err(Service::shutdown_error());
        }
        self.own_lease()?;
        Ok(json_response(
            200,
            json::health(self.node_id(), &self.config.layout_name),
        ))
    }

    fn ids(&self, query: Option<&str>, body: &[u8]) -> Result<Response, ApiError> {
        let count = parse_count(query, self.config.max_count)?;
        json::empty_body(body)?;
        self.own_lease()?;
        let generator = self.generator();
        let mut ids = vec![0u64; count as usize];
        if let Err(e) = generator.next_ids(&mut ids) {
            let mut err = ApiError::from_coord(e);
            if err.code == ErrorCode::LeaseLost {
                err.status = 503;
            }
            if err.code == ErrorCode::InvalidArgument {
                // A batch this layout can never mint at once (more than max_ahead holds).
                err = err.field("count");
            }
            if err.code == ErrorCode::TooFarAhead {
                // The time the clock needs to catch up with this many IDs, at least one tick.
                let per_tick = self.config.layout.ids_per_tick().max(1);
                let ticks = count.div_ceil(per_tick).max(1);
                let ns = ticks.saturating_mul(self.config.layout.tick_ns());
                err.retry_after_ms = Some(ns.div_ceil(1_000_000).max(1));
            }
            return Err(err);
        }
        let now_ms = self.time.unix_ns() / 1_000_000;
        let valid_ms = self.config.validity.as_millis() as u64;
        Ok(json_response(
            200,
            json::ids(
                &ids,
                now_ms.saturating_add(valid_ms),
                valid_ms,
                &self.config.layout_name,
                generator.node_id(),
            ),
        ))
    }

    fn metrics(&self) -> Response {
        // Local state only: the gauges as the supervisor last read them (none yet: an error says so).
        let gauges = self.gauges.lock().unwrap_or_else(|p| p.into_inner());
        let unread = leases::Gauges {
            active: 0,
            holders: Vec::new(),
            error: Some("not read from the store yet".into()),
        };
        let leases = self
            .leases
            .as_ref()
            .map(|_| gauges.as_ref().unwrap_or(&unread));
        let stats = self
            .retired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .merged(self.generator().stats());
        Response {
            status: 200,
            content_type: "text/plain; version=0.0.4; charset=utf-8",
            headers: Vec::new(),
            body: self.metrics.render(stats, leases).into_bytes(),
        }
    }
}

fn json_response(status: u16, body: Vec<u8>) -> Response {
    Response {
        status,
        content_type: json::CONTENT_TYPE,
        headers: Vec::new(),
        body,
    }
}

/// `413` for a body of `len` bytes.
pub fn body_too_large(len: usize) -> ApiError {
    ApiError::new(
        413,
        ErrorCode::InvalidArgument,
        format!("the body is {len} bytes; at most {MAX_BODY} are accepted"),
    )
    .field("body")
}

impl ApiError {
    /// The answer for this error.
    pub fn response(self) -> Response {
        self.into_response()
    }
}

fn no_query(query: Option<&str>) -> Result<(), ApiError> {
    match query {
        None | Some("") => Ok(()),
        Some(q) => Err(ApiError::bad(
            "query",
            format!(
                "unexpected query {:?}; this route takes none",
                json::clip(q, 100)
            ),
        )),
    }
}

/// `count=N` of `POST /v1/ids` (1 when absent); any other parameter is an error.
fn parse_count(query: Option<&str>, max: u64) -> Result<u64, ApiError> {
    let mut count = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k != "count" {
            return Err(ApiError::bad(
                "query",
                format!(
                    "unknown query parameter {:?}; POST /v1/ids takes count=N",
                    json::clip(k, 40)
                ),
            ));
        }
        if count.is_some() {
            return Err(ApiError::bad("count", "count is given twice"));
        }
        let n = if !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit()) {
            v.parse::<u64>().ok()
        } else {
            None
        };
        match n {
            Some(n) if (1..=max).contains(&n) => count = Some(n),
            Some(_) => {
                return Err(ApiError::bad(
                    "count",
                    format!("count must be 1..={max}, got {v}"),
                ))
            }
            None => {
                return Err(ApiError::bad(
                    "count",
                    format!(
                        "count must be a whole number 1..={max}, got {:?}",
                        json::clip(v, 40)
                    ),
                ))
            }
        }
    }
    Ok(count.unwrap_or(1))
}
