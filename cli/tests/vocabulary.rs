//! One word per idea on the command line (issue 43): the new spelling of each idea works in every
//! command that has the idea, the former spelling still works as an alias (scripts keep running), a
//! duration takes a unit everywhere, and an option of a sibling action is named as such.

mod common;

use std::path::Path;
use std::process::Output;

use common::run_with;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(args: &[&str]) -> String {
    let out: Output = run_with(args, "");
    assert!(
        out.status.success(),
        "snowmint {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn usage_error(args: &[&str]) -> String {
    let out = run_with(args, "");
    assert_eq!(
        out.status.code(),
        Some(2),
        "snowmint {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stderr)
}

fn store(test: &str) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("snowmint-vocabulary-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    format!("file://{}", dir.display())
}

/// `sequencer create --node-count N` (former `--nodes N`) sets the node count; with the snowcast
/// layout it is that layout's parameter too; `sequencer destroy --json` answers in JSON.
#[test]
fn a_node_count_is_node_count() {
    let store = store("nodes");
    for (name, flag) in [("new", "--node-count"), ("old", "--nodes")] {
        let v: serde_json::Value = serde_json::from_str(&ok(&[
            "sequencer",
            "create",
            name,
            "--store",
            &store,
            flag,
            "64",
            "--json",
        ]))
        .unwrap();
        assert_eq!(v["nodes"], 64, "{flag}: {v}");
    }
    let out = ok(&[
        "sequencer",
        "create",
        "cast",
        "--store",
        &store,
        "--layout",
        "snowcast",
        "--epoch-ms",
        "1704067200000",
        "--node-count",
        "128",
    ]);
    assert!(out.contains(": 128 nodes"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&ok(&[
        "sequencer",
        "destroy",
        "new",
        "--store",
        &store,
        "--json",
    ]))
    .unwrap();
    assert_eq!(
        (v["name"].as_str(), v["destroyed"].as_bool()),
        (Some("new"), Some(true))
    );
    // An option of another action: named as such, never "did you mean" itself.
    let e = usage_error(&[
        "sequencer",
        "list",
        "--store",
        &store,
        "--layout",
        "twitter",
    ]);
    assert!(e.contains("(--layout is an option of create only)"), "{e}");
    assert!(!e.contains("did you mean --layout"), "{e}");
}

/// A range sequence's stores are `--store` and `--local-store` (former `--global`, `--local`); its
/// wait is a duration with a unit (`--wait 500ms`; the former `--wait-ms 500` still works).
#[test]
fn stores_and_durations_of_a_range() {
    let global = store("global");
    let local = store("local");
    let new = ok(&[
        "range",
        "next",
        "r",
        "--dc",
        "eu",
        "--store",
        &global,
        "--local-store",
        &local,
        "--wait",
        "500ms",
        "-n",
        "2",
    ]);
    let old = ok(&[
        "range",
        "next",
        "r",
        "--dc",
        "eu",
        "--global",
        &global,
        "--local",
        &local,
        "--wait-ms",
        "500",
        "-n",
        "2",
    ]);
    assert_eq!((new.lines().count(), old.lines().count()), (2, 2));
    assert!(
        old.lines().next().unwrap().parse::<u64>().unwrap()
            > new.lines().last().unwrap().parse().unwrap()
    );
    let e = usage_error(&[
        "range", "next", "r", "--dc", "eu", "--store", &global, "--wait", "500",
    ]);
    assert!(e.contains("has no unit: write 500s, 500ms or 500m"), "{e}");
    let show = ok(&[
        "range",
        "show",
        "r",
        "--store",
        &global,
        "--dc",
        "eu",
        "--local-store",
        &local,
    ]);
    assert!(show.contains("range sequence r"), "{show}");
}

/// The ID service's durations take a unit too, and its store is `--store` (former `--leases`).
#[test]
fn durations_and_store_of_serve() {
    let serve = |flag: &str, value: &str| {
        usage_error(&[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--node",
            "1",
            flag,
            value,
        ])
    };
    for flag in ["--validity", "--lease-ttl", "--lease-reservation"] {
        let e = serve(flag, "600");
        assert!(
            e.contains("has no unit: write 600s, 600ms or 600m"),
            "{flag}: {e}"
        );
    }
    for flag in ["--store", "--leases"] {
        let e = serve(flag, "redis://h/x");
        assert!(e.contains("unknown scheme \"redis\""), "{flag}: {e}");
    }
}

/// `snowmint layout --layout L` (as every command names a layout) equals the former `--preset L`;
/// the usage names a node source, not a number.
#[test]
fn a_layout_is_layout_and_a_node_is_a_source() {
    assert_eq!(
        ok(&["layout", "--layout", "sonyflake"]),
        ok(&["layout", "--preset", "sonyflake"])
    );
    let help = ok(&["--help"]);
    assert!(
        help.contains("snowmint mint    [-n N] [--node SOURCE]"),
        "{help}"
    );
    assert!(
        !help.contains("--preset") && !help.contains("--leases"),
        "{help}"
    );
    for command in ["mint", "layout", "sequencer", "range", "serve"] {
        let h = ok(&[command, "--help"]);
        let synopsis = h.split("\nEXAMPLES").next().unwrap();
        for old in [
            "--preset",
            "--nodes ",
            "--global",
            "--local ",
            "--wait-ms",
            "--leases",
            "--node N]",
        ] {
            assert!(!synopsis.contains(old), "{command} --help still says {old}");
        }
    }
}
