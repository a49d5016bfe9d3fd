//! Runs the built `snowmint` binary and checks what a user sees: output, error codes and exit status.

mod common;

use std::process::{Command, Output};

use snowmint::{Encoding, Layout, ENCODINGS};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(args)
        .env_remove("SNOWMINT_NODE_ID")
        .output()
        .expect("the snowmint binary runs")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "snowmint {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = common::expected_notes(args);
    assert!(
        common::only_notes(&stderr, &want),
        "snowmint {args:?}: stderr: {stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Asserts failure with `code` and exit status `status`; returns stderr.
fn fails(args: &[&str], code: &str, status: i32) -> String {
    let out = run(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        out.status.code(),
        Some(status),
        "snowmint {args:?}: {stderr}"
    );
    assert!(
        stderr.starts_with(&format!("error[{code}]: ")),
        "snowmint {args:?}: expected {code}, got: {stderr}"
    );
    assert!(out.stdout.is_empty(), "no output on failure");
    stderr
}

fn ids(text: &str) -> Vec<u64> {
    text.lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn mint_one_by_default() {
    let out = ok(&["mint"]);
    let v = ids(&out);
    assert_eq!(v.len(), 1);
    let d = Layout::twitter().decode(v[0]).unwrap();
    assert_eq!(d.node, 0);
}

#[test]
fn mint_many_increasing_with_node() {
    let v = ids(&ok(&["mint", "-n", "10000", "--node", "7"]));
    assert_eq!(v.len(), 10000);
    assert!(v.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    let l = Layout::twitter();
    for id in &v {
        assert_eq!(l.decode(*id).unwrap().node, 7);
    }
    // Recent: minted within the last minute.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let t = l.decode(v[0]).unwrap().unix_ms;
    assert!(t <= now_ms && now_ms - t < 60_000, "{t} vs {now_ms}");
}

#[test]
fn mint_flag_forms() {
    assert_eq!(ids(&ok(&["mint", "-n3"])).len(), 3);
    assert_eq!(ids(&ok(&["mint", "--count=4", "--node=2"])).len(), 4);
    assert_eq!(
        ids(&ok(&["mint", "--count", "2", "--layout", "js53"])).len(),
        2
    );
}

#[test]
fn node_from_environment() {
    let out = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["mint", "--layout", "instagram"])
        .env("SNOWMINT_NODE_ID", "4321")
        .output()
        .unwrap();
    assert!(out.status.success());
    let id: u64 = String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        Layout::preset("instagram")
            .unwrap()
            .decode(id)
            .unwrap()
            .node,
        4321
    );

    let out = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["mint"])
        .env("SNOWMINT_NODE_ID", "seven")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SNOWMINT_NODE_ID"));
}

#[test]
fn mint_every_format_parses_back() {
    for enc in ENCODINGS {
        let out = ok(&["mint", "-n", "50", "--node", "3", "--format", enc.name()]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 50);
        let parsed: Vec<u64> = lines.iter().map(|s| enc.parse(s).unwrap()).collect();
        assert!(parsed.windows(2).all(|w| w[0] < w[1]));
        if enc != Encoding::Decimal {
            // Fixed width: the text sorts like the numbers.
            assert!(lines.iter().all(|s| s.len() == enc.width()));
            assert!(lines.windows(2).all(|w| w[0] < w[1]));
        }
    }
}

#[test]
fn back_to_back_runs_never_repeat() {
    let mut all = Vec::new();
    for _ in 0..5 {
        all.extend(ids(&ok(&["mint", "-n", "3", "--node", "9"])));
    }
    let n = all.len();
    assert!(
        all.windows(2).all(|w| w[0] < w[1]),
        "each run continues after the last: {all:?}"
    );
    all.dedup();
    assert_eq!(all.len(), n);
}

#[test]
fn mint_every_preset() {
    for (args, node) in [
        (vec!["--layout", "discord"], 31),
        (vec!["--layout", "sonyflake"], 65535),
        (vec!["--layout", "hazelcast", "--node-id-offset", "100"], 5),
        (
            vec![
                "--layout",
                "snowcast",
                "--epoch-ms",
                "1704067200000",
                "--node-count",
                "200",
            ],
            255,
        ),
        (vec!["--layout", "js53"], 15),
        (vec!["--layout", "decimal"], 28),
    ] {
        let node_s = node.to_string();
        let mut a = vec!["mint", "-n", "300", "--node", node_s.as_str()];
        a.extend(args.iter().copied());
        let v = ids(&ok(&a));
        assert_eq!(v.len(), 300, "{args:?}");
        assert!(v.windows(2).all(|w| w[0] < w[1]), "{args:?}");
        let layout = match args[1] {
            "hazelcast" => Layout::hazelcast(100).unwrap(),
            "snowcast" => Layout::snowcast(1704067200000, 200).unwrap(),
            name => Layout::preset(name).unwrap(),
        };
        let expect = node + layout.node_id_offset();
        assert!(
            v.iter()
                .all(|id| layout.decode(*id).unwrap().node == expect),
            "{args:?}"
        );
    }
    // js53 IDs fit in 53 bits.
    let v = ids(&ok(&["mint", "-n", "5", "--layout", "js53"]));
    assert!(v.iter().all(|id| *id < 1 << 53));
}

#[test]
fn mint_custom_layout() {
    let v = ids(&ok(&[
        "mint",
        "-n",
        "20",
        "--node",
        "200",
        "--timestamp-bits",
        "40",
        "--node-bits",
        "8",
        "--sequence-bits",
        "15",
        "--epoch-ms",
        "1704067200000",
    ]));
    let l = Layout::new(snowmint::LayoutConfig {
        timestamp_bits: 40,
        node_bits: 8,
        sequence_bits: 15,
        epoch_ms: 1704067200000,
        node_split_bits: 0,
        ..Default::default()
    })
    .unwrap();
    assert!(v.iter().all(|id| l.decode(*id).unwrap().node == 200));
}

#[test]
fn mint_errors() {
    let e = fails(&["mint", "--node", "1024"], "NODE_ID_OUT_OF_RANGE", 1);
    assert!(e.contains("0..=1023"), "{e}");
    fails(
        &["mint", "--node", "16", "--layout", "js53"],
        "NODE_ID_OUT_OF_RANGE",
        1,
    );
    fails(&["mint", "-n", "0"], "INVALID_ARGUMENT", 2);
    fails(&["mint", "-n", "-5"], "INVALID_ARGUMENT", 2);
    fails(&["mint", "-n", "1.5"], "INVALID_ARGUMENT", 2);
    fails(&["mint", "-n"], "INVALID_ARGUMENT", 2);
    fails(
        &["mint", "--node", "99999999999999999999"],
        "INVALID_ARGUMENT",
        2,
    );
    fails(&["mint", "--frobnicate"], "INVALID_ARGUMENT", 2);
    fails(&["mint", "5"], "INVALID_ARGUMENT", 2);
    fails(&["mint", "-n", "2", "--count", "3"], "INVALID_ARGUMENT", 2);
    fails(&["mint", "--format", "base64"], "INVALID_ARGUMENT", 1);
    let e = fails(&["mint", "--layout", "flickr"], "INVALID_LAYOUT", 1);
    assert!(e.contains("twitter") && e.contains("sonyflake"), "{e}");
    fails(&["mint", "--layout", "snowcast"], "INVALID_ARGUMENT", 2);
    fails(&["mint", "--node-count", "256"], "INVALID_ARGUMENT", 2);
    // An epoch in the future: the clock is before it.
    fails(
        &[
            "mint",
            "--layout",
            "snowcast",
            "--epoch-ms",
            "9999999999999",
            "--node-count",
            "128",
        ],
        "CLOCK_BEFORE_EPOCH",
        1,
    );
    // A layout whose lifespan ended long ago.
    fails(&["mint", "--timestamp-bits", "20"], "LAYOUT_EXHAUSTED", 1);
}

#[test]
fn inspect_known_id() {
    let out = ok(&["inspect", "1212161512043450368"]);
    assert!(out.contains("2020-01-01T00:00:00.000Z"), "{out}");
    assert!(out.contains("Unix ms 1577836800000"), "{out}");
    assert!(
        out.contains("node       1  (datacenter 0, worker 1"),
        "{out}"
    );
    assert!(out.contains("sequence   0"), "{out}");
    for enc in ENCODINGS {
        let line = format!("{:<9}  {}", enc.name(), enc.encode(1212161512043450368));
        assert!(out.contains(&line), "missing {line:?} in {out}");
    }
}

#[test]
fn inspect_accepts_every_string_form() {
    let id = 1165130818468946459u64;
    // The same report whatever the form, whose name the first line shows.
    let read_as = |enc: &str| {
        ok(&["inspect", &id.to_string()]).replacen("(read as dec)", &format!("(read as {enc})"), 1)
    };
    assert!(
        read_as("dec").starts_with(&format!("ID {id} under the twitter layout (read as dec)\n"))
    );
    for enc in ENCODINGS {
        let text = enc.encode(id).to_string();
        assert_eq!(ok(&["inspect", &text]), read_as(enc.name()), "{enc:?}");
        assert_eq!(
            ok(&["inspect", &text, "--from", enc.name()]),
            read_as(enc.name()),
            "{enc:?}"
        );
    }
    assert_eq!(ok(&["inspect", "0x102b604e67b3a21b"]), read_as("hex"));
    assert_eq!(
        ok(&["inspect", "10av09skv78gv", "--from", "base32"]),
        read_as("base32")
    );
    // --from names the form when the shape misleads: "123456" is decimal by shape, hex by request.
    let out = ok(&["inspect", "123456", "--from", "hex"]);
    assert!(out.starts_with("ID 1193046 "), "{out}");
}

#[test]
fn inspect_never_chooses_between_readings() {
    // 16 digits: decimal, or the hex that `encode … hex` wrote? Both named, and how to choose.
    let e = fails(&["inspect", "1970065334000000"], "PARSE", 1);
    assert!(
        e.contains("dec 1970065334000000") && e.contains("hex 1832972002764259328"),
        "{e}"
    );
    assert!(e.contains("--from dec or --from hex"), "{e}");
    let e = fails(&["inspect", "1700000000000"], "PARSE", 1);
    assert!(
        e.contains("base32 1405123083739594752") && e.contains("--from base32"),
        "{e}"
    );
    let e = fails(&["inspect", "12345678912"], "PARSE", 1);
    assert!(
        e.contains("base58 7690564481429305") && e.contains("--from base58"),
        "{e}"
    );
    let out = ok(&["inspect", "1970065334000000", "--from", "hex"]);
    assert!(
        out.starts_with("ID 1832972002764259328 under the twitter layout (read as hex)"),
        "{out}"
    );
    let out = ok(&["inspect", "1970065334000000", "--from", "dec"]);
    assert!(
        out.starts_with("ID 1970065334000000 under the twitter layout (read as dec)"),
        "{out}"
    );
    // Neighbouring widths and 11 digits with a 0 are plain decimal.
    assert!(ok(&["inspect", "12345678910"]).contains("(read as dec)"));
}

#[test]
fn unknown_names_suggest_the_nearest() {
    let e = fails(&["mint", "--layout", "Twitter"], "INVALID_LAYOUT", 1);
    assert!(
        e.contains(
            "unknown layout preset \"Twitter\" (did you mean twitter?); allowed: twitter, discord"
        ),
        "{e}"
    );
    let e = fails(&["inspect", "1", "--from", "bas58"], "INVALID_ARGUMENT", 1);
    assert!(e.contains("\"bas58\" (did you mean base58?)"), "{e}");
    let e = fails(&["layout", "--order", "ts|sq|node"], "INVALID_LAYOUT", 1);
    assert!(e.contains("did you mean ts|seq|node?"), "{e}");
    let e = fails(&["mint", "--layout", "uuid"], "INVALID_LAYOUT", 1);
    assert!(
        !e.contains("did you mean") && e.contains("allowed: twitter"),
        "{e}"
    );
}

#[test]
fn inspect_several_and_layouts() {
    let out = ok(&[
        "inspect",
        "175928847299117063",
        "1212161512043450368",
        "--layout",
        "discord",
    ]);
    assert_eq!(out.matches("under the discord layout").count(), 2);
    // Discord's documented example: 175928847299117063 is 2016-04-30T11:18:25.796Z.
    assert!(out.contains("2016-04-30T11:18:25.796Z"), "{out}");
    let out = ok(&["inspect", "1640700422954100128", "--layout", "decimal"]);
    assert!(out.contains("2021-12-28T14:07:02.954100100Z"), "{out}");
    assert!(out.contains("host       28"), "{out}");
    let id = Layout::hazelcast(3)
        .unwrap()
        .compose(1000, 5, 0)
        .unwrap()
        .to_string();
    let out = ok(&[
        "inspect",
        &id,
        "--layout",
        "hazelcast",
        "--node-id-offset",
        "3",
    ]);
    assert!(out.contains("node ID 2 + node-id-offset 3"), "{out}");
}

#[test]
fn inspect_errors() {
    let e = fails(&["inspect", "3hs0qtU4AFc"], "PARSE", 1);
    assert!(e.contains("position 3"), "{e}");
    assert!(
        e.contains("\n  3hs0qtU4AFc\n     ^\n"),
        "caret under the bad character: {e}"
    );
    fails(&["inspect", "zz"], "PARSE", 1);
    fails(&["inspect", "18446744073709551616"], "PARSE", 1);
    fails(
        &["inspect", "12", "--from", "base64"],
        "INVALID_ARGUMENT",
        1,
    );
    let e = fails(&["inspect", "18446744073709551615"], "INVALID_ID", 1);
    assert!(e.contains("--layout"), "{e}");
    fails(&["inspect"], "INVALID_ARGUMENT", 2);
    fails(&["inspect", "1", "--bogus"], "INVALID_ARGUMENT", 2);
}

#[test]
fn layout_report() {
    let out = ok(&["layout"]);
    assert!(out.contains("Layout twitter: 63 of 64 bits used"), "{out}");
    assert!(
        out.contains("0TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTNNNNNNNNNNSSSSSSSSSSSS"),
        "{out}"
    );
    assert!(out.contains("bits 62..22"), "{out}");
    assert!(out.contains("2080-07-10T17:30:30.209Z"), "{out}");
    assert!(out.contains("1,024 (node IDs 0..=1023)"), "{out}");
    assert!(out.contains("4,096 per node"), "{out}");
    assert!(out.contains("4,096,000 per node"), "{out}");
    assert_eq!(ok(&["layout", "--preset", "twitter"]), out);
    assert_eq!(ok(&["layout", "--layout", "twitter"]), out);

    let out = ok(&["layout", "--preset", "sonyflake"]);
    assert!(
        out.contains("TSSSSSSSSNNNNNNNNNNNNNNNN\n"),
        "sequence above node: {out}"
    );
    assert!(out.contains("25,600 per node"), "{out}");
    assert!(out.contains("10 ms"), "{out}");

    let out = ok(&[
        "layout",
        "--preset",
        "snowcast",
        "--epoch-ms",
        "1704067200000",
        "--node-count",
        "1000",
    ]);
    assert!(
        out.contains("1,024 (node IDs 0..=1023)"),
        "rounded up to a power of two: {out}"
    );
    assert!(out.contains("8,192 per node"), "{out}");

    let out = ok(&["layout", "--preset", "decimal"]);
    assert!(out.contains("100 (host IDs 0..=99)"), "{out}");
    assert!(out.contains("10,000,000 per host"), "{out}");
}

#[test]
fn layout_custom_fields() {
    let out = ok(&[
        "layout",
        "--timestamp-bits",
        "40",
        "--node-bits",
        "8",
        "--sequence-bits",
        "15",
        "--order",
        "ts|seq|node",
        "--tick-ns",
        "2000000",
        "--epoch-ms",
        "1704067200000",
    ]);
    assert!(out.contains("custom (twitter with changes)"), "{out}");
    assert!(out.contains("TSSSSSSSSSSSSSSSNNNNNNNN\n"), "{out}");
    assert!(out.contains("2 ms"), "{out}");
    assert!(out.contains("16,384,000 per node"), "{out}");
    assert!(out.contains("2024-01-01T00:00:00.000Z"), "{out}");
}

#[test]
fn layout_errors_name_the_field() {
    let e = fails(&["layout", "--timestamp-bits", "50"], "INVALID_LAYOUT", 1);
    assert!(
        e.contains("timestamp_bits + node_bits + sequence_bits"),
        "{e}"
    );
    let e = fails(&["layout", "--tick-ns", "0"], "INVALID_LAYOUT", 1);
    assert!(e.contains("tick_ns"), "{e}");
    let e = fails(&["layout", "--node-bits", "64"], "INVALID_LAYOUT", 1);
    assert!(e.contains("node_bits"), "{e}");
    let e = fails(&["layout", "--order", "sideways"], "INVALID_LAYOUT", 1);
    assert!(e.contains("order"), "{e}");
    let e = fails(
        &[
            "layout",
            "--preset",
            "snowcast",
            "--epoch-ms",
            "0",
            "--node-count",
            "64",
        ],
        "INVALID_LAYOUT",
        1,
    );
    assert!(e.contains("node_count"), "{e}");
    let e = fails(
        &[
            "layout",
            "--preset",
            "hazelcast",
            "--node-id-offset",
            "65536",
        ],
        "INVALID_LAYOUT",
        1,
    );
    assert!(e.contains("node_id_offset"), "{e}");
    fails(
        &["layout", "--preset", "decimal", "--node-bits", "3"],
        "INVALID_ARGUMENT",
        2,
    );
    fails(&["layout", "twitter"], "INVALID_ARGUMENT", 2);
    fails(&["layout", "--timestamp-bits", "x"], "INVALID_ARGUMENT", 2);
    fails(&["layout", "--use-sign-bit=yes"], "INVALID_ARGUMENT", 2);
}

#[test]
fn help_teaches() {
    for args in [vec![], vec!["--help"], vec!["-h"], vec!["help"]] {
        let out = ok(&args);
        assert!(out.contains("EXAMPLES"), "{out}");
        assert!(out.contains("snowmint mint -n 5 --node 7"), "{out}");
        assert!(out.contains("snowmint inspect"), "{out}");
        assert!(out.contains("snowmint layout"), "{out}");
    }
    let mint = ok(&["mint", "--help"]);
    assert_eq!(ok(&["help", "mint"]), mint);
    assert!(
        mint.contains("--format") && mint.contains("SNOWMINT_NODE_ID"),
        "{mint}"
    );
    let inspect = ok(&["inspect", "-h"]);
    assert!(inspect.contains("--from"), "{inspect}");
    let layout = ok(&["layout", "--help"]);
    for preset in [
        "twitter",
        "discord",
        "instagram",
        "sonyflake",
        "hazelcast",
        "snowcast",
        "js53",
        "decimal",
    ] {
        assert!(
            layout.contains(&format!("\n  {preset} ")),
            "layout help lists {preset}: {layout}"
        );
    }
    assert!(
        layout.contains("--timestamp-bits") && layout.contains("--node-count"),
        "{layout}"
    );
    assert!(ok(&["--version"]).starts_with("snowmint "));
    fails(&["frobnicate"], "INVALID_ARGUMENT", 2);
}

#[test]
fn broken_pipe_is_quiet() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["mint", "-n", "200000", "--node", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn inspect_reads_standard_input() {
    use std::io::Write;
    use std::process::Stdio;
    let minted = ok(&["mint", "-n", "3", "--node", "5", "--format", "base58"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["inspect", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(minted.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.matches("under the twitter layout").count(),
        3,
        "{text}"
    );
    assert_eq!(text.matches("node       5 ").count(), 3, "{text}");

    let out = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["inspect", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error[INVALID_ARGUMENT]"));
}

#[test]
fn mint_from_a_state_file_shared_with_other_runs() {
    let dir = std::env::temp_dir().join(format!("snowmint-cli-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("orders.snowmint");
    let path = file.to_str().unwrap();
    // Two runs at the same time on one file, then one more: no ID repeats, each run increasing.
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_snowmint"))
            .args(["mint", "-n", "200000", "--node", "3", "--state-file", path])
            .output()
            .unwrap()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(spawn);
        let b = s.spawn(spawn);
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut all = Vec::new();
    for out in [a, b] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = ids(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(v.len(), 200_000);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        all.extend(v);
    }
    let later = ids(&ok(&[
        "mint",
        "-n",
        "5",
        "--node",
        "3",
        "--state-file",
        path,
    ]));
    assert!(
        later[0] > *all.iter().max().unwrap(),
        "a later run continues after both"
    );
    all.extend(later);
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "duplicate IDs");
    // Decimal layouts work too (their own file).
    let dec = dir.join("decimal");
    let d = ids(&ok(&[
        "mint",
        "-n",
        "3",
        "--layout",
        "decimal",
        "--node",
        "28",
        "--state-file",
        dec.to_str().unwrap(),
    ]));
    assert!(d.iter().all(|id| id % 100 == 28));

    // Another node ID, another layout, a directory, random bytes: STATE_FILE_MISMATCH, status 1.
    let e = fails(
        &["mint", "--node", "4", "--state-file", path],
        "STATE_FILE_MISMATCH",
        1,
    );
    assert!(
        e.contains("made for node ID 3, not 4") && e.contains(path),
        "{e}"
    );
    fails(
        &[
            "mint",
            "--node",
            "3",
            "--layout",
            "discord",
            "--state-file",
            path,
        ],
        "STATE_FILE_MISMATCH",
        1,
    );
    let e = fails(
        &["mint", "--node", "3", "--state-file", dir.to_str().unwrap()],
        "STATE_FILE_MISMATCH",
        1,
    );
    assert!(e.contains("not a regular file"), "{e}");
    let junk = dir.join("junk");
    std::fs::write(&junk, [7u8; 256]).unwrap();
    let e = fails(
        &["mint", "--state-file", junk.to_str().unwrap()],
        "STATE_FILE_MISMATCH",
        1,
    );
    assert!(e.contains("not a snowmint state file"), "{e}");
    std::fs::write(&junk, [7u8; 10]).unwrap();
    let e = fails(
        &["mint", "--state-file", junk.to_str().unwrap()],
        "STATE_FILE_MISMATCH",
        1,
    );
    assert!(e.contains("truncated"), "{e}");
    // A read-only place (root writes anywhere but sysfs).
    let ro = if std::fs::metadata("/proc/self")
        .ok()
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        == Some(0)
    {
        std::path::PathBuf::from("/sys/snowmint-cli-test.state")
    } else {
        let d = dir.join("ro");
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
        d.join("s")
    };
    let e = fails(
        &["mint", "--state-file", ro.to_str().unwrap()],
        "STATE_FILE_MISMATCH",
        1,
    );
    assert!(e.contains("create failed"), "{e}");
    fails(&["mint", "--state-file"], "INVALID_ARGUMENT", 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `serve --listen localhost:0`: a host name is resolved (port 0: any free port), and the first line
/// says where the service listens.
#[test]
fn serve_listens_on_a_host_name() {
    use std::io::BufRead;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["serve", "--listen", "localhost:0", "--node", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let read = std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line);
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    read.unwrap();
    assert!(
        line.starts_with("snowmint serve: listening on http://") && !line.contains(":0 "),
        "{line:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e = fails(
        &["serve", "--listen", "no-such-host.invalid:0", "--node", "3"],
        "INVALID_ARGUMENT",
        2,
    );
    assert!(e.contains("--listen \"no-such-host.invalid:0\""), "{e}");
}

/// Off loopback, `serve` refuses to start unless `--allowed-host` or `--auth-token-file` is given (a page
/// on a name rebound to the address would otherwise be served as the service's own origin).
#[test]
fn serve_off_loopback_needs_allowed_hosts_or_tokens() {
    for listen in ["192.0.2.1:0", "0.0.0.0:0", "[::]:0"] {
        let e = fails(
            &["serve", "--listen", listen, "--node", "3"],
            "INVALID_ARGUMENT",
            2,
        );
        assert!(
            e.contains("--allowed-host")
                && e.contains("--auth-token-file")
                && e.contains("loopback"),
            "{listen}: {e}"
        );
    }
}

/// An unknown command, action or option gets the nearest one the command-line definitions have.
#[test]
fn unknown_words_get_a_did_you_mean() {
    for (args, meant) in [
        (&["mnt"][..], "unknown command \"mnt\" (did you mean mint?)"),
        (
            &["mint", "--nod", "3"],
            "unknown option --nod for 'snowmint mint' (did you mean --node?)",
        ),
        (
            &["sequencer", "shw", "x", "--store", "file:///tmp"],
            "(did you mean show?)",
        ),
        (
            &["lease", "lsit", "--store", "file:///tmp"],
            "(did you mean list?)",
        ),
        (&["range", "nxt", "r"], "(did you mean next?)"),
        (&["opaque", "encdoe", "1"], "(did you mean encode?)"),
        (&["inspect", "1", "--form", "hex"], "(did you mean --from?)"),
    ] {
        let e = fails(args, "INVALID_ARGUMENT", 2);
        assert!(e.contains(meant), "{args:?}: {e}");
    }
    let e = fails(&["frobnicate"], "INVALID_ARGUMENT", 2);
    assert!(!e.contains("did you mean"), "{e}");
    assert!(e.contains("commands: mint, inspect, layout, sequencer, lease, opaque, range, serve, completions, man, help"), "{e}");
}
