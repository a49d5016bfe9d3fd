//! A generator object's own window. On an interpreter with a GIL, `Generator.next_id` hands IDs out of
//! a window the generator object holds (the core's [`SharedGenerator::next_id_in`]) rather than out of
//! the calling thread's (a thread-local, whose address a shared library computes with a call to
//! `__tls_get_addr` on every ID). The threads that share the object share its window, one at a time:
//! each ID is the window's next position, so the object's IDs strictly increase in the order the GIL
//! let the calls through.
//!
//! The rules that make the cell sound:
//! - It is reached only with the GIL held, and only on an interpreter that has one
//!   ([`gil_guards_windows`], decided once at import: a free-threaded interpreter's generators mint
//!   out of their threads' windows, as the core does by itself).
//! - Nothing releases the GIL while the cell is borrowed: in place, IDs are minted only by
//!   [`SharedGenerator::try_next_id_in`], which reads the system clock, may take a new window (one
//!   compare-and-swap) and stops where a wait would begin; a call that may wait (a wait releases the
//!   GIL) takes the window out of the cell first ([`OwnWindow::mint`]) and puts it back after. A call that found the cell empty meanwhile took a
//!   window of its own; the one put back last was taken last (after its holder's wait), so it is kept
//!   and the other closed: the object's next ID follows both.
//! - It is used only in the process that made the generator. A forked child never hands out or gives
//!   back its copy ([`OwnWindow::abandon`]: the parent hands the rest out, and a state file's word is
//!   the parent's too); the child's generator mints out of its thread's window, as before.
//! - The generator is asked for nothing else (a batch, its state or statistics, a restore, a release)
//!   until the window is closed ([`OwnWindow::close`]), so those see every ID it handed out, and the
//!   IDs after them follow them.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

use snowmint::{Ceiling, FastClock, Result, SharedGenerator, StateWord, Window};

/// Whether generators' windows may be held by the objects (see the module docs): set at import.
static GIL_GUARDS_WINDOWS: AtomicBool = AtomicBool::new(false);

/// Records at import whether the interpreter has a GIL: not on a free-threaded interpreter running
/// without one (`sys._is_gil_enabled()`, CPython 3.13 and later; a GIL once enabled stays enabled).
pub(crate) fn note_interpreter(py: pyo3::Python<'_>) -> pyo3::PyResult<()> {
    use pyo3::types::PyAnyMethods;
    let sys = py.import("sys")?;
    let gil = match sys.getattr("_is_gil_enabled") {
        Ok(f) => f.call0()?.is_truthy()?,
        Err(_) => true,
    };
    GIL_GUARDS_WINDOWS.store(gil, Ordering::Relaxed);
    Ok(())
}

/// Whether generators made now hold their own windows.
pub(crate) fn gil_guards_windows() -> bool {
    GIL_GUARDS_WINDOWS.load(Ordering::Relaxed)
}

/// The window and the generator it is of (null: none). For a lease source the generator is that of
/// the lease held when the window was taken: every lease a source held lives as long as the source.
pub(crate) struct OwnWindow<G> {
    cell: UnsafeCell<Held<G>>,
}

struct Held<G> {
    window: Window,
    of: *const G,
}

// SAFETY: the cell is reached only by the thread holding the GIL (see the module docs), and `of`
// points at a generator that is itself `Sync` and outlives the window.
unsafe impl<G: Sync> Sync for OwnWindow<G> {}
// SAFETY: as above; the window is plain data.
unsafe impl<G: Sync> Send for OwnWindow<G> {}

impl<S: StateWord, L: Ceiling> OwnWindow<SharedGenerator<S, L>> {
    pub(crate) fn new() -> Self {
        OwnWindow {
            cell: UnsafeCell::new(Held {
                window: Window::EMPTY,
                of: std::ptr::null(),
            }),
        }
    }

    /// One ID of `g` from the system clock with the window in place
    /// ([`SharedGenerator::try_next_id_in`]: nothing that waits); `None` where a wait may be needed:
    /// then [`mint`](Self::mint).
    ///
    /// # Safety
    /// The caller holds the GIL on an interpreter that has one ([`gil_guards_windows`] when the
    /// generator was made), in the process that made the generator; `g` outlives the window.
    #[inline(always)]
    pub(crate) unsafe fn try_mint(&self, g: &SharedGenerator<S, L>) -> Option<Result<u64>> {
        // SAFETY: the caller's contract: the one thread holding the GIL, and nothing below releases it.
        let held = unsafe { &mut *self.cell.get() };
        if !std::ptr::eq(held.of, g) {
            return None;
        }
        g.try_next_id_in(&mut held.window, &FastClock)
    }

    /// One ID of `g` from the system clock through the window ([`SharedGenerator::next_id_in`]),
    /// taken out of the cell while `sleep` (which may release the GIL) can run. A window of another
    /// generator (an earlier lease's) is closed first.
    ///
    /// # Safety
    /// As [`try_mint`](Self::try_mint).
    #[inline(never)]
    pub(crate) unsafe fn mint(
        &self,
        g: &SharedGenerator<S, L>,
        sleep: impl FnMut(u64),
    ) -> Result<u64> {
        // SAFETY: the caller's contract; the borrow ends before anything that may release the GIL.
        let mut window = unsafe { self.take_for(g) };
        let r = g.next_id_in(&mut window, &FastClock, sleep);
        // SAFETY: as above (the GIL is held again when `next_id_in` returns).
        unsafe { self.put_back(g, window) };
        r
    }

    /// The window of `g`, taken out of the cell (left empty).
    unsafe fn take_for(&self, g: &SharedGenerator<S, L>) -> Window {
        // SAFETY: the caller's contract.
        let held = unsafe { &mut *self.cell.get() };
        let of = std::mem::replace(&mut held.of, std::ptr::null());
        let mut window = std::mem::replace(&mut held.window, Window::EMPTY);
        if std::ptr::eq(of, g) {
            return window;
        }
        if !of.is_null() {
            // SAFETY: `of` outlives the window (the caller's contract).
            unsafe { &*of }.close_window(&mut window);
        }
        Window::EMPTY
    }

    /// Puts `window` (of `g`) back. A window another call put in the cell meanwhile was taken before
    /// this one (this one's holder waited, and took it after): it is closed.
    unsafe fn put_back(&self, g: &SharedGenerator<S, L>, window: Window) {
        // SAFETY: the caller's contract.
        let held = unsafe { &mut *self.cell.get() };
        if !held.of.is_null() {
            // SAFETY: `of` outlives the window.
            unsafe { &*held.of }.close_window(&mut held.window);
        }
        held.of = g;
        held.window = window;
    }

    /// Closes the window ([`SharedGenerator::close_window`]): before the generator is asked for
    /// anything else.
    ///
    /// # Safety
    /// As [`try_mint`](Self::try_mint), except that any thread may call it with the GIL held.
    pub(crate) unsafe fn close(&self) {
        // SAFETY: the caller's contract.
        let held = unsafe { &mut *self.cell.get() };
        if !held.of.is_null() {
            // SAFETY: `of` outlives the window.
            unsafe { &*held.of }.close_window(&mut held.window);
        }
    }

    /// Drops the window in a forked child ([`SharedGenerator::abandon_window`]): nothing handed out,
    /// nothing given back. Idempotent.
    ///
    /// # Safety
    /// The caller holds the GIL (a forked child has one thread); `of` outlives the window.
    pub(crate) unsafe fn abandon(&self) {
        // SAFETY: the caller's contract.
        let held = unsafe { &mut *self.cell.get() };
        let of = std::mem::replace(&mut held.of, std::ptr::null());
        if !of.is_null() {
            // SAFETY: `of` outlives the window.
            unsafe { &*of }.abandon_window(&mut held.window);
        }
        held.window = Window::EMPTY;
    }
}
