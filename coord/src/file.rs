//! The embedded store: a directory on this host, shared by its processes, no server.
//!
//! ```text
//! DIR/sequencers/NAME.seq           the live record of NAME (absent once destroyed)
//! DIR/sequencers/NAME.incarnation   the last incarnation of NAME (survives destroy)
//! DIR/sequencers/NAME.floor         the value floor of NAME (raised by destroy, survives it)
//! DIR/nodes/NAME/N.lock             claim of node ID N: an OS lock on this file; the last holder,
//!                                   its fencing token and expiry inside
//! DIR/nodes/NAME/N.reservation      the reservation of node ID N
//! DIR/.lock                         serialises sequencer create/destroy
//! DIR/rows/KEY.row                  a row (range allocation): its value, written whole and atomically
//! DIR/rows/KEY.lock                 serialises the compare-and-set of KEY among processes (flock)
//! ```
//!
//! A claim is an open-file-description lock (`fcntl(F_OFD_SETLK)`, `flock` where there is none) on
//! `N.lock`: the kernel releases it when the process dies, so a node ID of a killed process is free at
//! once. Every other file is written whole and atomically (write, `fsync`, `rename`, `fsync` of the
//! directory), so a crash leaves the old or the new content, never a torn one.
//!
//! Create, destroy and every reservation run under `DIR/.lock`: a reservation is written only while
//! the record of the incarnation its claim was taken under is live, so the floor a destroy computes
//! from the reservations is final (crate::store, "Value floor").

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{io, Error, Result};
use crate::memory::lost;
use crate::store::{
    Claim, ClaimRequest, HeldBy, NodeState, Reservation, SequencerConfig, SequencerRecord, Store,
};

/// The embedded store in one directory.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    /// The claims this process holds: fencing token, the incarnation claimed under, and the lock file,
    /// which stays open (closing it releases the lock).
    held: Mutex<HashMap<(String, u64), Held>>,
}

type Held = (u64, u64, File);

enum Lock {
    Taken,
    Busy,
}

/// Tries to take (or, with `test_only`, to test) an exclusive lock on the whole file, without waiting.
fn try_lock(file: &File, test_only: bool) -> std::io::Result<Lock> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed `flock` is valid; the fd is open for the duration of the call.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = libc::F_WRLCK as _;
        fl.l_whence = libc::SEEK_SET as _;
        let cmd = if test_only {
            libc::F_OFD_GETLK
        } else {
            libc::F_OFD_SETLK
        };
        // SAFETY: as above; `fl` outlives the call.
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut fl) };
        if rc == -1 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(Lock::Busy),
                _ => Err(e),
            };
        }
        if test_only && fl.l_type as i32 != libc::F_UNLCK {
            return Ok(Lock::Busy);
        }
        Ok(Lock::Taken)
    }
    #[cfg(not(target_os = "linux"))]
    {
        // SAFETY: the fd is open for the duration of the call.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == -1 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EWOULDBLOCK) => Ok(Lock::Busy),
                _ => Err(e),
            };
        }
        if test_only {
            // SAFETY: as above.
            unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
        }
        Ok(Lock::Taken)
    }
}

/// Takes an exclusive lock, waiting for it (serialises sequencer create/destroy among processes).
fn lock_wait(file: &File) -> std::io::Result<()> {
    // SAFETY: the fd is open for the duration of the call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Writes `path` whole and atomically: a temporary file, `fsync`, `rename`, `fsync` of the directory.
fn write_atomic(path: &Path, content: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("f"),
        std::process::id()
    ));
    {
        let mut f = File::create(&tmp)?;
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
    /// Opens (creating if missing) the store in `dir`.
    pub fn open(dir: impl Into<PathBuf>) -> Result<FileStore> {
        let dir = dir.into();
        let store = FileStore {
            dir,
            held: Mutex::new(HashMap::new()),
        };
        for sub in ["sequencers", "nodes", "rows"] {
            let p = store.dir.join(sub);
            fs::create_dir_all(&p).map_err(|e| {
                io(
                    format!("{}: cannot create {}", store.describe(), p.display()),
                    e,
                )
            })?;
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

    fn registry_lock(&self) -> Result<File> {
        let path = self.dir.join(".lock");
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| self.fail(format!("cannot open {}", path.display()), e))?;
        lock_wait(&f).map_err(|e| self.fail(format!("cannot lock {}", path.display()), e))?;
        Ok(f)
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

    fn write_holder(
        &self,
        file: &mut File,
        holder: &str,
        token: u64,
        expires_unix_ms: u64,
    ) -> std::io::Result<()> {
        // The token line comes first and is rewritten in place before the file is cut to length, so a
        // crash halfway leaves the new token readable (and at worst stale text after it).
        let holder = holder.replace('\n', " ");
        let text = format!("token={token}\nexpires_unix_ms={expires_unix_ms}\nholder={holder}\n");
        file.rewind()?;
        file.write_all(text.as_bytes())?;
        file.set_len(text.len() as u64)
    }
}

impl Store for FileStore {
    fn describe(&self) -> String {
        format!("file://{}", self.dir.display())
    }

    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now_unix_ms: u64,
    ) -> Result<SequencerRecord> {
        // Names become file names: never a path.
        crate::sequencer::check_name(name)?;
        let _guard = self.registry_lock()?;
        if let Some(existing) = self.read_record(name)? {
            return if existing.config == *config {
                Ok(existing)
            } else {
                Err(crate::sequencer::conflict(name, &existing.config, config))
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
        crate::sequencer::check_name(name)?;
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
        let floor = crate::store::floor_after(&record, reservations)?;
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
        crate::sequencer::check_name(r.sequencer)?;
        // Only a hint here (the reservation, under the registry lock, is what decides).
        if self.read_record(r.sequencer)?.map(|s| s.incarnation) != Some(r.incarnation) {
            return Err(crate::store::not_live(
                &self.describe(),
                r.sequencer,
                r.incarnation,
            ));
        }
        for i in 0..r.nodes {
            let node_id = (r.start + i) % r.nodes;
            if self
                .held()
                .contains_key(&(r.sequencer.to_string(), node_id))
            {
                continue;
            }
            let path = self.node_path(r.sequencer, node_id, "lock");
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
                    let dir = self.node_dir(r.sequencer);
                    fs::create_dir_all(&dir)
                        .map_err(|e| self.fail(format!("cannot create {}", dir.display()), e))?;
                    open()
                }
                other => other,
            };
            let mut file =
                opened.map_err(|e| self.fail(format!("cannot open {}", path.display()), e))?;
            match try_lock(&file, false)
                .map_err(|e| self.fail(format!("cannot lock {}", path.display()), e))?
            {
                Lock::Busy => continue,
                Lock::Taken => {}
            }
            // The lock file keeps the last token of the node ID (each holder writes its own there, under
            // the lock, without fsync: a claim costs well under a millisecond). The reservation, written
            // durably before anything is minted, records its token too, so even after a power loss the
            // next token exceeds that of every holder that minted.
            let mut text = String::new();
            file.read_to_string(&mut text)
                .map_err(|e| self.fail(format!("cannot read {}", path.display()), e))?;
            let last = fields(&text)
                .get("token")
                .and_then(|t| t.parse::<u64>().ok())
                .unwrap_or(0);
            let token = last.max(self.reservation_token(r.sequencer, node_id)?) + 1;
            let expires_unix_ms = r.now_unix_ms.saturating_add(r.ttl_ms);
            self.write_holder(&mut file, r.holder, token, expires_unix_ms)
                .map_err(|e| self.fail(format!("cannot write {}", path.display()), e))?;
            self.held().insert(
                (r.sequencer.to_string(), node_id),
                (token, r.incarnation, file),
            );
            return Ok(Some(Claim {
                sequencer: r.sequencer.into(),
                node_id,
                token,
                expires_unix_ms,
            }));
        }
        Ok(None)
    }

    fn renew(&self, claim: &Claim, ttl_ms: u64, now_unix_ms: u64) -> Result<Claim> {
        let mut held = self.held();
        match held.get_mut(&(claim.sequencer.clone(), claim.node_id)) {
            Some((token, _, file)) if *token == claim.token => {
                let expires_unix_ms = now_unix_ms.saturating_add(ttl_ms);
                let mut text = String::new();
                file.rewind()
                    .and_then(|_| file.read_to_string(&mut text))
                    .map_err(|e| self.fail("cannot read a claim", e))?;
                let holder = fields(&text)
                    .get("holder")
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                self.write_holder(file, &holder, claim.token, expires_unix_ms)
                    .map_err(|e| self.fail("cannot write a claim", e))?;
                Ok(Claim {
                    expires_unix_ms,
                    ..claim.clone()
                })
            }
            _ => Err(lost(claim)),
        }
    }

    fn release(&self, claim: &Claim) -> Result<()> {
        let mut held = self.held();
        let key = (claim.sequencer.clone(), claim.node_id);
        if held.get(&key).is_some_and(|(t, _, _)| *t == claim.token) {
            // Closing the file releases the lock.
            held.remove(&key);
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
        // The lock is held while the file is open in `held`; writing under the `held` mutex keeps a
        // release (or another thread's write) from interleaving.
        let held = self.held();
        match held.get(&(claim.sequencer.clone(), claim.node_id)) {
            Some((token, incarnation, _)) if *token == claim.token => {
                // Only while the incarnation is live: a destroy (under the same lock) has either not
                // computed the floor yet, or this claim's sequencer is gone.
                let _guard = self.registry_lock()?;
                if self.read_record(&claim.sequencer)?.map(|r| r.incarnation) != Some(*incarnation)
                {
                    return Err(lost(claim));
                }
                let text = format!(
                    "position={}\nlayout_fingerprint={}\nuntil_unix_ms={}\ntoken={}\n",
                    r.position, r.layout_fingerprint, r.until_unix_ms, claim.token
                );
                write_atomic(
                    &self.node_path(&claim.sequencer, claim.node_id, "reservation"),
                    &text,
                )
                .map_err(|e| self.fail("cannot write a reservation", e))
            }
            _ => Err(lost(claim)),
        }
    }

    fn row(&self, key: &str) -> Result<Option<String>> {
        crate::store::check_row_key(key)?;
        let path = self.dir.join("rows").join(format!("{key}.row"));
        read_opt(&path).map_err(|e| self.fail(format!("cannot read {}", path.display()), e))
    }

    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        crate::store::check_row_key(key)?;
        let rows = self.dir.join("rows");
        let lock_path = rows.join(format!("{key}.lock"));
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| self.fail(format!("cannot open {}", lock_path.display()), e))?;
        // Held until `lock` is closed at the end of this call (or by the kernel if the process dies).
        lock_wait(&lock)
            .map_err(|e| self.fail(format!("cannot lock {}", lock_path.display()), e))?;
        let path = rows.join(format!("{key}.row"));
        let current =
            read_opt(&path).map_err(|e| self.fail(format!("cannot read {}", path.display()), e))?;
        if current.as_deref() != expected {
            return Ok(false);
        }
        write_atomic(&path, new)
            .map_err(|e| self.fail(format!("cannot write {}", path.display()), e))?;
        Ok(true)
    }

    fn holders(&self, sequencer: &str, _now_unix_ms: u64) -> Result<Vec<NodeState>> {
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
                Ok(mut f) => {
                    match try_lock(&f, true).map_err(|e| self.fail("cannot test a lock", e))? {
                        Lock::Taken => None,
                        Lock::Busy => {
                            let mut text = String::new();
                            f.read_to_string(&mut text)
                                .map_err(|e| self.fail("cannot read a claim", e))?;
                            let f = fields(&text);
                            Some(HeldBy {
                                holder: f.get("holder").unwrap_or(&"").to_string(),
                                token: f.get("token").and_then(|v| v.parse().ok()).unwrap_or(0),
                                expires_unix_ms: f
                                    .get("expires_unix_ms")
                                    .and_then(|v| v.parse().ok())
                                    .unwrap_or(0),
                            })
                        }
                    }
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
