//! The rows: the global row and the datacenter rows as stored (their text, read and checked), and as
//! [`RangeSequence::show`] and [`RangeSequence::show_datacenter`] return them.

use std::collections::BTreeMap;

#[cfg(doc)]
use super::sequence::RangeSequence;
use crate::base::error::{Error, Result};
use crate::base::name::check_name;
use crate::base::store::Store;
use crate::base::time::Time;

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

pub(super) const TICKET_MS: u64 = 5_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Global {
    pub(super) bits: u32,
    pub(super) start: u64,
    pub(super) next: u64,
    pub(super) dcs: BTreeMap<String, (u64, u64)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Dc {
    pub(super) bits: u32,
    pub(super) start: u64,
    pub(super) floor: u64,
    pub(super) ranges: Vec<(u64, u64)>,
    /// The nonce of the process fetching, and until when (Unix ms).
    pub(super) ticket: Option<(String, u64)>,
}

pub(super) fn pair(v: &str) -> Option<(u64, u64)> {
    let (a, b) = v.split_once('-')?;
    let (a, b) = (a.parse().ok()?, b.parse().ok()?);
    (a < b).then_some((a, b))
}

pub(super) fn fields(text: &str) -> Option<BTreeMap<&str, &str>> {
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
    pub(super) fn parse(text: &str) -> Option<Global> {
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

    pub(super) fn text(&self, nonce: &str) -> String {
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
    pub(super) fn parse(text: &str) -> Option<Dc> {
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

    pub(super) fn text(&self, nonce: &str) -> String {
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

    pub(super) fn held(&self) -> u64 {
        self.ranges.iter().map(|(a, b)| b - a).sum()
    }
}

/// `STORE_UNAVAILABLE` for a row whose text is not a range sequence row.
pub(super) fn unreadable(store: &dyn Store, key: &str, text: &str) -> Error {
    Error::unavailable(format!(
        "{}: row {key} is not a range sequence row: {text:?}",
        store.describe()
    ))
}

/// Reads and parses a row (`None`: never written).
pub(super) fn read_row<T>(
    store: &dyn Store,
    key: &str,
    parse: fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    match store.row(key)? {
        None => Ok(None),
        Some(text) => parse(&text)
            .map(Some)
            .ok_or_else(|| unreadable(store, key, &text)),
    }
}

/// A fresh nonce for one write, the write's identity ([`crate::base::nonce`]).
pub(super) fn nonce(time: &dyn Time) -> String {
    crate::base::nonce::fresh(time.unix_ns())
}

pub(super) fn check_names(name: &str, dc: &str) -> Result<()> {
    check_name(name).map_err(|e| e.context("range sequence name"))?;
    check_name(dc).map_err(|e| e.context("datacenter name"))
}
