//! Write identities: a nonce no other write uses, so that a store client that sends a write again
//! (its first answer lost) can tell its own applied write from another writer's ([`crate::store`]'s
//! re-send rule).

use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh nonce: 64 random bits drawn once per process (so that processes with the same PID on other
/// hosts or in other containers differ), a counter, and `salt` (the caller's clock reading).
pub(crate) fn fresh(salt: u64) -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static PROCESS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let process = PROCESS.get_or_init(|| {
        // The standard library seeds each RandomState's keys from the operating system.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.finish()
    });
    format!(
        "{process:016x}.{}.{}",
        COUNTER.fetch_add(1, Ordering::Relaxed),
        salt % 1_000_000_007
    )
}
