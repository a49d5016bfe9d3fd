//! Minting: a process's current and pre-allocated ranges, the hot path, and the [`RangeSequence`] handle.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use snowmint::ErrorCode;

use crate::base::defect::{Defect, Hook};
use crate::base::error::{Error, Result};
use crate::base::name::check_name;
use crate::base::store::Store;
use crate::base::sync::thread::{self, JoinHandle};
use crate::base::sync::{AtomicBool, AtomicU64, Condvar, Mutex, MutexGuard};
use crate::base::time::{SystemTime, Time};
use crate::stores::open::open_store;

use super::allocator::Allocator;
use super::open::{checked_pair, embedded_stores_exist};
use super::options::{RangeOptions, RangeStats};
use super::rows::{check_names, read_row, DatacenterRow, Dc, Global, GlobalRow, TICKET_MS};

/// The most values [`RangeSequence::next_ids`] returns at once.
pub const MAX_BATCH: usize = 1 << 24;

/// The minting path's state, on its own cache line: the cursor within the current range, its end, and
/// the value at which the next range is fetched.
#[derive(Debug)]
#[repr(align(64))]
pub(super) struct Hot {
    pub(super) cursor: AtomicU64,
    pub(super) end: AtomicU64,
    pub(super) trigger: AtomicU64,
}

#[derive(Debug)]
pub(super) struct State {
    pub(super) current: (u64, u64),
    pub(super) ready: Option<(u64, u64)>,
    /// Set by a minting thread that found no range: fetch now.
    pub(super) wanted: bool,
    pub(super) fetching: bool,
    /// The last background fetch's error (cleared by a success).
    pub(super) error: Option<Error>,
    pub(super) retired: u64,
    pub(super) late: u64,
    pub(super) wait_ns: u64,
    pub(super) stop: bool,
}

#[derive(Debug)]
pub(super) struct Shared {
    pub(super) hot: Hot,
    pub(super) alloc: Allocator,
    pub(super) state: Mutex<State>,
    pub(super) cond: Condvar,
    pub(super) kicked: AtomicBool,
    /// A datacenter-level pre-allocation is under way (on its own thread).
    pub(super) dc_prefetching: AtomicBool,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value whose handing out starts the next range's fetch; `e` (never handed out) for a
    /// threshold of 100 %, which fetches only when the range is used up.
    pub(super) fn trigger_of(&self, (s, e): (u64, u64)) -> u64 {
        let percent = self.alloc.options.threshold_percent;
        if percent >= 100 {
            return e;
        }
        let used = u128::from(e - s) * u128::from(percent) / 100;
        (s + used as u64).min(e - 1)
    }

    /// Makes `range` the current one (the caller holds the state lock). Order matters: the trigger and
    /// the cursor are stored before the end, so a minting thread that reads the new end (acquire) takes
    /// its value from the new cursor.
    pub(super) fn install(&self, st: &mut State, range: (u64, u64)) {
        st.retired += st.current.1 - st.current.0;
        st.current = range;
        if self.alloc.defect.is(Defect::RangeEndBeforeCursor) {
            self.hot.end.store(range.1, Ordering::Release); // the defect: the end first
        }
        self.hot
            .trigger
            .store(self.trigger_of(range), Ordering::Relaxed);
        self.hot.cursor.store(range.0, Ordering::Relaxed);
        self.hot.end.store(range.1, Ordering::Release);
    }

    pub(super) fn kick(&self) {
        self.kicked.store(true, Ordering::Relaxed);
        let _guard = self.lock();
        self.cond.notify_all();
    }

    pub(super) fn needs_fetch(&self, st: &State) -> bool {
        st.ready.is_none()
            && (st.wanted
                || self.kicked.load(Ordering::Relaxed)
                || self.hot.cursor.load(Ordering::Relaxed)
                    > self.hot.trigger.load(Ordering::Relaxed))
    }

    /// Pre-allocates at the datacenter level on a thread of its own (one at a time), so that a slow or
    /// unreachable global store never delays the next process range while the datacenter row holds
    /// some. A failure (the global store down) is not the process's: the next process range that finds
    /// the row low tries again.
    pub(super) fn spawn_dc_prefetch(self: &Arc<Self>) {
        if self.dc_prefetching.swap(true, Ordering::AcqRel) {
            return;
        }
        let shared = self.clone();
        let spawned = thread::Builder::new()
            .name("snowmint-range-dc".into())
            .spawn(move || {
                let _ = shared.alloc.prefetch_dc();
                shared.dc_prefetching.store(false, Ordering::Release);
            });
        if spawned.is_err() {
            self.dc_prefetching.store(false, Ordering::Release);
        }
    }

    /// The background thread: fetches the next process range when the current one passes the
    /// threshold (or a minting thread found none), then pre-allocates at the datacenter level.
    pub(super) fn run(self: Arc<Self>) {
        let mut backoff = Duration::from_millis(50);
        let mut st = self.lock();
        loop {
            while !st.stop && !self.needs_fetch(&st) {
                st = self
                    .cond
                    .wait_timeout(st, Duration::from_millis(200))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            if st.stop {
                return;
            }
            self.kicked.store(false, Ordering::Relaxed);
            st.fetching = true;
            drop(st);
            let deadline = self.alloc.time.monotonic_ns()
                + (TICKET_MS as u128 * 1_000_000).min(u64::MAX as u128) as u64;
            let result = self.alloc.take_process_range(deadline);
            let mut prefetch_dc = false;
            st = self.lock();
            st.fetching = false;
            let failed = match result {
                Ok((range, low)) => {
                    st.ready = Some(range);
                    st.error = None;
                    st.wanted = false;
                    prefetch_dc = low;
                    backoff = Duration::from_millis(50);
                    false
                }
                Err(e) => {
                    st.error = Some(e);
                    true
                }
            };
            self.cond.notify_all();
            if prefetch_dc {
                self.spawn_dc_prefetch();
            } else if failed {
                let exhausted = st
                    .error
                    .as_ref()
                    .is_some_and(|e| e.code() == ErrorCode::RangeExhausted);
                let pause = if exhausted {
                    Duration::from_secs(3600)
                } else {
                    backoff
                };
                backoff = (backoff * 2).min(Duration::from_secs(1));
                st = self
                    .cond
                    .wait_timeout_while(st, pause, |s| !s.stop && !s.wanted)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
                if exhausted {
                    st.wanted = false;
                }
            }
        }
    }
}

/// A range sequence handle: hands out integers of the configured width from ranges leased from its
/// datacenter's store (see the [module documentation](super)). Thread-safe; one per process is enough.
///
/// ```
/// use std::sync::Arc;
/// use snowmint_coord::{MemoryStore, RangeOptions, RangeSequence, Store};
///
/// let global: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// let local: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// let options = RangeOptions { dc_range: 10_000, process_range: 100, ..RangeOptions::default() };
/// let seq = RangeSequence::open("orders", "eu", global, local, options).unwrap();
/// let a = seq.next_id().unwrap();
/// let b = seq.next_id().unwrap();
/// assert!(a >= 1 && b > a && b < 1 << 31);
/// ```
#[derive(Debug)]
pub struct RangeSequence {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

impl RangeSequence {
    /// Opens sequence `name` for datacenter `dc` on a global and a local (datacenter) store, with the
    /// system clock. Takes the first process range before it returns (blocking).
    pub fn open(
        name: &str,
        dc: &str,
        global: Arc<dyn Store>,
        local: Arc<dyn Store>,
        options: RangeOptions,
    ) -> Result<RangeSequence> {
        Self::open_with_time(name, dc, global, local, options, Arc::new(SystemTime))
    }

    /// Opens by store URLs (`file:///DIR`, `etcd://HOST:PORT[,…]/PREFIX`, `postgres://USER@HOST/DB`);
    /// the same URL twice shares one connection.
    pub fn open_urls(
        name: &str,
        dc: &str,
        global_url: &str,
        local_url: &str,
        options: RangeOptions,
    ) -> Result<RangeSequence> {
        // Bad input first (INVALID_ARGUMENT), then a missing embedded store (STORE_NOT_FOUND).
        options.check()?;
        check_names(name, dc)?;
        embedded_stores_exist(global_url, local_url)?;
        let (global, local) = checked_pair(
            name,
            dc,
            (global_url, local_url),
            &options,
            // A missing embedded store is `STORE_NOT_FOUND` and nothing is written, as for a lease or a
            // sequencer: only the explicit create commands create a store (`source::create_store`).
            Arc::new(open_store),
            Hook::NONE,
        )?;
        Self::open(name, dc, global, local, options)
    }

    /// [`RangeSequence::open`] with an injected clock (simulation, tests).
    pub fn open_with_time(
        name: &str,
        dc: &str,
        global: Arc<dyn Store>,
        local: Arc<dyn Store>,
        options: RangeOptions,
        time: Arc<dyn Time>,
    ) -> Result<RangeSequence> {
        Self::start(Allocator::new(name, dc, global, local, options, time)?)
    }

    /// [`RangeSequence::open_with_time`] with a defect planted (feature `planted-defects`: the
    /// concurrency model's proof, coord/tests/shuttle.rs).
    #[cfg(feature = "planted-defects")]
    pub fn open_planted(
        name: &str,
        dc: &str,
        global: Arc<dyn Store>,
        local: Arc<dyn Store>,
        options: RangeOptions,
        time: Arc<dyn Time>,
        defect: Defect,
    ) -> Result<RangeSequence> {
        let mut alloc = Allocator::new(name, dc, global, local, options, time)?;
        alloc.defect = Hook::planted(defect);
        Self::start(alloc)
    }

    /// Takes the first process range and starts the background thread.
    fn start(alloc: Allocator) -> Result<RangeSequence> {
        let deadline = alloc.time.monotonic_ns()
            + (TICKET_MS + alloc.options.wait.as_millis() as u64) * 1_000_000;
        let (first, low) = alloc.take_process_range(deadline)?;
        let shared = Arc::new(Shared {
            hot: Hot {
                cursor: AtomicU64::new(first.0),
                end: AtomicU64::new(first.1),
                trigger: AtomicU64::new(0),
            },
            alloc,
            state: Mutex::new(State {
                current: first,
                ready: None,
                wanted: false,
                fetching: false,
                error: None,
                retired: 0,
                late: 0,
                wait_ns: 0,
                stop: false,
            }),
            cond: Condvar::new(),
            kicked: AtomicBool::new(false),
            dc_prefetching: AtomicBool::new(false),
        });
        shared
            .hot
            .trigger
            .store(shared.trigger_of(first), Ordering::Relaxed);
        if low {
            shared.spawn_dc_prefetch();
        }
        let worker = {
            let shared = shared.clone();
            thread::Builder::new()
                .name("snowmint-range".into())
                .spawn(move || shared.run())
                .map_err(|e| Error::unavailable(format!("cannot start the range thread: {e}")))?
        };
        Ok(RangeSequence {
            shared,
            worker: Some(worker),
        })
    }

    /// The next value: one atomic step on the held range; waits (at most [`RangeOptions::wait`]) only
    /// when the current range is used up and the next one is not ready. `STORE_UNAVAILABLE` when no
    /// range could be had in time, `RANGE_EXHAUSTED` when the width is used up.
    #[inline]
    pub fn next_id(&self) -> Result<u64> {
        match self.try_next_id() {
            Some(v) => Ok(v),
            None => self.next_slow(1).map(|(v, _)| v),
        }
    }

    /// The next value if the held range has one, else `None` (never blocks, never touches a store):
    /// bindings call this first and release their interpreter lock only for [`next_id`](Self::next_id)
    /// when it returns `None`.
    #[inline]
    pub fn try_next_id(&self) -> Option<u64> {
        let hot = &self.shared.hot;
        let end = hot.end.load(Ordering::Acquire);
        let v = hot.cursor.fetch_add(1, Ordering::Relaxed);
        if v < end {
            if v == hot.trigger.load(Ordering::Relaxed) {
                self.shared.kick();
            }
            return Some(v);
        }
        None
    }

    /// `n` values, increasing (from one or more ranges).
    pub fn next_ids(&self, n: usize) -> Result<Vec<u64>> {
        if n > MAX_BATCH {
            return Err(Error::invalid(format!(
                "{n} values at once: at most {MAX_BATCH} (2^24) per call"
            )));
        }
        let mut out = Vec::with_capacity(n);
        let hot = &self.shared.hot;
        while out.len() < n {
            let want = (n - out.len()) as u64;
            let end = hot.end.load(Ordering::Acquire);
            let v = hot.cursor.fetch_add(want, Ordering::Relaxed);
            if v < end {
                let trigger = hot.trigger.load(Ordering::Relaxed);
                let upto = end.min(v.saturating_add(want));
                out.extend(v..upto);
                if (v..upto).contains(&trigger) {
                    self.shared.kick();
                }
                continue;
            }
            let (first, count) = self.next_slow(want)?;
            out.extend(first..first + count);
        }
        Ok(out)
    }

    /// The cold path: installs the pre-allocated range, or waits for one. Returns `count ≥ 1` values
    /// from `first` (at most `want`).
    #[cold]
    fn next_slow(&self, want: u64) -> Result<(u64, u64)> {
        let shared = &*self.shared;
        let alloc = &shared.alloc;
        let mut st = shared.lock();
        let mut waited_from: Option<u64> = None;
        let result = loop {
            let end = shared.hot.end.load(Ordering::Acquire);
            let v = shared.hot.cursor.fetch_add(want, Ordering::Relaxed);
            if v < end {
                break Ok((v, end.min(v.saturating_add(want)) - v));
            }
            if let Some(next) = st.ready.take() {
                shared.install(&mut st, next);
                shared.cond.notify_all();
                continue;
            }
            // Exhaustion is final; any other failure (the store unreachable) is retried in the
            // background until the wait is over, then reported.
            if let Some(e) = &st.error {
                if e.code() == ErrorCode::RangeExhausted {
                    break Err(e.clone());
                }
            }
            let now = alloc.time.monotonic_ns();
            let from = *waited_from.get_or_insert(now);
            let waited = Duration::from_nanos(now.saturating_sub(from));
            if waited >= alloc.options.wait {
                break Err(st.error.clone().unwrap_or_else(|| {
                    Error::unavailable(format!(
                        "{}: range sequence {:?}: no range for datacenter {} within {} ms",
                        alloc.local.describe(),
                        alloc.name,
                        alloc.dc,
                        alloc.options.wait.as_millis()
                    ))
                }));
            }
            // Wake the background thread once (waking it on every pass would have the waiting
            // threads wake each other in a storm).
            if !st.wanted {
                st.wanted = true;
                shared.cond.notify_all();
            }
            st = shared
                .cond
                .wait_timeout(
                    st,
                    (alloc.options.wait - waited).min(Duration::from_millis(50)),
                )
                .unwrap_or_else(|p| p.into_inner())
                .0;
        };
        if let Some(from) = waited_from {
            st.late += 1;
            st.wait_ns += alloc.time.monotonic_ns().saturating_sub(from);
        }
        result
    }

    /// What this handle has done.
    pub fn stats(&self) -> RangeStats {
        let shared = &*self.shared;
        let st = shared.lock();
        let used = shared
            .hot
            .cursor
            .load(Ordering::Relaxed)
            .clamp(st.current.0, st.current.1)
            - st.current.0;
        RangeStats {
            values: st.retired + used,
            process_ranges: shared.alloc.process_ranges.load(Ordering::Relaxed),
            dc_ranges: shared.alloc.dc_ranges.load(Ordering::Relaxed),
            late: st.late,
            wait_ns: st.wait_ns,
            current: st.current,
            ready: st.ready,
        }
    }

    /// The configuration.
    pub fn options(&self) -> &RangeOptions {
        &self.shared.alloc.options
    }

    /// The global row of sequence `name` (`None` before any datacenter took a range).
    pub fn show(global: &dyn Store, name: &str) -> Result<Option<GlobalRow>> {
        check_name(name)?;
        Ok(read_row(global, name, Global::parse)?.map(|g| GlobalRow {
            bits: g.bits,
            start: g.start,
            next: g.next,
            datacenters: g.dcs,
        }))
    }

    /// The row of datacenter `dc` of sequence `name` on its store (`None` if it never took a range).
    pub fn show_datacenter(
        local: &dyn Store,
        name: &str,
        dc: &str,
    ) -> Result<Option<DatacenterRow>> {
        check_names(name, dc)?;
        Ok(
            read_row(local, &format!("{name}@{dc}"), Dc::parse)?.map(|d| DatacenterRow {
                floor: d.floor,
                ranges: d.ranges,
                fetching_until_unix_ms: d.ticket.map(|(_, until)| until),
            }),
        )
    }
}

impl Drop for RangeSequence {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.cond.notify_all();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}
