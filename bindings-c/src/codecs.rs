//! Decoding, composing and the string forms of IDs.

use super::*;

// ---------------------------------------------------------------------------------------------------
// Decoding, composing, string forms
// ---------------------------------------------------------------------------------------------------

/// An ID taken apart under a layout (see `snowmint_decode`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct snowmint_decoded {
    /// The ID.
    pub id: u64,
    /// Ticks since the layout's epoch.
    pub timestamp_ticks: u64,
    /// Unix time of the tick's start, whole milliseconds.
    pub unix_ms: u64,
    /// Nanoseconds past `unix_ms` (non-zero only for ticks that are not whole milliseconds).
    pub sub_ms_ns: u32,
    /// The node field as stored (node ID plus the layout's node_id_offset).
    pub node: u64,
    /// The sequence field (0 for decimal IDs).
    pub sequence: u64,
    /// The time as ISO-8601 UTC, NUL-terminated (millisecond digits, or nanosecond digits for layouts
    /// whose tick is not a whole number of milliseconds).
    pub iso: [c_char; SNOWMINT_ISO_CAPACITY],
}

/// Takes `id` apart under `layout`. An ID with bits above the layout's width is
/// SNOWMINT_RESULT_INVALID_ID.
#[no_mangle]
pub unsafe extern "C" fn snowmint_decode(
    layout: *const snowmint_layout,
    id: u64,
    decoded_out: *mut snowmint_decoded,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout);
        nonnull!(decoded_out);
        // SAFETY: non-NULL live handle.
        let d = unsafe { layout_ref(layout) }.decode(id)?;
        let out = snowmint_decoded {
            id: d.id,
            timestamp_ticks: d.timestamp_ticks,
            unix_ms: d.unix_ms,
            sub_ms_ns: d.sub_ms_ns,
            node: d.node,
            sequence: d.sequence,
            iso: iso_array(d.iso().to_buf().as_str()),
        };
        // SAFETY: non-NULL.
        unsafe { put(decoded_out, out) };
        Ok(())
    })
}

/// Composes an ID from a tick count, a node field value and a sequence number, each checked against
/// its field (LAYOUT_EXHAUSTED, NODE_ID_OUT_OF_RANGE, INVALID_ARGUMENT).
#[no_mangle]
pub unsafe extern "C" fn snowmint_compose(
    layout: *const snowmint_layout,
    timestamp_ticks: u64,
    node: u64,
    sequence: u64,
    id_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout);
        nonnull!(id_out);
        // SAFETY: non-NULL live handle.
        let id = unsafe { layout_ref(layout) }.compose(timestamp_ticks, node, sequence)?;
        // SAFETY: non-NULL.
        unsafe { put(id_out, id) };
        Ok(())
    })
}

/// The smallest ID any generator of `layout` can mint at or after Unix millisecond `unix_ms`
/// (for range queries: "created at or after T" is `id >= *id_out`).
#[no_mangle]
pub unsafe extern "C" fn snowmint_min_id_at_ms(
    layout: *const snowmint_layout,
    unix_ms: u64,
    id_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout);
        nonnull!(id_out);
        // SAFETY: non-NULL live handle.
        let id = unsafe { layout_ref(layout) }.min_id_at_ms(unix_ms)?;
        // SAFETY: non-NULL.
        unsafe { put(id_out, id) };
        Ok(())
    })
}

/// `snowmint_min_id_at_ms` for a Unix-nanosecond instant.
#[no_mangle]
pub unsafe extern "C" fn snowmint_min_id_at_ns(
    layout: *const snowmint_layout,
    unix_ns: u64,
    id_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout);
        nonnull!(id_out);
        // SAFETY: non-NULL live handle.
        let id = unsafe { layout_ref(layout) }.min_id_at_ns(unix_ns)?;
        // SAFETY: non-NULL.
        unsafe { put(id_out, id) };
        Ok(())
    })
}

/// Writes `id` in a string form (one of `SNOWMINT_ENCODING_*`) into `buf` (`cap` bytes), NUL-terminated.
/// A buffer of SNOWMINT_ENCODED_CAPACITY bytes always suffices. `*len_out` (optional) receives the
/// length without the NUL; on SNOWMINT_RESULT_BUFFER_TOO_SMALL it receives that length too (the buffer
/// needs length + 1 bytes) and `buf` is untouched. `buf` may be NULL when `cap` is 0.
#[no_mangle]
pub unsafe extern "C" fn snowmint_encode(
    encoding: u32,
    id: u64,
    buf: *mut c_char,
    cap: usize,
    len_out: *mut usize,
) -> snowmint_result {
    guard(|| {
        let e = encoding_of(encoding)?;
        // SAFETY: forwarded caller contract.
        unsafe { write_text(e.encode(id).as_str(), buf, cap, len_out) }
    })
}

/// Parses a NUL-terminated string in one form (one of `SNOWMINT_ENCODING_*`). A malformed string is
/// SNOWMINT_RESULT_PARSE; `snowmint_last_error_info` gives the 0-based position and
/// `snowmint_last_error_message` names the bad character.
#[no_mangle]
pub unsafe extern "C" fn snowmint_parse(
    encoding: u32,
    text: *const c_char,
    id_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        let e = encoding_of(encoding)?;
        nonnull!(text);
        nonnull!(id_out);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let s = unsafe { c_str(text, e.name()) }?;
        let id = e.parse(s)?;
        // SAFETY: non-NULL.
        unsafe { put(id_out, id) };
        Ok(())
    })
}

/// Parses a NUL-terminated string in any form, told apart by shape: all digits → decimal; 0x… or 16
/// hex digits → hex; 13 characters → base32; 11 → base58.
#[no_mangle]
pub unsafe extern "C" fn snowmint_parse_any(
    text: *const c_char,
    id_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(text);
        nonnull!(id_out);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let s = unsafe { c_str(text, "any") }?;
        let id = parse_any(s)?;
        // SAFETY: non-NULL.
        unsafe { put(id_out, id) };
        Ok(())
    })
}
