//! The canonical text of a layout, as sequencer records store and compare it, its fingerprint, and
//! the layout read back from the text.

use snowmint::{Layout, LayoutConfig, Order};

use crate::base::error::{Error, Result};

/// The canonical text form of a layout, as sequencer configurations store and compare it.
///
/// ```
/// let text = snowmint_coord::layout_text(&snowmint::Layout::twitter());
/// assert_eq!(text, "v1;ts=41;node=10;seq=12;order=timestamp_node_sequence;tick_ns=1000000;epoch_ms=1288834974657;offset=0;sign=false;split=5");
/// ```
pub fn layout_text(layout: &Layout) -> String {
    let c = layout.config();
    format!(
        "v1;ts={};node={};seq={};order={};tick_ns={};epoch_ms={};offset={};sign={};split={}",
        c.timestamp_bits,
        c.node_bits,
        c.sequence_bits,
        c.order.name(),
        c.tick_ns,
        c.epoch_ms,
        c.node_id_offset,
        c.use_sign_bit,
        c.node_split_bits
    )
}

/// A 63-bit fingerprint of a layout (FNV-1a of [`layout_text`], top bit clear so that it fits a signed
/// 64-bit column): reservations name the layout their position is in.
pub fn layout_fingerprint(layout: &Layout) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in layout_text(layout).bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h & (u64::MAX >> 1)
}

/// The layout of a configuration's canonical text ([`crate::layout_text`]).
pub fn layout_from_text(text: &str) -> Result<Layout> {
    let bad = || Error::unavailable(format!("unreadable layout in a sequencer record: {text:?}"));
    let mut parts = text.split(';');
    if parts.next() != Some("v1") {
        return Err(bad());
    }
    let mut cfg = LayoutConfig::default();
    for p in parts {
        let (k, v) = p.split_once('=').ok_or_else(bad)?;
        let num = || v.parse::<u64>().map_err(|_| bad());
        let bits = || v.parse::<u32>().map_err(|_| bad());
        match k {
            "ts" => cfg.timestamp_bits = bits()?,
            "node" => cfg.node_bits = bits()?,
            "seq" => cfg.sequence_bits = bits()?,
            "order" => cfg.order = Order::from_name(v).map_err(|_| bad())?,
            "tick_ns" => cfg.tick_ns = num()?,
            "epoch_ms" => cfg.epoch_ms = num()?,
            "offset" => cfg.node_id_offset = num()?,
            "sign" => cfg.use_sign_bit = v == "true",
            "split" => cfg.node_split_bits = bits()?,
            _ => return Err(bad()),
        }
    }
    Layout::new(cfg).map_err(|_| bad())
}
