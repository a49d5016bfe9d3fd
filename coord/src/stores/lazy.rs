//! A store opened on first use: [`LazyStore`] holds a store URL and connects when a method is first
//! called (and again on a later call while connecting fails). A range sequence's global store is one
//! (SPEC §4): a process opens and serves from its datacenter row without reaching the global store,
//! which it needs only to move a new range. It connects through a [`StoreOpener`] ([`open_store`] in
//! production, the simulation's stores in `sim/src/worlds/ranges.rs`).

use std::sync::{Arc, Mutex};

use crate::base::error::Result;
use crate::base::store::{
    Claim, ClaimRequest, NodeState, Reservation, SequencerConfig, SequencerRecord, Store,
};
use crate::base::url::StoreUrl;
#[cfg(doc)]
use crate::stores::open::open_store;
use crate::stores::open::StoreOpener;

/// A store connected on first use (see the [module documentation](self)).
pub(crate) struct LazyStore {
    url: StoreUrl,
    open: Arc<StoreOpener>,
    opened: Mutex<Option<Arc<dyn Store>>>,
}

impl std::fmt::Debug for LazyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyStore")
            .field("url", &self.url)
            .field("opened", &self.opened)
            .finish_non_exhaustive()
    }
}

impl LazyStore {
    pub(crate) fn new(url: StoreUrl, open: Arc<StoreOpener>) -> LazyStore {
        LazyStore {
            url,
            open,
            opened: Mutex::new(None),
        }
    }

    /// The store, connecting now if it is not yet (`STORE_UNAVAILABLE` while it cannot be reached).
    fn get(&self) -> Result<Arc<dyn Store>> {
        let mut opened = self.opened.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = &*opened {
            return Ok(store.clone());
        }
        let store = (self.open)(&self.url)?;
        *opened = Some(store.clone());
        Ok(store)
    }
}

impl Store for LazyStore {
    fn idle(&self) {
        if let Some(store) = &*self.opened.lock().unwrap_or_else(|p| p.into_inner()) {
            store.idle();
        }
    }

    fn describe(&self) -> String {
        match &*self.opened.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(store) => store.describe(),
            None => self.url.to_string(),
        }
    }

    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now_unix_ms: u64,
    ) -> Result<SequencerRecord> {
        self.get()?.create_sequencer(name, config, now_unix_ms)
    }

    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        self.get()?.sequencer(name)
    }

    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        self.get()?.sequencers()
    }

    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        self.get()?.destroy_sequencer(name, incarnation)
    }

    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        self.get()?.claim(request)
    }

    fn renew(&self, claim: &Claim, ttl_ms: u64, now_unix_ms: u64) -> Result<Claim> {
        self.get()?.renew(claim, ttl_ms, now_unix_ms)
    }

    fn release(&self, claim: &Claim) -> Result<()> {
        self.get()?.release(claim)
    }

    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        self.get()?.reservation(sequencer, node_id)
    }

    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.get()?.reserve(claim, reservation)
    }

    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.get()?.lower_reservation(claim, reservation)
    }

    fn holders(&self, sequencer: &str, now_unix_ms: u64) -> Result<Vec<NodeState>> {
        self.get()?.holders(sequencer, now_unix_ms)
    }

    fn row(&self, key: &str) -> Result<Option<String>> {
        self.get()?.row(key)
    }

    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        self.get()?.swap_row(key, expected, new)
    }
}
