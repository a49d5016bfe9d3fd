//! The service world (`--world service`, `--replay SEED --service`): three instances of `snowmint serve`
//! (the real `Service`) on one in-memory store behind `Link`'s faults, each started as `--node N
//! --leases URL` (its own fixed node ID drawn per seed, claimed on the client sequencer) or, for about a
//! third of them, as `--node URL?sequencer=sim-clients` (a lease source on the client sequencer,
//! `--client-sequencer` the same or not given); the URLs go through the service's own code paths, whose
//! store opener (`Service::open_simulated`) gives the instance's link. Now and then a start is the
//! operator's mistake instead: a lease source on another sequencer of the store (`sim-web`, same layout)
//! with `--client-sequencer sim-clients`, which the service must refuse (`INVALID_ARGUMENT`), or it
//! would mint with a node ID of one sequencer while leasing clients the node IDs of the other. The
//! instances hand client leases out through their real routes (`POST /v1/leases`, `…/renew`, `DELETE
//! …`, answered by the service's `Leases` under the instance's simulated clock), and mint their own IDs
//! through `POST /v1/ids`. Four simulated clients mint locally under their leases, as the JS
//! `OfflineGenerator` does: positions strictly increasing, at or past their clock's tick, within
//! `[start, limit)` of the last answer, renewed by any instance (the token is the only record).
//! Instances crash (cut off, then dropped: the claim stays until its TTL) or shut down, and start again
//! when their node ID is free; clients lose their lease, release it or crash. The operator destroys the
//! client sequencer (a named one, `--client-sequencer`) now and then and creates it again: instances
//! starting meanwhile get `SEQUENCER_NOT_FOUND`, running ones lose their lease and start again. After
//! every step: no ID minted twice across instances and clients, each minter's IDs strictly increasing,
//! and no sequencer in the store that the operator did not create (only `default` is ever created
//! implicitly); at the end of the run, no start of the operator's mistake (after the no-ID-twice check
//! had its chance to catch what it leads to). One seed in three, the store has the embedded store's
//! bound on a lost history (`max_ahead`, 1 s, declared by the links) and its history is lost now and
//! then, the service restarted on it (the directory deleted and made again, the operator creating the
//! sequencers in it again; no clock steps then, SPEC §8): the clients of the lost history mint on
//! offline up to their limits, and every client lease taken after it must start at or above the
//! limit of every one of them on its node ID (SPEC §3.2, "a store whose history is lost"). What it holds the service to (SPEC §6a): every instance's
//! own node ID is a claim on the sequencer client leases come from, so the store never leases a client
//! the node ID an instance mints with.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use snowmint::{ErrorCode, Layout, LayoutConfig};
use snowmint_coord::defect::{Defect, Hook};
use snowmint_coord::{layout_text, Error, LeaseState, MemoryStore, SequencerConfig, Store, Time};

use crate::clock::{trace_line, SimClock, MS, START_UNIX_NS};
use crate::defects::StoreDefect;
use crate::link::{Expiries, Link};
use crate::rng::Rng;
use snowmint_service::{ClientKey, Config, Service};
use std::collections::HashMap;

/// Service instances, each on its own fixed node ID.
const INSTANCES: usize = 3;
/// Clients holding leases.
const CLIENTS: usize = 4;

struct Instance {
    /// A fixed node ID (`--node N --leases URL`), else a lease source on the client sequencer.
    fixed: Option<u64>,
    /// The node ID of the running instance (its fixed one, or the one its lease source claimed).
    node: u64,
    clock: Arc<SimClock>,
    link: Arc<Link>,
    service: Option<Service>,
    /// The last ID this instance's life minted.
    last: Option<u64>,
    next_round_ns: u64,
    /// A fixed node ID the store does not know (no claim) mints only from then on: what
    /// `Service::open` waits out with a sleep ([`snowmint_service::FIXED_NODE_MAX_AHEAD`]).
    mint_after_ns: u64,
    /// When the faults put on this instance's link end by themselves (0: none pending).
    heal_at_ns: u64,
}

/// A client's lease as the last answer gave it.
struct ClientLease {
    token: String,
    node: u64,
    limit: u64,
    /// The last position minted under it (`start - 1` before the first).
    next: u64,
    next_renew_ns: u64,
}

struct Client {
    clock: Arc<SimClock>,
    key: ClientKey,
    lease: Option<ClientLease>,
}

struct ServiceWorld {
    rng: Rng,
    /// The embedded store's bound on a lost history (one seed in three), whose history is then lost
    /// now and then ([`ServiceWorld::lose_history`]); `None`: the in-memory store's own (none).
    bound: Option<Duration>,
    /// The leases of the clients when a history was lost, `(node ID, limit)`: what they may still
    /// mint offline, which no lease taken after it may reach.
    lost: Vec<(u64, u64)>,
    defect: Defect,
    trace: bool,
    now: Arc<AtomicU64>,
    layout: Layout,
    config: Config,
    /// The store, as the operator sees it (no faults).
    store: Arc<MemoryStore>,
    /// The client sequencer's incarnation the operator created last (`None`: destroyed).
    incarnation: Option<u64>,
    /// The other sequencer's incarnation (never destroyed).
    other: u64,
    instances: Vec<Instance>,
    clients: Vec<Client>,
    /// Every ID minted, and who minted it.
    seen: HashMap<u64, String>,
    /// An instance that started with the operator's mistake (a lease source on another sequencer than
    /// `--client-sequencer`), which it must refuse: reported at the end of the run, after the no-ID-twice
    /// check had its chance to find what it leads to.
    mistake_started: Option<String>,
    minted: u64,
    step: u64,
}

/// The client sequencer: named (`--client-sequencer`), so only the operator creates it.
const CLIENT_SEQUENCER: &str = "sim-clients";
/// Another sequencer of the store, with the same layout (another application's): an operator's mistake
/// names it in an instance's lease source with `--client-sequencer sim-clients`.
const OTHER_SEQUENCER: &str = "sim-web";
/// The store's URL in the instances' configurations (the opener gives the instance's link for it; under
/// /proc, where no real store could be made, should a code path open it without the opener).
const STORE_URL: &str = "file:///proc/simulated-store";

/// The operator creates sequencer `name` (all eight node IDs): its incarnation.
fn create(store: &MemoryStore, name: &str, layout: &Layout, step: u64) -> u64 {
    let config = SequencerConfig {
        layout: layout_text(layout),
        nodes: layout.node_count(),
    };
    store
        .create_sequencer(name, &config, START_UNIX_NS / MS + step)
        .expect("the operator's store")
        .incarnation
}

/// A JSON answer's field that is a decimal string or a number.
fn field_u64(v: &serde_json::Value, name: &str) -> std::result::Result<u64, String> {
    match &v[name] {
        serde_json::Value::String(s) => s.parse().map_err(|_| format!("{name}: {s:?}")),
        other => other.as_u64().ok_or_else(|| format!("{name}: {other}")),
    }
}

fn body(r: &snowmint_service::Response) -> serde_json::Value {
    serde_json::from_slice(&r.body).unwrap_or(serde_json::Value::Null)
}

/// An answer the service may give under the world's faults (`ok`, or a store that did not answer, a
/// lease that ended, every node ID held, a generator at its reservation); anything else fails the run.
fn expected(
    r: &snowmint_service::Response,
    ok: u16,
    what: &str,
) -> std::result::Result<bool, String> {
    if r.status == ok {
        return Ok(true);
    }
    let code = body(r)["error"]["code"].as_str().unwrap_or("").to_string();
    let fine = matches!(
        code.as_str(),
        "STORE_UNAVAILABLE"
            | "LEASE_LOST"
            | "NODE_IDS_EXHAUSTED"
            | "TOO_FAR_AHEAD"
            | "SEQUENCER_DESTROYED"
    );
    if fine {
        Ok(false)
    } else {
        Err(format!(
            "{what}: unexpected answer {} {}",
            r.status,
            String::from_utf8_lossy(&r.body)
        ))
    }
}

impl ServiceWorld {
    fn new(seed: u64, defect: Defect, trace: bool) -> ServiceWorld {
        let now = Arc::new(AtomicU64::new(START_UNIX_NS));
        let mut rng = Rng(seed ^ 0x5E41_0001);
        let layout = Layout::new(LayoutConfig {
            timestamp_bits: 41,
            node_bits: 3,
            sequence_bits: 4,
            node_split_bits: 0,
            ..LayoutConfig::default()
        })
        .expect("the simulation's layout");
        // Every third seed: the embedded store's bound (no draw of `rng`: the other seeds as before).
        let bound = (seed % 3 == 2).then(|| Duration::from_millis(1_000));
        let mut config = Config::new("0", "twitter").expect("a configuration");
        config.layout = layout;
        config.layout_name = layout_text(&layout);
        config.lease_ttl = Duration::from_millis(3_000);
        // Clipped to the bound, as the service clips it (which it says on stderr otherwise).
        config.lease_reservation = bound.map_or(Duration::from_millis(2_000), |b| {
            b.min(Duration::from_millis(2_000))
        });
        config.client_sequencer = Some(CLIENT_SEQUENCER.into());
        // The store protocol under faults, every node ID within every client's reach (the caps are
        // service/tests/lease_caps.rs's).
        config.max_leases_per_network = Some(usize::MAX);
        config.max_unauthenticated_leases = Some(usize::MAX);
        let store = Arc::new(MemoryStore::new().plant(defect));
        let incarnation = Some(create(&store, CLIENT_SEQUENCER, &layout, 0));
        let other = create(&store, OTHER_SEQUENCER, &layout, 0);
        let expiries = Expiries::default();
        let clock = || {
            Arc::new(SimClock {
                now: now.clone(),
                offset_ns: AtomicI64::new(0),
                frozen: Mutex::new(None),
            })
        };
        // Distinct fixed node IDs of eight; a third of the instances draw theirs from a lease source.
        let mut nodes: Vec<u64> = (0..8).collect();
        let instances = (0..INSTANCES)
            .map(|i| {
                let node = nodes.swap_remove(rng.below(nodes.len() as u64) as usize);
                let link_seed = rng.next() ^ i as u64;
                Instance {
                    fixed: (!rng.chance(33)).then_some(node),
                    node,
                    clock: clock(),
                    link: Arc::new(Link {
                        expiries: expiries.clone(),
                        bound,
                        ..Link::new(store.clone(), &now, link_seed, None, StoreDefect::None)
                    }),
                    service: None,
                    last: None,
                    next_round_ns: 0,
                    mint_after_ns: 0,
                    heal_at_ns: 0,
                }
            })
            .collect();
        let clients = (0..CLIENTS)
            .map(|i| Client {
                clock: clock(),
                key: ClientKey::Addr(std::net::Ipv4Addr::new(10, 0, 0, i as u8 + 1).into()),
                lease: None,
            })
            .collect();
        ServiceWorld {
            rng,
            bound,
            lost: Vec::new(),
            defect,
            trace,
            now,
            layout,
            config,
            store,
            incarnation,
            other,
            instances,
            clients,
            seen: HashMap::new(),
            mistake_started: None,
            minted: 0,
            step: 0,
        }
    }

    fn log(&self, what: impl FnOnce() -> String) {
        trace_line(self.trace, self.step, &self.now, what);
    }

    /// One more ID of `who`: never minted before, after `who`'s last.
    fn check(
        seen: &mut HashMap<u64, String>,
        last: &mut Option<u64>,
        id: u64,
        who: &str,
    ) -> std::result::Result<(), String> {
        if let Some(l) = last.filter(|&l| id <= l) {
            return Err(format!("{who}: ID {id} does not follow {l}"));
        }
        *last = Some(id);
        if let Some(before) = seen.insert(id, who.to_string()) {
            return Err(format!("{who}: ID {id} was minted before, by {before}"));
        }
        Ok(())
    }

    /// Instance `i` starts: `--node N --leases URL` (its node ID claimed on the client sequencer), or
    /// `--node URL?sequencer=sim-clients` (a lease source, any free node ID of the client sequencer,
    /// `--client-sequencer` the same or not given). Now and then the operator's mistake instead: a lease
    /// source on another sequencer with `--client-sequencer sim-clients`, which must be refused
    /// (`INVALID_ARGUMENT`): two sequencers hand out one node-ID space.
    fn start(&mut self, i: usize) -> std::result::Result<(), String> {
        let inst = &self.instances[i];
        let mistake = self.rng.chance(15);
        let lease_source = |sequencer: &str| format!("{STORE_URL}?sequencer={sequencer}");
        let config = match inst.fixed {
            _ if mistake => Config {
                node: lease_source(OTHER_SEQUENCER),
                ..self.config.clone()
            },
            Some(node) => Config {
                node: node.to_string(),
                leases: Some(STORE_URL.into()),
                ..self.config.clone()
            },
            None => Config {
                node: lease_source(CLIENT_SEQUENCER),
                client_sequencer: self.rng.chance(50).then(|| CLIENT_SEQUENCER.to_string()),
                ..self.config.clone()
            },
        };
        // The stores the configuration names, opened through the service's own code path: this
        // instance's link (connecting fails while it is cut off).
        let link = inst.link.clone();
        let open: Arc<snowmint_coord::source::StoreOpener> = Arc::new(move |_url| {
            if link.faults.cut.load(Ordering::SeqCst) {
                return Err(Error::unavailable("simulated: cannot connect to the store"));
            }
            Ok(link.clone() as Arc<dyn Store>)
        });
        let what = format!(
            "--node {} --client-sequencer {:?}",
            config.node, config.client_sequencer
        );
        let r =
            Service::open_simulated(config, inst.clock.clone(), open, Hook::planted(self.defect));
        match r {
            Ok(s) => {
                let node = s.node_id();
                let s_unclaimed = s.generator().lease().is_none();
                let now = self.now.load(Ordering::SeqCst);
                let inst = &mut self.instances[i];
                inst.service = Some(s);
                inst.node = node;
                inst.last = None;
                inst.next_round_ns = now + 1_000 * MS;
                let unclaimed = s_unclaimed;
                inst.mint_after_ns = match unclaimed {
                    true => now + snowmint_service::FIXED_NODE_MAX_AHEAD.as_nanos() as u64,
                    false => 0,
                };
                if mistake {
                    self.mistake_started.get_or_insert(format!(
                        "instance {i} started with {what} (node {node}): a lease source on another \
                         sequencer than the client sequencer must be refused"
                    ));
                }
                self.log(|| {
                    format!(
                        "instance {i} starts on node {node} ({what}; claimed: {})",
                        !unclaimed
                    )
                });
            }
            Err(e) => match e.code() {
                ErrorCode::NodeIdsExhausted
                | ErrorCode::StoreUnavailable
                | ErrorCode::LeaseLost
                | ErrorCode::SequencerNotFound
                | ErrorCode::SequencerDestroyed => {
                    self.log(|| format!("instance {i} cannot start ({what}): {}", e.code()))
                }
                ErrorCode::InvalidArgument if mistake => {
                    self.log(|| format!("instance {i} refuses to start ({what}): {e}"))
                }
                _ => {
                    return Err(format!(
                        "instance {i}: starting ({what}), unexpected error {e}"
                    ))
                }
            },
        }
        Ok(())
    }

    /// Instance `i` answers `POST /v1/ids?count=k`.
    fn mint_instance(&mut self, i: usize, k: u64) -> std::result::Result<(), String> {
        let inst = &self.instances[i];
        let now = self.now.load(Ordering::SeqCst);
        let Some(s) = inst.service.as_ref().filter(|_| now >= inst.mint_after_ns) else {
            return Ok(());
        };
        let r = s.handle("POST", &format!("/v1/ids?count={k}"), b"");
        if !expected(&r, 200, &format!("instance {i}: POST /v1/ids"))? {
            return Ok(());
        }
        let v = body(&r);
        let ids = v["ids"].as_array().cloned().unwrap_or_default();
        let who = format!("instance {i} (node {})", self.instances[i].node);
        for id in &ids {
            let id: u64 = id
                .as_str()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| format!("{who}: not an ID: {id}"))?;
            Self::check(&mut self.seen, &mut self.instances[i].last, id, &who)?;
        }
        self.minted += ids.len() as u64;
        Ok(())
    }

    /// An instance that runs, picked from `c`'s draw (any instance renews or releases any token).
    fn some_instance(&mut self) -> Option<usize> {
        let i = self.rng.below(INSTANCES as u64) as usize;
        self.instances[i].service.is_some().then_some(i)
    }

    /// Client `c` takes a lease, renews it, or mints `k` IDs under it.
    fn client(&mut self, c: usize, k: u64) -> std::result::Result<(), String> {
        let Some(i) = self.some_instance() else {
            return Ok(());
        };
        let now = self.now.load(Ordering::SeqCst);
        let s = self.instances[i]
            .service
            .as_ref()
            .expect("a running instance");
        match &self.clients[c].lease {
            None => {
                let r = s.handle_as(&self.clients[c].key, "POST", "/v1/leases", b"");
                if !expected(&r, 201, &format!("client {c}: POST /v1/leases"))? {
                    return Ok(());
                }
                let v = body(&r);
                let lease = ClientLease {
                    token: v["token"].as_str().unwrap_or("").to_string(),
                    node: field_u64(&v, "node_id")?,
                    limit: field_u64(&v, "limit")?,
                    next: field_u64(&v, "start")?,
                    next_renew_ns: now + field_u64(&v, "renew_after_ms")? * MS,
                };
                // Above everything a client of a lost history may still mint offline.
                if let Some((_, limit)) = self
                    .lost
                    .iter()
                    .find(|&&(node, limit)| node == lease.node && lease.next < limit)
                {
                    return Err(format!(
                        "client {c}: a lease of node {} taken after the store's history was lost starts at {}, below the limit {limit} of a lease of the lost history",
                        lease.node, lease.next
                    ));
                }
                self.log(|| {
                    format!(
                        "client {c} leases node {} from instance {i}: [{}, {})",
                        lease.node, lease.next, lease.limit
                    )
                });
                self.clients[c].lease = Some(lease);
            }
            Some(l) if now >= l.next_renew_ns => {
                let r = s.handle("POST", &format!("/v1/leases/{}/renew", l.token), b"");
                let renewed = expected(&r, 200, &format!("client {c}: renew"))?;
                let v = body(&r);
                let lost = v["error"]["code"] == "LEASE_LOST";
                let lease = self.clients[c].lease.as_mut().expect("a lease");
                if renewed {
                    lease.limit = field_u64(&v, "limit")?;
                    lease.next_renew_ns = now + field_u64(&v, "renew_after_ms")? * MS;
                } else if lost {
                    // What it minted stays covered; it takes a new lease.
                    self.clients[c].lease = None;
                }
                self.log(|| format!("client {c} renews through instance {i}: {}", r.status));
            }
            Some(_) => self.mint_client(c, k)?,
        }
        Ok(())
    }

    /// Client `c` mints up to `k` IDs: positions after its last, at or past its clock's tick, below the
    /// lease's limit.
    fn mint_client(&mut self, c: usize, k: u64) -> std::result::Result<(), String> {
        let layout = self.layout;
        let sb = layout.sequence_bits();
        let cl = &mut self.clients[c];
        let Some(l) = cl.lease.as_mut() else {
            return Ok(());
        };
        let tick = layout.tick_at_ns(cl.clock.unix_ns()).unwrap_or(0);
        let mut p = l.next.max(tick << sb);
        let who = format!("client {c} (node {})", l.node);
        let mut last = None;
        let mut n = 0;
        while n < k && p < l.limit {
            let id = layout
                .compose(p >> sb, l.node, p & ((1 << sb) - 1))
                .map_err(|e| format!("{who}: {e}"))?;
            Self::check(&mut self.seen, &mut last, id, &who)?;
            p += 1;
            n += 1;
        }
        l.next = p;
        self.minted += n;
        Ok(())
    }

    fn step(&mut self) -> std::result::Result<(), String> {
        self.step += 1;
        let small = self.rng.below(3 * MS);
        self.advance(small);
        let now = self.now.load(Ordering::SeqCst);
        // The instances' keepers (a round a second: a third of the own lease's TTL at most); faults
        // on their links end within two client lease TTLs.
        for inst in &mut self.instances {
            if inst.heal_at_ns != 0 && now >= inst.heal_at_ns {
                inst.heal_at_ns = 0;
                inst.link.heal();
            }
            if let Some(s) = inst.service.as_ref().filter(|_| now >= inst.next_round_ns) {
                // Under the bound, a third of it: the reservation reaches no further ahead than it.
                inst.next_round_ns =
                    now + self.bound.map_or(1_000 * MS, |b| b.as_nanos() as u64 / 3);
                s.keeper_round();
            }
            // An instance whose own lease ended (lost, its sequencer destroyed) is restarted (what
            // its supervisor's claim again does, or an operator).
            if inst.service.as_ref().is_some_and(|s| {
                s.generator()
                    .state()
                    .is_some_and(|st| st != LeaseState::Held)
            }) {
                inst.service = None;
            }
        }
        let i = self.rng.below(INSTANCES as u64) as usize;
        let c = self.rng.below(CLIENTS as u64) as usize;
        let k = 1 + self.rng.below(12);
        match self.rng.below(100) {
            0..=29 => match self.instances[i].service {
                None => self.start(i)?,
                Some(_) => self.mint_instance(i, k)?,
            },
            30..=69 => self.client(c, k)?,
            70..=74 => {
                let d = self.rng.below(2_500) * MS;
                self.log(|| format!("{} ms pass", d / MS));
                self.advance(d);
            }
            // The embedded store's processes share their host's clock (a clock stepped back then repeats
            // IDs whatever the product does, SPEC §8): its history is lost instead.
            75 if self.bound.is_some() => self.lose_history()?,
            76 if self.bound.is_some() => {}
            75..=76 => {
                let by = self.rng.below(2_000) as i64 - 1_000;
                let clock = match self.rng.chance(50) {
                    true => &self.instances[i].clock,
                    false => &self.clients[c].clock,
                };
                clock.offset_ns.fetch_add(by * MS as i64, Ordering::SeqCst);
                self.log(|| format!("a clock steps {by} ms"));
            }
            77..=82 if self.instances[i].heal_at_ns == 0 => {
                self.instances[i].heal_at_ns = now + self.rng.below(6_000) * MS;
                self.link_fault(i);
            }
            // An instance crashes: the store hears nothing (its claim stays until its TTL).
            83..=84 => {
                let inst = &mut self.instances[i];
                if let Some(s) = inst.service.take() {
                    inst.link.faults.cut.store(true, Ordering::SeqCst);
                    drop(s);
                    inst.link.heal();
                    self.log(|| format!("instance {i} crashes"));
                }
            }
            // The operator destroys the client sequencer now and then, and creates it again soon.
            89..=90 => match self.incarnation {
                Some(inc) if self.rng.chance(10) => {
                    let done = self.store.destroy_sequencer(CLIENT_SEQUENCER, inc);
                    self.incarnation = None;
                    self.log(|| format!("the client sequencer is destroyed: {done:?}"));
                }
                None => {
                    let inc = create(&self.store, CLIENT_SEQUENCER, &self.layout, self.step);
                    self.incarnation = Some(inc);
                    self.log(|| "the client sequencer is created again".to_string());
                }
                Some(_) => {}
            },
            // An instance shuts down (its claim released).
            85 => {
                if let Some(s) = self.instances[i].service.take() {
                    let r = s.release();
                    self.log(|| {
                        format!("instance {i} shuts down: {:?}", r.err().map(|e| e.code()))
                    });
                }
            }
            // A client releases its lease (through any instance), or crashes (forgets it).
            86..=88 => {
                if let Some(l) = self.clients[c].lease.take() {
                    if let (true, Some(j)) = (self.rng.chance(50), self.some_instance()) {
                        let s = self.instances[j].service.as_ref().expect("running");
                        let r = s.handle("DELETE", &format!("/v1/leases/{}", l.token), b"");
                        expected(&r, 204, &format!("client {c}: release"))?;
                        self.log(|| format!("client {c} releases node {}: {}", l.node, r.status));
                    } else {
                        self.log(|| format!("client {c} crashes"));
                    }
                }
            }
            _ => {}
        }
        let violation = self
            .instances
            .iter()
            .find_map(|inst| inst.link.violation.lock().unwrap().take());
        violation.map_or(Ok(()), Err)?;
        self.check_sequencers()
    }

    /// Only the operator creates sequencers: `default` is the only name created implicitly (here no
    /// instance names it), any other missing one is `SEQUENCER_NOT_FOUND`.
    fn check_sequencers(&self) -> std::result::Result<(), String> {
        let live = self.store.sequencers().expect("the operator's store");
        let mut live: Vec<(&str, u64)> = live
            .iter()
            .map(|r| (r.name.as_str(), r.incarnation))
            .collect();
        live.sort_unstable();
        let mut created: Vec<(&str, u64)> = self
            .incarnation
            .map(|i| (CLIENT_SEQUENCER, i))
            .into_iter()
            .chain([(OTHER_SEQUENCER, self.other)])
            .collect();
        created.sort_unstable();
        if live != created {
            return Err(format!(
                "the store holds the sequencers {live:?}, the operator created {created:?}"
            ));
        }
        Ok(())
    }

    /// The store's history is lost (the embedded store's directory deleted and made again, the
    /// service restarted on it): every instance stops (its lease, and its token key, with the old
    /// history), the operator creates the sequencers again in the new store, and the clients keep
    /// their leases, minting offline up to their limits until a renewal is refused (another token
    /// key). Their limits are noted ([`ServiceWorld::lost`]); the restart takes a millisecond.
    fn lose_history(&mut self) -> std::result::Result<(), String> {
        for inst in &mut self.instances {
            if let Some(s) = inst.service.take() {
                inst.link.faults.cut.store(true, Ordering::SeqCst);
                drop(s);
            }
        }
        self.lost.extend(
            self.clients
                .iter()
                .filter_map(|c| c.lease.as_ref().map(|l| (l.node, l.limit))),
        );
        let store = Arc::new(MemoryStore::new().plant(self.defect));
        self.incarnation = Some(create(&store, CLIENT_SEQUENCER, &self.layout, self.step));
        self.other = create(&store, OTHER_SEQUENCER, &self.layout, self.step);
        let expiries = Expiries::default();
        for inst in &mut self.instances {
            let link_seed = self.rng.next();
            inst.link = Arc::new(Link {
                expiries: expiries.clone(),
                bound: self.bound,
                ..Link::new(store.clone(), &self.now, link_seed, None, StoreDefect::None)
            });
            inst.heal_at_ns = 0;
        }
        self.store = store;
        self.advance(MS);
        self.log(|| {
            "the store's history is lost (its directory deleted and made again): the service restarts"
                .to_string()
        });
        Ok(())
    }

    /// A fault on instance `i`'s link to the store: cut off, or requests failing or answered late.
    fn link_fault(&mut self, i: usize) {
        match self.rng.chance(40) {
            true => {
                let link = &self.instances[i].link;
                link.faults.cut.store(true, Ordering::SeqCst);
                self.log(|| format!("instance {i} is cut off from the store"));
            }
            false => {
                let p = [10, 30][self.rng.below(2) as usize];
                let link = self.instances[i].link.clone();
                link.faults.flaky.store(p, Ordering::SeqCst);
                link.faults.late.store(p, Ordering::SeqCst);
                self.log(|| format!("instance {i}'s requests fail or are answered late {p}%"));
            }
        }
    }

    fn advance(&self, ns: u64) {
        self.now.fetch_add(ns, Ordering::SeqCst);
    }
}

/// One seed of the service world: IDs minted by instances and clients.
pub(crate) fn run_service(
    seed: u64,
    steps: u64,
    defect: Defect,
    trace: bool,
) -> std::result::Result<u64, String> {
    let mut w = ServiceWorld::new(seed, defect, trace);
    for _ in 0..steps {
        w.step()?;
    }
    w.mistake_started.map_or(Ok(w.minted), Err)
}
