//! Conformance: every case of tests/vectors/node_sources.json (SPEC §3.1) through
//! `NodeSource::parse(source)?.resolve(source, &layout)`. The core's runner (core/tests/vectors.rs)
//! cannot see this crate, so this file runs here and records as runtime `rust` in the same
//! `$SNOWMINT_CONFORMANCE_DIR/rust.txt` (one line per case: file, name, pass|fail).
//!
//! One test function: the environment is process-wide, so the cases run one after another, each with
//! its variables set (or removed) and the previous values restored afterwards.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use snowmint::Layout;
use snowmint_coord::source::NodeSource;

const FILE: &str = "node_sources.json";
type Obj = Map<String, Value>;

fn vectors_dir() -> PathBuf {
    match std::env::var_os("SNOWMINT_VECTORS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors"),
    }
}

fn text<'a>(c: &'a Obj, k: &str) -> Result<&'a str, String> {
    c.get(k)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{k:?} is missing or not a string"))
}

fn dec(c: &Obj, k: &str) -> Result<u64, String> {
    text(c, k)?
        .parse()
        .map_err(|_| format!("{k:?} is not a u64 decimal string"))
}

fn only(c: &Obj, allowed: &[&str]) -> Result<(), String> {
    match c.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("unknown field {k:?}")),
        None => Ok(()),
    }
}

fn layout_of(v: &Value) -> Result<Layout, String> {
    let o = v.as_object().ok_or("\"layout\" is not an object")?;
    let name = text(o, "preset")?;
    let layout = match name {
        "hazelcast" => {
            only(o, &["preset", "node_id_offset"])?;
            Layout::hazelcast(if o.contains_key("node_id_offset") {
                dec(o, "node_id_offset")?
            } else {
                0
            })
        }
        "snowcast" => {
            only(o, &["preset", "epoch_ms", "node_count"])?;
            Layout::snowcast(dec(o, "epoch_ms")?, dec(o, "node_count")?)
        }
        _ => {
            only(o, &["preset"])?;
            Layout::preset(name)
        }
    };
    layout.map_err(|e| format!("the case's layout is invalid: {e}"))
}

/// Sets (or removes, for null) the case's variables; returns what to restore.
fn set_env(c: &Obj) -> Result<Vec<(String, Option<std::ffi::OsString>)>, String> {
    let Some(env) = c.get("env") else {
        return Ok(Vec::new());
    };
    let env = env.as_object().ok_or("\"env\" is not an object")?;
    let mut saved = Vec::new();
    for (k, v) in env {
        saved.push((k.clone(), std::env::var_os(k)));
        match v {
            Value::String(s) => std::env::set_var(k, s),
            Value::Null => std::env::remove_var(k),
            _ => return Err(format!("env {k:?}: expected a string or null")),
        }
    }
    Ok(saved)
}

fn restore_env(saved: Vec<(String, Option<std::ffi::OsString>)>) {
    for (k, v) in saved.into_iter().rev() {
        match v {
            Some(v) => std::env::set_var(&k, v),
            None => std::env::remove_var(&k),
        }
    }
}

fn run(c: &Obj) -> Result<(), String> {
    only(c, &["name", "layout", "source", "env", "node_id", "error"])?;
    let layout = layout_of(c.get("layout").ok_or("no \"layout\"")?)?;
    let source = text(c, "source")?;
    let want = match (c.contains_key("node_id"), c.contains_key("error")) {
        (true, false) => Ok(dec(c, "node_id")?),
        (false, true) => Err(text(c, "error")?),
        _ => return Err("expected exactly one of node_id, error".into()),
    };
    let saved = set_env(c);
    let got = saved
        .as_ref()
        .map_err(Clone::clone)
        .map(|_| NodeSource::parse(source).and_then(|s| s.resolve(source, &layout)));
    if let Ok(saved) = saved {
        restore_env(saved);
    }
    match (got?, want) {
        (Ok(n), Ok(w)) if n == w => Ok(()),
        (Err(e), Err(w)) if e.code().as_str() == w => {
            if e.to_string().contains(&format!("{source:?}")) {
                Ok(())
            } else {
                Err(format!("the error does not name the source: {e}"))
            }
        }
        (got, want) => Err(format!(
            "expected {}, got {}",
            match want {
                Ok(n) => format!("node {n}"),
                Err(w) => format!("error {w}"),
            },
            match got {
                Ok(n) => format!("node {n}"),
                Err(e) => format!("error {} ({e})", e.code().as_str()),
            }
        )),
    }
}

#[test]
fn node_sources_vectors() {
    let path = vectors_dir().join(FILE);
    let raw = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let top: Value = serde_json::from_str(&raw).expect("node_sources.json is not JSON");
    let top = top.as_object().expect("the file is not an object");
    assert!(
        top.keys().all(|k| k == "cases"),
        "unknown top-level field in {FILE}"
    );
    let cases = top["cases"].as_array().expect("\"cases\" is not an array");
    assert!(!cases.is_empty(), "{FILE} has no case");
    let mut record = std::env::var_os("SNOWMINT_CONFORMANCE_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| {
            let d = PathBuf::from(d);
            std::fs::create_dir_all(&d).expect("cannot create the conformance directory");
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(d.join("rust.txt"))
                .expect("cannot open rust.txt")
        });
    let mut names = BTreeSet::new();
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let c = c
            .as_object()
            .unwrap_or_else(|| panic!("case {i} is not an object"));
        let name = text(c, "name").unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert!(
            names.insert(name.to_owned()),
            "duplicate case name {name:?}"
        );
        let result = run(c);
        if let Some(f) = &mut record {
            let line = format!(
                "{FILE}\t{name}\t{}\n",
                if result.is_ok() { "pass" } else { "fail" }
            );
            f.write_all(line.as_bytes()).expect("cannot write rust.txt");
        }
        if let Err(e) = result {
            failures.push(format!("{name}: {e}"));
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "vectors: {FILE:<20} {:>4} cases ran, {} passed, {} failed",
        cases.len(),
        cases.len() - failures.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}
