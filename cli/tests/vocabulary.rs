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
    let mint = ok(&["mint", "--help"]);
    assert!(
        mint.contains("snowmint mint [--count N] [--node SOURCE]"),
        "{mint}"
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

/// Each option is spelled once: a command's USAGE is made from the definitions (every option of an
/// action once in its synopsis, every option its OPTIONS describe in a synopsis), `snowmint --help`
/// lists the commands with their required options only, and the prose of sequencer, lease and range
/// names no option (their OPTIONS describe them).
#[test]
fn usage_is_the_definitions_and_prose_names_no_option() {
    let options_in = |text: &str| -> Vec<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(str::to_string)
            .collect()
    };
    for command in [
        "mint",
        "inspect",
        "layout",
        "sequencer",
        "lease",
        "opaque",
        "range",
        "serve",
    ] {
        let help = ok(&[command, "--help"]);
        let after_usage = help.split("\nUSAGE\n").nth(1).expect("a USAGE section");
        let (usage, rest) = after_usage.split_once("\n\n").unwrap();
        // One synopsis per action: a line `  snowmint …`, then the lines it wraps onto.
        let mut synopses: Vec<String> = Vec::new();
        for line in usage.lines() {
            match synopses.last_mut() {
                Some(s) if !line.starts_with("  snowmint ") => s.push_str(line),
                _ => synopses.push(line.to_string()),
            }
        }
        for s in &synopses {
            let mut opts = options_in(s);
            let n = opts.len();
            opts.sort();
            opts.dedup();
            assert_eq!(opts.len(), n, "{command}: an option twice in {s}");
        }
        let described = help
            .split("\nOPTIONS\n")
            .nth(1)
            .map_or("", |o| o.split("\n\n").next().unwrap());
        // Its rows: `  -n, --count N      text`, `  --node SOURCE      text`.
        for line in described.lines().filter(|l| l.starts_with("  -")) {
            let name = line.trim_start().split("  ").next().unwrap();
            for o in options_in(name) {
                assert!(
                    synopses.iter().any(|s| options_in(s).contains(&o)),
                    "{command}: {o} is in OPTIONS, in no synopsis"
                );
            }
        }
        if matches!(command, "sequencer" | "lease" | "range") {
            let prose = rest.split("\nOPTIONS\n").next().unwrap();
            assert!(
                options_in(prose).is_empty(),
                "{command}: its prose names options: {prose}"
            );
        }
    }
    let main = ok(&["--help"]);
    let usage = main
        .split("\nUSAGE\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    assert!(usage.contains("  snowmint mint [OPTIONS]\n"), "{usage}");
    assert!(
        usage.contains("  snowmint serve --listen HOST:PORT --node SOURCE [OPTIONS]\n"),
        "{usage}"
    );
    // The CLI README's table of commands shows these lines.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for row in readme.lines().filter(|l| l.starts_with("| `snowmint ")) {
        let cell = row[3..].split('`').next().unwrap().replace("\\|", "|");
        assert!(
            usage.lines().any(|l| l.trim() == cell),
            "the README's {cell} is no line of snowmint --help's USAGE"
        );
    }
}
