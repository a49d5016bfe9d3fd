//! The allocation algorithm: a process range taken from the datacenter row, a datacenter range moved
//! from the global row, each by compare-and-set on the row it read.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use snowmint::ErrorCode;

use crate::base::defect::{Defect, Hook};
use crate::base::error::{Error, Result};
use crate::base::store::Store;
use crate::base::sync::thread::{self};
use crate::base::sync::AtomicU64;
use crate::base::time::Time;

use super::options::RangeOptions;
use super::rows::{check_names, nonce, unreadable, Dc, Global, TICKET_MS};

/// The allocation algorithm over two stores, without the minting state (shared by the background
/// thread and `open`).
#[derive(Debug)]
pub(super) struct Allocator {
    pub(super) name: String,
    pub(super) dc: String,
    pub(super) global: Arc<dyn Store>,
    pub(super) local: Arc<dyn Store>,
    pub(super) options: RangeOptions,
    pub(super) time: Arc<dyn Time>,
    pub(super) process_ranges: AtomicU64,
    pub(super) dc_ranges: AtomicU64,
    /// A defect planted on purpose (feature `planted-defects`, the simulation's own tests).
    pub(super) defect: Hook,
}

/// What a compare-and-set came to.
pub(super) enum Swap {
    Done,
    Lost,
}

impl Allocator {
    /// Checks the options and names.
    pub(super) fn new(
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
            defect: Hook::NONE,
        })
    }

    pub(super) fn limit(&self) -> u64 {
        1u64 << self.options.bits
    }

    pub(super) fn dc_key(&self) -> String {
        format!("{}@{}", self.name, self.dc)
    }

    pub(super) fn now_ms(&self) -> u64 {
        self.time.unix_ns() / 1_000_000
    }

    pub(super) fn conflict(&self, bits: u32, start: u64, store: &dyn Store) -> Error {
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
    pub(super) fn swap(
        &self,
        store: &dyn Store,
        key: &str,
        old: Option<&str>,
        new: &str,
    ) -> Result<Swap> {
        let current;
        let old = if self.defect.is(Defect::RangeWithoutCompare) {
            // The defect: compare against whatever the row holds now, not what was read (a blind write).
            current = store.row(key)?;
            current.as_deref()
        } else {
            old
        };
        match store.swap_row(key, old, new) {
            Ok(true) => Ok(Swap::Done),
            Ok(false) => Ok(Swap::Lost),
            Err(e)
                if e.code() == ErrorCode::StoreUnavailable
                    && self.defect.is(Defect::RangeTimeoutAsWritten) =>
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

    pub(super) fn read_dc(&self) -> Result<(Option<String>, Dc)> {
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
    pub(super) fn take_process_range(&self, deadline_ns: u64) -> Result<((u64, u64), bool)> {
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
    pub(super) fn prefetch_dc(&self) -> Result<()> {
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
    pub(super) fn fetch_dc_range(&self, raw: Option<&str>, mut dc: Dc) -> Result<Fetch> {
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
    pub(super) fn update_dc(&self, me: &str, range: Option<(u64, u64)>) -> Result<()> {
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
                let s = if self.defect.is(Defect::RangeAddNotClipped) {
                    range.map_or(s, |r| r.0)
                } else {
                    s
                };
                let held = dc.ranges.iter().any(|&(a, b)| a < e && s < b);
                let held = held && !self.defect.is(Defect::RangeAddWithoutOverlap);
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
    pub(super) fn take_from_global(&self) -> Result<(u64, u64)> {
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

pub(super) enum Fetch {
    /// A range was moved into the datacenter row.
    Moved,
    /// Another process holds the fetch ticket.
    Busy,
    /// The row changed under us: read it again.
    Retry,
}
