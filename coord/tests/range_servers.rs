//! Range sequences (SPEC §4) on REAL servers started by `scripts/servers.sh` (run through
//! `coord/test.sh`), with real processes: this test binary run again as a child that opens a range
//! sequence and mints on command.
//!
//! Two datacenters: the global row on the harness's 3-member etcd cluster; datacenter `a` keeps its row
//! in PostgreSQL, datacenter `b` in a second, independent etcd server this test starts (its own data
//! directory and port; killed with the test). 8 processes per datacenter mint concurrently. The global
//! cluster is SIGKILLed and restarted, then SIGSTOPped and resumed, PostgreSQL is stopped and restarted, a process is SIGKILLed
//! between taking a range and using it, and many processes race for ranges on one datacenter row.
//! The tests that stop servers take a lock, so they never overlap.

mod support;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use snowmint_coord::{RangeOptions, RangeSequence, Store};
use support::{fresh_url, open, server, servers, Kind};

const MARK: &str = "@@ ";

/// The servers are shared: tests that stop them run one at a time.
static SERVERS: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERVERS.lock().unwrap_or_else(|p| p.into_inner())
}

fn have_servers() -> bool {
    servers().len() == 2
}

// ------------------------------------------------------------------------------------- the child side

/// Not a test of its own: the entry of the child processes (does nothing otherwise).
///
/// Opens `SNOWMINT_RANGE_NAME` for `SNOWMINT_RANGE_DC` on `SNOWMINT_RANGE_GLOBAL` /
/// `SNOWMINT_RANGE_LOCAL` with `dc_range`, `process_range` and `wait` (ms) from `SNOWMINT_RANGE_OPTS`
/// (`D P W`); says `READY START END` (its first range). Commands: `run MS` (one value per millisecond
/// until an error or MS ms pass), `mint K` (K values at once), `pace K` (K values, one per
/// millisecond), `stats`, `quit`. Answers: `IDS v…`,
/// then `END` or `ERR CODE message`; `STATS current_start current_end ready_start ready_end`.
#[test]
fn child_process_entry() {
    let Ok(name) = std::env::var("SNOWMINT_RANGE_NAME") else {
        return;
    };
    let var = |k: &str| std::env::var(k).unwrap();
    let nums: Vec<u64> = var("SNOWMINT_RANGE_OPTS")
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    let say = |line: String| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{MARK}{line}");
        let _ = out.flush();
    };
    let options = RangeOptions {
        dc_range: nums[0],
        process_range: nums[1],
        wait: Duration::from_millis(nums[2]),
        ..RangeOptions::default()
    };
    let seq = match RangeSequence::open_urls(
        &name,
        &var("SNOWMINT_RANGE_DC"),
        &var("SNOWMINT_RANGE_GLOBAL"),
        &var("SNOWMINT_RANGE_LOCAL"),
        options,
    ) {
        Ok(s) => s,
        Err(e) => {
            say(format!("ERR {} {e}", e.code().as_str()));
            std::process::exit(0);
        }
    };
    let (s, e) = seq.stats().current;
    say(format!("READY {s} {e}"));
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let mut words = line.split_whitespace();
        let cmd = words.next().unwrap_or("");
        let arg: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        let mut ids = Vec::new();
        let mut error = None;
        match cmd {
            "run" => {
                let t0 = Instant::now();
                while t0.elapsed() < Duration::from_millis(arg) {
                    match seq.next_id() {
                        Ok(v) => ids.push(v),
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            "mint" | "pace" => {
                for _ in 0..arg {
                    match seq.next_id() {
                        Ok(v) => ids.push(v),
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                    if cmd == "pace" {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            }
            "stats" => {
                let st = seq.stats();
                let (rs, re) = st.ready.unwrap_or((0, 0));
                say(format!("STATS {} {} {rs} {re}", st.current.0, st.current.1));
                continue;
            }
            _ => break,
        }
        for chunk in ids.chunks(500) {
            let list: Vec<String> = chunk.iter().map(u64::to_string).collect();
            say(format!("IDS {}", list.join(" ")));
        }
        match error {
            Some(e) => say(format!("ERR {} {e}", e.code().as_str())),
            None => say("END".into()),
        }
    }
    std::process::exit(0);
}

// ------------------------------------------------------------------------------------ the parent side

/// A child process minting from a range sequence.
struct Minter {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    first: (u64, u64),
    /// Every value this process handed out, in order.
    values: Vec<u64>,
}

/// What a command came to.
#[derive(Debug)]
struct Outcome {
    count: usize,
    error: Option<(String, String)>,
}

struct Sequence {
    name: String,
    global: String,
    options: (u64, u64, u64),
}

impl Sequence {
    fn spawn(&self, dc: &str, local: &str) -> Minter {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_process_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("SNOWMINT_RANGE_NAME", &self.name)
            .env("SNOWMINT_RANGE_DC", dc)
            .env("SNOWMINT_RANGE_GLOBAL", &self.global)
            .env("SNOWMINT_RANGE_LOCAL", local)
            .env(
                "SNOWMINT_RANGE_OPTS",
                format!("{} {} {}", self.options.0, self.options.1, self.options.2),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                // libtest's "test child_process_entry ... " may precede the first answer.
                if let Some(at) = line.find(MARK) {
                    if tx.send(line[at + MARK.len()..].to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        let ready = lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{dc}: the child did not open within 30 s"));
        let words: Vec<&str> = ready.split(' ').collect();
        assert_eq!(words[0], "READY", "{dc} on {local}: {ready}");
        Minter {
            child,
            stdin,
            lines,
            first: (words[1].parse().unwrap(), words[2].parse().unwrap()),
            values: Vec::new(),
        }
    }
}

impl Minter {
    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Collects the answer to a `run` or `mint` command.
    fn collect(&mut self) -> Outcome {
        let mut count = 0;
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("the child answers within 60 s");
            if let Some(list) = line.strip_prefix("IDS ") {
                for v in list.split(' ') {
                    self.values.push(v.parse().unwrap());
                    count += 1;
                }
            } else if line == "END" {
                return Outcome { count, error: None };
            } else if let Some(rest) = line.strip_prefix("ERR ") {
                let (code, message) = rest.split_once(' ').unwrap_or((rest, ""));
                return Outcome {
                    count,
                    error: Some((code.to_string(), message.to_string())),
                };
            } else {
                panic!("unexpected answer {line:?}");
            }
        }
    }

    fn stats(&mut self) -> ((u64, u64), Option<(u64, u64)>) {
        self.send("stats");
        let line = self.lines.recv_timeout(Duration::from_secs(10)).unwrap();
        let n: Vec<u64> = line
            .strip_prefix("STATS ")
            .unwrap()
            .split(' ')
            .map(|w| w.parse().unwrap())
            .collect();
        ((n[0], n[1]), (n[3] > 0).then_some((n[2], n[3])))
    }
}

impl Drop for Minter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `command` to every minter at once, then collects every answer.
fn all(minters: &mut [Minter], command: &str) -> Vec<Outcome> {
    for m in minters.iter_mut() {
        m.send(command);
    }
    minters.iter_mut().map(Minter::collect).collect()
}

/// Every value unique across all minters (and `others`), within 31 bits, strictly increasing per minter.
fn check_values(minters: &[&Minter], others: &HashSet<u64>) -> usize {
    let mut seen = others.clone();
    for m in minters {
        for w in m.values.windows(2) {
            assert!(
                w[0] < w[1],
                "not increasing in one process: {} then {}",
                w[0],
                w[1]
            );
        }
        for &v in &m.values {
            assert!((1..1 << 31).contains(&v), "{v} outside 31 bits");
            assert!(seen.insert(v), "value {v} handed out twice");
        }
    }
    seen.len() - others.len()
}

/// A second etcd server, independent of the harness's cluster: datacenter `b`'s own store. Killed when
/// dropped, and by the kernel if this test process dies (PR_SET_PDEATHSIG).
struct SecondEtcd {
    child: Child,
    dir: std::path::PathBuf,
    url: String,
}

impl SecondEtcd {
    fn start() -> SecondEtcd {
        use std::os::unix::process::CommandExt;
        let port = |_| {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let (client, peer) = (port(0), port(1));
        let dir = std::env::temp_dir().join(format!("snowmint-etcd-b-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        let mut cmd = Command::new("etcd");
        cmd.args([
            "--name",
            "b",
            "--data-dir",
            dir.join("data").to_str().unwrap(),
            "--listen-client-urls",
            &format!("http://127.0.0.1:{client}"),
            "--advertise-client-urls",
            &format!("http://127.0.0.1:{client}"),
            "--listen-peer-urls",
            &format!("http://127.0.0.1:{peer}"),
            "--initial-advertise-peer-urls",
            &format!("http://127.0.0.1:{peer}"),
            "--initial-cluster",
            &format!("b=http://127.0.0.1:{peer}"),
            "--log-outputs",
            dir.join("etcd.log").to_str().unwrap(),
            "--logger",
            "zap",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        std::fs::create_dir_all(&dir).unwrap();
        let child = cmd.spawn().expect("etcd (scripts/servers.sh installs it)");
        let endpoint = format!("127.0.0.1:{client}");
        let t0 = Instant::now();
        loop {
            let ok =
                snowmint_coord::etcd::EtcdStore::connect(std::slice::from_ref(&endpoint), "probe")
                    .is_ok();
            if ok {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "the second etcd did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        SecondEtcd {
            child,
            dir,
            url: format!("etcd://{endpoint}/dc-b"),
        }
    }
}

impl Drop for SecondEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

fn global_next(global: &dyn Store, name: &str) -> u64 {
    RangeSequence::show(global, name).unwrap().unwrap().next
}

#[test]
fn two_datacenters_mint_through_a_global_outage_without_a_duplicate() {
    if !have_servers() {
        return;
    }
    let _servers = lock();
    let etcd_b = SecondEtcd::start();
    let local_a = fresh_url(Kind::Postgres, "range-a");
    let seq = Sequence {
        name: "orders".into(),
        global: fresh_url(Kind::Etcd, "range-global"),
        options: (4000, 50, 3000),
    };
    let mut minters: Vec<Minter> = (0..16)
        .map(|i| {
            if i < 8 {
                seq.spawn("a", &local_a)
            } else {
                seq.spawn("b", &etcd_b.url)
            }
        })
        .collect();
    for outcome in all(&mut minters, "pace 300") {
        assert!(
            outcome.error.is_none() && outcome.count == 300,
            "{outcome:?}"
        );
    }
    let global = open(&seq.global);
    let before_outage = global_next(&*global, "orders");
    let row = RangeSequence::show(&*global, "orders").unwrap().unwrap();
    assert_eq!(row.datacenters.len(), 2, "{row:?}");

    // SIGKILL every member of the global cluster while both datacenters mint: each datacenter serves
    // from the ranges its row holds (at least ~half of dc_range), without an error. Then SIGSTOP every
    // member instead (requests hang until their timeouts rather than fail at once): the datacenters'
    // pre-allocations wait on their own threads, and minting goes on without error.
    for (stop, start) in [("etcd_kill", "etcd_restart"), ("etcd_pause", "etcd_resume")] {
        server(stop);
        let outcomes = all(&mut minters, "pace 100");
        server(start);
        for outcome in &outcomes {
            assert!(
                outcome.error.is_none() && outcome.count == 100,
                "{stop}: {outcome:?}"
            );
        }
    }
    // Back: allocation resumes (8 × 800 values per datacenter is more than its row held), still no
    // duplicate.
    for outcome in all(&mut minters, "pace 800") {
        assert!(
            outcome.error.is_none() && outcome.count == 800,
            "{outcome:?}"
        );
    }
    let after = global_next(&*global, "orders");
    assert!(
        after > before_outage,
        "{after} <= {before_outage}: no range moved after the restart"
    );
    let refs: Vec<&Minter> = minters.iter().collect();
    let total = check_values(&refs, &HashSet::new());
    assert_eq!(total, 16 * 1300);
    for (dc, local) in [("a", open(&local_a)), ("b", open(&etcd_b.url))] {
        let row = RangeSequence::show_datacenter(&*local, "orders", dc)
            .unwrap()
            .unwrap();
        assert!(row.floor > 1 && row.floor <= after, "{dc}: {row:?}");
    }
}

#[test]
fn local_store_down_then_store_unavailable_and_a_killed_process_leaves_only_a_hole() {
    if !have_servers() {
        return;
    }
    let _servers = lock();
    let local = fresh_url(Kind::Postgres, "range-local");
    let seq = Sequence {
        name: "local".into(),
        global: fresh_url(Kind::Etcd, "range-global-l"),
        options: (2000, 40, 1000),
    };
    let mut minters: Vec<Minter> = (0..4).map(|_| seq.spawn("a", &local)).collect();
    for outcome in all(&mut minters, "mint 100") {
        assert!(outcome.error.is_none(), "{outcome:?}");
    }
    // A process that has taken ranges (current + pre-allocated) and is SIGKILLed before using them.
    let mut doomed = seq.spawn("a", &local);
    doomed.send("mint 25");
    assert!(doomed.collect().error.is_none());
    let t0 = Instant::now();
    let (current, ready) = loop {
        let (current, ready) = doomed.stats();
        if ready.is_some() || t0.elapsed() > Duration::from_secs(10) {
            break (current, ready);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let ready = ready.expect("the next range pre-allocated at 50 %");
    // SAFETY: kill(2) on our own child's PID.
    unsafe { libc::kill(doomed.child.id() as i32, libc::SIGKILL) };
    let _ = doomed.child.wait();
    let killed_values = doomed.values.clone();

    // Stop the datacenter's store: each process mints what it holds (its current and pre-allocated
    // ranges, at most 2 × 40), then STORE_UNAVAILABLE after the 1 s wait.
    for m in &mut minters {
        m.send("mint 5");
        m.collect();
    }
    server("pg_stop");
    let outcomes = all(&mut minters, "run 5000");
    server("pg_restart");
    for outcome in &outcomes {
        let (code, message) = outcome
            .error
            .clone()
            .expect("an error once the ranges are used");
        assert_eq!(code, "STORE_UNAVAILABLE", "{message}");
        assert!(outcome.count <= 80, "{outcome:?}");
    }
    // Restarted processes (and the old ones) never hand out a value of the killed process's ranges.
    let mut fresh: Vec<Minter> = (0..3).map(|_| seq.spawn("a", &local)).collect();
    let t0 = Instant::now();
    loop {
        let outcomes = all(&mut minters, "mint 50");
        if outcomes.iter().all(|o| o.error.is_none()) {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "{outcomes:?}");
    }
    for outcome in all(&mut fresh, "mint 200") {
        assert!(outcome.error.is_none(), "{outcome:?}");
    }
    let others: HashSet<u64> = killed_values.iter().copied().collect();
    let refs: Vec<&Minter> = minters.iter().chain(fresh.iter()).collect();
    check_values(&refs, &others);
    for m in &refs {
        for &v in &m.values {
            assert!(
                !(current.0..current.1).contains(&v) && !(ready.0..ready.1).contains(&v),
                "{v} is in a range of the killed process ({current:?}, {ready:?})"
            );
        }
    }
}

#[test]
fn a_cas_race_of_many_processes_on_one_datacenter_row_never_overlaps() {
    if !have_servers() {
        return;
    }
    let _servers = lock();
    let etcd_b = SecondEtcd::start();
    for local in [fresh_url(Kind::Postgres, "range-race"), etcd_b.url.clone()] {
        let seq = Sequence {
            name: "race".into(),
            global: fresh_url(Kind::Etcd, "range-global-r"),
            // Two values per range: each process takes ~40 ranges from the one datacenter row.
            options: (200, 2, 10_000),
        };
        let mut minters: Vec<Minter> = (0..12).map(|_| seq.spawn("dc", &local)).collect();
        for outcome in all(&mut minters, "mint 80") {
            assert!(outcome.error.is_none(), "{local}: {outcome:?}");
        }
        let refs: Vec<&Minter> = minters.iter().collect();
        assert_eq!(check_values(&refs, &HashSet::new()), 12 * 80);
        let firsts: HashSet<(u64, u64)> = minters.iter().map(|m| m.first).collect();
        assert_eq!(firsts.len(), 12, "two processes opened on the same range");
    }
}

#[test]
fn the_server_stores_keep_the_row_contract() {
    if !have_servers() {
        return;
    }
    let _servers = lock();
    for kind in [Kind::Etcd, Kind::Postgres] {
        let store: Arc<dyn Store> = open(&fresh_url(kind, "rows"));
        support::row_contract(&*store);
    }
}
