//! `snowmint opaque encode|decode`: the same tokens as the core, round trips through standard input,
//! key files raw and hex, and each bad input with its code and exit status.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use snowmint::{Layout, Opaque};

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run snowmint");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn key_file(name: &str, contents: &[u8]) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("opaque-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_string_lossy().into_owned()
}

const KEY: [u8; 16] = *b"0123456789abcdef";

#[test]
fn encode_decode_match_the_core_with_raw_and_hex_keys() {
    let raw = key_file("raw.key", &KEY);
    let hex: String = KEY.iter().map(|b| format!("{b:02x}")).collect();
    let hex = key_file("hex.key", format!("  {hex}\n").as_bytes());
    let core = Opaque::for_layout(&KEY, &Layout::preset("js53").unwrap()).unwrap();
    let ids = [0u64, 1, 123_456_789, (1 << 53) - 1];
    let want: Vec<String> = ids
        .iter()
        .map(|&i| core.encode(i).unwrap().to_string())
        .collect();
    for file in [&raw, &hex] {
        // --from dec: a 16-digit js53 ID is also 16 hex digits, which `any` refuses to guess.
        let args: Vec<String> = [
            "opaque",
            "encode",
            "--key-file",
            file,
            "--layout",
            "js53",
            "--from",
            "dec",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain(ids.iter().map(u64::to_string))
        .collect();
        let out = run(&args.iter().map(String::as_str).collect::<Vec<_>>(), "");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .collect::<Vec<_>>(),
            want
        );
    }
    // Tokens in base58 on stdin decode back to the IDs.
    let out = run(
        &[
            "opaque",
            "encode",
            "-",
            "--key-file",
            &raw,
            "--format",
            "base58",
        ],
        "1\n2 3\n",
    );
    assert!(out.status.success());
    let tokens = String::from_utf8(out.stdout).unwrap();
    assert_eq!(tokens.lines().count(), 3);
    assert!(tokens.lines().all(|t| t.len() == 11));
    let out = run(
        &[
            "opaque",
            "decode",
            "-",
            "--key-file",
            &raw,
            "--from",
            "base58",
        ],
        &tokens,
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "1\n2\n3\n");
}

fn fails(args: &[&str], code: &str, status: i32) -> String {
    let out = run(args, "");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(status), "{args:?}: {err}");
    assert!(
        err.starts_with(&format!("error[{code}]")),
        "{args:?}: {err}"
    );
    err
}

#[test]
fn bad_input_has_codes() {
    let raw = key_file("good.key", &KEY);
    let short = key_file("short.key", b"0011223344");
    let err = fails(
        &["opaque", "encode", "1", "--key-file", &short],
        "INVALID_ARGUMENT",
        1,
    );
    assert!(err.contains("16 raw bytes or 32 hex digits"), "{err}");
    fails(
        &["opaque", "encode", "1", "--key-file", "/nonexistent/key"],
        "INVALID_ARGUMENT",
        1,
    );
    let err = fails(
        &[
            "opaque",
            "encode",
            "9223372036854775808",
            "--key-file",
            &raw,
        ],
        "INVALID_ID",
        1,
    );
    assert!(err.contains("63 bits"), "{err}");
    fails(
        &[
            "opaque",
            "decode",
            "9007199254740992",
            "--key-file",
            &raw,
            "--layout",
            "js53",
            "--from",
            "dec",
        ],
        "INVALID_ID",
        1,
    );
    fails(&["opaque", "encode", "1"], "INVALID_ARGUMENT", 2);
    // `any` never guesses between dec and hex.
    let err = fails(
        &["opaque", "decode", "9007199254740992", "--key-file", &raw],
        "PARSE",
        1,
    );
    assert!(err.contains("dec 9007199254740992 or as hex"), "{err}");
    fails(
        &["opaque", "scramble", "1", "--key-file", &raw],
        "INVALID_ARGUMENT",
        2,
    );
    fails(&["opaque", "--key-file", &raw], "INVALID_ARGUMENT", 2);
    fails(
        &[
            "opaque",
            "encode",
            "12x",
            "--key-file",
            &raw,
            "--from",
            "dec",
        ],
        "PARSE",
        1,
    );
    let narrow = [
        "opaque",
        "encode",
        "1",
        "--key-file",
        &raw,
        "--timestamp-bits",
        "20",
        "--node-bits",
        "2",
        "--sequence-bits",
        "8",
        "--epoch-ms",
        "0",
    ];
    let err = fails(&narrow, "INVALID_ARGUMENT", 1);
    assert!(err.contains("32 to 64 bits"), "{err}");
    let help = run(&["help", "opaque"], "");
    assert!(String::from_utf8(help.stdout)
        .unwrap()
        .contains("not authentication"));
}

/// `--json`: one object per value and line, the input as given, the ID and the token as decimal
/// strings, and what comes out in the `--format` form; decode reads back what encode printed.
#[test]
fn json_output_names_id_and_token() {
    let file = key_file("json.key", &KEY);
    let core = Opaque::for_layout(&KEY, &Layout::twitter()).unwrap();
    let id = 1_212_161_512_043_450_368u64;
    let token = core.encode(id).unwrap();
    let out = run(
        &[
            "opaque",
            "encode",
            &id.to_string(),
            "--key-file",
            &file,
            "-f",
            "hex",
            "--json",
        ],
        "",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hex = snowmint::Encoding::Hex.encode(token);
    assert_eq!(
        v,
        serde_json::json!({
            "input": id.to_string(),
            "id": id.to_string(),
            "token": token.to_string(),
            "text": hex.as_str(),
        })
    );
    let out = run(
        &[
            "opaque",
            "decode",
            hex.as_str(),
            "--key-file",
            &file,
            "--json",
        ],
        "",
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["id"].as_str(), v["text"].as_str()),
        (Some(&*id.to_string()), Some(&*id.to_string()))
    );
    assert_eq!(v["token"], token.to_string());
}
