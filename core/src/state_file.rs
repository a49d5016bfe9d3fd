//! One node ID shared by many processes of a host: a generator's state word in a memory-mapped file
//! (Chronicle's `DistributedUniqueTimeProvider`). Unix only, `std` only.
//!
//! Every process that opens the same file maps the same page, and [`SharedGenerator`] applies its
//! one lock-free rule (a compare-and-swap on the state word) to the word in that page, so gunicorn
//! workers, Node cluster workers or forked C workers mint under one node ID with no duplicates. The word
//! is the next free logical position, so a process that restarts continues after the last ID any
//! process minted, even when the clock went back while it was down (the [`Policy`](crate::Policy) then
//! decides, as for any clock step back: wait, fail with `TOO_FAR_AHEAD`, or strict). A child forked after
//! the file was opened shares the mapping (`MAP_SHARED`), so it is safe by construction.
//!
//! # The file
//! 256 bytes, one page when mapped. Header (little-endian): magic `SNOWMINT` (0..8), format version
//! (8..12), offset of the state word (12..16), file length (16..24), the layout's
//! [fingerprint](crate::Layout::fingerprint) (24..32), the node ID (32..40), a random file ID made at
//! creation (40..48), the creation time in Unix ns (48..56), and a checksum of bytes 0..56 (56..64);
//! then the six words the layout's fingerprint is made of (64..112, checked by the fingerprint: files
//! written before they were recorded hold zeros there, still read), so that a mismatch names both
//! layouts; then the state word's byte-order mark (112..120): the value `0x0102030405060708` in the
//! byte order of the process that made the file.
//! The state word (the native byte order of the host that made the file) is at 128, alone on its cache
//! line (128..192), so the header's line is never written after creation. The next line (192..256) holds
//! eight **lease words** ([`StateFile::lease_word`], zero in a new file, native byte order too): a file
//! whose processes share a leased node ID ([`StateFile::open_leased`], header node ID [`LEASED_NODE`])
//! keeps its lease record there (`snowmint-coord`'s shared lease: the ceiling every process mints below,
//! the lease's state, node ID and fencing token); a file for a fixed node ID never writes them.
//! A process of the other byte order (a big-endian s390x host, or an emulated process of one, sharing
//! `/dev/shm` with a little-endian one) would read those words wrongly: it reads the mark in its own
//! order, finds it reversed and refuses the file (`STATE_FILE_MISMATCH`). Files made before the mark was
//! written hold zeros there and are read in the reader's order, as they always were.
//!
//! A missing file is created atomically: a temporary file in the same directory is written and synced
//! in full, then hard-linked to the path, which fails if another process got there first (then both
//! use the winner's file). So a reader never sees a half-written header.
//!
//! # Errors (all `STATE_FILE_MISMATCH`, the message says which)
//! Another layout or node ID, a file of the wrong size (truncated), a foreign file (wrong magic), a
//! damaged header (checksum), an unknown format version, a state word past the layout's lifespan, a
//! directory, or an OS refusal (a read-only directory, no permission). The size is checked before the
//! file is mapped and again after, so opening never faults on a short file. Nothing is ever reset: a
//! file that does not check out is left untouched and reported.
//!
//! A file **truncated while mapped** (`truncate -s 0` by hand) makes the next access to the word raise
//! `SIGBUS` in every process that maps it, as with any shared mapping: no library can catch that without
//! taking over the process's signal handling. Do not truncate a state file in use.
//!
//! # An unlinked or replaced file (Chronicle-Bytes#739)
//! If the file is deleted (or replaced by `mv`) while processes have it mapped, they keep minting from
//! the old inode while a process that opens the path gets a new file: two states, duplicate IDs. On
//! Linux every open therefore looks, after mapping its file, at the mappings of every process it may
//! read (`/proc/*/maps`: the same user, or all for root) for another file of the same file system
//! mapped under the same path (or this one, unlinked) and refuses with [`StateFileProblem::Replaced`] /
//! [`StateFileProblem::Unlinked`] (a file of another file system under the same name belongs to another
//! mount namespace, such as a container's own `/dev/shm`, and is left alone). Since each open maps before it looks, of two processes that map
//! different files under one path the later one always sees the earlier one. Processes of other users
//! or in other PID namespaces are not visible; on other Unix systems the scan is skipped.
//! [`StateFile::verify`] checks a running generator's file is still the one at its path.
//!
//! # Durability
//! On tmpfs (`/dev/shm`) the file lives in memory: it survives process restarts but not a reboot, after
//! which a new file starts from the clock (safe as long as the clock after the reboot is past the last
//! ID minted). On a disk file system the kernel writes the page back within about 30 s; after a crash
//! or power loss the file holds the state of the last write-back, so IDs minted since then may repeat
//! if the clock also went back. [`StateFile::flush`] (`msync(MS_SYNC)`) makes the current state
//! durable: call it where you need that (at shutdown, or periodically).

use core::sync::atomic::{AtomicU64, Ordering};
use std::boxed::Box;
use std::ffi::{c_int, c_long, c_void};
use std::format;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

use crate::error::{Error, LayoutRecord, Result, StateFileProblem};
use crate::generator::shared::{SharedGenerator, StateWord};
use crate::generator::{mix64, Options};
use crate::layout::Layout;

/// A state file's size in bytes.
pub const STATE_FILE_LEN: u64 = 256;
/// The format version this build writes and reads.
pub const STATE_FILE_VERSION: u32 = 1;
/// The first eight bytes of every state file.
pub const STATE_FILE_MAGIC: [u8; 8] = *b"SNOWMINT";
/// Where the state word lives.
const STATE_OFFSET: usize = 128;
/// Bytes covered by the checksum.
const CHECKED: usize = 56;
/// Where the layout record starts (after the checksummed header).
const LAYOUT_AT: usize = 64;
/// Where the lease words start: the second cache line of the state word's pair.
const LEASE_AT: usize = 192;
/// How many lease words a state file has ([`StateFile::lease_word`]).
pub const LEASE_WORDS: usize = 8;
/// The node ID recorded in the header of a file whose processes share a leased node ID
/// ([`StateFile::open_leased`]): the node is in the lease words, not fixed at creation.
pub const LEASED_NODE: u64 = u64::MAX;
/// Where the state word's byte-order mark is.
const BYTE_ORDER_AT: usize = 112;
/// The byte-order mark: written in the native order of the process that makes the file, so a reader of
/// the other order sees it reversed.
const BYTE_ORDER_MARK: u64 = 0x0102_0304_0506_0708;

extern "C" {
    fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        offset: c_long,
    ) -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> c_int;
    fn msync(addr: *mut c_void, len: usize, flags: c_int) -> c_int;
}
const PROT_READ: c_int = 1;
const PROT_WRITE: c_int = 2;
const MAP_SHARED: c_int = 1;
#[cfg(any(target_os = "linux", target_os = "android"))]
const MS_SYNC: c_int = 4;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const MS_SYNC: c_int = 0x10;

fn problem(problem: StateFileProblem) -> Error {
    Error::StateFile { problem }
}

fn os(op: &'static str, e: io::Error) -> Error {
    match e.raw_os_error() {
        Some(21) => problem(StateFileProblem::NotAFile),
        Some(errno) => problem(StateFileProblem::Os { op, errno }),
        None => problem(StateFileProblem::Os { op, errno: 0 }),
    }
}

/// The header's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Header {
    fingerprint: u64,
    /// The layout's [`Layout::fingerprint`] fields (64..112); `None` in a file written before they
    /// were recorded (zeros there, which do not hash to its fingerprint).
    layout: Option<[u64; 6]>,
    node_id: u64,
    file_id: u64,
    created_unix_ns: u64,
}

fn checksum(bytes: &[u8]) -> u64 {
    bytes.chunks(8).fold(0x5354_4154_4546_494c, |h, w| {
        mix64(h ^ u64::from_le_bytes(w.try_into().expect("8-byte chunks")))
    })
}

impl Header {
    fn encode(&self) -> [u8; STATE_FILE_LEN as usize] {
        let mut b = [0u8; STATE_FILE_LEN as usize];
        b[0..8].copy_from_slice(&STATE_FILE_MAGIC);
        b[8..12].copy_from_slice(&STATE_FILE_VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&(STATE_OFFSET as u32).to_le_bytes());
        b[16..24].copy_from_slice(&STATE_FILE_LEN.to_le_bytes());
        b[24..32].copy_from_slice(&self.fingerprint.to_le_bytes());
        b[32..40].copy_from_slice(&self.node_id.to_le_bytes());
        b[40..48].copy_from_slice(&self.file_id.to_le_bytes());
        b[48..56].copy_from_slice(&self.created_unix_ns.to_le_bytes());
        let sum = checksum(&b[..CHECKED]);
        b[56..64].copy_from_slice(&sum.to_le_bytes());
        for (i, w) in self.layout.unwrap_or_default().iter().enumerate() {
            b[LAYOUT_AT + 8 * i..LAYOUT_AT + 8 * i + 8].copy_from_slice(&w.to_le_bytes());
        }
        b[BYTE_ORDER_AT..BYTE_ORDER_AT + 8].copy_from_slice(&BYTE_ORDER_MARK.to_ne_bytes());
        b
    }

    fn decode(b: &[u8; STATE_OFFSET]) -> core::result::Result<Header, StateFileProblem> {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if b[0..8] != STATE_FILE_MAGIC {
            return Err(StateFileProblem::NotAStateFile);
        }
        let version = u32::from_le_bytes(b[8..12].try_into().expect("4 bytes"));
        if checksum(&b[..CHECKED]) != u64_at(56) {
            return Err(StateFileProblem::Checksum);
        }
        if version != STATE_FILE_VERSION {
            return Err(StateFileProblem::Version {
                found: version,
                supported: STATE_FILE_VERSION,
            });
        }
        let offset = u32::from_le_bytes(b[12..16].try_into().expect("4 bytes"));
        if offset as usize != STATE_OFFSET || u64_at(16) != STATE_FILE_LEN {
            // A version-1 header always says these; a checksum that matches other values is not ours.
            return Err(StateFileProblem::Checksum);
        }
        let mark = u64::from_ne_bytes(
            b[BYTE_ORDER_AT..BYTE_ORDER_AT + 8]
                .try_into()
                .expect("8 bytes"),
        );
        if mark == BYTE_ORDER_MARK.swap_bytes() {
            return Err(StateFileProblem::ByteOrder {
                file_big_endian: cfg!(target_endian = "little"),
            });
        }
        if mark != BYTE_ORDER_MARK && mark != 0 {
            return Err(StateFileProblem::Checksum);
        }
        let fingerprint = u64_at(24);
        let layout: [u64; 6] = core::array::from_fn(|i| u64_at(LAYOUT_AT + 8 * i));
        Ok(Header {
            // The fingerprint checks the record: it is the hash of these words.
            layout: (crate::layout::fingerprint_of(&layout) == fingerprint).then_some(layout),
            fingerprint,
            node_id: u64_at(32),
            file_id: u64_at(40),
            created_unix_ns: u64_at(48),
        })
    }
}

/// A fresh random 64-bit value (std's `RandomState` is seeded from the OS), mixed with the time and PID.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(unix_ns() as u128);
    h.finish()
}

fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Creates the file at `path` atomically (write a temporary file in full, then hard-link it). Returns
/// `true` if this call created it, `false` if another process did first.
fn create(path: &Path, header: &Header) -> Result<bool> {
    let name = path
        .file_name()
        .ok_or(problem(StateFileProblem::NotAFile))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = dir.join(format!(
        ".{}.{:016x}.tmp",
        name.to_string_lossy(),
        header.file_id
    ));
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| os("create", e))?;
    let written = f.write_all(&header.encode()).and_then(|()| f.sync_all());
    drop(f);
    let created =
        written
            .map_err(|e| os("write", e))
            .and_then(|()| match fs::hard_link(&tmp, path) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(os("link", e)),
            });
    let _ = fs::remove_file(&tmp);
    if let Ok(true) = created {
        // Make the new directory entry durable too (a no-op on tmpfs).
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    created
}

/// A state file, mapped: the state word of a [`SharedGenerator`] shared by every process that opens
/// the same path with the same layout and node ID. See the [module docs](self) for the file format,
/// the errors and what survives a restart or a reboot.
///
/// ```
/// use snowmint::{Layout, Options, SharedGenerator};
/// let path = std::env::temp_dir().join(format!("snowmint-doc-{}.state", std::process::id()));
/// let a = SharedGenerator::open_file(&path, Layout::twitter(), 3, Options::default())?;
/// let b = SharedGenerator::open_file(&path, Layout::twitter(), 3, Options::default())?;
/// let (x, y) = (a.next_id()?, b.next_id()?);
/// assert!(y > x); // one state word, wherever the generators live
/// let err = SharedGenerator::open_file(&path, Layout::twitter(), 4, Options::default()).unwrap_err();
/// assert_eq!(err.code(), snowmint::ErrorCode::StateFileMismatch);
/// # drop((a, b)); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug)]
pub struct StateFile {
    map: NonNull<u8>,
    file: File,
    path: PathBuf,
    /// The absolute path without symbolic links, taken at open: what `verify` and the mapping scan
    /// compare with, whatever the working directory later becomes.
    canonical: PathBuf,
    dev: u64,
    ino: u64,
    header: Header,
    created: bool,
}

// SAFETY: the mapping is shared memory that is only read through atomics (the state word) or never
// written after creation (the header, read once through the file); the pointer stays valid until Drop.
unsafe impl Send for StateFile {}
unsafe impl Sync for StateFile {}

impl Drop for StateFile {
    fn drop(&mut self) {
        // SAFETY: mapped in `open` with this length; nothing borrows the word past `self`.
        unsafe {
            munmap(self.map.as_ptr().cast(), STATE_FILE_LEN as usize);
        }
    }
}

impl StateWord for StateFile {
    #[inline(always)]
    fn word(&self) -> &AtomicU64 {
        // SAFETY: the mapping is STATE_FILE_LEN bytes, page-aligned, so the word at STATE_OFFSET is in
        // bounds and 8-aligned; it lives as long as `self`.
        unsafe { &*(self.map.as_ptr().add(STATE_OFFSET) as *const AtomicU64) }
    }
}

impl StateFile {
    /// Opens the state file at `path` for `layout` and `node_id`, creating it if it is missing.
    pub fn open(path: impl AsRef<Path>, layout: &Layout, node_id: u64) -> Result<StateFile> {
        layout.node_field(node_id)?;
        StateFile::open_for(path.as_ref(), layout, node_id)
    }

    /// Opens the state file at `path` for `layout` and a node ID leased by the processes that share it
    /// (the file's node ID is [`LEASED_NODE`]; the lease record is in its [lease words](Self::lease_word),
    /// kept by `snowmint-coord`). A file made for a fixed node ID is `STATE_FILE_MISMATCH`, and so is a
    /// leased file opened with [`StateFile::open`].
    pub fn open_leased(path: impl AsRef<Path>, layout: &Layout) -> Result<StateFile> {
        StateFile::open_for(path.as_ref(), layout, LEASED_NODE)
    }

    fn open_for(path: &Path, layout: &Layout, node_id: u64) -> Result<StateFile> {
        let fresh = Header {
            fingerprint: layout.fingerprint(),
            layout: Some(LayoutRecord::of(layout).0),
            node_id,
            file_id: random_u64(),
            created_unix_ns: unix_ns(),
        };
        let mut created = false;
        let mut attempts = 0;
        let file = loop {
            match OpenOptions::new().read(true).write(true).open(path) {
                Ok(f) => break f,
                // Bounded: a file that keeps disappearing between link and open is reported.
                Err(e) if e.kind() == io::ErrorKind::NotFound && attempts < 3 => {
                    attempts += 1;
                    created = create(path, &fresh)?;
                }
                Err(e) => return Err(os("open", e)),
            }
        };
        let meta = file.metadata().map_err(|e| os("stat", e))?;
        if !meta.is_file() {
            return Err(problem(StateFileProblem::NotAFile));
        }
        let wrong_size = |len| {
            problem(StateFileProblem::Size {
                len,
                expected: STATE_FILE_LEN,
            })
        };
        if meta.len() != STATE_FILE_LEN {
            return Err(wrong_size(meta.len()));
        }
        let mut head = [0u8; STATE_OFFSET];
        file.read_exact_at(&mut head, 0)
            .map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof => wrong_size(0),
                _ => os("read", e),
            })?;
        let header = Header::decode(&head).map_err(problem)?;
        if header.fingerprint != fresh.fingerprint {
            return Err(problem(StateFileProblem::Layout {
                file: header.fingerprint,
                ours: fresh.fingerprint,
                file_layout: header.layout.map(LayoutRecord),
                our_layout: LayoutRecord::of(layout),
            }));
        }
        if header.node_id != node_id {
            return Err(problem(StateFileProblem::NodeId {
                file: header.node_id,
                ours: node_id,
            }));
        }
        use std::os::unix::io::AsRawFd;
        // SAFETY: a fresh shared mapping of an open file descriptor; checked for failure below.
        let ptr = unsafe {
            mmap(
                core::ptr::null_mut(),
                STATE_FILE_LEN as usize,
                PROT_READ | PROT_WRITE,
                MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr as isize == -1 || ptr.is_null() {
            return Err(os("mmap", io::Error::last_os_error()));
        }
        let state_file = StateFile {
            map: NonNull::new(ptr.cast()).expect("checked above"),
            path: path.to_path_buf(),
            // Unlinked since it was opened: verify below reports it.
            canonical: fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            dev: meta.dev(),
            ino: meta.ino(),
            header,
            created,
            file,
        };
        // Truncated between the check and the mapping: the word may be past the end of the file.
        let len = state_file.file.metadata().map_err(|e| os("stat", e))?.len();
        if len != STATE_FILE_LEN {
            return Err(wrong_size(len));
        }
        let state = state_file.word().load(Ordering::Relaxed);
        if state > layout.max_position().saturating_add(1) {
            return Err(problem(StateFileProblem::StateOutOfRange { state }));
        }
        state_file.verify()?;
        #[cfg(target_os = "linux")]
        state_file.scan_mappings()?;
        Ok(state_file)
    }

    /// Lease word `index` (`0..LEASE_WORDS`) of a file opened with [`StateFile::open_leased`]: eight
    /// 64-bit words at 192..256 (zero in a new file), shared by every process that maps the file, which
    /// `snowmint-coord` keeps its shared lease record in (ceiling, state, node ID, fencing token …).
    ///
    /// # Panics
    /// If `index >= LEASE_WORDS`.
    pub fn lease_word(&self, index: usize) -> &AtomicU64 {
        assert!(index < LEASE_WORDS, "lease word {index} out of range");
        // SAFETY: the mapping is STATE_FILE_LEN bytes and page-aligned; LEASE_AT + 8 * index + 8 <= 256
        // and 8-aligned; it lives as long as `self`.
        unsafe { &*(self.map.as_ptr().add(LEASE_AT + 8 * index) as *const AtomicU64) }
    }

    /// The file's device and inode (tells whether another open of its path is the same file).
    pub fn identity(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// The path the file was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this open created the file.
    pub fn created(&self) -> bool {
        self.created
    }

    /// The random ID the file was given when it was created (tells two files at one path apart).
    pub fn file_id(&self) -> u64 {
        self.header.file_id
    }

    /// When the file was created, Unix nanoseconds.
    pub fn created_unix_ns(&self) -> u64 {
        self.header.created_unix_ns
    }

    /// The state word's value: the next free logical position.
    pub fn state(&self) -> u64 {
        self.word().load(Ordering::Relaxed)
    }

    /// Writes the state to the storage device and waits for it (`msync(MS_SYNC)`): after this, a crash
    /// or power loss cannot take the file back past the present state. A no-op in effect on tmpfs.
    pub fn flush(&self) -> Result<()> {
        // SAFETY: the mapping made in `open`, of this length.
        let r = unsafe { msync(self.map.as_ptr().cast(), STATE_FILE_LEN as usize, MS_SYNC) };
        if r != 0 {
            return Err(os("msync", io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Checks that the mapped file is still the one at its path: [`StateFileProblem::Unlinked`] if it
    /// was deleted, [`StateFileProblem::Replaced`] if another file now has its path.
    pub fn verify(&self) -> Result<()> {
        let ours = self.file.metadata().map_err(|e| os("stat", e))?;
        if ours.nlink() == 0 {
            return Err(problem(StateFileProblem::Unlinked));
        }
        match fs::metadata(&self.canonical) {
            Ok(m) if m.dev() == self.dev && m.ino() == self.ino => Ok(()),
            Ok(_) => Err(problem(StateFileProblem::Replaced { pid: 0 })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(problem(StateFileProblem::Unlinked))
            }
            Err(e) => Err(os("stat", e)),
        }
    }

    /// Looks through the mappings of every process this one may inspect for another file mapped under
    /// this path (or this one, unlinked).
    #[cfg(target_os = "linux")]
    fn scan_mappings(&self) -> Result<()> {
        let Some(name) = self.canonical.to_str() else {
            return Ok(()); // /proc shows non-UTF-8 names escaped; nothing to compare with
        };
        let deleted = format!("{name} (deleted)");
        let (major, minor) = dev_major_minor(self.dev);
        let Ok(procs) = fs::read_dir("/proc") else {
            return Ok(());
        };
        for entry in procs.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            // Another user's process, or one that has exited: nothing to read.
            let Ok(maps) = fs::read_to_string(entry.path().join("maps")) else {
                continue;
            };
            for line in maps.lines() {
                let (is_deleted, rest) = if let Some(r) = line.strip_suffix(deleted.as_str()) {
                    (true, r)
                } else if let Some(r) = line.strip_suffix(name) {
                    (false, r)
                } else {
                    continue;
                };
                if !rest.ends_with(' ') {
                    continue;
                }
                // address perms offset dev inode path
                let mut fields = rest.split_ascii_whitespace().skip(3);
                let (Some(dev), Some(inode)) = (fields.next(), fields.next()) else {
                    continue;
                };
                let same_dev = dev.split_once(':').and_then(|(a, b)| {
                    Some((
                        u64::from_str_radix(a, 16).ok()?,
                        u64::from_str_radix(b, 16).ok()?,
                    ))
                }) == Some((major, minor));
                if !same_dev {
                    // Another file system under the same name: another mount namespace (a container
                    // with its own /dev/shm), not a file that replaced ours.
                    continue;
                }
                if inode.parse::<u64>().ok() != Some(self.ino) {
                    return Err(problem(StateFileProblem::Replaced { pid }));
                }
                if is_deleted {
                    return Err(problem(StateFileProblem::Unlinked));
                }
            }
        }
        Ok(())
    }
}

/// glibc's `major()` / `minor()` of a `st_dev`.
#[cfg(target_os = "linux")]
fn dev_major_minor(dev: u64) -> (u64, u64) {
    (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    )
}

impl SharedGenerator<StateFile> {
    /// A generator whose state word lives in the state file at `path`, shared with every process that
    /// opens the same path (same layout and node ID, else `STATE_FILE_MISMATCH`); the file is created
    /// if it is missing. See [`StateFile`].
    pub fn open_file(
        path: impl AsRef<Path>,
        layout: Layout,
        node_id: u64,
        options: Options,
    ) -> Result<Self> {
        // Refuse bad options before anything touches the file system.
        SharedGenerator::new(layout, node_id, options)?;
        let file = StateFile::open(path, &layout, node_id)?;
        SharedGenerator::with_state(layout, node_id, options, file)
    }

    /// The state file.
    pub fn state_file(&self) -> &StateFile {
        self.state_holder()
    }

    /// [`StateFile::flush`]: makes the present state durable.
    pub fn flush(&self) -> Result<()> {
        self.state_file().flush()
    }
}

/// The state word of a host's shared generator, in process memory or in a state file: one type, so
/// bindings run the same code on the hot path for both (the word is reached through a pointer, with
/// no branch on where it lives).
///
/// ```
/// use snowmint::{state_file::SharedState, Layout, Options, SharedGenerator};
/// let gen = SharedGenerator::with_state(Layout::twitter(), 7, Options::default(), SharedState::memory())?;
/// assert!(gen.state_holder().state_file().is_none());
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug)]
pub struct SharedState {
    word: NonNull<AtomicU64>,
    owner: Owner,
}

#[derive(Debug)]
enum Owner {
    // Read through `word`, never by name: the Box keeps the word alive and in place.
    Memory(#[allow(dead_code)] Box<Padded>),
    File(StateFile),
}

/// A word alone on its pair of cache lines (as in a state file).
#[derive(Debug)]
#[repr(C, align(128))]
struct Padded(AtomicU64);

// SAFETY: `word` points into `owner` (a Box or a mapping that lives as long as `self`) and is only used
// through atomics.
unsafe impl Send for SharedState {}
unsafe impl Sync for SharedState {}

impl SharedState {
    /// A word in process memory, starting at zero (a fresh generator).
    pub fn memory() -> SharedState {
        let boxed = Box::new(Padded(AtomicU64::new(0)));
        SharedState {
            word: NonNull::from(&boxed.0),
            owner: Owner::Memory(boxed),
        }
    }

    /// The word of a state file.
    pub fn file(file: StateFile) -> SharedState {
        SharedState {
            word: NonNull::from(file.word()),
            owner: Owner::File(file),
        }
    }

    /// The state file, if the word lives in one.
    pub fn state_file(&self) -> Option<&StateFile> {
        match &self.owner {
            Owner::File(f) => Some(f),
            Owner::Memory(_) => None,
        }
    }
}

impl StateWord for SharedState {
    #[inline(always)]
    fn word(&self) -> &AtomicU64 {
        // SAFETY: see the Send/Sync impls: the pointee lives as long as `self`.
        unsafe { self.word.as_ref() }
    }

    /// A word in process memory is the generator's alone; a state file's is shared by processes.
    fn exclusive(&self) -> bool {
        matches!(self.owner, Owner::Memory(_))
    }
}
