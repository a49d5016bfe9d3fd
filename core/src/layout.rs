//! Layouts: how an ID's 64 bits are split into timestamp, node and sequence, and what time they count.

use crate::error::{Error, Result};
use crate::time::IsoTime;

const NS_PER_MS: u64 = 1_000_000;

/// Largest epoch accepted: the last Unix millisecond whose nanosecond count fits in 64 bits (year 2554).
pub const MAX_EPOCH_MS: u64 = u64::MAX / NS_PER_MS;

/// `ns / 1_000_000` and `ns % 1_000_000` for a 128-bit span, by long division in 32-bit steps: `u128`'s
/// own `/` calls a library routine that costs the WebAssembly module about 2 KB.
pub(crate) const fn split_ms(ns: u128) -> (u128, u32) {
    let mut q: u128 = 0;
    let mut r: u64 = 0;
    let mut i = 4;
    while i > 0 {
        i -= 1;
        // r < 10^6 < 2^32, so `cur / 10^6` fits 32 bits.
        let cur = (r << 32) | ((ns >> (32 * i)) as u32 as u64);
        q |= ((cur / NS_PER_MS) as u128) << (32 * i);
        r = cur % NS_PER_MS;
    }
    (q, r as u32)
}

/// `ns` in whole milliseconds, rounded up (see [`split_ms`]).
const fn ceil_ms(ns: u128) -> u128 {
    match split_ms(ns) {
        (q, 0) => q,
        (q, _) => q + 1,
    }
}

/// Order of the fields below the timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// `timestamp | node | sequence` (Twitter, Discord, Instagram, snowcast).
    TimestampNodeSequence,
    /// `timestamp | sequence | node` (Sonyflake, Hazelcast).
    TimestampSequenceNode,
}

impl Order {
    /// The name used in the conformance vectors and bindings.
    pub const fn name(self) -> &'static str {
        match self {
            Order::TimestampNodeSequence => "timestamp_node_sequence",
            Order::TimestampSequenceNode => "timestamp_sequence_node",
        }
    }

    /// Parses [`Order::name`] (also accepts `ts|node|seq` / `ts|seq|node`).
    pub fn from_name(s: &str) -> Result<Order> {
        match s {
            "timestamp_node_sequence" | "ts|node|seq" => Ok(Order::TimestampNodeSequence),
            "timestamp_sequence_node" | "ts|seq|node" => Ok(Order::TimestampSequenceNode),
            _ => Err(crate::NameKind::Order.unknown(s)),
        }
    }
}

/// Which family of IDs a layout describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Bit fields packed into 64 bits (Snowflake and its relatives).
    Binary,
    /// Chronicle-style decimal IDs: Unix nanoseconds whose last two decimal digits are the host ID.
    Decimal,
}

/// When the clock unit a host passes readings in (an injected clock returns this unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClockUnit {
    /// Whole Unix milliseconds (layouts whose tick is at least 1 ms).
    Millis,
    /// Whole Unix nanoseconds (layouts with sub-millisecond ticks).
    Nanos,
}

impl ClockUnit {
    /// The name used by bindings: `"ms"` or `"ns"`.
    pub const fn name(self) -> &'static str {
        match self {
            ClockUnit::Millis => "ms",
            ClockUnit::Nanos => "ns",
        }
    }

    /// Converts a reading in this unit to Unix nanoseconds.
    pub fn to_ns(self, reading: u64) -> Result<u64> {
        match self {
            ClockUnit::Nanos => Ok(reading),
            // A comparison, not `checked_mul`: WebAssembly has no overflow flag, so there a checked
            // 64-bit multiply becomes a call to a 128-bit multiply routine on every clock reading.
            ClockUnit::Millis if reading <= u64::MAX / NS_PER_MS => Ok(reading * NS_PER_MS),
            ClockUnit::Millis => Err(Error::InvalidClock {
                reason: "reading out of range (after year 2554)",
            }),
        }
    }

    /// Validates a floating-point reading (JavaScript Number, Python float) and converts it to Unix
    /// nanoseconds: NaN, infinities, negatives, fractions and values past 2^53 are errors, never rounded.
    pub fn f64_to_ns(self, reading: f64) -> Result<u64> {
        self.to_ns(whole_f64(reading)?)
    }
}

/// Converts a host's clock readings (in a layout's [`ClockUnit`]) to Unix nanoseconds, and recognises a
/// reading plainly in another unit (`Error::ClockUnit`, code `INVALID_CLOCK`: "looks like seconds:
/// multiply by 1000").
///
/// The rule: a reading is "plainly" in another unit when, read in the expected unit, it falls outside
/// the layout's lifespan (before its epoch, past its end, or past year 2554), and read as exactly one of
/// seconds, milliseconds, microseconds or nanoseconds (the other three) it falls inside. A reading the
/// layout can use is never refused, and when two other units would fit, no guess is made (the error is
/// the one the reading gets anyway: `CLOCK_BEFORE_EPOCH`, `LAYOUT_EXHAUSTED` or `INVALID_CLOCK`).
///
/// ```
/// use snowmint::{Layout, ErrorCode};
/// let reader = Layout::twitter().clock_reader(); // readings in Unix milliseconds
/// assert_eq!(reader.to_ns(1_700_000_000_000).unwrap(), 1_700_000_000_000_000_000);
/// let err = reader.to_ns(1_700_000_000).unwrap_err(); // seconds
/// assert_eq!(err.code(), ErrorCode::InvalidClock);
/// assert!(err.to_string().ends_with("looks like seconds: multiply by 1000"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClockReader {
    unit: ClockUnit,
    /// Unix ns of the layout's epoch and of the end of its lifespan (exclusive, saturated).
    lo_ns: u64,
    hi_ns: u64,
}

impl ClockReader {
    /// The unit readings are expected in.
    pub const fn unit(self) -> ClockUnit {
        self.unit
    }

    /// A whole reading in [`ClockReader::unit`], as Unix nanoseconds.
    #[inline]
    pub fn to_ns(self, reading: u64) -> Result<u64> {
        match self.unit.to_ns(reading) {
            Ok(ns) if ns >= self.lo_ns && ns < self.hi_ns => Ok(ns),
            other => match self.hint(reading) {
                Some(e) => Err(e),
                None => other,
            },
        }
    }

    /// A floating-point reading (JavaScript Number, Python float): NaN, infinities, negatives,
    /// fractions and values past 2^53 are errors, never rounded (one plainly in another unit says so).
    pub fn f64_to_ns(self, reading: f64) -> Result<u64> {
        match whole_f64(reading) {
            Ok(r) => self.to_ns(r),
            // Huge, or fractional (Python's time.time(), seconds with a fraction): say which unit.
            Err(e) if reading.is_finite() && reading >= 0.0 => {
                Err(self.hint(reading as u64).unwrap_or(e))
            }
            Err(e) => Err(e),
        }
    }

    /// `Error::ClockUnit` when exactly one other unit puts `reading` inside the lifespan.
    fn hint(self, reading: u64) -> Option<Error> {
        let expected_ns = match self.unit {
            ClockUnit::Millis => NS_PER_MS,
            ClockUnit::Nanos => 1,
        };
        let mut found = None;
        for per in [1_000_000_000, NS_PER_MS, 1_000, 1] {
            if per == expected_ns {
                continue;
            }
            if let Some(ns) = reading.checked_mul(per) {
                if ns >= self.lo_ns && ns < self.hi_ns {
                    if found.is_some() {
                        return None;
                    }
                    found = Some(per);
                }
            }
        }
        found.map(|looks_like_ns| Error::ClockUnit {
            reading,
            expected: self.unit,
            looks_like_ns,
        })
    }
}

/// A finite, non-negative, whole `f64` no larger than 2^53 - 1, as `u64`.
pub fn whole_f64(x: f64) -> Result<u64> {
    if !x.is_finite() {
        return Err(Error::InvalidClock {
            reason: "not a finite number",
        });
    }
    if x < 0.0 {
        return Err(Error::InvalidClock { reason: "negative" });
    }
    // 2^53 - 1: above it, a Number may already have lost precision.
    if x > 9_007_199_254_740_991.0 {
        return Err(Error::InvalidClock {
            reason: "above 2^53 - 1, precision may be lost",
        });
    }
    let n = x as u64;
    if n as f64 != x {
        return Err(Error::InvalidClock {
            reason: "not a whole number",
        });
    }
    Ok(n)
}

/// The fields of a layout before validation. Build one, then call [`Layout::new`].
///
/// Bit counts are `u32` and times `u64` so that bindings can pass user input through unchanged and have
/// every out-of-range value rejected here, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayoutConfig {
    /// Bits of the timestamp field (1..=64).
    pub timestamp_bits: u32,
    /// Bits of the node field (0..=63).
    pub node_bits: u32,
    /// Bits of the sequence field (0..=63).
    pub sequence_bits: u32,
    /// Field order.
    pub order: Order,
    /// Length of one tick in nanoseconds (at least 1).
    pub tick_ns: u64,
    /// Epoch, Unix milliseconds.
    pub epoch_ms: u64,
    /// Added to every node ID before packing (Hazelcast's `node-id-offset`).
    pub node_id_offset: u64,
    /// Allow 64 bits in all (IDs may then be negative as signed `i64`). Off: at most 63 bits.
    pub use_sign_bit: bool,
    /// Bits of the high part of the node field when it is two sub-fields (Twitter: 5 datacenter bits
    /// over 5 worker bits); 0 when it is one field. Informational: decoding reports both parts.
    pub node_split_bits: u32,
}

impl Default for LayoutConfig {
    /// Twitter's field widths, tick and epoch (without its datacenter/worker split of the node field).
    fn default() -> Self {
        LayoutConfig {
            timestamp_bits: 41,
            node_bits: 10,
            sequence_bits: 12,
            order: Order::TimestampNodeSequence,
            tick_ns: NS_PER_MS,
            epoch_ms: 1_288_834_974_657,
            node_id_offset: 0,
            use_sign_bit: false,
            node_split_bits: 0,
        }
    }
}

/// Every preset name [`Layout::preset`] accepts (snowcast needs its parameters: [`Layout::snowcast`]).
pub const PRESET_NAMES: [&str; 8] = [
    "twitter",
    "discord",
    "instagram",
    "sonyflake",
    "hazelcast",
    "snowcast",
    "js53",
    "decimal",
];

/// [`PRESET_NAMES`] and the aliases [`Layout::preset`] also accepts (`chronicle` for `decimal`).
pub(crate) const ACCEPTED_PRESET_NAMES: [&str; PRESET_NAMES.len() + 1] = {
    let mut names = [""; PRESET_NAMES.len() + 1];
    let mut i = 0;
    while i < PRESET_NAMES.len() {
        names[i] = PRESET_NAMES[i];
        i += 1;
    }
    names[i] = "chronicle";
    names
};

/// `x / D` as a multiply and shifts, for a constant `D` that is not a power of two (Granlund and
/// Montgomery 1994, Theorem 4.2): with `D = 2^s · o`, `o` odd, `N = 64 - s` and `l = ceil(log2 o)`,
/// `m = floor(2^(N+l) / o) + 1` satisfies `2^(N+l) <= m·o <= 2^(N+l) + 2^l`, so for every `x < 2^64`,
/// `x / D = ((x >> s) · m) >> (N + l)`, exactly. `D` must be even (then `(x >> s) · m < 2^127`).
struct ConstDiv<const D: u64>;

impl<const D: u64> ConstDiv<D> {
    const EVEN: () = assert!(
        D % 2 == 0 && D & (D - 1) != 0,
        "D must be even and not a power of two"
    );
    const S: u32 = D.trailing_zeros();
    const ODD: u64 = D >> Self::S;
    const SHIFT: u32 = (64 - Self::S) + (64 - (Self::ODD - 1).leading_zeros());
    const M: u128 = (1u128 << Self::SHIFT) / Self::ODD as u128 + 1;

    #[inline(always)]
    fn div(x: u64) -> u64 {
        #[allow(clippy::let_unit_value)]
        let () = Self::EVEN;
        (((x >> Self::S) as u128 * Self::M) >> Self::SHIFT) as u64
    }
}

#[cfg(test)]
mod const_div_tests {
    use super::ConstDiv;

    fn check<const D: u64>() {
        let exact = |p: u64| assert_eq!(ConstDiv::<D>::div(p), p / D, "{p} / {D}");
        for p in [
            0,
            1,
            D - 1,
            D,
            D + 1,
            u64::MAX,
            u64::MAX - 1,
            u64::MAX / D * D,
        ] {
            exact(p);
        }
        for k in [1u64, 2, 3, 1000, u64::MAX / D] {
            exact(k * D - 1);
            exact(k * D);
            exact(k.saturating_mul(D).saturating_add(1));
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        // Under Miri, which interprets every step, a sample of the same sequence.
        for _ in 0..if cfg!(miri) { 500 } else { 200_000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            exact(x);
            exact(x >> (x % 64));
        }
    }

    #[test]
    fn matches_division() {
        check::<100>();
        check::<1_000_000>();
        check::<10_000_000>();
        check::<1_000_000_000>();
        check::<10>();
        check::<1_000>();
        check::<250_000>();
        check::<86_400_000_000_000>();
    }
}

/// A validated layout: field widths, order, tick, epoch, and everything derived from them.
///
/// ```
/// use snowmint::Layout;
/// let twitter = Layout::preset("twitter").unwrap();
/// assert_eq!(twitter.node_count(), 1024);
/// assert_eq!(twitter.ids_per_tick(), 4096);
/// assert_eq!(twitter.lifespan_end().to_buf().as_str(), "2080-07-10T17:30:30.209Z");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    family: Family,
    cfg: LayoutConfig,
    preset: Option<&'static str>,
    epoch_ns: u64,
    /// Largest tick the timestamp field holds.
    max_tick: u64,
    /// Largest logical position (tick << sequence_bits | sequence) usable.
    max_position: u64,
    seq_mask: u64,
    node_max: u64,
}

const fn mask(bits: u32) -> u64 {
    if bits == 0 {
        0
    } else if bits >= 64 {
        u64::MAX
    } else {
        u64::MAX >> (64 - bits)
    }
}

fn bad(field: &'static str, value: u64, allowed: &'static str) -> Error {
    Error::InvalidLayout {
        field,
        value,
        allowed,
    }
}

impl Layout {
    /// Validates a layout. Each error names the field and the allowed range.
    ///
    /// ```
    /// use snowmint::{Layout, LayoutConfig, ErrorCode};
    /// let err = Layout::new(LayoutConfig { timestamp_bits: 50, ..LayoutConfig::default() }).unwrap_err();
    /// assert_eq!(err.code(), ErrorCode::InvalidLayout);
    /// assert!(err.to_string().contains("timestamp_bits + node_bits + sequence_bits"));
    /// ```
    pub fn new(cfg: LayoutConfig) -> Result<Layout> {
        if cfg.timestamp_bits == 0 || cfg.timestamp_bits > 64 {
            return Err(bad("timestamp_bits", cfg.timestamp_bits.into(), "1..=64"));
        }
        if cfg.node_bits > 63 {
            return Err(bad("node_bits", cfg.node_bits.into(), "0..=63"));
        }
        if cfg.sequence_bits > 63 {
            return Err(bad("sequence_bits", cfg.sequence_bits.into(), "0..=63"));
        }
        let total = cfg.timestamp_bits + cfg.node_bits + cfg.sequence_bits;
        if cfg.use_sign_bit {
            if total > 64 {
                return Err(bad(
                    "timestamp_bits + node_bits + sequence_bits",
                    total.into(),
                    "at most 64",
                ));
            }
        } else if total > 63 {
            return Err(bad(
                "timestamp_bits + node_bits + sequence_bits",
                total.into(),
                "at most 63 (64 with use_sign_bit)",
            ));
        }
        if cfg.tick_ns == 0 {
            return Err(bad("tick_ns", 0, "at least 1 nanosecond"));
        }
        if cfg.epoch_ms > MAX_EPOCH_MS {
            return Err(bad(
                "epoch_ms",
                cfg.epoch_ms,
                "0..=18446744073709 (Unix ms up to year 2554)",
            ));
        }
        let node_max = mask(cfg.node_bits);
        if cfg.node_id_offset > node_max {
            return Err(bad(
                "node_id_offset",
                cfg.node_id_offset,
                "less than the node count",
            ));
        }
        if cfg.node_split_bits > cfg.node_bits {
            return Err(bad(
                "node_split_bits",
                cfg.node_split_bits.into(),
                "0..=node_bits",
            ));
        }
        let max_tick = mask(cfg.timestamp_bits);
        // The lifespan must be expressible in Unix milliseconds.
        let end_ms = cfg.epoch_ms as u128 + ceil_ms((max_tick as u128 + 1) * cfg.tick_ns as u128);
        if end_ms > u64::MAX as u128 {
            return Err(bad(
                "timestamp_bits",
                cfg.timestamp_bits.into(),
                "small enough for the lifespan to fit 64-bit Unix milliseconds at this tick",
            ));
        }
        let position_bits = cfg.timestamp_bits + cfg.sequence_bits;
        // One position stays unused when the positions fill all 64 bits, so that "next free position"
        // always fits in a u64.
        let max_position = if position_bits >= 64 {
            u64::MAX - 1
        } else {
            mask(position_bits)
        };
        Ok(Layout {
            family: Family::Binary,
            cfg,
            preset: None,
            epoch_ns: cfg.epoch_ms * NS_PER_MS,
            max_tick,
            max_position,
            seq_mask: mask(cfg.sequence_bits),
            node_max,
        })
    }

    fn named(name: &'static str, cfg: LayoutConfig) -> Layout {
        match Layout::new(cfg) {
            Ok(mut l) => {
                l.preset = Some(name);
                l
            }
            Err(_) => unreachable!("preset layouts are valid"),
        }
    }

    /// A preset by name: `twitter`, `discord`, `instagram`, `sonyflake`, `hazelcast`, `js53`, `decimal`
    /// (alias `chronicle`). `snowcast` needs an epoch and node count: use [`Layout::snowcast`].
    pub fn preset(name: &str) -> Result<Layout> {
        let base = LayoutConfig::default();
        Ok(match name {
            "twitter" => Layout::twitter(),
            "discord" => Layout::named(
                "discord",
                LayoutConfig {
                    timestamp_bits: 42,
                    epoch_ms: 1_420_070_400_000,
                    use_sign_bit: true,
                    node_split_bits: 5,
                    ..base
                },
            ),
            "instagram" => Layout::named(
                "instagram",
                LayoutConfig {
                    timestamp_bits: 41,
                    node_bits: 13,
                    sequence_bits: 10,
                    epoch_ms: 1_293_840_000_000,
                    use_sign_bit: true,
                    ..base
                },
            ),
            "sonyflake" => Layout::named(
                "sonyflake",
                LayoutConfig {
                    timestamp_bits: 39,
                    node_bits: 16,
                    sequence_bits: 8,
                    order: Order::TimestampSequenceNode,
                    tick_ns: 10 * NS_PER_MS,
                    epoch_ms: 1_409_529_600_000,
                    ..base
                },
            ),
            "hazelcast" => Layout::hazelcast(0)?,
            "js53" => Layout::named(
                "js53",
                LayoutConfig {
                    timestamp_bits: 41,
                    node_bits: 4,
                    sequence_bits: 8,
                    epoch_ms: 1_704_067_200_000,
                    ..base
                },
            ),
            "decimal" | "chronicle" => Layout::decimal(),
            "snowcast" => return Err(Error::PresetNeedsParameters { preset: "snowcast" }),
            _ => return Err(crate::NameKind::Layout.unknown(name)),
        })
    }

    /// Twitter's layout (the default): 41 timestamp bits of 1 ms since 2010-11-04T01:42:54.657Z,
    /// 10 node bits (5 datacenter + 5 worker), 12 sequence bits.
    pub fn twitter() -> Layout {
        Layout::named(
            "twitter",
            LayoutConfig {
                node_split_bits: 5,
                ..LayoutConfig::default()
            },
        )
    }

    /// Hazelcast's Flake ID layout with a `node-id-offset` added to every node ID.
    pub fn hazelcast(node_id_offset: u64) -> Result<Layout> {
        let mut l = Layout::new(LayoutConfig {
            timestamp_bits: 41,
            node_bits: 16,
            sequence_bits: 6,
            order: Order::TimestampSequenceNode,
            tick_ns: NS_PER_MS,
            epoch_ms: 1_514_764_800_000,
            node_id_offset,
            use_sign_bit: false,
            node_split_bits: 0,
        })?;
        l.preset = Some("hazelcast");
        Ok(l)
    }

    /// snowcast's layout: 41 timestamp bits of 1 ms since `epoch_ms`, then `log2(node_count)` node bits
    /// and `23 - log2(node_count)` sequence bits. `node_count` is 128..=8192, rounded up to a power of two.
    pub fn snowcast(epoch_ms: u64, node_count: u64) -> Result<Layout> {
        if !(128..=8192).contains(&node_count) {
            return Err(bad("node_count", node_count, "128..=8192"));
        }
        let node_bits = 64 - (node_count - 1).leading_zeros();
        let mut l = Layout::new(LayoutConfig {
            timestamp_bits: 41,
            node_bits,
            sequence_bits: 23 - node_bits,
            order: Order::TimestampNodeSequence,
            tick_ns: NS_PER_MS,
            epoch_ms,
            node_id_offset: 0,
            use_sign_bit: true,
            node_split_bits: 0,
        })?;
        l.preset = Some("snowcast");
        Ok(l)
    }

    /// Chronicle-style decimal IDs: Unix nanoseconds in 100 ns steps whose lowest two decimal digits are
    /// the host ID 0..=99; e.g. `1640700422954100128` is `2021-12-28T14:07:02.9541001Z`, host 28.
    pub fn decimal() -> Layout {
        let max_tick = (u64::MAX - 99) / 100;
        Layout {
            family: Family::Decimal,
            cfg: LayoutConfig {
                timestamp_bits: 0,
                node_bits: 0,
                sequence_bits: 0,
                order: Order::TimestampNodeSequence,
                tick_ns: 100,
                epoch_ms: 0,
                node_id_offset: 0,
                use_sign_bit: true,
                node_split_bits: 0,
            },
            preset: Some("decimal"),
            epoch_ns: 0,
            max_tick,
            max_position: max_tick,
            seq_mask: 0,
            node_max: 99,
        }
    }

    /// The fields this layout was built from (for a decimal layout: tick 100 ns, epoch 0, no bits).
    pub const fn config(&self) -> &LayoutConfig {
        &self.cfg
    }
    /// Binary or decimal.
    pub const fn family(&self) -> Family {
        self.family
    }
    /// The preset's name, if this layout is a preset.
    pub const fn preset_name(&self) -> Option<&'static str> {
        self.preset
    }
    /// Bits of the timestamp field.
    pub const fn timestamp_bits(&self) -> u32 {
        self.cfg.timestamp_bits
    }
    /// Bits of the node field.
    pub const fn node_bits(&self) -> u32 {
        self.cfg.node_bits
    }
    /// A 64-bit fingerprint of everything that decides which ID a logical position and node give
    /// (family, field widths, order, tick, epoch, node-ID offset, sign bit): two layouts mint the same
    /// IDs exactly when their fingerprints are equal (up to a 2^-64 chance). Stable across versions and
    /// runtimes; a state file records it. The node field's informational split does not count.
    ///
    /// ```
    /// use snowmint::Layout;
    /// assert_eq!(Layout::twitter().fingerprint(), Layout::preset("twitter").unwrap().fingerprint());
    /// assert_ne!(Layout::twitter().fingerprint(), Layout::preset("discord").unwrap().fingerprint());
    /// ```
    pub const fn fingerprint(&self) -> u64 {
        fingerprint_of(&self.fingerprint_words())
    }

    /// What [`Layout::fingerprint`] is made of (a state file records them, to name its layout).
    pub(crate) const fn fingerprint_words(&self) -> [u64; 6] {
        let c = &self.cfg;
        [
            match self.family {
                Family::Binary => 1,
                Family::Decimal => 2,
            },
            c.timestamp_bits as u64 | (c.node_bits as u64) << 16 | (c.sequence_bits as u64) << 32,
            match c.order {
                Order::TimestampNodeSequence => 1,
                Order::TimestampSequenceNode => 2,
            } | (c.use_sign_bit as u64) << 8,
            c.tick_ns,
            c.epoch_ms,
            c.node_id_offset,
        ]
    }
    /// Bits of the sequence field.
    pub const fn sequence_bits(&self) -> u32 {
        self.cfg.sequence_bits
    }
    /// Total width in bits (64 for decimal IDs).
    pub const fn total_bits(&self) -> u32 {
        match self.family {
            Family::Binary => self.cfg.timestamp_bits + self.cfg.node_bits + self.cfg.sequence_bits,
            Family::Decimal => 64,
        }
    }
    /// Field order.
    pub const fn order(&self) -> Order {
        self.cfg.order
    }
    /// Tick length in nanoseconds.
    pub const fn tick_ns(&self) -> u64 {
        self.cfg.tick_ns
    }
    /// Epoch, Unix milliseconds.
    pub const fn epoch_ms(&self) -> u64 {
        self.cfg.epoch_ms
    }
    /// Epoch, Unix nanoseconds.
    pub const fn epoch_ns(&self) -> u64 {
        self.epoch_ns
    }
    /// The node-ID offset added before packing.
    pub const fn node_id_offset(&self) -> u64 {
        self.cfg.node_id_offset
    }
    /// How many node IDs the node field holds (values of the field, before any offset).
    pub const fn node_count(&self) -> u64 {
        self.node_max.saturating_add(1)
    }
    /// Largest node ID a generator may be given (the field's maximum less the offset).
    pub const fn max_node_id(&self) -> u64 {
        self.node_max - self.cfg.node_id_offset
    }
    /// IDs one node can mint per tick.
    pub const fn ids_per_tick(&self) -> u64 {
        self.seq_mask + 1
    }
    /// Largest tick the timestamp field holds.
    pub const fn max_tick(&self) -> u64 {
        self.max_tick
    }
    /// The unit of clock readings for this layout (ns for sub-millisecond ticks, else ms).
    pub const fn clock_unit(&self) -> ClockUnit {
        if self.cfg.tick_ns < NS_PER_MS {
            ClockUnit::Nanos
        } else {
            ClockUnit::Millis
        }
    }
    /// Converts this layout's clock readings to Unix nanoseconds, recognising readings in a wrong unit.
    pub const fn clock_reader(&self) -> ClockReader {
        ClockReader {
            unit: self.clock_unit(),
            lo_ns: self.epoch_ns,
            hi_ns: self.lifespan_end_ms().saturating_mul(NS_PER_MS),
        }
    }
    /// Whether times are shown with nanosecond precision (ticks that are not whole milliseconds).
    pub const fn shows_nanos(&self) -> bool {
        self.cfg.tick_ns % NS_PER_MS != 0
    }
    /// The first Unix millisecond the layout cannot represent (when its timestamp runs out).
    pub const fn lifespan_end_ms(&self) -> u64 {
        // Rounded up: the millisecond holding the last tick's end is still (partly) representable.
        // Checked at construction to fit.
        (self.cfg.epoch_ms as u128
            + ceil_ms((self.max_tick as u128 + 1) * self.cfg.tick_ns as u128)) as u64
    }
    /// The lifespan end as ISO-8601 text.
    pub const fn lifespan_end(&self) -> IsoTime {
        IsoTime::from_unix_ms(self.lifespan_end_ms())
    }
    /// The node field split into (high bits, low bits), e.g. Twitter's `(5, 5)` for datacenter/worker.
    pub const fn node_split(&self) -> Option<(u32, u32)> {
        if self.cfg.node_split_bits == 0 {
            None
        } else {
            Some((
                self.cfg.node_split_bits,
                self.cfg.node_bits - self.cfg.node_split_bits,
            ))
        }
    }

    // ---- internals shared by generation and decoding ----

    pub(crate) const fn max_position(&self) -> u64 {
        self.max_position
    }
    pub(crate) const fn seq_mask(&self) -> u64 {
        self.seq_mask
    }
    pub(crate) const fn node_max(&self) -> u64 {
        self.node_max
    }

    /// Tick of a Unix-nanosecond instant, checking the epoch and the lifespan.
    #[inline]
    pub fn tick_at_ns(&self, unix_ns: u64) -> Result<u64> {
        let since = match unix_ns.checked_sub(self.epoch_ns) {
            Some(d) => d,
            None => {
                return Err(Error::ClockBeforeEpoch {
                    unix_ns,
                    epoch_ms: self.cfg.epoch_ms,
                })
            }
        };
        // Division by a run-time divisor is slow; the common ticks take a constant path. (Written as
        // `since / 1_000_000`, LLVM merges these arms back into the one `div` of the last arm.)
        // The 1 ms tick first, alone: in one match LLVM computes every constant arm before choosing.
        // In WebAssembly a 128-bit multiply is a library call: there the division instruction is faster.
        let tick = if cfg!(target_arch = "wasm32") && self.cfg.tick_ns == 1_000_000 {
            since / 1_000_000
        } else if self.cfg.tick_ns == 1_000_000 {
            ConstDiv::<1_000_000>::div(since)
        } else {
            self.tick_other(since)
        };
        if tick > self.max_tick {
            return Err(Error::LayoutExhausted {
                lifespan_end_ms: self.lifespan_end_ms(),
            });
        }
        Ok(tick)
    }

    /// Ticks in `since` nanoseconds for ticks other than 1 ms.
    #[inline(never)]
    fn tick_other(&self, since: u64) -> u64 {
        match self.cfg.tick_ns {
            10_000_000 => ConstDiv::<10_000_000>::div(since),
            100 => ConstDiv::<100>::div(since),
            1 => since,
            1_000_000_000 => ConstDiv::<1_000_000_000>::div(since),
            t => since / t,
        }
    }

    /// Unix nanoseconds at the start of a tick (saturating past year 2554).
    #[inline]
    pub(crate) fn tick_start_ns(&self, tick: u64) -> u64 {
        tick.saturating_mul(self.cfg.tick_ns)
            .saturating_add(self.epoch_ns)
    }

    /// Checks a node ID against the layout and returns the value of the node field (ID + offset).
    pub fn node_field(&self, node_id: u64) -> Result<u64> {
        match node_id.checked_add(self.cfg.node_id_offset) {
            Some(v) if v <= self.node_max => Ok(v),
            _ => Err(Error::NodeIdOutOfRange {
                node_id,
                offset: self.cfg.node_id_offset,
                max: self.node_max - self.cfg.node_id_offset,
            }),
        }
    }

    /// Packs a logical position (`tick << sequence_bits | sequence`) and a node field value into an ID.
    #[inline(always)]
    pub(crate) fn pack(&self, position: u64, node_field: u64) -> u64 {
        match self.family {
            Family::Decimal => position * 100 + node_field,
            Family::Binary => match self.cfg.order {
                Order::TimestampSequenceNode => (position << self.cfg.node_bits) | node_field,
                Order::TimestampNodeSequence => {
                    let seq = position & self.seq_mask;
                    let tick = position >> self.cfg.sequence_bits;
                    (tick << (self.cfg.node_bits + self.cfg.sequence_bits))
                        | (node_field << self.cfg.sequence_bits)
                        | seq
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ceil_ms, split_ms, NS_PER_MS};

    #[test]
    fn split_ms_is_division_by_a_million() {
        let n = NS_PER_MS as u128;
        let mut x: u128 = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C834;
        let edges = [
            0,
            1,
            n - 1,
            n,
            n + 1,
            u64::MAX as u128,
            u128::MAX,
            u128::MAX - 1,
            1 << 96,
        ];
        for i in 0..if cfg!(miri) { 300 } else { 10_000u32 } {
            x = x
                .wrapping_mul(0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645)
                .wrapping_add(1);
            // Spans of every magnitude: shift the random value down by 0..127 bits.
            let v = match edges.get(i as usize) {
                Some(&e) => e,
                None => x >> (i % 128),
            };
            assert_eq!(split_ms(v), (v / n, (v % n) as u32), "{v}");
            assert_eq!(ceil_ms(v), v.div_ceil(n), "{v}");
        }
    }
}

/// [`Layout::fingerprint`] of its [`Layout::fingerprint_words`].
pub(crate) const fn fingerprint_of(words: &[u64; 6]) -> u64 {
    let mut h: u64 = 0x736e_6f77_6d69_6e74; // "snowmint"
    let mut i = 0;
    while i < words.len() {
        h = crate::generator::mix64(h ^ words[i]).wrapping_add(i as u64);
        i += 1;
    }
    h
}
