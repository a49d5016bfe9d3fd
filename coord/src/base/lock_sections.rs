//! Sections under a host file lock, as a fork sees them.
//!
//! A process forked while one of its threads is inside such a section (the embedded store's lock, a
//! row's, a claim record's) shares the section's locked open file description. The parent's thread
//! ends the section with an explicit unlock, which frees the lock whoever else holds a copy of the
//! description. But should the parent die first (killed between the fork and the unlock), the child's
//! copy would keep the lock for as long as the child lives — and the child never closes it, since the
//! thread that owned it does not exist there: the child's own sections, and every other process's,
//! would wait on it. So each section is registered here before its lock is taken and until it is
//! released, and a `pthread_atfork` child handler lets go of the child's copies ([`let_go_in_child`]:
//! the descriptor then names `/dev/null`), leaving the lock to the parent's alone.

use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

/// Sections open at once (a process's keepers and store calls: a few at a time).
const SLOTS: usize = 64;
/// The descriptor of each open section, or -1.
static OPEN: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];
static INSTALL: Once = Once::new();

/// An open section on a descriptor: registered from [`enter`] until [`leave`](Section::leave) (or
/// drop), which the holder calls after the unlock and before the descriptor is closed (a closed
/// descriptor's number may name another file by the time a child lets go of it).
pub(crate) struct Section(Option<usize>);

/// Registers a section on `fd`, before its lock is taken. Every slot taken (more sections at once
/// than any process has) for over a second: the section goes unregistered, covered by its explicit
/// unlock alone.
pub(crate) fn enter(fd: RawFd) -> Section {
    INSTALL.call_once(|| {
        // SAFETY: registers a handler that makes async-signal-safe calls only.
        unsafe { libc::pthread_atfork(None, None, Some(child)) };
    });
    let t0 = Instant::now();
    loop {
        for (i, slot) in OPEN.iter().enumerate() {
            if slot
                .compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return Section(Some(i));
            }
        }
        if t0.elapsed() > Duration::from_secs(1) {
            return Section(None);
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

impl Section {
    /// Ends the registration (idempotent).
    pub(crate) fn leave(&mut self) {
        if let Some(i) = self.0.take() {
            OPEN[i].store(-1, Ordering::Release);
        }
    }
}

impl Drop for Section {
    fn drop(&mut self) {
        self.leave();
    }
}

/// In a forked child: lets go of the copy of every open section's descriptor.
extern "C" fn child() {
    for slot in &OPEN {
        let fd = slot.swap(-1, Ordering::AcqRel);
        if fd >= 0 {
            let_go_in_child(fd);
        }
    }
}

/// In a forked child (async-signal-safe calls only): lets go of the parent's lock file description,
/// so the child holds none of the parent's locks (they stay the parent's).
pub(crate) fn let_go_in_child(fd: RawFd) {
    // SAFETY: plain system calls on descriptors; a failure leaves the descriptor as it was.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, fd);
            libc::close(null);
        }
    }
}
