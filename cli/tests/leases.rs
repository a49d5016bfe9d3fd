//! Leases and sequencers across real processes, with real signals, on every store named in
//! `SNOWMINT_TEST_STORES` (URLs separated by spaces; default: a fresh embedded store under the target
//! directory).
//! The same tests run against etcd:// and postgres:// when those URLs are given.
//!
//! Two kinds of processes: the `snowmint` CLI, and this test binary started again as a child
//! (`SNOWMINT_CHILD=hold|seq`, see [`child_process_entry`]), which holds a lease and obeys commands on
//! its standard input, answering with lines that start with `@@ `.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{Layout, Options, Policy};
use snowmint_coord::source::{open_store, parse_store_url};
use snowmint_coord::{LeaseOptions, NodeGenerator, OffsetTime, Sequencer, SystemTime, Time};

const CLI: &str = env!("CARGO_BIN_EXE_snowmint");

/// The stores under test.
fn stores() -> impl Iterator<Item = String> {
    let stores: Vec<String> = match std::env::var("SNOWMINT_TEST_STORES") {
        Ok(v) if !v.trim().is_empty() => v.split_whitespace().map(str::to_string).collect(),
        _ => {
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("snowmint-leases-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            vec![format!("file://{}", dir.display())]
        }
    };
    // Printed as each store's turn begins: a failure's output then names the store it failed on.
    stores.into_iter().inspect(|s| println!("-- store {s}"))
}

fn embedded(store: &str) -> bool {
    store.starts_with("file://")
}

/// A sequencer name unique to this run and test (stores may be shared between runs).
fn name(test: &str) -> String {
    format!(
        "t{}-{}-{test}",
        std::process::id(),
        SystemTime.unix_ns() / 1_000_000 % 1_000_000
    )
}

/// Creates a sequencer of `nodes` node IDs (twitter layout) through the CLI; returns its name.
fn create(store: &str, test: &str, nodes: u32) -> String {
    create_with(store, test, nodes, &[])
}

/// [`create`] with more options (`--layout discord` …).
fn create_with(store: &str, test: &str, nodes: u32, more: &[&str]) -> String {
    let seq = name(test);
    create_named_with(store, &seq, &nodes.to_string(), more);
    seq
}

/// Creates (or finds, with the same configuration) sequencer `seq` through the CLI.
fn create_named(store: &str, seq: &str, nodes: &str) {
    create_named_with(store, seq, nodes, &[]);
}

/// [`create_named`] with more options.
fn create_named_with(store: &str, seq: &str, nodes: &str, more: &[&str]) {
    let mut args = vec![
        "sequencer",
        "create",
        seq,
        "--store",
        store,
        "--nodes",
        nodes,
    ];
    args.extend(more);
    cli_ok(&args);
}

fn source(store: &str, sequencer: &str, ttl: &str) -> String {
    let sep = if store.contains('?') { '&' } else { '?' };
    format!("{store}{sep}sequencer={sequencer}&ttl={ttl}")
}

fn now_ms() -> u64 {
    SystemTime.unix_ns() / 1_000_000
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(CLI).args(args).output().unwrap()
}

fn cli_ok(args: &[&str]) -> String {
    let out = cli(args);
    assert!(
        out.status.success(),
        "snowmint {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn cli_fails(args: &[&str], code: &str) -> String {
    let out = cli(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        !out.status.success(),
        "snowmint {args:?} should fail with {code}"
    );
    assert!(
        stderr.starts_with(&format!("error[{code}]: ")),
        "snowmint {args:?}: expected {code}, got {stderr}"
    );
    stderr
}

// ---- the child process -------------------------------------------------------------------------

/// Not a test of its own: the entry of the child processes the tests start (does nothing otherwise).
#[test]
fn child_process_entry() {
    let Ok(mode) = std::env::var("SNOWMINT_CHILD") else {
        return;
    };
    let code = match mode.as_str() {
        "hold" => child_hold(),
        "seq" => child_seq(),
        _ => 3,
    };
    std::process::exit(code);
}

fn say(line: impl std::fmt::Display) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "@@ {line}").unwrap();
    out.flush().unwrap();
}

fn child_time() -> Arc<dyn Time> {
    match std::env::var("SNOWMINT_CHILD_CLOCK_OFFSET_MS") {
        Ok(v) => Arc::new(OffsetTime::new(v.parse::<i64>().unwrap() * 1_000_000)),
        Err(_) => Arc::new(SystemTime),
    }
}

fn child_options() -> Options {
    let policy = std::env::var("SNOWMINT_CHILD_POLICY").unwrap_or_else(|_| "wait".into());
    Options {
        policy: Policy::from_name(&policy).unwrap(),
        ..Options::default()
    }
}

/// Holds a lease from `SNOWMINT_CHILD_SOURCE`; commands: `mint N`, `loop` (mint forever), `exit`.
fn child_hold() -> i32 {
    let src = std::env::var("SNOWMINT_CHILD_SOURCE").unwrap();
    let gen = match NodeGenerator::open_with(
        &src,
        Layout::twitter(),
        child_options(),
        child_time(),
        LeaseOptions::default(),
    ) {
        Ok(g) => g,
        Err(e) => {
            say(format!("err {}", e.code()));
            return 0;
        }
    };
    let l = gen.lease().unwrap();
    say(format!("node {} {}", l.node_id(), l.fencing_token()));
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let mut words = line.split_whitespace();
        match words.next() {
            Some("mint") => {
                let n: usize = words.next().unwrap().parse().unwrap();
                let mut out = std::io::stdout().lock();
                for _ in 0..n {
                    match gen.next_id() {
                        Ok(id) => writeln!(out, "@@ id {id}").unwrap(),
                        Err(e) => {
                            writeln!(out, "@@ err {}", e.code()).unwrap();
                            break;
                        }
                    }
                }
                writeln!(out, "@@ done").unwrap();
                out.flush().unwrap();
            }
            Some("loop") => loop {
                let mut out = std::io::stdout().lock();
                for _ in 0..100 {
                    writeln!(out, "@@ id {}", gen.next_id().unwrap()).unwrap();
                }
                out.flush().unwrap();
            },
            _ => break,
        }
    }
    drop(gen);
    0
}

/// A sequencer handle on `SNOWMINT_CHILD_STORE` / `SNOWMINT_CHILD_SEQUENCER` (TTL
/// `SNOWMINT_CHILD_TTL_MS`): attaches, then mints every millisecond until minting fails, and reports
/// `fail CODE UNIX_MS`; then obeys `mint` / `attach` / `exit`.
fn child_seq() -> i32 {
    let store =
        open_store(&parse_store_url(&std::env::var("SNOWMINT_CHILD_STORE").unwrap()).unwrap())
            .unwrap();
    let ttl = Duration::from_millis(
        std::env::var("SNOWMINT_CHILD_TTL_MS")
            .unwrap()
            .parse()
            .unwrap(),
    );
    let name = std::env::var("SNOWMINT_CHILD_SEQUENCER").unwrap();
    let lease = LeaseOptions {
        ttl,
        ..LeaseOptions::default()
    };
    let seq = Sequencer::open_with(
        store,
        Arc::new(SystemTime),
        &name,
        Options::default(),
        lease,
    )
    .unwrap();
    seq.attach().unwrap();
    say(format!("node {}", seq.lease().unwrap().node_id()));
    let code = loop {
        match seq.next_id() {
            Ok(_) => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => break e.code(),
        }
    };
    say(format!("fail {code} {}", now_ms()));
    for line in std::io::stdin().lock().lines() {
        match line.unwrap().trim() {
            "mint" => say(seq
                .next_id()
                .map_or_else(|e| e.code().to_string(), |_| "ok".into())),
            "attach" => say(seq
                .attach()
                .map_or_else(|e| e.code().to_string(), |_| "ok".into())),
            "state" => say(format!("{:?}", seq.state())),
            _ => break,
        }
    }
    0
}

// ---- the parent's side -------------------------------------------------------------------------

struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Proc {
    fn start(mode: &str, env: &[(&str, String)]) -> Proc {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--exact",
            "child_process_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SNOWMINT_CHILD", mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // The harness's own "test child_process_entry ... " may precede the first answer.
                if let Some(at) = line.find("@@ ") {
                    if tx.send(line[at + 3..].to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        Proc {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    fn hold(src: &str, extra: &[(&str, String)]) -> Proc {
        let mut env = vec![("SNOWMINT_CHILD_SOURCE", src.to_string())];
        env.extend(extra.iter().cloned());
        Proc::start("hold", &env)
    }

    fn line(&self, within: Duration) -> String {
        self.lines
            .recv_timeout(within)
            .unwrap_or_else(|e| panic!("no answer from the child within {within:?}: {e}"))
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// `mint N`: the IDs, then the error code that stopped it (if any).
    fn mint(&mut self, n: usize) -> (Vec<u64>, Option<String>) {
        self.send(&format!("mint {n}"));
        let mut ids = Vec::new();
        let mut err = None;
        loop {
            let l = self.line(Duration::from_secs(60));
            if let Some(id) = l.strip_prefix("id ") {
                ids.push(id.parse().unwrap());
            } else if let Some(code) = l.strip_prefix("err ") {
                err = Some(code.to_string());
            } else if l == "done" {
                return (ids, err);
            }
        }
    }

    fn node(&self) -> u64 {
        let l = self.line(Duration::from_secs(30));
        let rest = l
            .strip_prefix("node ")
            .unwrap_or_else(|| panic!("expected a claim, got {l:?}"));
        rest.split_whitespace().next().unwrap().parse().unwrap()
    }

    fn exit(mut self) {
        self.stdin.take();
        let _ = self.child.wait();
    }

    fn kill(mut self) {
        self.child.kill().unwrap(); // SIGKILL
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_unique(ids: &[u64]) {
    let set: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(set.len(), ids.len(), "duplicate IDs among {}", ids.len());
}

// ---- the tests ---------------------------------------------------------------------------------

/// 16 child processes hold leases at once: 16 distinct node IDs; then all mint, and 16 CLI processes
/// mint at the same time: every ID is unique.
#[test]
fn sixteen_processes_distinct_node_ids_unique_ids() {
    for store in stores() {
        let seq = create(&store, "sixteen", 32);
        let src = source(&store, &seq, "10s");
        let mut holders: Vec<Proc> = (0..16).map(|_| Proc::hold(&src, &[])).collect();
        let nodes: HashSet<u64> = holders.iter().map(|p| p.node()).collect();
        assert_eq!(
            nodes.len(),
            16,
            "16 holders at once hold 16 distinct node IDs: {nodes:?}"
        );
        for p in &mut holders {
            p.send("mint 2000");
        }
        let clis: Vec<_> = (0..16)
            .map(|_| {
                Command::new(CLI)
                    .args(["mint", "-n", "2000", "--node", &src])
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut all = Vec::new();
        for p in &mut holders {
            let mut got = 0;
            while got < 2000 {
                let l = p.line(Duration::from_secs(60));
                if let Some(id) = l.strip_prefix("id ") {
                    all.push(id.parse::<u64>().unwrap());
                    got += 1;
                } else {
                    panic!("holder failed: {l}");
                }
            }
            assert_eq!(p.line(Duration::from_secs(10)), "done");
        }
        for c in clis {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success());
            let text = String::from_utf8(out.stdout).unwrap();
            let ids: Vec<u64> = text.lines().map(|l| l.parse().unwrap()).collect();
            assert_eq!(ids.len(), 2000);
            all.extend(ids);
        }
        assert_eq!(all.len(), 64_000);
        assert_unique(&all);
        holders.into_iter().for_each(Proc::exit);
        // Every claim was released: all 32 node IDs are free again.
        let again: Vec<Proc> = (0..32).map(|_| Proc::hold(&src, &[])).collect();
        let nodes: HashSet<u64> = again.iter().map(|p| p.node()).collect();
        assert_eq!(nodes.len(), 32);
    }
}

/// `snowmint mint --node SOURCE --state-file PATH`: one lease per host. A sequencer of ONE node ID, held
/// through the state file by this process: 8 CLI processes at once mint under that same node ID (without
/// the state file each would need a node ID of its own: `NODE_IDS_EXHAUSTED`), no ID twice; once the
/// last process on the file exits, the claim is released.
#[test]
fn cli_processes_share_one_lease_through_a_state_file() {
    for store in stores() {
        let seq = create(&store, "shared-cli", 1);
        let src = source(&store, &seq, "10s");
        let dir = std::env::temp_dir().join(name("shared-cli"));
        std::fs::create_dir_all(&dir).unwrap();
        let state_file = dir.join("lease.state");
        let state = state_file.display().to_string();
        let holder =
            NodeGenerator::open_shared(&src, Layout::twitter(), Options::default(), &state_file)
                .unwrap();
        let node = holder.node_id();
        let mut all = vec![holder.next_id().unwrap()];
        let clis: Vec<_> = (0..8)
            .map(|_| {
                Command::new(CLI)
                    .args(["mint", "-n", "5000", "--node", &src, "--state-file", &state])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in clis {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let ids: Vec<u64> = String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| l.parse().unwrap())
                .collect();
            assert_eq!(ids.len(), 5000);
            all.extend(ids);
        }
        assert!(all
            .iter()
            .all(|&id| Layout::twitter().decode(id).unwrap().node == node));
        assert_unique(&all);
        // Without the state file the one node ID is this process's: refused.
        cli_fails(&["mint", "--node", &src], "NODE_IDS_EXHAUSTED");
        let store_handle = open_store(&parse_store_url(&store).unwrap()).unwrap();
        let held = |s: &dyn snowmint_coord::Store| {
            s.holders(&seq, now_ms())
                .unwrap()
                .into_iter()
                .filter(|n| n.claim.is_some())
                .count()
        };
        assert_eq!(held(&*store_handle), 1);
        holder.release().unwrap();
        assert_eq!(
            held(&*store_handle),
            0,
            "released by the last process on the file"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A holder killed with SIGKILL: on the embedded store its node ID is free at once; on a server
/// store after the TTL. The next holder never repeats an ID of the killed one.
#[test]
fn sigkill_and_restart_never_repeats() {
    for store in stores() {
        let seq = create(&store, "kill", 1);
        let src = source(&store, &seq, "1s");
        let mut a = Proc::hold(&src, &[]);
        assert_eq!(a.node(), 0);
        a.send("loop");
        let mut ids_a = Vec::new();
        while ids_a.len() < 20_000 {
            let l = a.line(Duration::from_secs(30));
            ids_a.push(l.strip_prefix("id ").unwrap().parse::<u64>().unwrap());
        }
        a.kill();
        let killed_at = Instant::now();
        // B's clock is two seconds behind A's: only the reservation keeps it from A's IDs.
        let mut b = loop {
            let b = Proc::hold(&src, &[("SNOWMINT_CHILD_CLOCK_OFFSET_MS", "-2000".into())]);
            let l = b.line(Duration::from_secs(30));
            if l.starts_with("node ") {
                break b;
            }
            assert_eq!(l, "err NODE_IDS_EXHAUSTED");
            assert!(
                !embedded(&store),
                "embedded: the node ID of a killed process is free at once"
            );
            assert!(
                killed_at.elapsed() < Duration::from_secs(5),
                "free after the TTL"
            );
            b.exit();
            std::thread::sleep(Duration::from_millis(100));
        };
        let (ids_b, err) = b.mint(5000);
        assert_eq!(err, None);
        let max_a = *ids_a.iter().max().unwrap();
        assert!(
            ids_b[0] > max_a,
            "the new holder starts after the killed holder's reservation"
        );
        ids_a.extend(&ids_b);
        assert_unique(&ids_a);
        b.exit();
    }
}

/// A new holder whose clock is minutes behind the old holder's never repeats an ID of it: with `fail`
/// it refuses (TOO_FAR_AHEAD), with a clock ten seconds behind and `wait` it mints after the old IDs.
#[test]
fn clock_behind_never_repeats() {
    for store in stores() {
        let seq = create(&store, "behind", 1);
        let src = source(&store, &seq, "2s");
        let mut a = Proc::hold(&src, &[]);
        a.node();
        let (ids_a, err) = a.mint(10_000);
        assert_eq!(err, None);
        a.kill(); // the reservation stays a few seconds ahead of A's clock
        let max_a = *ids_a.iter().max().unwrap();
        // Embedded: free at once; a server store: once A's claim (TTL 2 s) has expired.
        let retry = |env: &[(&str, String)]| {
            let t0 = Instant::now();
            loop {
                let p = Proc::hold(&src, env);
                let l = p.line(Duration::from_secs(30));
                if l.starts_with("node ") {
                    return p;
                }
                assert_eq!(l, "err NODE_IDS_EXHAUSTED");
                assert!(!embedded(&store));
                assert!(
                    t0.elapsed() < Duration::from_secs(10),
                    "the node ID is free after the TTL"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        };
        let mut b = retry(&[
            ("SNOWMINT_CHILD_CLOCK_OFFSET_MS", "-300000".into()),
            ("SNOWMINT_CHILD_POLICY", "fail".into()),
        ]);
        let (ids_b, err) = b.mint(10);
        assert!(ids_b.is_empty(), "five minutes behind: no ID at all");
        assert_eq!(err.as_deref(), Some("TOO_FAR_AHEAD"));
        b.exit();
        let mut c = retry(&[("SNOWMINT_CHILD_CLOCK_OFFSET_MS", "-8000".into())]);
        let (ids_c, err) = c.mint(10_000);
        assert_eq!(err, None);
        assert!(
            ids_c[0] > max_a,
            "eight seconds behind: waits or borrows past the old reservation"
        );
        let mut all = ids_a.clone();
        all.extend(&ids_c);
        assert_unique(&all);
        c.exit();
    }
}

/// Sequencer lifecycle: conflict on another configuration, detach/attach cycles, destroy seen by a
/// handle in another process within one renewal interval (and forever), re-create never repeating.
#[test]
fn sequencer_lifecycle() {
    for store in stores() {
        let seq = create(&store, "life", 4);
        // The same configuration again is the existing sequencer; another is a conflict.
        create_named(&store, &seq, "4");
        let e = cli_fails(
            &[
                "sequencer",
                "create",
                &seq,
                "--store",
                &store,
                "--nodes",
                "8",
            ],
            "SEQUENCER_CONFLICT",
        );
        assert!(e.contains(&seq), "{e}");
        cli_fails(
            &[
                "sequencer",
                "create",
                &seq,
                "--store",
                &store,
                "--nodes",
                "4",
                "--layout",
                "discord",
            ],
            "SEQUENCER_CONFLICT",
        );
        assert!(cli_ok(&["sequencer", "list", "--store", &store])
            .lines()
            .any(|l| l.starts_with(&format!("{seq}\t4 nodes"))));

        // Detach / attach cycles in this process.
        let st = open_store(&parse_store_url(&store).unwrap()).unwrap();
        let h = Sequencer::open(st.clone(), &seq).unwrap();
        assert_eq!(h.state(), snowmint_coord::SequencerState::Detached);
        assert_eq!(
            h.next_id().unwrap_err().code(),
            snowmint::ErrorCode::LeaseLost
        );
        let mut ids = Vec::new();
        for _ in 0..10 {
            h.attach().unwrap();
            assert_eq!(h.state(), snowmint_coord::SequencerState::Attached);
            for _ in 0..500 {
                ids.push(h.next_id().unwrap());
            }
            h.detach().unwrap();
            assert_eq!(h.state(), snowmint_coord::SequencerState::Detached);
            assert_eq!(
                h.next_id().unwrap_err().code(),
                snowmint::ErrorCode::LeaseLost
            );
        }
        h.attach().unwrap();
        ids.push(h.next_id().unwrap());
        let detached = Sequencer::open(st.clone(), &seq).unwrap();
        assert_eq!(detached.state(), snowmint_coord::SequencerState::Detached);

        // A handle in another process; a TTL of 600 ms renews (and checks the record) every 200 ms.
        let ttl_ms = 600;
        let mut other = Proc::start(
            "seq",
            &[
                ("SNOWMINT_CHILD_STORE", store.clone()),
                ("SNOWMINT_CHILD_SEQUENCER", seq.clone()),
                ("SNOWMINT_CHILD_TTL_MS", ttl_ms.to_string()),
            ],
        );
        assert!(other.line(Duration::from_secs(30)).starts_with("node "));
        std::thread::sleep(Duration::from_millis(300));
        cli_ok(&["sequencer", "destroy", &seq, "--store", &store]);
        // The record is gone once the command has returned.
        let destroyed_at = now_ms();
        let l = other.line(Duration::from_secs(10));
        let mut w = l.split_whitespace();
        assert_eq!(
            (w.next(), w.next()),
            (Some("fail"), Some("SEQUENCER_DESTROYED")),
            "{l}"
        );
        let seen_at: u64 = w.next().unwrap().parse().unwrap();
        let interval = ttl_ms / 3;
        // One renewal interval (plus scheduling slack on a busy host).
        assert!(
            seen_at.saturating_sub(destroyed_at) <= interval + 150,
            "seen {} ms after the destroy",
            seen_at.saturating_sub(destroyed_at)
        );
        // This process's handle sees it too (within one interval of its own keeper).
        let t0 = Instant::now();
        let err = loop {
            match h.next_id() {
                Ok(id) => ids.push(id),
                Err(e) => break e,
            }
            assert!(t0.elapsed() < Duration::from_secs(15));
        };
        assert_eq!(err.code(), snowmint::ErrorCode::SequencerDestroyed);
        // A detached handle (no keeper) learns it from the store.
        assert_eq!(detached.state(), snowmint_coord::SequencerState::Destroyed);
        assert_eq!(
            detached.next_id().unwrap_err().code(),
            snowmint::ErrorCode::SequencerDestroyed
        );

        // Re-created (even with the same configuration): the old handles stay destroyed, forever.
        create_named(&store, &seq, "4");
        other.send("mint");
        assert_eq!(other.line(Duration::from_secs(10)), "SEQUENCER_DESTROYED");
        other.send("attach");
        assert_eq!(other.line(Duration::from_secs(10)), "SEQUENCER_DESTROYED");
        other.exit();
        assert_eq!(
            h.attach().unwrap_err().code(),
            snowmint::ErrorCode::SequencerDestroyed
        );
        assert_eq!(h.state(), snowmint_coord::SequencerState::Destroyed);
        drop(h);

        // The new sequencer never repeats an ID of the old one: every node ID starts after its
        // reservation.
        let new = Sequencer::open(st, &seq).unwrap();
        let mut handles = Vec::new();
        for _ in 0..4 {
            let h = Sequencer::open(open_store(&parse_store_url(&store).unwrap()).unwrap(), &seq)
                .unwrap();
            h.attach().unwrap();
            for _ in 0..500 {
                ids.push(h.next_id().unwrap());
            }
            handles.push(h);
        }
        assert_eq!(
            new.attach().unwrap_err().code(),
            snowmint::ErrorCode::NodeIdsExhausted
        );
        assert_unique(&ids);
        let show = cli_ok(&["sequencer", "show", &seq, "--store", &store]);
        assert!(show.contains("holders      4"), "{show}");
        assert!(show.contains("layout       twitter (v1;ts=41;"), "{show}");
    }
}

/// SPEC §3.3: a sequencer is one ID space; only `default` is created implicitly. A mint names an
/// existing sequencer (a typo, or a destroyed one, is SEQUENCER_NOT_FOUND naming what exists, and
/// creates nothing), and adopts its stored layout and node count (another layout is SEQUENCER_CONFLICT).
#[test]
fn mint_attaches_only_to_an_existing_sequencer_and_adopts_its_configuration() {
    for store in stores() {
        let seq = create_with(&store, "orders", 128, &["--layout", "discord"]);
        // No layout option: the stored layout (discord) and node count (128).
        let out = cli_ok(&["mint", "-n", "3", "--node", &source(&store, &seq, "2s")]);
        let discord = snowmint::Layout::preset("discord").unwrap();
        for line in out.lines() {
            let id: u64 = line.parse().unwrap();
            assert!(discord.decode(id).unwrap().node < 128, "{line}");
        }
        assert_eq!(out.lines().count(), 3, "{out}");
        // Another layout is a conflict, not a silent second ID space.
        cli_fails(
            &[
                "mint",
                "-n",
                "1",
                "--layout",
                "twitter",
                "--node",
                &source(&store, &seq, "2s"),
            ],
            "SEQUENCER_CONFLICT",
        );
        // A typo: not found, naming the sequencer meant; nothing is created.
        let typo = seq.replace("orders", "ordres");
        let e = cli_fails(
            &["mint", "-n", "1", "--node", &source(&store, &typo, "2s")],
            "SEQUENCER_NOT_FOUND",
        );
        assert!(e.contains(&seq), "{e}");
        let list = cli_ok(&["sequencer", "list", "--store", &store]);
        assert!(!list.contains(&typo), "{list}");
        // After a destroy, a mint does not re-create it with the defaults.
        cli_ok(&["sequencer", "destroy", &seq, "--store", &store]);
        cli_fails(
            &["mint", "-n", "1", "--node", &source(&store, &seq, "2s")],
            "SEQUENCER_NOT_FOUND",
        );
        cli_fails(
            &["sequencer", "destroy", &seq, "--store", &store],
            "SEQUENCER_NOT_FOUND",
        );
        let list = cli_ok(&["sequencer", "list", "--store", &store]);
        assert!(
            !list.lines().any(|l| l.starts_with(&format!("{seq}\t"))),
            "{list}"
        );
    }
}

/// Bad input: every error names the source and says why, with a stable code.
#[test]
fn bad_input() {
    let store = stores().next().unwrap();
    for (src, code, why) in [
        (
            "file://relative/dir",
            "INVALID_ARGUMENT",
            "absolute directory",
        ),
        ("zookeeper://h:2181/x", "INVALID_ARGUMENT", "unknown scheme"),
        ("etcd://", "INVALID_ARGUMENT", "no endpoint"),
        ("etcd://h:99999/x", "INVALID_ARGUMENT", "not in 1..=65535"),
        (
            "etcd://h:2379/x?color=red",
            "INVALID_ARGUMENT",
            "unknown parameter",
        ),
        ("postgres://h:5432/db", "INVALID_ARGUMENT", "no user"),
        ("postgres://u@h:5432", "INVALID_ARGUMENT", "no database"),
        ("file:///tmp/x?ttl=0", "INVALID_ARGUMENT", "zero"),
        (
            "file:///tmp/x?ttl=soon",
            "INVALID_ARGUMENT",
            "not a duration",
        ),
        (
            "file:///tmp/x?sequencer=a/b",
            "INVALID_ARGUMENT",
            "sequencer name",
        ),
        ("seven", "INVALID_ARGUMENT", "not a node source"),
        ("env:1X", "INVALID_ARGUMENT", "variable name"),
        ("k8s:-1", "INVALID_ARGUMENT", "offset"),
    ] {
        let e = cli_fails(&["mint", "--node", src], code);
        assert!(e.contains(src), "names the source: {e}");
        assert!(e.contains(why), "{src}: {e}");
    }
    let out = Command::new(CLI)
        .args(["mint", "--node", "env:SNOWMINT_TEST_SURELY_UNSET"])
        .env_remove("SNOWMINT_TEST_SURELY_UNSET")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("SNOWMINT_TEST_SURELY_UNSET is not set"));
    let out = Command::new(CLI)
        .args(["mint", "--node", "k8s"])
        .env("HOSTNAME", "web")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("\"web\" does not end in a StatefulSet ordinal"),
        "{e}"
    );
    let out = Command::new(CLI)
        .args(["mint", "--node", "k8s:10", "--format", "hex"])
        .env("HOSTNAME", "web-3")
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = Command::new(CLI)
        .args(["mint", "--node", "env:MY_NODE", "-n", "1"])
        .env("MY_NODE", "2000")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error[NODE_ID_OUT_OF_RANGE]"));

    let e = cli_fails(
        &["sequencer", "show", "../etc", "--store", &store],
        "INVALID_ARGUMENT",
    );
    assert!(e.contains("sequencer name \"../etc\""), "{e}");
    cli_fails(
        &["sequencer", "list", "--store", "zk://h/x"],
        "INVALID_ARGUMENT",
    );
    for nodes in ["0", "2048"] {
        let args = [
            "sequencer",
            "create",
            "x",
            "--store",
            &store,
            "--nodes",
            nodes,
        ];
        let e = cli_fails(&args, "INVALID_ARGUMENT");
        assert!(e.contains("the layout holds 1..=1024"), "{e}");
    }

    // A full node space.
    let seq = create(&store, "full", 1);
    let src = source(&store, &seq, "10s");
    let holder = Proc::hold(&src, &[]);
    holder.node();
    let e = cli_fails(&["mint", "--node", &src], "NODE_IDS_EXHAUSTED");
    assert!(e.contains("all 1 node IDs"), "{e}");
    holder.exit();
    cli_ok(&["mint", "--node", &src]);
}

/// A holder stopped (SIGSTOP) longer than its TTL: on every store (the embedded one too, whose OS lock
/// outlives the pause but whose claim expires at its TTL), another process takes the node ID and mints;
/// the first resumes and mints only below its old reservation or fails with LEASE_LOST, never an ID of
/// the other.
#[test]
fn paused_past_the_ttl_never_duplicates() {
    for store in stores() {
        let seq = create(&store, "pause", 1);
        let src = source(&store, &seq, "1s");
        let mut a = Proc::hold(&src, &[]);
        a.node();
        let (mut ids_a, err) = a.mint(1000);
        assert_eq!(err, None);
        let pid = a.child.id() as i32;
        // SAFETY: plain signals to our own child.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        std::thread::sleep(Duration::from_millis(2500));
        let b = Proc::hold(&src, &[]);
        let first = b.line(Duration::from_secs(30));
        assert!(
            first.starts_with("node "),
            "after the TTL the node ID is free: {first}"
        );
        let mut b = b;
        let (ids_b, err) = b.mint(5000);
        assert_eq!(err, None);
        b.exit();
        assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
        let (more, err) = a.mint(200_000);
        assert!(
            err.as_deref() == Some("LEASE_LOST")
                || more.iter().all(|id| ids_b.iter().all(|b| id < b)),
            "{err:?}"
        );
        ids_a.extend(more);
        ids_a.extend(&ids_b);
        assert_unique(&ids_a);
        a.exit();
    }
}

/// The embedded store's directory deleted (`rm -rf`, then made again) or moved away (a new directory in
/// its place) while a process holds a node ID and mints: no other process is given that node ID while
/// the first one may still mint under it, the first stops with `LEASE_LOST` at its next renewal, and no
/// ID is minted twice.
#[test]
fn a_replaced_store_directory_never_gives_a_node_id_twice() {
    for mode in ["rm -rf", "mv"] {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "snowmint-replaced-{}-{}",
            std::process::id(),
            mode.len()
        ));
        let moved = dir.with_extension("old");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&moved);
        std::fs::create_dir_all(&dir).unwrap();
        let store = format!("file://{}", dir.display());
        let seq = create(&store, "replaced", 1);
        let src = source(&store, &seq, "1s");
        let mut a = Proc::hold(&src, &[]);
        assert_eq!(a.node(), 0);
        let (mut ids, err) = a.mint(2000);
        assert_eq!(err, None);
        match mode {
            "mv" => std::fs::rename(&dir, &moved).unwrap(),
            _ => std::fs::remove_dir_all(&dir).unwrap(),
        }
        std::fs::create_dir_all(&dir).unwrap();
        create_named(&store, &seq, "1");
        // Another process on the new directory, while the first one mints.
        let mut b = Proc::hold(&src, &[]);
        let first = b.line(Duration::from_secs(30));
        let (ids_a, ids_b) = std::thread::scope(|s| {
            let minter = s.spawn(|| a.mint(50_000).0);
            let ids_b = if first.starts_with("node ") {
                b.mint(50_000).0
            } else {
                assert_eq!(first, "err NODE_IDS_EXHAUSTED", "{mode}");
                Vec::new()
            };
            (minter.join().unwrap(), ids_b)
        });
        let seen: HashSet<u64> = ids.iter().chain(&ids_a).copied().collect();
        let duplicates = ids_b.iter().filter(|id| seen.contains(id)).count();
        eprintln!(
            "{mode}: the first holder minted {}, the second {}: {duplicates} IDs minted by both",
            ids.len() + ids_a.len(),
            ids_b.len()
        );
        assert_eq!(duplicates, 0, "{mode}: IDs minted by two holders");
        b.exit();
        ids.extend(ids_a);
        // The first holder's renewal finds its file gone from the path (LEASE_LOST), or its sequencer
        // check finds the one in the new directory another incarnation (SEQUENCER_DESTROYED),
        // whichever its keeper meets first: it stops at its ceiling.
        let t0 = Instant::now();
        loop {
            let (more, err) = a.mint(20_000);
            ids.extend(more);
            if matches!(err.as_deref(), Some("LEASE_LOST" | "SEQUENCER_DESTROYED")) {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(15),
                "{mode}: the first holder mints on: {err:?}"
            );
        }
        a.exit();
        // Once it has exited the node ID is free on the new directory, and its IDs are not repeated.
        let mut c = Proc::hold(&src, &[]);
        assert_eq!(c.node(), 0);
        let (more, err) = c.mint(20_000);
        assert_eq!(err, None);
        ids.extend(more);
        c.exit();
        assert_unique(&ids);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&moved);
    }
}

fn json_line(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `lease list|show` and `sequencer show|list --json` say who holds which node ID, its fencing token
/// and expiry, and its reservation; a sequencer with no live record is SEQUENCER_NOT_FOUND, exit 1.
#[test]
fn leases_are_listed_with_holder_token_expiry_and_reservation() {
    for store in stores() {
        let seq = create(&store, "leases", 4);
        let gen = NodeGenerator::open(
            &source(&store, &seq, "10s"),
            Layout::twitter(),
            Options::default(),
        )
        .unwrap();
        gen.next_id().unwrap();
        let lease = gen.lease().unwrap();
        let (node, token) = (lease.node_id(), lease.fencing_token());
        let t0 = now_ms();

        let list = cli_ok(&["lease", "list", "--store", &store, "--json"]);
        let mine: Vec<serde_json::Value> = list
            .lines()
            .map(json_line)
            .filter(|v| v["sequencer"] == seq.as_str())
            .collect();
        assert_eq!(mine.len(), 1, "{list}");
        let held = &mine[0];
        assert_eq!(held["node_id"], node, "{held}");
        assert_eq!(held["token"], token, "{held}");
        assert!(
            held["holder"].as_str().is_some_and(|h| !h.is_empty()),
            "{held}"
        );
        assert!(held["expires_unix_ms"].as_u64().unwrap() > t0, "{held}");
        assert!(held["expires"].as_str().unwrap().ends_with('Z'), "{held}");
        assert!(
            held["reservation"]["position"].as_u64().unwrap() > 0,
            "{held}"
        );
        let text = cli_ok(&["lease", "list", "--store", &store]);
        assert!(
            text.lines()
                .any(|l| l.contains(&seq) && l.contains(&format!(" {token} "))),
            "{text}"
        );
        let show = cli_ok(&["lease", "show", &seq, "--store", &store, "--json"]);
        assert_eq!(
            json_line(show.lines().next().unwrap())["token"],
            token,
            "{show}"
        );
        assert!(
            cli_ok(&["lease", "show", &seq, "--store", &store]).contains("1 held"),
            "lease show"
        );

        let s = json_line(&cli_ok(&[
            "sequencer",
            "show",
            &seq,
            "--store",
            &store,
            "--json",
        ]));
        assert_eq!(
            (s["name"].as_str(), s["nodes"].as_u64()),
            (Some(seq.as_str()), Some(4))
        );
        assert_eq!(s["holders"], 1, "{s}");
        assert_eq!(s["preset"], "twitter", "{s}");
        assert_eq!(s["node_ids"][0]["token"], token, "{s}");
        let listed = cli_ok(&["sequencer", "list", "--store", &store, "--json"]);
        assert!(
            listed
                .lines()
                .map(json_line)
                .any(|v| v["name"] == seq.as_str() && v["nodes"] == 4),
            "{listed}"
        );

        // Released: no longer held; the reservation stays, and `lease show` still shows it.
        drop(gen);
        let list = cli_ok(&["lease", "list", "--store", &store, "--json"]);
        assert!(
            !list
                .lines()
                .map(json_line)
                .any(|v| v["sequencer"] == seq.as_str()),
            "{list}"
        );
        let show = cli_ok(&["lease", "show", &seq, "--store", &store, "--json"]);
        let row = json_line(show.lines().next().unwrap());
        assert!(
            row["holder"].is_null() && row["reservation"].is_object(),
            "{row}"
        );

        // A name with no live record: not found, exit status 1, nothing on standard output.
        for command in ["sequencer", "lease"] {
            let args = [command, "show", "no-such-sequencer", "--store", &store];
            let out = cli(&args);
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}");
            cli_fails(&args, "SEQUENCER_NOT_FOUND");
        }
        cli_ok(&["sequencer", "destroy", &seq, "--store", &store]);
        cli_fails(
            &["sequencer", "show", &seq, "--store", &store],
            "SEQUENCER_NOT_FOUND",
        );
    }
}

/// TLS and authentication failures from the command line (the cases `scripts/servers.sh`'s
/// `tls_servers` writes for every runtime: a wrong CA, no or an expired client certificate, a wrong
/// password): each is the case's code with a message naming its cause, and never shows the password,
/// whether the source is a lease source of `mint` or a store of `sequencer list`.
#[test]
fn tls_and_authentication_failures_name_the_cause_and_no_password() {
    let Ok(path) = std::env::var("SNOWMINT_TEST_TLS_FAILURES") else {
        assert!(
            std::env::var("SNOWMINT_REQUIRE_SERVERS").as_deref() != Ok("1"),
            "SNOWMINT_REQUIRE_SERVERS=1 but no SNOWMINT_TEST_TLS_FAILURES (scripts/servers.sh: tls_servers)"
        );
        return;
    };
    let cases = std::fs::read_to_string(path).unwrap();
    let mut ran = 0;
    for case in cases.lines().filter(|l| !l.is_empty()) {
        let [name, url, code, must, secret] = case.split('\t').collect::<Vec<_>>()[..] else {
            panic!("a malformed case: {case:?}");
        };
        for args in [
            vec!["mint", "--node", url],
            vec!["sequencer", "list", "--store", url],
        ] {
            let out = cli(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{name} {args:?}: {stderr}");
            assert!(
                stderr.starts_with(&format!("error[{code}]: ")),
                "{name} {args:?}: expected {code}, got {stderr}"
            );
            assert!(
                stderr.contains(must),
                "{name} {args:?}: no {must:?} in {stderr}"
            );
            assert!(!stderr.contains(secret), "{name} {args:?}: {stderr}");
            assert!(out.stdout.is_empty(), "{name} {args:?}");
        }
        ran += 1;
    }
    assert!(ran >= 6, "{ran} cases");
}
