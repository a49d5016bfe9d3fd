//! Helpers of the CLI's integration tests.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The commands with a man page of their own.
pub const COMMANDS: [&str; 8] = [
    "mint",
    "inspect",
    "layout",
    "sequencer",
    "opaque",
    "serve",
    "completions",
    "man",
];

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
