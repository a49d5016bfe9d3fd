//! A value that belongs to the process that made it: a server store's connections and I/O runtime.
//!
//! A child forked after a store was opened (a pre-fork server's worker, `os.fork()`, Celery's pool)
//! has a copy of the store's memory, but its sockets, its runtime's epoll instance and eventfd are
//! shared with the parent, and its locks may be held by the parent's threads that do not exist in the
//! child. Using them there interleaves two processes' messages on one connection, steals the parent's
//! events or waits forever; dropping them deregisters the parent's sockets. So in another process the
//! value is never handed out and never dropped (its memory is left as it is): the store answers
//! `STORE_UNAVAILABLE` there, and the child opens a store of its own.

use std::mem::ManuallyDrop;

/// `T`, usable and dropped only in the process that made it.
pub(crate) struct ProcessLocal<T> {
    value: ManuallyDrop<T>,
    pid: u32,
}

impl<T> ProcessLocal<T> {
    pub(crate) fn new(value: T) -> ProcessLocal<T> {
        ProcessLocal {
            value: ManuallyDrop::new(value),
            pid: std::process::id(),
        }
    }

    /// The value in the process that made it; `None` in a process forked after.
    pub(crate) fn get(&self) -> Option<&T> {
        (std::process::id() == self.pid).then_some(&*self.value)
    }

    /// [`get`](Self::get), mutable.
    pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
        (std::process::id() == self.pid).then_some(&mut *self.value)
    }
}

/// Why a store used in a process forked after it was opened fails (`STORE_UNAVAILABLE`).
pub(crate) const FORKED: &str =
    "this store was opened by the parent of this forked process, whose \
                                 connections are not this process's; open a store in this process";

impl<T> Drop for ProcessLocal<T> {
    fn drop(&mut self) {
        if std::process::id() == self.pid {
            // SAFETY: dropped once, here; never used again.
            unsafe { ManuallyDrop::drop(&mut self.value) };
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for ProcessLocal<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.get() {
            Some(v) => v.fmt(f),
            None => f.write_str("(the parent process's)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ProcessLocal;

    #[test]
    fn another_process_neither_uses_nor_drops_the_value() {
        struct Loud(std::sync::Arc<std::sync::atomic::AtomicU32>);
        impl Drop for Loud {
            fn drop(&mut self) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let drops = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let mut here = ProcessLocal::new(Loud(drops.clone()));
        assert!(here.get().is_some() && here.get_mut().is_some());
        drop(here);
        assert_eq!(drops.load(std::sync::atomic::Ordering::SeqCst), 1);
        // As a forked child sees it: made under another process ID.
        let mut there = ProcessLocal::new(Loud(drops.clone()));
        there.pid = there.pid.wrapping_add(1);
        assert!(there.get().is_none() && there.get_mut().is_none());
        drop(there);
        assert_eq!(drops.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
