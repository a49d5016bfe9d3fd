//! A small allocator for the single-threaded wasm module: power-of-two size classes with one free list
//! each, carved from `memory.grow`. The default (dlmalloc) costs about 8 KB of the module; this one a
//! few hundred bytes, which keeps the optimized `.wasm` inside its 60.5 KB budget. Memory freed is reused
//! for blocks of the same class and never returned to the host (wasm memory cannot shrink anyway).

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;

const PAGE: usize = 65_536;
/// Smallest block: room for the free-list link.
const MIN_CLASS: u32 = 3;
const CLASSES: usize = usize::BITS as usize;

pub struct SizeClasses {
    state: UnsafeCell<State>,
}

struct State {
    /// Head of the free list of blocks of `1 << k` bytes (0: empty).
    free: [usize; CLASSES],
    /// Unused memory between `next` and `end`.
    next: usize,
    end: usize,
}

// wasm32-unknown-unknown without the atomics feature has one thread.
unsafe impl Sync for SizeClasses {}

impl SizeClasses {
    pub const fn new() -> Self {
        SizeClasses {
            state: UnsafeCell::new(State {
                free: [0; CLASSES],
                next: 0,
                end: 0,
            }),
        }
    }
}

/// The class (log2 of the block size) that holds `layout`, if any.
#[inline]
fn class(layout: Layout) -> Option<u32> {
    let need = layout.size().max(layout.align()).max(1 << MIN_CLASS);
    let block = need.checked_next_power_of_two()?;
    Some(block.trailing_zeros())
}

impl State {
    unsafe fn carve(&mut self, k: u32) -> *mut u8 {
        let size = 1usize << k;
        let align = size.min(PAGE);
        let mut start = (self.next + align - 1) & !(align - 1);
        let fits = |start: usize, end: usize| start.checked_add(size).is_some_and(|e| e <= end);
        if self.end == 0 || !fits(start, self.end) {
            let want = match start.checked_add(size) {
                Some(e) if self.end != 0 => e - self.end,
                _ => size + align,
            };
            let pages = want.div_ceil(PAGE);
            let old = core::arch::wasm32::memory_grow(0, pages);
            if old == usize::MAX {
                return core::ptr::null_mut();
            }
            let grown_from = old * PAGE;
            if grown_from != self.end {
                // First use (or memory grown by someone else): start over in the new region.
                self.next = grown_from;
            }
            self.end = grown_from + pages * PAGE;
            start = (self.next + align - 1) & !(align - 1);
            if !fits(start, self.end) {
                return core::ptr::null_mut();
            }
        }
        self.next = start + size;
        start as *mut u8
    }
}

unsafe impl GlobalAlloc for SizeClasses {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(k) = class(layout) else {
            return core::ptr::null_mut();
        };
        if layout.align() > PAGE || k as usize >= CLASSES {
            return core::ptr::null_mut();
        }
        let st = &mut *self.state.get();
        let head = st.free[k as usize];
        if head != 0 {
            st.free[k as usize] = *(head as *const usize);
            return head as *mut u8;
        }
        st.carve(k)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(k) = class(layout) {
            let st = &mut *self.state.get();
            *(ptr as *mut usize) = st.free[k as usize];
            st.free[k as usize] = ptr as usize;
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        if class(layout) == class(new_layout) {
            return ptr;
        }
        let new = self.alloc(new_layout);
        if !new.is_null() {
            core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        new
    }
}
