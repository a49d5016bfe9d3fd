//! The words a lease's generator mints under: its state word and ceiling, in this process or in a shared
//! lease's state file.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use snowmint::SharedGenerator;

use crate::base::sync::{self};
use crate::shared_lease::SharedFile;

/// A 64-bit word of a lease: in this process's memory, or one of a state file's words (a lease shared
/// by the host's processes), kept alive by its owner as long as the word is.
#[derive(Clone)]
pub struct Word {
    pub(super) ptr: NonNull<AtomicU64>,
    pub(super) _owner: Arc<dyn std::any::Any + Send + Sync>,
}

// SAFETY: `ptr` points into `_owner` (an `Arc<AtomicU64>` or a mapped state file) and is only used
// through atomics.
unsafe impl Send for Word {}
unsafe impl Sync for Word {}

impl Word {
    pub(super) fn memory(value: u64) -> Word {
        let owner = Arc::new(AtomicU64::new(value));
        Word {
            ptr: NonNull::from(&*owner),
            _owner: owner,
        }
    }

    pub(super) fn in_file(file: &SharedFile, index: usize) -> Word {
        Word {
            ptr: NonNull::from(file.word(index)),
            _owner: file.file.clone(),
        }
    }
}

impl std::ops::Deref for Word {
    type Target = AtomicU64;

    #[inline(always)]
    fn deref(&self) -> &AtomicU64 {
        // SAFETY: see the Send/Sync impls: the pointee lives as long as `self`.
        unsafe { self.ptr.as_ref() }
    }
}

impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Word({})", self.load(Ordering::Relaxed))
    }
}

impl snowmint::StateWord for Word {
    #[inline(always)]
    fn word(&self) -> &AtomicU64 {
        self
    }
}

/// A lease generator's ceiling: the lease's (in this process, or the shared state file's), capped by
/// this process (zero once it released the lease or in a forked child, which must not mint under a
/// claim other processes keep).
#[derive(Clone, Debug)]
pub struct LeaseCeiling {
    pub(super) word: Word,
    pub(super) cap: Arc<sync::AtomicU64>,
}

impl snowmint::Ceiling for LeaseCeiling {
    #[inline(always)]
    fn limit(&self) -> u64 {
        self.word
            .load(Ordering::Relaxed)
            .min(self.cap.load(Ordering::Relaxed))
    }
}

/// A generator that mints under a node-ID lease: the lock-free [`SharedGenerator`] with a ceiling (its
/// state word and ceiling in this process, or in the state file of a shared lease).
pub type CeiledGenerator = SharedGenerator<Word, LeaseCeiling>;
