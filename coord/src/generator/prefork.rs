//! The generators given back before a fork ([`SequencerGenerator::give_back_if_unused`]): a binding
//! registers the generators it keeps at a fixed address (boxed); a `pthread_atfork` prepare handler
//! (installed by the first registration) calls [`give_back_unused`] in the forking thread before
//! every `fork()`, whoever calls it (Python's `os.fork`, uWSGI's or Celery's master, C code). It runs
//! before the fork, not in the child, so it may take locks and talk to the store.

use super::SequencerGenerator;
use std::sync::{Mutex, Once};

static INSTALL: Once = Once::new();

extern "C" fn prepare() {
    give_back_unused();
}

/// Addresses of registered generators; a generator leaves (in its `Drop`, under this lock) before
/// its memory is freed, so every address here is live while the lock is held.
static REGISTERED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Registers `g`, which must not move until it is dropped (it is kept in a `Box`).
pub fn register(g: &SequencerGenerator) {
    if g.reopens_in_child() {
        // SAFETY: a plain function; it runs before the fork, in the forking thread.
        INSTALL.call_once(|| unsafe {
            libc::pthread_atfork(Some(prepare), None, None);
        });
        let mut r = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        r.push(g as *const SequencerGenerator as usize);
    }
}

pub(super) fn unregister(g: &SequencerGenerator) {
    let at = g as *const SequencerGenerator as usize;
    let mut r = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
    r.retain(|&a| a != at);
}

/// Before a fork: every registered generator that has minted nothing releases its lease (it claims
/// again on first use). Returns how many did.
pub fn give_back_unused() -> usize {
    let r = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
    r.iter()
        // SAFETY: registered addresses are live while the lock is held (see `REGISTERED`).
        .filter(|&&a| {
            unsafe { &*(a as *const SequencerGenerator) }.give_back_if_unused() == Ok(true)
        })
        .count()
}
