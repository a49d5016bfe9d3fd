//! A binding object's own window: a generator object that only one thread reaches at a time (Python's,
//! under the GIL; Node's, on its environment's thread) hands IDs out of a window it holds (the core's
//! [`SharedGenerator::next_id_in`](snowmint::SharedGenerator::next_id_in)) rather than out of the calling thread's (a thread-local, whose
//! address a shared library computes with a call to `__tls_get_addr` on every ID).
//!
//! The rules that make the cell sound, which every caller keeps (the methods are `unsafe`):
//! - One call at a time reaches it: the binding's lock (the GIL) or its one thread.
//! - Nothing lets another call in while the cell is borrowed: in place, IDs are minted only by
//!   [`SharedGenerator::try_next_id_in`](snowmint::SharedGenerator::try_next_id_in), which reads the system clock, may take a new window (one
//!   compare-and-swap) and stops where a wait would begin; a call that may wait (a wait may release the
//!   binding's lock) takes the window out of the cell first ([`OwnWindow::mint`](crate::window::OwnWindow::mint)) and puts it back
//!   after. A call that found the cell empty meanwhile took a window of its own; the one put back last
//!   was taken last (after its holder's wait), so it is kept and the other closed: the object's next
//!   ID follows both.
//! - It is used only in the process that made the generator. A forked child never hands out or gives
//!   back its copy ([`OwnWindow::abandon`](crate::window::OwnWindow::abandon): the parent hands the rest out, and a state file's word is
//!   the parent's too).
//! - The generator is asked for nothing else (a batch, its state or statistics, a restore, a release)
//!   until the window is closed ([`OwnWindow::close`](crate::window::OwnWindow::close)), so those see every ID it handed out, and the
//!   IDs after them follow them.

use core::cell::UnsafeCell;

use snowmint::{Ceiling, Clock, FastClock, Result, SharedGenerator, StateWord, Window};

/// The window and the generator it is of (null: none). For a lease source the generator is that of
/// the lease held when the window was taken: every lease a source held lives as long as the source.
pub struct OwnWindow<G> {
    cell: UnsafeCell<Held<G>>,
    /// The defect planted on purpose, if any (zero-sized and none without the feature).
    defect: Hook,
}

/// The defects planted on purpose in the windows (feature `planted-defects`), for the simulation's
/// windows world (`sim/src/worlds/windows.rs`), which must catch each. This crate sits below the
/// coordination crate (the bindings and the WASM package use it without coord), so the windows' defects
/// are not coord's `Defect`; the hook is written as coord's is: one field, zero-sized without the
/// feature, asked `is`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowDefect {
    /// [`try_mint`](OwnWindow::try_mint) hands out of the window without checking that it is `g`'s (a
    /// window of an earlier lease's generator goes on under the new one).
    IgnoresOwner,
    /// A window put back after a wait ([`mint`](OwnWindow::mint)) is closed, and the window another
    /// call put in the cell during the wait (taken before it) kept.
    KeepsEarlier,
}

/// The defect planted in a window: with the feature `planted-defects`, which one (if any); without it,
/// nothing (zero-sized, never on).
#[derive(Clone, Copy, Debug, Default)]
struct Hook(#[cfg(feature = "planted-defects")] Option<WindowDefect>);

impl Hook {
    /// Whether `d` is the defect planted: always `false` without the feature.
    #[inline(always)]
    fn is(self, d: WindowDefect) -> bool {
        #[cfg(feature = "planted-defects")]
        return self.0 == Some(d);
        #[cfg(not(feature = "planted-defects"))]
        {
            let _ = d;
            false
        }
    }
}

struct Held<G> {
    window: Window,
    of: *const G,
}

// SAFETY: every method that reaches the cell is `unsafe`, its caller bound to reach it from one thread
// at a time (see the module docs), and `of` points at a generator that is itself `Sync` and outlives
// the window.
unsafe impl<G: Sync> Sync for OwnWindow<G> {}
// SAFETY: as above; the window is plain data.
unsafe impl<G: Sync> Send for OwnWindow<G> {}

impl<S: StateWord, L: Ceiling> Default for OwnWindow<SharedGenerator<S, L>> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: StateWord, L: Ceiling> OwnWindow<SharedGenerator<S, L>> {
    /// No window yet.
    pub fn new() -> Self {
        OwnWindow {
            cell: UnsafeCell::new(Held {
                window: Window::EMPTY,
                of: core::ptr::null(),
            }),
            defect: Hook::default(),
        }
    }

    /// No window yet, and the planted defect `d` (feature `planted-defects` only: the simulation proves
    /// it catches it).
    #[cfg(feature = "planted-defects")]
    #[doc(hidden)]
    pub fn planted(d: WindowDefect) -> Self {
        OwnWindow {
            defect: Hook(Some(d)),
            ..Self::new()
        }
    }

    fn owner_checked(&self) -> bool {
        !self.defect.is(WindowDefect::IgnoresOwner)
    }

    /// One ID of `g` from the system clock with the window in place
    /// ([`SharedGenerator::try_next_id_in`]: nothing that waits); `None` where a wait may be needed:
    /// then [`mint`](Self::mint).
    ///
    /// # Safety
    /// No other call reaches the window meanwhile (see the module docs), in the process that made the
    /// generator; `g` outlives the window.
    #[inline(always)]
    pub unsafe fn try_mint(&self, g: &SharedGenerator<S, L>) -> Option<Result<u64>> {
        // SAFETY: the caller's contract.
        unsafe { self.try_mint_from(g, &FastClock) }
    }

    /// [`try_mint`](Self::try_mint) from `clock` (the simulation's injected clocks).
    ///
    /// # Safety
    /// As [`try_mint`](Self::try_mint); `clock` calls nothing that reaches the window.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn try_mint_from<C: Clock + ?Sized>(
        &self,
        g: &SharedGenerator<S, L>,
        clock: &C,
    ) -> Option<Result<u64>> {
        // SAFETY: the caller's contract; nothing below calls out but the clock.
        let held = unsafe { &mut *self.cell.get() };
        if !core::ptr::eq(held.of, g) && self.owner_checked() {
            return None;
        }
        g.try_next_id_in(&mut held.window, clock)
    }

    /// One ID of `g` from the system clock: in place ([`try_mint`](Self::try_mint)), else through
    /// [`mint`](Self::mint), which may call `sleep`.
    ///
    /// # Safety
    /// As [`try_mint`](Self::try_mint).
    #[inline(always)]
    pub unsafe fn next_id(&self, g: &SharedGenerator<S, L>, sleep: impl FnMut(u64)) -> Result<u64> {
        // SAFETY: the caller's contract.
        unsafe {
            match self.try_mint(g) {
                Some(r) => r,
                None => self.mint(g, sleep),
            }
        }
    }

    /// One ID of `g` from the system clock through the window ([`SharedGenerator::next_id_in`]),
    /// taken out of the cell while `sleep` (which may let another call in: Python's GIL) runs. A window of another
    /// generator (an earlier lease's) is closed first.
    ///
    /// # Safety
    /// As [`try_mint`](Self::try_mint).
    #[inline(never)]
    pub unsafe fn mint(&self, g: &SharedGenerator<S, L>, sleep: impl FnMut(u64)) -> Result<u64> {
        // SAFETY: the caller's contract.
        unsafe { self.mint_from(g, &FastClock, sleep) }
    }

    /// [`mint`](Self::mint) from `clock` (the simulation's injected clocks).
    ///
    /// # Safety
    /// As [`try_mint`](Self::try_mint); `clock` calls nothing that reaches the window.
    #[doc(hidden)]
    pub unsafe fn mint_from<C: Clock + ?Sized>(
        &self,
        g: &SharedGenerator<S, L>,
        clock: &C,
        sleep: impl FnMut(u64),
    ) -> Result<u64> {
        // SAFETY: the caller's contract; the borrow ends before `sleep` may run.
        let mut window = unsafe { self.take_for(g) };
        let r = g.next_id_in(&mut window, clock, sleep);
        // SAFETY: as above (the caller's exclusive access is back when `next_id_in` returns).
        unsafe { self.put_back(g, window) };
        r
    }

    /// The window of `g`, taken out of the cell (left empty).
    unsafe fn take_for(&self, g: &SharedGenerator<S, L>) -> Window {
        // SAFETY: the caller's contract.
        let held = unsafe { &mut *self.cell.get() };
        let of = core::mem::replace(&mut held.of, core::ptr::null());
        let mut window = core::mem::replace(&mut held.window, Window::EMPTY);
        if core::ptr::eq(of, g) {
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
        if self.defect.is(WindowDefect::KeepsEarlier) && core::ptr::eq(held.of, g) {
            let mut window = window;
            g.close_window(&mut window);
            return;
        }
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
    /// As [`try_mint`](Self::try_mint), except that it may be called in any process.
    pub unsafe fn close(&self) {
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
    /// No other call reaches the window meanwhile; `of` outlives the window.
    pub unsafe fn abandon(&self) {
        // SAFETY: the caller's contract.
        let held = unsafe { &mut *self.cell.get() };
        let of = core::mem::replace(&mut held.of, core::ptr::null());
        if !of.is_null() {
            // SAFETY: `of` outlives the window.
            unsafe { &*of }.abandon_window(&mut held.window);
        }
        held.window = Window::EMPTY;
    }
}
