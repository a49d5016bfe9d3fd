//! The embedded store whose directory's history is lost (SPEC §3.2, "A store whose history is lost";
//! issue 39): every way it happens, with real processes, real signals and the sonyflake layout (256 IDs
//! a 10 ms tick, so a burst of 100,000 IDs runs seconds ahead of the clock and the counts are exact).
//!
//! In every row a first holder H mints 100,000 IDs on node 0 of a one-node sequencer, something happens
//! to the store's directory, and a next process B (the `snowmint` CLI) mints 100,000 more on node 0 of
//! whatever directory is now at the path. No ID may be minted twice; B may instead be refused
//! (`NODE_IDS_EXHAUSTED` while a live holder's claim is on record). Before the fix every row repeated
//! tens of thousands of IDs (the counts are in the issue's closing note).
//!
//! Two kinds of processes: the CLI, and this test binary started again as a child
//! (`SNOWMINT_HISTORY_CHILD=1`, [`child_hold`]) that mints under a lease, says `@@ minted`, and holds
//! the lease until its standard input closes. The rows that need another `/dev/shm` (a container's)
//! run their processes under `unshare --mount` with a tmpfs on `/dev/shm` (root only; skipped with a
//! note otherwise); nothing here touches the host's own claim registry beyond what any lease does.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

const CLI: &str = env!("CARGO_BIN_EXE_snowmint");
const N: usize = 100_000;

// ---- the child -----------------------------------------------------------------------------------

/// Not a test: the holder process (`SNOWMINT_HISTORY_CHILD=1`). Mints `N` IDs on
/// `SNOWMINT_HISTORY_URL` (sonyflake), writes them to `SNOWMINT_HISTORY_OUT`, says `@@ minted`, then
/// holds the lease until its standard input closes.
#[test]
fn child_hold() {
    if std::env::var_os("SNOWMINT_HISTORY_CHILD").is_none() {
        return;
    }
    let url = std::env::var("SNOWMINT_HISTORY_URL").unwrap();
    let out = std::env::var("SNOWMINT_HISTORY_OUT").unwrap();
    let gen = snowmint_coord::NodeGenerator::open(
        &url,
        snowmint::Layout::preset("sonyflake").unwrap(),
        snowmint::Options {
            policy: snowmint::Policy::Wait,
            ..snowmint::Options::default()
        },
    )
    .unwrap();
    let mut ids = vec![0u64; N];
    if std::env::var_os("SNOWMINT_HISTORY_STREAM").is_some() {
        // Mints on until minting fails (the lease lost), saying `@@ minting` once it is under way.
        ids.clear();
        let mut chunk = [0u64; 256];
        while gen.next_ids(&mut chunk).is_ok() {
            ids.extend_from_slice(&chunk);
            if ids.len() == 10 * 256 {
                println!("@@ minting");
                std::io::stdout().flush().unwrap();
            }
            assert!(ids.len() < 100_000_000, "minting never stopped");
        }
    } else {
        for chunk in ids.chunks_mut(256) {
            gen.next_ids(chunk).unwrap();
        }
    }
    let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
    // Whole or not at all: written aside, then renamed.
    std::fs::write(format!("{out}.tmp"), text).unwrap();
    std::fs::rename(format!("{out}.tmp"), &out).unwrap();
    println!("@@ minted");
    std::io::stdout().flush().unwrap();
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    drop(gen);
}

// ---- the parent's side ---------------------------------------------------------------------------

/// A fresh folder for one row.
fn row_dir(row: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("history-{}-{row}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn url(dir: &Path) -> String {
    format!("file://{}?sequencer=s", dir.display())
}

/// Creates the one-node sonyflake sequencer `s` in `dir` (creating the store).
fn create(dir: &Path) {
    let out = Command::new(CLI)
        .args([
            "sequencer",
            "create",
            "s",
            "--layout",
            "sonyflake",
            "--nodes",
            "1",
        ])
        .arg("--store")
        .arg(format!("file://{}", dir.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Replaces the store at `dir` with a new, empty one (`rm -rf` and a new `sequencer create`). A live
/// holder may write a file into it while it is being removed (`Directory not empty`, as `rm -rf` says
/// then too): removed again, as one would (bounded: 20 tries).
fn replace(dir: &Path) {
    for attempt in 1.. {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty && attempt < 20 => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("removing {}: {e}", dir.display()),
        }
    }
    create(dir);
}

/// Wraps `cmd` (program and arguments) to run with a `/dev/shm` of its own, as a container has.
fn own_shm(cmd: &[String]) -> Command {
    let mut c = Command::new("unshare");
    c.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount -t tmpfs tmpfs /dev/shm && exec "$@""#)
        .arg("sh")
        .args(cmd);
    c
}

/// Whether this process may make mount namespaces (root, `unshare` present): else the rows that need
/// them are skipped with a note.
fn namespaces() -> bool {
    let ok = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount -t tmpfs tmpfs /dev/shm")
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: needs `unshare --mount` (root) to give a process its own /dev/shm");
    }
    ok
}

/// A holder process ([`child_hold`]) on `url`, started by `wrap` (`None`: as is).
struct Holder {
    child: Child,
    stdin: Option<ChildStdin>,
    out: PathBuf,
}

impl Holder {
    fn start(url: &str, out: PathBuf, wrap: Option<fn(&[String]) -> Command>) -> Holder {
        Holder::start_as(url, out, wrap, false)
    }

    /// `stream`: the holder mints on until its lease is lost (`@@ minting` awaited, not `@@ minted`).
    fn start_as(
        url: &str,
        out: PathBuf,
        wrap: Option<fn(&[String]) -> Command>,
        stream: bool,
    ) -> Holder {
        let cmd: Vec<String> = vec![
            std::env::current_exe().unwrap().display().to_string(),
            "--exact".into(),
            "child_hold".into(),
            "--nocapture".into(),
            "--test-threads".into(),
            "1".into(),
        ];
        let mut c = match wrap {
            Some(w) => w(&cmd),
            None => {
                let mut c = Command::new(&cmd[0]);
                c.args(&cmd[1..]);
                c
            }
        };
        if stream {
            c.env("SNOWMINT_HISTORY_STREAM", "1");
        }
        let awaited = if stream { "@@ minting" } else { "@@ minted" };
        let mut child = c
            .env("SNOWMINT_HISTORY_CHILD", "1")
            .env("SNOWMINT_HISTORY_URL", url)
            .env("SNOWMINT_HISTORY_OUT", &out)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        // Waits (bounded by the test harness's own time) for `@@ minted`.
        let t0 = Instant::now();
        let mut lines = BufReader::new(stdout).lines();
        loop {
            match lines.next() {
                Some(Ok(l)) if l.contains(awaited) => break,
                Some(Ok(_)) => {}
                other => panic!("the holder ended before minting: {other:?}"),
            }
            assert!(t0.elapsed() < Duration::from_secs(120));
        }
        // The rest of its output is drained so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Holder { child, stdin, out }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn ids(&self) -> Vec<u64> {
        read_ids(&std::fs::read_to_string(&self.out).unwrap())
    }

    /// A streaming holder's IDs, once its lease is lost and it has written them (bounded wait).
    fn ids_when_stopped(&self) -> Vec<u64> {
        let t0 = Instant::now();
        while !self.out.exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "the holder never stopped minting"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.ids()
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: our own child's pid.
        assert_eq!(unsafe { libc::kill(self.pid() as libc::pid_t, sig) }, 0);
    }

    /// Closes its standard input (it releases its lease and exits) and waits for it.
    fn end(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }

    fn kill(mut self) {
        self.signal(libc::SIGKILL);
        let _ = self.child.wait();
    }
}

fn read_ids(text: &str) -> Vec<u64> {
    text.lines().map(|l| l.trim().parse().unwrap()).collect()
}

/// What the next process B did: the IDs it minted, or the error code it failed with.
#[derive(Debug)]
enum Outcome {
    Minted(Vec<u64>),
    Refused(String),
}

/// `snowmint mint -n N` on `url` (through `wrap` when given).
fn mint(url: &str, wrap: Option<Command>) -> Outcome {
    let mut c = wrap.unwrap_or_else(|| Command::new(CLI));
    let out = c
        .args(["mint", "-n", &N.to_string(), "--node", url])
        .output()
        .unwrap();
    if out.status.success() {
        let ids = read_ids(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(ids.len(), N);
        Outcome::Minted(ids)
    } else {
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let code = err
            .split_once("error[")
            .and_then(|(_, r)| r.split_once(']'))
            .map(|(c, _)| c.to_string())
            .unwrap_or_else(|| panic!("mint failed without a code: {err}"));
        Outcome::Refused(code)
    }
}

/// How many IDs of `b` are also in `a`.
fn twice(a: &[u64], b: &Outcome) -> usize {
    let n = a.len();
    let a: HashSet<u64> = a.iter().copied().collect();
    assert_eq!(a.len(), n, "the holder repeated its own IDs");
    match b {
        Outcome::Minted(ids) => ids.iter().filter(|id| a.contains(id)).count(),
        Outcome::Refused(_) => 0,
    }
}

/// The verdict of a row: no ID minted twice, and B either minted or was refused because a live holder's
/// claim is on record.
fn check(row: &str, a: &[u64], b: &[Outcome]) {
    let dup: usize = b.iter().map(|b| twice(a, b)).sum();
    let outcomes: Vec<String> = b
        .iter()
        .map(|o| match o {
            Outcome::Minted(ids) => format!("minted {}", ids.len()),
            Outcome::Refused(code) => format!("refused {code}"),
        })
        .collect();
    eprintln!("{row}: IDs minted twice: {dup} (next process: {outcomes:?})");
    for o in b {
        if let Outcome::Refused(code) = o {
            assert_eq!(
                code, "NODE_IDS_EXHAUSTED",
                "{row}: refused with another code"
            );
        }
    }
    assert_eq!(dup, 0, "{row}: IDs minted twice");
}

/// Points the symbolic link `link` at `target`, atomically (a new link renamed over the old one).
fn point(link: &Path, target: &Path) {
    let tmp = link.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}

/// Row 1: the store reached through a symbolic link (`current -> releases/N`), the link re-pointed to
/// a new directory while the first holder lives.
#[test]
fn a_symlink_re_pointed_under_a_live_holder() {
    let root = row_dir("symlink");
    let (r1, r2, link) = (root.join("r1"), root.join("r2"), root.join("current"));
    create(&r1);
    create(&r2);
    point(&link, &r1);
    let h = Holder::start(&url(&link), root.join("h.ids"), None);
    point(&link, &r2);
    let b = mint(&url(&link), None);
    // The registry names the node file by the path the renewals check (the link unresolved): the live
    // holder's claim on the file that was at that path is seen, and node 0 is not handed out again.
    assert!(
        matches!(&b, Outcome::Refused(c) if c == "NODE_IDS_EXHAUSTED"),
        "a live holder's node ID was handed out through the re-pointed link: {:?}",
        matches!(b, Outcome::Minted(_))
    );
    let a = h.ids();
    h.end();
    let b2 = mint(&url(&link), None);
    check("symlink re-pointed under a live holder", &a, &[b, b2]);
    let _ = std::fs::remove_dir_all(&root);
}

/// Row 2: the store shared by two containers (each its own `/dev/shm`), replaced while the first holder
/// lives.
#[test]
fn a_store_shared_by_two_containers_replaced_under_a_live_holder() {
    if !namespaces() {
        return;
    }
    let root = row_dir("containers");
    let dir = root.join("store");
    create(&dir);
    let h = Holder::start(&url(&dir), root.join("h.ids"), Some(own_shm));
    replace(&dir);
    let b = mint(&url(&dir), Some(own_shm(&[CLI.to_string()])));
    let a = h.ids();
    h.end();
    check("two containers, replaced under a live holder", &a, &[b]);
    let _ = std::fs::remove_dir_all(&root);
}

/// Row 2, with the first holder minting on (as fast as it may) while the store is replaced: it notices
/// at its next renewal, and until then mints up to the reservation it wrote before — which the store's
/// bound keeps below `now + max_ahead`, where the other container's claim starts.
#[test]
fn a_store_replaced_under_a_holder_minting_on_in_another_container() {
    if !namespaces() {
        return;
    }
    let root = row_dir("containers-minting");
    let dir = root.join("store");
    create(&dir);
    let h = Holder::start_as(&url(&dir), root.join("h.ids"), Some(own_shm), true);
    std::thread::sleep(Duration::from_millis(1500)); // at its bound ahead of the clock by now
    replace(&dir);
    let b = mint(&url(&dir), Some(own_shm(&[CLI.to_string()])));
    let a = h.ids_when_stopped();
    h.end();
    check(
        "two containers, replaced under a holder minting on",
        &a,
        &[b],
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Row 3: the host's claim registry deleted (a reboot clears it too), then the store replaced under a
/// live holder. All of it in a mount namespace of the holder's, so the host's own registry is untouched.
#[test]
fn the_registry_deleted_then_the_store_replaced_under_a_live_holder() {
    if !namespaces() {
        return;
    }
    let root = row_dir("registry");
    let dir = root.join("store");
    create(&dir);
    let h = Holder::start(&url(&dir), root.join("h.ids"), Some(own_shm));
    let enter = |program: &str| {
        let mut c = Command::new("nsenter");
        c.args(["-t", &h.pid().to_string(), "-m", "--", program]);
        c
    };
    let rm = enter("rm")
        .args(["-rf", "/dev/shm/snowmint-claims"])
        .status()
        .unwrap();
    assert!(rm.success());
    replace(&dir);
    let b = mint(&url(&dir), Some(enter(CLI)));
    let a = h.ids();
    h.end();
    check(
        "registry deleted, then replaced under a live holder",
        &a,
        &[b],
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Row 4: the holder exited after minting ahead of the clock; 2 s later the directory is `rm -rf`'d (or
/// `mv`'d away) and made again.
#[test]
fn the_store_removed_or_moved_2s_after_its_holder_exited() {
    for moved in [false, true] {
        let root = row_dir(if moved { "exit-mv" } else { "exit-rm" });
        let dir = root.join("store");
        create(&dir);
        let Outcome::Minted(a) = mint(&url(&dir), None) else {
            panic!("the first holder could not mint");
        };
        std::thread::sleep(Duration::from_secs(2));
        if moved {
            std::fs::rename(&dir, root.join("old")).unwrap();
            create(&dir);
        } else {
            replace(&dir);
        }
        let b = mint(&url(&dir), None);
        let row = if moved { "mv'd" } else { "rm -rf'd" };
        check(&format!("holder exited, {row} 2 s later"), &a, &[b]);
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// Row 5: the holder SIGSTOPped, the directory replaced, the holder SIGKILLed, the next process retries.
#[test]
fn a_stopped_holder_killed_after_its_store_was_replaced() {
    let root = row_dir("sigstop");
    let dir = root.join("store");
    create(&dir);
    let h = Holder::start(&url(&dir), root.join("h.ids"), None);
    h.signal(libc::SIGSTOP);
    replace(&dir);
    let b1 = mint(&url(&dir), None);
    assert!(
        matches!(&b1, Outcome::Refused(c) if c == "NODE_IDS_EXHAUSTED"),
        "a stopped holder's node ID was handed out"
    );
    let a = h.ids();
    h.kill();
    let b2 = mint(&url(&dir), None);
    check("SIGSTOP, replaced, SIGKILL, retried", &a, &[b1, b2]);
    let _ = std::fs::remove_dir_all(&root);
}

/// Row 6: the store restored from a `cp -a` backup taken before the holder minted.
#[test]
fn a_store_restored_from_a_backup() {
    let root = row_dir("backup");
    let dir = root.join("store");
    let backup = root.join("backup");
    create(&dir);
    // Some history first: the backup holds a reservation of node 0.
    assert!(matches!(mint(&url(&dir), None), Outcome::Minted(_)));
    let cp = |from: &Path, to: &Path| {
        assert!(Command::new("cp")
            .arg("-a")
            .arg(from)
            .arg(to)
            .status()
            .unwrap()
            .success());
    };
    cp(&dir, &backup);
    let Outcome::Minted(a) = mint(&url(&dir), None) else {
        panic!("the holder could not mint");
    };
    std::fs::remove_dir_all(&dir).unwrap();
    cp(&backup, &dir);
    let b = mint(&url(&dir), None);
    check("restored from a cp -a backup", &a, &[b]);
    let _ = std::fs::remove_dir_all(&root);
}

/// `snowmint mint` under a lease waits out the tick of its last ID before exiting, as its help says:
/// after it exits, the clock is past the time of every ID it printed.
#[test]
fn mint_under_a_lease_exits_after_the_time_of_its_last_id() {
    let root = row_dir("exit-wait");
    let dir = root.join("store");
    create(&dir);
    // 30,000 sonyflake IDs: 1.2 s of ticks, minted in a few milliseconds.
    let out = Command::new(CLI)
        .args(["mint", "-n", "30000", "--node", &url(&dir)])
        .output()
        .unwrap();
    let exited_ms = snowmint_coord::Time::unix_ns(&snowmint_coord::SystemTime) / 1_000_000;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last: u64 = read_ids(&String::from_utf8(out.stdout).unwrap())
        .pop()
        .unwrap();
    let layout = snowmint::Layout::preset("sonyflake").unwrap();
    let decoded = layout.decode(last).unwrap();
    let end_ms = (layout.epoch_ns() + (decoded.timestamp_ticks + 1) * layout.tick_ns()) / 1_000_000;
    assert!(
        exited_ms >= end_ms,
        "mint exited {} ms before the end of its last ID's tick",
        end_ms - exited_ms
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A store path that does not exist is refused with STORE_NOT_FOUND, saying how to create one, and
/// nothing is written anywhere; `sequencer create` creates it.
#[test]
fn a_missing_store_is_refused_and_nothing_is_created() {
    let root = row_dir("missing");
    let missing = root.join("nonexistent/dir/x");
    for args in [
        vec!["mint".to_string(), "--node".into(), url(&missing)],
        vec![
            "sequencer".into(),
            "list".into(),
            "--store".into(),
            format!("file://{}", missing.display()),
        ],
    ] {
        let out = Command::new(CLI).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains("STORE_NOT_FOUND"), "{err}");
        assert!(err.contains("snowmint sequencer create"), "{err}");
        assert!(
            !root.join("nonexistent").exists(),
            "{args:?} created the store"
        );
    }
    create(&missing);
    assert!(missing.join("sequencers/s.seq").exists());
    let _ = std::fs::remove_dir_all(&root);
}
