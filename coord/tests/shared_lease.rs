//! One leased node ID per host, shared by its processes through a state file, with real processes
//! (this test binary started again, [`worker_process_entry`]) and real signals, on the embedded store and on every server store
//! in `SNOWMINT_TEST_STORES` (etcd://, postgres://).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{Layout, Options, Policy};
use snowmint_coord::source::{create_store, parse_store_url};
use snowmint_coord::{
    layout_text, Claim, Lease, LeaseOptions, LeaseState, MemoryStore, NodeGenerator, OffsetTime,
    SequencerConfig, Store, SystemTime, Time,
};

/// The claim's TTL in the sources of these tests.
const TTL: Duration = Duration::from_secs(2);

fn unique(what: &str) -> String {
    format!(
        "{what}-{}-{}",
        std::process::id(),
        SystemTime.unix_ns() / 1_000 % 1_000_000_000
    )
}

fn now_ms() -> u64 {
    SystemTime.unix_ns() / 1_000_000
}

/// The embedded store (in a fresh directory) and every server store of `SNOWMINT_TEST_STORES`.
fn stores(dir: &Path) -> Vec<String> {
    let mut out = vec![format!("file://{}", dir.join("store").display())];
    if let Ok(urls) = std::env::var("SNOWMINT_TEST_STORES") {
        out.extend(
            urls.split_whitespace()
                .filter(|u| !u.starts_with("file://"))
                .map(str::to_string),
        );
    }
    out
}

/// Creates sequencer `name` (twitter layout, every node ID) on `store`.
fn create(store: &dyn Store, name: &str) {
    let config = SequencerConfig {
        layout: layout_text(&Layout::twitter()),
        nodes: 1024,
    };
    store.create_sequencer(name, &config, now_ms()).unwrap();
}

fn source(store: &str, sequencer: &str) -> String {
    let sep = if store.contains('?') { '&' } else { '?' };
    format!("{store}{sep}sequencer={sequencer}&ttl={}s", TTL.as_secs())
}

/// Not a test of its own: the entry of the worker processes the tests start (this test binary again,
/// `SNOWMINT_SHARED_WORKER=SOURCE STATE_FILE SECONDS`): opens SOURCE with STATE_FILE (twitter layout,
/// the `wait` policy, a 1 s reservation ahead), prints `@@ node N token FENCING`, mints one ID every
/// millisecond for SECONDS (`@@ ID` per line), releases (`@@ released`, exit status 0). A failed open or
/// mint prints `@@ error CODE` (exit status 3).
#[test]
fn worker_process_entry() {
    let Ok(args) = std::env::var("SNOWMINT_SHARED_WORKER") else {
        return;
    };
    let args: Vec<&str> = args.split(' ').collect();
    let [source, state_file, seconds] = args[..] else {
        std::process::exit(2);
    };
    let mut out = std::io::stdout().lock();
    let fail = |out: &mut std::io::StdoutLock, e: snowmint_coord::Error| -> ! {
        writeln!(out, "@@ error {}", e.code().as_str()).unwrap();
        out.flush().unwrap();
        eprintln!("{e}");
        std::process::exit(3)
    };
    let options = Options {
        policy: Policy::Wait,
        ..Options::default()
    };
    let lease = LeaseOptions {
        state_file: Some(state_file.into()),
        reserve_ahead: Duration::from_secs(1),
        ..LeaseOptions::default()
    };
    let gen = NodeGenerator::open_with(
        source,
        Layout::twitter(),
        options,
        Arc::new(SystemTime),
        lease,
    )
    .unwrap_or_else(|e| fail(&mut out, e));
    let token = gen.lease().map_or(0, |l| l.fencing_token());
    writeln!(out, "@@ node {} token {token}", gen.node_id()).unwrap();
    out.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds.parse().unwrap());
    let mut n = 0u64;
    while Instant::now() < deadline {
        let id = gen.next_id().unwrap_or_else(|e| fail(&mut out, e));
        writeln!(out, "@@ {id}").unwrap();
        n += 1;
        if n.is_multiple_of(20) {
            out.flush().unwrap();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    gen.release().unwrap_or_else(|e| fail(&mut out, e));
    writeln!(out, "@@ released").unwrap();
    out.flush().unwrap();
    std::process::exit(0);
}

/// A running worker: its process and the lines it printed so far.
struct Worker {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Worker {
    fn start(source: &str, state_file: &Path, seconds: f64) -> Worker {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "worker_process_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(
                "SNOWMINT_SHARED_WORKER",
                format!("{source} {} {seconds}", state_file.display()),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
                // The harness's own lines are not the worker's (its `test … ... ` may start a line).
                let Some((_, line)) = line.split_once("@@ ") else {
                    continue;
                };
                if tx.send(line.to_string()).is_err() {
                    break;
                }
            }
        });
        Worker {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The first line (`node N token T` or `error CODE`), within 20 s.
    fn first_line(&mut self) -> String {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the worker's first line");
        self.seen.push(line.clone());
        line
    }

    /// Waits (at most `bound`) for the worker to exit; its lines and exit status.
    fn finish(mut self, bound: Duration) -> (Vec<String>, Option<i32>) {
        let t0 = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // The reader thread ends at end of file.
                while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
                    self.seen.push(l);
                }
                return (self.seen, status.code());
            }
            if t0.elapsed() > bound {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "a worker did not exit within {bound:?}; printed {:?}",
                    self.seen.last()
                );
            }
            while let Ok(l) = self.lines.try_recv() {
                self.seen.push(l);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL; the lines it printed.
    fn kill(mut self) -> Vec<String> {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(l);
        }
        self.seen
    }
}

fn ids(lines: &[String]) -> Vec<u64> {
    lines.iter().filter_map(|l| l.parse().ok()).collect()
}

/// The live claims of `sequencer`: (node ID, fencing token).
fn held(store: &dyn Store, sequencer: &str) -> Vec<(u64, u64)> {
    store
        .holders(sequencer, now_ms())
        .unwrap()
        .into_iter()
        .filter_map(|n| n.claim.map(|c| (n.node_id, c.token)))
        .collect()
}

fn node_and_token(line: &str) -> (u64, u64) {
    let f: Vec<&str> = line.split_whitespace().collect();
    assert!(
        f.len() == 4 && f[0] == "node" && f[2] == "token",
        "unexpected first line {line:?}"
    );
    (f[1].parse().unwrap(), f[3].parse().unwrap())
}

/// Every ID unique, all under `node`.
fn check_ids(all: &[u64], node: u64) {
    let layout = Layout::twitter();
    let unique: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(unique.len(), all.len(), "duplicate IDs among the workers");
    for &id in all {
        assert_eq!(
            layout.decode(id).unwrap().node,
            node,
            "ID {id} not under node {node}"
        );
    }
}

fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique(what));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One store under test with a new sequencer: the store, its name without a password (for messages), the
/// sequencer, the lease source and a state file path under `dir`.
struct Case {
    store: Arc<dyn Store>,
    shown: String,
    seq: String,
    src: String,
    state_file: PathBuf,
}

fn case(store_url: &str, dir: &Path, tag: &str) -> Case {
    let store = create_store(&parse_store_url(store_url).unwrap()).unwrap();
    let seq = unique(tag);
    create(&*store, &seq);
    Case {
        shown: store.describe(),
        src: source(store_url, &seq),
        state_file: dir.join(format!("{seq}.state")),
        store,
        seq,
    }
}

/// Four workers share one node ID (one claim in the store) and mint concurrently without duplicates;
/// the process that claimed it is SIGKILLed while the others mint: another one keeps the lease (the same
/// claim, still held past its TTL) and minting goes on; after the last exits the claim is released.
#[test]
fn workers_share_one_node_and_outlive_the_claimer() {
    let dir = temp_dir("snowmint-shared");
    for store_url in stores(&dir) {
        let c = case(&store_url, &dir, "shared");
        let (store, shown, seq, src, state_file) = (c.store, c.shown, c.seq, c.src, c.state_file);
        let mut claimer = Worker::start(&src, &state_file, 30.0);
        let (node, token) = node_and_token(&claimer.first_line());
        let mut others: Vec<Worker> = (0..3)
            .map(|_| Worker::start(&src, &state_file, 5.0))
            .collect();
        for w in &mut others {
            assert_eq!(node_and_token(&w.first_line()), (node, token), "{shown}");
        }
        assert_eq!(
            held(&*store, &seq),
            vec![(node, token)],
            "{shown}: one claim"
        );
        std::thread::sleep(Duration::from_millis(800));
        let killed_at = now_ms();
        let mut all = ids(&claimer.kill());
        // Past the claim's TTL since the claimer's last renewal: still held, by the same claim.
        std::thread::sleep(TTL + Duration::from_millis(800));
        assert_eq!(
            held(&*store, &seq),
            vec![(node, token)],
            "{shown}: the claim outlives the process that took it"
        );
        let mut after_ttl = 0;
        for w in others {
            let (lines, status) = w.finish(Duration::from_secs(30));
            assert_eq!(status, Some(0), "{shown}: {:?}", lines.last());
            assert_eq!(lines.last().map(String::as_str), Some("released"));
            let mine = ids(&lines);
            after_ttl += mine
                .iter()
                .filter(|&&id| {
                    Layout::twitter().decode(id).unwrap().unix_ms
                        > killed_at + TTL.as_millis() as u64
                })
                .count();
            all.extend(mine);
        }
        check_ids(&all, node);
        assert!(
            after_ttl > 100,
            "{shown}: minting went on after the claimer died ({after_ttl} IDs)"
        );
        assert_eq!(
            held(&*store, &seq),
            vec![],
            "{shown}: released by the last worker"
        );
        eprintln!(
            "{}: {} IDs, 0 duplicates, {after_ttl} minted past the killed claimer's TTL",
            store.describe(),
            all.len()
        );
        // The next process on the host claims again, and starts after everything minted.
        let mut next = Worker::start(&src, &state_file, 0.2);
        next.first_line();
        let (lines, status) = next.finish(Duration::from_secs(20));
        assert_eq!(status, Some(0), "{shown}: {lines:?}");
        let max = *all.iter().max().unwrap();
        let later = ids(&lines);
        assert!(later
            .iter()
            .all(|&id| id > max || Layout::twitter().decode(id).unwrap().node != node));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A lease the store no longer holds (ended from outside) stops every worker with `LEASE_LOST`, and a
/// worker that joins then is refused with `LEASE_LOST`: the takeover never brings a claim back.
#[test]
fn a_lost_shared_lease_stops_every_worker() {
    let dir = temp_dir("snowmint-shared-lost");
    for store_url in stores(&dir) {
        let c = case(&store_url, &dir, "lost");
        let (store, shown, seq, src, state_file) = (c.store, c.shown, c.seq, c.src, c.state_file);
        let mut workers: Vec<Worker> = (0..3)
            .map(|_| Worker::start(&src, &state_file, 40.0))
            .collect();
        let first: Vec<(u64, u64)> = workers
            .iter_mut()
            .map(|w| node_and_token(&w.first_line()))
            .collect();
        let (node, token) = first[0];
        assert!(
            first.iter().all(|&f| f == (node, token)),
            "{shown}: {first:?}"
        );
        // This process is a member too (it mints nothing, so it outlives the workers).
        let member =
            NodeGenerator::open_shared(&src, Layout::twitter(), Options::default(), &state_file)
                .unwrap();
        assert_eq!(member.node_id(), node, "{shown}");
        std::thread::sleep(Duration::from_millis(300));
        // End the claim from outside, as an operator (or an expiry) would.
        let claim = Claim {
            sequencer: seq.clone(),
            node_id: node,
            token,
            expires_unix_ms: 0,
        };
        let claim = store.adopt(&claim, 60_000, now_ms()).unwrap();
        store.release(&claim).unwrap();
        let mut all = Vec::new();
        for w in workers {
            let (lines, status) = w.finish(Duration::from_secs(20));
            assert_eq!(status, Some(3), "{shown}: {:?}", lines.last());
            assert_eq!(
                lines.last().map(String::as_str),
                Some("error LEASE_LOST"),
                "{shown}"
            );
            all.extend(ids(&lines));
        }
        check_ids(&all, node);
        // A process that joins while a member of the lost lease lives is refused: never brought back.
        let mut joiner = Worker::start(&src, &state_file, 1.0);
        assert_eq!(joiner.first_line(), "error LEASE_LOST", "{shown}");
        assert_eq!(joiner.finish(Duration::from_secs(20)).1, Some(3));
        // Once the last member left, the next process claims anew.
        member.release().unwrap();
        let mut next = Worker::start(&src, &state_file, 0.2);
        let claimed = node_and_token(&next.first_line());
        assert_ne!(claimed, (node, token), "{shown}: a new claim");
        let (lines, status) = next.finish(Duration::from_secs(20));
        assert_eq!(status, Some(0), "{shown}: {lines:?}");
        eprintln!(
            "{shown}: {} IDs, 0 duplicates, every worker stopped with LEASE_LOST, a joiner refused",
            all.len()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The keeper crashes and, by the clock of the process that takes over, the claim has expired: the
/// takeover does not bring it back (the store refuses the adoption), the lease is lost for every process
/// on the file and minting stops with `LEASE_LOST`.
#[test]
fn a_takeover_after_the_claim_expired_does_not_bring_it_back() {
    let dir = temp_dir("snowmint-shared-expired");
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let seq = unique("expired");
    create(&*store, &seq);
    let record = store.sequencer(&seq).unwrap().unwrap();
    let options = LeaseOptions {
        ttl: Duration::from_secs(1),
        reserve_ahead: Duration::from_millis(600),
        state_file: Some(dir.join("expired.state")),
        ..LeaseOptions::default()
    };
    let acquire = |time: Arc<dyn Time>| {
        Lease::acquire(
            store.clone(),
            time,
            record.clone(),
            Layout::twitter(),
            Options::default(),
            options.clone(),
        )
        .unwrap()
    };
    let keeper = acquire(Arc::new(SystemTime));
    std::thread::sleep(Duration::from_millis(100)); // its keeper thread holds the keeper lock
    let later = Arc::new(OffsetTime::new(0));
    let member = acquire(later.clone());
    assert_eq!(
        (member.node_id(), member.fencing_token()),
        (keeper.node_id(), keeper.fencing_token())
    );
    member.next_id().unwrap();
    // To the member, the claim expired 4 s ago. While the keeper lives it keeps the claim for both.
    later.set_offset_ns(5_000_000_000);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(member.state(), LeaseState::Held);
    // The keeper crashes (its locks go with it): the member takes over, by its clock too late.
    keeper.abandon();
    let t0 = Instant::now();
    while member.state() != LeaseState::Lost && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(member.state(), LeaseState::Lost, "the takeover was refused");
    let err = member.next_id().unwrap_err();
    assert_eq!(err.code(), snowmint::ErrorCode::LeaseLost, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
