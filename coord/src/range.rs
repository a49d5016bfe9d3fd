//! Compact integer IDs by hierarchical range allocation (SPEC §4): a **range sequence** hands out
//! integers of a fixed width (31 bits by default: a signed 32-bit column) from ranges leased by
//! compare-and-set on real stores, global → datacenter → process, each level pre-allocating its next
//! range in the background.
//!
//! # Rows
//!
//! Two kinds of [`Store`] rows (text, changed only by [`Store::swap_row`]):
//!
//! - the **global row** `NAME` on the global store (shared by every datacenter: Cassandra's SERIAL):
//!   `next`, the first value no datacenter has taken, plus the width, the start value and the last
//!   range each datacenter took (for [`RangeSequence::show`]);
//! - a **datacenter row** `NAME@DC` on the datacenter's own store (Cassandra's LOCAL_SERIAL): the
//!   ranges the datacenter holds and has not yet given to a process (in increasing order), `floor` —
//!   one past the last value given to any process of the datacenter — and a *fetch ticket* naming the
//!   process that is moving the next range from the global row (so that a datacenter's processes do
//!   not all fetch at once; the ticket expires, so a process killed while fetching does not block).
//!
//! A process takes `process_range` values from the first range of its datacenter row by one
//! compare-and-set; when what the datacenter row holds falls below the threshold (default 50 % of
//! `dc_range`), the process that noticed takes the ticket, moves `dc_range` values from the global row
//! to its datacenter row (one compare-and-set on each), and clears the ticket.
//!
//! # Why no value is ever handed out twice
//!
//! A value belongs to at most one range at each level: the global row only moves forward (`next` grows
//! by each compare-and-set, and a compare-and-set succeeds once for each value it compares against);
//! a datacenter row's ranges come from the global row, and a process's range is cut from the
//! datacenter row by one compare-and-set that removes it.
//!
//! A write's answer can be lost after the store applied it, and the store client then sends it again
//! (the etcd client after a timeout or "request timed out", the PostgreSQL store after a dropped
//! connection; [`crate::store`]'s re-send rule). Every write carries a fresh nonce (`by=`, 64 random
//! bits per process and a counter): a re-send, or a read-back after an error, that finds the row holding
//! the write's own text knows the write was applied. When the row was changed again by another
//! process in between, the write looks refused although it was applied; what happens then is safe at
//! every step:
//! - a process range or the global range looks not taken, and the next one is taken instead: the
//!   first is a hole;
//! - the fetch ticket looks not taken: it expires;
//! - a range moved from the global row looks not added to the datacenter row, and adding it is tried
//!   again: adding is a no-op when the row holds a range overlapping it (global ranges never overlap,
//!   so that is its own remainder) or the floor is at or past its end (processes took all of it).
//!
//! So a lost answer leaves at worst a hole, never a duplicate. A process killed after taking a range
//! leaves a hole too: a range leaves the row before any of it is used.
//!
//! # Why the values of a process strictly increase
//!
//! Within a range the process hands out values with an atomic cursor. Ranges taken later are higher:
//! every range given to a process of a datacenter starts at or above that datacenter's `floor`, which
//! the same compare-and-set raises to the end of the range given. A range that reaches the datacenter
//! row late (a fetcher whose ticket expired while the global store was slow) is clipped to `floor`, so
//! it can never be handed out below a range already given. A process uses its ranges in the order it
//! took them, so its values increase across ranges too. Values of one datacenter increase in the order
//! processes took their ranges; across datacenters and processes they are only unique.
//!
//! # Partitions
//!
//! With the global store unreachable, a datacenter keeps serving from the ranges in its row (size
//! `dc_range` to carry it through a long partition), and a process opens and mints from it: opening and
//! serving touch only the datacenter's store while its row holds values ([`open_pair`] connects the
//! global store on first use), the global store is needed only to move a new range. With its own store unreachable, a process keeps
//! minting from its current and pre-allocated ranges, then [`next_id`](RangeSequence::next_id) waits
//! at most [`RangeOptions::wait`] for a range and fails with `STORE_UNAVAILABLE`. When the width is used
//! up: `RANGE_EXHAUSTED`.
//!
//! # A fixed process range (no adaptive step)
//!
//! Leaf's segment mode doubles a process's step when a segment lasted under 15 minutes and halves it
//! past 30. We keep `process_range` fixed: in 31 bits values are scarce, and every range a process holds
//! becomes a hole when it restarts (deploys restart every process), so a step that grows with bursts
//! wastes the most exactly when processes churn; and pre-allocation at the threshold already keeps
//! minting off the network as long as one range lasts longer than one round trip to the datacenter's
//! store (1 000 values at 10^6 IDs/s is 1 ms). [`RangeStats::late`] says when a range came late, which
//! is the signal to raise `process_range`.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use snowmint::ErrorCode;

use crate::error::{Error, Result};
use crate::lazy::LazyStore;
use crate::sequencer::check_name;
use crate::source::{open_store, parse_store_url, StoreOpener};
use crate::store::Store;
use crate::sync::thread::{self, JoinHandle};
use crate::sync::{AtomicBool, AtomicU64, Condvar, Mutex, MutexGuard};
use crate::time::{SystemTime, Time};

/// How a range sequence allocates: sizes, threshold, width, start, wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeOptions {
    /// Values a datacenter moves from the global row at a time (size it to carry the datacenter
    /// through a long partition of the global store, e.g. 24 h of its traffic). Default 1 000 000.
    pub dc_range: u64,
    /// Values a process takes from its datacenter row at a time (at most `dc_range`). Default 1 000.
    pub process_range: u64,
    /// At this percentage of a range used (1 to 100), the next one is fetched in the background, at
    /// both levels. Default 50. 100: no pre-allocation of process ranges (the next one is taken when
    /// the current one is used up: a short-lived process, such as the CLI, leaves no hole).
    pub threshold_percent: u32,
    /// Value width in bits, 1 to 63: values are below `2^bits`. Default 31 (a signed 32-bit column).
    pub bits: u32,
    /// The first value the sequence hands out (below `2^bits`). Default 1.
    pub start: u64,
    /// How long [`RangeSequence::next_id`] may wait for a range when none is ready (the pre-allocation
    /// came late, or the datacenter's store is unreachable) before failing. Default 2 s.
    pub wait: Duration,
}

impl Default for RangeOptions {
    fn default() -> Self {
        RangeOptions {
            dc_range: 1_000_000,
            process_range: 1_000,
            threshold_percent: 50,
            bits: 31,
            start: 1,
            wait: Duration::from_secs(2),
        }
    }
}

impl RangeOptions {
    /// Checks the options (`INVALID_ARGUMENT` naming the field and the allowed values).
    pub fn check(&self) -> Result<()> {
        if !(1..=63).contains(&self.bits) {
            return Err(Error::invalid(format!(
                "range width {} bits: use 1 to 63 (31 fits a signed 32-bit column, 32 an unsigned one)",
                self.bits
            )));
        }
        let limit = 1u64 << self.bits;
        if self.start >= limit {
            return Err(Error::invalid(format!(
                "start value {} does not fit {} bits (at most {})",
                self.start,
                self.bits,
                limit - 1
            )));
        }
        let room = limit - self.start;
        if self.dc_range == 0 || self.dc_range > room {
            return Err(Error::invalid(format!(
                "datacenter range {}: use 1 to {room} (the {} bits above the start value {})",
                self.dc_range, self.bits, self.start
            )));
        }
        if self.process_range == 0 || self.process_range > self.dc_range {
            return Err(Error::invalid(format!(
                "process range {}: use 1 to the datacenter range ({})",
                self.process_range, self.dc_range
            )));
        }
        if !(1..=100).contains(&self.threshold_percent) {
            return Err(Error::invalid(format!(
                "pre-allocation threshold {} %: use 1 to 100",
                self.threshold_percent
            )));
        }
        if self.wait > Duration::from_secs(3600) {
            return Err(Error::invalid("wait: at most one hour"));
        }
        Ok(())
    }
}

/// What a range sequence has done (this process).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeStats {
    /// Values handed out by this handle.
    pub values: u64,
    /// Ranges this process took from its datacenter row.
    pub process_ranges: u64,
    /// Ranges this process moved from the global row to its datacenter row.
    pub dc_ranges: u64,
    /// Times minting had to wait because the next range was not ready (a pre-allocation that finished
    /// late, or none possible).
    pub late: u64,
    /// Total time minting spent waiting, nanoseconds.
    pub wait_ns: u64,
    /// The current range `[start, end)`.
    pub current: (u64, u64),
    /// The pre-allocated next range, if one is ready.
    pub ready: Option<(u64, u64)>,
}

/// The global row as [`RangeSequence::show`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalRow {
    /// Value width in bits.
    pub bits: u32,
    /// The first value of the sequence.
    pub start: u64,
    /// The first value no datacenter has taken (`next - 1` is the global last value).
    pub next: u64,
    /// Per datacenter, the last range it took `[start, end)`.
    pub datacenters: BTreeMap<String, (u64, u64)>,
}

/// A datacenter row as [`RangeSequence::show_datacenter`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatacenterRow {
    /// One past the last value given to a process of the datacenter (0: none yet).
    pub floor: u64,
    /// The ranges the datacenter holds and has not given to a process, increasing: the first is the
    /// one being used, the others are pre-allocated.
    pub ranges: Vec<(u64, u64)>,
    /// A fetch from the global row is under way until this time (Unix ms), if one is.
    pub fetching_until_unix_ms: Option<u64>,
}

// ------------------------------------------------------------------------------------------ the rows

const TICKET_MS: u64 = 5_000;

/// The most values [`RangeSequence::next_ids`] returns at once.
pub const MAX_BATCH: usize = 1 << 24;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Global {
    bits: u32,
    start: u64,
    next: u64,
    dcs: BTreeMap<String, (u64, u64)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Dc {
    bits: u32,
    start: u64,
    floor: u64,
    ranges: Vec<(u64, u64)>,
    /// The nonce of the process fetching, and until when (Unix ms).
    ticket: Option<(String, u64)>,
}

fn pair(v: &str) -> Option<(u64, u64)> {
    let (a, b) = v.split_once('-')?;
    let (a, b) = (a.parse().ok()?, b.parse().ok()?);
    (a < b).then_some((a, b))
}

fn fields(text: &str) -> Option<BTreeMap<&str, &str>> {
    let mut words = text.split_whitespace();
    if words.next() != Some("v1") {
        return None;
    }
    let mut out = BTreeMap::new();
    for w in words {
        let (k, v) = w.split_once('=')?;
        if out.insert(k, v).is_some() {
            return None;
        }
    }
    Some(out)
}

impl Global {
    fn parse(text: &str) -> Option<Global> {
        let f = fields(text)?;
        let mut dcs = BTreeMap::new();
        for (k, v) in &f {
            if let Some(dc) = k.strip_prefix("dc.") {
                dcs.insert(dc.to_string(), pair(v)?);
            }
        }
        Some(Global {
            bits: f.get("bits")?.parse().ok()?,
            start: f.get("start")?.parse().ok()?,
            next: f.get("next")?.parse().ok()?,
            dcs,
        })
    }

    fn text(&self, nonce: &str) -> String {
        let mut s = format!(
            "v1 bits={} start={} next={}",
            self.bits, self.start, self.next
        );
        for (dc, (a, b)) in &self.dcs {
            s.push_str(&format!(" dc.{dc}={a}-{b}"));
        }
        s.push_str(&format!(" by={nonce}"));
        s
    }
}

impl Dc {
    fn parse(text: &str) -> Option<Dc> {
        let f = fields(text)?;
        let ranges = match *f.get("ranges")? {
            "-" => Vec::new(),
            list => list.split(',').map(pair).collect::<Option<Vec<_>>>()?,
        };
        let ticket = match *f.get("fetch")? {
            "-" => None,
            t => {
                let (who, until) = t.split_once('@')?;
                Some((who.to_string(), until.parse().ok()?))
            }
        };
        Some(Dc {
            bits: f.get("bits")?.parse().ok()?,
            start: f.get("start")?.parse().ok()?,
            floor: f.get("floor")?.parse().ok()?,
            ranges,
            ticket,
        })
    }

    fn text(&self, nonce: &str) -> String {
        let ranges = if self.ranges.is_empty() {
            "-".to_string()
        } else {
            let list: Vec<String> = self
                .ranges
                .iter()
                .map(|(a, b)| format!("{a}-{b}"))
                .collect();
            list.join(",")
        };
        let fetch = match &self.ticket {
            None => "-".to_string(),
            Some((who, until)) => format!("{who}@{until}"),
        };
        format!(
            "v1 bits={} start={} floor={} ranges={ranges} fetch={fetch} by={nonce}",
            self.bits, self.start, self.floor
        )
    }

    fn held(&self) -> u64 {
        self.ranges.iter().map(|(a, b)| b - a).sum()
    }
}

/// `STORE_UNAVAILABLE` for a row whose text is not a range sequence row.
fn unreadable(store: &dyn Store, key: &str, text: &str) -> Error {
    Error::unavailable(format!(
        "{}: row {key} is not a range sequence row: {text:?}",
        store.describe()
    ))
}

/// Reads and parses a row (`None`: never written).
fn read_row<T>(store: &dyn Store, key: &str, parse: fn(&str) -> Option<T>) -> Result<Option<T>> {
    match store.row(key)? {
        None => Ok(None),
        Some(text) => parse(&text)
            .map(Some)
            .ok_or_else(|| unreadable(store, key, &text)),
    }
}

/// A fresh nonce for one write, the write's identity ([`crate::nonce`]).
fn nonce(time: &dyn Time) -> String {
    crate::nonce::fresh(time.unix_ns())
}

/// The allocation algorithm over two stores, without the minting state (shared by the background
/// thread and `open`).
#[derive(Debug)]
struct Allocator {
    name: String,
    dc: String,
    global: Arc<dyn Store>,
    local: Arc<dyn Store>,
    options: RangeOptions,
    time: Arc<dyn Time>,
    process_ranges: AtomicU64,
    dc_ranges: AtomicU64,
    /// A defect planted on purpose (feature `planted-defects`, the simulation's own tests).
    #[cfg(feature = "planted-defects")]
    defect: crate::lease::Defect,
}

/// What a compare-and-set came to.
enum Swap {
    Done,
    Lost,
}

impl Allocator {
    /// Checks the options and names.
    fn new(
        name: &str,
        dc: &str,
        global: Arc<dyn Store>,
        local: Arc<dyn Store>,
        options: RangeOptions,
        time: Arc<dyn Time>,
    ) -> Result<Allocator> {
        options.check()?;
        check_names(name, dc)?;
        Ok(Allocator {
            name: name.to_string(),
            dc: dc.to_string(),
            global,
            local,
            options,
            time,
            process_ranges: AtomicU64::new(0),
            dc_ranges: AtomicU64::new(0),
            #[cfg(feature = "planted-defects")]
            defect: crate::lease::Defect::None,
        })
    }

    fn limit(&self) -> u64 {
        1u64 << self.options.bits
    }

    fn dc_key(&self) -> String {
        format!("{}@{}", self.name, self.dc)
    }

    fn now_ms(&self) -> u64 {
        self.time.unix_ns() / 1_000_000
    }

    fn conflict(&self, bits: u32, start: u64, store: &dyn Store) -> Error {
        Error::new(
            ErrorCode::SequencerConflict,
            format!(
                "{}: range sequence {:?} exists with {bits} bits from {start}; asked for {} bits from {}",
                store.describe(),
                self.name,
                self.options.bits,
                self.options.start
            ),
        )
    }

    /// Compare-and-set with a lost answer resolved by the write's identity: `new` carries a fresh
    /// nonce, so the row holding `new` (the store's answer to a re-send, or a read-back after an error)
    /// means this write was applied. A write applied and then overwritten looks lost (see the module
    /// documentation for why every caller is safe then).
    fn swap(&self, store: &dyn Store, key: &str, old: Option<&str>, new: &str) -> Result<Swap> {
        #[cfg(feature = "planted-defects")]
        let current;
        #[cfg(feature = "planted-defects")]
        let old = if self.defect == crate::lease::Defect::RangeWithoutCompare {
            // The defect: compare against whatever the row holds now, not what was read (a blind write).
            current = store.row(key)?;
            current.as_deref()
        } else {
            old
        };
        match store.swap_row(key, old, new) {
            Ok(true) => Ok(Swap::Done),
            Ok(false) => Ok(Swap::Lost),
            #[cfg(feature = "planted-defects")]
            Err(e)
                if e.code() == ErrorCode::StoreUnavailable
                    && self.defect == crate::lease::Defect::RangeTimeoutAsWritten =>
            {
                Ok(Swap::Done) // the defect: an unknown outcome taken as applied, no read-back
            }
            Err(e) if e.code() == ErrorCode::StoreUnavailable => match store.row(key) {
                Ok(Some(now)) if now == new => Ok(Swap::Done),
                Ok(_) => Ok(Swap::Lost),
                Err(_) => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    fn read_dc(&self) -> Result<(Option<String>, Dc)> {
        let key = self.dc_key();
        let raw = self.local.row(&key)?;
        let dc = match &raw {
            None => Dc {
                bits: self.options.bits,
                start: self.options.start,
                floor: 0,
                ranges: Vec::new(),
                ticket: None,
            },
            Some(text) => Dc::parse(text).ok_or_else(|| unreadable(&*self.local, &key, text))?,
        };
        if (dc.bits, dc.start) != (self.options.bits, self.options.start) {
            return Err(self.conflict(dc.bits, dc.start, &*self.local));
        }
        Ok((raw, dc))
    }

    /// Takes the next process range from the datacenter row (moving a range from the global row first
    /// if the datacenter row is empty). Returns the range and whether the datacenter row fell below the
    /// threshold (the caller then pre-allocates at the datacenter level).
    fn take_process_range(&self, deadline_ns: u64) -> Result<((u64, u64), bool)> {
        let key = self.dc_key();
        let mut tries = 0u32;
        loop {
            tries += 1;
            if tries > 1000 {
                return Err(Error::unavailable(format!(
                    "{}: range sequence {:?}: lost 1000 compare-and-set races in a row on row {key}",
                    self.local.describe(),
                    self.name
                )));
            }
            let (raw, mut dc) = self.read_dc()?;
            let Some(&(s, e)) = dc.ranges.first() else {
                match self.fetch_dc_range(raw.as_deref(), dc)? {
                    Fetch::Moved | Fetch::Retry => {}
                    Fetch::Busy => {
                        if self.time.monotonic_ns() >= deadline_ns {
                            return Err(Error::unavailable(format!(
                                "{}: range sequence {:?}: datacenter {} holds no range and another \
                                 process's fetch from the global store has not finished",
                                self.local.describe(),
                                self.name,
                                self.dc
                            )));
                        }
                        thread::sleep(Duration::from_millis(20));
                    }
                }
                continue;
            };
            let end = e.min(s.saturating_add(self.options.process_range));
            if end == e {
                dc.ranges.remove(0);
            } else {
                dc.ranges[0].0 = end;
            }
            dc.floor = dc.floor.max(end);
            let text = dc.text(&nonce(&*self.time));
            match self.swap(&*self.local, &key, raw.as_deref(), &text)? {
                Swap::Done => {
                    self.process_ranges.fetch_add(1, Ordering::Relaxed);
                    let low = u128::from(dc.held()) * 100
                        < u128::from(self.options.dc_range)
                            * u128::from(100 - self.options.threshold_percent.min(100));
                    let fetching = dc
                        .ticket
                        .as_ref()
                        .is_some_and(|(_, until)| *until > self.now_ms());
                    return Ok(((s, end), low && !fetching));
                }
                Swap::Lost => continue,
            }
        }
    }

    /// Pre-allocation at the datacenter level: moves a range from the global row if the datacenter row
    /// is still below the threshold and nobody else is fetching.
    fn prefetch_dc(&self) -> Result<()> {
        for _ in 0..100 {
            let (raw, dc) = self.read_dc()?;
            let low = u128::from(dc.held()) * 100
                < u128::from(self.options.dc_range)
                    * u128::from(100 - self.options.threshold_percent.min(100));
            if !low && !dc.ranges.is_empty() {
                return Ok(());
            }
            match self.fetch_dc_range(raw.as_deref(), dc)? {
                Fetch::Moved | Fetch::Busy => return Ok(()),
                Fetch::Retry => {}
            }
        }
        Ok(())
    }

    /// Takes the fetch ticket on the datacenter row, moves `dc_range` values from the global row, and
    /// puts them in the datacenter row (clipped to its floor), clearing the ticket.
    fn fetch_dc_range(&self, raw: Option<&str>, mut dc: Dc) -> Result<Fetch> {
        let key = self.dc_key();
        let now = self.now_ms();
        if dc.ticket.as_ref().is_some_and(|(_, until)| *until > now) {
            return Ok(Fetch::Busy);
        }
        let me = nonce(&*self.time);
        dc.ticket = Some((me.clone(), now + TICKET_MS));
        let text = dc.text(&me);
        if let Swap::Lost = self.swap(&*self.local, &key, raw, &text)? {
            return Ok(Fetch::Retry);
        }
        let taken = match self.take_from_global() {
            Ok(r) => r,
            Err(e) => {
                // Give the ticket back (best effort; it expires anyway).
                let _ = self.update_dc(&me, None);
                return Err(e);
            }
        };
        self.dc_ranges.fetch_add(1, Ordering::Relaxed);
        self.update_dc(&me, Some(taken))?;
        Ok(Fetch::Moved)
    }

    /// Adds `range` (clipped to the floor) to the datacenter row and clears our ticket.
    ///
    /// Safe to repeat after a write of it was applied (its answer lost, the compare-and-set sent again
    /// and refused): the row then already holds what is left of `range` (ranges from the global row
    /// never overlap, so an overlap can only be `range` itself), or processes have taken all of it and
    /// the floor is at or past its end; either way it is not added again.
    fn update_dc(&self, me: &str, range: Option<(u64, u64)>) -> Result<()> {
        let key = self.dc_key();
        for _ in 0..1000 {
            let (raw, mut dc) = self.read_dc()?;
            let mut changed = false;
            if dc.ticket.as_ref().is_some_and(|(who, _)| who == me) {
                dc.ticket = None;
                changed = true;
            }
            if let Some((s, e)) = range {
                let s = s.max(dc.floor);
                #[cfg(feature = "planted-defects")]
                let s = if self.defect == crate::lease::Defect::RangeAddNotClipped {
                    range.map_or(s, |r| r.0)
                } else {
                    s
                };
                let held = dc.ranges.iter().any(|&(a, b)| a < e && s < b);
                #[cfg(feature = "planted-defects")]
                let held = held && self.defect != crate::lease::Defect::RangeAddWithoutOverlap;
                if s < e && !held {
                    dc.ranges.push((s, e));
                    dc.ranges.sort_unstable();
                    changed = true;
                }
            }
            if !changed {
                return Ok(());
            }
            let text = dc.text(&nonce(&*self.time));
            if let Swap::Done = self.swap(&*self.local, &key, raw.as_deref(), &text)? {
                return Ok(());
            }
        }
        Err(Error::unavailable(format!(
            "{}: range sequence {:?}: lost 1000 compare-and-set races in a row on row {key}",
            self.local.describe(),
            self.name
        )))
    }

    /// Moves the next `dc_range` values from the global row (fewer at the end of the width).
    fn take_from_global(&self) -> Result<(u64, u64)> {
        let key = &self.name;
        for _ in 0..1000 {
            let raw = self.global.row(key)?;
            let mut g = match &raw {
                None => Global {
                    bits: self.options.bits,
                    start: self.options.start,
                    next: self.options.start,
                    dcs: BTreeMap::new(),
                },
                Some(text) => {
                    Global::parse(text).ok_or_else(|| unreadable(&*self.global, key, text))?
                }
            };
            if (g.bits, g.start) != (self.options.bits, self.options.start) {
                return Err(self.conflict(g.bits, g.start, &*self.global));
            }
            if g.next >= self.limit() {
                return Err(Error::new(
                    ErrorCode::RangeExhausted,
                    format!(
                        "{}: range sequence {:?} has handed out every value of {} bits (up to {})",
                        self.global.describe(),
                        self.name,
                        self.options.bits,
                        self.limit() - 1
                    ),
                ));
            }
            let range = (
                g.next,
                self.limit()
                    .min(g.next.saturating_add(self.options.dc_range)),
            );
            g.next = range.1;
            g.dcs.insert(self.dc.clone(), range);
            let text = g.text(&nonce(&*self.time));
            if let Swap::Done = self.swap(&*self.global, key, raw.as_deref(), &text)? {
                return Ok(range);
            }
        }
        Err(Error::unavailable(format!(
            "{}: range sequence {:?}: lost 1000 compare-and-set races in a row on the global row",
            self.global.describe(),
            self.name
        )))
    }
}

enum Fetch {
    /// A range was moved into the datacenter row.
    Moved,
    /// Another process holds the fetch ticket.
    Busy,
    /// The row changed under us: read it again.
    Retry,
}

// --------------------------------------------------------------------------------------- minting

/// The minting path's state, on its own cache line: the cursor within the current range, its end, and
/// the value at which the next range is fetched.
#[derive(Debug)]
#[repr(align(64))]
struct Hot {
    cursor: AtomicU64,
    end: AtomicU64,
    trigger: AtomicU64,
}

#[derive(Debug)]
struct State {
    current: (u64, u64),
    ready: Option<(u64, u64)>,
    /// Set by a minting thread that found no range: fetch now.
    wanted: bool,
    fetching: bool,
    /// The last background fetch's error (cleared by a success).
    error: Option<Error>,
    retired: u64,
    late: u64,
    wait_ns: u64,
    stop: bool,
}

#[derive(Debug)]
struct Shared {
    hot: Hot,
    alloc: Allocator,
    state: Mutex<State>,
    cond: Condvar,
    kicked: AtomicBool,
    /// A datacenter-level pre-allocation is under way (on its own thread).
    dc_prefetching: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value whose handing out starts the next range's fetch; `e` (never handed out) for a
    /// threshold of 100 %, which fetches only when the range is used up.
    fn trigger_of(&self, (s, e): (u64, u64)) -> u64 {
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
    fn install(&self, st: &mut State, range: (u64, u64)) {
        st.retired += st.current.1 - st.current.0;
        st.current = range;
        #[cfg(feature = "planted-defects")]
        if self.alloc.defect == crate::lease::Defect::RangeEndBeforeCursor {
            self.hot.end.store(range.1, Ordering::Release); // the defect: the end first
        }
        self.hot
            .trigger
            .store(self.trigger_of(range), Ordering::Relaxed);
        self.hot.cursor.store(range.0, Ordering::Relaxed);
        self.hot.end.store(range.1, Ordering::Release);
    }

    fn kick(&self) {
        self.kicked.store(true, Ordering::Relaxed);
        let _guard = self.lock();
        self.cond.notify_all();
    }

    fn needs_fetch(&self, st: &State) -> bool {
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
    fn spawn_dc_prefetch(self: &Arc<Self>) {
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
    fn run(self: Arc<Self>) {
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
/// datacenter's store (see the [module documentation](self)). Thread-safe; one per process is enough.
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
            false,
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
        defect: crate::lease::Defect,
    ) -> Result<RangeSequence> {
        let mut alloc = Allocator::new(name, dc, global, local, options, time)?;
        alloc.defect = defect;
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

fn check_names(name: &str, dc: &str) -> Result<()> {
    check_name(name).map_err(|e| e.context("range sequence name"))?;
    check_name(dc).map_err(|e| e.context("datacenter name"))
}

/// Opens the global and the local store of two URLs (one connection when they are the same). The
/// local store is connected now; the global one on first use, so that a process whose datacenter row
/// holds values opens and serves while the global store is unreachable (SPEC §4).
pub fn open_pair(global_url: &str, local_url: &str) -> Result<(Arc<dyn Store>, Arc<dyn Store>)> {
    embedded_stores_exist(global_url, local_url)?;
    open_pair_through(global_url, local_url, Arc::new(open_store))
}

/// An embedded store named by either URL that does not exist is `STORE_NOT_FOUND` before either store
/// is opened, so that nothing is written anywhere (the global store is otherwise opened on first use,
/// after the datacenter row was written). Only the explicit create commands create a store
/// ([`crate::source::create_store`]).
fn embedded_stores_exist(global_url: &str, local_url: &str) -> Result<()> {
    // A malformed URL is left to `connect_pair` (INVALID_ARGUMENT naming it).
    let (Ok(g), Ok(l)) = (parse_store_url(global_url), parse_store_url(local_url)) else {
        return Ok(());
    };
    for (what, url) in [("global store", g), ("local store", l)] {
        if let crate::source::StoreUrl::File { dir, .. } = url {
            if !dir.is_dir() {
                // The store's own refusal (its message says how to create one); writes nothing.
                crate::file::FileStore::open(dir).map_err(|e| e.context(what))?;
            }
        }
    }
    Ok(())
}

/// [`open_pair`] with the stores opened by `open` (the deterministic simulation's stores; the global
/// store's connection on first use goes through it too).
pub fn open_pair_through(
    global_url: &str,
    local_url: &str,
    open: Arc<StoreOpener>,
) -> Result<(Arc<dyn Store>, Arc<dyn Store>)> {
    connect_pair(global_url, local_url, open, false)
}

/// The checks of a process opened by its stores' URLs, then its stores ([`RangeSequence::open_urls`],
/// and the simulation's stepped allocator with its opener and planted defect).
fn checked_pair(
    name: &str,
    dc: &str,
    (global_url, local_url): (&str, &str),
    options: &RangeOptions,
    open: Arc<StoreOpener>,
    eager_global: bool,
) -> Result<(Arc<dyn Store>, Arc<dyn Store>)> {
    options.check()?;
    check_names(name, dc)?;
    connect_pair(global_url, local_url, open, eager_global)
}

/// [`open_pair_through`]; `eager_global` is the planted defect `RangeOpenConnectsGlobal` (`false` but
/// in the simulation's proof, feature `planted-defects`): the global store connected now.
fn connect_pair(
    global_url: &str,
    local_url: &str,
    open: Arc<StoreOpener>,
    eager_global: bool,
) -> Result<(Arc<dyn Store>, Arc<dyn Store>)> {
    let g = parse_store_url(global_url).map_err(|e| e.context("global store"))?;
    let l = parse_store_url(local_url).map_err(|e| e.context("local store"))?;
    let local = open(&l).map_err(|e| e.context("local store"))?;
    let global: Arc<dyn Store> = if g == l {
        local.clone()
    } else if eager_global {
        open(&g).map_err(|e| e.context("global store"))? // the defect: connected before it is needed
    } else {
        Arc::new(LazyStore::new(g, open))
    };
    Ok((global, local))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC §4: a process opens from its datacenter's store alone; the global store is connected (through
    /// the same opener) on its first use, and again after a failed connection.
    #[test]
    fn open_pair_connects_the_global_store_on_first_use() {
        use std::sync::{atomic::AtomicBool, Mutex};
        let reachable = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(Mutex::new(Vec::new()));
        let memory: Arc<dyn Store> = Arc::new(crate::MemoryStore::new());
        let open: Arc<StoreOpener> = {
            let (reachable, opened) = (reachable.clone(), opened.clone());
            Arc::new(move |url: &crate::StoreUrl| {
                let global = url.to_string().ends_with("/global");
                if global && !reachable.load(Ordering::SeqCst) {
                    return Err(Error::unavailable("the global store is unreachable"));
                }
                opened.lock().unwrap().push(url.to_string());
                Ok(memory.clone())
            })
        };
        let (global, local) =
            open_pair_through("file:///tmp/global", "file:///tmp/dc-a", open).unwrap();
        assert_eq!(*opened.lock().unwrap(), ["file:///tmp/dc-a"]);
        assert_eq!(local.row("k").unwrap(), None);
        let e = global.row("k").unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreUnavailable);
        reachable.store(true, Ordering::SeqCst);
        assert_eq!(global.row("k").unwrap(), None);
        assert_eq!(
            *opened.lock().unwrap(),
            ["file:///tmp/dc-a", "file:///tmp/global"]
        );
    }

    #[test]
    fn rows_round_trip_and_reject_garbage() {
        let mut dcs = BTreeMap::new();
        dcs.insert("eu".to_string(), (1, 101));
        let g = Global {
            bits: 31,
            start: 1,
            next: 101,
            dcs,
        };
        assert_eq!(Global::parse(&g.text("n1")), Some(g));
        let d = Dc {
            bits: 32,
            start: 0,
            floor: 10,
            ranges: vec![(10, 20), (30, 40)],
            ticket: Some(("p".into(), 99)),
        };
        assert_eq!(Dc::parse(&d.text("n2")), Some(d.clone()));
        let empty = Dc {
            ranges: vec![],
            ticket: None,
            ..d
        };
        assert_eq!(Dc::parse(&empty.text("n3")), Some(empty));
        for bad in [
            "",
            "v2 bits=31 start=1 next=1 by=x",
            "v1 bits=x start=1 next=1",
            "v1 bits=31 bits=31 start=1 next=1",
            "v1 bits=31 start=1 next=1 dc.eu=5-5",
        ] {
            assert_eq!(Global::parse(bad), None, "{bad}");
        }
        assert_eq!(
            Dc::parse("v1 bits=31 start=1 floor=0 ranges=3-2 fetch=- by=x"),
            None
        );
    }
}

/// The allocation algorithm with no thread of its own (feature `planted-defects`): a deterministic
/// simulation takes each process range and each datacenter pre-allocation itself, when it decides.
#[cfg(feature = "planted-defects")]
#[derive(Debug)]
pub struct SteppedAllocator(Allocator);

#[cfg(feature = "planted-defects")]
impl SteppedAllocator {
    /// One process of datacenter `dc` (what [`RangeSequence::open_with_time`] builds), with a defect.
    pub fn new(
        name: &str,
        dc: &str,
        global: Arc<dyn Store>,
        local: Arc<dyn Store>,
        options: RangeOptions,
        time: Arc<dyn Time>,
        defect: crate::lease::Defect,
    ) -> Result<SteppedAllocator> {
        let mut alloc = Allocator::new(name, dc, global, local, options, time)?;
        alloc.defect = defect;
        Ok(SteppedAllocator(alloc))
    }

    /// One process of datacenter `dc` opened as [`RangeSequence::open_urls`] opens it, without its
    /// thread: the two stores by their URLs through `open` ([`open_pair_through`]; the defect
    /// `RangeOpenConnectsGlobal` connects the global one at once), then the first process range taken.
    /// Returns the first range and whether the datacenter row fell below the threshold (where
    /// [`RangeSequence`] starts the datacenter-level pre-allocation on a thread of its own).
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        name: &str,
        dc: &str,
        (global_url, local_url): (&str, &str),
        open: Arc<StoreOpener>,
        options: RangeOptions,
        time: Arc<dyn Time>,
        defect: crate::lease::Defect,
    ) -> Result<(SteppedAllocator, (u64, u64), bool)> {
        let eager = defect == crate::lease::Defect::RangeOpenConnectsGlobal;
        let (global, local) =
            checked_pair(name, dc, (global_url, local_url), &options, open, eager)?;
        let a = SteppedAllocator::new(name, dc, global, local, options, time, defect)?;
        let (first, low) = a.take_process_range()?;
        Ok((a, first, low))
    }

    /// The next process range `[start, end)`, and whether the datacenter row fell below the threshold.
    /// Never waits: another process's fetch in progress is `STORE_UNAVAILABLE` at once.
    pub fn take_process_range(&self) -> Result<((u64, u64), bool)> {
        self.0.take_process_range(self.0.time.monotonic_ns())
    }

    /// The datacenter-level pre-allocation.
    pub fn prefetch_dc(&self) -> Result<()> {
        self.0.prefetch_dc()
    }
}
