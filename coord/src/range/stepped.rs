//! The allocation algorithm without a thread of its own, for the deterministic simulation (feature
//! `planted-defects`).

use std::sync::Arc;

use crate::base::defect::{Defect, Hook};
use crate::base::error::Result;
use crate::base::store::Store;
use crate::base::time::Time;
use crate::stores::open::StoreOpener;

use super::allocator::Allocator;
use super::open::checked_pair;
use super::options::RangeOptions;

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
        defect: Defect,
    ) -> Result<SteppedAllocator> {
        let mut alloc = Allocator::new(name, dc, global, local, options, time)?;
        alloc.defect = Hook::planted(defect);
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
        defect: Defect,
    ) -> Result<(SteppedAllocator, (u64, u64), bool)> {
        let (global, local) = checked_pair(
            name,
            dc,
            (global_url, local_url),
            &options,
            open,
            Hook::planted(defect),
        )?;
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
