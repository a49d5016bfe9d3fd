//! What `inspect` and `layout` print: plain text for people, with every number from the core.

use std::fmt::Write as _;

use snowmint::{Decoded, Encoding, Family, IsoTime, Layout, Order, ENCODINGS};

use crate::layout_args::Chosen;

const NS_PER_MS: u64 = 1_000_000;

/// `4096000` → `4,096,000`.
pub fn group(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A tick length: `1 ms`, `10 ms`, `100 ns`, `1 s`, `250 µs`.
pub fn tick(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000_000) {
        format!("{} s", group((ns / 1_000_000_000).into()))
    } else if ns.is_multiple_of(NS_PER_MS) {
        format!("{} ms", ns / NS_PER_MS)
    } else if ns.is_multiple_of(1_000) {
        format!("{} µs", ns / 1_000)
    } else {
        format!("{ns} ns")
    }
}

/// A span of milliseconds in the largest sensible unit: `53.6 years`, `12 days`, `3 hours`, `250 ms`.
pub fn span(ms: u128) -> String {
    const DAY: f64 = 86_400_000.0;
    let f = ms as f64;
    if f >= 365.2425 * DAY {
        format!("{:.1} years", f / (365.2425 * DAY))
    } else if f >= DAY {
        format!("{:.1} days", f / DAY)
    } else if f >= 3_600_000.0 {
        format!("{:.1} hours", f / 3_600_000.0)
    } else if f >= 60_000.0 {
        format!("{:.1} minutes", f / 60_000.0)
    } else if f >= 1_000.0 {
        format!("{:.1} seconds", f / 1_000.0)
    } else {
        format!("{ms} ms")
    }
}

/// `in 3.2 years` / `5.1 days ago` relative to now.
fn relative(then_ms: u64, now_ms: Option<u64>) -> Option<String> {
    let now = now_ms?;
    Some(if then_ms == now {
        "now".to_string()
    } else if then_ms > now {
        format!("in {}", span((then_ms - now).into()))
    } else {
        format!("{} ago", span((now - then_ms).into()))
    })
}

/// Names of the two parts of a split node field.
pub fn split_names(layout: &Layout) -> (&'static str, &'static str) {
    match layout.preset_name() {
        Some("twitter") => ("datacenter", "worker"),
        Some("discord") => ("worker", "process"),
        _ => ("high", "low"),
    }
}

/// IDs per second for `per_tick` IDs each tick of `tick_ns`, exact when whole.
fn per_second(per_tick: u128, tick_ns: u64) -> String {
    let num = per_tick * 1_000_000_000;
    if num.is_multiple_of(tick_ns as u128) {
        group(num / tick_ns as u128)
    } else {
        format!("{:.3}", num as f64 / tick_ns as f64)
    }
}

/// `snowmint inspect`: one ID's fields, time and every string form.
/// `form`: the string form the ID was read in (shown, so a reader sees which reading was taken).
pub fn inspect(chosen: &Chosen, d: &Decoded, form: Encoding, now_ms: Option<u64>) -> String {
    let l = &chosen.layout;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "ID {} under the {} layout (read as {})",
        d.id,
        chosen.label,
        form.name()
    );
    let rel = relative(d.unix_ms, now_ms)
        .map(|r| format!(", {r}"))
        .unwrap_or_default();
    let _ = writeln!(s, "  time       {}  (Unix ms {}{rel})", d.iso(), d.unix_ms);
    let _ = writeln!(
        s,
        "  timestamp  {} ticks of {} since the epoch {}",
        group(d.timestamp_ticks.into()),
        tick(l.tick_ns()),
        IsoTime::from_unix_ms(l.epoch_ms())
    );
    match l.family() {
        Family::Decimal => {
            let _ = writeln!(s, "  host       {}  (the last two decimal digits)", d.node);
        }
        Family::Binary => {
            let offset = l.node_id_offset();
            let mut node = format!("  node       {}", d.node);
            if let Some((hi, lo)) = l.node_split() {
                let (a, b) = split_names(l);
                let _ = write!(
                    node,
                    "  ({a} {}, {b} {}; {hi} + {lo} bits)",
                    d.node >> lo,
                    d.node & ((1u64 << lo) - 1)
                );
            } else if offset > 0 && d.node >= offset {
                let _ = write!(
                    node,
                    "  (node ID {} + node-id-offset {offset})",
                    d.node - offset
                );
            }
            let _ = writeln!(s, "{node}");
            let _ = writeln!(
                s,
                "  sequence   {}  (of {} per tick)",
                d.sequence,
                group(l.ids_per_tick().into())
            );
        }
    }
    for enc in ENCODINGS {
        let _ = writeln!(s, "  {:<9}  {}", enc.name(), enc.encode(d.id));
    }
    if let Some(now) = now_ms {
        // A minute of slack for clocks that disagree a little.
        if d.unix_ms > now.saturating_add(60_000) {
            let _ = writeln!(
                s,
                "  note: this time is in the future; if the ID is real, it may be from another layout (--layout)"
            );
        }
    }
    s
}

/// Unix ms of 2010-01-01, before which no Snowflake-family ID was minted: a decoded time earlier than
/// that (or in the future) says the ID is of another layout.
const PLAUSIBLE_FROM_MS: u64 = 1_262_304_000_000;
/// How near now a decoded time is "near now" for [`doubt`]'s list of other layouts.
const NEAR_NOW_MS: u64 = 86_400_000;

/// What `snowmint inspect` says on stderr about the time `d` decodes to under `chosen` (`assumed`:
/// no layout option was given): a warning when the time is implausible (before 2010, or in the
/// future), and when `assumed` a note when the time is not near now but the ID decodes to a time near
/// now under other presets; each names those presets. `None` when there is nothing to say.
pub fn doubt(chosen: &Chosen, assumed: bool, d: &Decoded, now_ms: u64) -> Option<String> {
    let t = d.unix_ms;
    let implausible = if t < PLAUSIBLE_FROM_MS {
        Some("before 2010")
    } else if t > now_ms.saturating_add(60_000) {
        Some("in the future")
    } else {
        None
    };
    let near = |t: u64| t.abs_diff(now_ms) <= NEAR_NOW_MS;
    if implausible.is_none() && (!assumed || near(t)) {
        return None;
    }
    let mut others: Vec<(u64, &str, u64)> = snowmint::PRESET_NAMES
        .iter()
        .filter_map(|name| {
            let l = Layout::preset(name).ok()?;
            if l == chosen.layout {
                return None;
            }
            let t = l.decode(d.id).ok()?.unix_ms;
            near(t).then_some((t.abs_diff(now_ms), *name, t))
        })
        .collect();
    others.sort();
    let rel = |t: u64| relative(t, Some(now_ms)).unwrap_or_default();
    let here = format!(
        "ID {} decodes under {} to {} ({})",
        d.id,
        chosen.label,
        IsoTime::from_unix_ms(t),
        rel(t)
    );
    let list = others
        .iter()
        .map(|(_, name, t)| format!("{name} ({}, {})", IsoTime::from_unix_ms(*t), rel(*t)))
        .collect::<Vec<_>>()
        .join(", ");
    let first = others.first().map(|(_, name, _)| *name);
    match (implausible, first) {
        (Some(why), Some(name)) => Some(format!(
            "warning: {here}, {why}: not a time it was minted. It decodes to a time near now under: {list}; give --layout {name} if it is one"
        )),
        (Some(why), None) => Some(format!(
            "warning: {here}, {why}: not a time it was minted; no preset decodes it to a time near now, so it may be of a custom layout (give its fields, see 'snowmint layout --help')"
        )),
        (None, Some(name)) => Some(format!(
            "note: {here}; if it was minted recently, it is of another layout: it decodes to a time near now under: {list}; give --layout {name} if it is one"
        )),
        (None, None) => None,
    }
}

/// One bit-field row of the diagram.
struct Field {
    letter: char,
    name: &'static str,
    bits: u32,
    about: String,
}

/// `snowmint layout`: bit diagram, time range and capacity.
pub fn layout(chosen: &Chosen, now_ms: Option<u64>) -> String {
    let l = &chosen.layout;
    let mut s = String::new();
    match l.family() {
        Family::Decimal => {
            let _ = writeln!(s, "Layout {} (Chronicle-style decimal IDs)", chosen.label);
            let _ = writeln!(
                s,
                "  An ID is a Unix time in nanoseconds, counted in 100 ns steps, whose last two decimal"
            );
            let _ = writeln!(
                s,
                "  digits are replaced by the host ID 0..99: 1640700422954100128 is 2021-12-28T14:07:02.9541001Z, host 28."
            );
            let _ = writeln!(s, "  Readable as a timestamp; no bit fields.");
        }
        Family::Binary => diagram(&mut s, chosen),
    }

    let _ = writeln!(s, "Time");
    let _ = writeln!(s, "  tick            {}", tick(l.tick_ns()));
    let _ = writeln!(
        s,
        "  epoch           {} (Unix ms {})",
        IsoTime::from_unix_ms(l.epoch_ms()),
        l.epoch_ms()
    );
    let end = l.lifespan_end_ms();
    let rel = match (now_ms, relative(end, now_ms)) {
        (Some(now), Some(r)) if end <= now => {
            format!(" — ran out {r}: pick a later epoch or more timestamp bits")
        }
        (_, Some(r)) => format!(", {r}"),
        _ => String::new(),
    };
    let _ = writeln!(
        s,
        "  runs out        {} (Unix ms {end}){rel}",
        l.lifespan_end()
    );
    let _ = writeln!(
        s,
        "  lifespan        {} from the epoch",
        span((end - l.epoch_ms()).into())
    );

    let unit = if l.family() == Family::Decimal {
        "host"
    } else {
        "node"
    };
    let _ = writeln!(s, "Capacity");
    let nodes = l.node_count() as u128;
    let ids_range = if l.node_id_offset() > 0 {
        format!(
            "{unit} IDs 0..={} with node-id-offset {}",
            l.max_node_id(),
            l.node_id_offset()
        )
    } else {
        format!("{unit} IDs 0..={}", l.max_node_id())
    };
    let _ = writeln!(
        s,
        "  {:<16}{} ({ids_range})",
        format!("{unit}s"),
        group(nodes)
    );
    let _ = writeln!(
        s,
        "  IDs per tick    {} per {unit}",
        group(l.ids_per_tick().into())
    );
    let _ = writeln!(
        s,
        "  IDs per second  {} per {unit}; {} across all {unit}s",
        per_second(l.ids_per_tick().into(), l.tick_ns()),
        per_second(l.ids_per_tick() as u128 * nodes, l.tick_ns())
    );
    let _ = writeln!(
        s,
        "  clock unit      {} (injected clocks return whole Unix {})",
        l.clock_unit().name(),
        if l.clock_unit().name() == "ns" {
            "nanoseconds"
        } else {
            "milliseconds"
        }
    );
    s
}

fn diagram(s: &mut String, chosen: &Chosen) {
    let l = &chosen.layout;
    let total = l.total_bits();
    let _ = writeln!(s, "Layout {}: {total} of 64 bits used", chosen.label);
    let ts = Field {
        letter: 'T',
        name: "timestamp",
        bits: l.timestamp_bits(),
        about: format!("{} ticks since the epoch", tick(l.tick_ns())),
    };
    let node_about = match l.node_split() {
        Some((hi, lo)) => {
            let (a, b) = split_names(l);
            format!("{hi} {a} + {lo} {b} bits")
        }
        None if l.node_bits() == 0 => "none: a single node".to_string(),
        None => format!("{} node IDs", group(l.node_count().into())),
    };
    let node = Field {
        letter: 'N',
        name: "node",
        bits: l.node_bits(),
        about: node_about,
    };
    let seq = Field {
        letter: 'S',
        name: "sequence",
        bits: l.sequence_bits(),
        about: format!(
            "counter within a tick, {} per tick",
            group(l.ids_per_tick().into())
        ),
    };
    let fields = match l.order() {
        Order::TimestampNodeSequence => [ts, node, seq],
        Order::TimestampSequenceNode => [ts, seq, node],
    };
    let mut map = String::new();
    let unused = 64 - total;
    map.extend(std::iter::repeat_n('0', unused as usize));
    for f in &fields {
        map.extend(std::iter::repeat_n(f.letter, f.bits as usize));
    }
    let _ = writeln!(s, "  bit 63{:>58}", "bit 0");
    let _ = writeln!(s, "  {map}");
    let mut top = 63i64;
    if unused > 0 {
        let range = if unused == 1 {
            "bit 63".to_string()
        } else {
            format!("bits 63..{}", 64 - unused)
        };
        let why = if total == 63 {
            "always 0, so IDs stay positive as signed 64-bit integers"
        } else {
            "always 0 (unused)"
        };
        let _ = writeln!(s, "  0  {range:<13}{why}");
        top -= unused as i64;
    }
    for f in &fields {
        if f.bits == 0 {
            let _ = writeln!(s, "     {:<13}{:<10} 0 bits  {}", "-", f.name, f.about);
            continue;
        }
        let low = top - f.bits as i64 + 1;
        let range = if f.bits == 1 {
            format!("bit {top}")
        } else {
            format!("bits {top}..{low}")
        };
        let _ = writeln!(
            s,
            "  {}  {range:<13}{:<10}{:>3} bits  {}",
            f.letter, f.name, f.bits, f.about
        );
        top = low - 1;
    }
}
