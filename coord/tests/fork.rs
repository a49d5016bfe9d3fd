//! A process forked from one holding a lease (gunicorn, PM2, a C program's workers) shares the lease's
//! generator memory but not its keeper or its claim: in the child every mint fails with LEASE_LOST and
//! dropping the lease touches nothing of the parent's; the parent goes on minting under its claim.

use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{ErrorCode, Layout, Options};
use snowmint_coord::{
    layout_text, FileStore, Lease, LeaseOptions, LeaseState, SequencerConfig, Store, SystemTime,
};

/// One test at a time: the pre-fork registry (`prefork::register`, `give_back_unused`) and the
/// `pthread_atfork` handler are process-wide, so a fork or a give-back in one test acts on another
/// test's generators when they run at once.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn a_forked_child_never_mints_under_its_parents_lease() {
    let _serial = serial();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("snowmint-fork-{}", std::process::id()));
    let store: Arc<dyn Store> = Arc::new(FileStore::create(&dir).unwrap());
    let config = SequencerConfig {
        layout: layout_text(&Layout::twitter()),
        nodes: 4,
    };
    let record = store.create_sequencer("fork", &config, 0).unwrap();
    let lease = Lease::acquire(
        store.clone(),
        Arc::new(SystemTime),
        record,
        Layout::twitter(),
        Options::default(),
        LeaseOptions::default(),
    )
    .unwrap();
    let before = lease.next_id().unwrap();

    // SAFETY: the child only mints, drops the lease and leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = match lease.next_id() {
            Err(e)
                if e.code() == ErrorCode::LeaseLost && e.to_string().contains("forked child") =>
            {
                0
            }
            Err(_) => 1,
            Ok(_) => 2,
        };
        let code = if lease.state() == LeaseState::Lost {
            code
        } else {
            3
        };
        drop(lease); // must neither hang on the parent's keeper nor release the parent's claim
        unsafe { libc::_exit(code) };
    }
    let t0 = Instant::now();
    let status = loop {
        let mut status = 0;
        // SAFETY: our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break status;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "the child hangs");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(libc::WIFEXITED(status), "child status {status}");
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "0: LEASE_LOST in the child; 1: another error; 2: minted; 3: state"
    );
    // The parent's lease is untouched: still held (the claim too), still minting.
    assert_eq!(lease.state(), LeaseState::Held);
    assert!(lease.next_id().unwrap() > before);
    let held = store.holders("fork", 0).unwrap();
    assert!(held.iter().any(|n| n.node_id == lease.node_id()
        && n.claim
            .as_ref()
            .is_some_and(|c| c.token == lease.fencing_token())));
    drop(lease);
    let _ = std::fs::remove_dir_all(dir);
}

/// A generator opened from a node source before `fork()` (gunicorn `--preload`, uWSGI, Celery prefork)
/// opens a lease of its own in the child on first use: another node ID, IDs unique against the parent's,
/// the parent's claim untouched; on the embedded store and, when the harness started them, on real etcd
/// and PostgreSQL.
#[test]
fn a_generator_opened_from_a_source_opens_its_own_lease_in_a_forked_child() {
    let _serial = serial();
    let (dir, sources) = fork_sources("gen", 2);
    for source in sources {
        let g = open_leased(&source);
        let parent_node = g.node_id();
        let before = g.next_id().unwrap();
        let t0 = Instant::now();
        let answer = in_forked_child(|| {
            let answer = match (g.next_id(), g.next_id()) {
                (Ok(a), Ok(b)) => format!("{a} {b} {}", g.node_id()),
                (Err(e), _) | (_, Err(e)) => format!("ERR {e}"),
            };
            let _ = g.detach(); // releases the child's own lease; the parent's is left alone
            answer
        });
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "{source}: slow child"
        );
        let words = numbers(&source, &answer);
        let (a, b, child_node) = (words[0], words[1], words[2]);
        assert_ne!(child_node, parent_node, "{source}: the child's own node ID");
        assert_eq!((a >> 12) & 0x3ff, child_node, "{source}");
        assert!(b > a, "{source}");
        // The parent's lease is untouched: still attached under its node ID, still minting.
        let after = g.next_id().unwrap();
        assert!(
            after > before && (after >> 12) & 0x3ff == parent_node,
            "{source}"
        );
        assert_eq!(g.node_id(), parent_node);
        assert!(g.lease().is_some_and(|l| l.state() == LeaseState::Held));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A fresh embedded store and, when the harness started them, etcd and PostgreSQL: a source for each,
/// on a sequencer of `nodes` node IDs.
fn fork_sources(tag: &str, nodes: u64) -> (std::path::PathBuf, Vec<String>) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("snowmint-fork-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut urls = vec![format!("file://{}", dir.display())];
    for var in ["SNOWMINT_TEST_ETCD_URL", "SNOWMINT_TEST_POSTGRES_URL"] {
        match std::env::var(var).ok().filter(|v| !v.is_empty()) {
            Some(url) => urls.push(url),
            None if std::env::var("SNOWMINT_REQUIRE_SERVERS").is_ok_and(|v| v == "1") => {
                panic!("{var} is not set")
            }
            None => eprintln!("{var} not set: that store is skipped"),
        }
    }
    let name = format!("fork{tag}{}", std::process::id());
    let sources = urls
        .into_iter()
        .map(|url| {
            let store = snowmint_coord::source::open_store(
                &snowmint_coord::source::parse_store_url(&url).unwrap(),
            )
            .unwrap();
            let config = SequencerConfig {
                layout: layout_text(&Layout::twitter()),
                nodes,
            };
            store.create_sequencer(&name, &config, 0).unwrap();
            let sep = if url.contains('?') { '&' } else { '?' };
            format!("{url}{sep}sequencer={name}&ttl=2s")
        })
        .collect();
    (dir, sources)
}

/// Forks; the child runs `child` and writes its answer to a pipe; returns the answer.
fn in_forked_child(child: impl FnOnce() -> String) -> String {
    let mut fds = [0; 2];
    // SAFETY: a pipe for the child's answer.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child runs `child`, writes its answer and leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let answer = child();
        // SAFETY: the pipe's write end.
        unsafe { libc::write(fds[1], answer.as_ptr().cast(), answer.len()) };
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the parent keeps the read end only.
    unsafe { libc::close(fds[1]) };
    let mut buf = vec![0u8; 4096];
    // SAFETY: reads into `buf`.
    let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
    unsafe { libc::close(fds[0]) };
    let mut status = 0;
    // SAFETY: our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    String::from_utf8_lossy(&buf[..n.max(0) as usize]).to_string()
}

/// A pre-fork master that opened a generator and never minted gives its node ID back before the fork
/// (the `pthread_atfork` prepare handler `prefork::register` installs): on a ONE-node sequencer the
/// forked worker claims that node ID, and the master claims it again on its own first use, after the
/// worker's IDs; a master that minted keeps its lease at the next fork.
#[test]
fn a_master_that_never_minted_gives_its_node_id_back_before_a_fork() {
    let _serial = serial();
    use snowmint_coord::generator::prefork;
    let (dir, sources) = fork_sources("master", 1);
    for source in sources {
        let g = open_leased(&source);
        prefork::register(&g);
        assert!(g.lease().is_some());
        let child = || {
            let r = g.next_id().map(|a| format!("{a} {}", g.node_id()));
            let _ = g.detach(); // releases the worker's lease
            r.unwrap_or_else(|e| format!("ERR {}", e.code().as_str()))
        };
        let answer = in_forked_child(child);
        assert!(g.lease().is_none(), "{source}: released before the fork");
        let words = numbers(&source, &answer);
        assert_eq!(words[1], 0, "{source}: the worker holds the only node ID");
        // The master claims again on first use (the worker released it), after the worker's IDs.
        let id = g.next_id().unwrap_or_else(|e| panic!("{source}: {e}"));
        assert!(id > words[0], "{source}");
        // A master that minted keeps its lease at the next fork: that worker finds the node ID held.
        let answer = in_forked_child(child);
        assert_eq!(answer, "ERR NODE_IDS_EXHAUSTED", "{source}");
        assert!(g.lease().is_some_and(|l| l.state() == LeaseState::Held));
        assert!(g.next_id().unwrap() > id);
        assert_eq!(prefork::give_back_unused(), 0, "{source}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A master one of whose other threads minted keeps its lease at a fork, while that thread's window
/// is still open (its IDs count in `stats()` only when it closes): the prepare handler's check sees
/// the window.
#[test]
fn a_master_whose_other_thread_minted_keeps_its_node_id_at_a_fork() {
    let _serial = serial();
    use snowmint_coord::generator::prefork;
    let (dir, sources) = fork_sources("window", 1);
    for source in sources {
        let g = open_leased(&source);
        prefork::register(&g);
        let (minted_tx, minted_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|s| {
            let g = &g;
            let minter = s.spawn(move || {
                minted_tx.send(g.next_id().unwrap()).unwrap();
                // Alive (its window open) until the master has checked.
                let _ = done_rx.recv_timeout(std::time::Duration::from_secs(30));
            });
            let id = minted_rx.recv().unwrap();
            assert_eq!(prefork::give_back_unused(), 0, "{source}: minted {id}");
            assert!(g.lease().is_some(), "{source}: kept its lease");
            done_tx.send(()).unwrap();
            // Joined (not only the scope's end): its thread-locals' destructors have run.
            minter.join().unwrap();
        });
        assert_eq!(
            g.stats().minted,
            1,
            "{source}: the window closed with its thread"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn open_leased(source: &str) -> Box<snowmint_coord::SequencerGenerator> {
    match snowmint_coord::SequencerGenerator::open(source, Layout::twitter(), Options::default()) {
        Ok(snowmint_coord::Opened::Leased(g)) => g,
        other => panic!("{source}: a lease source, got {other:?}"),
    }
}

/// The numbers a child answered.
fn numbers(source: &str, answer: &str) -> Vec<u64> {
    answer
        .split_whitespace()
        .map(|w| {
            w.parse()
                .unwrap_or_else(|_| panic!("{source}: child said {answer}"))
        })
        .collect()
}
