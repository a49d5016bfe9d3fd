//! `snowmint range next|show` as a user runs it: two datacenters on every store of the run
//! (`SNOWMINT_TEST_STORES`, else the embedded store), concurrent processes, exhaustion, bad input.

use std::collections::HashSet;
use std::process::{Command, Output};

const CLI: &str = env!("CARGO_BIN_EXE_snowmint");

fn stores() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("snowmint-range-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut out = vec![format!("file://{}", dir.display())];
    if let Ok(v) = std::env::var("SNOWMINT_TEST_STORES") {
        out.extend(
            v.split_whitespace()
                .filter(|s| !s.starts_with("file://"))
                .map(str::to_string),
        );
    }
    out
}

fn unique(tag: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{tag}-{}-{}-{}",
        std::process::id(),
        t % 1_000_000_000,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn run(args: &[&str]) -> Output {
    Command::new(CLI)
        .args(args)
        .env_remove("SNOWMINT_STORE")
        .output()
        .expect("the snowmint binary runs")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "snowmint {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(args: &[&str], code: &str, status: i32) -> (String, String) {
    let out = run(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        out.status.code(),
        Some(status),
        "snowmint {args:?}: {stderr}"
    );
    assert!(
        stderr.starts_with(&format!("error[{code}]: ")),
        "snowmint {args:?}: expected {code}: {stderr}"
    );
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

fn values(text: &str) -> Vec<u64> {
    text.lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn two_datacenters_and_concurrent_processes_never_repeat_a_value() {
    for global in stores() {
        let name = unique("cli");
        let local_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(unique("dc-b"));
        std::fs::create_dir_all(&local_dir).unwrap(); // a store exists only once created
        let local_b = format!("file://{}", local_dir.display());
        let all: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..6)
                .map(|i| {
                    let (global, name, local_b) = (&global, &name, &local_b);
                    s.spawn(move || {
                        let (dc, local) = if i % 2 == 0 {
                            ("a", global.as_str())
                        } else {
                            ("b", local_b.as_str())
                        };
                        values(&ok(&[
                            "range",
                            "next",
                            name,
                            "--dc",
                            dc,
                            "--global",
                            global,
                            "--local",
                            local,
                            "-n",
                            "25",
                            "--dc-range",
                            "100",
                        ]))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut seen = HashSet::new();
        for list in &all {
            assert_eq!(list.len(), 25, "{global}");
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{global}: {list:?}");
            for v in list {
                assert!(seen.insert(*v), "{global}: {v} twice");
                assert!((1..1 << 31).contains(v));
            }
        }
        let show = ok(&[
            "range", "show", &name, "--global", &global, "--dc", "b", "--local", &local_b,
        ]);
        assert!(
            show.contains(&format!("range sequence {name} in ")),
            "{show}"
        );
        assert!(show.contains("31 bits from 1"), "{show}");
        assert!(
            show.contains("datacenter a ") && show.contains("datacenter b "),
            "{show}"
        );
        assert!(show.contains("last value given to a process"), "{show}");
        std::fs::remove_dir_all(&local_dir).ok();
    }
}

#[test]
fn the_width_runs_out_with_range_exhausted_after_printing_what_was_taken() {
    let global = &stores()[0];
    let name = unique("small");
    let args = |n: &'static str| -> Vec<String> {
        [
            "range",
            "next",
            &name,
            "--dc",
            "a",
            "--global",
            global,
            "--bits",
            "4",
            "--start",
            "3",
            "--dc-range",
            "5",
            "-n",
            n,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let a = args("10");
    let first = values(&ok(&a.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(first, (3..13).collect::<Vec<u64>>());
    let b = args("5");
    let (out, err) = fails(
        &b.iter().map(String::as_str).collect::<Vec<_>>(),
        "RANGE_EXHAUSTED",
        1,
    );
    assert_eq!(values(&out), vec![13, 14, 15]);
    assert!(err.contains("4 bits"), "{err}");
}

#[test]
fn bad_input_is_a_usage_error_naming_what_is_wrong() {
    let global = &stores()[0];
    let base = [
        "range",
        "next",
        "n",
        "--dc",
        "a",
        "--global",
        global.as_str(),
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter()
            .chain(extra.iter())
            .map(|s| s.to_string())
            .collect()
    };
    for (extra, words) in [
        (&["--bits", "0"][..], "width 0 bits"),
        (&["--bits", "64"][..], "1 to 63"),
        (&["--start", "2147483648"][..], "start value"),
        (
            &["--bits", "8", "--dc-range", "1000"][..],
            "datacenter range 1000",
        ),
        (
            &["--dc-range", "10", "--process-range", "11"][..],
            "process range 11",
        ),
        (&["--threshold", "0"][..], "threshold"),
        (&["-n", "0"][..], "-n 0"),
    ] {
        let args = with(extra);
        let (_, err) = fails(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            "INVALID_ARGUMENT",
            2,
        );
        assert!(err.contains(words), "{extra:?}: {err}");
    }
    for url in [
        "etcd://",
        "postgres://host/db",
        "redis://x",
        "file://relative",
    ] {
        fails(
            &["range", "next", "n", "--dc", "a", "--global", url],
            "INVALID_ARGUMENT",
            2,
        );
        fails(
            &[
                "range", "next", "n", "--dc", "a", "--global", global, "--local", url,
            ],
            "INVALID_ARGUMENT",
            2,
        );
    }
    fails(
        &["range", "next", "n", "--global", global],
        "INVALID_ARGUMENT",
        2,
    );
    for (name, dc) in [("a/b", "a"), ("n", "a@b"), ("", "a")] {
        let (_, err) = fails(
            &["range", "next", name, "--dc", dc, "--global", global],
            "INVALID_ARGUMENT",
            2,
        );
        assert!(err.contains("use 1 to 64 characters"), "{err}");
    }
    fails(
        &["range", "show", "n", "--global", global, "--dc", "a"],
        "INVALID_ARGUMENT",
        2,
    );
    fails(
        &["range", "bogus", "n", "--global", global],
        "INVALID_ARGUMENT",
        2,
    );
    assert!(ok(&["range", "--help"]).contains("snowmint range next NAME --dc DC"));
    assert!(ok(&["range", "show", "never", "--global", global]).contains("no global row"));
}

/// `--json`: `range next` prints one `{"id": "<decimal>"}` per value and line, `range show` one object
/// with the global row and the datacenter's, values as decimal strings, on every store.
#[test]
fn json_output_of_next_and_show() {
    for global in stores() {
        let name = unique("json");
        let next = ok(&[
            "range", "next", &name, "--dc", "eu", "--global", &global, "-n", "2", "--json",
        ]);
        let ids: Vec<serde_json::Value> = next
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            ids,
            [
                serde_json::json!({"id": "1"}),
                serde_json::json!({"id": "2"})
            ],
            "{next}"
        );
        let show = ok(&[
            "range", "show", &name, "--global", &global, "--dc", "eu", "--local", &global, "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&show).unwrap();
        assert_eq!(v["name"], name.as_str(), "{v}");
        assert_eq!(v["global"]["bits"], 31, "{v}");
        assert_eq!(v["global"]["start"], "1", "{v}");
        assert_eq!(v["global"]["datacenters"]["eu"]["start"], "1", "{v}");
        assert_eq!(v["datacenter"]["name"], "eu", "{v}");
        assert_eq!(v["datacenter"]["row"]["last"], "2", "{v}");
        let never = ok(&[
            "range",
            "show",
            &unique("never"),
            "--global",
            &global,
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&never).unwrap();
        assert!(
            v["global"].is_null() && v.get("datacenter").is_none(),
            "{v}"
        );
    }
}

/// Issue #39: `range next` and `range show` on an embedded store that does not exist fail with
/// STORE_NOT_FOUND (exit status 1) and create nothing, the global store missing or the local one;
/// `sequencer create` (an explicit create command) creates the store, and then it serves.
#[test]
fn a_missing_embedded_store_is_store_not_found_and_nothing_is_created() {
    struct Removed(std::path::PathBuf);
    impl Drop for Removed {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(unique("missing"));
    let _removed = Removed(root.clone());
    let existing = root.join("existing");
    std::fs::create_dir_all(&existing).unwrap();
    let missing = root.join("missing/store");
    let (existing, missing) = (
        format!("file://{}", existing.display()),
        format!("file://{}", missing.display()),
    );
    for (global, local) in [
        (&missing, &missing),
        (&missing, &existing),
        (&existing, &missing),
    ] {
        for action in ["next", "show"] {
            let (_, err) = fails(
                &[
                    "range",
                    action,
                    "orders",
                    "--dc",
                    "eu",
                    "--store",
                    global,
                    "--local-store",
                    local,
                ],
                "STORE_NOT_FOUND",
                1,
            );
            assert!(err.contains("snowmint sequencer create"), "{err}");
            assert!(
                !root.join("missing").exists(),
                "range {action} {global} {local} created a store"
            );
            assert_eq!(
                std::fs::read_dir(root.join("existing")).unwrap().count(),
                0,
                "range {action} {global} {local} wrote into the existing store"
            );
        }
    }
    ok(&["sequencer", "create", "s", "--store", &missing]);
    let out = ok(&[
        "range", "next", "orders", "--dc", "eu", "--store", &missing, "-n", "2",
    ]);
    assert_eq!(values(&out), [1, 2]);
}
