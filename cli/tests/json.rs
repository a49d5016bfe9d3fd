//! `--json` on mint, inspect and layout (stable field names, IDs as decimal strings), and the exit
//! status: 0 success, 1 failure, 2 usage error, whatever the output mode.

mod common;

use std::process::Output;

use common::run_with;

use serde_json::{json, Value};
use snowmint::{Encoding, Layout, ENCODINGS, PRESET_NAMES};

fn run(args: &[&str]) -> Output {
    run_with(args, "")
}

/// The JSON documents printed, one per line.
fn lines(args: &[&str]) -> Vec<Value> {
    lines_with(args, "")
}

fn lines_with(args: &[&str], stdin: &str) -> Vec<Value> {
    let out = run_with(args, stdin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && common::only_notes(&stderr, &common::expected_notes(args)),
        "snowmint {args:?}: {stderr}"
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

fn id_of(v: &Value) -> u64 {
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("id is not a string: {v}"))
        .parse()
        .unwrap()
}

#[test]
fn mint_json_lines() {
    for (format, enc) in [
        ("dec", Encoding::Decimal),
        ("hex", Encoding::Hex),
        ("base58", Encoding::Base58),
    ] {
        let v = lines(&[
            "mint", "-n", "500", "--node", "9", "--json", "--format", format,
        ]);
        assert_eq!(v.len(), 500);
        let mut last = 0;
        for doc in &v {
            let obj = doc.as_object().unwrap();
            assert_eq!(obj.len(), 2, "{doc}");
            let id = id_of(doc);
            assert!(id > last);
            last = id;
            assert_eq!(doc["text"], json!(enc.encode(id).as_str()));
            assert_eq!(Layout::twitter().decode(id).unwrap().node, 9);
        }
    }
    // A layout whose IDs pass 2^53 still prints them exactly (as strings).
    let v = lines(&["mint", "--layout", "discord", "--json"]);
    assert!(id_of(&v[0]) > 1 << 53);
}

#[test]
fn inspect_json_fields_are_stable() {
    let v = lines(&["inspect", "1212161512043450368", "--json"]);
    assert_eq!(
        v,
        vec![json!({
            "input": "1212161512043450368",
            "read_as": "dec",
            "id": "1212161512043450368",
            "layout": "twitter",
            "time": "2020-01-01T00:00:00.000Z",
            "unix_ms": 1577836800000u64,
            "sub_ms_ns": 0,
            "shows_nanos": false,
            "timestamp_ticks": 289001825343u64,
            "node": 1,
            "node_id": 1,
            "node_parts": {"datacenter": 0, "worker": 1, "bits": [5, 5]},
            "sequence": 0,
            "encodings": {
                "dec": "1212161512043450368",
                "hex": "10d276790fc01000",
                "base32": "11MKPF47W0400",
                "base58": "3pCM8TYByxj",
            },
        })]
    );
    // The core's Decoded reads back from the same object (its fields are a subset).
    let mut d = v[0].as_object().unwrap().clone();
    for extra in [
        "input",
        "read_as",
        "layout",
        "time",
        "node_id",
        "node_parts",
        "encodings",
    ] {
        d.remove(extra);
    }
    let decoded: snowmint::Decoded = serde_json::from_value(Value::Object(d)).unwrap();
    assert_eq!(
        decoded,
        Layout::twitter().decode(1212161512043450368).unwrap()
    );
}

#[test]
fn inspect_json_many_forms_and_stdin() {
    let id: u64 = 1212161512043450368;
    let forms: Vec<String> = ENCODINGS.iter().map(|e| e.encode(id).to_string()).collect();
    let mut args = vec!["inspect", "--json"];
    args.extend(forms.iter().map(String::as_str));
    let v = lines(&args);
    assert_eq!(v.len(), forms.len());
    for (doc, form) in v.iter().zip(&forms) {
        assert_eq!(id_of(doc), id);
        assert_eq!(doc["input"], json!(form));
    }
    for (doc, enc) in v.iter().zip(ENCODINGS) {
        assert_eq!(doc["read_as"], json!(enc.name()));
    }
    let v = lines_with(
        &["inspect", "-", "--json"],
        "1212161512043450368\n1212161512043450369\n",
    );
    assert_eq!(v.iter().map(id_of).collect::<Vec<_>>(), vec![id, id + 1]);
    // Offsets and sub-millisecond times.
    let v = lines(&[
        "inspect",
        "--layout",
        "hazelcast",
        "--node-id-offset",
        "5",
        "--json",
        "1213",
    ]);
    let d = Layout::hazelcast(5).unwrap().decode(1213).unwrap();
    assert_eq!(v[0]["node"], json!(d.node));
    assert_eq!(v[0]["node_id"], json!(d.node - 5));
    assert_eq!(v[0]["node_parts"], Value::Null);
    let v = lines(&[
        "inspect",
        "--layout",
        "decimal",
        "--json",
        "1640700422954100128",
    ]);
    assert_eq!(v[0]["time"], json!("2021-12-28T14:07:02.954100100Z"));
    assert_eq!(v[0]["node"], json!(28));
    assert_eq!(v[0]["shows_nanos"], json!(true));
}

/// `layout --json`: the core's serde form of a Layout …
const CORE_LAYOUT_FIELDS: [&str; 10] = [
    "preset",
    "timestamp_bits",
    "node_bits",
    "sequence_bits",
    "order",
    "tick_ns",
    "epoch_ms",
    "node_id_offset",
    "use_sign_bit",
    "node_split_bits",
];
/// … and what the CLI adds.
const DERIVED_LAYOUT_FIELDS: [&str; 12] = [
    "layout",
    "family",
    "total_bits",
    "epoch",
    "lifespan_end_ms",
    "lifespan_end",
    "node_count",
    "max_node_id",
    "ids_per_tick",
    "ids_per_second_per_node",
    "ids_per_second",
    "clock_unit",
];

#[test]
fn layout_json_for_every_preset() {
    let mut cases: Vec<(Vec<&str>, Layout)> = PRESET_NAMES
        .iter()
        .filter(|&&n| n != "snowcast")
        .map(|&n| {
            (
                vec!["layout", "--preset", n, "--json"],
                Layout::preset(n).unwrap(),
            )
        })
        .collect();
    cases.push((
        vec![
            "layout",
            "--preset",
            "snowcast",
            "--epoch-ms",
            "1704067200000",
            "--node-count",
            "1024",
            "--json",
        ],
        Layout::snowcast(1_704_067_200_000, 1024).unwrap(),
    ));
    cases.push((
        vec![
            "layout",
            "--timestamp-bits",
            "40",
            "--node-bits",
            "8",
            "--sequence-bits",
            "15",
            "--json",
        ],
        Layout::new(snowmint::LayoutConfig {
            timestamp_bits: 40,
            node_bits: 8,
            sequence_bits: 15,
            ..snowmint::LayoutConfig::default()
        })
        .unwrap(),
    ));
    for (args, l) in cases {
        let v = lines(&args);
        assert_eq!(v.len(), 1);
        let doc = v[0].as_object().unwrap().clone();
        let mut keys: Vec<&str> = doc.keys().map(String::as_str).collect();
        let mut expected: Vec<&str> = CORE_LAYOUT_FIELDS
            .iter()
            .chain(&DERIVED_LAYOUT_FIELDS)
            .copied()
            .collect();
        expected.sort_unstable();
        keys.sort_unstable();
        assert_eq!(keys, expected, "{args:?}");
        assert_eq!(doc["node_count"], json!(l.node_count()));
        assert_eq!(doc["ids_per_tick"], json!(l.ids_per_tick()));
        assert_eq!(doc["lifespan_end_ms"], json!(l.lifespan_end_ms()));
        assert_eq!(doc["clock_unit"], json!(l.clock_unit().name()));
        // The layout part is the core's serde form: it reads back as the same Layout.
        let mut core_part = doc.clone();
        for k in DERIVED_LAYOUT_FIELDS {
            core_part.remove(k);
        }
        let back: Layout = serde_json::from_value(Value::Object(core_part)).unwrap();
        assert_eq!(back, l, "{args:?}");
    }
    let v = lines(&["layout", "--json"]);
    assert_eq!(v[0]["ids_per_second"], json!(4_194_304_000u64));
    assert_eq!(v[0]["lifespan_end"], json!("2080-07-10T17:30:30.209Z"));
}

/// (arguments, exit status, error code on stderr)
const FAILURES: &[(&[&str], i32, &str)] = &[
    // 2: the command line is malformed.
    (&["frobnicate"], 2, "INVALID_ARGUMENT"),
    (&["mint", "--frobnicate"], 2, "INVALID_ARGUMENT"),
    (&["mint", "--json", "--frobnicate"], 2, "INVALID_ARGUMENT"),
    (&["mint", "-n"], 2, "INVALID_ARGUMENT"),
    (&["mint", "-n", "many"], 2, "INVALID_ARGUMENT"),
    (&["mint", "-n", "1", "--count", "2"], 2, "INVALID_ARGUMENT"),
    (&["mint", "--json=yes"], 2, "INVALID_ARGUMENT"),
    (&["mint", "5"], 2, "INVALID_ARGUMENT"),
    (&["inspect"], 2, "INVALID_ARGUMENT"),
    (&["inspect", "--json"], 2, "INVALID_ARGUMENT"),
    (&["layout", "--json", "twitter"], 2, "INVALID_ARGUMENT"),
    (&["layout", "--node-count", "128"], 2, "INVALID_ARGUMENT"),
    (&["help", "nothing"], 2, "INVALID_ARGUMENT"),
    (&["completions", "tcsh"], 2, "INVALID_ARGUMENT"),
    (&["man", "mint", "inspect"], 2, "INVALID_ARGUMENT"),
    // 1: a value was rejected or an operation failed.
    (
        &["mint", "--node", "1024", "--json"],
        1,
        "NODE_ID_OUT_OF_RANGE",
    ),
    (&["mint", "--layout", "twitterx"], 1, "INVALID_LAYOUT"),
    (&["mint", "--format", "octal"], 1, "INVALID_ARGUMENT"),
    (
        &["layout", "--timestamp-bits", "50", "--json"],
        1,
        "INVALID_LAYOUT",
    ),
    (&["inspect", "--json", "3hs0qtU4AFc"], 1, "PARSE"),
    (
        &["inspect", "--json", "18446744073709551615"],
        1,
        "INVALID_ID",
    ),
    (
        &["mint", "--state-file", "/proc/version"],
        1,
        "STATE_FILE_MISMATCH",
    ),
];

#[test]
fn exit_status_two_for_usage_one_for_failure() {
    for &(args, status, code) in FAILURES {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "snowmint {args:?}: {err}");
        assert!(
            err.starts_with(&format!("error[{code}]: ")),
            "snowmint {args:?}: {err}"
        );
        assert!(
            out.stdout.is_empty(),
            "snowmint {args:?} printed on failure"
        );
        if status == 2 {
            assert!(
                err.contains("--help"),
                "a usage error points at the help: {err}"
            );
        }
    }
    for ok in [
        &["mint", "--json"][..],
        &["layout", "--json"],
        &["man"],
        &["completions", "bash"],
        &["--help"],
    ] {
        assert_eq!(run(ok).status.code(), Some(0), "{ok:?}");
    }
}

#[test]
fn exit_status_is_documented() {
    let help = String::from_utf8(run(&["--help"]).stdout).unwrap();
    assert!(
        help.contains("1  failure") && help.contains("2  usage error"),
        "{help}"
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains("| 2 |") && readme.contains("| 1 |"),
        "cli/README.md documents the exit status"
    );
}

#[test]
fn mint_stats_on_stderr() {
    let dir = std::env::temp_dir().join(format!("snowmint-cli-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("state").display().to_string();
    // Batches of at most one tick (4096 in twitter): 5000 IDs are two batches. In process, on a state
    // file, and under a lease.
    let lease = format!("file://{}", dir.display());
    for extra in [
        vec!["--node", "0"],
        vec!["--node", "0", "--state-file", file.as_str()],
        vec!["--node", lease.as_str()],
    ] {
        let mut args = vec!["mint", "-n", "5000", "--stats"];
        args.extend(&extra);
        let out = run(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 5000);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        let s: Value = serde_json::from_str(&stderr).unwrap();
        let keys: Vec<&str> = s.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "batches",
                "borrowed_ticks",
                "minted",
                "regressions",
                "wait_ns",
                "waits"
            ],
            "{args:?}"
        );
        assert_eq!(
            (s["minted"].as_u64(), s["batches"].as_u64()),
            (Some(5000), Some(2)),
            "{args:?}"
        );
        assert!(s["waits"].as_u64().unwrap() <= 2 && s["regressions"].as_u64().is_some());
    }
    // Without --stats, nothing on stderr.
    assert!(run(&["mint", "-n", "3", "--node", "0"]).stderr.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The README's table of `inspect --json` fields names exactly the fields printed.
#[test]
fn inspect_json_fields_are_documented() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table = readme
        .split("`inspect --json` prints one object per ID and line:")
        .nth(1)
        .expect("the README's inspect --json section")
        .split("\n\n")
        .nth(1)
        .expect("its table");
    let mut documented: Vec<String> = table
        .lines()
        .skip(2)
        .filter_map(|l| l.strip_prefix("| "))
        .flat_map(|l| {
            let names = l.split(" |").next().unwrap();
            names
                .split(", ")
                .map(|n| n.trim_matches('`').to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    documented.sort();
    let printed = &lines(&["inspect", "1212161512043450368", "--json"])[0];
    let mut keys: Vec<String> = printed.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(documented, keys);
}
