//! The embedded store: a directory on this host, shared by its processes, no server.
//!
//! ```text
//! DIR/sequencers/NAME.seq           the live record of NAME (absent once destroyed)
//! DIR/sequencers/NAME.incarnation   the last incarnation of NAME (survives destroy)
//! DIR/sequencers/NAME.floor         the value floor of NAME (raised by destroy, survives it)
//! DIR/nodes/NAME/N.lock             the claim record of node ID N: the last fencing token, its expiry
//!                                   and holder; the OS locks of the claim (below)
//! DIR/nodes/NAME/N.reservation      the reservation of node ID N
//! DIR/.lock                         serialises sequencer create/destroy
//! DIR/rows/KEY.row                  a row (range allocation, the ID service's token key): its value,
//!                                   written whole and atomically, mode 0600
//! DIR/rows/KEY.lock                 serialises the compare-and-set of KEY among processes (flock)
//! ```
//!
//! **Claims expire at their TTL, whoever holds them** (SPEC §3.2). The claim record in `N.lock` decides:
//! every claim, renewal, reservation and release of node ID N reads and writes it under the record's
//! lock (an open-file-description lock, `fcntl(F_OFD_SETLK)`, on byte 0; `flock` of the file where
//! there are none), held for microseconds and waited for at most 2 s (then `STORE_UNAVAILABLE`).
//! - A claim takes N when the record names no claim, or one whose expiry (`now + ttl` of its last claim
//!   or renewal, by the callers' clock) has passed, or one whose process has died; it writes the next
//!   fencing token (above the record's and the reservation's, and at least `now_unix_ms * 1000`:
//!   `token_floor`) and the new expiry.
//! - A renewal succeeds only while the record still names its token and has not expired; a reservation
//!   is written only while the record names its token (so the old holder of a claim taken after its
//!   expiry gets `LEASE_LOST`, and its keeper stops the generator at its ceiling), and never below the
//!   stored one under the same layout (read under the same lock; [`Reservation::written_over`]); a
//!   release sets the
//!   record's expiry to 0.
//! - **Liveness**: the holder of token T keeps an open-file-description lock on byte T of `N.lock` while
//!   it holds the claim. The kernel drops it when the process dies, so the node ID of a killed process
//!   is free at once; a live process's lock is only a hint that its claim may still be renewed: a paused
//!   process, or the ID service holding client leases nobody renews, loses its claim at the expiry all
//!   the same. Without open-file-description locks (not Linux) there is no such hint: a claim ends at
//!   its expiry or release only.
//! - **The file must still be at its path**: a claim holds only while `N.lock` is the file it locked
//!   (device and inode, checked under the record's lock, as the state file checks its own); if the
//!   directory is deleted, moved away or replaced, the next renewal or reservation is `LEASE_LOST` and
//!   the holder stops at its ceiling. Until then it may still mint up to its reservation, which the new
//!   directory does not have, so (Linux) a claim also enters a host-wide registry:
//!   `/dev/shm/snowmint-claims/HASH` (`/tmp/…` without `/dev/shm`; HASH of the path of `N.lock` that
//!   the renewals check: the directory as given, made absolute, symbolic links not resolved, so a link
//!   re-pointed is a replaced directory to the registry as to the holder), where the holder keeps a shared lock on the byte of its file's inode until its claim and
//!   its last reservation have both passed (or its process ends). A claim of that path is refused while
//!   any other inode's byte is locked: a live process holds a claim on a file that was there. These
//!   registry files are empty and never deleted (deleting one could hide a lock taken on it). Other
//!   systems have no registry: a process given the node ID in a replaced directory is not refused.
//! - The ended claims of a process (expired, and past their last reservation) have their files closed
//!   at its next claim or renewal, so a process holding many short claims keeps only the live ones open.
//!
//! **A history that is lost** (SPEC §3.2): the registry covers live holders on this host's `/dev/shm`
//! only (not a process in a container with its own, not after a reboot or a deletion of the registry,
//! not a holder that has exited). The rest is the lease's: this store's [`Store::max_ahead`]
//! ([`MAX_AHEAD`], 1 s, unless the URL says `?max_ahead=`: [`FileStore::with_max_ahead`]) caps every
//! reservation at `now + max_ahead`, every new claim starts above `now + max_ahead` whatever the
//! directory holds, and a release waits out what was minted ahead of the clock ([`crate::lease`]); the
//! ID service's client leases reach no further ahead (`service/src/leases.rs`). Nor does a lost history
//! give a fencing token again: a claim's token is at least its clock's `now_unix_ms * 1000`
//! (`token_floor`), above every token given before the loss (a lease token of the ID service from
//! before a restore is `LEASE_LOST`, not the new claim's). A directory that does not exist is `STORE_NOT_FOUND`
//! ([`FileStore::open`]); [`FileStore::create`] (creating a sequencer) makes it.
//!
//! The embedded store is for one host's local disk: the locks and the registry are this host's, and on
//! a network file system a lock can be lost (or never be seen by another host) without notice.
//!
//! Every other file is written whole and atomically (write, `fsync`, `rename`, `fsync` of the
//! directory), so a crash leaves the old or the new content, never a torn one.
//!
//! Create, destroy and every reservation run under `DIR/.lock`: a reservation is written only while
//! the record of the incarnation its claim was taken under is live, so the floor a destroy computes
//! from the reservations is final (crate::store, "Value floor").

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::base::defect::{Defect, Hook};
use crate::base::error::{io, Error, Result};
use crate::base::lock_sections;
use crate::base::store::{
    Claim, ClaimRequest, HeldBy, NodeState, Reservation, SequencerConfig, SequencerRecord, Store,
};
use crate::base::store_errors::lost;

/// What any holder of an embedded store may mint ahead of the clock ([`Store::max_ahead`]) unless
/// the store URL says otherwise: 1 s.
///
/// A holder that finds no history for its node ID (a new, emptied, replaced or restored directory, or
/// one seen from another mount namespace) starts above `now + max_ahead`, which is safe only if no
/// earlier holder could have reached further: every process of one store must be given the same bound
/// (`file:///DIR?max_ahead=30s`, [`FileStore::with_max_ahead`]; a larger one is safe, a smaller one is
/// not). The ID service's client leases reserve no further ahead than it either (SPEC §3.2).
pub const MAX_AHEAD: std::time::Duration = std::time::Duration::from_secs(1);

/// The largest `max_ahead` an embedded store takes (`?max_ahead=`): one hour.
pub const MAX_AHEAD_LIMIT: std::time::Duration = std::time::Duration::from_secs(3600);

/// The embedded store in one directory.
#[derive(Debug)]
pub struct FileStore {
    /// The directory as given (messages name it so).
    given: PathBuf,
    /// The directory made absolute without resolving symbolic links (`std::path::absolute`): every file
    /// of the store is reached through it, the path check of every renewal follows it, and the host
    /// registry names node files by it. So a store reached through a symbolic link that is re-pointed
    /// is seen as replaced, by its holders and by the registry alike.
    dir: PathBuf,
    /// The claims this process holds, or held and must still vouch for (see [`Held`]).
    held: Mutex<HashMap<(String, u64), Held>>,
    /// What any holder may mint ahead of the clock ([`MAX_AHEAD`] unless `?max_ahead=` says).
    max_ahead: std::time::Duration,
    /// A defect planted on purpose (feature `planted-defects`, the simulation's own tests).
    defect: Hook,
}

/// A claim of this process: its open files carry its OS locks (closing them releases the locks).
#[derive(Debug)]
struct Held {
    token: u64,
    /// The incarnation of the sequencer the claim was taken under (reservations are written only
    /// while it is live).
    incarnation: u64,
    /// The node file, with the liveness lock on byte `token`.
    file: File,
    /// The node file's device and inode when it was claimed: the claim holds only while this file is
    /// still the one at its path.
    id: (u64, u64),
    /// The host registry's file of the node file's path, with a shared lock on the byte of `id`'s inode
    /// (Linux; `None` elsewhere).
    _registry: Option<File>,
    /// The claim's expiry and the end of the last reservation written under it (callers' clock, Unix
    /// ms). The files stay open until both have passed: a holder may mint up to its reservation, and
    /// should its directory be deleted, the registry lock is then all that keeps its node ID from
    /// another process (whose new directory has no reservation).
    expires_unix_ms: u64,
    reserved_until_unix_ms: u64,
    /// Held for a shared lease ([`Store::adopt`]): another process of the host may be the one renewing
    /// it, so its files stay open (and its liveness lock held) until [`Store::leave`] or
    /// [`Store::release`], whatever this process last saw of its expiry.
    pinned: bool,
}

impl Held {
    fn deadline(&self) -> u64 {
        if self.pinned {
            return u64::MAX;
        }
        self.expires_unix_ms.max(self.reserved_until_unix_ms)
    }
}

/// How long a process waits for another to finish with a claim record (a few microseconds of work)
/// before the store answers `STORE_UNAVAILABLE` (the other process is paused or stuck).
const RECORD_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// An open-file-description lock request on bytes `start..start + len` of `file` (`len` 0: to the end
/// of any file); `Ok(None)` when a conflicting lock is held (set requests), the conflicting lock's type
/// for `F_OFD_GETLK` (`F_UNLCK`: none).
#[cfg(target_os = "linux")]
fn ofd(
    file: &File,
    cmd: libc::c_int,
    kind: libc::c_int,
    start: u64,
    len: u64,
) -> std::io::Result<Option<libc::c_int>> {
    // SAFETY: a zeroed `flock` is valid; the fd is open for the duration of the call.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as _;
    fl.l_whence = libc::SEEK_SET as _;
    fl.l_start = start.min(i64::MAX as u64) as _;
    fl.l_len = len.min(i64::MAX as u64) as _;
    // SAFETY: as above; `fl` outlives the call.
    if unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut fl) } == -1 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(fl.l_type as libc::c_int))
}

/// Whether some open file description other than `file`'s holds a lock on any byte of `start..start +
/// len` (`len` 0: to the end).
#[cfg(target_os = "linux")]
fn locked(file: &File, start: u64, len: u64) -> std::io::Result<bool> {
    Ok(ofd(file, libc::F_OFD_GETLK, libc::F_WRLCK, start, len)? != Some(libc::F_UNLCK))
}

/// Takes the lock on a claim record (byte 0 of its node file; `flock` of the file where there are no
/// open-file-description locks), waiting at most [`RECORD_LOCK_WAIT`]; released when the guard drops.
fn lock_record(file: &File) -> std::io::Result<RecordGuard<'_>> {
    let t0 = std::time::Instant::now();
    let mut section = Some(lock_sections::enter(file.as_raw_fd()));
    loop {
        #[cfg(target_os = "linux")]
        let taken = ofd(file, libc::F_OFD_SETLK, libc::F_WRLCK, 0, 1)?.is_some();
        #[cfg(not(target_os = "linux"))]
        // SAFETY: the fd is open for the duration of the call.
        let taken = match unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } {
            0 => true,
            _ => match std::io::Error::last_os_error() {
                e if e.raw_os_error() == Some(libc::EWOULDBLOCK) => false,
                e => return Err(e),
            },
        };
        if taken {
            return Ok(RecordGuard(file, section.take().expect("entered once")));
        }
        if t0.elapsed() >= RECORD_LOCK_WAIT {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "another process has held the claim record's lock for over 2 s",
            ));
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// The record's lock, held: released, then its section left ([`lock_sections`]), when dropped.
struct RecordGuard<'a>(&'a File, lock_sections::Section);

impl Drop for RecordGuard<'_> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        let _ = ofd(self.0, libc::F_OFD_SETLK, libc::F_UNLCK, 0, 1);
        #[cfg(not(target_os = "linux"))]
        // SAFETY: the fd is open for the duration of the call.
        unsafe {
            libc::flock(self.0.as_raw_fd(), libc::LOCK_UN);
        }
        self.1.leave();
    }
}

/// The least fencing token a claim made at `now_unix_ms` is given: `now_unix_ms * 1000`, so tokens
/// never repeat on one host even when the directory's history (the last token of each node ID) is lost
/// (SPEC §3.2). Room for 1,000 claims of one node ID per millisecond before the chain of tokens runs
/// above the clock's floor; a claim takes a lock and file writes, so it never comes near that (and were
/// it to, the tokens would still rise by one a claim). About 1.8e15 today: an `off_t` for the liveness
/// lock on byte `token`, and below 2^53 (a JSON number JavaScript reads exactly: `snowmint lease list
/// --json`; the ID service sends it as a string) until the year 2255, where the floor stops rising.
fn token_floor(now_unix_ms: u64) -> u64 {
    now_unix_ms.saturating_mul(1000).min(1 << 53)
}

/// Takes the liveness lock of the claim with fencing token `token` (byte `token` of the node file), a
/// shared one: every process that holds the claim (its claimer, and the processes that adopted it for
/// a shared lease, [`Store::adopt`]) keeps one, so the claim lives while any of them does. `false` if
/// another open file holds an exclusive lock there. Without open-file-description locks there is none
/// (`true`).
fn hold_token(file: &File, token: u64) -> std::io::Result<bool> {
    #[cfg(target_os = "linux")]
    return Ok(ofd(file, libc::F_OFD_SETLK, libc::F_RDLCK, token, 1)?.is_some());
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, token);
        Ok(true)
    }
}

/// Whether a live process holds the claim with fencing token `token`: its liveness lock is held (the
/// kernel drops it when the process dies). Without open-file-description locks this cannot be told,
/// and the answer is `true`: such a claim ends only at its expiry.
fn token_alive(file: &File, token: u64) -> std::io::Result<bool> {
    #[cfg(target_os = "linux")]
    return locked(file, token, 1);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, token);
        Ok(true)
    }
}

/// The byte of the host registry file that stands for a node file's inode.
#[cfg(target_os = "linux")]
fn registry_byte(ino: u64) -> u64 {
    ino & (u64::MAX >> 2)
}

/// The host registry (Linux): one file per node-file path, named by a hash of the path, in a directory
/// every process of the host sees (`/dev/shm/snowmint-claims`, `/tmp/snowmint-claims` without
/// `/dev/shm`). A holder keeps a shared lock on the byte of its node file's inode; a claimer refuses a
/// path while a lock is held on another inode's byte, i.e. while a live process holds a claim on a file
/// that was at this path and has since been deleted or moved away.
#[cfg(target_os = "linux")]
fn registry_file(node_file: &Path) -> std::io::Result<File> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let base = if Path::new("/dev/shm").is_dir() {
        "/dev/shm/snowmint-claims"
    } else {
        "/tmp/snowmint-claims"
    };
    match fs::create_dir(base) {
        // Shared by every user of the host, as /tmp is.
        Ok(()) => fs::set_permissions(base, fs::Permissions::from_mode(0o1777))?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    // FNV-1a: the same in every build. A collision of two paths only makes a claim refuse more often.
    let hash = node_file
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
    let path = Path::new(base).join(format!("{hash:016x}"));
    match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(&path)
    {
        // Another user's file: a shared lock and a test need only read access.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => File::open(&path),
        other => other,
    }
}

/// Takes an exclusive `flock` of `file`, waiting for it; released when the guard drops.
///
/// Released by an explicit unlock, never by the close alone: a process forked while the lock is held
/// shares the locked open file description, and the close would release the lock only once the child
/// closed its copy too — which a child never does for a section a thread of its parent was in (that
/// thread does not exist in the child). The parent's next section and the child's own then wait on it
/// for ever.
/// (A child whose parent dies inside the section lets go of its copy: [`lock_sections`].)
fn lock_wait(file: File) -> std::io::Result<Flocked> {
    let section = lock_sections::enter(file.as_raw_fd());
    // SAFETY: the fd is open for the duration of the call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Flocked(file, section))
}

/// A file held under an exclusive `flock` ([`lock_wait`]): unlocked, its section left, then closed,
/// when dropped.
struct Flocked(File, lock_sections::Section);

impl Drop for Flocked {
    fn drop(&mut self) {
        // SAFETY: the fd is open until the fields drop after this.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
        self.1.leave();
    }
}

/// Writes `path` whole and atomically: a temporary file, `fsync`, `rename`, `fsync` of the directory.
fn write_atomic(path: &Path, content: &str) -> std::io::Result<()> {
    write_atomic_mode(path, content, 0o644)
}

/// [`write_atomic`] with the file's permission bits (before the umask): `0o600` for rows, which may
/// hold secrets (the ID service's token key).
fn write_atomic_mode(path: &Path, content: &str, mode: u32) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("f"),
        std::process::id()
    ));
    {
        let mut f = {
            let mut o = OpenOptions::new();
            o.write(true).create(true).truncate(true);
            std::os::unix::fs::OpenOptionsExt::mode(&mut o, mode);
            o.open(&tmp)?
        };
        f.write_all(content.as_bytes())?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()
}

/// `key=value` lines (the first of each key counts).
fn fields(text: &str) -> HashMap<&str, &str> {
    let mut out = HashMap::new();
    for (k, v) in text.lines().filter_map(|l| l.split_once('=')) {
        out.entry(k).or_insert(v);
    }
    out
}

fn read_opt(path: &Path) -> std::io::Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

impl FileStore {
    /// This store with a defect planted (feature `planted-defects`, the simulation's own tests).
    #[cfg(feature = "planted-defects")]
    pub fn plant(self, defect: Defect) -> FileStore {
        FileStore {
            defect: Hook::planted(defect),
            ..self
        }
    }

    /// This store with another bound on what any holder mints ahead of the clock ([`MAX_AHEAD`] by
    /// default; `file:///DIR?max_ahead=30s`), 1 ms to [`MAX_AHEAD_LIMIT`]. Every process of the store
    /// must be given the same bound (or a larger one): a holder with no history for its node ID starts
    /// above `now + max_ahead` of its own.
    pub fn with_max_ahead(self, max_ahead: std::time::Duration) -> FileStore {
        FileStore {
            max_ahead: max_ahead.clamp(std::time::Duration::from_millis(1), MAX_AHEAD_LIMIT),
            ..self
        }
    }

    /// Opens the store in `dir`, which must exist: a missing directory is `STORE_NOT_FOUND` (a mistyped
    /// path must not start a new history), and nothing is written anywhere. An existing empty directory
    /// becomes a store. [`FileStore::create`] is the one call that creates a missing directory.
    pub fn open(dir: impl Into<PathBuf>) -> Result<FileStore> {
        FileStore::open_or_create(dir.into(), false)
    }

    /// Opens the store in `dir`, creating the directory (and its parents) if missing: what creating a
    /// sequencer does (`snowmint sequencer create NAME --store file:///DIR`, `Sequencer.create` in the
    /// bindings).
    pub fn create(dir: impl Into<PathBuf>) -> Result<FileStore> {
        FileStore::open_or_create(dir.into(), true)
    }

    fn open_or_create(given: PathBuf, create: bool) -> Result<FileStore> {
        let dir = std::path::absolute(&given).unwrap_or_else(|_| given.clone());
        let store = FileStore {
            given,
            dir,
            held: Mutex::new(HashMap::new()),
            max_ahead: MAX_AHEAD,
            defect: Hook::NONE,
        };
        match fs::metadata(&store.dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::new(
                    snowmint::ErrorCode::StoreNotFound,
                    format!("{}: not a directory", store.describe()),
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => {
                return Err(Error::new(
                    snowmint::ErrorCode::StoreNotFound,
                    format!(
                        "{}: no such directory; an embedded store is created by creating a sequencer in it (snowmint sequencer create NAME --store {}; Sequencer.create in the bindings), or by making the directory",
                        store.describe(),
                        store.describe()
                    ),
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(store.fail("cannot open the store's directory", e)),
        }
        for sub in ["sequencers", "nodes", "rows"] {
            let p = store.dir.join(sub);
            fs::create_dir_all(&p)
                .map_err(|e| store.fail(format!("cannot create {}", p.display()), e))?;
        }
        Ok(store)
    }

    fn fail(&self, what: impl std::fmt::Display, e: std::io::Error) -> Error {
        io(format!("{}: {what}", self.describe()), e)
    }

    fn corrupt(&self, path: &Path) -> Error {
        Error::unavailable(format!(
            "{}: {} is damaged",
            self.describe(),
            path.display()
        ))
    }

    fn seq_path(&self, name: &str, ext: &str) -> PathBuf {
        self.dir.join("sequencers").join(format!("{name}.{ext}"))
    }

    fn node_dir(&self, name: &str) -> PathBuf {
        self.dir.join("nodes").join(name)
    }

    fn node_path(&self, name: &str, node_id: u64, ext: &str) -> PathBuf {
        self.node_dir(name).join(format!("{node_id}.{ext}"))
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u64), Held>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn read_u64(&self, path: &Path) -> Result<Option<u64>> {
        match read_opt(path).map_err(|e| self.fail(format!("cannot read {}", path.display()), e))? {
            None => Ok(None),
            Some(s) => s.trim().parse().map(Some).map_err(|_| self.corrupt(path)),
        }
    }

    fn read_record(&self, name: &str) -> Result<Option<SequencerRecord>> {
        let path = self.seq_path(name, "seq");
        let Some(text) =
            read_opt(&path).map_err(|e| self.fail(format!("cannot read {}", path.display()), e))?
        else {
            return Ok(None);
        };
        let f = fields(&text);
        let num = |k: &str| f.get(k).and_then(|v| v.parse::<u64>().ok());
        match (
            num("incarnation"),
            num("nodes"),
            num("created_unix_ms"),
            f.get("layout"),
        ) {
            (Some(incarnation), Some(nodes), Some(created_unix_ms), Some(layout)) => {
                Ok(Some(SequencerRecord {
                    name: name.into(),
                    config: SequencerConfig {
                        layout: layout.to_string(),
                        nodes,
                    },
                    incarnation,
                    created_unix_ms,
                    // Records written before floors existed have none: 0.
                    floor: num("floor").unwrap_or(0),
                }))
            }
            _ => Err(self.corrupt(&path)),
        }
    }

    fn registry_lock(&self) -> Result<Flocked> {
        let path = self.dir.join(".lock");
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| self.fail(format!("cannot open {}", path.display()), e))?;
        lock_wait(f).map_err(|e| self.fail(format!("cannot lock {}", path.display()), e))
    }

    /// The token recorded with the reservation of a node ID (0 if none).
    fn reservation_token(&self, name: &str, node_id: u64) -> Result<u64> {
        let path = self.node_path(name, node_id, "reservation");
        let text =
            read_opt(&path).map_err(|e| self.fail(format!("cannot read {}", path.display()), e))?;
        Ok(text
            .as_deref()
            .map(fields)
            .and_then(|f| f.get("token").and_then(|t| t.parse().ok()))
            .unwrap_or(0))
    }

    /// [`Store::reserve`] (`lower`: [`Store::lower_reservation`]).
    fn write_reservation(&self, claim: &Claim, r: &Reservation, lower: bool) -> Result<()> {
        // Under the store's lock, taken first (the order destroy takes them in): a reservation is
        // written only while the incarnation its claim was taken under is live, so a destroy has either
        // not computed the floor yet, or this claim's sequencer is gone.
        let _guard = self.registry_lock()?;
        // Under the record's lock, so no claim can take the node ID between the check and the write.
        // The stored reservation is read under it too: a stale write never lowers it.
        self.with_current(claim, None, |h, _| {
            if self.read_record(&claim.sequencer)?.map(|r| r.incarnation) != Some(h.incarnation) {
                return Err(lost(claim));
            }
            let stored = self.reservation(&claim.sequencer, claim.node_id)?;
            let r = r.kept(stored.as_ref(), lower);
            let text = format!(
                "position={}\nlayout_fingerprint={}\nuntil_unix_ms={}\ntoken={}\n",
                r.position, r.layout_fingerprint, r.until_unix_ms, claim.token
            );
            write_atomic(
                &self.node_path(&claim.sequencer, claim.node_id, "reservation"),
                &text,
            )
            .map_err(|e| self.fail("cannot write a reservation", e))?;
            h.reserved_until_unix_ms = h.reserved_until_unix_ms.max(r.until_unix_ms);
            Ok(())
        })
    }

    fn write_holder(
        &self,
        file: &File,
        holder: &str,
        token: u64,
        expires_unix_ms: u64,
    ) -> std::io::Result<()> {
        // The token line comes first and is rewritten in place before the file is cut to length, so a
        // crash halfway leaves the new token readable (and at worst stale text after it).
        let holder = holder.replace('\n', " ");
        let text = format!("token={token}\nexpires_unix_ms={expires_unix_ms}\nholder={holder}\n");
        let mut f = file;
        f.rewind()?;
        f.write_all(text.as_bytes())?;
        file.set_len(text.len() as u64)
    }

    /// The claim record in a node file: (token, expiry, holder); zeros and "" for a new file.
    fn read_holder(&self, file: &File) -> Result<(u64, u64, String)> {
        let mut text = String::new();
        let mut f = file;
        f.rewind()
            .and_then(|_| f.read_to_string(&mut text))
            .map_err(|e| self.fail("cannot read a claim", e))?;
        let f = fields(&text);
        let num = |k: &str| f.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        Ok((
            num("token"),
            num("expires_unix_ms"),
            f.get("holder").unwrap_or(&"").to_string(),
        ))
    }

    /// Whether the file with identity `id` is still the one at `path` (not deleted, not replaced, its
    /// directory not deleted or moved away): the same check as the state file's.
    fn at_path(&self, path: &Path, id: (u64, u64)) -> Result<bool> {
        match fs::metadata(path) {
            Ok(m) => Ok((m.dev(), m.ino()) == id),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.fail(format!("cannot stat {}", path.display()), e)),
        }
    }

    /// Opens the host registry's file of the node file `path` and takes a shared lock on the byte of
    /// inode `ino` (Linux; see [`registry_file`]). `Ok(None)`: a live process holds a claim on another
    /// file that was at `path`, so the node ID is not free. Elsewhere there is no registry: `Some(None)`.
    fn enter_registry(&self, path: &Path, ino: u64) -> Result<Option<Option<File>>> {
        #[cfg(target_os = "linux")]
        {
            // The path the renewals check, symbolic links unresolved: both see one re-pointed link.
            let fail = |e| self.fail("cannot use the host's claim registry", e);
            let reg = registry_file(path).map_err(fail)?;
            let byte = registry_byte(ino);
            let entered = ofd(&reg, libc::F_OFD_SETLK, libc::F_RDLCK, byte, 1).map_err(fail)?;
            let orphan = entered.is_none()
                || (byte > 0 && locked(&reg, 0, byte).map_err(fail)?)
                || locked(&reg, byte + 1, 0).map_err(fail)?;
            Ok((!orphan).then_some(Some(reg)))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (path, ino);
            Ok(Some(None))
        }
    }

    /// Closes the files of this process's claims that have ended by `now_unix_ms` (see [`Held`]), so a
    /// process holding many short claims (the ID service's client leases) keeps only the live ones open.
    fn forget_ended(&self, now_unix_ms: u64) {
        let ignores_expiry = self.defect.is(Defect::RenewIgnoresExpiry); // renewed and kept past expiry
        self.held()
            .retain(|_, h| ignores_expiry || h.deadline() > now_unix_ms);
    }

    /// Claims node ID `node_id` if it is free: nobody's claim, an expired one, or one whose process has
    /// died. All decided under the record's lock.
    fn claim_node(&self, r: &ClaimRequest<'_>, node_id: u64) -> Result<Option<(Claim, Held)>> {
        let (path, file, id) = self.open_node(r.sequencer, node_id)?;
        let guard = lock_record(&file)
            .map_err(|e| self.fail(format!("cannot lock {}", path.display()), e))?;
        // The registry entry first, then the path check: a directory deleted after the check is seen
        // by every later claimer in the registry, one deleted before it fails the check here.
        let Some(registry) = self.enter_registry(&path, id.1)? else {
            return Ok(None);
        };
        if !self.at_path(&path, id)? {
            return Ok(None);
        }
        let (last, expires, _) = self.read_holder(&file)?;
        let alive = token_alive(&file, last).map_err(|e| self.fail("cannot test a lock", e))?;
        if last > 0 && expires > r.now_unix_ms && alive {
            return Ok(None);
        }
        // The node file keeps the last token of the node ID (each holder writes its own there, under
        // the record's lock, without fsync: a claim costs well under a millisecond). The reservation,
        // written durably before anything is minted, records its token too, so even after a power
        // loss the next token exceeds that of every holder that minted. And at least the floor of
        // the claim's clock ([`token_floor`]): a directory whose history is lost
        // (deleted, replaced, restored from a backup) holds no record of the tokens already given, and
        // without the floor would give them again (a lease token of the ID service naming the node ID
        // and token of an earlier claim would renew the new one).
        let floor = match self.defect.is(Defect::EmbeddedTokenFromHistory) {
            true => 0,
            false => token_floor(r.now_unix_ms),
        };
        let token = (last.max(self.reservation_token(r.sequencer, node_id)?) + 1).max(floor);
        if !hold_token(&file, token).map_err(|e| self.fail("cannot lock a claim", e))? {
            return Ok(None);
        }
        let expires_unix_ms = r.now_unix_ms.saturating_add(r.ttl_ms);
        self.write_holder(&file, r.holder, token, expires_unix_ms)
            .map_err(|e| self.fail(format!("cannot write {}", path.display()), e))?;
        drop(guard);
        let claim = Claim {
            sequencer: r.sequencer.into(),
            node_id,
            token,
            expires_unix_ms,
        };
        let held = Held {
            token,
            incarnation: r.incarnation,
            file,
            id,
            _registry: registry,
            expires_unix_ms,
            reserved_until_unix_ms: 0,
            pinned: false,
        };
        Ok(Some((claim, held)))
    }

    /// Opens (creating it and its directory if missing) the node file of `node_id`: its path, the open
    /// file and its identity (device, inode).
    fn open_node(&self, sequencer: &str, node_id: u64) -> Result<(PathBuf, File, (u64, u64))> {
        let path = self.node_path(sequencer, node_id, "lock");
        let open = || {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)
        };
        let opened = match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let dir = self.node_dir(sequencer);
                fs::create_dir_all(&dir)
                    .map_err(|e| self.fail(format!("cannot create {}", dir.display()), e))?;
                open()
            }
            other => other,
        };
        let file = opened.map_err(|e| self.fail(format!("cannot open {}", path.display()), e))?;
        let meta = file
            .metadata()
            .map_err(|e| self.fail(format!("cannot stat {}", path.display()), e))?;
        let id = (meta.dev(), meta.ino());
        Ok((path, file, id))
    }

    /// Makes this process a holder of `claim`, taken by another process of the host ([`Store::adopt`]):
    /// under the record's lock, while the record still names its token and it has not expired, takes the
    /// claim's shared liveness lock and the host registry entry, and renews it.
    fn adopt_node(&self, claim: &Claim, incarnation: u64, ttl_ms: u64, now: u64) -> Result<Claim> {
        let (path, file, id) = self.open_node(&claim.sequencer, claim.node_id)?;
        let guard = lock_record(&file)
            .map_err(|e| self.fail(format!("cannot lock {}", path.display()), e))?;
        let Some(registry) = self.enter_registry(&path, id.1)? else {
            return Err(lost(claim));
        };
        if !self.at_path(&path, id)? {
            return Err(lost(claim));
        }
        let (token, expires, holder) = self.read_holder(&file)?;
        if token != claim.token || expires <= now {
            return Err(lost(claim));
        }
        if !hold_token(&file, token).map_err(|e| self.fail("cannot lock a claim", e))? {
            return Err(lost(claim));
        }
        let expires_unix_ms = now.saturating_add(ttl_ms);
        self.write_holder(&file, &holder, token, expires_unix_ms)
            .map_err(|e| self.fail(format!("cannot write {}", path.display()), e))?;
        drop(guard);
        let held = Held {
            token,
            incarnation,
            file,
            id,
            _registry: registry,
            expires_unix_ms,
            reserved_until_unix_ms: 0,
            pinned: true,
        };
        self.held()
            .insert((claim.sequencer.clone(), claim.node_id), held);
        Ok(Claim {
            expires_unix_ms,
            ..claim.clone()
        })
    }

    /// Runs `f` on `claim`'s held entry under its record's lock, once the entry is checked to be
    /// `claim`'s, its file still at its path, and the record still naming `claim`'s token (and, with
    /// `now_unix_ms`, not expired by it); `LEASE_LOST` otherwise.
    fn with_current<T>(
        &self,
        claim: &Claim,
        now_unix_ms: Option<u64>,
        f: impl FnOnce(&mut Held, &str) -> Result<T>,
    ) -> Result<T> {
        let mut held = self.held();
        let Some(h) = held
            .get_mut(&(claim.sequencer.clone(), claim.node_id))
            .filter(|h| h.token == claim.token)
        else {
            return Err(lost(claim));
        };
        let path = self.node_path(&claim.sequencer, claim.node_id, "lock");
        let file = h
            .file
            .try_clone()
            .map_err(|e| self.fail("cannot lock a claim", e))?;
        let _guard = lock_record(&file)
            .map_err(|e| self.fail(format!("cannot lock {}", path.display()), e))?;
        let moved = !self.defect.is(Defect::EmbeddedIgnoresPath);
        if moved && !self.at_path(&path, h.id)? {
            return Err(lost(claim));
        }
        let (token, expires, holder) = self.read_holder(&file)?;
        let ignores_expiry = self.defect.is(Defect::RenewIgnoresExpiry);
        if token != claim.token || now_unix_ms.is_some_and(|now| expires <= now && !ignores_expiry)
        {
            return Err(lost(claim));
        }
        f(h, &holder)
    }
}

impl Store for FileStore {
    fn describe(&self) -> String {
        format!("file://{}", self.given.display())
    }

    fn max_ahead(&self) -> Option<std::time::Duration> {
        if self.defect.is(Defect::EmbeddedNoMaxAhead) {
            return None;
        }
        Some(self.max_ahead)
    }

    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now_unix_ms: u64,
    ) -> Result<SequencerRecord> {
        // Names become file names: never a path.
        crate::base::name::check_name(name)?;
        let _guard = self.registry_lock()?;
        if let Some(existing) = self.read_record(name)? {
            return if existing.config == *config {
                Ok(existing)
            } else {
                Err(crate::base::store_errors::conflict(
                    name,
                    &existing.config,
                    config,
                ))
            };
        }
        let inc_path = self.seq_path(name, "incarnation");
        let incarnation = self.read_u64(&inc_path)?.unwrap_or(0) + 1;
        write_atomic(&inc_path, &format!("{incarnation}\n"))
            .map_err(|e| self.fail("cannot write the incarnation", e))?;
        let floor = self.read_u64(&self.seq_path(name, "floor"))?.unwrap_or(0);
        let record = SequencerRecord {
            name: name.into(),
            config: config.clone(),
            incarnation,
            created_unix_ms: now_unix_ms,
            floor,
        };
        let text = format!(
            "incarnation={incarnation}\nnodes={}\ncreated_unix_ms={now_unix_ms}\nfloor={floor}\nlayout={}\n",
            config.nodes, config.layout
        );
        write_atomic(&self.seq_path(name, "seq"), &text)
            .map_err(|e| self.fail("cannot write the sequencer record", e))?;
        Ok(record)
    }

    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        self.read_record(name)
    }

    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        let dir = self.dir.join("sequencers");
        let entries = fs::read_dir(&dir)
            .map_err(|e| self.fail(format!("cannot list {}", dir.display()), e))?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".seq"))
                    .map(str::to_string)
            })
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        let mut out = Vec::new();
        for n in names {
            if let Some(r) = self.read_record(&n)? {
                out.push(r);
            }
        }
        Ok(out)
    }

    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        crate::base::name::check_name(name)?;
        let _guard = self.registry_lock()?;
        let Some(record) = self
            .read_record(name)?
            .filter(|r| r.incarnation == incarnation)
        else {
            return Ok(false);
        };
        // Under the registry lock no reservation of this incarnation can be written any more.
        let reservations = self
            .holders(name, 0)?
            .into_iter()
            .filter_map(|n| n.reservation);
        let floor = crate::base::store::floor_after(&record, reservations)?;
        if floor > record.floor {
            write_atomic(&self.seq_path(name, "floor"), &format!("{floor}\n"))
                .map_err(|e| self.fail("cannot write the sequencer's floor", e))?;
        }
        let path = self.seq_path(name, "seq");
        match fs::remove_file(&path) {
            Ok(()) => {
                File::open(self.dir.join("sequencers"))
                    .and_then(|d| d.sync_all())
                    .map_err(|e| self.fail("cannot sync the sequencer directory", e))?;
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.fail(format!("cannot remove {}", path.display()), e)),
        }
    }

    fn claim(&self, r: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        crate::base::name::check_name(r.sequencer)?;
        self.forget_ended(r.now_unix_ms);
        // Only a hint here (the reservation, under the registry lock, is what decides).
        if self.read_record(r.sequencer)?.map(|s| s.incarnation) != Some(r.incarnation) {
            return Err(crate::base::store_errors::not_live(
                &self.describe(),
                r.sequencer,
                r.incarnation,
            ));
        }
        for i in 0..r.nodes {
            let node_id = (r.start + i) % r.nodes;
            // Not under the `held` mutex: renewals take it before a record's lock.
            if let Some((claim, held)) = self.claim_node(r, node_id)? {
                // An earlier claim of this process on the node ID is over (expired or replaced).
                self.held().insert((r.sequencer.to_string(), node_id), held);
                return Ok(Some(claim));
            }
        }
        Ok(None)
    }

    fn renew(&self, claim: &Claim, ttl_ms: u64, now_unix_ms: u64) -> Result<Claim> {
        self.forget_ended(now_unix_ms);
        self.with_current(claim, Some(now_unix_ms), |h, holder| {
            let expires_unix_ms = now_unix_ms.saturating_add(ttl_ms);
            self.write_holder(&h.file, holder, claim.token, expires_unix_ms)
                .map_err(|e| self.fail("cannot write a claim", e))?;
            h.expires_unix_ms = expires_unix_ms;
            Ok(Claim {
                expires_unix_ms,
                ..claim.clone()
            })
        })
    }

    fn adopt(&self, claim: &Claim, ttl_ms: u64, now_unix_ms: u64) -> Result<Claim> {
        self.forget_ended(now_unix_ms);
        let mine = self
            .held()
            .get(&(claim.sequencer.clone(), claim.node_id))
            .filter(|h| h.token == claim.token)
            .map(|h| h.incarnation);
        if mine.is_some() {
            let renewed = self.renew(claim, ttl_ms, now_unix_ms)?;
            if let Some(h) = self
                .held()
                .get_mut(&(claim.sequencer.clone(), claim.node_id))
            {
                h.pinned = true;
            }
            return Ok(renewed);
        }
        let Some(record) = self.read_record(&claim.sequencer)? else {
            return Err(lost(claim));
        };
        self.adopt_node(claim, record.incarnation, ttl_ms, now_unix_ms)
    }

    fn leave(&self, claim: &Claim) -> Result<()> {
        let key = (claim.sequencer.clone(), claim.node_id);
        let path = self.node_path(&claim.sequencer, claim.node_id, "lock");
        let mut held = self.held();
        if let Some(h) = held.get_mut(&key).filter(|h| h.token == claim.token) {
            if self.at_path(&path, h.id)? {
                // Closing the files drops this process's liveness lock and registry entry.
                held.remove(&key);
            } else {
                h.pinned = false; // the registry lock stays until the claim's reservation has passed
            }
        }
        Ok(())
    }

    fn release(&self, claim: &Claim) -> Result<()> {
        let ended = self.with_current(claim, None, |h, holder| {
            // Expired at once (where there are no liveness locks, this is what frees it).
            self.write_holder(&h.file, holder, claim.token, 0)
                .map_err(|e| self.fail("cannot write a claim", e))
        });
        match ended {
            Err(e) if e.code() != snowmint::ErrorCode::LeaseLost => return Err(e),
            _ => {}
        }
        let mut held = self.held();
        let key = (claim.sequencer.clone(), claim.node_id);
        let path = self.node_path(&claim.sequencer, claim.node_id, "lock");
        if let Some(h) = held.get(&key).filter(|h| h.token == claim.token) {
            // Closing the files releases the locks, unless the file has left its path: then the
            // registry lock stays until the claim's reservation has passed (see `Held`).
            if self.at_path(&path, h.id)? {
                held.remove(&key);
            }
        }
        Ok(())
    }

    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        let path = self.node_path(sequencer, node_id, "reservation");
        let Some(text) =
            read_opt(&path).map_err(|e| self.fail(format!("cannot read {}", path.display()), e))?
        else {
            return Ok(None);
        };
        let f = fields(&text);
        let num = |k: &str| f.get(k).and_then(|v| v.parse::<u64>().ok());
        match (
            num("position"),
            num("layout_fingerprint"),
            num("until_unix_ms"),
        ) {
            (Some(position), Some(layout_fingerprint), Some(until_unix_ms)) => {
                Ok(Some(Reservation {
                    position,
                    layout_fingerprint,
                    until_unix_ms,
                }))
            }
            _ => Err(self.corrupt(&path)),
        }
    }

    fn reserve(&self, claim: &Claim, r: &Reservation) -> Result<()> {
        self.write_reservation(claim, r, false)
    }

    fn lower_reservation(&self, claim: &Claim, r: &Reservation) -> Result<()> {
        self.write_reservation(claim, r, true)
    }

    fn row(&self, key: &str) -> Result<Option<String>> {
        crate::base::name::check_row_key(key)?;
        let path = self.dir.join("rows").join(format!("{key}.row"));
        read_opt(&path).map_err(|e| self.fail(format!("cannot read {}", path.display()), e))
    }

    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        crate::base::name::check_row_key(key)?;
        let rows = self.dir.join("rows");
        let lock_path = rows.join(format!("{key}.lock"));
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| self.fail(format!("cannot open {}", lock_path.display()), e))?;
        // Held until the end of this call (or by the kernel if the process dies).
        let _lock = lock_wait(lock)
            .map_err(|e| self.fail(format!("cannot lock {}", lock_path.display()), e))?;
        let path = rows.join(format!("{key}.row"));
        let current =
            read_opt(&path).map_err(|e| self.fail(format!("cannot read {}", path.display()), e))?;
        if current.as_deref() != expected {
            return Ok(false);
        }
        write_atomic_mode(&path, new, 0o600)
            .map_err(|e| self.fail(format!("cannot write {}", path.display()), e))?;
        Ok(true)
    }

    fn holders(&self, sequencer: &str, now_unix_ms: u64) -> Result<Vec<NodeState>> {
        let dir = self.node_dir(sequencer);
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.fail(format!("cannot list {}", dir.display()), e)),
        };
        let mut ids: Vec<u64> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name();
                let name = name.to_str()?;
                let (id, ext) = name.split_once('.')?;
                matches!(ext, "lock" | "reservation").then(|| id.parse().ok())?
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut out = Vec::new();
        for node_id in ids {
            let lock_path = self.node_path(sequencer, node_id, "lock");
            let claim = match File::open(&lock_path) {
                Ok(f) => {
                    let (token, expires_unix_ms, holder) = self.read_holder(&f)?;
                    let alive = token > 0
                        && expires_unix_ms > now_unix_ms
                        && token_alive(&f, token)
                            .map_err(|e| self.fail("cannot test a lock", e))?;
                    alive.then_some(HeldBy {
                        holder,
                        token,
                        expires_unix_ms,
                    })
                }
                Err(_) => None,
            };
            let reservation = self.reservation(sequencer, node_id)?;
            if claim.is_some() || reservation.is_some() {
                out.push(NodeState {
                    node_id,
                    claim,
                    reservation,
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process forked while a thread is in a section under the store's lock (a lease keeper renewing
    /// while a pre-fork server forks its workers) shares the locked open file description. The lock
    /// must come free when the parent's section ends: the child's own section then takes it (it used to
    /// wait for ever, and the parent's next section with it).
    #[test]
    fn a_fork_during_a_locked_section_does_not_keep_the_lock() {
        use std::os::unix::ffi::OsStrExt;
        let dir = std::env::temp_dir().join(format!("snowmint-file-fork-{}", std::process::id()));
        let store = FileStore::create(&dir).unwrap();
        let path = std::ffi::CString::new(dir.join(".lock").as_os_str().as_bytes()).unwrap();
        let section = store.registry_lock().unwrap();
        // SAFETY: the child makes async-signal-safe calls only, and leaves with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: as above; SIGALRM ends a child that waits too long.
            unsafe {
                libc::alarm(10);
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY);
                let locked = fd >= 0 && libc::flock(fd, libc::LOCK_EX) == 0;
                libc::_exit(if locked { 0 } else { 1 });
            }
        }
        drop(section);
        let t0 = std::time::Instant::now();
        let status = loop {
            let mut status = 0;
            // SAFETY: our own child.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                break status;
            }
            assert!(t0.elapsed().as_secs() < 30, "the child never ended");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the child could not take the lock its parent's section had let go (status {status})"
        );
        drop(store.registry_lock().unwrap());
        let _ = fs::remove_dir_all(&dir);
    }

    /// Should the parent die inside the section after the fork (killed before its unlock), the child
    /// lets go of its copy of the description ([`lock_sections`]): its own section then takes the lock,
    /// where it would otherwise wait for ever on the copy it holds itself. Here the parent of that
    /// scenario is a child of the test (A), which forks B inside a section and ends without leaving it.
    #[test]
    fn a_child_lets_go_of_a_section_its_dead_parent_was_in() {
        use std::os::unix::ffi::OsStrExt;
        let dir = std::env::temp_dir().join(format!("snowmint-file-orphan-{}", std::process::id()));
        let store = FileStore::create(&dir).unwrap();
        let path = std::ffi::CString::new(dir.join(".lock").as_os_str().as_bytes()).unwrap();
        let mut pipe = [0; 2];
        // SAFETY: a valid array of two descriptors.
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        // SAFETY: A takes the section (glibc's fork handlers make the allocation safe), forks B and
        // leaves with _exit; B makes async-signal-safe calls only.
        let a = unsafe { libc::fork() };
        assert!(a >= 0, "fork failed");
        if a == 0 {
            let section = store.registry_lock();
            unsafe {
                let me = libc::getpid();
                if section.is_ok() && libc::fork() == 0 {
                    // B: once A is gone (B is re-parented), take the lock; SIGALRM ends a B that waits.
                    libc::alarm(10);
                    while libc::getppid() == me {
                        libc::usleep(1000);
                    }
                    let fd = libc::open(path.as_ptr(), libc::O_WRONLY);
                    let locked = fd >= 0 && libc::flock(fd, libc::LOCK_EX) == 0;
                    libc::write(
                        pipe[1],
                        [if locked { b'y' } else { b'n' }].as_ptr().cast(),
                        1,
                    );
                    libc::_exit(0);
                }
                // A dies inside the section.
                libc::_exit(0);
            }
        }
        // SAFETY: the test's copy of the write end; A is our own child.
        unsafe {
            libc::close(pipe[1]);
            libc::waitpid(a, std::ptr::null_mut(), 0);
        }
        let mut answer = [0u8; 1];
        let mut poll = libc::pollfd {
            fd: pipe[0],
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; a one-byte buffer.
        let read = unsafe {
            libc::poll(&mut poll, 1, 30_000);
            libc::read(pipe[0], answer.as_mut_ptr().cast(), 1)
        };
        unsafe { libc::close(pipe[0]) };
        assert_eq!(
            (read, answer[0]),
            (1, b'y'),
            "the orphaned child could not take the lock its dead parent's section held"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    /// Expired claims of this process (a service's client leases nobody renews) do not keep their files
    /// open: the next claim or renewal past their expiry and reservation closes them.
    #[test]
    fn ended_claims_do_not_keep_files_open() {
        let dir = std::env::temp_dir().join(format!("snowmint-file-ended-{}", std::process::id()));
        let store = FileStore::create(&dir).unwrap();
        let config = SequencerConfig {
            layout: crate::base::layout::layout_text(&snowmint::Layout::preset("twitter").unwrap()),
            nodes: 40,
        };
        let incarnation = store.create_sequencer("s", &config, 0).unwrap().incarnation;
        let req = |now_unix_ms| ClaimRequest {
            sequencer: "s",
            nodes: 40,
            start: 0,
            ttl_ms: 1000,
            holder: "test",
            now_unix_ms,
            incarnation,
        };
        let claims: Vec<Claim> = (0..40)
            .map(|_| store.claim(&req(0)).unwrap().unwrap())
            .collect();
        let r = Reservation {
            position: 1,
            layout_fingerprint: 1,
            until_unix_ms: 1500,
        };
        store.reserve(&claims[5], &r).unwrap();
        assert_eq!(store.held().len(), 40);
        // Past every expiry but not node 5's reservation: node 0 again, and node 5 still open.
        let fresh = store.claim(&req(1200)).unwrap().unwrap();
        assert_eq!(fresh.node_id, 0);
        assert!(fresh.token > claims[0].token);
        let open: Vec<u64> = store.held().keys().map(|k| k.1).collect();
        assert_eq!((open.len(), open.contains(&5)), (2, true), "{open:?}");
        store.renew(&fresh, 1000, 1600).unwrap();
        assert_eq!(store.held().len(), 1);
        let _ = fs::remove_dir_all(&dir);
    }

    /// A directory whose history is lost (here: a backup taken before a claim, restored after it) does
    /// not give a fencing token again: a claim made after the lost one gets a larger token, from the
    /// clock's floor ([`token_floor`]), though the restored directory records no earlier claim. Before:
    /// both claims got token 1, and a holder of the lost claim (the ID service's lease token naming
    /// node 0 and token 1) passed for the holder of the new one. The liveness lock on byte `token`
    /// (about 1.8e15) works at that offset.
    #[test]
    fn a_restored_directory_does_not_give_a_fencing_token_again() {
        let base =
            std::env::temp_dir().join(format!("snowmint-file-restored-{}", std::process::id()));
        let (dir, backup) = (base.join("store"), base.join("backup"));
        struct Removed(PathBuf);
        impl Drop for Removed {
            fn drop(&mut self) {
                let _ = fs::remove_dir_all(&self.0);
            }
        }
        let _ = fs::remove_dir_all(&base);
        let _removed = Removed(base.clone());
        let config = SequencerConfig {
            layout: crate::base::layout::layout_text(&snowmint::Layout::preset("twitter").unwrap()),
            nodes: 1,
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let claim_at = |store: &FileStore, now_unix_ms: u64| {
            let incarnation = store.sequencer("s").unwrap().unwrap().incarnation;
            store
                .claim(&ClaimRequest {
                    sequencer: "s",
                    nodes: 1,
                    start: 0,
                    ttl_ms: 1000,
                    holder: "test",
                    now_unix_ms,
                    incarnation,
                })
                .unwrap()
                .expect("node 0 is free")
        };
        let store = FileStore::create(&dir).unwrap();
        store.create_sequencer("s", &config, now).unwrap();
        let copied = std::process::Command::new("cp")
            .arg("-a")
            .arg(&dir)
            .arg(&backup)
            .status()
            .unwrap();
        assert!(copied.success());
        let first = claim_at(&store, now);
        // Another open file sees the claim's liveness lock on byte `token`.
        let node_file = File::open(store.node_path("s", 0, "lock")).unwrap();
        assert!(
            token_alive(&node_file, first.token).unwrap(),
            "no liveness lock seen on byte {}",
            first.token
        );
        store.release(&first).unwrap();
        drop((store, node_file));
        // The backup restored: node 0's file is gone with the history.
        fs::remove_dir_all(&dir).unwrap();
        fs::rename(&backup, &dir).unwrap();
        let store = FileStore::open(&dir).unwrap();
        let second = claim_at(&store, now + 1);
        assert!(
            second.token > first.token,
            "the claim after the restore got fencing token {} again (the lost claim's: {})",
            second.token,
            first.token
        );
    }
}
