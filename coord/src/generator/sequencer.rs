//! [`SequencerGenerator`], the generator the language bindings (Python, Node, C) wrap for a lease
//! source or a sequencer handle: a [`Sequencer`] handle plus its current lease, readable without a lock, so that minting costs one
//! atomic load more than minting with a fixed node ID.
//!
//! Every decision (parsing the source, claiming, renewing, reservations, states) is made here and below;
//! a binding converts types and maps error codes.

use snowmint::{ErrorCode, Layout, Options};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::base::error::{Error, Result};
use crate::base::sync::AtomicPtr;
use crate::base::time::{SystemTime, Time};
use crate::lease::{Lease, LeaseOptions};
use crate::sequencer::{Sequencer, SequencerState};
use crate::source::NodeSource;
use crate::stores::open::open_store;

use super::prefork;

/// What a node source opens to: a fixed node ID (a number, `env`, `k8s`, `ip`, resolved and checked
/// against the layout) or a generator under a lease (`file://`, `etcd://`, `postgres://`).
#[derive(Debug)]
pub enum Opened {
    /// A fixed node ID: the binding makes its plain generator (the bindings' `Plain` case).
    Plain(u64),
    /// A generator holding a lease.
    Leased(Box<SequencerGenerator>),
}

/// A sequencer handle that mints: Attached (holds a lease), Detached (after [`detach`](Self::detach)
/// or a lost lease: minting fails with `LEASE_LOST`; [`attach`](Self::attach) claims again) or
/// Destroyed (minting fails with `SEQUENCER_DESTROYED` forever).
///
/// **Forked children** (pre-fork servers: gunicorn `--preload`, uWSGI, Celery prefork): a generator
/// opened from a node source ([`open`](Self::open)) and used in a process forked after it was opened
/// opens a lease of its own there, on first use, from the same source (with a state file: it joins the
/// lease the host's processes share, [`open_sharing`](Self::open_sharing)): the parent's lease stopped in the
/// child at the fork ([`crate::lease`]), and the child never touches the parent's claim, keeper or store
/// connections (they are left as they are, not dropped, in the child). A handle of a named sequencer
/// ([`attach_new`](Self::attach_new)) has no source to open again: in a child it fails with `LEASE_LOST`.
#[derive(Debug)]
pub struct SequencerGenerator {
    seq: ManuallyDrop<Sequencer>,
    /// The current lease, or null: one atomic load on the minting path. Every lease it ever pointed to
    /// stays alive in `held` until the generator is dropped (one per attach: a few hundred bytes each),
    /// so a pointer loaded here is valid for as long as `&self` is.
    current: AtomicPtr<Lease>,
    held: Mutex<Vec<Arc<Lease>>>,
    /// The node ID of the last lease held.
    node_id: AtomicU64,
    /// How to open this generator again in a forked child (`None`: a sequencer handle).
    reopen: Option<Reopen>,
    /// The process that opened it.
    pid: u32,
    /// In a forked child: the generator it opened there, on first use.
    child: OnceLock<Box<SequencerGenerator>>,
    child_opening: Mutex<()>,
    /// Gave its lease back before a fork having minted nothing ([`prefork`]): attaches again on first use.
    lazy: std::sync::atomic::AtomicBool,
}

/// Tries of each step of [`SequencerGenerator::open_sharing`] (reading the sequencer, attaching) once
/// the store has opened, when a try fails with `STORE_UNAVAILABLE`.
const OPEN_TRIES: u32 = 4;

/// What [`SequencerGenerator::open_waiting`] was given.
#[derive(Debug, Clone)]
struct Reopen {
    source: String,
    layout: Layout,
    options: Options,
    wait_for_node: Option<std::time::Duration>,
    state_file: Option<std::path::PathBuf>,
}

impl SequencerGenerator {
    /// Opens `source` for `layout` (blocking: a lease source claims a node ID before it returns). A
    /// step of a lease source's open that fails with `STORE_UNAVAILABLE` is tried again (at most
    /// four tries of each, none begun once the lease's TTL has passed since the open began), on the
    /// same store once it is open.
    pub fn open(source: &str, layout: Layout, options: Options) -> Result<Opened> {
        Self::open_waiting(source, layout, options, None)
    }

    /// [`open`](Self::open), waiting up to `wait_for_node` (when given; else the source's `?wait=`) for
    /// a node ID to come free when all are held.
    pub fn open_waiting(
        source: &str,
        layout: Layout,
        options: Options,
        wait_for_node: Option<std::time::Duration>,
    ) -> Result<Opened> {
        Self::open_sharing(source, layout, options, wait_for_node, None)
    }

    /// [`open_waiting`](Self::open_waiting); with `state_file`, a lease source's lease is shared by every
    /// process of the host that opens the same state file ([`LeaseOptions::state_file`]: one node ID per
    /// host, claimed by the first, released by the last). A fixed node ID opens as it does without it
    /// (the binding opens the state file for it).
    pub fn open_sharing(
        source: &str,
        layout: Layout,
        options: Options,
        wait_for_node: Option<std::time::Duration>,
        state_file: Option<std::path::PathBuf>,
    ) -> Result<Opened> {
        let parsed = NodeSource::parse(source)?;
        let NodeSource::Lease(l) = &parsed else {
            return parsed.resolve(source, &layout).map(Opened::Plain);
        };
        // A step that fails with `STORE_UNAVAILABLE` (its sends timed out or their connections broke:
        // answers held back or lost now and then, or a server not reached) is tried again, once the
        // store is open on the same store, its connections kept, rather than the caller opening a new
        // one (on PostgreSQL a login of several answers, each able to be held back). Bounded: at most
        // `OPEN_TRIES` tries of each step, none begun once the TTL has passed since the open began.
        let until = std::time::Instant::now() + l.ttl;
        let again = |e: &Error, tries: &mut u32| {
            *tries += 1;
            e.code() == snowmint::ErrorCode::StoreUnavailable
                && *tries < OPEN_TRIES
                && std::time::Instant::now() < until
        };
        let mut tries = 0;
        let store = loop {
            match open_store(&l.store) {
                Ok(store) => break store,
                Err(e) if again(&e, &mut tries) => {}
                Err(e) => return Err(e.context(format!("node source {source:?}"))),
            }
        };
        let mut tries = 0;
        let seq = loop {
            match Sequencer::for_layout(
                store.clone(),
                &l.sequencer,
                layout,
                options,
                Arc::new(SystemTime) as Arc<dyn Time>,
                LeaseOptions {
                    ttl: l.ttl,
                    wait_for_node: wait_for_node.unwrap_or(l.wait),
                    state_file: state_file.clone(),
                    ..LeaseOptions::default()
                },
            ) {
                Ok(seq) => break seq,
                Err(e) if again(&e, &mut tries) => {}
                Err(e) => return Err(e),
            }
        };
        let mut g = SequencerGenerator::unattached(seq);
        let mut tries = 0;
        loop {
            match g.attach() {
                Ok(()) => break,
                Err(e) if again(&e, &mut tries) => {}
                Err(e) => return Err(e),
            }
        }
        g.reopen = Some(Reopen {
            source: source.to_string(),
            layout,
            options,
            wait_for_node,
            state_file,
        });
        Ok(Opened::Leased(Box::new(g)))
    }

    /// Attaches `seq` (claims a node ID) and wraps it.
    pub fn attach_new(seq: Sequencer) -> Result<SequencerGenerator> {
        let g = Self::unattached(seq);
        g.attach()?;
        Ok(g)
    }

    /// `seq` wrapped, not attached yet.
    fn unattached(seq: Sequencer) -> SequencerGenerator {
        SequencerGenerator {
            seq: ManuallyDrop::new(seq),
            current: AtomicPtr::new(std::ptr::null_mut()),
            held: Mutex::new(Vec::new()),
            node_id: AtomicU64::new(0),
            reopen: None,
            pid: std::process::id(),
            child: OnceLock::new(),
            child_opening: Mutex::new(()),
            lazy: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether a forked child opens a lease of its own on first use (a generator opened from a node
    /// source), rather than failing with `LEASE_LOST` (a sequencer handle).
    pub fn reopens_in_child(&self) -> bool {
        self.reopen.is_some()
    }

    /// Whether this process is not the one that opened the generator (a syscall: not for hot paths).
    fn in_forked_child(&self) -> bool {
        std::process::id() != self.pid
    }

    /// The generator that acts in this process: `self`, or in a forked child the one opened there (on
    /// first use; `self` if that open fails, whose lease stopped at the fork).
    fn active(&self) -> &SequencerGenerator {
        match self.in_child() {
            Ok(Some(c)) => c.active(),
            _ => self,
        }
    }

    /// Opens this generator's source again in a forked child (once).
    fn open_child(&self) -> Result<&SequencerGenerator> {
        let Some(r) = &self.reopen else {
            return Err(Error::lease_lost("no source to open again"));
        };
        let _g = self.child_opening.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = self.child.get() {
            return Ok(c);
        }
        let opened = SequencerGenerator::open_sharing(
            &r.source,
            r.layout,
            r.options,
            r.wait_for_node,
            r.state_file.clone(),
        )
        .map_err(|e| e.context("a forked child opening its own lease"))?;
        let Opened::Leased(c) = opened else {
            return Err(Error::invalid("the node source no longer names a lease"));
        };
        let c = self.child.get_or_init(|| c);
        // This process's copy of `current` now names the child's lease, so a binding's fast path
        // ([`current`](Self::current)) mints under it directly (the child's `held` keeps it alive).
        self.current
            .store(c.current.load(Ordering::Acquire), Ordering::Release);
        Ok(c)
    }

    /// In a forked child of a generator opened from a source: the generator opened there (now, on
    /// first use); `None` in the process that opened it (or for a sequencer handle, which has no source
    /// to open again). A forked child never touches `self.seq`: its store's connections are the
    /// parent's.
    fn in_child(&self) -> Result<Option<&SequencerGenerator>> {
        if let Some(c) = self.child.get() {
            return Ok(Some(c));
        }
        if self.reopen.is_some() && self.in_forked_child() {
            return self.open_child().map(Some);
        }
        Ok(None)
    }

    /// Where a mint goes when this process has no lease of `self`'s to mint under: the generator of a
    /// forked child ([`in_child`](Self::in_child)), or `self` attached again when it gave its lease back
    /// before a fork ([`prefork`]); `None`: nowhere (the caller reports why).
    #[cold]
    fn recover(&self) -> Result<Option<&SequencerGenerator>> {
        if let Some(c) = self.in_child()? {
            return Ok(Some(c));
        }
        if self.reopen.is_some() && self.lazy.swap(false, Ordering::SeqCst) {
            self.attach()?;
            return Ok(Some(self));
        }
        Ok(None)
    }

    /// A mint under the current lease failed with `e`: on `LEASE_LOST`, mints with `again` where
    /// [`recover`](Self::recover) says (a forked child's own lease: the parent's stopped at the fork).
    #[cold]
    fn in_child_or<T>(
        &self,
        e: Error,
        again: impl FnOnce(&SequencerGenerator) -> Result<T>,
    ) -> Result<T> {
        if e.code() == ErrorCode::LeaseLost {
            if let Some(g) = self.recover()? {
                return again(g);
            }
        }
        Err(e)
    }

    /// No current lease in this process (every minting entry point's other arm): mints with `again`
    /// where [`recover`](Self::recover) says, else answers `otherwise` (the detached or destroyed
    /// handle's error, which may ask the store: only in the process that opened it).
    #[cold]
    fn unleased<T>(
        &self,
        again: impl FnOnce(&SequencerGenerator) -> Result<T>,
        otherwise: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        match self.recover()? {
            Some(g) => again(g),
            None => otherwise(),
        }
    }

    /// Before a fork: a generator opened from a source that has minted nothing in this process (a
    /// pre-fork server's master, which opens the application and never mints) releases its lease, and
    /// claims again on first use; its forked children open their own. `Ok(true)` when it released.
    pub fn give_back_if_unused(&self) -> Result<bool> {
        if self.reopen.is_none()
            || self.child.get().is_some()
            || self.in_forked_child()
            || self.known_state() != SequencerState::Attached
            || self.has_minted()
        {
            return Ok(false);
        }
        self.lazy.store(true, Ordering::SeqCst);
        self.detach()?;
        Ok(true)
    }

    /// The sequencer handle.
    pub fn sequencer(&self) -> &Sequencer {
        &self.seq
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        self.seq.layout()
    }

    /// The node ID of the lease held (of the last one held, once detached).
    pub fn node_id(&self) -> u64 {
        self.active().node_id.load(Ordering::Relaxed)
    }

    /// The lease while Attached; `None` when Detached or Destroyed (never asks the store).
    pub fn lease(&self) -> Option<&Lease> {
        let this = self.active();
        if !std::ptr::eq(this, self) {
            return this.lease();
        }
        match self.known_state() {
            SequencerState::Attached => self.current(),
            _ => None,
        }
    }

    /// The current lease, with one atomic load and no lock or reference count (for a binding's fast
    /// path: mint with `lease.generator()` and fall back to [`next_id`](Self::next_id) on any error).
    #[inline]
    pub fn current(&self) -> Option<&Lease> {
        let p = self.current.load(Ordering::Acquire);
        // SAFETY: non-null pointers stored in `current` point into an `Arc` kept in `held`, which only
        // grows until `self` is dropped.
        unsafe { p.as_ref() }
    }

    fn set_current(&self, lease: Option<Arc<Lease>>) {
        let p = match lease {
            Some(l) => {
                let p = Arc::as_ptr(&l) as *mut Lease;
                let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
                if !held.iter().any(|h| Arc::ptr_eq(h, &l)) {
                    held.push(l);
                }
                p
            }
            None => std::ptr::null_mut(),
        };
        self.current.store(p, Ordering::Release);
    }

    /// What this generator has done ([`snowmint::Stats`]): the sum over every lease it has held (each
    /// attach mints under a new lease with a generator of its own). In a forked child, what it did
    /// there: nothing until it opened its own lease (the parent's leases in its memory are the parent's).
    pub fn stats(&self) -> snowmint::Stats {
        if let Some(c) = self.child.get() {
            return c.stats();
        }
        if self.reopen.is_some() && self.in_forked_child() {
            return snowmint::Stats::default();
        }
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.iter()
            .fold(snowmint::Stats::default(), |sum, l| sum.merged(l.stats()))
    }

    /// Whether this generator has minted any ID under any lease it held, counting windows still open
    /// in other threads ([`snowmint::SharedGenerator::has_minted`]).
    fn has_minted(&self) -> bool {
        if let Some(c) = self.child.get() {
            return c.has_minted();
        }
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.iter().any(|l| l.generator().has_minted())
    }

    /// The state (a Detached handle asks the store whether the sequencer was destroyed).
    pub fn state(&self) -> SequencerState {
        self.active().seq.state()
    }

    /// The state without asking the store ([`Sequencer::known_state`]).
    pub fn known_state(&self) -> SequencerState {
        match self.child.get() {
            Some(c) => c.known_state(),
            None => self.seq.known_state(),
        }
    }

    /// Mints one ID without ever asking the store on this thread: a Detached generator fails with
    /// `LEASE_LOST` (or `SEQUENCER_DESTROYED` once it has seen the destruction) instead of checking.
    /// Under the `wait` policy a mint at the reservation may still wait (at most the TTL) for the keeper.
    #[inline]
    pub fn next_id_local(&self) -> Result<u64> {
        if let Some(c) = self.child.get() {
            return c.next_id_local();
        }
        match self.current() {
            Some(l) => l
                .next_id()
                .or_else(|e| self.in_child_or(e, |c| c.next_id_local())),
            None => self.unleased(|c| c.next_id_local(), || Err(self.detached_error())),
        }
    }

    /// Fills `out` as [`next_id_local`](Self::next_id_local) mints one.
    pub fn next_ids_local(&self, out: &mut [u64]) -> Result<()> {
        if let Some(c) = self.child.get() {
            return c.next_ids_local(out);
        }
        match self.current() {
            Some(l) => l
                .next_ids(out)
                .or_else(|e| self.in_child_or(e, |c| c.next_ids_local(out))),
            None => self.unleased(|c| c.next_ids_local(out), || Err(self.detached_error())),
        }
    }

    fn detached_error(&self) -> Error {
        let name = &self.seq.record().name;
        match self.seq.known_state() {
            SequencerState::Destroyed => Error::new(
                snowmint::ErrorCode::SequencerDestroyed,
                format!("sequencer {name:?} was destroyed; this handle never mints again"),
            ),
            _ => Error::lease_lost(format!(
                "sequencer {name:?}: this generator is detached; attach() to mint"
            )),
        }
    }

    /// Claims a node ID again (nothing happens when Attached). Blocking.
    pub fn attach(&self) -> Result<()> {
        if let Some(c) = self.in_child()? {
            return c.attach();
        }
        self.seq.attach()?;
        let lease = self.seq.lease();
        if let Some(l) = &lease {
            self.node_id.store(l.node_id(), Ordering::Relaxed);
        }
        self.set_current(lease);
        Ok(())
    }

    /// Releases the node ID; minting then fails with `LEASE_LOST` until [`attach`](Self::attach).
    pub fn detach(&self) -> Result<()> {
        if let Some(c) = self.child.get() {
            return c.detach();
        }
        if self.reopen.is_some() && self.in_forked_child() {
            return Ok(()); // nothing opened here yet; the parent's lease is not the child's to release
        }
        self.set_current(None);
        self.seq.detach()
    }

    /// Destroys the sequencer everywhere (every handle in every process stops minting).
    pub fn destroy(&self) -> Result<()> {
        if let Some(c) = self.in_child()? {
            return c.destroy();
        }
        self.set_current(None);
        self.seq.destroy()
    }

    /// Mints one ID.
    #[inline]
    pub fn next_id(&self) -> Result<u64> {
        if let Some(c) = self.child.get() {
            return c.next_id();
        }
        match self.current() {
            Some(l) => l
                .next_id()
                .or_else(|e| self.in_child_or(e, |c| c.next_id())),
            None => self.unleased(|c| c.next_id(), || self.seq.next_id()),
        }
    }

    /// Fills `out` with consecutive IDs from one clock reading.
    pub fn next_ids(&self, out: &mut [u64]) -> Result<()> {
        if let Some(c) = self.child.get() {
            return c.next_ids(out);
        }
        match self.current() {
            Some(l) => l
                .next_ids(out)
                .or_else(|e| self.in_child_or(e, |c| c.next_ids(out))),
            // No lease here: a forked child (or a generator given back before a fork, [`prefork`])
            // claims its own and mints the batch, as `next_id` does. Otherwise the sequencer's own error
            // (LEASE_LOST or SEQUENCER_DESTROYED); should an attach race this call, the one ID it mints
            // is skipped and the batch is asked for again by the caller.
            None => self.unleased(
                |c| c.next_ids(out),
                || match self.seq.next_id() {
                    Err(e) => Err(e),
                    Ok(_) => Err(Error::lease_lost(
                        "the generator was attached while minting; retry",
                    )),
                },
            ),
        }
    }
}

impl Drop for SequencerGenerator {
    fn drop(&mut self) {
        prefork::unregister(self);
        if self.in_forked_child() {
            // The parent's lease, keeper and store connections: left untouched in a forked child (a
            // store client's threads did not survive the fork). The child's own generator is dropped.
            let held = std::mem::take(&mut *self.held.lock().unwrap_or_else(|p| p.into_inner()));
            std::mem::forget(held);
            drop(self.child.take());
            return;
        }
        let _ = self.detach();
        // SAFETY: dropped once, here, and never used again.
        unsafe { ManuallyDrop::drop(&mut self.seq) };
    }
}
