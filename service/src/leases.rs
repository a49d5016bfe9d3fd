//! Node-ID leases for clients that mint locally (SPEC §6a, §3.2): claimed from a sequencer on the
//! store, each with a reservation written durably, conditioned on the claim, before the answer. Every
//! service instance's own node ID is a claim on the same sequencer (a lease source's any free node ID, a
//! fixed `--node N` exactly N), so the store never hands a client a node ID an instance mints with.
//!
//! The lease token names the claim (sequencer, node ID, fencing token) and the holder's start position,
//! and carries an HMAC-SHA256 tag of them under a secret kept in the store (row
//! `snowmint-service-secret.SEQUENCER`, created once by compare-and-set): the store is the only record,
//! so any instance on the store (a restarted one, another one) renews or releases with the token alone,
//! the store's check of the fencing token decides, and nobody can make up a token for another client's
//! lease (fencing tokens are sequential, so without the tag they could be guessed).

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use snowmint::{ErrorCode, Layout, Options};
use snowmint_coord::defect::Defect;
use snowmint_coord::{Claim, ClaimRequest, LeaseOptions, Reservation, Sequencer, Store, Time};

use crate::json::{push_dec, push_str, push_u64};
use crate::{ApiError, ClientKey, Config, Response};

/// A parsed lease token: `2.NODE.FENCING.START.TAG.SEQUENCER` (URL-safe: sequencer names are
/// `A-Z a-z 0-9 _ . -`; TAG is 32 hex digits, [`TokenKey::tag`] of the rest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseToken {
    /// The sequencer of the claim.
    pub sequencer: String,
    /// The node ID.
    pub node_id: u64,
    /// The claim's fencing token.
    pub fencing_token: u64,
    /// The first position the holder may mint.
    pub start: u64,
}

impl LeaseToken {
    /// The fields the tag covers, as text.
    fn signed_part(&self) -> String {
        format!(
            "{}.{}.{}.{}",
            self.node_id, self.fencing_token, self.start, self.sequencer
        )
    }

    /// What the tag covers: the fields, and the owner the lease belongs to (a bearer token's digest
    /// with `--auth-token-file`; empty without, which keeps the tag of a token made before owners).
    fn tagged(&self, owner: &str) -> String {
        if owner.is_empty() {
            self.signed_part()
        } else {
            format!("{}\nowner {owner}", self.signed_part())
        }
    }

    /// The token's text, tagged with `key` for `owner` (see [`LeaseToken::parse_for`]).
    pub fn encode_for(&self, key: &TokenKey, owner: &str) -> String {
        format!(
            "2.{}.{}.{}.{}.{}",
            self.node_id,
            self.fencing_token,
            self.start,
            key.tag(&self.tagged(owner)),
            self.sequencer
        )
    }

    /// The token's text, tagged with `key` (no owner).
    pub fn encode(&self, key: &TokenKey) -> String {
        self.encode_for(key, "")
    }

    /// Parses a token and checks its tag under `key`; `None` if it is not one of `key`'s tokens.
    pub fn parse(text: &str, key: &TokenKey) -> Option<LeaseToken> {
        LeaseToken::parse_for(text, key, "")
    }

    /// Parses a token and checks its tag under `key` for `owner`; `None` if it is not one of `key`'s
    /// tokens or belongs to another owner.
    pub fn parse_for(text: &str, key: &TokenKey, owner: &str) -> Option<LeaseToken> {
        if text.len() > 200 {
            return None;
        }
        let mut parts = text.splitn(6, '.');
        if parts.next()? != "2" {
            return None;
        }
        let num = |s: &str| {
            (!s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u64>().ok())
                .flatten()
        };
        let node_id = num(parts.next()?)?;
        let fencing_token = num(parts.next()?)?;
        let start = num(parts.next()?)?;
        let tag = parts.next()?;
        let sequencer = parts.next()?.to_string();
        snowmint_coord::sequencer::check_name(&sequencer).ok()?;
        let token = LeaseToken {
            sequencer,
            node_id,
            fencing_token,
            start,
        };
        key.verify(&token.tagged(owner), tag).then_some(token)
    }
}

/// The secret that tags lease tokens: 32 random bytes in a store row, shared by every instance of the
/// service on the store and kept across restarts.
#[derive(Clone)]
pub struct TokenKey([u8; 32]);

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(..)")
    }
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

impl TokenKey {
    /// A key from bytes (tests, the fuzz target).
    pub fn from_bytes(bytes: [u8; 32]) -> TokenKey {
        TokenKey(bytes)
    }

    /// The key of `sequencer`'s tokens on `store`: read from its row, or made and written by
    /// compare-and-set when there is none (two instances starting at once agree on the first write).
    pub fn load(store: &dyn Store, sequencer: &str) -> Result<TokenKey, snowmint_coord::Error> {
        let row = format!("snowmint-service-secret.{sequencer}");
        for _ in 0..3 {
            if let Some(text) = store.row(&row)? {
                return TokenKey::from_hex(&text).ok_or_else(|| {
                    snowmint_coord::Error::new(
                        ErrorCode::StoreUnavailable,
                        format!("{}: row {row} does not hold a token key", store.describe()),
                    )
                });
            }
            let mut fresh = [0u8; 32];
            for chunk in fresh.chunks_mut(8) {
                chunk.copy_from_slice(&snowmint_host::os_seed().to_le_bytes());
            }
            let hex: String = fresh.iter().map(|b| format!("{b:02x}")).collect();
            // A lost answer may have written it: the next round reads the row back either way.
            if let Ok(true) = store.swap_row(&row, None, &hex) {
                return Ok(TokenKey(fresh));
            }
        }
        Err(snowmint_coord::Error::new(
            ErrorCode::StoreUnavailable,
            format!("{}: cannot read or write row {row}", store.describe()),
        ))
    }

    fn from_hex(text: &str) -> Option<TokenKey> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks(2).enumerate() {
            out[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
        }
        Some(TokenKey(out))
    }

    fn mac(&self) -> HmacSha256 {
        use hmac::KeyInit;
        HmacSha256::new_from_slice(&self.0).expect("HMAC takes a key of any length")
    }

    /// The tag of `text`: the first 16 bytes of HMAC-SHA256, as 32 hex digits.
    pub fn tag(&self, text: &str) -> String {
        use hmac::Mac;
        let mut mac = self.mac();
        mac.update(text.as_bytes());
        mac.finalize().into_bytes()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Whether `tag` is `text`'s tag (compared in constant time).
    fn verify(&self, text: &str, tag: &str) -> bool {
        use hmac::Mac;
        let Some(bytes) = (tag.len() == 32)
            .then(|| {
                (0..16)
                    .map(|i| u8::from_str_radix(tag.get(2 * i..2 * i + 2)?, 16).ok())
                    .collect::<Option<Vec<u8>>>()
            })
            .flatten()
        else {
            return false;
        };
        let mut mac = self.mac();
        mac.update(text.as_bytes());
        mac.verify_truncated_left(&bytes).is_ok()
    }
}

/// Who took a client lease, as the store keeps it: the end of the claim's holder text,
/// ` [snowmint client a=ADDRESS]` (no token file) or ` [snowmint client t=ID]` (ID: a tag of the bearer
/// token's digest under the token key, so the store names no token). The lease caps are counted from
/// these, so every instance on the store, and a restarted one, counts the same leases.
const MARK: &str = " [snowmint client ";

#[derive(Clone, Debug, PartialEq, Eq)]
enum Who {
    Addr(IpAddr),
    Token(String),
}

/// The leases counted against one take: the client's own, its network's (no token file), and every
/// unauthenticated client's together.
#[derive(Debug, Default)]
struct Tally {
    mine: usize,
    network: usize,
    unauthenticated: usize,
}

/// The client sequencer on its store.
#[derive(Debug)]
pub struct Leases {
    /// Store handles used in turn (each its own connection), so that a slow call holds up only the
    /// requests behind it on one handle, and those only until their deadline.
    pool: std::sync::RwLock<Vec<Arc<dyn Store>>>,
    next: std::sync::atomic::AtomicUsize,
    time: Arc<dyn Time>,
    sequencer: String,
    /// The client sequencer's record (incarnation, value floor) as opened.
    record: snowmint_coord::SequencerRecord,
    nodes: u64,
    layout: Layout,
    layout_name: String,
    fingerprint: u64,
    ttl: Duration,
    /// How far past the clock a client lease's reservation reaches: `--lease-reservation`, clipped to
    /// the store's bound ([`Store::max_ahead`], the embedded store's `?max_ahead=`).
    reservation: Duration,
    /// The store's bound on what any holder mints ahead of the clock (ns; `None`: etcd, PostgreSQL).
    bound_ns: Option<u64>,
    /// Tags the lease tokens.
    key: TokenKey,
    /// `--max-leases-per-client`.
    cap: usize,
    /// `--max-leases-per-network` (IPv4 /24, IPv6 /64; no token file).
    network_cap: usize,
    /// `--max-unauthenticated-leases`: what every client without a token may hold together.
    unauthenticated_cap: usize,
    /// The takes of this instance in flight (their claims are not in the store yet), by client.
    pending: Mutex<Vec<ClientKey>>,
    /// A planted defect (the simulation's; never on without the feature `planted-defects`).
    defect: snowmint_coord::defect::Hook,
}

#[derive(Debug)]
pub struct Gauges {
    /// Live claims on the client sequencer, the service's own excluded.
    pub active: u64,
    /// Live claims per sequencer.
    pub holders: Vec<(String, u64)>,
    pub error: Option<String>,
}

fn unavailable(e: snowmint_coord::Error) -> ApiError {
    ApiError::from_coord(e)
}

impl Leases {
    /// The client sequencer on the store handles `pool` (at least one).
    pub fn open(
        pool: Vec<Arc<dyn Store>>,
        time: Arc<dyn Time>,
        sequencer: &str,
        config: &Config,
        lease_options: LeaseOptions,
    ) -> Result<Leases, snowmint_coord::Error> {
        let store = pool[0].clone();
        let bound = store.max_ahead();
        let defect = lease_options.defect;
        let seq = client_sequencer(&store, &time, sequencer, config, lease_options)?;
        Ok(Leases {
            record: seq.record().clone(),
            nodes: seq.record().config.nodes,
            key: TokenKey::load(store.as_ref(), sequencer)?,
            pool: std::sync::RwLock::new(pool),
            next: std::sync::atomic::AtomicUsize::new(0),
            time,
            sequencer: sequencer.to_string(),
            layout: config.layout,
            layout_name: config.layout_name.clone(),
            fingerprint: snowmint_coord::layout_fingerprint(&config.layout),
            ttl: config.lease_ttl,
            reservation: bound.map_or(config.lease_reservation, |b| {
                config.lease_reservation.min(b)
            }),
            bound_ns: bound.map(|b| b.as_nanos().min(u64::MAX as u128) as u64),
            cap: config.max_leases_per_client,
            network_cap: config
                .max_leases_per_network
                .unwrap_or(config.max_leases_per_client.saturating_mul(2)),
            unauthenticated_cap: config
                .max_unauthenticated_leases
                .unwrap_or_else(|| default_unauthenticated_share(seq.record().config.nodes)),
            pending: Mutex::new(Vec::new()),
            defect,
        })
    }

    /// The next store handle of the pool.
    fn store(&self) -> Arc<dyn Store> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pool = self.pool.read().unwrap_or_else(|p| p.into_inner());
        pool[i % pool.len()].clone()
    }

    /// How far past the clock a client lease's reservation reaches (`--lease-reservation`, clipped to
    /// the store's bound).
    pub fn reservation(&self) -> Duration {
        self.reservation
    }

    /// The client sequencer's name.
    pub fn sequencer(&self) -> &str {
        &self.sequencer
    }

    /// Adds a store handle to the pool.
    pub fn add_handle(&self, store: Arc<dyn Store>) {
        self.pool
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(store);
    }

    fn now_ms(&self) -> u64 {
        self.time.unix_ns() / 1_000_000
    }

    fn seq_bits(&self) -> u32 {
        self.layout.sequence_bits()
    }

    fn max_position(&self) -> u64 {
        (self.layout.max_tick() << self.seq_bits()) | ((1u64 << self.seq_bits()) - 1)
    }

    fn start_after(&self, r: &Reservation) -> u64 {
        snowmint_coord::lease::start_after(&self.layout, self.fingerprint, r)
    }

    /// The last position to reserve: the end of the tick `reservation` past the clock, and at least
    /// `reservation` of ticks past `from` (a holder ahead of the clock); on a store with a bound
    /// ([`Store::max_ahead`]), never past the end of the tick `bound` past the clock (a holder that
    /// finds no history for the node ID starts above that). A lease that starts there (every new one
    /// on such a store, [`Leases::reserve_new`]) waits until the clock lets the bound reach its
    /// start: a tick at most, as the coord lease does (three tries, then `503`).
    fn target(&self, from: u64) -> Result<u64, ApiError> {
        let mut tries = 0;
        loop {
            match self.target_now(from) {
                Err(e) if e.status == 503 && e.code == ErrorCode::StoreUnavailable && tries < 3 => {
                    tries += 1;
                    self.time.sleep(Duration::from_nanos(
                        snowmint_coord::lease::bound_reaches_in_ns(
                            &self.layout,
                            self.bound_ns.unwrap_or(0),
                            from,
                            self.time.unix_ns(),
                        ),
                    ));
                }
                other => return other,
            }
        }
    }

    /// [`Leases::target`] at this instant: `503` if the bound does not reach `from` yet.
    fn target_now(&self, from: u64) -> Result<u64, ApiError> {
        let ahead_ns = self.reservation.as_nanos() as u64;
        let now_ns = self.time.unix_ns();
        let end_of_tick_at = |ns: u64| -> Result<u64, ApiError> {
            let tick = self
                .layout
                .tick_at_ns(ns)
                .map_err(|e| ApiError::new(500, e.code(), e.to_string()))?;
            Ok((tick << self.seq_bits()) | ((1u64 << self.seq_bits()) - 1))
        };
        let mask = (1u64 << self.seq_bits()) - 1;
        let by_clock = end_of_tick_at(now_ns.saturating_add(ahead_ns))?;
        let span = ahead_ns / self.layout.tick_ns();
        let by_start = ((from >> self.seq_bits()).saturating_add(span) << self.seq_bits()) | mask;
        let mut last = by_clock.max(by_start).min(self.max_position());
        if let Some(b) = self.bound_ns {
            last = last.min(end_of_tick_at(now_ns.saturating_add(b))?);
            if last < from {
                return Err(ApiError::new(
                    503,
                    ErrorCode::StoreUnavailable,
                    "this node ID's reservation already reaches as far ahead of the clock as the store's max_ahead allows: retry shortly",
                ));
            }
        }
        if last < from {
            return Err(ApiError::new(
                503,
                ErrorCode::LayoutExhausted,
                "the layout's timestamp field has run out for this node ID",
            ));
        }
        Ok(last)
    }

    fn reservation_for(&self, position: u64) -> Reservation {
        snowmint_coord::lease::reservation_for(&self.layout, self.fingerprint, position)
    }

    fn claim(&self, holder: &str, start: u64) -> Result<Option<Claim>, ApiError> {
        self.store()
            .claim(&ClaimRequest {
                sequencer: &self.sequencer,
                incarnation: self.record.incarnation,
                nodes: self.nodes,
                start,
                ttl_ms: self.ttl.as_millis() as u64,
                holder,
                now_unix_ms: self.now_ms(),
            })
            .map_err(unavailable)
    }

    fn exhausted(&self) -> ApiError {
        ApiError::new(
            503,
            ErrorCode::NodeIdsExhausted,
            format!(
                "{}: all {} node IDs of sequencer {:?} are held",
                self.store().describe(),
                self.nodes,
                self.sequencer
            ),
        )
    }

    /// Who `client` is, as its leases' holder text records it.
    fn who(&self, client: &ClientKey) -> Who {
        match client {
            ClientKey::Addr(a) => Who::Addr(a.to_canonical()),
            ClientKey::Token(_) => Who::Token(self.key.tag(&format!("owner {}", owner(client)))),
        }
    }

    /// The holder text of a lease `client` takes: its own description, then who took it.
    fn holder_text(&self, holder: &str, client: &ClientKey) -> String {
        match self.who(client) {
            Who::Addr(a) => format!("{holder}{MARK}a={a}]"),
            Who::Token(t) => format!("{holder}{MARK}t={t}]"),
        }
    }

    /// Who took a lease, from its holder text (`None`: not a client lease, e.g. an instance's own).
    fn who_of(holder: &str) -> Option<Who> {
        let (_, mark) = holder.rsplit_once(MARK)?;
        let mark = mark.strip_suffix(']')?;
        if let Some(a) = mark.strip_prefix("a=") {
            return a.parse().ok().map(Who::Addr);
        }
        mark.strip_prefix("t=").map(|t| Who::Token(t.to_string()))
    }

    /// Adds one lease taken by `taker` to `tally`, as it counts against `me`.
    fn tally(tally: &mut Tally, me: &Who, taker: &Who) {
        if taker == me {
            tally.mine += 1;
        }
        if let Who::Addr(a) = taker {
            tally.unauthenticated += 1;
            if let Who::Addr(m) = me {
                if crate::source::network(*a) == crate::source::network(*m) {
                    tally.network += 1;
                }
            }
        }
    }

    fn too_many(&self, what: String) -> ApiError {
        let mut e = ApiError::new(429, ErrorCode::NodeIdsExhausted, what);
        e.retry_after_ms = Some(self.ttl.as_millis() as u64);
        e
    }

    /// Counts a take for `client` against the caps, from the live client leases the store holds and
    /// this instance's takes in flight: `429` at a cap, else the take is in flight until
    /// [`Leases::count_out`].
    fn count_in(&self, client: &ClientKey) -> Result<(), ApiError> {
        let me = self.who(client);
        let live = self
            .store()
            .holders(&self.sequencer, self.now_ms())
            .map_err(unavailable)?;
        let mut tally = Tally::default();
        for taker in live
            .iter()
            .filter_map(|n| n.claim.as_ref())
            .filter_map(|c| Leases::who_of(&c.holder))
        {
            Leases::tally(&mut tally, &me, &taker);
        }
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        for other in pending.iter() {
            Leases::tally(&mut tally, &me, &self.who(other));
        }
        if tally.mine >= self.cap {
            return Err(self.too_many(format!(
                "this client holds {} leases, the most one client may hold (--max-leases-per-client): release or let one expire",
                tally.mine
            )));
        }
        if let Who::Addr(a) = me {
            if tally.network >= self.network_cap {
                return Err(self.too_many(format!(
                    "clients of network {} hold {} leases, the most one network may hold (--max-leases-per-network): release or let one expire",
                    crate::source::network(a),
                    tally.network
                )));
            }
            if tally.unauthenticated >= self.unauthenticated_cap {
                return Err(self.too_many(format!(
                    "clients without a token hold {} of the {} node IDs, the most they may hold together (--max-unauthenticated-leases)",
                    tally.unauthenticated, self.nodes
                )));
            }
        }
        pending.push(client.clone());
        Ok(())
    }

    /// Ends `client`'s take in flight (its claim, if any, is in the store now).
    fn count_out(&self, client: &ClientKey) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = pending.iter().position(|c| c == client) {
            pending.swap_remove(i);
        }
    }

    /// `POST /v1/leases` for `client`, refused (`429`) at a cap: `--max-leases-per-client` for it,
    /// `--max-leases-per-network` for its network and `--max-unauthenticated-leases` for every client
    /// without a token.
    pub fn take(&self, client: &ClientKey, holder: Option<&str>) -> Result<Response, ApiError> {
        self.count_in(client)?;
        let holder = self.holder_text(holder.unwrap_or("a client of snowmint serve"), client);
        let taken = self.take_claim(&holder, &owner(client));
        self.count_out(client);
        taken
    }

    fn take_claim(&self, holder: &str, owner: &str) -> Result<Response, ApiError> {
        let first = snowmint::mix64(self.time.unix_ns() ^ self.time.monotonic_ns()) % self.nodes;
        // Every instance's own node ID is a claim on this sequencer too: the store never hands it out.
        let claim = self.claim(holder, first)?.ok_or_else(|| self.exhausted())?;
        let answer = self.reserve_new(&claim);
        if answer.is_err() {
            let _ = self.store().release(&claim);
        }
        let (start, last) = answer?;
        let token = LeaseToken {
            sequencer: self.sequencer.clone(),
            node_id: claim.node_id,
            fencing_token: claim.token,
            start,
        };
        Ok(self.answer(201, &token, owner, last, claim.expires_unix_ms))
    }

    /// Reads the stored reservation and writes the new one (conditioned on `claim`): `(start, last)`.
    fn reserve_new(&self, claim: &Claim) -> Result<(u64, u64), ApiError> {
        let stored = self
            .store()
            .reservation(&self.sequencer, claim.node_id)
            .map_err(unavailable)?;
        // After the node ID's reservation, and at or above the floor of destroyed incarnations.
        let floor = snowmint_coord::sequencer::floor_start(
            &self.record,
            &self.layout,
            self.time.unix_ns(),
            Options::default().max_ahead_ns,
        )
        .map_err(unavailable)?;
        // And, on a store whose history can be lost (the embedded one), above `now + max_ahead`:
        // past anything a client of a lost history minted offline (SPEC §3.2). The lease's first IDs
        // are then up to the bound ahead of the clock; `target` waits the tick that lets the bound
        // reach them.
        let unknown = snowmint_coord::lease::unknown_history_start(
            &self.layout,
            self.bound_ns,
            self.time.unix_ns(),
        );
        let unknown = if self.defect.is(Defect::ClientLeaseIgnoresUnknownHistory) {
            0 // the defect: the stored reservation and the clock alone, as before the fix
        } else {
            unknown
        };
        let start = stored
            .map_or(0, |r| self.start_after(&r))
            .max(floor)
            .max(unknown);
        let last = self.target(start)?;
        self.store()
            .reserve(claim, &self.reservation_for(last))
            .map_err(unavailable)?;
        Ok((start, last))
    }

    /// The lease of token `text`, if it is one of this service's and belongs to `client` (with a token
    /// file, a lease belongs to the bearer that took it: another bearer's renew or release is answered
    /// as an unknown token).
    fn token(&self, text: &str, client: &ClientKey) -> Result<LeaseToken, ApiError> {
        let unknown = || {
            ApiError::new(
                404,
                ErrorCode::LeaseLost,
                format!(
                    "unknown lease token {:?}: take a new lease with POST /v1/leases",
                    crate::json::clip(text, 60)
                ),
            )
            .field("token")
        };
        let t = LeaseToken::parse_for(text, &self.key, &owner(client)).ok_or_else(unknown)?;
        if t.sequencer != self.sequencer || t.node_id >= self.nodes {
            return Err(unknown());
        }
        Ok(t)
    }

    fn claim_of(&self, t: &LeaseToken) -> Claim {
        Claim {
            sequencer: t.sequencer.clone(),
            node_id: t.node_id,
            token: t.fencing_token,
            expires_unix_ms: 0,
        }
    }

    fn lost(&self, e: ApiError) -> ApiError {
        if e.code == ErrorCode::LeaseLost {
            e.field("token")
        } else {
            e
        }
    }

    /// `POST /v1/leases/{token}/renew` by `client`.
    pub fn renew(&self, client: &ClientKey, text: &str) -> Result<Response, ApiError> {
        let t = self.token(text, client)?;
        let claim = self
            .store()
            .renew(
                &self.claim_of(&t),
                self.ttl.as_millis() as u64,
                self.now_ms(),
            )
            .map_err(|e| self.lost(unavailable(e)))?;
        let stored = self
            .store()
            .reservation(&self.sequencer, t.node_id)
            .map_err(unavailable)?;
        let current = stored
            .filter(|r| r.layout_fingerprint == self.fingerprint)
            .map(|r| r.position);
        let target = self.target(t.start)?;
        let last = match current {
            Some(c) if c >= target => c,
            _ => {
                self.store()
                    .reserve(&claim, &self.reservation_for(target))
                    .map_err(|e| self.lost(unavailable(e)))?;
                target
            }
        };
        Ok(self.answer(200, &t, &owner(client), last, claim.expires_unix_ms))
    }

    /// `DELETE /v1/leases/{token}` by `client`.
    pub fn release(&self, client: &ClientKey, text: &str) -> Result<Response, ApiError> {
        let t = self.token(text, client)?;
        self.store()
            .release(&self.claim_of(&t))
            .map_err(unavailable)?;
        Ok(Response {
            status: 204,
            content_type: "",
            headers: Vec::new(),
            body: Vec::new(),
        })
    }

    fn answer(
        &self,
        status: u16,
        t: &LeaseToken,
        owner: &str,
        last: u64,
        expires: u64,
    ) -> Response {
        let mut out = Vec::with_capacity(512);
        out.extend_from_slice(b"{\"token\":");
        push_str(&mut out, &t.encode_for(&self.key, owner));
        out.extend_from_slice(b",\"node_id\":");
        push_u64(&mut out, t.node_id);
        out.extend_from_slice(b",\"layout\":");
        push_str(&mut out, &self.layout_name);
        out.extend_from_slice(b",\"sequencer\":");
        push_str(&mut out, &self.sequencer);
        out.extend_from_slice(b",\"start\":");
        push_dec(&mut out, t.start);
        out.extend_from_slice(b",\"limit\":");
        push_dec(&mut out, last.saturating_add(1));
        out.extend_from_slice(b",\"limit_unix_ms\":");
        push_u64(&mut out, self.reservation_for(last).until_unix_ms);
        out.extend_from_slice(b",\"expires_unix_ms\":");
        push_u64(&mut out, expires);
        out.extend_from_slice(b",\"renew_after_ms\":");
        push_u64(&mut out, self.renew_after_ms(t.start, last));
        out.extend_from_slice(b",\"fencing_token\":");
        push_dec(&mut out, t.fencing_token);
        out.push(b'}');
        Response {
            status,
            content_type: crate::json::CONTENT_TYPE,
            headers: Vec::new(),
            body: out,
        }
    }

    /// When the client should renew: after a third of the TTL or the reservation, whichever is shorter;
    /// sooner while the lease's room is smaller than that. A new lease on a store with a bound starts
    /// up to the bound ahead of the clock, so at first its room is only what the clock has moved since
    /// the take (a tick): it renews after as long as its room lasts at the clock's rate, 100 ms at
    /// least, so the room doubles with each renewal until the normal interval.
    fn renew_after_ms(&self, start: u64, last: u64) -> u64 {
        let normal = (self.ttl.min(self.reservation).as_millis() as u64 / 3).max(1);
        if self.bound_ns.is_none() {
            return normal;
        }
        let sb = self.seq_bits();
        let now_tick = self.layout.tick_at_ns(self.time.unix_ns()).unwrap_or(0);
        let from = (start >> sb).max(now_tick);
        let room_ms = (last >> sb)
            .saturating_sub(from)
            .saturating_mul(self.layout.tick_ns())
            / 1_000_000;
        normal.min(room_ms.max(100))
    }

    /// Live claims, from the store (for `/metrics`).
    pub fn gauges(&self, own: Option<(&str, u64)>) -> Gauges {
        let now = self.now_ms();
        let mut g = Gauges {
            active: 0,
            holders: Vec::new(),
            error: None,
        };
        let mut names = vec![self.sequencer.clone()];
        if let Some((s, _)) = own {
            if s != self.sequencer {
                names.push(s.to_string());
            }
        }
        for name in names {
            match self.store().holders(&name, now) {
                Ok(nodes) => {
                    let live: Vec<u64> = nodes
                        .iter()
                        .filter(|n| n.claim.is_some())
                        .map(|n| n.node_id)
                        .collect();
                    if name == self.sequencer {
                        g.active = live
                            .iter()
                            .filter(|&&n| own != Some((name.as_str(), n)))
                            .count() as u64;
                    }
                    g.holders.push((name, live.len() as u64));
                }
                Err(e) => g.error = Some(e.to_string()),
            }
        }
        g
    }
}

/// The owner a lease of `client` is tagged for: a bearer token's digest (hex), or none (no token file:
/// whoever holds the lease token may renew and release it).
fn owner(client: &ClientKey) -> String {
    match client {
        ClientKey::Token(d) => d.iter().map(|b| format!("{b:02x}")).collect(),
        ClientKey::Addr(_) => String::new(),
    }
}

/// The default of `--max-unauthenticated-leases`: a quarter of the client sequencer's node IDs, at
/// least 1 (256 of the twitter layout's 1024; 8 of 32).
pub fn default_unauthenticated_share(nodes: u64) -> usize {
    usize::try_from(nodes / 4).unwrap_or(usize::MAX).max(1)
}

/// The client sequencer `sequencer` on `store`: the service's own default one is created if missing
/// (as `default` is for a lease source); a name given with `--client-sequencer` must exist
/// (`SEQUENCER_NOT_FOUND` otherwise), and its layout must be the service's. (`lease_options`: the
/// defaults, or the simulation's, with a planted defect.)
pub(crate) fn client_sequencer(
    store: &Arc<dyn Store>,
    time: &Arc<dyn Time>,
    sequencer: &str,
    config: &Config,
    lease_options: LeaseOptions,
) -> Result<Sequencer, snowmint_coord::Error> {
    let open = || {
        Sequencer::for_layout(
            store.clone(),
            sequencer,
            config.layout,
            Options::default(),
            time.clone(),
            lease_options.clone(),
        )
    };
    match open() {
        Err(e)
            if e.code() == ErrorCode::SequencerNotFound
                && sequencer == crate::DEFAULT_CLIENT_SEQUENCER =>
        {
            Sequencer::create_with(
                store.clone(),
                time.clone(),
                sequencer,
                config.layout,
                config.layout.node_count(),
                Options::default(),
                lease_options.clone(),
            )
        }
        other => other,
    }
    .map_err(|e| e.context(format!("client sequencer {sequencer:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_tagged_and_a_changed_field_is_refused() {
        let key = TokenKey::from_bytes([7; 32]);
        let t = LeaseToken {
            sequencer: "clients.eu-1".into(),
            node_id: 5,
            fencing_token: 42,
            start: 1 << 40,
        };
        let text = t.encode(&key);
        assert_eq!(LeaseToken::parse(&text, &key), Some(t.clone()));
        // Another key, another node ID, another fencing token: not a token.
        assert_eq!(
            LeaseToken::parse(&text, &TokenKey::from_bytes([8; 32])),
            None
        );
        for forged in [
            text.replacen("2.5.", "2.6.", 1),
            text.replacen(".42.", ".43.", 1),
            text.replace("clients.eu-1", "clients.eu-2"),
        ] {
            assert_ne!(forged, text);
            assert_eq!(LeaseToken::parse(&forged, &key), None, "{forged}");
        }
    }

    #[test]
    fn the_key_is_made_once_per_store_and_read_back() {
        let store = snowmint_coord::MemoryStore::new();
        let a = TokenKey::load(&store, "clients").unwrap();
        let b = TokenKey::load(&store, "clients").unwrap();
        assert_eq!(a.tag("x"), b.tag("x"));
        let other = TokenKey::load(&store, "others").unwrap();
        assert_ne!(a.tag("x"), other.tag("x"));
    }
}
