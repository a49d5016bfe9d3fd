//! Layouts and the enumerations passed as `uint32_t` (presets, orders, policies, encodings).

use super::*;

// ---------------------------------------------------------------------------------------------------
// Enumerations passed as uint32_t (C may pass any number: each is validated)
// ---------------------------------------------------------------------------------------------------

/// Layout presets for `snowmint_layout_new_from_preset` (snowcast: `snowmint_layout_new_snowcast`).
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum snowmint_preset {
    /// Twitter (the default): 41 timestamp bits of 1 ms, 10 node bits, 12 sequence bits.
    Twitter = 0,
    /// Discord: 42 / 10 / 12, epoch 2015-01-01.
    Discord = 1,
    /// Instagram: 41 / 13 / 10, epoch 2011-01-01.
    Instagram = 2,
    /// Sonyflake: 39 timestamp bits of 10 ms, 8 sequence bits, 16 node bits.
    Sonyflake = 3,
    /// Hazelcast Flake IDs: 41 / 6 sequence / 16 node, node-id offset 0.
    Hazelcast = 4,
    /// 53-bit IDs that JavaScript Numbers carry exactly.
    Js53 = 5,
    /// Chronicle-style decimal IDs (Unix ns with the last two decimal digits a host ID 0..99).
    Decimal = 6,
}

const PRESET_BY_NUMBER: [&str; 7] = [
    "twitter",
    "discord",
    "instagram",
    "sonyflake",
    "hazelcast",
    "js53",
    "decimal",
];

/// Field order of a layout (`snowmint_layout_config.order`).
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum snowmint_order {
    /// timestamp | node | sequence (Twitter, Discord, Instagram, snowcast).
    TimestampNodeSequence = 0,
    /// timestamp | sequence | node (Sonyflake, Hazelcast).
    TimestampSequenceNode = 1,
}

/// What a generator does when logical time would run more than max_ahead ahead of the clock.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum snowmint_policy {
    /// Sleep until the clock catches up (the default in C).
    Wait = 0,
    /// Return SNOWMINT_RESULT_TOO_FAR_AHEAD (see `snowmint_error_info.retry_after_ms`).
    Fail = 1,
    /// Any backwards clock step is SNOWMINT_RESULT_CLOCK_MOVED_BACKWARDS (Twitter's original rule).
    Strict = 2,
}

/// Where each tick's sequence starts.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum snowmint_sequence_start {
    /// At 0 (the default).
    Zero = 0,
    /// At a pseudo-random value seeded from the operating system.
    Random = 1,
    /// At a pseudo-random value from `snowmint_options.seed` (reproducible; tests).
    Seeded = 2,
}

/// String forms of an ID.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum snowmint_encoding {
    /// Decimal digits, no padding (at most 20).
    Dec = 0,
    /// 16 lowercase hex digits (parsing also accepts a 0x prefix and upper case).
    Hex = 1,
    /// 13 Crockford base32 characters.
    Base32 = 2,
    /// 11 base58 characters (Bitcoin alphabet).
    Base58 = 3,
}

/// The unit of an injected clock's readings for a layout.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum snowmint_clock_unit {
    /// Unix milliseconds (layouts whose tick is at least 1 ms).
    Ms = 0,
    /// Unix nanoseconds (layouts with sub-millisecond ticks, e.g. decimal).
    Ns = 1,
}

pub(crate) fn encoding_of(n: u32) -> Result<Encoding, Fail> {
    match n {
        0 => Ok(Encoding::Decimal),
        1 => Ok(Encoding::Hex),
        2 => Ok(Encoding::Base32),
        3 => Ok(Encoding::Base58),
        _ => Err(Fail::Argument("encoding is not one of SNOWMINT_ENCODING_*")),
    }
}

pub(crate) fn encoding_number(e: Encoding) -> u32 {
    match e {
        Encoding::Decimal => 0,
        Encoding::Hex => 1,
        Encoding::Base32 => 2,
        Encoding::Base58 => 3,
    }
}

pub(crate) fn order_number(o: Order) -> u32 {
    match o {
        Order::TimestampNodeSequence => 0,
        Order::TimestampSequenceNode => 1,
    }
}

pub(crate) fn policy_number(p: Policy) -> u32 {
    match p {
        Policy::Wait => 0,
        Policy::Fail => 1,
        Policy::Strict => 2,
    }
}

/// Looks up `SNOWMINT_ENCODING_*` by name: "dec" (or "decimal"), "hex", "base32", "base58".
#[no_mangle]
pub unsafe extern "C" fn snowmint_encoding_from_name(
    name: *const c_char,
    encoding_out: *mut u32,
) -> snowmint_result {
    guard(|| {
        nonnull!(name);
        nonnull!(encoding_out);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let s = unsafe { c_str(name, "name") }
            .map_err(|_| Fail::Argument("encoding name is not UTF-8"))?;
        let e = Encoding::from_name(s)?;
        // SAFETY: non-NULL.
        unsafe { put(encoding_out, encoding_number(e)) };
        Ok(())
    })
}

/// Looks up `SNOWMINT_POLICY_*` by name: "wait", "fail" or "strict".
#[no_mangle]
pub unsafe extern "C" fn snowmint_policy_from_name(
    name: *const c_char,
    policy_out: *mut u32,
) -> snowmint_result {
    guard(|| {
        nonnull!(name);
        nonnull!(policy_out);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let s = unsafe { c_str(name, "name") }
            .map_err(|_| Fail::Argument("policy name is not UTF-8"))?;
        let p = Policy::from_name(s)?;
        // SAFETY: non-NULL.
        unsafe { put(policy_out, policy_number(p)) };
        Ok(())
    })
}

/// Looks up `SNOWMINT_ORDER_*` by name: "timestamp_node_sequence" or "timestamp_sequence_node".
#[no_mangle]
pub unsafe extern "C" fn snowmint_order_from_name(
    name: *const c_char,
    order_out: *mut u32,
) -> snowmint_result {
    guard(|| {
        nonnull!(name);
        nonnull!(order_out);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let s = unsafe { c_str(name, "name") }
            .map_err(|_| Fail::Argument("order name is not UTF-8"))?;
        let o = Order::from_name(s)?;
        // SAFETY: non-NULL.
        unsafe { put(order_out, order_number(o)) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------------
// Layouts
// ---------------------------------------------------------------------------------------------------

/// An immutable, validated layout. Create with one of the `snowmint_layout_new*` functions; free with
/// `snowmint_layout_free`. Safe to share between threads.
pub struct snowmint_layout {
    inner: Layout,
}

/// The fields of a custom layout. Initialise with `snowmint_layout_config_default` (Twitter's layout),
/// change fields, then call `snowmint_layout_new`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct snowmint_layout_config {
    /// Bits of the timestamp field (1..=64).
    pub timestamp_bits: u32,
    /// Bits of the node field (0..=63).
    pub node_bits: u32,
    /// Bits of the sequence field (0..=63).
    pub sequence_bits: u32,
    /// One of `SNOWMINT_ORDER_*`.
    pub order: u32,
    /// Tick length in nanoseconds (at least 1).
    pub tick_ns: u64,
    /// Epoch, Unix milliseconds.
    pub epoch_ms: u64,
    /// Added to every node ID before packing (Hazelcast's node-id-offset).
    pub node_id_offset: u64,
    /// Allow 64 bits in all (IDs may then be negative as int64_t); otherwise at most 63.
    pub use_sign_bit: bool,
    /// Bits of the high part of a two-part node field (Twitter: 5); 0 for one field.
    pub node_split_bits: u32,
}

pub(crate) fn new_layout(l: Layout, out: *mut *mut snowmint_layout) {
    let p = Box::into_raw(Box::new(snowmint_layout { inner: l }));
    // SAFETY: the caller checked `out` non-NULL.
    unsafe { put(out, p) };
}

pub(crate) unsafe fn layout_ref<'a>(p: *const snowmint_layout) -> &'a Layout {
    // SAFETY: the caller checked non-NULL; a live handle from snowmint_layout_new*.
    unsafe { &(*p).inner }
}

/// Writes Twitter's layout fields into `*config_out` (a starting point for custom layouts).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_config_default(
    config_out: *mut snowmint_layout_config,
) -> snowmint_result {
    guard(|| {
        nonnull!(config_out);
        let c = LayoutConfig::default();
        let cfg = snowmint_layout_config {
            timestamp_bits: c.timestamp_bits,
            node_bits: c.node_bits,
            sequence_bits: c.sequence_bits,
            order: order_number(c.order),
            tick_ns: c.tick_ns,
            epoch_ms: c.epoch_ms,
            node_id_offset: c.node_id_offset,
            use_sign_bit: c.use_sign_bit,
            node_split_bits: c.node_split_bits,
        };
        // SAFETY: non-NULL.
        unsafe { put(config_out, cfg) };
        Ok(())
    })
}

/// Validates a custom layout. On SNOWMINT_RESULT_INVALID_LAYOUT the message
/// (`snowmint_last_error_message`) names the field and the allowed range.
///
/// On success `*layout_out` is a new handle: free it with `snowmint_layout_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_new(
    config: *const snowmint_layout_config,
    layout_out: *mut *mut snowmint_layout,
) -> snowmint_result {
    guard(|| {
        nonnull!(config);
        nonnull!(layout_out);
        // SAFETY: non-NULL; a readable snowmint_layout_config.
        let c = unsafe { *config };
        let order = match c.order {
            0 => Order::TimestampNodeSequence,
            1 => Order::TimestampSequenceNode,
            n => {
                return Err(Fail::Core(Error::InvalidLayout {
                    field: "order",
                    value: n.into(),
                    allowed: "SNOWMINT_ORDER_TIMESTAMP_NODE_SEQUENCE (0) or SNOWMINT_ORDER_TIMESTAMP_SEQUENCE_NODE (1)",
                }))
            }
        };
        let l = Layout::new(LayoutConfig {
            timestamp_bits: c.timestamp_bits,
            node_bits: c.node_bits,
            sequence_bits: c.sequence_bits,
            order,
            tick_ns: c.tick_ns,
            epoch_ms: c.epoch_ms,
            node_id_offset: c.node_id_offset,
            use_sign_bit: c.use_sign_bit,
            node_split_bits: c.node_split_bits,
        })?;
        new_layout(l, layout_out);
        Ok(())
    })
}

/// A preset by name: "twitter", "discord", "instagram", "sonyflake", "hazelcast", "js53", "decimal"
/// (alias "chronicle"). "snowcast" needs parameters: use `snowmint_layout_new_snowcast`.
///
/// On success `*layout_out` is a new handle: free it with `snowmint_layout_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_new_preset(
    name: *const c_char,
    layout_out: *mut *mut snowmint_layout,
) -> snowmint_result {
    guard(|| {
        nonnull!(name);
        nonnull!(layout_out);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let s = unsafe { c_str(name, "preset") }.unwrap_or("\u{fffd}");
        let l = Layout::preset(s)?;
        new_layout(l, layout_out);
        Ok(())
    })
}

/// A preset by number, one of `SNOWMINT_PRESET_*`.
///
/// On success `*layout_out` is a new handle: free it with `snowmint_layout_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_new_from_preset(
    preset: u32,
    layout_out: *mut *mut snowmint_layout,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout_out);
        let Some(name) = PRESET_BY_NUMBER.get(preset as usize) else {
            return Err(Fail::Core(Error::InvalidLayout {
                field: "preset",
                value: preset.into(),
                allowed: "one of SNOWMINT_PRESET_* (0..=6)",
            }));
        };
        new_layout(Layout::preset(name)?, layout_out);
        Ok(())
    })
}

/// snowcast's layout: 41 timestamp bits of 1 ms since `epoch_ms`, log2(node_count) node bits,
/// 23 - log2(node_count) sequence bits; `node_count` is 128..=8192, rounded up to a power of two.
///
/// On success `*layout_out` is a new handle: free it with `snowmint_layout_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_new_snowcast(
    epoch_ms: u64,
    node_count: u64,
    layout_out: *mut *mut snowmint_layout,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout_out);
        new_layout(Layout::snowcast(epoch_ms, node_count)?, layout_out);
        Ok(())
    })
}

/// Hazelcast's layout with `node_id_offset` added to every node ID.
///
/// On success `*layout_out` is a new handle: free it with `snowmint_layout_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_new_hazelcast(
    node_id_offset: u64,
    layout_out: *mut *mut snowmint_layout,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout_out);
        new_layout(Layout::hazelcast(node_id_offset)?, layout_out);
        Ok(())
    })
}

/// Frees a layout handle. NULL is ignored. Generators made from it stay valid (they hold a copy).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_free(layout: *mut snowmint_layout) {
    if layout.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: a handle from snowmint_layout_new*, freed once (caller contract).
        drop(unsafe { Box::from_raw(layout) });
    })
}

/// Size of the character arrays holding ISO-8601 text, including the NUL.
pub const SNOWMINT_ISO_CAPACITY: usize = 48;

/// Buffer size that holds any string form of an ID, including the NUL.
pub const SNOWMINT_ENCODED_CAPACITY: usize = 21;

/// Everything a layout reports (see `snowmint_layout_get_info`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct snowmint_layout_info {
    /// Total width in bits (64 for decimal IDs).
    pub total_bits: u32,
    /// Bits of the timestamp field (0 for decimal IDs).
    pub timestamp_bits: u32,
    /// Bits of the node field (0 for decimal IDs).
    pub node_bits: u32,
    /// Bits of the sequence field (0 for decimal IDs).
    pub sequence_bits: u32,
    /// One of `SNOWMINT_ORDER_*`.
    pub order: u32,
    /// One of `SNOWMINT_CLOCK_UNIT_*`: the unit an injected clock returns for this layout.
    pub clock_unit: u32,
    /// Tick length in nanoseconds.
    pub tick_ns: u64,
    /// Epoch, Unix milliseconds.
    pub epoch_ms: u64,
    /// Node-ID offset added before packing.
    pub node_id_offset: u64,
    /// How many values the node field holds.
    pub node_count: u64,
    /// Largest node ID a generator accepts (field maximum less the offset).
    pub max_node_id: u64,
    /// IDs one node can mint per tick.
    pub ids_per_tick: u64,
    /// Largest tick the timestamp field holds.
    pub max_tick: u64,
    /// The first Unix millisecond the layout cannot represent.
    pub lifespan_end_ms: u64,
    /// `lifespan_end_ms` as ISO-8601 UTC, NUL-terminated, e.g. "2080-07-10T17:30:30.209Z".
    pub lifespan_end_iso: [c_char; SNOWMINT_ISO_CAPACITY],
}

pub(crate) fn iso_array(text: &str) -> [c_char; SNOWMINT_ISO_CAPACITY] {
    let mut a = [0 as c_char; SNOWMINT_ISO_CAPACITY];
    for (slot, b) in a
        .iter_mut()
        .zip(text.bytes().take(SNOWMINT_ISO_CAPACITY - 1))
    {
        *slot = b as c_char;
    }
    a
}

/// Fills `*info_out` with the layout's widths, capacity and lifespan.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_get_info(
    layout: *const snowmint_layout,
    info_out: *mut snowmint_layout_info,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout);
        nonnull!(info_out);
        // SAFETY: non-NULL live handle.
        let l = unsafe { layout_ref(layout) };
        let info = snowmint_layout_info {
            total_bits: l.total_bits(),
            timestamp_bits: l.timestamp_bits(),
            node_bits: l.node_bits(),
            sequence_bits: l.sequence_bits(),
            order: order_number(l.order()),
            clock_unit: match l.clock_unit() {
                ClockUnit::Millis => 0,
                ClockUnit::Nanos => 1,
            },
            tick_ns: l.tick_ns(),
            epoch_ms: l.epoch_ms(),
            node_id_offset: l.node_id_offset(),
            node_count: l.node_count(),
            max_node_id: l.max_node_id(),
            ids_per_tick: l.ids_per_tick(),
            max_tick: l.max_tick(),
            lifespan_end_ms: l.lifespan_end_ms(),
            lifespan_end_iso: iso_array(l.lifespan_end().to_buf().as_str()),
        };
        // SAFETY: non-NULL.
        unsafe { put(info_out, info) };
        Ok(())
    })
}

/// Converts an injected clock's floating-point reading (in the layout's clock unit, see
/// `snowmint_layout_info.clock_unit`) to Unix nanoseconds, exactly as a generator with a
/// `clock_f64` does: NaN, infinities, negatives, fractions and values above 2^53 - 1 are
/// SNOWMINT_RESULT_INVALID_CLOCK, never rounded.
#[no_mangle]
pub unsafe extern "C" fn snowmint_clock_reading_to_ns(
    layout: *const snowmint_layout,
    reading: f64,
    ns_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout);
        nonnull!(ns_out);
        // SAFETY: non-NULL live handle.
        let ns = unsafe { layout_ref(layout) }
            .clock_reader()
            .f64_to_ns(reading)?;
        // SAFETY: non-NULL.
        unsafe { put(ns_out, ns) };
        Ok(())
    })
}
