//! A process of a host SIGKILLed mid-claim, its state file shared with the host's other processes
//! (SPEC §4a, "one lease per host"): the store applies its claim after it died, so the node ID is held,
//! unrecorded in the state file, until the claim's TTL runs out. The next process of the host to open
//! the state file finds the file's state still "claiming" and waits for a node ID that long, where it
//! used to answer `NODE_IDS_EXHAUSTED` at once (seen with gunicorn: a worker killed during the host's
//! first claim, its siblings answering 503 on a sequencer of one node ID until the TTL ran out).
//!
//! Real processes on a real PostgreSQL server (scripts/servers.sh, through coord/test.sh): the first
//! process's claim is held inside the server by a table lock (a `psql` session) while the process is
//! SIGKILLed; the lock then goes, the claim commits with its client gone, and the next process starts.
//! Skipped without a server (`SNOWMINT_TEST_POSTGRES_URL`), unless `SNOWMINT_REQUIRE_SERVERS=1`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CLI: &str = env!("CARGO_BIN_EXE_snowmint");

fn postgres() -> Option<String> {
    match std::env::var("SNOWMINT_TEST_POSTGRES_URL") {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            assert!(
                std::env::var("SNOWMINT_REQUIRE_SERVERS").as_deref() != Ok("1"),
                "SNOWMINT_REQUIRE_SERVERS=1 but no SNOWMINT_TEST_POSTGRES_URL"
            );
            eprintln!("no PostgreSQL (SNOWMINT_TEST_POSTGRES_URL): skipped");
            None
        }
    }
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(CLI).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// One statement through `psql`: its single value.
fn psql(base: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args([base, "-qtA", "-c", sql])
        .output()
        .unwrap();
    assert!(out.status.success(), "psql: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

/// Polls `count` (a `SELECT count(*)`) until it is positive (bounded: 20 s).
fn wait_for(base: &str, what: &str, count: &str) {
    let t0 = Instant::now();
    while psql(base, count) == "0" {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no {what} within 20 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether node ID 0 of `seq` is held, as `snowmint lease show` lists it.
fn held(store: &str, seq: &str) -> bool {
    let out = cli(&["lease", "show", seq, "--store", store, "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .any(|l| l.contains("\"node_id\":0") && !l.contains("\"holder\":null"))
}

#[test]
fn a_claimer_killed_mid_claim_leaves_its_hosts_next_process_waiting_not_refused() {
    let Some(base) = postgres() else { return };
    let schema = format!("orphan_{}", std::process::id());
    let store = format!("{base}?schema={schema}");
    let seq = "orders";
    let out = cli(&[
        "sequencer",
        "create",
        seq,
        "--store",
        &store,
        "--nodes",
        "1",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ttl_s = 3;
    let source = format!("{store}&sequencer={seq}&ttl={ttl_s}s");
    let dir = std::env::temp_dir().join(format!("snowmint-orphan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("host.lease").display().to_string();

    // The table lock: every claim statement waits behind it, inside the server.
    let mut lock = Command::new("psql")
        .args([
            &base,
            "-q",
            "-c",
            &format!("BEGIN; LOCK TABLE \"{schema}\".nodes IN EXCLUSIVE MODE; SELECT pg_sleep(60)"),
        ])
        .env("PGAPPNAME", &schema)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        &base,
        "the table lock",
        &format!(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
         WHERE a.application_name = '{schema}' AND l.granted AND l.mode = 'ExclusiveLock'"
        ),
    );
    // One ID through the host's lease: the first process, then the host's next one.
    let mint = ["mint", "-n", "1", "--node", &source, "--state-file", &state];
    let mut first = Command::new(CLI)
        .args(mint)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Its claim statement waiting on the lock: the process dies mid-claim.
    wait_for(
        &base,
        "the claim statement",
        "SELECT count(*) FROM pg_stat_activity \
         WHERE wait_event_type = 'Lock' AND query LIKE '%WITH live AS%'",
    );
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    // The lock goes (its session ended).
    psql(
        &base,
        &format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{schema}'"
    ),
    );
    lock.wait().unwrap();
    // The dead process's claim commits: node ID 0 held by nobody alive, until the TTL.
    let t0 = Instant::now();
    while !held(&store, seq) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the killed process's claim never committed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let began = Instant::now();
    let next = cli(&mint);
    let waited = began.elapsed();
    assert!(
        next.status.success(),
        "the host's next process is refused: {}",
        text(&next.stderr)
    );
    assert_eq!(text(&next.stdout).lines().count(), 1);
    // It waited for the orphaned claim to run out (bounded: at most twice the TTL).
    assert!(
        waited < Duration::from_secs(2 * ttl_s + 5),
        "waited {waited:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    psql(&base, &format!("DROP SCHEMA \"{schema}\" CASCADE"));
}
