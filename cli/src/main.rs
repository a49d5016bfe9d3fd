//! `snowmint`: mint, inspect and design Snowflake-family 64-bit IDs from the command line.
//!
//! A thin shell over the `snowmint` core: it parses the command line, calls the core, and prints. Every
//! layout check, the generation rule, decoding and the string forms are the core's.

mod args;
mod error;
mod help;
mod json;
mod layout_args;
mod opaque;
mod range;
mod render;
mod sequencer;
mod serve;
mod spec;

use std::io::{self, Write};
use std::process::ExitCode;

use snowmint::{
    parse_any_form, Clock, Encoding, Error, ErrorCode, Generator, Options, Policy, SharedGenerator,
    SystemClock,
};

use error::CliError;
use snowmint_coord::{NodeGenerator, NodeSource};
use spec::{Cmd, Parsed};

/// The node ID when `--node` is not given.
const NODE_ENV: &str = "SNOWMINT_NODE_ID";

/// Where the node ID came from when neither `--node` nor $SNOWMINT_NODE_ID gave it.
const DEFAULT_NODE: &str = "the default node 0";

/// What `mint` says on stderr when it falls back to node 0 (neither `--node` nor $SNOWMINT_NODE_ID).
const NO_NODE_WARNING: &str = "warning: no --node and no $SNOWMINT_NODE_ID, so node 0: processes minting as the same node at the same time make the same IDs; give each its own --node N (or SNOWMINT_NODE_ID=N), or --node 0 to say node 0 on purpose";

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = run(argv, &mut out).and_then(|()| out.flush().map_err(Failure::Io));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `snowmint mint -n 1000000 | head`: the reader left; that is not an error.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Io(e)) => {
            eprintln!("error[IO]: cannot write the output: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Cli(e)) => {
            // Flush what was minted before the failure, then report.
            let _ = out.flush();
            eprint!("{}", e.render());
            ExitCode::from(e.exit as u8)
        }
    }
}

#[derive(Debug)]
enum Failure {
    Cli(CliError),
    Io(io::Error),
}

impl From<CliError> for Failure {
    fn from(e: CliError) -> Self {
        Failure::Cli(e)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Cli(CliError::core(e))
    }
}

fn run(argv: Vec<String>, out: &mut impl Write) -> Result<(), Failure> {
    let command = match spec::parse(&argv)? {
        Parsed::Print(text) => {
            out.write_all(text.as_bytes())?;
            return Ok(());
        }
        Parsed::Run(command) => command,
    };
    match command {
        None => {
            out.write_all(help::MAIN.as_bytes())?;
            Ok(())
        }
        Some(Cmd::Mint(a)) => mint(a, out),
        Some(Cmd::Inspect(a)) => inspect(a, out),
        Some(Cmd::Layout(a)) => layout(a, out),
        Some(Cmd::Sequencer(a)) => sequencer::run(a, out),
        Some(Cmd::Lease(a)) => sequencer::lease(a, out),
        Some(Cmd::Opaque(a)) => opaque::run(a, out),
        Some(Cmd::Range(a)) => range::run(a, out),
        Some(Cmd::Serve(a)) => serve::run(a),
        Some(Cmd::Completions(a)) => spec::completions(&a.shell, out),
        Some(Cmd::Man(a)) => spec::man(&a, out),
        Some(Cmd::Help(a)) => {
            let topic = a.topic.as_deref().unwrap_or("");
            let Some(text) = help::text(topic) else {
                return Err(CliError::usage(format!("no help on {topic:?}"), "").into());
            };
            out.write_all(text.as_bytes())?;
            Ok(())
        }
    }
}

/// `snowmint mint [-n N] [--node SOURCE] [--layout L …] [--format F] [--state-file PATH] [--json]`
fn mint(args: spec::Mint, out: &mut impl Write) -> Result<(), Failure> {
    let count = args.count.unwrap_or(1);
    let (json, stats) = (args.json, args.stats);
    let (node, state_file) = (args.node, args.state_file);
    let format = match &args.format {
        Some(v) => encoding_named(v, false)?.unwrap_or(Encoding::Decimal),
        None => Encoding::Decimal,
    };
    let layout_args = args.layout;
    if count == 0 {
        return Err(CliError::usage("-n is 0; mint at least one ID", "mint").into());
    }
    let chosen = layout_args.build("mint")?;
    let layout = chosen.layout;
    let (node, source) = match node {
        Some(text) => match text.trim().parse::<u64>() {
            Ok(n) => (n, "--node"),
            Err(_) => {
                let parsed =
                    NodeSource::parse(&text).map_err(|e| sequencer::malformed(e, "mint"))?;
                if let NodeSource::Lease(_) = parsed {
                    // With --state-file, the lease is shared by every process of the host on the file.
                    let given = layout_args.given().then_some(layout);
                    let counts = mint_leased(
                        &text,
                        state_file.as_deref(),
                        given,
                        count,
                        (format, json),
                        out,
                    )?;
                    return report_stats(stats, counts);
                }
                (
                    parsed
                        .resolve(&text, &layout)
                        .map_err(sequencer::cli_error)?,
                    "--node",
                )
            }
        },
        None => match std::env::var(NODE_ENV) {
            Ok(text) => (args::parse_number(NODE_ENV, text.trim(), "mint")?, NODE_ENV),
            Err(_) => (0, DEFAULT_NODE),
        },
    };
    let chunk = layout.ids_per_tick().clamp(1, 4096) as usize;
    if let Some(path) = state_file {
        // The state word lives in the file, shared with every process on it: runs of this command and
        // the service's own workers continue after each other's last ID, running ahead of the clock as
        // any generator may (the default max_ahead, waiting past it).
        let gen =
            SharedGenerator::open_file(&path, layout, node, Options::default()).map_err(|e| {
                let hint = match e.code() {
                    ErrorCode::StateFileMismatch => format!("state file {path}"),
                    _ => format!("node ID from {source}"),
                };
                CliError::core(e).with(hint)
            })?;
        emit(count, chunk, (format, json), out, |buf| {
            Ok(gen.next_ids(buf)?)
        })?;
        warn_default_node(source);
        gen.flush()?;
        return report_stats(stats, gen.stats());
    }
    // No running ahead of the clock: a tick's sequence used up waits for the next tick. With the wait
    // for the last ID's tick below, a following run with the same node never repeats an ID.
    let options = Options {
        policy: Policy::Wait,
        max_ahead_ns: 0,
        random_start_seed: None,
    };
    let mut gen = Generator::new(layout, node, options).map_err(|e| {
        let hint = format!("node ID from {source}");
        CliError::core(e).with(hint)
    })?;
    let last = emit(count, chunk, (format, json), out, |buf| {
        Ok(gen.next_ids(buf)?)
    })?;
    warn_default_node(source);
    if let Some(last) = last {
        wait_out_tick(&layout, last);
    }
    report_stats(stats, gen.stats())
}

/// Not silent: two processes that both forgot --node mint the same IDs (said once the IDs are out, so
/// that a command that fails says only why).
fn warn_default_node(source: &str) {
    if source == DEFAULT_NODE {
        eprintln!("{NO_NODE_WARNING}");
    }
}

/// `--stats`: the generator's counters as one JSON line on standard error (standard output keeps the
/// IDs alone).
fn report_stats(wanted: bool, stats: snowmint::Stats) -> Result<(), Failure> {
    if wanted {
        writeln!(io::stderr(), "{}", json::stats(&stats))?;
    }
    Ok(())
}

/// How minted IDs are printed: the string form, and whether as JSON lines.
type Style = (Encoding, bool);

/// Prints one minted ID on its own line.
fn write_id(out: &mut impl Write, id: u64, (format, json): Style) -> io::Result<()> {
    if json {
        out.write_all(json::minted(id, format).as_bytes())?;
    } else {
        out.write_all(format.encode(id).as_str().as_bytes())?;
    }
    out.write_all(b"\n")
}

/// Mints `count` IDs in batches of at most `chunk` with `fill` and prints them; returns the last one.
fn emit(
    count: u64,
    chunk: usize,
    format: Style,
    out: &mut impl Write,
    mut fill: impl FnMut(&mut [u64]) -> Result<(), Failure>,
) -> Result<Option<u64>, Failure> {
    let mut buf = vec![0u64; chunk];
    let mut remaining = count;
    let mut last = None;
    while remaining > 0 {
        let n = (remaining.min(chunk as u64)) as usize;
        fill(&mut buf[..n])?;
        for &id in &buf[..n] {
            write_id(out, id, format)?;
        }
        last = Some(buf[n - 1]);
        remaining -= n as u64;
    }
    out.flush()?;
    Ok(last)
}

/// Mints under a lease: held while minting, released (its reservation lowered to the last ID) at exit.
/// The generator may borrow ahead of the clock as usual (`max_ahead`: 15 s; on the embedded store its
/// bound, 1 s), and before exiting mint waits out the tick of its last ID, as its help promises: nothing
/// it minted lies ahead of the clock once it has exited, whatever happens to the store afterwards.
/// (With `--state-file` the file carries the state instead, as for a fixed node ID.)
///
/// `layout` is the one the layout options gave; `None` (no layout option): the sequencer's stored layout
/// (SPEC §3.3: attaching adopts the stored configuration), or the default layout for a `default` that
/// does not exist yet.
fn mint_leased(
    source: &str,
    state_file: Option<&str>,
    layout: Option<snowmint::Layout>,
    count: u64,
    format: Style,
    out: &mut impl Write,
) -> Result<snowmint::Stats, Failure> {
    let options = Options {
        policy: Policy::Wait,
        ..Options::default()
    };
    let layout = match layout {
        Some(l) => l,
        None => snowmint_coord::sequencer::stored_layout(source)
            .map_err(sequencer::cli_error)?
            .unwrap_or_else(snowmint::Layout::twitter),
    };
    let gen = match state_file {
        Some(path) => NodeGenerator::open_shared(source, layout, options, path),
        None => NodeGenerator::open(source, layout, options),
    }
    .map_err(sequencer::cli_error)?;
    let chunk = layout.ids_per_tick().clamp(1, 4096) as usize;
    let last = emit(count, chunk, format, out, |buf| {
        gen.next_ids(buf)
            .map_err(|e| sequencer::cli_error(e).into())
    })?;
    gen.release().map_err(sequencer::cli_error)?;
    if let (Some(last), None) = (last, state_file) {
        wait_out_tick(&layout, last);
    }
    Ok(gen.stats())
}

/// Sleeps until the clock has left the tick of `last`, so that the next process minting for the same node
/// starts in a later tick. Bounded by the default `max_ahead` and a tick (how far ahead a generator may
/// have minted): a clock stepping back meanwhile does not keep us here.
fn wait_out_tick(layout: &snowmint::Layout, last: u64) {
    let Ok(decoded) = layout.decode(last) else {
        return;
    };
    let end_ns = layout.epoch_ns().saturating_add(
        decoded
            .timestamp_ticks
            .saturating_add(1)
            .saturating_mul(layout.tick_ns()),
    );
    let most = Options::default()
        .max_ahead_ns
        .saturating_add(layout.tick_ns());
    for _ in 0..100 {
        let Ok(now) = SystemClock.now_ns() else {
            return;
        };
        if now >= end_ns {
            return;
        }
        snowmint::sleep_ns((end_ns - now).min(most));
    }
}

/// An encoding by name; `any` (allowed when `any_ok`) gives `None`.
fn encoding_named(name: &str, any_ok: bool) -> Result<Option<Encoding>, CliError> {
    // The core's message: the name as given, the nearest allowed one, the allowed ones.
    let named = if any_ok {
        Encoding::from_name_or_any(name)
    } else {
        Encoding::from_name(name).map(Some)
    };
    named.map_err(|e| {
        let e = CliError::core(e);
        if any_ok {
            e.with("or 'any': tell the form by the string's shape")
        } else {
            e
        }
    })
}

/// `snowmint inspect ID… [--layout L …] [--from ENC] [--json]`
fn inspect(args: spec::Inspect, out: &mut impl Write) -> Result<(), Failure> {
    let mut ids = args.ids;
    let json = args.json;
    let from = match &args.from {
        Some(v) => encoding_named(v, true)?,
        None => None,
    };
    let layout_args = args.layout;
    let chosen = layout_args.build("inspect")?;
    if ids.iter().any(|s| s == "-") {
        // `snowmint mint -n 3 | snowmint inspect -`: IDs from stdin, separated by white space.
        let mut input = String::new();
        io::Read::read_to_string(&mut io::stdin(), &mut input)?;
        let from_stdin: Vec<String> = input.split_whitespace().map(str::to_string).collect();
        ids = ids
            .into_iter()
            .flat_map(|s| {
                if s == "-" {
                    from_stdin.clone()
                } else {
                    vec![s]
                }
            })
            .collect();
        if ids.is_empty() {
            return Err(CliError::usage("no ID on standard input", "inspect").into());
        }
    }
    let now_ms = SystemClock.now_ns().ok().map(|ns| ns / 1_000_000);
    // Said before the first ID decoded (a command that fails says only why).
    let mut assumed_note = (!layout_args.given()).then(|| {
        format!(
            "note: no --layout given, so the {} layout is assumed",
            chosen.label
        )
    });
    let assumed = assumed_note.is_some();
    // At most this many IDs get a note on their time (a long list from stdin stays readable).
    let mut doubts_left = 3u32;
    for (i, text) in ids.iter().enumerate() {
        let (form, id) = match from {
            Some(enc) => enc.parse(text).map(|id| (enc, id)),
            None => parse_any_form(text),
        }
        .map_err(|e| parse_failure(e, text))?;
        let decoded = chosen.layout.decode(id).map_err(|e| {
            CliError::core(e).with(format!(
                "is it an ID of another layout? this is {}; pick one with --layout",
                chosen.label
            ))
        })?;
        if let Some(note) = assumed_note.take() {
            eprintln!("{note}");
        }
        if let Some(doubt) = now_ms.and_then(|now| render::doubt(&chosen, assumed, &decoded, now)) {
            match doubts_left {
                0 => {}
                1 => eprintln!("{doubt}\n(the times of further IDs are not checked)"),
                _ => eprintln!("{doubt}"),
            }
            doubts_left = doubts_left.saturating_sub(1);
        }
        if json {
            writeln!(out, "{}", json::inspected(&chosen, text, form, &decoded))?;
            continue;
        }
        if i > 0 {
            writeln!(out)?;
        }
        out.write_all(render::inspect(&chosen, &decoded, form, now_ms).as_bytes())?;
    }
    Ok(())
}

/// A parse error with a caret under the bad character.
fn parse_failure(err: Error, text: &str) -> CliError {
    let mut e = CliError::core(err);
    if let Error::AmbiguousId { other, .. } = err {
        e = e.with(format!(
            "choose with --from dec or --from {} (the string forms are told apart by shape)",
            other.name()
        ));
    }
    if let Error::Parse { kind, position, .. } = err {
        use snowmint::ParseErrorKind as K;
        if kind == K::InvalidCharacter {
            let pad: String = text.chars().take(position).map(|_| ' ').collect();
            e = e.with(text.to_string()).with(format!("{pad}^"));
        }
        if kind == K::Ambiguous || kind == K::InvalidCharacter {
            e = e.with("name the form with --from dec|hex|base32|base58 if it is not recognised");
        }
    }
    e
}

/// `snowmint layout [--layout L | fields …] [--json]`
fn layout(args: spec::LayoutCmd, out: &mut impl Write) -> Result<(), Failure> {
    let (layout_args, json) = (args.layout, args.json);
    let chosen = layout_args.build("layout")?;
    if json {
        writeln!(out, "{}", json::layout(&chosen))?;
        return Ok(());
    }
    let now_ms = SystemClock.now_ns().ok().map(|ns| ns / 1_000_000);
    out.write_all(render::layout(&chosen, now_ms).as_bytes())?;
    Ok(())
}
