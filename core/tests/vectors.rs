//! The conformance runner: every case of every file in `tests/vectors/*.json` (format in
//! `tests/vectors/README.md`) through the core's public API.
//!
//! Rejects unknown fields, duplicate case names, empty files and files it does not know; reports every
//! failing case (not only the first) and how many cases each file ran. Generation cases run twice: with
//! the plain [`Generator`] and with the lock-free [`SharedGenerator`], both through `next_id_with` /
//! `next_ids_with` with a scripted clock and real sleeps.
//!
//! ```text
//! cargo test -p snowmint --test vectors -- --nocapture
//! ```
#![cfg(feature = "std")]

use std::cell::Cell;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use snowmint::{
    parse_any, sleep_ns, Clock, ClockUnit, Encoding, Error, Generator, Layout, LayoutConfig,
    Opaque, Options, Order, Policy, SharedGenerator, ENCODINGS,
};

type Obj = Map<String, Value>;
/// `Err` is a failed check or a malformed vector.
type Check<T = ()> = Result<T, String>;

/// `tests/vectors/`, or the directory in `SNOWMINT_VECTORS_DIR` (to try the runner on other files).
fn vectors_dir() -> PathBuf {
    match std::env::var_os("SNOWMINT_VECTORS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors"),
    }
}

// ---- reading the JSON strictly -------------------------------------------------------------------

/// Checks `obj` has every `required` key, and no key outside `required` and `optional`.
fn keys(obj: &Obj, required: &[&str], optional: &[&str]) -> Check {
    for k in required {
        if !obj.contains_key(*k) {
            return Err(format!("missing field {k:?}"));
        }
    }
    for k in obj.keys() {
        if !required.contains(&k.as_str()) && !optional.contains(&k.as_str()) {
            return Err(format!("unknown field {k:?}"));
        }
    }
    Ok(())
}

fn obj<'a>(v: &'a Value, what: &str) -> Check<&'a Obj> {
    v.as_object()
        .ok_or_else(|| format!("{what} is not an object"))
}

fn text<'a>(o: &'a Obj, k: &str) -> Check<&'a str> {
    o.get(k)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{k:?} is not a string"))
}

/// A u64 written as a decimal string (digits only).
fn dec(o: &Obj, k: &str) -> Check<u64> {
    let s = text(o, k)?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{k:?} is not a decimal string: {s:?}"));
    }
    s.parse::<u64>()
        .map_err(|e| format!("{k:?} = {s:?} is not a u64: {e}"))
}

/// A small integer written as a JSON number.
fn num(o: &Obj, k: &str) -> Check<u64> {
    o.get(k)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{k:?} is not a non-negative integer number"))
}

fn load(path: &Path) -> Check<Vec<Obj>> {
    let raw = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let top: Value = serde_json::from_str(&raw).map_err(|e| format!("not JSON: {e}"))?;
    let top = obj(&top, "the file")?;
    keys(top, &["cases"], &[])?;
    let cases = top["cases"].as_array().ok_or("\"cases\" is not an array")?;
    if cases.is_empty() {
        return Err("the file has no case".into());
    }
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let c = obj(c, &format!("case {i}"))?;
        let name = text(c, "name").map_err(|e| format!("case {i}: {e}"))?;
        if !names.insert(name.to_owned()) {
            return Err(format!("duplicate case name {name:?}"));
        }
        out.push(c.clone());
    }
    Ok(out)
}

fn expect_code(got: &Error, want: &str) -> Check {
    if got.code().as_str() == want {
        Ok(())
    } else {
        Err(format!(
            "expected error {want}, got {} ({got})",
            got.code().as_str()
        ))
    }
}

fn unexpected<T: std::fmt::Debug>(what: &str, got: T) -> String {
    format!("expected {what}, got {got:?}")
}

// ---- layouts ---------------------------------------------------------------------------------------

/// Builds the layout a vector describes. The outer `Err` is a malformed vector; the inner result is
/// what the core says.
fn layout_of(v: &Value) -> Check<snowmint::Result<Layout>> {
    let o = obj(v, "\"layout\"")?;
    if let Some(preset) = o.get("preset") {
        let name = preset.as_str().ok_or("\"preset\" is not a string")?;
        return Ok(match name {
            "hazelcast" => {
                keys(o, &["preset"], &["node_id_offset"])?;
                let offset = if o.contains_key("node_id_offset") {
                    dec(o, "node_id_offset")?
                } else {
                    0
                };
                Layout::hazelcast(offset)
            }
            "snowcast" => {
                keys(o, &["preset", "epoch_ms", "node_count"], &[])?;
                Layout::snowcast(dec(o, "epoch_ms")?, dec(o, "node_count")?)
            }
            _ => {
                keys(o, &["preset"], &[])?;
                Layout::preset(name)
            }
        });
    }
    keys(
        o,
        &[
            "timestamp_bits",
            "node_bits",
            "sequence_bits",
            "order",
            "tick_ns",
            "epoch_ms",
        ],
        &["node_id_offset", "use_sign_bit"],
    )?;
    let bits = |k: &str| -> Check<u32> {
        u32::try_from(num(o, k)?).map_err(|_| format!("{k:?} does not fit u32"))
    };
    let order = match Order::from_name(text(o, "order")?) {
        Ok(order) => order,
        Err(e) => return Ok(Err(e)),
    };
    let use_sign_bit = match o.get("use_sign_bit") {
        None => false,
        Some(v) => v.as_bool().ok_or("\"use_sign_bit\" is not a boolean")?,
    };
    let node_id_offset = if o.contains_key("node_id_offset") {
        dec(o, "node_id_offset")?
    } else {
        0
    };
    Ok(Layout::new(LayoutConfig {
        timestamp_bits: bits("timestamp_bits")?,
        node_bits: bits("node_bits")?,
        sequence_bits: bits("sequence_bits")?,
        order,
        tick_ns: dec(o, "tick_ns")?,
        epoch_ms: dec(o, "epoch_ms")?,
        node_id_offset,
        use_sign_bit,
        node_split_bits: 0,
    }))
}

fn valid_layout(c: &Obj) -> Check<Layout> {
    layout_of(&c["layout"])?.map_err(|e| format!("layout rejected: {e}"))
}

fn run_layout(c: &Obj) -> Check {
    let built = layout_of(&c["layout"])?;
    if c.contains_key("expect") {
        keys(c, &["name", "layout", "expect"], &[])?;
        let l = built.map_err(|e| unexpected("a layout", e))?;
        let e = obj(&c["expect"], "\"expect\"")?;
        keys(
            e,
            &[
                "total_bits",
                "node_count",
                "ids_per_tick",
                "max_node_id",
                "max_tick",
                "lifespan_end_ms",
                "lifespan_end_iso",
                "clock_unit",
            ],
            &[],
        )?;
        let checks: [(&str, String, String); 8] = [
            (
                "total_bits",
                num(e, "total_bits")?.to_string(),
                l.total_bits().to_string(),
            ),
            (
                "node_count",
                dec(e, "node_count")?.to_string(),
                l.node_count().to_string(),
            ),
            (
                "ids_per_tick",
                dec(e, "ids_per_tick")?.to_string(),
                l.ids_per_tick().to_string(),
            ),
            (
                "max_node_id",
                dec(e, "max_node_id")?.to_string(),
                l.max_node_id().to_string(),
            ),
            (
                "max_tick",
                dec(e, "max_tick")?.to_string(),
                l.max_tick().to_string(),
            ),
            (
                "lifespan_end_ms",
                dec(e, "lifespan_end_ms")?.to_string(),
                l.lifespan_end_ms().to_string(),
            ),
            (
                "lifespan_end_iso",
                text(e, "lifespan_end_iso")?.to_owned(),
                l.lifespan_end().to_buf().as_str().to_owned(),
            ),
            (
                "clock_unit",
                text(e, "clock_unit")?.to_owned(),
                l.clock_unit().name().to_owned(),
            ),
        ];
        for (k, want, got) in checks {
            if want != got {
                return Err(format!("{k}: expected {want}, got {got}"));
            }
        }
        Ok(())
    } else {
        keys(c, &["name", "layout", "error", "field"], &[])?;
        let err = match built {
            Ok(l) => return Err(unexpected("an error", l)),
            Err(e) => e,
        };
        expect_code(&err, text(c, "error")?)?;
        let field = text(c, "field")?;
        let message = err.to_string();
        if !message.contains(field) {
            return Err(format!(
                "error message {message:?} does not name the field {field:?}"
            ));
        }
        Ok(())
    }
}

// ---- generation ------------------------------------------------------------------------------------

/// An injected clock: the step's readings in order, then the last one for ever (a frozen clock).
struct Scripted {
    readings: Vec<u64>,
    unit: ClockUnit,
    next: Cell<usize>,
    /// Nanoseconds the generator asked to sleep during this step.
    slept: Cell<u64>,
}

/// The corpus keeps all waits of a case within 60 ms (README); more means the generator waits for a
/// clock that cannot move (e.g. it misses a frozen clock), so the runner fails the case. Past the budget
/// the runner stops really sleeping, so such a bug cannot hang the test.
const SLEEP_BUDGET_NS: u64 = 100_000_000;

impl Scripted {
    fn sleep(&self, ns: u64) {
        let total = self.slept.get().saturating_add(ns);
        self.slept.set(total);
        if total <= SLEEP_BUDGET_NS {
            sleep_ns(ns);
        }
    }
}

impl Clock for Scripted {
    fn now_ns(&self) -> snowmint::Result<u64> {
        let i = self.next.get();
        self.next.set(i + 1);
        self.unit
            .to_ns(self.readings[i.min(self.readings.len() - 1)])
    }
}

enum AnyGenerator {
    Plain(Generator),
    Shared(SharedGenerator),
}

impl AnyGenerator {
    fn next(&mut self, clock: &Scripted) -> snowmint::Result<u64> {
        match self {
            AnyGenerator::Plain(g) => g.next_id_with(clock, |ns| clock.sleep(ns)),
            AnyGenerator::Shared(g) => g.next_id_with(clock, |ns| clock.sleep(ns)),
        }
    }

    fn batch(&mut self, clock: &Scripted, out: &mut [u64]) -> snowmint::Result<()> {
        match self {
            AnyGenerator::Plain(g) => g.next_ids_with(clock, |ns| clock.sleep(ns), out),
            AnyGenerator::Shared(g) => g.next_ids_with(clock, |ns| clock.sleep(ns), out),
        }
    }

    fn state(&self) -> u64 {
        match self {
            AnyGenerator::Plain(g) => g.state(),
            AnyGenerator::Shared(g) => g.state(),
        }
    }

    fn restore(&mut self, state: u64) {
        match self {
            AnyGenerator::Plain(g) => g.restore(state),
            AnyGenerator::Shared(g) => g.restore(state),
        }
    }
}

fn options(c: &Obj) -> Check<Options> {
    let mut o = Options::default();
    if c.contains_key("policy") {
        o.policy = Policy::from_name(text(c, "policy")?).map_err(|e| format!("policy: {e}"))?;
    }
    if c.contains_key("max_ahead_ms") {
        o.max_ahead_ns = dec(c, "max_ahead_ms")?
            .checked_mul(1_000_000)
            .ok_or("max_ahead_ms too large")?;
    }
    if c.contains_key("random_seed") {
        o.random_start_seed = Some(dec(c, "random_seed")?);
    }
    Ok(o)
}

fn run_generate(c: &Obj) -> Check {
    let optional = ["policy", "max_ahead_ms", "random_seed"];
    let built = layout_of(&c["layout"])?;
    if c.contains_key("error") {
        keys(c, &["name", "layout", "node_id", "error"], &optional)?;
        let node_id = dec(c, "node_id")?;
        let opts = options(c)?;
        let result = built.and_then(|l| Generator::new(l, node_id, opts).map(|_| ()));
        let shared = layout_of(&c["layout"])?
            .and_then(|l| SharedGenerator::new(l, node_id, opts).map(|_| ()));
        for (which, r) in [("Generator", result), ("SharedGenerator", shared)] {
            match r {
                Ok(()) => return Err(format!("{which}: expected an error, got a generator")),
                Err(e) => {
                    expect_code(&e, text(c, "error")?).map_err(|m| format!("{which}: {m}"))?
                }
            }
        }
        return Ok(());
    }
    keys(c, &["name", "layout", "node_id", "steps"], &optional)?;
    let layout = built.map_err(|e| unexpected("a layout", e))?;
    let node_id = dec(c, "node_id")?;
    let opts = options(c)?;
    let steps = c["steps"].as_array().ok_or("\"steps\" is not an array")?;
    if steps.is_empty() {
        return Err("no steps".into());
    }
    if cfg!(miri) && minted_by(steps) > MIRI_MAX_IDS {
        return Err(SKIPPED_UNDER_MIRI.into());
    }
    let plain = Generator::new(layout, node_id, opts).map_err(|e| unexpected("a generator", e))?;
    let shared =
        SharedGenerator::new(layout, node_id, opts).map_err(|e| unexpected("a generator", e))?;
    for (which, mut gen) in [
        ("Generator", AnyGenerator::Plain(plain)),
        ("SharedGenerator", AnyGenerator::Shared(shared)),
    ] {
        let mut previous: Option<u64> = None;
        let mut slept = 0u64;
        for (i, step) in steps.iter().enumerate() {
            slept += run_step(&layout, &mut gen, step, &mut previous)
                .map_err(|m| format!("{which}, step {i}: {m}"))?;
        }
        if slept > SLEEP_BUDGET_NS {
            return Err(format!(
                "{which}: asked to sleep {slept} ns in all, more than the {SLEEP_BUDGET_NS} ns budget"
            ));
        }
    }
    Ok(())
}

/// Under Miri, which interprets every step, the generation cases that mint more IDs than this are
/// skipped (reported as such; the native run of the same test runs every case).
const MIRI_MAX_IDS: u64 = 300;
const SKIPPED_UNDER_MIRI: &str = "skipped under Miri (too many IDs)";

/// How many IDs a case's steps ask for.
fn minted_by(steps: &[Value]) -> u64 {
    steps
        .iter()
        .map(|s| s.get("count").and_then(Value::as_u64).unwrap_or(1))
        .sum()
}

/// Runs one step; returns the nanoseconds the generator asked to sleep.
fn run_step(
    layout: &Layout,
    gen: &mut AnyGenerator,
    step: &Value,
    previous: &mut Option<u64>,
) -> Check<u64> {
    let s = obj(step, "a step")?;
    match s.get("op").and_then(Value::as_str) {
        Some("state") => {
            keys(s, &["op", "state"], &[])?;
            let (want, got) = (dec(s, "state")?, gen.state());
            return if want == got {
                Ok(0)
            } else {
                Err(format!("state(): expected {want}, got {got}"))
            };
        }
        Some("restore") => {
            keys(s, &["op", "state"], &[])?;
            gen.restore(dec(s, "state")?);
            return Ok(0);
        }
        _ => {}
    }
    let outcome = ["ids", "first", "error"]
        .into_iter()
        .find(|k| s.contains_key(*k))
        .ok_or("a step needs \"ids\", \"first\"/\"last\" or \"error\"")?;
    match outcome {
        "ids" => keys(s, &["clock", "op", "count", "ids"], &[])?,
        "first" => keys(s, &["clock", "op", "count", "first", "last"], &[])?,
        _ => keys(s, &["clock", "op", "count", "error"], &[])?,
    }
    let readings = s["clock"]
        .as_array()
        .ok_or("\"clock\" is not an array")?
        .iter()
        .map(|r| {
            let s = r.as_str().ok_or("a clock reading is not a string")?;
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("bad clock reading {s:?}"));
            }
            s.parse::<u64>()
                .map_err(|e| format!("clock reading {s:?}: {e}"))
        })
        .collect::<Check<Vec<u64>>>()?;
    if readings.is_empty() {
        return Err("\"clock\" is empty".into());
    }
    let clock = Scripted {
        readings,
        unit: layout.clock_unit(),
        next: Cell::new(0),
        slept: Cell::new(0),
    };
    let count = usize::try_from(num(s, "count")?).map_err(|_| "count too large")?;
    if count == 0 {
        return Err("count is 0".into());
    }
    let op = text(s, "op")?;
    let result: snowmint::Result<Vec<u64>> = match op {
        "next" if outcome == "error" => gen.next(&clock).map(|id| vec![id]),
        "next" => (0..count).map(|_| gen.next(&clock)).collect(),
        "batch" => {
            let mut out = vec![0u64; count];
            gen.batch(&clock, &mut out).map(|()| out)
        }
        _ => return Err(format!("unknown op {op:?}")),
    };
    if outcome == "error" {
        return match result {
            Ok(ids) => Err(unexpected(&format!("error {}", text(s, "error")?), ids)),
            Err(e) => expect_code(&e, text(s, "error")?).map(|()| clock.slept.get()),
        };
    }
    let ids = result.map_err(|e| format!("expected IDs, got error {} ({e})", e.code().as_str()))?;
    if ids.len() != count {
        return Err(format!("expected {count} IDs, got {}", ids.len()));
    }
    for &id in &ids {
        if previous.is_some_and(|p| id <= p) {
            return Err(format!(
                "IDs do not strictly increase: {id} after {previous:?}"
            ));
        }
        *previous = Some(id);
    }
    if outcome == "ids" {
        let want = s["ids"]
            .as_array()
            .ok_or("\"ids\" is not an array")?
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| "an id is not a string".to_string())
                    .and_then(|t| t.parse::<u64>().map_err(|e| format!("id {t:?}: {e}")))
            })
            .collect::<Check<Vec<u64>>>()?;
        if want.len() != count {
            return Err(format!(
                "\"ids\" lists {} IDs but count is {count}",
                want.len()
            ));
        }
        if want != ids {
            return Err(format!("expected IDs {want:?}, got {ids:?}"));
        }
    } else {
        let (first, last) = (dec(s, "first")?, dec(s, "last")?);
        if ids[0] != first || ids[count - 1] != last {
            return Err(format!(
                "expected first {first} last {last}, got first {} last {}",
                ids[0],
                ids[count - 1]
            ));
        }
    }
    Ok(clock.slept.get())
}

// ---- clock readings --------------------------------------------------------------------------------

fn run_clock_reading(c: &Obj) -> Check {
    let outcome = if c.contains_key("ns") { "ns" } else { "error" };
    keys(c, &["name", "layout", "reading", outcome], &[])?;
    let layout = valid_layout(c)?;
    let reading = match &c["reading"] {
        Value::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            other => return Err(format!("unknown reading string {other:?}")),
        },
        Value::Number(n) => n.as_f64().ok_or("reading is not a number")?,
        other => return Err(format!("bad reading {other}")),
    };
    let got = layout.clock_unit().f64_to_ns(reading);
    if outcome == "ns" {
        let want = dec(c, "ns")?;
        match got {
            Ok(ns) if ns == want => Ok(()),
            other => Err(unexpected(&format!("{want} ns"), other)),
        }
    } else {
        match got {
            Ok(ns) => Err(unexpected("an error", ns)),
            Err(e) => expect_code(&e, text(c, "error")?),
        }
    }
}

// ---- decoding and composing ------------------------------------------------------------------------

fn run_decode(c: &Obj) -> Check {
    let outcome = if c.contains_key("expect") {
        "expect"
    } else {
        "error"
    };
    keys(c, &["name", "layout", "id", outcome], &[])?;
    let layout = valid_layout(c)?;
    let got = layout.decode(dec(c, "id")?);
    if outcome == "error" {
        return match got {
            Ok(d) => Err(unexpected("an error", d)),
            Err(e) => expect_code(&e, text(c, "error")?),
        };
    }
    let d = got.map_err(|e| unexpected("a decoding", e))?;
    let e = obj(&c["expect"], "\"expect\"")?;
    keys(
        e,
        &[
            "timestamp_ticks",
            "unix_ms",
            "sub_ms_ns",
            "node",
            "sequence",
            "iso",
        ],
        &[],
    )?;
    let checks: [(&str, String, String); 6] = [
        (
            "timestamp_ticks",
            dec(e, "timestamp_ticks")?.to_string(),
            d.timestamp_ticks.to_string(),
        ),
        (
            "unix_ms",
            dec(e, "unix_ms")?.to_string(),
            d.unix_ms.to_string(),
        ),
        (
            "sub_ms_ns",
            num(e, "sub_ms_ns")?.to_string(),
            d.sub_ms_ns.to_string(),
        ),
        ("node", dec(e, "node")?.to_string(), d.node.to_string()),
        (
            "sequence",
            dec(e, "sequence")?.to_string(),
            d.sequence.to_string(),
        ),
        (
            "iso",
            text(e, "iso")?.to_owned(),
            d.iso().to_buf().as_str().to_owned(),
        ),
    ];
    for (k, want, got) in checks {
        if want != got {
            return Err(format!("{k}: expected {want}, got {got}"));
        }
    }
    Ok(())
}

fn run_compose(c: &Obj) -> Check {
    let outcome = if c.contains_key("id") { "id" } else { "error" };
    let got = match text(c, "op")? {
        "compose" => {
            keys(
                c,
                &[
                    "name",
                    "layout",
                    "op",
                    "timestamp_ticks",
                    "node",
                    "sequence",
                    outcome,
                ],
                &[],
            )?;
            valid_layout(c)?.compose(
                dec(c, "timestamp_ticks")?,
                dec(c, "node")?,
                dec(c, "sequence")?,
            )
        }
        "min_id_at" => {
            keys(c, &["name", "layout", "op", "unix_ms", outcome], &[])?;
            valid_layout(c)?.min_id_at_ms(dec(c, "unix_ms")?)
        }
        op => return Err(format!("unknown op {op:?}")),
    };
    if outcome == "id" {
        let want = dec(c, "id")?;
        match got {
            Ok(id) if id == want => Ok(()),
            other => Err(unexpected(&want.to_string(), other)),
        }
    } else {
        match got {
            Ok(id) => Err(unexpected("an error", id)),
            Err(e) => expect_code(&e, text(c, "error")?),
        }
    }
}

// ---- string forms ----------------------------------------------------------------------------------

/// Encoded forms seen so far, to check that fixed-width forms sort like the numbers.
type Encoded = Vec<(u64, [String; 4])>;

fn run_encoding(c: &Obj, seen: &mut Encoded) -> Check {
    match text(c, "op")? {
        "encode" => {
            keys(
                c,
                &["name", "op", "id", "dec", "hex", "base32", "base58"],
                &[],
            )?;
            let id = dec(c, "id")?;
            let mut forms: [String; 4] = Default::default();
            for (i, enc) in ENCODINGS.into_iter().enumerate() {
                let want = text(c, enc.name())?;
                let got = enc.encode(id);
                if got.as_str() != want {
                    return Err(format!(
                        "{}: expected {want:?}, got {:?}",
                        enc.name(),
                        got.as_str()
                    ));
                }
                match enc.parse(want) {
                    Ok(back) if back == id => {}
                    other => return Err(format!("{}: {want:?} parses to {other:?}", enc.name())),
                }
                forms[i] = want.to_owned();
            }
            seen.push((id, forms));
            Ok(())
        }
        "parse" => {
            let outcome = if c.contains_key("id") { "id" } else { "error" };
            if outcome == "id" {
                keys(c, &["name", "op", "encoding", "input", "id"], &[])?;
            } else {
                keys(
                    c,
                    &["name", "op", "encoding", "input", "error", "position"],
                    &["readings"],
                )?;
            }
            let input = text(c, "input")?;
            let got = match text(c, "encoding")? {
                "any" => parse_any(input),
                name => Encoding::from_name(name)
                    .map_err(|e| format!("encoding: {e}"))?
                    .parse(input),
            };
            if outcome == "id" {
                let want = dec(c, "id")?;
                return match got {
                    Ok(id) if id == want => Ok(()),
                    other => Err(unexpected(&want.to_string(), other)),
                };
            }
            let err = match got {
                Ok(id) => return Err(unexpected("an error", id)),
                Err(e) => e,
            };
            expect_code(&err, text(c, "error")?)?;
            let want = num(c, "position")?;
            if let Some(readings) = c.get("readings") {
                // Ambiguous: the message names every reading (form and value) and nothing chose.
                let readings = obj(readings, "readings")?;
                let message = err.to_string();
                for (form, value) in readings {
                    let value = value.as_str().ok_or("a reading is not a string")?;
                    if !message.contains(&format!("{form} {value}")) {
                        return Err(format!("message {message:?} does not name {form} {value}"));
                    }
                }
                return match err {
                    Error::AmbiguousId {
                        decimal,
                        other,
                        other_value,
                    } if want == 0
                        && readings.len() == 2
                        && readings.get("dec").and_then(Value::as_str)
                            == Some(decimal.to_string().as_str())
                        && readings.get(other.name()).and_then(Value::as_str)
                            == Some(other_value.to_string().as_str()) =>
                    {
                        Ok(())
                    }
                    other => Err(unexpected("an ambiguous-ID error", other)),
                };
            }
            match err {
                Error::Parse { position, .. } if position as u64 == want => Ok(()),
                Error::Parse { position, .. } => {
                    Err(format!("expected position {want}, got {position} ({err})"))
                }
                other => Err(unexpected("a parse error", other)),
            }
        }
        op => Err(format!("unknown op {op:?}")),
    }
}

fn check_sort_order(seen: &Encoded) -> Check {
    let mut by_id = seen.clone();
    by_id.sort_by_key(|(id, _)| *id);
    for (i, enc) in ENCODINGS.into_iter().enumerate().skip(1) {
        let mut by_text = by_id.clone();
        by_text.sort_by(|a, b| a.1[i].cmp(&b.1[i]));
        if by_text.iter().map(|e| e.0).ne(by_id.iter().map(|e| e.0)) {
            return Err(format!(
                "{} strings do not sort like the numbers",
                enc.name()
            ));
        }
    }
    Ok(())
}

// ---- the record of cases run -------------------------------------------------------------------------

/// When `SNOWMINT_CONFORMANCE_DIR` is set, one line `file.json<TAB>case name<TAB>pass|fail` per case run
/// is appended to `$SNOWMINT_CONFORMANCE_DIR/rust.txt` (checked by `scripts/check-conformance.py`).
struct Record(Option<std::fs::File>);

impl Record {
    fn from_env() -> Record {
        let Some(dir) = std::env::var_os("SNOWMINT_CONFORMANCE_DIR").filter(|d| !d.is_empty())
        else {
            return Record(None);
        };
        let dir = PathBuf::from(dir);
        let path = dir.join("rust.txt");
        let file = std::fs::create_dir_all(&dir)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
            })
            .unwrap_or_else(|e| panic!("cannot append to {}: {e}", path.display()));
        Record(Some(file))
    }

    fn case(&mut self, file: &str, name: &str, passed: bool) {
        if let Some(f) = &mut self.0 {
            let line = format!("{file}\t{name}\t{}\n", if passed { "pass" } else { "fail" });
            f.write_all(line.as_bytes())
                .unwrap_or_else(|e| panic!("cannot write the conformance record: {e}"));
        }
    }
}

// ---- opaque IDs --------------------------------------------------------------------------------------

/// Bytes from lowercase hex (the vectors' keys).
fn hex_bytes(o: &Obj, k: &str) -> Check<Vec<u8>> {
    let s = text(o, k)?;
    if s.len() % 2 != 0 {
        return Err(format!("{k:?} has an odd number of hex digits"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("{k:?}: {e}")))
        .collect()
}

fn dec_list(o: &Obj, k: &str) -> Check<Vec<u64>> {
    let list = o[k]
        .as_array()
        .ok_or_else(|| format!("{k:?} is not an array"))?;
    list.iter()
        .map(|v| {
            let mut one = Obj::new();
            one.insert(k.to_owned(), v.clone());
            dec(&one, k)
        })
        .collect()
}

fn run_opaque(c: &Obj) -> Check {
    let key = hex_bytes(c, "key")?;
    let layout = valid_layout(c)?;
    let built = Opaque::for_layout(&key, &layout);
    if !c.contains_key("bits") {
        keys(c, &["name", "layout", "key", "error"], &[])?;
        return match built {
            Ok(o) => Err(unexpected("an error", o)),
            Err(e) => expect_code(&e, text(c, "error")?),
        };
    }
    let opaque = built.map_err(|e| unexpected("an Opaque", e))?;
    if u64::from(opaque.bits()) != num(c, "bits")? {
        return Err(unexpected(
            &format!("{} bits", num(c, "bits")?),
            opaque.bits(),
        ));
    }
    if c.contains_key("op") {
        keys(
            c,
            &["name", "layout", "key", "bits", "op", "input", "error"],
            &[],
        )?;
        let input = dec(c, "input")?;
        let got = match text(c, "op")? {
            "encode" => opaque.encode(input),
            "decode" => opaque.decode(input),
            other => return Err(format!("unknown op {other:?}")),
        };
        return match got {
            Ok(v) => Err(unexpected("an error", v)),
            Err(e) => expect_code(&e, text(c, "error")?),
        };
    }
    keys(c, &["name", "layout", "key", "bits", "ids", "tokens"], &[])?;
    let (ids, tokens) = (dec_list(c, "ids")?, dec_list(c, "tokens")?);
    if ids.len() != tokens.len() || ids.is_empty() {
        return Err("\"ids\" and \"tokens\" differ in length or are empty".into());
    }
    for (&id, &token) in ids.iter().zip(&tokens) {
        let got = opaque
            .encode(id)
            .map_err(|e| format!("encode({id}): {e}"))?;
        if got != token {
            return Err(format!("encode({id}) = {got}, expected {token}"));
        }
        let back = opaque
            .decode(token)
            .map_err(|e| format!("decode({token}): {e}"))?;
        if back != id {
            return Err(format!("decode({token}) = {back}, expected {id}"));
        }
    }
    // The batch forms give the same answers.
    let mut batch = ids.clone();
    opaque
        .encode_in_place(&mut batch)
        .map_err(|e| e.to_string())?;
    if batch != tokens {
        return Err("encode_in_place differs from encode".into());
    }
    opaque
        .decode_in_place(&mut batch)
        .map_err(|e| e.to_string())?;
    if batch != ids {
        return Err("decode_in_place differs from decode".into());
    }
    Ok(())
}

// ---- the test ----------------------------------------------------------------------------------------

const FILES: [&str; 7] = [
    "layouts.json",
    "generate.json",
    "clock_readings.json",
    "decode.json",
    "compose.json",
    "encodings.json",
    "opaque.json",
];

/// Files whose runner needs more than the core: node sources (SPEC §3.1) are parsed by `snowmint-coord`,
/// so coord/tests/node_sources.rs runs them (and records them as `rust` too).
const RUN_ELSEWHERE: [&str; 1] = ["node_sources.json"];

#[test]
fn conformance_vectors() {
    let dir = vectors_dir();
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    found.sort();
    let mut failures: Vec<String> = Vec::new();
    for f in FILES {
        if !found.iter().any(|n| n == f) {
            failures.push(format!("{f}: missing"));
        }
    }
    let mut report = String::new();
    let mut total = 0;
    let mut skipped = 0;
    let mut record = Record::from_env();
    for file in &found {
        if RUN_ELSEWHERE.contains(&file.as_str()) {
            continue;
        }
        let cases = match load(&dir.join(file)) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{file}: {e}"));
                continue;
            }
        };
        let mut seen = Encoded::new();
        let mut failed = 0;
        let mut file_skipped = 0;
        for c in &cases {
            let result = match file.as_str() {
                "layouts.json" => run_layout(c),
                "generate.json" => run_generate(c),
                "clock_readings.json" => run_clock_reading(c),
                "decode.json" => run_decode(c),
                "compose.json" => run_compose(c),
                "encodings.json" => run_encoding(c, &mut seen),
                "opaque.json" => run_opaque(c),
                _ => Err("no runner knows this file".to_owned()),
            };
            let name = c["name"].as_str().unwrap_or("?");
            if matches!(&result, Err(e) if e == SKIPPED_UNDER_MIRI) {
                skipped += 1;
                file_skipped += 1;
                continue;
            }
            record.case(file, name, result.is_ok());
            if let Err(e) = result {
                failed += 1;
                failures.push(format!("{file}: {name}: {e}"));
            }
        }
        if file == "encodings.json" {
            if let Err(e) = check_sort_order(&seen) {
                failures.push(format!("{file}: {e}"));
            }
        }
        total += cases.len();
        report += &format!(
            "vectors: {file:<20} {:>4} cases ran, {} passed, {failed} failed\n",
            cases.len() - file_skipped,
            cases.len() - file_skipped - failed
        );
    }
    report += &format!(
        "vectors: {total} cases in {} files, {} failures{}\n",
        found.len(),
        failures.len(),
        if skipped > 0 {
            format!(", {skipped} generation cases skipped under Miri")
        } else {
            String::new()
        }
    );
    // Written to the real stderr (not the captured one) so the counts show in every `cargo test` run.
    let _ = std::io::stderr().write_all(report.as_bytes());
    if !failures.is_empty() {
        let shown: Vec<&str> = failures.iter().take(60).map(String::as_str).collect();
        panic!(
            "{} conformance failures{}:\n  {}",
            failures.len(),
            if failures.len() > 60 {
                " (first 60)"
            } else {
                ""
            },
            shown.join("\n  ")
        );
    }
}
