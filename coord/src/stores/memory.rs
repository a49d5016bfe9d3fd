//! An in-memory store (one process): tests and simulation. Claims expire by the callers' clock readings
//! (`now_unix_ms`), so an injected clock drives expiry; [`MemoryStore::set_available`] injects an outage.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::base::defect::{Defect, Hook};
use crate::base::error::{Error, Result};
use crate::base::store::{
    Claim, ClaimRequest, HeldBy, NodeState, Reservation, SequencerConfig, SequencerRecord, Store,
};
use crate::base::store_errors::lost;

#[derive(Debug, Default)]
struct State {
    sequencers: BTreeMap<String, SequencerRecord>,
    /// Per name: the last incarnation handed out (survives destroy).
    incarnations: BTreeMap<String, u64>,
    /// Per name: the value floor (raised by destroy, never lowered).
    floors: BTreeMap<String, u64>,
    claims: BTreeMap<(String, u64), HeldBy>,
    /// Per node ID: the last fencing token handed out (survives release and destroy).
    tokens: BTreeMap<(String, u64), u64>,
    reservations: BTreeMap<(String, u64), Reservation>,
    rows: BTreeMap<String, String>,
}

/// A store held in this process's memory.
#[derive(Debug)]
pub struct MemoryStore {
    state: Mutex<State>,
    available: AtomicBool,
    /// A defect planted on purpose (feature `planted-defects`, the simulation's own tests).
    defect: Hook,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore {
            state: Mutex::new(State::default()),
            available: AtomicBool::new(true),
            defect: Hook::NONE,
        }
    }

    /// This store with a defect planted (feature `planted-defects`, the simulation's own tests).
    #[cfg(feature = "planted-defects")]
    pub fn plant(self, defect: Defect) -> MemoryStore {
        MemoryStore {
            defect: Hook::planted(defect),
            ..self
        }
    }

    /// `false`: every request fails with `STORE_UNAVAILABLE` until set back (an injected outage).
    pub fn set_available(&self, available: bool) {
        self.available.store(available, Ordering::SeqCst);
    }

    /// The planted defect `RenewIgnoresExpiry`.
    fn renews_expired(&self) -> bool {
        self.defect.is(Defect::RenewIgnoresExpiry)
    }

    fn state(&self) -> Result<std::sync::MutexGuard<'_, State>> {
        if !self.available.load(Ordering::SeqCst) {
            return Err(Error::unavailable(
                "memory store: unavailable (injected outage)",
            ));
        }
        Ok(self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// [`Store::reserve`] (`lower`: [`Store::lower_reservation`]).
    fn write_reservation(
        &self,
        claim: &Claim,
        reservation: &Reservation,
        lower: bool,
    ) -> Result<()> {
        let mut s = self.state()?;
        let key = (claim.sequencer.clone(), claim.node_id);
        if self.defect.is(Defect::ReserveBeforeRecheck) {
            s.reservations.insert(key.clone(), *reservation); // the defect: written before the check
        }
        // Held means: the current claim is this one. Expiry alone does not end it here (as in etcd, a
        // claim ends when the store removes it; a new claim then replaces it).
        if s.claims.get(&key).is_some_and(|h| h.token == claim.token) {
            let kept = reservation.kept(s.reservations.get(&key), lower);
            let kept = if self.defect.is(Defect::ReservationLowered) {
                *reservation // the defect: the stored reservation is not consulted
            } else {
                kept
            };
            s.reservations.insert(key, kept);
            Ok(())
        } else {
            Err(lost(claim))
        }
    }
}

fn live(held: &HeldBy, now_unix_ms: u64) -> bool {
    held.expires_unix_ms > now_unix_ms
}

impl Store for MemoryStore {
    fn describe(&self) -> String {
        "memory store".into()
    }

    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now_unix_ms: u64,
    ) -> Result<SequencerRecord> {
        let mut s = self.state()?;
        if let Some(existing) = s.sequencers.get(name) {
            return if existing.config == *config {
                Ok(existing.clone())
            } else {
                Err(crate::base::store_errors::conflict(
                    name,
                    &existing.config,
                    config,
                ))
            };
        }
        let incarnation = s.incarnations.get(name).copied().unwrap_or(0) + 1;
        s.incarnations.insert(name.into(), incarnation);
        let record = SequencerRecord {
            name: name.into(),
            config: config.clone(),
            incarnation,
            created_unix_ms: now_unix_ms,
            floor: s.floors.get(name).copied().unwrap_or(0),
        };
        s.sequencers.insert(name.into(), record.clone());
        Ok(record)
    }

    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        Ok(self.state()?.sequencers.get(name).cloned())
    }

    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        Ok(self.state()?.sequencers.values().cloned().collect())
    }

    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        let mut s = self.state()?;
        let incarnation = if self.defect.is(Defect::DestroyWithoutCondition) {
            s.sequencers.get(name).map_or(0, |r| r.incarnation)
        } else {
            incarnation
        };
        let Some(record) = s
            .sequencers
            .get(name)
            .filter(|r| r.incarnation == incarnation)
        else {
            return Ok(false);
        };
        let floor = crate::base::store::floor_after(
            record,
            s.reservations
                .iter()
                .filter(|((n, _), _)| n == name)
                .map(|(_, r)| *r),
        )?;
        s.floors.insert(name.into(), floor);
        s.sequencers.remove(name);
        s.claims.retain(|(n, _), _| n != name);
        Ok(true)
    }

    fn claim(&self, r: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        let mut s = self.state()?;
        if s.sequencers.get(r.sequencer).map(|r| r.incarnation) != Some(r.incarnation) {
            return Err(crate::base::store_errors::not_live(
                "memory store",
                r.sequencer,
                r.incarnation,
            ));
        }
        for i in 0..r.nodes {
            let node_id = (r.start + i) % r.nodes;
            let key = (r.sequencer.to_string(), node_id);
            if s.claims.get(&key).is_some_and(|h| live(h, r.now_unix_ms)) {
                continue;
            }
            let token = s.tokens.get(&key).copied().unwrap_or(0) + 1;
            s.tokens.insert(key.clone(), token);
            let expires_unix_ms = r.now_unix_ms.saturating_add(r.ttl_ms);
            s.claims.insert(
                key,
                HeldBy {
                    holder: r.holder.into(),
                    token,
                    expires_unix_ms,
                },
            );
            return Ok(Some(Claim {
                sequencer: r.sequencer.into(),
                node_id,
                token,
                expires_unix_ms,
            }));
        }
        Ok(None)
    }

    fn renew(&self, claim: &Claim, ttl_ms: u64, now_unix_ms: u64) -> Result<Claim> {
        let mut s = self.state()?;
        match s.claims.get_mut(&(claim.sequencer.clone(), claim.node_id)) {
            Some(h)
                if h.token == claim.token && (live(h, now_unix_ms) || self.renews_expired()) =>
            {
                h.expires_unix_ms = now_unix_ms.saturating_add(ttl_ms);
                Ok(Claim {
                    expires_unix_ms: h.expires_unix_ms,
                    ..claim.clone()
                })
            }
            _ => Err(lost(claim)),
        }
    }

    fn release(&self, claim: &Claim) -> Result<()> {
        let mut s = self.state()?;
        let key = (claim.sequencer.clone(), claim.node_id);
        if s.claims.get(&key).is_some_and(|h| h.token == claim.token) {
            s.claims.remove(&key);
        }
        Ok(())
    }

    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        Ok(self
            .state()?
            .reservations
            .get(&(sequencer.to_string(), node_id))
            .copied())
    }

    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.write_reservation(claim, reservation, false)
    }

    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.write_reservation(claim, reservation, true)
    }

    fn holders(&self, sequencer: &str, now_unix_ms: u64) -> Result<Vec<NodeState>> {
        let s = self.state()?;
        let mut out: BTreeMap<u64, NodeState> = BTreeMap::new();
        let blank = |node_id| NodeState {
            node_id,
            claim: None,
            reservation: None,
        };
        for ((name, node), held) in &s.claims {
            if name == sequencer && live(held, now_unix_ms) {
                out.entry(*node).or_insert_with(|| blank(*node)).claim = Some(held.clone());
            }
        }
        for ((name, node), r) in &s.reservations {
            if name == sequencer {
                out.entry(*node).or_insert_with(|| blank(*node)).reservation = Some(*r);
            }
        }
        Ok(out.into_values().collect())
    }

    fn row(&self, key: &str) -> Result<Option<String>> {
        crate::base::name::check_row_key(key)?;
        Ok(self.state()?.rows.get(key).cloned())
    }

    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        crate::base::name::check_row_key(key)?;
        let mut s = self.state()?;
        if s.rows.get(key).map(String::as_str) != expected {
            return Ok(false);
        }
        s.rows.insert(key.to_string(), new.to_string());
        Ok(true)
    }
}
