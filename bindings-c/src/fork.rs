//! Fork detection (SPEC §2).

use super::*;

// Fork detection (SPEC §2: forked children must not repeat the parent's IDs). A process-wide counter is
// bumped in every forked child by a pthread_atfork handler; a generator remembers the count it was
// created under and refuses to mint (SNOWMINT_RESULT_FORKED) when it differs: one relaxed load per call.
pub(crate) static FORKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[cfg(unix)]
extern "C" fn after_fork_in_child() {
    FORKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Registers the fork handler once; returns the current fork count.
pub(crate) fn fork_count() -> u64 {
    #[cfg(unix)]
    {
        static REGISTERED: std::sync::Once = std::sync::Once::new();
        REGISTERED.call_once(|| {
            // SAFETY: registers a handler that only touches an atomic; glibc unregisters it if the
            // shared library is unloaded.
            unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        });
    }
    FORKS.load(std::sync::atomic::Ordering::Relaxed)
}

#[inline(always)]
pub(crate) fn check_fork(created_under: u64) -> Result<(), Fail> {
    if FORKS.load(std::sync::atomic::Ordering::Relaxed) != created_under {
        return Err(Fail::Core(Error::Forked));
    }
    Ok(())
}
