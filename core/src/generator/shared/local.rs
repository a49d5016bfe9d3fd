//! Each thread's window (see [`Windows`]): the generator it is of and the window, in thread-locals
//! without a destructor (reaching them costs an address computation); the generator's tally of closed
//! windows beside them, whose destructor credits the window when the thread exits.

use super::Window;
use core::cell::Cell;
use core::sync::atomic::AtomicU64;
use std::cell::RefCell;
use std::sync::Arc;

std::thread_local! {
    /// The window and the generator it is of, in one thread-local (one address to compute).
    pub(super) static SLOT: Slot = const { Slot::new() };
    static TALLY: Tally = const { Tally(RefCell::new(None)) };
}

/// A thread's window, field by field: the hot path reads three fields and writes `next` alone
/// (copying the whole window in and out of a `Cell` made the optimizer reload it across stores
/// of different widths, which stalled store forwarding).
pub(super) struct Slot {
    /// The generator the window is of (0: none).
    pub(super) uid: Cell<u64>,
    pub(super) start_ns: Cell<u64>,
    tick: Cell<u64>,
    first: Cell<u64>,
    pub(super) next: Cell<u64>,
    pub(super) end: Cell<u64>,
    size: Cell<u64>,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            uid: Cell::new(0),
            start_ns: Cell::new(0),
            tick: Cell::new(0),
            first: Cell::new(0),
            next: Cell::new(0),
            end: Cell::new(0),
            size: Cell::new(0),
        }
    }

    pub(super) fn get(&self) -> Window {
        Window {
            start_ns: self.start_ns.get(),
            tick: self.tick.get(),
            first: self.first.get(),
            next: self.next.get(),
            end: self.end.get(),
            size: self.size.get(),
        }
    }

    pub(super) fn set(&self, w: Window) {
        self.start_ns.set(w.start_ns);
        self.tick.set(w.tick);
        self.first.set(w.first);
        self.next.set(w.next);
        self.end.set(w.end);
        self.size.set(w.size);
    }

    fn take(&self) -> Window {
        let w = self.get();
        self.set(Window::EMPTY);
        self.uid.set(0);
        w
    }
}

/// The tally of `UID`'s generator.
struct Tally(RefCell<Option<Arc<AtomicU64>>>);

impl Drop for Tally {
    fn drop(&mut self) {
        leave(self.0.get_mut().take());
    }
}

#[cfg(all(unix, not(miri)))]
extern "C" {
    fn pthread_atfork(
        prepare: Option<unsafe extern "C" fn()>,
        parent: Option<unsafe extern "C" fn()>,
        child: Option<unsafe extern "C" fn()>,
    ) -> i32;
}

/// In a forked child (the one thread there is the one that forked): drops the window inherited
/// from the parent, whose rest the parent hands out (a state file's word is shared with it). The
/// child's counters are a copy of the parent's: they get the window's credit as at a close (its
/// IDs handed out before the fork; the rest skipped), so the child's `minted` is exact too. Only
/// plain loads and stores and one atomic addition (async-signal-safe): the tally was set up
/// with the window, and is not borrowed mutably outside `adopt`, which does not fork.
#[cfg(all(unix, not(miri)))]
unsafe extern "C" fn forked_child() {
    let w = SLOT.try_with(Slot::take).unwrap_or(Window::EMPTY);
    if w.handed() != 0 {
        let _ = TALLY.try_with(|t| {
            if let Ok(t) = t.0.try_borrow() {
                if let Some(closed) = t.as_ref() {
                    super::credit(closed, w.handed());
                }
            }
        });
    }
}

/// Leaves the thread's window: its rest is skipped, and what it handed out credited to `closed`
/// (the tally of the generator it is of).
fn leave(closed: Option<Arc<AtomicU64>>) {
    let w = SLOT.try_with(Slot::take).unwrap_or(Window::EMPTY);
    if let Some(closed) = closed {
        if w.handed() != 0 {
            super::credit(&closed, w.handed());
        }
    }
}

/// Makes the thread's window one of generator `uid` (tally `closed`), leaving the one it had.
/// During thread exit this does nothing, and the caller mints without a window.
pub(super) fn adopt(uid: u64, closed: &Arc<AtomicU64>) {
    #[cfg(all(unix, not(miri)))]
    {
        static REGISTERED: std::sync::Once = std::sync::Once::new();
        REGISTERED.call_once(|| {
            // SAFETY: registers a handler that touches only this thread's destructor-free
            // thread-locals (plain stores: async-signal-safe).
            unsafe { pthread_atfork(None, None, Some(forked_child)) };
        });
    }
    let _ = TALLY.try_with(|t| {
        if let Ok(mut t) = t.0.try_borrow_mut() {
            leave(t.replace(closed.clone()));
            SLOT.with(|s| s.uid.set(uid));
        }
    });
}
