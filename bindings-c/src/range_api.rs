//! Range sequences (SPEC §4): compact integer IDs from ranges leased global → datacenter → process.
//! Every decision is the `snowmint-coord` crate's; these functions convert C types and map its codes.
//!
//! Blocking: `snowmint_range_sequence_open` (until the first process range is held) and `_free` (joins
//! the background thread). `snowmint_range_sequence_next` is one atomic step on the held range and
//! waits only when the range is used up and the next one is not ready (at most `wait_ms`).

use super::*;

/// How a range sequence allocates. Fill it with `snowmint_range_options_init`, then change fields.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct snowmint_range_options {
    /// Values a datacenter moves from the global row at a time (default 1000000).
    pub dc_range: u64,
    /// Values a process takes from its datacenter row at a time, at most dc_range (default 1000).
    pub process_range: u64,
    /// The first value (default 1), below 2^bits.
    pub start: u64,
    /// How long `snowmint_range_sequence_next` may wait for a range, milliseconds (default 2000).
    pub wait_ms: u64,
    /// Value width, 1 to 63 bits (default 31: a signed 32-bit column).
    pub bits: u32,
    /// At this percentage of a range used (1 to 100) the next one is fetched (default 50; 100: none
    /// pre-allocated, the next is taken when the current one is used up).
    pub threshold_percent: u32,
}

/// What a range sequence handle has done (`snowmint_range_sequence_stats`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct snowmint_range_stats {
    /// Values handed out by this handle.
    pub values: u64,
    /// Ranges this process took from its datacenter row.
    pub process_ranges: u64,
    /// Ranges this process moved from the global row to its datacenter row.
    pub dc_ranges: u64,
    /// Times minting had to wait for a range.
    pub late: u64,
    /// Total time minting waited, nanoseconds.
    pub wait_ns: u64,
    /// The current range [current_start, current_end).
    pub current_start: u64,
    /// End (exclusive) of the current range.
    pub current_end: u64,
    /// The pre-allocated next range [ready_start, ready_end); both 0 when none is ready.
    pub ready_start: u64,
    /// End (exclusive) of the pre-allocated range.
    pub ready_end: u64,
}

/// A range sequence handle. Thread-safe; free with `snowmint_range_sequence_free`.
pub struct snowmint_range_sequence {
    inner: coord::RangeSequence,
}

impl From<coord::RangeOptions> for snowmint_range_options {
    fn from(o: coord::RangeOptions) -> Self {
        snowmint_range_options {
            dc_range: o.dc_range,
            process_range: o.process_range,
            start: o.start,
            wait_ms: o.wait.as_millis() as u64,
            bits: o.bits,
            threshold_percent: o.threshold_percent,
        }
    }
}

/// Fills `*options_out` with the defaults.
#[no_mangle]
pub unsafe extern "C" fn snowmint_range_options_init(
    options_out: *mut snowmint_range_options,
) -> snowmint_result {
    guard(|| {
        nonnull!(options_out);
        // SAFETY: non-NULL; the caller passes a writable snowmint_range_options.
        unsafe { options_out.write(coord::RangeOptions::default().into()) };
        Ok(())
    })
}

/// Opens range sequence `name` for datacenter `dc`: `global_store` is shared by every datacenter,
/// `local_store` is the datacenter's own (NULL: the global one); each is "file:///DIR",
/// "etcd://HOST:PORT[,…]/PREFIX" or "postgres://USER@HOST:PORT/DB". `options` may be NULL (defaults).
/// Blocks until the first process range is held.
///
/// Errors: INVALID_ARGUMENT (a malformed URL or name, a width of 0 or over 63 bits, ranges larger than
/// the width, a process range larger than the datacenter range, a start value above the width; the
/// message says which), STORE_UNAVAILABLE, SEQUENCER_CONFLICT (the name exists with another width or
/// start), RANGE_EXHAUSTED. On success `*sequence_out` is a new handle: free it with
/// `snowmint_range_sequence_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_range_sequence_open(
    name: *const c_char,
    dc: *const c_char,
    global_store: *const c_char,
    local_store: *const c_char,
    options: *const snowmint_range_options,
    sequence_out: *mut *mut snowmint_range_sequence,
) -> snowmint_result {
    guard(|| {
        nonnull!(name);
        nonnull!(dc);
        nonnull!(global_store);
        nonnull!(sequence_out);
        // SAFETY: non-NULL NUL-terminated strings (caller contract); local_store checked for NULL.
        let (name, dc, global) = unsafe {
            (
                coord_api::text_arg(name, "name is not UTF-8")?,
                coord_api::text_arg(dc, "dc is not UTF-8")?,
                coord_api::text_arg(global_store, "global_store is not UTF-8")?,
            )
        };
        let local = if local_store.is_null() {
            global
        } else {
            // SAFETY: as above.
            unsafe { coord_api::text_arg(local_store, "local_store is not UTF-8") }?
        };
        let o = if options.is_null() {
            coord::RangeOptions::default()
        } else {
            // SAFETY: non-NULL; the caller passes a readable snowmint_range_options.
            let c = unsafe { options.read() };
            coord::RangeOptions {
                dc_range: c.dc_range,
                process_range: c.process_range,
                threshold_percent: c.threshold_percent,
                bits: c.bits,
                start: c.start,
                wait: std::time::Duration::from_millis(c.wait_ms.min(3_600_001)),
            }
        };
        let inner = coord::RangeSequence::open_urls(name, dc, global, local, o)?;
        // SAFETY: non-NULL.
        unsafe {
            put(
                sequence_out,
                Box::into_raw(Box::new(snowmint_range_sequence { inner })),
            )
        };
        Ok(())
    })
}

/// The next value into `*value_out`: one atomic step on the held range. STORE_UNAVAILABLE when no range
/// could be had within `wait_ms` (the datacenter's store unreachable), RANGE_EXHAUSTED once every
/// value of the width is out; `*value_out` is written only on success.
#[no_mangle]
pub unsafe extern "C" fn snowmint_range_sequence_next(
    sequence: *const snowmint_range_sequence,
    value_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(sequence);
        nonnull!(value_out);
        // SAFETY: non-NULL live handle.
        let v = unsafe { &*sequence }.inner.next_id()?;
        // SAFETY: non-NULL.
        unsafe { value_out.write(v) };
        Ok(())
    })
}

/// `n` increasing values into `values_out[0..n]` (written only on success; n = 0 does nothing).
#[no_mangle]
pub unsafe extern "C" fn snowmint_range_sequence_next_n(
    sequence: *const snowmint_range_sequence,
    values_out: *mut u64,
    n: usize,
) -> snowmint_result {
    guard(|| {
        nonnull!(sequence);
        nonnull!(values_out);
        // SAFETY: non-NULL live handle.
        let values = unsafe { &*sequence }.inner.next_ids(n)?;
        // SAFETY: the caller passes room for n values.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), values_out, values.len()) };
        Ok(())
    })
}

/// Fills `*stats_out` with what the handle has done.
#[no_mangle]
pub unsafe extern "C" fn snowmint_range_sequence_stats(
    sequence: *const snowmint_range_sequence,
    stats_out: *mut snowmint_range_stats,
) -> snowmint_result {
    guard(|| {
        nonnull!(sequence);
        nonnull!(stats_out);
        // SAFETY: non-NULL live handle.
        let s = unsafe { &*sequence }.inner.stats();
        let (ready_start, ready_end) = s.ready.unwrap_or((0, 0));
        // SAFETY: non-NULL.
        unsafe {
            stats_out.write(snowmint_range_stats {
                values: s.values,
                process_ranges: s.process_ranges,
                dc_ranges: s.dc_ranges,
                late: s.late,
                wait_ns: s.wait_ns,
                current_start: s.current.0,
                current_end: s.current.1,
                ready_start,
                ready_end,
            })
        };
        Ok(())
    })
}

/// Frees a range sequence handle (values of its held ranges never handed out stay unused: a hole,
/// never a repeat). NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn snowmint_range_sequence_free(sequence: *mut snowmint_range_sequence) {
    if sequence.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: a handle from snowmint_range_sequence_open, freed once (caller contract).
        drop(unsafe { Box::from_raw(sequence) });
    })
}
