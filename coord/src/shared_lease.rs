//! One leased node ID per host, shared by its processes through a state file (SPEC §4a, "one lease per
//! host"): the file part of [`crate::lease`]'s shared mode.
//!
//! The processes open the same state file ([`StateFile::open_leased`]). Its eight lease words hold the
//! lease record every process reads: the ceiling (the first position nobody may mint), the lease's
//! state, the renewal deadline (host `CLOCK_MONOTONIC`), the end of the largest request that met the
//! ceiling, the node ID, the fencing token, the sequencer's incarnation and a fingerprint of the lease
//! source (store and sequencer). The generators mint from the file's state word under the file's
//! ceiling, so the keeper of any process raises it for all.
//!
//! Open-file-description locks on bytes past the end of the file (never data, only locks; the kernel
//! drops them when the process dies, SIGKILL included) coordinate the processes:
//! - [`JOIN`]: held while a process joins or leaves (it claims, adopts or releases under it), so joins
//!   and leaves happen one at a time.
//! - [`MEMBER`]: every process that mints under the record holds a shared lock; a process that can
//!   take it exclusively is the last one (it releases the claim when it leaves).
//! - [`KEEPER`]: the process holding it renews the claim and raises the ceiling; every other process
//!   tries to take it every [`POLL`], so when the keeper exits or is killed another one continues
//!   renewing the same claim (the same fencing token) after adopting it ([`crate::Store::adopt`]).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use snowmint::state_file::StateFile;
use snowmint::{ErrorCode, Layout};

use crate::base::defect::{Defect, Hook};
use crate::base::error::{Error, Result};

/// Lock byte: joins and leaves, one at a time.
pub const JOIN: u64 = 1 << 20;
/// Lock byte: the keeper.
pub const KEEPER: u64 = JOIN + 1;
/// Lock byte: the members (shared locks).
pub const MEMBER: u64 = JOIN + 2;
/// How often a process that is not the keeper tries to become it, and how often the keeper looks for a
/// request of another process that met the ceiling.
pub const POLL: Duration = Duration::from_millis(20);

/// The lease words (indices of [`StateFile::lease_word`]).
pub(crate) const CEILING: usize = 0;
pub(crate) const STATE: usize = 1;
pub(crate) const GOOD_UNTIL: usize = 2;
pub(crate) const WANTED: usize = 3;
const NODE: usize = 4;
const TOKEN: usize = 5;
const INCARNATION: usize = 6;
const SOURCE: usize = 7;

/// The lease record of a shared state file (token 0: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub node_id: u64,
    pub token: u64,
    pub incarnation: u64,
    pub source: u64,
}

/// A shared state file with its lock file description.
#[derive(Debug)]
pub(crate) struct SharedFile {
    pub file: Arc<StateFile>,
    /// A separate open of the file: the locks are this open file description's.
    locks: File,
    /// A defect planted on purpose (feature `planted-defects`, the simulation's own tests).
    pub defect: Hook,
}

/// A fingerprint of a lease source: the store (as it describes itself, without a password) and the
/// sequencer's name.
pub(crate) fn source_fingerprint(store: &str, sequencer: &str) -> u64 {
    let h = store
        .bytes()
        .chain([0])
        .chain(sequencer.bytes())
        .fold(0x5348_4152_4544_4c53u64, |h, b| {
            snowmint::mix64(h ^ u64::from(b))
        });
    h.max(1)
}

fn os(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::new(
        ErrorCode::StateFileMismatch,
        format!("state file {}: cannot {what}: {e}", path.display()),
    )
}

impl SharedFile {
    /// Opens (creating it if missing) the leased state file at `path` for `layout`.
    pub fn open(path: &Path, layout: &Layout) -> Result<SharedFile> {
        if !cfg!(target_os = "linux") {
            return Err(Error::invalid(
                "a lease shared through a state file needs Linux (open-file-description locks)",
            ));
        }
        let file = StateFile::open_leased(path, layout).map_err(Error::from)?;
        let locks = OpenOptions::new()
            .read(true)
            .write(true)
            .open(file.path())
            .map_err(|e| os("open it", path, e))?;
        let meta = locks.metadata().map_err(|e| os("stat it", path, e))?;
        if (meta.dev(), meta.ino()) != file.identity() {
            return Err(Error::new(
                ErrorCode::StateFileMismatch,
                format!(
                    "state file {}: replaced while it was opened",
                    path.display()
                ),
            ));
        }
        Ok(SharedFile {
            file: Arc::new(file),
            locks,
            defect: Hook::NONE,
        })
    }

    pub fn word(&self, index: usize) -> &AtomicU64 {
        self.file.lease_word(index)
    }

    /// The raw descriptor of the lock file description (a forked child lets go of it).
    pub fn lock_fd(&self) -> i32 {
        self.locks.as_raw_fd()
    }

    pub fn record(&self) -> Record {
        let w = |i| self.word(i).load(Ordering::SeqCst);
        Record {
            node_id: w(NODE),
            token: w(TOKEN),
            incarnation: w(INCARNATION),
            source: w(SOURCE),
        }
    }

    /// Writes the record (the token last: a record with a token is complete).
    pub fn write_record(&self, r: &Record) {
        self.word(NODE).store(r.node_id, Ordering::SeqCst);
        self.word(INCARNATION)
            .store(r.incarnation, Ordering::SeqCst);
        self.word(SOURCE).store(r.source, Ordering::SeqCst);
        self.word(TOKEN).store(r.token, Ordering::SeqCst);
    }

    /// Clears the record: nobody may mint under it (ceiling 0) and the next process to join claims anew
    /// (preferring the node ID the record named: the node, incarnation and source words are kept).
    pub fn clear_record(&self) {
        self.word(CEILING).store(0, Ordering::SeqCst);
        self.word(TOKEN).store(0, Ordering::SeqCst);
        self.word(WANTED).store(0, Ordering::SeqCst);
        self.word(GOOD_UNTIL).store(0, Ordering::SeqCst);
        self.word(STATE).store(0, Ordering::SeqCst);
    }

    fn lock(&self, cmd: libc::c_int, kind: libc::c_int, byte: u64) -> Result<bool> {
        lock(&self.locks, cmd, kind, byte).map_err(|e| os("lock it", self.file.path(), e))
    }

    /// Waits for the join lock (released when the guard drops).
    pub fn join_lock(&self) -> Result<JoinGuard> {
        // The same open file description, through a descriptor of the guard's own.
        let fd = self
            .locks
            .try_clone()
            .map_err(|e| os("lock it", self.file.path(), e))?;
        self.lock(SETLKW, libc::F_WRLCK, JOIN)?;
        Ok(JoinGuard(fd))
    }

    /// Takes a member's shared lock.
    pub fn enter(&self) -> Result<()> {
        self.lock(SETLKW, libc::F_RDLCK, MEMBER).map(drop)
    }

    /// Whether another process (open file description) is a member.
    pub fn others(&self) -> Result<bool> {
        if self.defect.is(Defect::SharedLeaseNoOthers) {
            return Ok(false);
        }
        Ok(!self.lock(GETLK, libc::F_WRLCK, MEMBER)?)
    }

    /// Drops the member's lock.
    pub fn exit(&self) {
        let _ = self.lock(SETLK, libc::F_UNLCK, MEMBER);
    }

    /// Tries to become the keeper (`true` also when this file description already is).
    pub fn try_keeper(&self) -> Result<bool> {
        self.lock(SETLK, libc::F_WRLCK, KEEPER)
    }

    pub fn resign_keeper(&self) {
        let _ = self.lock(SETLK, libc::F_UNLCK, KEEPER);
    }
}

/// The join lock, held.
pub(crate) struct JoinGuard(File);

impl Drop for JoinGuard {
    fn drop(&mut self) {
        let _ = lock(&self.0, SETLK, libc::F_UNLCK, JOIN);
    }
}

#[cfg(target_os = "linux")]
const SETLK: libc::c_int = libc::F_OFD_SETLK;
#[cfg(target_os = "linux")]
const SETLKW: libc::c_int = libc::F_OFD_SETLKW;
#[cfg(target_os = "linux")]
const GETLK: libc::c_int = libc::F_OFD_GETLK;
#[cfg(not(target_os = "linux"))]
const SETLK: libc::c_int = 0;
#[cfg(not(target_os = "linux"))]
const SETLKW: libc::c_int = 0;
#[cfg(not(target_os = "linux"))]
const GETLK: libc::c_int = 0;

/// An open-file-description lock request on byte `byte` of `file`: `Ok(true)` when set (or, for
/// `GETLK`, when no other open file description holds a conflicting lock).
fn lock(file: &File, cmd: libc::c_int, kind: libc::c_int, byte: u64) -> std::io::Result<bool> {
    // SAFETY: a zeroed `flock` is valid; the fd is open for the duration of the call.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as _;
    fl.l_whence = libc::SEEK_SET as _;
    fl.l_start = byte as _;
    fl.l_len = 1;
    loop {
        // SAFETY: as above; `fl` outlives the call.
        if unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut fl) } != -1 {
            return Ok(cmd != GETLK || libc::c_int::from(fl.l_type) == libc::F_UNLCK);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) | Some(libc::EACCES) => return Ok(false),
            _ => return Err(e),
        }
    }
}

pub(crate) use crate::base::lock_sections::let_go_in_child;
