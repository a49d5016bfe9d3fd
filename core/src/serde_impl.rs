//! `serde` support (feature `serde`, off by default; no_std: serde without its `std` feature, no alloc);
//! the crate documentation shows the forms.
//!
//! - [`LayoutConfig`]: its nine fields, by name; `order` as its name (`"timestamp_node_sequence"`).
//!   Unknown fields are rejected. A config is unvalidated data, as when built in Rust.
//! - [`Layout`]: `preset` (a preset's name, or `null` or absent for a custom layout) beside the nine config
//!   fields. Deserialising runs [`Layout::new`] (or the preset's constructor, whose fields must then be
//!   the preset's): an invalid layout is the same `INVALID_LAYOUT` error, never a `Layout`.
//! - [`Decoded`]: `id`, `timestamp_ticks`, `unix_ms`, `sub_ms_ns`, `node`, `sequence`, `shows_nanos`.
//!   In human-readable formats (JSON, YAML, TOML …) `id` is a decimal string, which JavaScript and
//!   other readers of JSON with 53-bit numbers keep exact; in binary formats it is a `u64`. Both
//!   forms are accepted when reading.

use core::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use crate::decode::Decoded;
use crate::encoding::Encoding;
use crate::error::Error;
use crate::layout::{Layout, LayoutConfig, Order, PRESET_NAMES};

impl Serialize for Order {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Reads one of a fixed set of names (without allocating) and maps it to a value.
struct Named<T> {
    expecting: &'static str,
    names: &'static [&'static str],
    map: fn(&str) -> Option<T>,
}

impl<T> Visitor<'_> for Named<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.map)(v).ok_or_else(|| E::unknown_variant(v, self.names))
    }
}

impl<'de> Deserialize<'de> for Order {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Order, D::Error> {
        d.deserialize_str(Named {
            expecting: "timestamp_node_sequence or timestamp_sequence_node",
            names: &["timestamp_node_sequence", "timestamp_sequence_node"],
            map: |v| Order::from_name(v).ok(),
        })
    }
}

/// The field names of a config, in order (also a [`Layout`]'s, after `preset`).
const CONFIG_FIELDS: [&str; 9] = [
    "timestamp_bits",
    "node_bits",
    "sequence_bits",
    "order",
    "tick_ns",
    "epoch_ms",
    "node_id_offset",
    "use_sign_bit",
    "node_split_bits",
];

fn serialize_config<S: SerializeStruct>(st: &mut S, c: &LayoutConfig) -> Result<(), S::Error> {
    let f = &CONFIG_FIELDS;
    st.serialize_field(f[0], &c.timestamp_bits)?;
    st.serialize_field(f[1], &c.node_bits)?;
    st.serialize_field(f[2], &c.sequence_bits)?;
    st.serialize_field(f[3], &c.order)?;
    st.serialize_field(f[4], &c.tick_ns)?;
    st.serialize_field(f[5], &c.epoch_ms)?;
    st.serialize_field(f[6], &c.node_id_offset)?;
    st.serialize_field(f[7], &c.use_sign_bit)?;
    st.serialize_field(f[8], &c.node_split_bits)
}

impl Serialize for LayoutConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("LayoutConfig", CONFIG_FIELDS.len())?;
        serialize_config(&mut st, self)?;
        st.end()
    }
}

impl Serialize for Layout {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Layout", 1 + CONFIG_FIELDS.len())?;
        st.serialize_field("preset", &self.preset_name())?;
        serialize_config(&mut st, self.config())?;
        st.end()
    }
}

/// A preset's name, read without allocating.
struct PresetName(&'static str);

impl<'de> Deserialize<'de> for PresetName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PresetName, D::Error> {
        d.deserialize_str(Named {
            expecting: "a preset name or null",
            names: &PRESET_NAMES,
            map: |v| {
                PRESET_NAMES
                    .iter()
                    .find(|&&n| n == v)
                    .map(|&n| PresetName(n))
            },
        })
    }
}

/// `preset` present (`Some`, possibly `null`) or absent (`None`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<PresetName>>, D::Error> {
    Option::<PresetName>::deserialize(d).map(Some)
}

/// The wire form of a layout; a config is the same without `preset`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Repr {
    #[serde(default, deserialize_with = "present")]
    preset: Option<Option<PresetName>>,
    timestamp_bits: u32,
    node_bits: u32,
    sequence_bits: u32,
    order: Order,
    tick_ns: u64,
    epoch_ms: u64,
    node_id_offset: u64,
    use_sign_bit: bool,
    node_split_bits: u32,
}

impl Repr {
    fn config(&self) -> LayoutConfig {
        LayoutConfig {
            timestamp_bits: self.timestamp_bits,
            node_bits: self.node_bits,
            sequence_bits: self.sequence_bits,
            order: self.order,
            tick_ns: self.tick_ns,
            epoch_ms: self.epoch_ms,
            node_id_offset: self.node_id_offset,
            use_sign_bit: self.use_sign_bit,
            node_split_bits: self.node_split_bits,
        }
    }
}

impl<'de> Deserialize<'de> for LayoutConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LayoutConfig, D::Error> {
        let r = Repr::deserialize(d)?;
        if r.preset.is_some() {
            return Err(de::Error::custom(
                "a LayoutConfig has no preset field (read it as a Layout)",
            ));
        }
        Ok(r.config())
    }
}

/// A deserialised preset whose fields are not the preset's.
struct PresetMismatch(&'static str);

impl fmt::Display for PresetMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid layout: the fields are not those of the {} preset (give preset null for a custom layout)",
            self.0
        )
    }
}

/// Builds the layout a wire form describes, through the same validation as [`Layout::new`].
fn layout_from<E: de::Error>(r: Repr) -> Result<Layout, E> {
    let cfg = r.config();
    let core = |e: Error| E::custom(e);
    let Some(PresetName(name)) = r.preset.flatten() else {
        return Layout::new(cfg).map_err(core);
    };
    // A preset's parameters come from its fields; every other field must then be the preset's.
    let layout = match name {
        "snowcast" => {
            // node_bits is log2 of the node count; out of snowcast's range, the count is too.
            let count = 1u64.checked_shl(cfg.node_bits).unwrap_or(u64::MAX);
            Layout::snowcast(cfg.epoch_ms, count).map_err(core)?
        }
        "hazelcast" => Layout::hazelcast(cfg.node_id_offset).map_err(core)?,
        _ => Layout::preset(name).map_err(core)?,
    };
    if *layout.config() != cfg {
        // The fields may be invalid in themselves: then say so as Layout::new would.
        Layout::new(cfg).map_err(core)?;
        return Err(E::custom(PresetMismatch(name)));
    }
    Ok(layout)
}

impl<'de> Deserialize<'de> for Layout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Layout, D::Error> {
        layout_from(Repr::deserialize(d)?)
    }
}

impl Serialize for Decoded {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let human = s.is_human_readable();
        let mut st = s.serialize_struct("Decoded", 7)?;
        if human {
            st.serialize_field("id", Encoding::Decimal.encode(self.id).as_str())?;
        } else {
            st.serialize_field("id", &self.id)?;
        }
        st.serialize_field("timestamp_ticks", &self.timestamp_ticks)?;
        st.serialize_field("unix_ms", &self.unix_ms)?;
        st.serialize_field("sub_ms_ns", &self.sub_ms_ns)?;
        st.serialize_field("node", &self.node)?;
        st.serialize_field("sequence", &self.sequence)?;
        st.serialize_field("shows_nanos", &self.nanos)?;
        st.end()
    }
}

/// An ID as a decimal string or a number.
struct Id(u64);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an ID: a decimal string or an unsigned 64-bit integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                u64::try_from(v)
                    .map(Id)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Encoding::Decimal.parse(v).map(Id).map_err(E::custom)
            }
        }
        if d.is_human_readable() {
            d.deserialize_any(V)
        } else {
            d.deserialize_u64(V)
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecodedRepr {
    id: Id,
    timestamp_ticks: u64,
    unix_ms: u64,
    sub_ms_ns: u32,
    node: u64,
    sequence: u64,
    shows_nanos: bool,
}

impl<'de> Deserialize<'de> for Decoded {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Decoded, D::Error> {
        let r = DecodedRepr::deserialize(d)?;
        if r.sub_ms_ns >= 1_000_000 {
            return Err(de::Error::invalid_value(
                de::Unexpected::Unsigned(r.sub_ms_ns.into()),
                &"sub_ms_ns below 1000000",
            ));
        }
        Ok(Decoded {
            id: r.id.0,
            timestamp_ticks: r.timestamp_ticks,
            unix_ms: r.unix_ms,
            sub_ms_ns: r.sub_ms_ns,
            node: r.node,
            sequence: r.sequence,
            nanos: r.shows_nanos,
        })
    }
}
