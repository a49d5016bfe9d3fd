//! How a range sequence allocates ([`RangeOptions`]) and what it has done ([`RangeStats`]).

use std::time::Duration;

#[cfg(doc)]
use super::sequence::RangeSequence;
use crate::base::error::{Error, Result};

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
