//! Shared by the tests against real servers (`servers.rs`, `servers_outage.rs`, `range_servers.rs`): which servers the
//! harness started (`scripts/servers.sh` exports their URLs), fresh namespaces per test, and holder
//! processes (this test binary run again as a child that holds a lease and mints on command).
#![allow(dead_code)]

pub mod proxy;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{Layout, Options};
use snowmint_coord::source::{create_store, parse_store_url, StoreUrl};
use snowmint_coord::{
    layout_text, LeaseOptions, NodeGenerator, SequencerConfig, Store, SystemTime,
};

/// A server kind the harness may have started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Etcd,
    Postgres,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Etcd => "etcd",
            Kind::Postgres => "postgres",
        }
    }
    /// The `scripts/servers.sh` command prefix (`etcd_stop`, `pg_stop` …).
    pub fn script(self) -> &'static str {
        match self {
            Kind::Etcd => "etcd",
            Kind::Postgres => "pg",
        }
    }
}

fn env_url(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

/// The servers of this run: every kind whose URL the harness exported. Without any, a test is skipped
/// (with a note) unless `SNOWMINT_REQUIRE_SERVERS=1`, which the stage script sets so that CI cannot
/// pass by skipping.
pub fn servers() -> Vec<Kind> {
    let mut kinds = Vec::new();
    if env_url("SNOWMINT_TEST_ETCD_URL").is_some() {
        kinds.push(Kind::Etcd);
    }
    if env_url("SNOWMINT_TEST_POSTGRES_URL").is_some() {
        kinds.push(Kind::Postgres);
    }
    let required = std::env::var("SNOWMINT_REQUIRE_SERVERS").is_ok_and(|v| v == "1");
    if required && kinds.len() < 2 {
        panic!("SNOWMINT_REQUIRE_SERVERS=1 but the harness exported {kinds:?} only (run coord/test.sh)");
    }
    if kinds.is_empty() {
        eprintln!(
            "no servers (source scripts/servers.sh and start them, or run coord/test.sh): skipped"
        );
    }
    kinds
}

/// A name unique to this process and call.
pub fn unique(tag: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A store URL of `kind` in a namespace no other test uses (etcd: a key prefix; PostgreSQL: a schema).
pub fn fresh_url(kind: Kind, tag: &str) -> String {
    let space = unique(tag).replace('-', "_");
    match kind {
        Kind::Etcd => {
            let base = env_url("SNOWMINT_TEST_ETCD_URL").expect("etcd URL");
            let (scheme_hosts, _) = base.rsplit_once('/').expect("etcd://HOSTS/PREFIX");
            format!("{scheme_hosts}/{space}")
        }
        Kind::Postgres => {
            let base = env_url("SNOWMINT_TEST_POSTGRES_URL").expect("postgres URL");
            format!("{base}?schema={space}")
        }
    }
}

/// `url` plus node-source parameters (`sequencer=…&ttl=…`).
pub fn with_params(url: &str, params: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

/// The first server address of a store URL.
pub fn server_of(url: &str) -> String {
    match parse_store_url(url).unwrap() {
        StoreUrl::Etcd(e) => e.endpoints[0].clone(),
        StoreUrl::Postgres(p) => format!("{}:{}", p.host, p.port),
        StoreUrl::File { .. } => panic!("no server in {url}"),
    }
}

/// `url` with the proxy at `addr` in place of its server (of every endpoint of an etcd cluster, so
/// that a re-send goes through the proxy too).
pub fn through(url: &str, addr: &str) -> String {
    let rewritten = match parse_store_url(url).unwrap() {
        StoreUrl::Etcd(e) => url.replacen(&e.endpoints.join(","), addr, 1),
        _ => url.replacen(&server_of(url), addr, 1),
    };
    assert_ne!(rewritten, url, "{url}: no server to replace");
    rewritten
}

/// Opens the store of `url`, creating an embedded store's directory (as creating a sequencer does).
pub fn open(url: &str) -> Arc<dyn Store> {
    create_store(&parse_store_url(url).unwrap()).unwrap_or_else(|e| panic!("{url}: {e}"))
}

pub fn twitter_config(nodes: u64) -> SequencerConfig {
    SequencerConfig {
        layout: layout_text(&Layout::twitter()),
        nodes,
    }
}

/// The node ID in a Twitter-layout ID.
pub fn node_of(id: u64) -> u64 {
    (id >> 12) & 0x3ff
}

/// Runs `scripts/servers.sh COMMAND` (stop, pause, restart … a server of this run).
pub fn server(command: &str) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/servers.sh");
    let status = Command::new("bash")
        .arg(script)
        .args(command.split_whitespace())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("bash");
    assert!(status.success(), "servers.sh {command} failed");
}

/// A fresh namespace of `kind` with a one-node sequencer `one`; the node source for it (TTL 2 s).
pub fn one_node_source(kind: Kind, tag: &str) -> String {
    let url = fresh_url(kind, tag);
    let now_ms = snowmint_coord::Time::unix_ns(&SystemTime) / 1_000_000;
    open(&url)
        .create_sequencer("one", &twitter_config(1), now_ms)
        .unwrap();
    with_params(&url, "sequencer=one&ttl=2s")
}

/// A holder on `source`, retried every 100 ms until the store lets one claim, at most `within`; every
/// refusal meanwhile must have a code in `allowed`.
pub fn holder_when_free(source: &str, within: Duration, allowed: &[&str]) -> Holder {
    let t0 = Instant::now();
    loop {
        match spawn_holder(source) {
            Ok(h) => return h,
            Err((code, message)) => assert!(
                allowed.contains(&code.as_str()),
                "{source}: {code} {message}"
            ),
        }
        assert!(
            t0.elapsed() < within,
            "{source}: no claim within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn assert_unique(ids: &[u64]) {
    let mut seen = HashSet::with_capacity(ids.len());
    for id in ids {
        assert!(seen.insert(*id), "ID {id} minted twice");
    }
}

// ------------------------------------------------------------------------------------ holder processes

const MARK: &str = "@@ ";

/// The child side: holds a lease from `SNOWMINT_HOLDER_SOURCE` and answers commands on stdin.
/// A no-op when that variable is not set (so the test harness can list and run it as a plain test).
///
/// Commands: `mint K` (K IDs now), `run MS` (one ID per millisecond until an error or MS ms pass),
/// `quit` (release and exit). Answers: `READY node token`, `IDS id…`, `END`, `ERR CODE ms message`.
pub fn holder_main() {
    let Ok(source) = std::env::var("SNOWMINT_HOLDER_SOURCE") else {
        return;
    };
    let say = |line: String| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{MARK}{line}");
        let _ = out.flush();
    };
    let t0 = Instant::now();
    let generator = match NodeGenerator::open_with(
        &source,
        Layout::twitter(),
        Options::default(),
        Arc::new(SystemTime),
        LeaseOptions::default(),
    ) {
        Ok(g) => g,
        Err(e) => {
            say(format!(
                "ERR {} {} {}",
                e.code().as_str(),
                t0.elapsed().as_millis(),
                e
            ));
            std::process::exit(0);
        }
    };
    let lease = generator.lease().expect("a lease source");
    say(format!(
        "READY {} {}",
        lease.node_id(),
        lease.fencing_token()
    ));
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let mut words = line.split_whitespace();
        let (cmd, arg) = (
            words.next().unwrap_or(""),
            words
                .next()
                .and_then(|w| w.parse::<u64>().ok())
                .unwrap_or(0),
        );
        let started = Instant::now();
        let mut ids = Vec::new();
        let mut error = None;
        match cmd {
            "mint" => {
                for _ in 0..arg {
                    match generator.next_id() {
                        Ok(id) => ids.push(id),
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                }
            }
            "run" => {
                while started.elapsed() < Duration::from_millis(arg) {
                    match generator.next_id() {
                        Ok(id) => ids.push(id),
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            "quit" => break,
            _ => {}
        }
        for chunk in ids.chunks(500) {
            say(format!(
                "IDS {}",
                chunk
                    .iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        match error {
            Some(e) => say(format!(
                "ERR {} {} {}",
                e.code().as_str(),
                started.elapsed().as_millis(),
                e
            )),
            None => say("END".into()),
        }
    }
    let _ = generator.release();
    std::process::exit(0);
}

/// What a holder answered to one command.
#[derive(Debug, Default)]
pub struct Answer {
    pub ids: Vec<u64>,
    /// `(code, milliseconds into the command, message)` if the command ended in an error.
    pub error: Option<(String, u64, String)>,
}

/// The parent side: a holder process.
pub struct Holder {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    pub node_id: u64,
    pub token: u64,
}

/// Starts a holder process (this test binary, test `holder_child`) on `source` and waits until it holds
/// a lease. `Err((code, message))` when it could not take one.
pub fn spawn_holder(source: &str) -> Result<Holder, (String, String)> {
    let mut holder = start_holder(source);
    holder.ready().map(|_| holder)
}

/// Starts a holder process without waiting (so that many can claim at once); then [`Holder::ready`].
pub fn start_holder(source: &str) -> Holder {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "holder_child",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env("SNOWMINT_HOLDER_SOURCE", source)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn holder");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(at) = line.find(MARK) {
                if tx.send(line[at + MARK.len()..].to_string()).is_err() {
                    break;
                }
            }
        }
    });
    Holder {
        child,
        stdin,
        lines: rx,
        node_id: u64::MAX,
        token: 0,
    }
}

impl Holder {
    /// Waits for the holder's first answer: its lease, or why it has none.
    pub fn ready(&mut self) -> Result<(), (String, String)> {
        let first = self.line(Duration::from_secs(30));
        let mut words = first.splitn(4, ' ');
        match words.next() {
            Some("READY") => {
                self.node_id = words.next().unwrap().parse().unwrap();
                self.token = words.next().unwrap().parse().unwrap();
                Ok(())
            }
            Some("ERR") => {
                let code = words.next().unwrap_or("").to_string();
                let _ms = words.next();
                Err((code, words.next().unwrap_or("").to_string()))
            }
            _ => panic!("holder said {first:?}"),
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn line(&mut self, timeout: Duration) -> String {
        match self.lines.recv_timeout(timeout) {
            Ok(l) => l,
            Err(RecvTimeoutError::Timeout) => {
                panic!("holder {} said nothing for {timeout:?}", self.pid())
            }
            Err(RecvTimeoutError::Disconnected) => panic!("holder {} exited", self.pid()),
        }
    }

    /// Sends a command and collects the answer (bounded by `timeout`).
    pub fn command(&mut self, command: &str, timeout: Duration) -> Answer {
        self.send(command);
        self.answer(timeout)
    }

    /// Sends a command without waiting for its answer.
    pub fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").expect("holder stdin");
        self.stdin.flush().unwrap();
    }

    /// Collects the answer to the command sent last (bounded by `timeout`).
    pub fn answer(&mut self, timeout: Duration) -> Answer {
        let deadline = Instant::now() + timeout;
        let mut answer = Answer::default();
        loop {
            let line = self.line(
                deadline
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1)),
            );
            if let Some(ids) = line.strip_prefix("IDS ") {
                answer
                    .ids
                    .extend(ids.split(' ').map(|i| i.parse::<u64>().unwrap()));
            } else if line == "END" {
                return answer;
            } else if let Some(rest) = line.strip_prefix("ERR ") {
                let mut w = rest.splitn(3, ' ');
                let code = w.next().unwrap_or("").to_string();
                let ms = w.next().and_then(|m| m.parse().ok()).unwrap_or(0);
                answer.error = Some((code, ms, w.next().unwrap_or("").to_string()));
                return answer;
            } else {
                panic!("holder said {line:?}");
            }
        }
    }

    pub fn mint(&mut self, n: u64) -> Answer {
        self.command(&format!("mint {n}"), Duration::from_secs(30))
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on the PID of a child this process started and has not reaped.
        let rc = unsafe { libc::kill(self.pid(), signal) };
        assert_eq!(rc, 0, "kill({}, {signal})", self.pid());
    }

    /// Releases the lease and waits for the exit (bounded; killed after).
    pub fn quit(mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------------------------------------- rows

/// The compare-and-set contract every store keeps (also run on etcd and PostgreSQL).
pub fn row_contract(store: &dyn Store) {
    let key = format!("contract-{}", std::process::id());
    assert_eq!(store.row(&key).unwrap(), None);
    assert!(
        !store.swap_row(&key, Some("x"), "y").unwrap(),
        "absent is not x"
    );
    assert!(store.swap_row(&key, None, "a b=1").unwrap());
    assert!(!store.swap_row(&key, None, "again").unwrap(), "exists now");
    assert_eq!(store.row(&key).unwrap().as_deref(), Some("a b=1"));
    assert!(!store.swap_row(&key, Some("a b=2"), "c").unwrap());
    assert!(store.swap_row(&key, Some("a b=1"), "c").unwrap());
    assert_eq!(store.row(&key).unwrap().as_deref(), Some("c"));
    for bad in ["", "a/b", "../x", "a b", ".hidden"] {
        let e = store.row(bad).unwrap_err();
        assert_eq!(
            e.code(),
            snowmint::ErrorCode::InvalidArgument,
            "{bad:?}: {e}"
        );
        let e = store.swap_row(bad, None, "v").unwrap_err();
        assert_eq!(
            e.code(),
            snowmint::ErrorCode::InvalidArgument,
            "{bad:?}: {e}"
        );
    }
    // Many threads swapping one row from the same value: exactly one wins each round.
    let round_key = format!("{key}-race");
    store.swap_row(&round_key, None, "0").unwrap();
    for round in 0..5u32 {
        let wins: usize = std::thread::scope(|s| {
            let joins: Vec<_> = (0..8)
                .map(|t| {
                    let round_key = &round_key;
                    s.spawn(move || {
                        usize::from(
                            store
                                .swap_row(
                                    round_key,
                                    Some(&round.to_string()),
                                    &format!("{} {t}", round + 1),
                                )
                                .unwrap(),
                        )
                    })
                })
                .collect();
            joins.into_iter().map(|j| j.join().unwrap()).sum()
        });
        assert_eq!(wins, 1, "round {round}");
        let now = store.row(&round_key).unwrap().unwrap();
        store
            .swap_row(&round_key, Some(&now), &(round + 1).to_string())
            .unwrap();
    }
}
