//! `snowmint range next|show`: compact integer IDs from a range sequence (SPEC §4).

use std::io::Write;
use std::time::Duration;

use snowmint_coord::range::open_pair;
use snowmint_coord::{RangeOptions, RangeSequence};

use crate::error::CliError;
use crate::sequencer::{cli_error, malformed};
use crate::spec::RangeCmd;
use crate::Failure;

pub fn run(action: RangeCmd, out: &mut impl Write) -> Result<(), Failure> {
    let (name, dc, global) = match &action {
        RangeCmd::Next(a) => (a.name.clone(), a.dc.clone(), a.store.clone()),
        RangeCmd::Show(a) => (a.name.clone(), a.dc.clone(), a.store.clone()),
    };
    snowmint_coord::sequencer::check_name(&name)
        .map_err(|e| malformed(e.context("range sequence"), "range"))?;
    if let Some(dc) = &dc {
        snowmint_coord::sequencer::check_name(dc)
            .map_err(|e| malformed(e.context("--dc"), "range"))?;
    }
    let global = global
        .or_else(|| std::env::var("SNOWMINT_STORE").ok())
        .ok_or_else(|| CliError::usage("give the global store with --store URL (file:///DIR, etcd://…, postgres://…) or $SNOWMINT_STORE", "range"))?;
    match action {
        RangeCmd::Next(a) => {
            let mut options = RangeOptions::default();
            if let Some(v) = a.dc_range {
                options.dc_range = v;
            }
            if let Some(v) = a.bits {
                options.bits = v;
            }
            if let Some(v) = a.start {
                options.start = v;
            }
            // --wait-ms: the former spelling, milliseconds without a unit.
            if let Some(v) = a.wait.or(a.wait_ms.map(Duration::from_millis)) {
                options.wait = v;
            }
            let (local, count, json) = (a.local_store, a.count, a.json.json);
            let (process_range, threshold) = (a.process_range, a.threshold);
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
        RangeCmd::Show(a) => {
            let (local, json) = (a.local_store, a.json.json);
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
    }
    Ok(())
}
