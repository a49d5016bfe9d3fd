//! `snowmint sequencer create|show|list|destroy`: named sequencers in a store (SPEC §3.3).

use std::io::Write;
use std::sync::Arc;

use snowmint::IsoTime;
use snowmint_coord::sequencer::layout_from_text;
use snowmint_coord::source::{open_store, parse_store_url};
use snowmint_coord::{Sequencer, Store, SystemTime, Time};

use crate::args::{Args, Item};
use crate::error::CliError;
use crate::help;
use crate::layout_args::LayoutArgs;
use crate::Failure;

/// A coordination error as the CLI reports it (same code, exit status 1).
pub fn cli_error(e: snowmint_coord::Error) -> CliError {
    CliError::rejected(e.code(), e.message())
}

/// A malformed node source or store URL on the command line (exit status 2, like any usage error).
pub fn malformed(e: snowmint_coord::Error, command: &str) -> CliError {
    let mut c = CliError::usage(e.message(), command);
    c.code = e.code();
    c
}

/// A sequencer's layout for people: the preset it equals (`twitter (v1;ts=41;…)`), else its text; a
/// text this version cannot read says so.
fn describe_layout(text: &str) -> String {
    if layout_from_text(text).is_err() {
        return format!("{text} (not readable by this version of snowmint)");
    }
    let preset = snowmint::PRESET_NAMES.iter().find(|n| {
        snowmint::Layout::preset(n).is_ok_and(|l| snowmint_coord::layout_text(&l) == text)
    });
    match preset {
        Some(name) => format!("{name} ({text})"),
        None => text.to_string(),
    }
}

pub fn run(argv: Vec<String>, out: &mut impl Write) -> Result<(), Failure> {
    let mut args = Args::new(argv, "sequencer");
    let mut positionals = Vec::new();
    let mut store_url: Option<String> = None;
    let mut nodes: Option<u64> = None;
    let mut layout_args = LayoutArgs::default();
    while let Some(item) = args.next_item()? {
        match item {
            Item::Flag { name, inline } => match name.as_str() {
                "-h" | "--help" => {
                    out.write_all(help::SEQUENCER.as_bytes())?;
                    return Ok(());
                }
                "--store" => store_url = Some(args.value(&name, inline)?),
                "--nodes" => nodes = Some(args.number(&name, inline)?),
                _ => {
                    if !layout_args.take(&mut args, &name, inline)? {
                        return Err(args.unknown(&name).into());
                    }
                }
            },
            Item::Positional(p) => positionals.push(p),
        }
    }
    let mut pos = positionals.into_iter();
    let Some(action) = pos.next() else {
        return Err(
            CliError::usage("give an action: create, show, list or destroy", "sequencer").into(),
        );
    };
    let name = pos.next();
    if let Some(extra) = pos.next() {
        return Err(CliError::usage(format!("unexpected argument {extra:?}"), "sequencer").into());
    }
    let store_url = store_url
        .or_else(|| std::env::var("SNOWMINT_STORE").ok())
        .ok_or_else(|| CliError::usage("give the store with --store URL (file:///DIR, etcd://…, postgres://…) or $SNOWMINT_STORE", "sequencer"))?;
    if let Some(n) = &name {
        snowmint_coord::sequencer::check_name(n).map_err(|e| malformed(e, "sequencer"))?;
    }
    let need_name = |name: Option<String>| {
        name.ok_or_else(|| {
            CliError::usage(format!("'sequencer {action}' needs a NAME"), "sequencer")
        })
    };
    let url = parse_store_url(&store_url).map_err(|e| malformed(e, "sequencer"))?;
    let store: Arc<dyn Store> = open_store(&url).map_err(cli_error)?;
    match action.as_str() {
        "create" => {
            let name = need_name(name)?;
            let layout = layout_args.build("sequencer")?.layout;
            let nodes = nodes.unwrap_or(layout.node_count());
            let seq = Sequencer::create(store.clone(), &name, layout, nodes).map_err(cli_error)?;
            let r = seq.record();
            writeln!(
                out,
                "sequencer {} in {}: {} nodes, incarnation {}",
                r.name,
                store.describe(),
                r.config.nodes,
                r.incarnation
            )?;
            writeln!(out, "  layout {}", describe_layout(&r.config.layout))?;
        }
        "show" => {
            let name = need_name(name)?;
            let now_ms = SystemTime.unix_ns() / 1_000_000;
            match store.sequencer(&name).map_err(cli_error)? {
                Some(r) => {
                    writeln!(out, "sequencer {} in {}", r.name, store.describe())?;
                    writeln!(out, "  nodes        {}", r.config.nodes)?;
                    writeln!(out, "  incarnation  {}", r.incarnation)?;
                    writeln!(out, "  created      {}", IsoTime::from_unix_ms(r.created_unix_ms))?;
                    writeln!(out, "  layout       {}", describe_layout(&r.config.layout))?;
                }
                None => writeln!(out, "sequencer {name} in {}: no live record (never created, or destroyed); node IDs below keep their reservations", store.describe())?,
            }
            let nodes = store.holders(&name, now_ms).map_err(cli_error)?;
            let held = nodes.iter().filter(|n| n.claim.is_some()).count();
            writeln!(out, "  holders      {held}")?;
            writeln!(
                out,
                "  {:>7}  {:<28} {:>8}  {:<24}  {:>20}  reserved until",
                "node", "holder", "token", "expires", "reservation"
            )?;
            for n in &nodes {
                let (holder, token, expires) = match &n.claim {
                    Some(c) => (
                        c.holder.clone(),
                        c.token.to_string(),
                        IsoTime::from_unix_ms(c.expires_unix_ms).to_string(),
                    ),
                    None => ("-".into(), "-".into(), "-".into()),
                };
                let (position, until) = match &n.reservation {
                    Some(r) => (
                        r.position.to_string(),
                        IsoTime::from_unix_ms(r.until_unix_ms).to_string(),
                    ),
                    None => ("-".into(), "-".into()),
                };
                writeln!(
                    out,
                    "  {:>7}  {:<28} {:>8}  {:<24}  {:>20}  {}",
                    n.node_id, holder, token, expires, position, until
                )?;
            }
        }
        "list" => {
            if let Some(n) = name {
                return Err(CliError::usage(
                    format!("'sequencer list' takes no NAME (got {n:?})"),
                    "sequencer",
                )
                .into());
            }
            for r in store.sequencers().map_err(cli_error)? {
                writeln!(
                    out,
                    "{}\t{} nodes\tincarnation {}\t{}",
                    r.name,
                    r.config.nodes,
                    r.incarnation,
                    describe_layout(&r.config.layout)
                )?;
            }
        }
        "destroy" => {
            let name = need_name(name)?;
            // Sequencer::destroy removes exactly the incarnation it opened (a re-created one is left).
            let seq = Sequencer::open(store.clone(), &name).map_err(cli_error)?;
            seq.destroy().map_err(cli_error)?;
            writeln!(
                out,
                "sequencer {name} (incarnation {}) destroyed; its holders stop within one renewal interval",
                seq.record().incarnation
            )?;
        }
        other => {
            return Err(CliError::usage(
                format!("unknown action {other:?}: create, show, list or destroy"),
                "sequencer",
            )
            .into())
        }
    }
    Ok(())
}
