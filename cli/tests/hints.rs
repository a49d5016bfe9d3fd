//! Every hint the CLI gives is tested by following it: a command in an error is pasted into a shell
//! and must work, a "did you mean" names what was meant, and a default that could make two minters
//! collide is not taken silently (issue 43).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::run_with;

/// A fresh file store under the target's temporary directory.
fn store(test: &str) -> String {
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("snowmint-hints-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    format!("file://{}", dir.display())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(args: &[&str]) -> Output {
    let out = run_with(args, "");
    assert!(
        out.status.success(),
        "snowmint {args:?}: {}",
        text(&out.stderr)
    );
    out
}

fn fails(args: &[&str], code: &str) -> String {
    let out = run_with(args, "");
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "snowmint {args:?} should fail");
    assert!(
        stderr.starts_with(&format!("error[{code}]: ")),
        "snowmint {args:?}: expected {code}, got {stderr}"
    );
    stderr
}

/// The command between backquotes after `create it first with`.
fn pasted_hint(stderr: &str) -> String {
    let rest = stderr
        .split_once("create it first with `")
        .unwrap_or_else(|| panic!("no command in the hint: {stderr}"))
        .1;
    rest.split_once('`').unwrap().0.to_string()
}

/// Runs `line` in a POSIX shell whose `snowmint` is the one under test, as a user pasting it would
/// (with `SNOWMINT_STORE` set to `store`, when given).
fn paste(line: &str, store: Option<&str>) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_snowmint")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut sh = Command::new("sh");
    sh.args(["-c", line])
        .env("PATH", path)
        .env_remove("SNOWMINT_STORE")
        .env_remove("SNOWMINT_NODE_ID");
    if let Some(url) = store {
        sh.env("SNOWMINT_STORE", url);
    }
    sh.output().unwrap()
}

/// SEQUENCER_NOT_FOUND's hint names the store and the layout the mint asked for: pasted, it creates
/// the sequencer, and the same mint then works (no SEQUENCER_CONFLICT) — for the default layout, a
/// preset and a custom layout, for a store path a shell would split, and on every server store named
/// in `SNOWMINT_TEST_STORES` (etcd://, postgres://; coord/test.sh sets it).
#[test]
fn the_not_found_hint_works_when_pasted() {
    let custom: Vec<&str> =
        "--timestamp-bits 40 --node-bits 8 --sequence-bits 15 --epoch-ms 1704067200000"
            .split(' ')
            .collect();
    let layouts: [(&str, &[&str]); 3] = [
        ("default", &[]),
        ("preset", &["--layout", "discord"]),
        ("custom", &custom),
    ];
    let servers: Vec<String> = std::env::var("SNOWMINT_TEST_STORES")
        .unwrap_or_default()
        .split_whitespace()
        .filter(|u| !u.starts_with("file:"))
        .map(str::to_string)
        .collect();
    // (what, store URL, sequencer name): a sequencer name unique to this run on a shared server.
    let mut cases: Vec<(String, String, String)> = Vec::new();
    for (test, _) in layouts {
        cases.push((
            test.into(),
            store(&format!("{test} with space")),
            "orders".into(),
        ));
        for url in &servers {
            let name = format!("hint{}{test}{}", std::process::id(), now_ms() % 1_000_000);
            cases.push((format!("{test} on {url}"), url.clone(), name));
        }
    }
    for (what, store, name) in &cases {
        let layout = layouts.iter().find(|(t, _)| what.starts_with(t)).unwrap().1;
        let sep = if store.contains('?') { '&' } else { '?' };
        let src = format!("{store}{sep}sequencer={name}&ttl=2s");
        let mut mint = vec!["mint", "-n", "2", "--node", &src];
        mint.extend(layout);
        let e = fails(&mint, "SEQUENCER_NOT_FOUND");
        let hint = pasted_hint(&e);
        // The store as a shell word: quoted (a path with a space), or "$SNOWMINT_STORE" when its URL
        // holds a password (which no message shows), set as the hint says.
        let secret = store.contains(":snowmint-test@") || store.contains("password=");
        let word = match (store.starts_with("file:"), secret) {
            (true, _) => "'".to_string(),
            (false, true) => "\"$SNOWMINT_STORE\"".to_string(),
            (false, false) => store.clone(),
        };
        assert!(
            hint.starts_with(&format!("snowmint sequencer create {name} --store {word}")),
            "{what}: the store as {word}: {hint}"
        );
        assert_eq!(
            secret,
            e.contains("with SNOWMINT_STORE set to the store's URL"),
            "{what}: {e}"
        );
        let ran = paste(&hint, secret.then_some(store.as_str()));
        assert!(
            ran.status.success(),
            "{what}: `{hint}` failed: {}",
            text(&ran.stderr)
        );
        let out = ok(&mint);
        assert_eq!(text(&out.stdout).lines().count(), 2, "{what}");
        if !store.starts_with("file:") {
            ok(&["sequencer", "destroy", name, "--store", store]);
        }
    }
}

fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// `sequencer show ordres` and `lease show ordres` name the sequencer meant, and the one named works.
#[test]
fn a_misspelt_sequencer_name_gets_did_you_mean() {
    let store = store("show");
    ok(&["sequencer", "create", "orders", "--store", &store]);
    for command in ["sequencer", "lease"] {
        let e = fails(
            &[command, "show", "ordres", "--store", &store],
            "SEQUENCER_NOT_FOUND",
        );
        assert!(e.contains("did you mean \"orders\"?"), "{e}");
        ok(&[command, "show", "orders", "--store", &store]);
    }
}

/// A misspelt lease-source parameter (`?sequncer=`, `?tll=`) gets a "did you mean"; following it works.
#[test]
fn a_misspelt_source_parameter_gets_did_you_mean() {
    let store = store("param");
    ok(&["sequencer", "create", "orders", "--store", &store]);
    for (typo, meant) in [("sequncer", "sequencer"), ("tll", "ttl")] {
        let value = if meant == "ttl" { "2s" } else { "orders" };
        let other = if meant == "ttl" {
            "sequencer=orders"
        } else {
            "ttl=2s"
        };
        let bad = format!("{store}?{typo}={value}&{other}");
        let e = fails(&["mint", "--node", &bad], "INVALID_ARGUMENT");
        assert!(e.contains(&format!("did you mean {meant}?")), "{e}");
        let good = bad.replace(&format!("{typo}="), &format!("{meant}="));
        ok(&["mint", "--node", &good]);
    }
}

/// A duration without a unit is refused, asking for one; with the unit it asks for, it works.
#[test]
fn a_duration_without_a_unit_is_refused_asking_for_one() {
    let store = store("ttl");
    ok(&["sequencer", "create", "orders", "--store", &store]);
    for (param, value) in [("ttl", "5"), ("wait", "30")] {
        let bad = format!("{store}?sequencer=orders&{param}={value}");
        let e = fails(&["mint", "--node", &bad], "INVALID_ARGUMENT");
        let asked = format!("has no unit: write {value}s, {value}ms or {value}m");
        assert!(e.contains(&asked), "{e}");
        ok(&["mint", "--node", &format!("{bad}s")]);
    }
}

/// `--node -1` is a wrong node ID, not an unknown option `-1`.
#[test]
fn a_negative_value_is_a_value() {
    let e = fails(&["mint", "--node", "-1"], "INVALID_ARGUMENT");
    assert!(!e.contains("unknown option"), "{e}");
    assert!(e.contains("a node ID is not negative"), "{e}");
    let e = fails(&["mint", "-n", "-1", "--node", "0"], "INVALID_ARGUMENT");
    assert!(!e.contains("unknown option"), "{e}");
    assert!(e.contains("expects a whole number, got \"-1\""), "{e}");
}

/// `mint` without --node or $SNOWMINT_NODE_ID says on stderr that it mints as node 0 and how to give
/// a node ID; following the hint (`--node 0`, or the variable) makes it quiet.
#[test]
fn mint_without_a_node_warns() {
    let out = ok(&["mint"]);
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("warning: no --node and no $SNOWMINT_NODE_ID, so node 0"),
        "{stderr}"
    );
    assert!(stderr.contains("--node N"), "{stderr}");
    assert_eq!(text(&out.stdout).lines().count(), 1);
    assert!(ok(&["mint", "--node", "0"]).stderr.is_empty());
    let with_env = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .arg("mint")
        .env("SNOWMINT_NODE_ID", "3")
        .output()
        .unwrap();
    assert!(with_env.status.success());
    assert!(with_env.stderr.is_empty(), "{}", text(&with_env.stderr));
}

/// `inspect` without --layout says which layout it assumed; an ID of another layout minted now gets
/// a note naming the layout under which it decodes to now, and inspecting with that layout is quiet.
/// A time before 2010 is a warning.
#[test]
fn inspect_says_what_it_assumed_and_doubts_implausible_times() {
    let minted = |layout: &str| {
        let out = ok(&["mint", "--node", "1", "--layout", layout]);
        text(&out.stdout).trim().to_string()
    };
    let twitter = minted("twitter");
    let out = ok(&["inspect", &twitter]);
    assert_eq!(
        text(&out.stderr),
        "note: no --layout given, so the twitter layout is assumed\n"
    );
    assert!(ok(&["inspect", &twitter, "--layout", "twitter"])
        .stderr
        .is_empty());
    for layout in ["sonyflake", "discord"] {
        let id = minted(layout);
        let stderr = text(&ok(&["inspect", &id]).stderr);
        let hint = format!("give --layout {layout} if it is one");
        assert!(stderr.contains(&hint), "{layout}: {stderr}");
        let followed = ok(&["inspect", &id, "--layout", layout]);
        assert!(followed.stderr.is_empty(), "{}", text(&followed.stderr));
        assert!(
            text(&followed.stdout).contains("ago)") || text(&followed.stdout).contains(", now)")
        );
    }
    // Before 2010, or in the future, under a layout given: a warning.
    let stderr = text(&ok(&["inspect", "1000", "--epoch-ms", "0"]).stderr);
    assert!(
        stderr.starts_with(
            "warning: ID 1000 decodes under custom (twitter with changes) to 1970-01-01"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(", before 2010: not a time it was minted"),
        "{stderr}"
    );
    let max = u64::MAX >> 1;
    let stderr = text(&ok(&["inspect", &max.to_string(), "--layout", "twitter"]).stderr);
    assert!(stderr.starts_with("warning: ID "), "{stderr}");
    assert!(
        stderr.contains(", in the future: not a time it was minted"),
        "{stderr}"
    );
}
