//! Helpers of the CLI's integration tests.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The commands, as the command-line definitions (`src/spec.rs`) give them to the generated bash
/// completion script (what it completes after `snowmint`, in the definitions' order; the hidden
/// `help` left out). Every other list of commands (help, man pages, README) is checked against it.
pub fn commands() -> Vec<String> {
    let out = run_with(&["completions", "bash"], "");
    assert!(out.status.success());
    let script = String::from_utf8(out.stdout).unwrap();
    let mut lines = script.lines().map(str::trim);
    lines
        .find(|l| *l == "snowmint)")
        .expect("the script's case of the top level");
    let opts = lines
        .find_map(|l| l.strip_prefix("opts=\""))
        .expect("its options")
        .trim_end_matches('"');
    let found: Vec<String> = opts
        .split_whitespace()
        .filter(|w| !w.starts_with('-') && *w != "help")
        .map(str::to_string)
        .collect();
    assert!(found.len() >= 9, "{found:?}");
    found
}

/// Runs `cmd` with `input` on its standard input and collects its output.
pub fn pipe(cmd: &mut Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program runs");
    // A program that exits without reading its input is no failure here.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

/// Runs the built `snowmint` with `args` and `stdin`, without the environment variables it reads.
pub fn run_with(args: &[&str], stdin: &str) -> Output {
    pipe(
        Command::new(env!("CARGO_BIN_EXE_snowmint"))
            .args(args)
            .env_remove("SNOWMINT_NODE_ID")
            .env_remove("SNOWMINT_STORE"),
        stdin.as_bytes(),
    )
}

/// What a successful run of `args` says on stderr: nothing, but for the defaults it takes (`tests/hints.rs`
/// checks the notes themselves): `mint` without a node ID warns, `inspect` without a layout says so.
pub fn expected_notes(args: &[&str]) -> String {
    let has = |names: &[&str]| {
        args.iter().any(|a| {
            names
                .iter()
                .any(|n| a == n || a.starts_with(&format!("{n}=")))
        })
    };
    if has(&["--help", "-h"]) {
        return String::new();
    }
    match args.first() {
        Some(&"mint") if !has(&["--node"]) => {
            "warning: no --node and no $SNOWMINT_NODE_ID, so node 0".to_string()
        }
        Some(&"inspect")
            if !has(&["--layout", "--preset", "-l"])
                && !args
                    .iter()
                    .any(|a| a.starts_with("--") && a.ends_with("-bits") || *a == "--epoch-ms") =>
        {
            "note: no --layout given, so the twitter layout is assumed".to_string()
        }
        _ => String::new(),
    }
}

/// Whether `stderr` is exactly the one-line note `want` starts (or empty when `want` is).
pub fn only_notes(stderr: &str, want: &str) -> bool {
    stderr.starts_with(want) && stderr.lines().count() == usize::from(!want.is_empty())
}
