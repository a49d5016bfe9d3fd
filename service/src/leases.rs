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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use snowmint::{ErrorCode, Layout, Options};
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

    /// The token's text, tagged with `key`.
    pub fn encode(&self, key: &TokenKey) -> String {
        format!(
            "2.{}.{}.{}.{}.{}",
            self.node_id,
            self.fencing_token,
            self.start,
            key.tag(&self.signed_part()),
            self.sequencer
        )
    }

    /// Parses a token and checks its tag under `key`; `None` if it is not one of `key`'s tokens.
    pub fn parse(text: &str, key: &TokenKey) -> Option<LeaseToken> {
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
        key.verify(&token.signed_part(), tag).then_some(token)
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

/// The leases counted per client: `(node ID, fencing token, claim expiry in Unix ms)`.
type Held = HashMap<ClientKey, Vec<(u64, u64, u64)>>;

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
    reservation: Duration,
    /// Tags the lease tokens.
    key: TokenKey,
    /// `--max-leases-per-client`.
    cap: usize,
    /// The leases this instance handed out, by client: `(node ID, fencing token, claim expiry)`; a
    /// claim past its expiry no longer counts. Renewals and releases through any instance's token
    /// move them; another instance's leases are not counted here.
    held: Mutex<Held>,
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
            reservation: config.lease_reservation,
            cap: config.max_leases_per_client,
            held: Mutex::new(HashMap::new()),
        })
    }

    /// The next store handle of the pool.
    fn store(&self) -> Arc<dyn Store> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pool = self.pool.read().unwrap_or_else(|p| p.into_inner());
        pool[i % pool.len()].clone()
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
    /// `reservation` of ticks past `from` (a holder ahead of the clock).
    fn target(&self, from: u64) -> Result<u64, ApiError> {
        let ahead_ns = self.reservation.as_nanos() as u64;
        let tick = self
            .layout
            .tick_at_ns(self.time.unix_ns().saturating_add(ahead_ns))
            .map_err(|e| ApiError::new(500, e.code(), e.to_string()))?;
        let mask = (1u64 << self.seq_bits()) - 1;
        let by_clock = (tick << self.seq_bits()) | mask;
        let span = ahead_ns / self.layout.tick_ns();
        let by_start = ((from >> self.seq_bits()).saturating_add(span) << self.seq_bits()) | mask;
        let last = by_clock.max(by_start).min(self.max_position());
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

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a lease for `client` (a placeholder until its claim is known), or `429` at the cap.
    fn count_in(&self, client: &ClientKey) -> Result<(), ApiError> {
        let now = self.now_ms();
        let mut held = self.held();
        held.retain(|_, v| {
            v.retain(|&(_, _, expires)| expires > now);
            !v.is_empty()
        });
        let mine = held.entry(client.clone()).or_default();
        if mine.len() >= self.cap {
            let mut e = ApiError::new(
                429,
                ErrorCode::NodeIdsExhausted,
                format!(
                    "this client holds {} leases, the most one client may hold (--max-leases-per-client): release or let one expire",
                    mine.len()
                ),
            );
            e.retry_after_ms = Some(self.ttl.as_millis() as u64);
            return Err(e);
        }
        // The placeholder (node ID u64::MAX) lives as long as a claim would.
        mine.push((u64::MAX, 0, now.saturating_add(self.ttl.as_millis() as u64)));
        Ok(())
    }

    /// Replaces `client`'s placeholder with the claim it became (`None`: the take failed).
    fn count_out(&self, client: &ClientKey, claim: Option<&Claim>) {
        let mut held = self.held();
        if let Some(mine) = held.get_mut(client) {
            if let Some(i) = mine.iter().position(|h| h.0 == u64::MAX) {
                match claim {
                    Some(c) => mine[i] = (c.node_id, c.token, c.expires_unix_ms),
                    None => {
                        mine.swap_remove(i);
                    }
                }
            }
        }
    }

    /// Moves the counted lease `(node, fencing)` to its new expiry (`None`: released).
    fn recount(&self, node_id: u64, fencing: u64, expires: Option<u64>) {
        for mine in self.held().values_mut() {
            if let Some(i) = mine.iter().position(|h| h.0 == node_id && h.1 == fencing) {
                match expires {
                    Some(e) => mine[i].2 = e,
                    None => {
                        mine.swap_remove(i);
                    }
                }
                return;
            }
        }
    }

    /// `POST /v1/leases` for `client`, refused (`429`) when it holds `--max-leases-per-client`.
    pub fn take(&self, client: &ClientKey, holder: Option<&str>) -> Result<Response, ApiError> {
        self.count_in(client)?;
        let taken = self.take_claim(holder);
        self.count_out(client, taken.as_ref().ok().map(|(c, _)| c));
        taken.map(|(_, r)| r)
    }

    fn take_claim(&self, holder: Option<&str>) -> Result<(Claim, Response), ApiError> {
        let holder = holder.unwrap_or("a client of snowmint serve");
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
        let answer = self.answer(201, &token, last, claim.expires_unix_ms);
        Ok((claim, answer))
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
        let start = stored.map_or(0, |r| self.start_after(&r)).max(floor);
        let last = self.target(start)?;
        self.store()
            .reserve(claim, &self.reservation_for(last))
            .map_err(unavailable)?;
        Ok((start, last))
    }

    fn token(&self, text: &str) -> Result<LeaseToken, ApiError> {
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
        let t = LeaseToken::parse(text, &self.key).ok_or_else(unknown)?;
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

    /// `POST /v1/leases/{token}/renew`
    pub fn renew(&self, text: &str) -> Result<Response, ApiError> {
        let t = self.token(text)?;
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
        self.recount(t.node_id, t.fencing_token, Some(claim.expires_unix_ms));
        Ok(self.answer(200, &t, last, claim.expires_unix_ms))
    }

    /// `DELETE /v1/leases/{token}`
    pub fn release(&self, text: &str) -> Result<Response, ApiError> {
        let t = self.token(text)?;
        self.store()
            .release(&self.claim_of(&t))
            .map_err(unavailable)?;
        self.recount(t.node_id, t.fencing_token, None);
        Ok(Response {
            status: 204,
            content_type: "",
            headers: Vec::new(),
            body: Vec::new(),
        })
    }

    fn answer(&self, status: u16, t: &LeaseToken, last: u64, expires: u64) -> Response {
        let mut out = Vec::with_capacity(512);
        out.extend_from_slice(b"{\"token\":");
        push_str(&mut out, &t.encode(&self.key));
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
        push_u64(
            &mut out,
            (self.ttl.min(self.reservation).as_millis() as u64 / 3).max(1),
        );
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
