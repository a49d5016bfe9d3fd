//! The service: its generator and the claim that made it, the store of client leases, the supervisor
//! that claims a node ID again after a loss, the store-call bounds and shutdown.

use super::*;

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
    pub(crate) config: Config,
    /// The generator in use: replaced by a new claim after the lease was lost ([`Service::supervise`]).
    pub(crate) generator: RwLock<Arc<NodeGenerator>>,
    /// Makes a new generator under a new claim (a store-backed node source), for recovery.
    reclaim: Option<Reclaim>,
    /// What generators replaced after a loss minted (so the counters never go back).
    pub(crate) retired: Mutex<snowmint::Stats>,
    pub(crate) time: Arc<dyn Time>,
    pub(crate) leases: Option<leases::Leases>,
    /// The lease gauges of `/metrics`, as last read from the store by [`Service::supervise`] (so
    /// `/metrics` never waits on the store).
    pub(crate) gauges: Mutex<Option<leases::Gauges>>,
    /// The store the pool of the lease routes grows on ([`STORE_POOL`] handles; none for the embedded
    /// store, whose claims are file locks of the handle that took them), until the supervisor has.
    pool_url: Mutex<Option<snowmint_coord::source::StoreUrl>>,
    /// Store calls in flight (at most [`MAX_STORE_CALLS`]; one past its deadline still holds its slot).
    pub(crate) store_calls: Arc<tokio::sync::Semaphore>,
    /// Why the lease routes answer `404 INVALID_ARGUMENT` when there is no store.
    pub(crate) no_store: String,
    /// Said once at start (`snowmint serve` writes it to stderr): the client leases' reservation
    /// clipped to the store's bound ([`Service::notice`]).
    notice: Option<String>,
    pub(crate) metrics: metrics::Metrics,
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

    /// [`Service::open_with`] as the deterministic simulation opens an instance
    /// (`sim/src/worlds/service.rs`): the stores its node source (a lease source) or `--store` names
    /// opened by `open` (the simulated store behind the real code paths that open them by URL), the own
    /// lease [stepped](LeaseOptions::stepped) (no keeper thread: [`Service::keeper_round`] runs a
    /// round), and with `defect` (planted only with coord's feature `planted-defects`) in the service and
    /// its leases.
    #[doc(hidden)]
    pub fn open_simulated(
        config: Config,
        time: Arc<dyn Time>,
        open: Arc<StoreOpener>,
        defect: Hook,
    ) -> Result<Service, snowmint_coord::Error> {
        let sim = Simulated {
            stepped: true,
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
                    *c != l.sequencer && !sim.defect.is(Defect::ServiceOtherClientSequencer)
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
                if !sim.defect.is(Defect::ServiceFixedNodeUnclaimed)
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
            Some(c) if sim.defect.is(Defect::ServiceOtherClientSequencer) => c.clone(),
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
    pub(crate) fn count_lease(&self, delta: i64) {
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
}
