//! `--json` output of `mint`, `inspect` and `layout`: stable field names (documented in the README),
//! IDs as decimal strings (exact for every JSON reader, JavaScript's included), one JSON document per
//! line for commands that print one per ID.

use serde_json::{json, Map, Value};
use snowmint::{Decoded, Encoding, Family, Layout, ENCODINGS};

use crate::layout_args::Chosen;
use crate::render::split_names;

/// One minted ID: `{"id":"…","text":"…"}`, `text` in the `--format` form.
pub fn minted(id: u64, format: Encoding) -> String {
    json!({
        "id": Encoding::Decimal.encode(id).as_str(),
        "text": format.encode(id).as_str(),
    })
    .to_string()
}

/// `mint --stats`: the generator's counters (snowmint::Stats), numbers.
pub fn stats(s: &snowmint::Stats) -> String {
    json!({
        "minted": s.minted,
        "batches": s.batches,
        "borrowed_ticks": s.borrowed_ticks,
        "waits": s.waits,
        "wait_ns": s.wait_ns,
        "regressions": s.regressions,
    })
    .to_string()
}

/// Every string form of an ID, by encoding name.
fn encodings(id: u64) -> Value {
    let mut m = Map::new();
    for enc in ENCODINGS {
        m.insert(enc.name().into(), enc.encode(id).as_str().into());
    }
    Value::Object(m)
}

/// One inspected ID: the core's `Decoded` fields (serde), the input as given, the layout, the time,
/// the node ID (without the layout's offset), the node field's two parts if it has them, every string
/// form, and the form the input was read in (`read_as`).
pub fn inspected(chosen: &Chosen, input: &str, form: Encoding, d: &Decoded) -> String {
    let l = &chosen.layout;
    let mut v = serde_json::to_value(d).expect("a Decoded serialises");
    let m = v.as_object_mut().expect("a Decoded is an object");
    m.insert("input".into(), input.into());
    m.insert("read_as".into(), form.name().into());
    m.insert("layout".into(), chosen.label.as_str().into());
    m.insert("time".into(), d.iso().to_buf().as_str().into());
    let offset = l.node_id_offset();
    let node_id = match l.family() {
        Family::Binary if d.node >= offset => Value::from(d.node - offset),
        Family::Binary => Value::Null,
        Family::Decimal => Value::from(d.node),
    };
    m.insert("node_id".into(), node_id);
    let parts = l.node_split().map(|(hi, lo)| {
        let (a, b) = split_names(l);
        json!({ a: d.node >> lo, b: d.node & ((1u64 << lo) - 1), "bits": [hi, lo] })
    });
    m.insert("node_parts".into(), parts.into());
    m.insert("encodings".into(), encodings(d.id));
    v.to_string()
}

/// IDs per second for `per_tick` IDs each tick of `tick_ns`: an integer when whole.
fn per_second(per_tick: u128, tick_ns: u64) -> Value {
    let num = per_tick * 1_000_000_000;
    if num.is_multiple_of(tick_ns as u128) {
        match u64::try_from(num / tick_ns as u128) {
            Ok(n) => n.into(),
            Err(_) => (num as f64 / tick_ns as f64).into(),
        }
    } else {
        (num as f64 / tick_ns as f64).into()
    }
}

/// A layout: the core's serde form (`preset` and the nine config fields) and what follows from them.
pub fn layout(chosen: &Chosen) -> String {
    let l: &Layout = &chosen.layout;
    let mut v = serde_json::to_value(l).expect("a Layout serialises");
    let m = v.as_object_mut().expect("a Layout is an object");
    m.insert("layout".into(), chosen.label.as_str().into());
    let family = match l.family() {
        Family::Binary => "binary",
        Family::Decimal => "decimal",
    };
    m.insert("family".into(), family.into());
    m.insert("total_bits".into(), l.total_bits().into());
    m.insert(
        "epoch".into(),
        snowmint::IsoTime::from_unix_ms(l.epoch_ms())
            .to_buf()
            .as_str()
            .into(),
    );
    m.insert("lifespan_end_ms".into(), l.lifespan_end_ms().into());
    m.insert(
        "lifespan_end".into(),
        l.lifespan_end().to_buf().as_str().into(),
    );
    m.insert("node_count".into(), l.node_count().into());
    m.insert("max_node_id".into(), l.max_node_id().into());
    m.insert("ids_per_tick".into(), l.ids_per_tick().into());
    m.insert(
        "ids_per_second_per_node".into(),
        per_second(l.ids_per_tick().into(), l.tick_ns()),
    );
    m.insert(
        "ids_per_second".into(),
        per_second(
            l.ids_per_tick() as u128 * l.node_count() as u128,
            l.tick_ns(),
        ),
    );
    m.insert("clock_unit".into(), l.clock_unit().name().into());
    v.to_string()
}

/// A time as ISO-8601 UTC text.
fn iso(unix_ms: u64) -> Value {
    snowmint::IsoTime::from_unix_ms(unix_ms)
        .to_buf()
        .as_str()
        .into()
}

/// One node ID of a sequencer (`sequencer show --json`, `lease show|list --json`): who holds it, its
/// fencing token and expiry, and its reservation; `null` for what it does not have.
pub fn node_state(sequencer: &str, n: &snowmint_coord::NodeState) -> Value {
    let claim = n.claim.as_ref();
    let reservation = n.reservation.as_ref().map(|r| {
        json!({
            "position": r.position,
            "until": iso(r.until_unix_ms),
            "until_unix_ms": r.until_unix_ms,
            "layout_fingerprint": format!("{:016x}", r.layout_fingerprint),
        })
    });
    json!({
        "sequencer": sequencer,
        "node_id": n.node_id,
        "holder": claim.map(|c| c.holder.as_str()),
        "token": claim.map(|c| c.token),
        "expires": claim.map(|c| iso(c.expires_unix_ms)),
        "expires_unix_ms": claim.map(|c| c.expires_unix_ms),
        "reservation": reservation,
    })
}

/// A sequencer record (`sequencer list --json`, and the head of `sequencer show --json`).
pub fn sequencer(r: &snowmint_coord::SequencerRecord, store: &str) -> Map<String, Value> {
    let preset = snowmint::PRESET_NAMES.iter().find(|n| {
        snowmint::Layout::preset(n)
            .is_ok_and(|l| snowmint_coord::layout_text(&l) == r.config.layout)
    });
    let v = json!({
        "name": r.name,
        "store": store,
        "nodes": r.config.nodes,
        "incarnation": r.incarnation,
        "created": iso(r.created_unix_ms),
        "created_unix_ms": r.created_unix_ms,
        "layout": r.config.layout,
        "preset": preset,
    });
    match v {
        Value::Object(m) => m,
        _ => unreachable!("an object"),
    }
}

/// A range's `[start, end)` as `{"start": "…", "end": "…"}` (values as decimal strings, like IDs).
fn range(&(start, end): &(u64, u64)) -> Value {
    json!({ "start": start.to_string(), "end": end.to_string() })
}

/// `range show --json`: the global row (`null` if no datacenter took a range) and, with `--dc`, the
/// datacenter's row (`null` if it never took one).
pub fn range_rows(
    name: &str,
    global: Option<&snowmint_coord::GlobalRow>,
    datacenter: Option<(&str, Option<&snowmint_coord::DatacenterRow>)>,
) -> String {
    let global = global.map(|g| {
        let dcs: Map<String, Value> = g
            .datacenters
            .iter()
            .map(|(dc, r)| (dc.clone(), range(r)))
            .collect();
        json!({
            "bits": g.bits,
            "start": g.start.to_string(),
            "last": (g.next > g.start).then(|| (g.next - 1).to_string()),
            "next": g.next.to_string(),
            "datacenters": dcs,
        })
    });
    let mut v = json!({ "name": name, "global": global });
    if let Some((dc, row)) = datacenter {
        v["datacenter"] = json!({
            "name": dc,
            "row": row.map(|r| json!({
                "last": (r.floor > 0).then(|| (r.floor - 1).to_string()),
                "reserved": r.ranges.first().map(range),
                "pre_allocated": r.ranges.iter().skip(1).map(range).collect::<Vec<_>>(),
                "fetching_until": r.fetching_until_unix_ms.map(iso),
            })),
        });
    }
    v.to_string()
}
