//! Fork safety: a child process forked from one holding leases shares their generators' memory but not
//! their keepers, and its claims are the parent's. At the fork, every lease in the child stops at once
//! (ceiling zero, state lost), so the child can never mint an ID its parent mints.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once, Weak};

use super::shared::Shared;

/// The live leases, guarded by a spin lock the fork handlers can take and release (a mutex held
/// across `fork` would stay locked in the child).
struct Registry {
    locked: AtomicBool,
    leases: UnsafeCell<Vec<Weak<Shared>>>,
}

// SAFETY: `leases` is only touched while `locked` is held.
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry {
    locked: AtomicBool::new(false),
    leases: UnsafeCell::new(Vec::new()),
};
static INSTALL: Once = Once::new();

fn lock() {
    while REGISTRY
        .locked
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::hint::spin_loop();
    }
}

fn unlock() {
    REGISTRY.locked.store(false, Ordering::Release);
}

extern "C" fn prepare() {
    lock();
}

extern "C" fn parent() {
    unlock();
}

extern "C" fn child() {
    // SAFETY: the lock is held (taken in `prepare`, before the fork).
    let leases = unsafe { &*REGISTRY.leases.get() };
    for l in leases {
        // Only atomic operations here: `upgrade` and the stores of `forked`.
        if let Some(shared) = l.upgrade() {
            shared.forked();
            // Keep the count as it was: dropping here could run destructors in the child.
            std::mem::forget(shared);
        }
    }
    unlock();
}

pub(super) fn register(shared: &Arc<Shared>) {
    INSTALL.call_once(|| {
        // SAFETY: three plain functions that take no locks but the registry's spin lock.
        unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
    });
    lock();
    // SAFETY: the lock is held.
    let leases = unsafe { &mut *REGISTRY.leases.get() };
    leases.retain(|l| l.strong_count() > 0);
    leases.push(Arc::downgrade(shared));
    unlock();
}
