//! `snowmint range next|show`: compact integer IDs from a range sequence (SPEC §4).

use std::io::Write;
use std::time::Duration;

use snowmint_coord::range::open_pair;
use snowmint_coord::{RangeOptions, RangeSequence};

use crate::args::{Args, Item};
use crate::error::CliError;
use crate::help;
use crate::sequencer::{cli_error, malformed};
use crate::Failure;

pub fn run(argv: Vec<String>, out: &mut impl Write) -> Result<(), Failure> {
    let mut args = Args::new(argv, "range");
    let mut positionals = Vec::new();
    let (mut dc, mut global, mut local) = (None, None, None);
    let mut count: Option<u64> = None;
    let mut options = RangeOptions::default();
    let mut process_range = None;
    let mut threshold = None;
    let mut json = false;
    while let Some(item) = args.next_item()? {
        match item {
            Item::Flag { name, inline } => match name.as_str() {
                "-h" | "--help" => {
                    out.write_all(help::RANGE.as_bytes())?;
                    return Ok(());
                }
                "--dc" => dc = Some(args.value(&name, inline)?),
                // --global and --local are these options' former names (clap's aliases).
                "--store" => global = Some(args.value(&name, inline)?),
                "--local-store" => local = Some(args.value(&name, inline)?),
                "-n" | "--count" => count = Some(args.number(&name, inline)?),
                "--dc-range" => options.dc_range = args.number(&name, inline)?,
                "--process-range" => process_range = Some(args.number(&name, inline)?),
                "--threshold" => threshold = Some(args.number(&name, inline)?),
                "--bits" => options.bits = args.bits(&name, inline)?,
                "--start" => options.start = args.number(&name, inline)?,
                "--wait" => {
                    let v = args.value(&name, inline)?;
                    options.wait = snowmint_coord::source::parse_wait(&v)
                        .map_err(|why| CliError::usage(format!("--wait: {why}"), "range"))?;
                }
                // The former spelling: milliseconds without a unit.
                "--wait-ms" => options.wait = Duration::from_millis(args.number(&name, inline)?),
                "--json" => {
                    args.no_value(&name, inline)?;
                    json = true;
                }
                _ => return Err(args.unknown(&name).into()),
            },
            Item::Positional(p) => positionals.push(p),
        }
    }
    let mut pos = positionals.into_iter();
    let (Some(action), Some(name)) = (pos.next(), pos.next()) else {
        return Err(CliError::usage(
            "give an action and a NAME: range next NAME … or range show NAME …",
            "range",
        )
        .into());
    };
    if let Some(extra) = pos.next() {
        return Err(CliError::usage(format!("unexpected argument {extra:?}"), "range").into());
    }
    snowmint_coord::sequencer::check_name(&name)
        .map_err(|e| malformed(e.context("range sequence"), "range"))?;
    if let Some(dc) = &dc {
        snowmint_coord::sequencer::check_name(dc)
            .map_err(|e| malformed(e.context("--dc"), "range"))?;
    }
    let global = global
        .or_else(|| std::env::var("SNOWMINT_STORE").ok())
        .ok_or_else(|| CliError::usage("give the global store with --store URL (file:///DIR, etcd://…, postgres://…) or $SNOWMINT_STORE", "range"))?;
    match action.as_str() {
        "next" => {
            let dc = dc.ok_or_else(|| {
                CliError::usage("'range next' needs --dc DC (the datacenter)", "range")
            })?;
            let local = local.unwrap_or_else(|| global.clone());
            let count = count.unwrap_or(1);
            if count == 0 || count > snowmint_coord::range::MAX_BATCH as u64 {
                return Err(CliError::usage(
                    format!("-n {count}: give 1 to {}", snowmint_coord::range::MAX_BATCH),
                    "range",
                )
                .into());
            }
            // One process range of exactly -n values and no pre-allocation, unless told otherwise:
            // a process that exits leaves the rest of its ranges as holes.
            options.process_range = process_range.unwrap_or_else(|| count.min(options.dc_range));
            options.threshold_percent = threshold.map_or(100, |t| t.min(u32::MAX as u64) as u32);
            options.check().map_err(|e| malformed(e, "range"))?;
            for (what, url) in [("store", &global), ("local-store", &local)] {
                snowmint_coord::source::parse_store_url(url)
                    .map_err(|e| malformed(e.context(format!("--{what}")), "range"))?;
            }
            let seq = RangeSequence::open_urls(&name, &dc, &global, &local, options)
                .map_err(cli_error)?;
            // One at a time, so that the values handed out before a failure (RANGE_EXHAUSTED, the
            // store down) are printed, not lost.
            for _ in 0..count {
                let id = seq.next_id().map_err(cli_error)?;
                if json {
                    writeln!(out, "{}", serde_json::json!({ "id": id.to_string() }))?;
                } else {
                    writeln!(out, "{id}")?;
                }
            }
        }
        "show" => {
            for (flag, given) in [
                ("-n", count.is_some()),
                ("--process-range", process_range.is_some()),
                ("--threshold", threshold.is_some()),
            ] {
                if given {
                    return Err(
                        CliError::usage(format!("'range show' takes no {flag}"), "range").into(),
                    );
                }
            }
            if local.is_some() != dc.is_some() {
                return Err(CliError::usage("'range show' takes --dc DC and --local-store URL together (to read that datacenter's row)", "range").into());
            }
            let local_url = local.clone().unwrap_or_else(|| global.clone());
            let (g, l) = open_pair(&global, &local_url).map_err(cli_error)?;
            let global_row = RangeSequence::show(&*g, &name).map_err(cli_error)?;
            if json {
                let dc_row = match &dc {
                    Some(dc) => Some((
                        dc.as_str(),
                        RangeSequence::show_datacenter(&*l, &name, dc).map_err(cli_error)?,
                    )),
                    None => None,
                };
                let dc_row = dc_row.as_ref().map(|(dc, row)| (*dc, row.as_ref()));
                writeln!(
                    out,
                    "{}",
                    crate::json::range_rows(&name, global_row.as_ref(), dc_row)
                )?;
                return Ok(());
            }
            match global_row {
                None => writeln!(
                    out,
                    "range sequence {name} in {}: no global row (no datacenter has taken a range)",
                    g.describe()
                )?,
                Some(row) => {
                    writeln!(
                        out,
                        "range sequence {name} in {}: {} bits from {}",
                        g.describe(),
                        row.bits,
                        row.start
                    )?;
                    let last = if row.next > row.start {
                        (row.next - 1).to_string()
                    } else {
                        "-".into()
                    };
                    writeln!(
                        out,
                        "  global last value  {last}  (next range starts at {})",
                        row.next
                    )?;
                    for (dc, (s, e)) in &row.datacenters {
                        writeln!(out, "  datacenter {dc:<12} last range taken  [{s}, {e})")?;
                    }
                }
            }
            if let Some(dc) = dc {
                match RangeSequence::show_datacenter(&*l, &name, &dc).map_err(cli_error)? {
                    None => writeln!(
                        out,
                        "datacenter {dc} in {}: no row (it never took a range)",
                        l.describe()
                    )?,
                    Some(row) => {
                        writeln!(out, "datacenter {dc} in {}", l.describe())?;
                        let last = if row.floor > 0 {
                            (row.floor - 1).to_string()
                        } else {
                            "-".into()
                        };
                        writeln!(out, "  last value given to a process  {last}")?;
                        let mut ranges = row.ranges.iter();
                        match ranges.next() {
                            Some((s, e)) => {
                                writeln!(out, "  reserved       [{s}, {e})  ({} values)", e - s)?
                            }
                            None => writeln!(out, "  reserved       none")?,
                        }
                        for (s, e) in ranges {
                            writeln!(out, "  pre-allocated  [{s}, {e})  ({} values)", e - s)?;
                        }
                        if let Some(until) = row.fetching_until_unix_ms {
                            writeln!(
                                out,
                                "  a fetch from the global row is under way (ticket until {})",
                                snowmint::IsoTime::from_unix_ms(until)
                            )?;
                        }
                    }
                }
            }
        }
        other => return Err(crate::spec::unknown_action("range", other).into()),
    }
    Ok(())
}
