//! The fork guard (SPEC §2), from the host layer (`snowmint_host::fork`): a generator remembers the fork
//! count it was created under and refuses to mint (SNOWMINT_RESULT_FORKED) in a forked child.

use super::*;

/// Registers the fork handler once; returns the current fork count.
pub(crate) fn fork_count() -> u64 {
    snowmint_host::fork::count()
}

#[inline(always)]
pub(crate) fn check_fork(created_under: u64) -> Result<(), Fail> {
    Ok(snowmint_host::fork::check(created_under)?)
}
