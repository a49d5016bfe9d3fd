//! `snowmint sequencer create|show|list|destroy`: named sequencers in a store (SPEC §3.3).

use std::io::Write;
use std::sync::Arc;

use serde_json::Value;
use snowmint::IsoTime;
use snowmint_coord::sequencer::layout_from_text;
use snowmint_coord::source::{open_store, parse_store_url};
use snowmint_coord::{NodeState, Sequencer, SequencerRecord, Store, SystemTime, Time};

use crate::error::CliError;
use crate::json;
use crate::spec::{LeaseCmd, SequencerCmd, StoreOpt};
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

/// The store of `--store` (or $SNOWMINT_STORE), for an action on sequencer `name` (checked first);
/// `create` creates it (an embedded store's directory): the one act that creates a store.
fn open(
    store: StoreOpt,
    name: Option<&str>,
    create: bool,
    command: &str,
) -> Result<Arc<dyn Store>, CliError> {
    let store_url = store
        .store
        .or_else(|| std::env::var("SNOWMINT_STORE").ok())
        .ok_or_else(|| CliError::usage("give the store with --store URL (file:///DIR, etcd://…, postgres://…) or $SNOWMINT_STORE", command))?;
    if let Some(n) = name {
        snowmint_coord::sequencer::check_name(n).map_err(|e| malformed(e, command))?;
    }
    let url = parse_store_url(&store_url).map_err(|e| malformed(e, command))?;
    let open = if create {
        snowmint_coord::source::create_store
    } else {
        open_store
    };
    open(&url).map_err(cli_error)
}

/// The live record of `name`; SEQUENCER_NOT_FOUND (exit 1) when there is none, naming the
/// sequencers that exist, the nearest name and the command that creates it.
fn record(store: &dyn Store, name: &str) -> Result<SequencerRecord, CliError> {
    store
        .sequencer(name)
        .map_err(cli_error)?
        .ok_or_else(|| cli_error(snowmint_coord::sequencer::not_found(store, name, None)))
}

/// The node IDs of `nodes` as a table; with `sequencer`, a first column naming each one's sequencer.
fn node_table(
    out: &mut impl Write,
    nodes: &[(String, NodeState)],
    with_sequencer: bool,
) -> std::io::Result<()> {
    let seq_width = nodes.iter().map(|(s, _)| s.len()).max().unwrap_or(0).max(9);
    // (The token: 16 digits on the embedded store, whose tokens start from the clock.)
    let head = format!(
        "{:>7}  {:<28} {:>16}  {:<24}  {:>20}  reserved until",
        "node", "holder", "token", "expires", "reservation"
    );
    if with_sequencer {
        writeln!(out, "  {:<seq_width$}  {head}", "sequencer")?;
    } else {
        writeln!(out, "  {head}")?;
    }
    for (seq, n) in nodes {
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
        let row = format!(
            "{:>7}  {:<28} {:>16}  {:<24}  {:>20}  {}",
            n.node_id, holder, token, expires, position, until
        );
        if with_sequencer {
            writeln!(out, "  {seq:<seq_width$}  {row}")?;
        } else {
            writeln!(out, "  {row}")?;
        }
    }
    Ok(())
}

/// Every node ID of `name` with a claim or a reservation.
fn nodes_of(store: &dyn Store, name: &str) -> Result<Vec<(String, NodeState)>, CliError> {
    let now_ms = SystemTime.unix_ns() / 1_000_000;
    Ok(store
        .holders(name, now_ms)
        .map_err(cli_error)?
        .into_iter()
        .map(|n| (name.to_string(), n))
        .collect())
}

pub fn run(action: SequencerCmd, out: &mut impl Write) -> Result<(), Failure> {
    match action {
        SequencerCmd::Create {
            name,
            store,
            json,
            mut layout,
        } => {
            let nodes = layout.take_sequencer_nodes();
            let store = open(store, Some(&name), true, "sequencer")?;
            let layout = layout.build("sequencer")?.layout;
            let nodes = nodes.unwrap_or(layout.node_count());
            let seq = Sequencer::create(store.clone(), &name, layout, nodes).map_err(cli_error)?;
            let r = seq.record();
            if json.json {
                writeln!(
                    out,
                    "{}",
                    Value::Object(json::sequencer(r, &store.describe()))
                )?;
                return Ok(());
            }
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
        SequencerCmd::Show { name, store, json } => {
            let store = open(store, Some(&name), false, "sequencer")?;
            let r = record(&*store, &name)?;
            let nodes = nodes_of(&*store, &name)?;
            let held = nodes.iter().filter(|(_, n)| n.claim.is_some()).count();
            if json.json {
                let mut m = json::sequencer(&r, &store.describe());
                m.insert("holders".into(), held.into());
                let list: Vec<Value> = nodes.iter().map(|(s, n)| json::node_state(s, n)).collect();
                m.insert("node_ids".into(), list.into());
                writeln!(out, "{}", Value::Object(m))?;
                return Ok(());
            }
            writeln!(out, "sequencer {} in {}", r.name, store.describe())?;
            writeln!(out, "  nodes        {}", r.config.nodes)?;
            writeln!(out, "  incarnation  {}", r.incarnation)?;
            writeln!(
                out,
                "  created      {}",
                IsoTime::from_unix_ms(r.created_unix_ms)
            )?;
            writeln!(out, "  layout       {}", describe_layout(&r.config.layout))?;
            writeln!(out, "  holders      {held}")?;
            node_table(out, &nodes, false)?;
        }
        SequencerCmd::List { store, json } => {
            let store = open(store, None, false, "sequencer")?;
            for r in store.sequencers().map_err(cli_error)? {
                if json.json {
                    writeln!(
                        out,
                        "{}",
                        Value::Object(json::sequencer(&r, &store.describe()))
                    )?;
                    continue;
                }
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
        SequencerCmd::Destroy { name, store, json } => {
            let store = open(store, Some(&name), false, "sequencer")?;
            // Sequencer::destroy removes exactly the incarnation it opened (a re-created one is left).
            let seq = Sequencer::open(store.clone(), &name).map_err(cli_error)?;
            seq.destroy().map_err(cli_error)?;
            if json.json {
                let mut m = json::sequencer(seq.record(), &store.describe());
                m.insert("destroyed".into(), true.into());
                writeln!(out, "{}", Value::Object(m))?;
                return Ok(());
            }
            writeln!(
                out,
                "sequencer {name} (incarnation {}) destroyed; its holders stop within one renewal interval",
                seq.record().incarnation
            )?;
        }
    }
    Ok(())
}

/// `snowmint lease list|show [NAME] --store URL [--json]`: who holds which node ID (holder, fencing
/// token, expiry) and the reservation of each, in every sequencer of the store or in one.
pub fn lease(action: LeaseCmd, out: &mut impl Write) -> Result<(), Failure> {
    let (store, name, json) = match action {
        LeaseCmd::List { store, json } => (open(store, None, false, "lease")?, None, json.json),
        LeaseCmd::Show { name, store, json } => (
            open(store, Some(&name), false, "lease")?,
            Some(name),
            json.json,
        ),
    };
    let (nodes, with_sequencer) = match &name {
        None => {
            let mut all = Vec::new();
            for r in store.sequencers().map_err(cli_error)? {
                let held = nodes_of(&*store, &r.name)?;
                all.extend(held.into_iter().filter(|(_, n)| n.claim.is_some()));
            }
            (all, true)
        }
        Some(name) => {
            record(&*store, name)?;
            (nodes_of(&*store, name)?, false)
        }
    };
    if json {
        for (s, n) in &nodes {
            writeln!(out, "{}", json::node_state(s, n))?;
        }
        return Ok(());
    }
    let held = nodes.iter().filter(|(_, n)| n.claim.is_some()).count();
    match &name {
        Some(name) => writeln!(
            out,
            "leases of sequencer {name} in {}: {held} held",
            store.describe()
        )?,
        None => writeln!(out, "leases in {}: {held} held", store.describe())?,
    }
    node_table(out, &nodes, with_sequencer)?;
    Ok(())
}
