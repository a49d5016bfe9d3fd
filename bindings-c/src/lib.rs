//! C API for snowmint (`#include <snowmint.h>`).
//!
//! A thin layer: it converts C types to the core's, maps the core's errors to `snowmint_result` codes,
//! and never re-implements sequencing, layouts, parsing or formatting. Conventions follow rustls-ffi:
//! every fallible function returns a [`snowmint_result`]; outputs go through `*_out` pointers written
//! only on success; every pointer is NULL-checked; every body runs inside `catch_unwind`, so a panic
//! becomes `SNOWMINT_RESULT_PANIC` instead of unwinding into C.
//!
//! # Safety (every `unsafe extern "C"` function)
//! Each pointer argument is either NULL (reported as `SNOWMINT_RESULT_NULL_POINTER` where it is
//! required) or valid for the access the header documents: handles come from the matching `_new`
//! function and are not yet freed, `*_out` pointers are writable, strings are NUL-terminated, buffers
//! hold the stated number of elements. A plain `snowmint_generator` is used by one thread at a time.
#![allow(non_camel_case_types)]
// The contract above is the header's; repeating it on each function adds nothing for C readers.
#![allow(clippy::missing_safety_doc)]
// b"…\0" literals keep the workspace's rust-version (1.75; C-string literals need 1.77).
#![allow(clippy::manual_c_str_literals)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr, OsStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use snowmint_coord as coord;
use snowmint_core as snowmint;
use snowmint_core::state_file::{SharedState, StateFile};
use snowmint_core::{
    parse_any, Clock, ClockUnit, Encoding, Error, ErrorCode, FastClock, Generator, Layout,
    LayoutConfig, Options, Order, ParseErrorKind, Policy, SharedGenerator,
};

// ---------------------------------------------------------------------------------------------------
// Result codes
// ---------------------------------------------------------------------------------------------------

/// The result of every fallible call: `SNOWMINT_RESULT_OK` (0) or an error code. The numbers are the
/// core's `ErrorCode` numbers, the same codes every language reports; they are never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum snowmint_result {
    /// Success.
    Ok = 0,
    /// A layout field is out of range or the fields do not fit together (the message names the field).
    InvalidLayout = 1,
    /// A node ID does not fit the layout's node field.
    NodeIdOutOfRange = 2,
    /// The clock stepped backwards under the strict policy.
    ClockMovedBackwards = 3,
    /// The clock reads a time before the layout's epoch.
    ClockBeforeEpoch = 4,
    /// Logical time would run more than max_ahead ahead of the clock (fail policy, or a frozen clock).
    TooFarAhead = 5,
    /// The layout's timestamp field has run out.
    LayoutExhausted = 6,
    /// A string is not a valid ID in the requested form.
    Parse = 7,
    /// The node-ID lease was lost.
    LeaseLost = 8,
    /// A clock reading is not a finite, non-negative whole number in range.
    InvalidClock = 9,
    /// An ID does not fit the layout.
    InvalidId = 10,
    /// Any other argument is out of range.
    InvalidArgument = 11,
    /// A generator was used in a forked child process.
    Forked = 12,
    /// Every node ID of the sequencer is held by another live holder.
    NodeIdsExhausted = 13,
    /// A sequencer of this name exists with another configuration.
    SequencerConflict = 14,
    /// The sequencer was destroyed; its handles never mint again.
    SequencerDestroyed = 15,
    /// The coordination store cannot be reached, refused the request or holds unreadable data.
    StoreUnavailable = 16,
    /// A state file cannot be used: another layout or node ID, not a state file, damaged, truncated,
    /// unlinked or replaced while in use, or refused by the OS (the message says which).
    StateFileMismatch = 17,
    /// A range sequence has handed out every value of its width.
    RangeExhausted = 18,
    /// An ID service cannot be reached (clients of SPEC §6a; not raised by the C API today).
    ServiceUnavailable = 19,
    /// A required pointer argument was NULL.
    NullPointer = 100,
    /// An output buffer is too small; the needed length is reported.
    BufferTooSmall = 101,
    /// A panic was caught at the boundary (a bug: please report it).
    Panic = 102,
}

impl snowmint_result {
    fn from_code(code: ErrorCode) -> snowmint_result {
        use snowmint_result as R;
        match code {
            ErrorCode::InvalidLayout => R::InvalidLayout,
            ErrorCode::NodeIdOutOfRange => R::NodeIdOutOfRange,
            ErrorCode::ClockMovedBackwards => R::ClockMovedBackwards,
            ErrorCode::ClockBeforeEpoch => R::ClockBeforeEpoch,
            ErrorCode::TooFarAhead => R::TooFarAhead,
            ErrorCode::LayoutExhausted => R::LayoutExhausted,
            ErrorCode::Parse => R::Parse,
            ErrorCode::LeaseLost => R::LeaseLost,
            ErrorCode::InvalidClock => R::InvalidClock,
            ErrorCode::InvalidId => R::InvalidId,
            ErrorCode::InvalidArgument => R::InvalidArgument,
            ErrorCode::Forked => R::Forked,
            ErrorCode::NodeIdsExhausted => R::NodeIdsExhausted,
            ErrorCode::SequencerConflict => R::SequencerConflict,
            ErrorCode::SequencerDestroyed => R::SequencerDestroyed,
            ErrorCode::StoreUnavailable => R::StoreUnavailable,
            ErrorCode::StateFileMismatch => R::StateFileMismatch,
            ErrorCode::RangeExhausted => R::RangeExhausted,
            ErrorCode::ServiceUnavailable => R::ServiceUnavailable,
            ErrorCode::NullPointer => R::NullPointer,
            ErrorCode::BufferTooSmall => R::BufferTooSmall,
            // A code added to the core later: the unit test `codes_match_core` fails until it is here.
            _ => R::Panic,
        }
    }

    #[cfg(test)]
    fn code(self) -> Option<ErrorCode> {
        ErrorCode::from_u32(self as u32)
    }
}

/// Why a call failed, as recorded for `snowmint_last_error_*`.
#[derive(Clone, Copy, Debug)]
enum Fail {
    Core(Error),
    /// A coordination error; its message is in `COORD_MESSAGE` (this thread's last one).
    Coord(ErrorCode),
    Null(&'static str),
    TooSmall {
        needed: usize,
    },
    Argument(&'static str),
    Panic,
}

impl Fail {
    fn result(&self) -> snowmint_result {
        match self {
            Fail::Core(e) => snowmint_result::from_code(e.code()),
            Fail::Coord(code) => snowmint_result::from_code(*code),
            Fail::Null(_) => snowmint_result::NullPointer,
            Fail::TooSmall { .. } => snowmint_result::BufferTooSmall,
            Fail::Argument(_) => snowmint_result::InvalidArgument,
            Fail::Panic => snowmint_result::Panic,
        }
    }

    fn message(&self) -> String {
        match self {
            // The core's message shows the Rust call; say it in C.
            Fail::Core(Error::PresetNeedsParameters { preset }) => format!(
                "invalid layout: the {preset} preset needs an epoch and a node count: call \
                 snowmint_layout_new_snowcast(epoch_ms, node_count, &layout) (epoch_ms: Unix ms; \
                 node_count: 128..8192)"
            ),
            Fail::Core(e) => e.to_string(),
            Fail::Coord(_) => COORD_MESSAGE
                .try_with(|m| m.borrow().clone())
                .unwrap_or_default(),
            Fail::Null(name) => format!("argument {name} is NULL"),
            Fail::TooSmall { needed } => {
                format!("the output buffer is too small: {needed} bytes needed (including the NUL)")
            }
            Fail::Argument(what) => (*what).to_string(),
            Fail::Panic => {
                "internal error: a panic was caught at the C boundary (please report it)".into()
            }
        }
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Core(e)
    }
}

thread_local! {
    static LAST: Cell<Option<Fail>> = const { Cell::new(None) };
    static COORD_MESSAGE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

impl From<coord::Error> for Fail {
    fn from(e: coord::Error) -> Fail {
        let _ = COORD_MESSAGE.try_with(|m| *m.borrow_mut() = e.message().to_string());
        Fail::Coord(e.code())
    }
}

fn record(f: Fail) {
    let _ = LAST.try_with(|c| c.set(Some(f)));
}

/// Runs an API body: a panic becomes `SNOWMINT_RESULT_PANIC`, an error is recorded for this thread.
#[inline(always)]
fn guard(body: impl FnOnce() -> Result<(), Fail>) -> snowmint_result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => snowmint_result::Ok,
        Ok(Err(f)) => {
            record(f);
            f.result()
        }
        Err(_) => {
            record(Fail::Panic);
            snowmint_result::Panic
        }
    }
}

/// Runs a body that cannot report an error (accessors, `_free`): a panic gives `fallback`.
fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

macro_rules! nonnull {
    ($p:ident) => {
        if $p.is_null() {
            return Err(Fail::Null(stringify!($p)));
        }
    };
}

/// Text of a code from a static table (NUL-terminated): its name, or its description.
fn static_text(result: u32, names: bool) -> *const c_char {
    static TABLES: OnceLock<[Vec<std::ffi::CString>; 2]> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        let mk = |f: fn(ErrorCode) -> &'static str| {
            ErrorCode::ALL
                .iter()
                .map(|c| std::ffi::CString::new(f(*c)).unwrap_or_default())
                .collect()
        };
        [mk(|c| c.description()), mk(|c| c.as_str())]
    });
    if result == 0 {
        let ok: &'static [u8] = if names { b"OK\0" } else { b"ok\0" };
        return ok.as_ptr().cast();
    }
    match ErrorCode::ALL.iter().position(|c| c.as_u32() == result) {
        Some(i) => tables[usize::from(names)][i].as_ptr(),
        None => b"unknown result code\0".as_ptr().cast(),
    }
}

/// A one-line description of a result code, e.g. "node ID out of range for the layout".
///
/// Never NULL; the string is static (do not free it). Unknown numbers give "unknown result code".
#[no_mangle]
pub extern "C" fn snowmint_result_message(result: u32) -> *const c_char {
    guard_value(b"internal error\0".as_ptr().cast(), || {
        static_text(result, false)
    })
}

/// The stable name of a result code, e.g. "NODE_ID_OUT_OF_RANGE" (the `code` other languages report);
/// "OK" for 0. Never NULL; the string is static. Unknown numbers give "unknown result code".
#[no_mangle]
pub extern "C" fn snowmint_result_name(result: u32) -> *const c_char {
    guard_value(b"PANIC\0".as_ptr().cast(), || static_text(result, true))
}

/// Details of this thread's last failed call (see `snowmint_last_error_info`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct snowmint_error_info {
    /// The code the call returned (0 if no call on this thread has failed yet).
    pub result: u32,
    /// For `SNOWMINT_RESULT_TOO_FAR_AHEAD`: milliseconds until a retry would succeed (rounded up).
    pub retry_after_ms: u64,
    /// For `SNOWMINT_RESULT_PARSE`: the 0-based character position of the problem.
    pub position: u64,
    /// For `SNOWMINT_RESULT_BUFFER_TOO_SMALL`: the buffer size needed, in bytes, including the NUL.
    pub needed: u64,
}

/// Fills `*info_out` with details of the last call on this thread that returned an error.
///
/// Like `errno`, the record is only replaced by the next failing call; successful calls leave it.
/// This function and `snowmint_last_error_message` never change it.
#[no_mangle]
pub unsafe extern "C" fn snowmint_last_error_info(
    info_out: *mut snowmint_error_info,
) -> snowmint_result {
    let last = LAST.try_with(|c| c.get()).ok().flatten();
    catch_unwind(AssertUnwindSafe(|| {
        if info_out.is_null() {
            return snowmint_result::NullPointer;
        }
        let mut info = snowmint_error_info::default();
        if let Some(f) = last {
            info.result = f.result() as u32;
            match f {
                Fail::Core(e) => {
                    info.retry_after_ms = e.retry_after_ms().unwrap_or(0);
                    if let Error::Parse { position, .. } = e {
                        info.position = position as u64;
                    }
                }
                Fail::TooSmall { needed } => info.needed = needed as u64,
                _ => {}
            }
        }
        // SAFETY: checked non-NULL; the caller passes a writable snowmint_error_info.
        unsafe { info_out.write(info) };
        snowmint_result::Ok
    }))
    .unwrap_or(snowmint_result::Panic)
}

/// Copies the detailed message of this thread's last failed call (e.g. "invalid layout: tick_ns is 0,
/// allowed at least 1 nanosecond") into `buf` as a NUL-terminated string; "" if none failed yet.
///
/// `buf` holds `cap` bytes. `*len_out` (optional, may be NULL) receives the message length without the
/// NUL on success, and the length too when the buffer is too small (SNOWMINT_RESULT_BUFFER_TOO_SMALL;
/// `buf` is then untouched; pass a buffer of at least length + 1 bytes). `buf` may be NULL when `cap`
/// is 0, to ask for the length.
#[no_mangle]
pub unsafe extern "C" fn snowmint_last_error_message(
    buf: *mut c_char,
    cap: usize,
    len_out: *mut usize,
) -> snowmint_result {
    let last = LAST.try_with(|c| c.get()).ok().flatten();
    let r = catch_unwind(AssertUnwindSafe(|| {
        let text = last.map(|f| f.message()).unwrap_or_default();
        // SAFETY: forwarded caller contract.
        unsafe { write_text(&text, buf, cap, len_out) }
    }));
    match r {
        Ok(Ok(())) => snowmint_result::Ok,
        Ok(Err(f)) => f.result(),
        Err(_) => snowmint_result::Panic,
    }
}

// ---------------------------------------------------------------------------------------------------
// Helpers for C data
// ---------------------------------------------------------------------------------------------------

/// Writes `text` + NUL into `buf[..cap]`; reports the length through `len_out` (optional).
unsafe fn write_text(
    text: &str,
    buf: *mut c_char,
    cap: usize,
    len_out: *mut usize,
) -> Result<(), Fail> {
    let len = text.len();
    if len + 1 > cap {
        if !len_out.is_null() {
            // SAFETY: non-NULL; the documented exception: the needed length is reported.
            unsafe { len_out.write(len) };
        }
        return Err(Fail::TooSmall { needed: len + 1 });
    }
    nonnull!(buf);
    // SAFETY: buf holds cap >= len + 1 bytes (caller contract), and does not overlap `text`.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), len);
        buf.add(len).write(0);
    }
    if !len_out.is_null() {
        // SAFETY: non-NULL.
        unsafe { len_out.write(len) };
    }
    Ok(())
}

/// Borrows a NUL-terminated string; invalid UTF-8 is a parse error at the first bad character.
unsafe fn c_str<'a>(p: *const c_char, encoding: &'static str) -> Result<&'a str, Fail> {
    // SAFETY: caller checked non-NULL and passes a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| {
        let good = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or("");
        Fail::Core(Error::Parse {
            kind: ParseErrorKind::InvalidCharacter,
            position: good.chars().count(),
            character: None,
            encoding,
        })
    })
}

unsafe fn put<T>(out: *mut T, value: T) {
    // SAFETY: caller checked non-NULL; the C caller passes a writable T.
    unsafe { out.write(value) }
}

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

fn encoding_of(n: u32) -> Result<Encoding, Fail> {
    match n {
        0 => Ok(Encoding::Decimal),
        1 => Ok(Encoding::Hex),
        2 => Ok(Encoding::Base32),
        3 => Ok(Encoding::Base58),
        _ => Err(Fail::Argument("encoding is not one of SNOWMINT_ENCODING_*")),
    }
}

fn encoding_number(e: Encoding) -> u32 {
    match e {
        Encoding::Decimal => 0,
        Encoding::Hex => 1,
        Encoding::Base32 => 2,
        Encoding::Base58 => 3,
    }
}

fn order_number(o: Order) -> u32 {
    match o {
        Order::TimestampNodeSequence => 0,
        Order::TimestampSequenceNode => 1,
    }
}

fn policy_number(p: Policy) -> u32 {
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

fn new_layout(l: Layout, out: *mut *mut snowmint_layout) {
    let p = Box::into_raw(Box::new(snowmint_layout { inner: l }));
    // SAFETY: the caller checked `out` non-NULL.
    unsafe { put(out, p) };
}

unsafe fn layout_ref<'a>(p: *const snowmint_layout) -> &'a Layout {
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

fn iso_array(text: &str) -> [c_char; SNOWMINT_ISO_CAPACITY] {
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

// ---------------------------------------------------------------------------------------------------
// Clocks and generators
// ---------------------------------------------------------------------------------------------------

/// An injected clock: returns the current Unix time in the layout's clock unit (whole milliseconds, or
/// nanoseconds for layouts with sub-millisecond ticks; see `snowmint_layout_info.clock_unit`).
///
/// A clock callback must not unwind: no C++ exception, no `longjmp` out of it. Catch inside the
/// callback and report a failure as a reading snowmint refuses (NaN from a `snowmint_clock_f64_fn`
/// gives SNOWMINT_RESULT_INVALID_CLOCK). An exception that escapes anyway is not undefined behaviour
/// (the callback type is declared `C-unwind` on the Rust side): it stops at the API function's panic
/// boundary, which cannot catch a foreign exception, and the process aborts.
pub type snowmint_clock_fn = unsafe extern "C-unwind" fn(userdata: *mut c_void) -> u64;

/// An injected clock returning a floating-point reading in the layout's clock unit. A reading that is
/// not a finite, non-negative whole number ≤ 2^53 - 1 makes the call fail with
/// SNOWMINT_RESULT_INVALID_CLOCK (never rounded).
///
/// Like every callback, it must not unwind (see `snowmint_clock_fn`).
pub type snowmint_clock_f64_fn = unsafe extern "C-unwind" fn(userdata: *mut c_void) -> f64;

/// How a generator behaves. Initialise with `snowmint_options_default`, then change fields; or pass
/// NULL for the defaults (wait policy, max_ahead 15 s, sequence start 0, the system clock).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct snowmint_options {
    /// One of `SNOWMINT_POLICY_*` (default WAIT).
    pub policy: u32,
    /// How far logical time may run ahead of the clock, in nanoseconds (default 15 000 000 000).
    pub max_ahead_ns: u64,
    /// One of `SNOWMINT_SEQUENCE_START_*` (default ZERO).
    pub sequence_start: u32,
    /// The seed for SNOWMINT_SEQUENCE_START_SEEDED.
    pub seed: u64,
    /// An injected clock, or NULL. At most one of `clock` and `clock_f64` may be set; with neither the
    /// generator reads the system clock (CLOCK_REALTIME). Called with `clock_userdata`, on the thread
    /// that mints; for a shared generator used by several threads it must be thread-safe.
    /// It must not unwind (throw): see `snowmint_clock_fn`.
    pub clock: Option<unsafe extern "C-unwind" fn(userdata: *mut c_void) -> u64>,
    /// An injected floating-point clock, or NULL.
    pub clock_f64: Option<unsafe extern "C-unwind" fn(userdata: *mut c_void) -> f64>,
    /// Passed to the clock callback; snowmint never dereferences it.
    pub clock_userdata: *mut c_void,
}

impl Default for snowmint_options {
    fn default() -> Self {
        let o = Options::default();
        snowmint_options {
            policy: policy_number(o.policy),
            max_ahead_ns: o.max_ahead_ns,
            sequence_start: 0,
            seed: 0,
            clock: None,
            clock_f64: None,
            clock_userdata: std::ptr::null_mut(),
        }
    }
}

/// Writes the default options into `*options_out`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_options_default(
    options_out: *mut snowmint_options,
) -> snowmint_result {
    guard(|| {
        nonnull!(options_out);
        // SAFETY: non-NULL.
        unsafe { put(options_out, snowmint_options::default()) };
        Ok(())
    })
}

/// A batch length that can be a Rust slice of u64 (at most isize::MAX bytes).
fn checked_len(n: usize) -> Result<usize, Fail> {
    if n > isize::MAX as usize / std::mem::size_of::<u64>() {
        return Err(Fail::Core(Error::InvalidArgument {
            name: "n (batch length)",
            value: n as u64,
            max: (isize::MAX as usize / std::mem::size_of::<u64>()) as u64,
        }));
    }
    Ok(n)
}

#[derive(Clone, Copy, Debug)]
enum Source {
    System,
    Int(snowmint_clock_fn),
    Float(snowmint_clock_f64_fn),
}

/// The host clock of a generator: the system clock or a C callback.
#[derive(Clone, Copy, Debug)]
struct HostClock {
    source: Source,
    userdata: *mut c_void,
    unit: snowmint::ClockReader,
}

// SAFETY: the userdata pointer is only passed back to the caller's callback; the header documents that
// a shared generator's callback must be thread-safe.
unsafe impl Send for HostClock {}
// SAFETY: as above.
unsafe impl Sync for HostClock {}

impl HostClock {
    /// Whether this is the system clock (no C callback).
    #[inline(always)]
    fn is_system(&self) -> bool {
        matches!(self.source, Source::System)
    }
}

impl Clock for HostClock {
    #[inline(always)]
    fn now_ns(&self) -> snowmint::Result<u64> {
        match self.source {
            Source::System => FastClock.now_ns(),
            // SAFETY: a C callback given by the caller, with its own userdata.
            Source::Int(f) => self.unit.to_ns(unsafe { f(self.userdata) }),
            // SAFETY: as above.
            Source::Float(f) => self.unit.f64_to_ns(unsafe { f(self.userdata) }),
        }
    }

    /// The system clock as the core's `FastClock` (a cached reading where the TSC proves the millisecond
    /// is still the same); a C callback is always read.
    #[inline(always)]
    fn now_ns_within(&self, window_ns: u64) -> snowmint::Result<(u64, bool)> {
        match self.source {
            Source::System => FastClock.now_ns_within(window_ns),
            _ => Ok((self.now_ns()?, true)),
        }
    }
}

fn os_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id().into());
    h.finish()
}

/// Converts C options to the core's, plus the host clock.
unsafe fn convert_options(
    layout: &Layout,
    options: *const snowmint_options,
) -> Result<(Options, HostClock), Fail> {
    let o = if options.is_null() {
        snowmint_options::default()
    } else {
        // SAFETY: non-NULL; a readable snowmint_options.
        unsafe { *options }
    };
    let policy = match o.policy {
        0 => Policy::Wait,
        1 => Policy::Fail,
        2 => Policy::Strict,
        _ => {
            return Err(Fail::Argument(
                "options.policy is not one of SNOWMINT_POLICY_*",
            ))
        }
    };
    let random_start_seed = match o.sequence_start {
        0 => None,
        1 => Some(os_seed()),
        2 => Some(o.seed),
        _ => {
            return Err(Fail::Argument(
                "options.sequence_start is not one of SNOWMINT_SEQUENCE_START_*",
            ))
        }
    };
    let source = match (o.clock, o.clock_f64) {
        (None, None) => Source::System,
        (Some(f), None) => Source::Int(f),
        (None, Some(f)) => Source::Float(f),
        (Some(_), Some(_)) => {
            return Err(Fail::Argument(
                "options.clock and options.clock_f64 are both set; set at most one",
            ))
        }
    };
    Ok((
        Options {
            policy,
            max_ahead_ns: o.max_ahead_ns,
            random_start_seed,
        },
        HostClock {
            source,
            userdata: o.clock_userdata,
            unit: layout.clock_reader(),
        },
    ))
}

// Fork detection (SPEC §2: forked children must not repeat the parent's IDs). A process-wide counter is
// bumped in every forked child by a pthread_atfork handler; a generator remembers the count it was
// created under and refuses to mint (SNOWMINT_RESULT_FORKED) when it differs: one relaxed load per call.
static FORKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[cfg(unix)]
extern "C" fn after_fork_in_child() {
    FORKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Registers the fork handler once; returns the current fork count.
fn fork_count() -> u64 {
    #[cfg(unix)]
    {
        static REGISTERED: std::sync::Once = std::sync::Once::new();
        REGISTERED.call_once(|| {
            // SAFETY: registers a handler that only touches an atomic; glibc unregisters it if the
            // shared library is unloaded.
            unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        });
    }
    FORKS.load(std::sync::atomic::Ordering::Relaxed)
}

#[inline(always)]
fn check_fork(created_under: u64) -> Result<(), Fail> {
    if FORKS.load(std::sync::atomic::Ordering::Relaxed) != created_under {
        return Err(Fail::Core(Error::Forked));
    }
    Ok(())
}

/// A generator for one thread at a time (no atomics). Create with `snowmint_generator_new`; free with
/// `snowmint_generator_free`. Do not call it from two threads at once: use `snowmint_shared_generator`.
pub struct snowmint_generator {
    inner: Generator,
    clock: HostClock,
    forks: u64,
}

/// A lock-free generator that many threads may call at once (one compare-and-swap per call). Create
/// with `snowmint_shared_generator_new` (its state in this process) or
/// `snowmint_shared_generator_open_file` (its state in a file shared by every process that opens it);
/// free with `snowmint_shared_generator_free` once no thread uses it.
///
/// A shared generator opened from a lease source (`snowmint_generator_open`) holds a node-ID lease that
/// a background thread renews; it is thread-safe in the same way (mint, read its lease or state, detach
/// and attach from any thread), and `snowmint_shared_generator_free` releases the lease.
pub struct snowmint_shared_generator {
    inner: SharedInner,
    clock: HostClock,
    forks: u64,
}

#[allow(clippy::large_enum_variant)] // the hot path mints from the inline variant; a box would add a load
enum SharedInner {
    /// State in this process's memory, or in a state file.
    Plain(SharedGenerator<SharedState>),
    /// A node-ID lease from a store.
    Leased(Box<coord::SequencerGenerator>),
}

impl snowmint_shared_generator {
    /// FORKED for a generator used in a forked child, unless its state is in a state file, which is
    /// shared with the parent by construction (MAP_SHARED): safe in the child.
    #[inline(always)]
    fn check_fork(&self) -> Result<(), Fail> {
        if FORKS.load(std::sync::atomic::Ordering::Relaxed) != self.forks
            && !matches!(&self.inner, SharedInner::Plain(g) if g.state_holder().state_file().is_some())
        {
            return Err(Fail::Core(Error::Forked));
        }
        Ok(())
    }

    fn state_file(&self) -> Result<&StateFile, Fail> {
        const NONE: Fail = Fail::Argument(
            "the generator has no state file (made with snowmint_shared_generator_new or snowmint_generator_open)",
        );
        match &self.inner {
            SharedInner::Plain(g) => g.state_holder().state_file().ok_or(NONE),
            SharedInner::Leased(_) => Err(NONE),
        }
    }

    fn plain(&self) -> Result<&SharedGenerator<SharedState>, Fail> {
        match &self.inner {
            SharedInner::Plain(g) => Ok(g),
            SharedInner::Leased(_) => Err(Fail::Argument(
                "a lease-backed generator keeps its position in the store's reservation: no state to save or restore",
            )),
        }
    }
}

/// Creates a single-thread generator minting for `node_id` under `layout` (the layout is copied; the
/// handle may be freed afterwards). `options` may be NULL for the defaults. NODE_ID_OUT_OF_RANGE when
/// the node ID does not fit.
///
/// On success `*generator_out` is a new handle: free it with `snowmint_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_new(
    layout: *const snowmint_layout,
    node_id: u64,
    options: *const snowmint_options,
    generator_out: *mut *mut snowmint_generator,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout);
        nonnull!(generator_out);
        // SAFETY: non-NULL live handle.
        let l = *unsafe { layout_ref(layout) };
        // SAFETY: forwarded caller contract.
        let (opts, clock) = unsafe { convert_options(&l, options) }?;
        let g = Generator::new(l, node_id, opts)?;
        let p = Box::into_raw(Box::new(snowmint_generator {
            inner: g,
            clock,
            forks: fork_count(),
        }));
        // SAFETY: non-NULL.
        unsafe { put(generator_out, p) };
        Ok(())
    })
}

/// Creates a thread-safe, lock-free generator minting for `node_id` under `layout` (copied).
/// `options` may be NULL for the defaults.
///
/// On success `*generator_out` is a new handle: free it with `snowmint_shared_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_new(
    layout: *const snowmint_layout,
    node_id: u64,
    options: *const snowmint_options,
    generator_out: *mut *mut snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout);
        nonnull!(generator_out);
        // SAFETY: non-NULL live handle.
        let l = *unsafe { layout_ref(layout) };
        // SAFETY: forwarded caller contract.
        let (opts, clock) = unsafe { convert_options(&l, options) }?;
        let g = SharedGenerator::with_state(l, node_id, opts, SharedState::memory())?;
        let p = Box::into_raw(Box::new(snowmint_shared_generator {
            inner: SharedInner::Plain(g),
            clock,
            forks: fork_count(),
        }));
        // SAFETY: non-NULL.
        unsafe { put(generator_out, p) };
        Ok(())
    })
}

/// Opens a thread-safe, lock-free generator whose state word lives in the state file at `path` (a
/// NUL-terminated path), shared by every process and thread that opens the same file: workers of one
/// service mint under one node ID with no duplicates. The file is created (atomically) if it is missing.
/// A process that restarts continues after the last ID any process minted; a child forked after this
/// call may keep using the handle (no SNOWMINT_RESULT_FORKED: the file is shared by construction).
///
/// SNOWMINT_RESULT_STATE_FILE_MISMATCH when the file was made for another layout or node ID, is not a
/// state file (wrong size, magic or checksum: truncated, foreign or damaged), is a directory, cannot be
/// created or opened for writing (a read-only path, no permission), or another process still maps a
/// file that was unlinked or replaced at this path; `snowmint_last_error_message` says which. A file
/// that does not check out is never changed. Unix only; see the README for the file format, what
/// survives a reboot (tmpfs or disk) and `snowmint_shared_generator_flush`.
///
/// On success `*generator_out` is a new handle: free it with `snowmint_shared_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_open_file(
    path: *const c_char,
    layout: *const snowmint_layout,
    node_id: u64,
    options: *const snowmint_options,
    generator_out: *mut *mut snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        nonnull!(path);
        nonnull!(layout);
        nonnull!(generator_out);
        // SAFETY: non-NULL, NUL-terminated (caller contract).
        let path = unsafe { CStr::from_ptr(path) };
        let path = std::path::Path::new(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(
            path.to_bytes(),
        ));
        // SAFETY: non-NULL live handle.
        let l = *unsafe { layout_ref(layout) };
        // SAFETY: forwarded caller contract.
        let (opts, clock) = unsafe { convert_options(&l, options) }?;
        // Bad options are refused before the file system is touched.
        SharedGenerator::new(l, node_id, opts)?;
        let file = StateFile::open(path, &l, node_id)?;
        let g = SharedGenerator::with_state(l, node_id, opts, SharedState::file(file))?;
        let p = Box::into_raw(Box::new(snowmint_shared_generator {
            inner: SharedInner::Plain(g),
            clock,
            forks: fork_count(),
        }));
        // SAFETY: non-NULL.
        unsafe { put(generator_out, p) };
        Ok(())
    })
}

/// Writes a file-backed generator's state to the storage device and waits for it (`msync(MS_SYNC)`):
/// after this, a crash or power loss cannot take the file back past the present state (on tmpfs the
/// file does not survive a reboot at all). SNOWMINT_RESULT_INVALID_ARGUMENT for a generator without a
/// state file.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_flush(
    generator: *const snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        // SAFETY: non-NULL live handle.
        let g = unsafe { &*generator };
        g.state_file()?.flush()?;
        Ok(())
    })
}

/// Checks that a file-backed generator's file is still the one at its path:
/// SNOWMINT_RESULT_STATE_FILE_MISMATCH if it was unlinked or replaced (processes that open the path now
/// would get another file). SNOWMINT_RESULT_INVALID_ARGUMENT for a generator without a state file.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_verify(
    generator: *const snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        // SAFETY: non-NULL live handle.
        let g = unsafe { &*generator };
        g.state_file()?.verify()?;
        Ok(())
    })
}

/// Frees a generator. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_free(generator: *mut snowmint_generator) {
    if generator.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: a handle from snowmint_generator_new, freed once (caller contract).
        drop(unsafe { Box::from_raw(generator) });
    })
}

/// Frees a shared generator once no thread uses it. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_free(generator: *mut snowmint_shared_generator) {
    if generator.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: a handle from snowmint_shared_generator_new, freed once, unused (caller contract).
        drop(unsafe { Box::from_raw(generator) });
    })
}

/// Mints one ID into `*id_out`, reading the generator's clock. Under the wait policy the calling thread
/// sleeps while logical time is more than max_ahead ahead of the clock; an injected clock that does not
/// move between two waits gives SNOWMINT_RESULT_TOO_FAR_AHEAD instead of a hang. A generator created
/// before fork() and used in the child gives SNOWMINT_RESULT_FORKED (create a new one in the child, with
/// its own node ID).
#[no_mangle]
pub unsafe extern "C" fn snowmint_next_id(
    generator: *mut snowmint_generator,
    id_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(id_out);
        // SAFETY: non-NULL live handle, used by one thread at a time (caller contract).
        let g = unsafe { &mut *generator };
        check_fork(g.forks)?;
        // The system clock as the core's own FastClock, statically dispatched (what Rust's next_id() does).
        let id = if g.clock.is_system() {
            g.inner.next_id_with(&FastClock, snowmint::sleep_ns)?
        } else {
            g.inner.next_id_with(&g.clock, snowmint::sleep_ns)?
        };
        // SAFETY: non-NULL.
        unsafe { put(id_out, id) };
        Ok(())
    })
}

/// Fills `buf[0..n]` with `n` consecutive IDs from one clock reading (one state update). `buf` is
/// written only on success; `buf` may be NULL when `n` is 0. A batch larger than the layout can ever
/// hold within max_ahead is SNOWMINT_RESULT_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn snowmint_next_ids(
    generator: *mut snowmint_generator,
    buf: *mut u64,
    n: usize,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        if n == 0 {
            return Ok(());
        }
        nonnull!(buf);
        // SAFETY: non-NULL live handle, one thread at a time (caller contract).
        let g = unsafe { &mut *generator };
        check_fork(g.forks)?;
        // SAFETY: buf holds n writable u64 (caller contract).
        let out = unsafe { std::slice::from_raw_parts_mut(buf, checked_len(n)?) };
        g.inner.next_ids_with(&g.clock, snowmint::sleep_ns, out)?;
        Ok(())
    })
}

/// `snowmint_next_id` for a shared generator; any number of threads may call it at once.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_next_id(
    generator: *const snowmint_shared_generator,
    id_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(id_out);
        // SAFETY: non-NULL live handle; shared access is what this type is for.
        let g = unsafe { &*generator };
        g.check_fork()?;
        let inner = match &g.inner {
            SharedInner::Plain(inner) => inner,
            SharedInner::Leased(l) => {
                let id = l.next_id()?;
                // SAFETY: non-NULL.
                unsafe { put(id_out, id) };
                return Ok(());
            }
        };
        // The system clock as the core's own FastClock, statically dispatched (what Rust's next_id() does).
        let id = if g.clock.is_system() {
            inner.next_id_with(&FastClock, snowmint::sleep_ns)?
        } else {
            inner.next_id_with(&g.clock, snowmint::sleep_ns)?
        };
        // SAFETY: non-NULL.
        unsafe { put(id_out, id) };
        Ok(())
    })
}

/// `snowmint_next_ids` for a shared generator: `n` IDs in one compare-and-swap.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_next_ids(
    generator: *const snowmint_shared_generator,
    buf: *mut u64,
    n: usize,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        if n == 0 {
            return Ok(());
        }
        nonnull!(buf);
        // SAFETY: non-NULL live handle.
        let g = unsafe { &*generator };
        g.check_fork()?;
        // SAFETY: buf holds n writable u64 (caller contract).
        let out = unsafe { std::slice::from_raw_parts_mut(buf, checked_len(n)?) };
        match &g.inner {
            SharedInner::Plain(inner) => inner.next_ids_with(&g.clock, snowmint::sleep_ns, out)?,
            SharedInner::Leased(l) => l.next_ids(out)?,
        }
        Ok(())
    })
}

/// The generator's high-water mark (its next free logical position): persist it and pass it to
/// `snowmint_generator_restore` after a restart so no ID repeats even if the clock went back.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_state(
    generator: *const snowmint_generator,
    state_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(state_out);
        // SAFETY: non-NULL live handles.
        unsafe { put(state_out, (*generator).inner.state()) };
        Ok(())
    })
}

/// Continues from a persisted high-water mark (never moves backwards).
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_restore(
    generator: *mut snowmint_generator,
    state: u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        // SAFETY: non-NULL live handle, one thread at a time.
        unsafe { (*generator).inner.restore(state) };
        Ok(())
    })
}

/// `snowmint_generator_state` for a shared generator.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_state(
    generator: *const snowmint_shared_generator,
    state_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(state_out);
        // SAFETY: non-NULL live handles.
        let state = unsafe { &*generator }.plain()?.state();
        // SAFETY: non-NULL.
        unsafe { put(state_out, state) };
        Ok(())
    })
}

/// `snowmint_generator_restore` for a shared generator (safe while other threads mint).
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_restore(
    generator: *const snowmint_shared_generator,
    state: u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        // SAFETY: non-NULL live handle.
        unsafe { &*generator }.plain()?.restore(state);
        Ok(())
    })
}

mod coord_api;
pub use coord_api::*;

/// The library version, e.g. "0.1.0" (static; never NULL).
#[no_mangle]
pub extern "C" fn snowmint_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_core() {
        for code in ErrorCode::ALL {
            let r = snowmint_result::from_code(code);
            assert_eq!(r as u32, code.as_u32(), "{code}");
            assert_eq!(r.code(), Some(code));
            // SAFETY: static NUL-terminated strings.
            let name = unsafe { CStr::from_ptr(snowmint_result_name(code.as_u32())) };
            assert_eq!(name.to_str().unwrap(), code.as_str());
            let msg = unsafe { CStr::from_ptr(snowmint_result_message(code.as_u32())) };
            assert_eq!(msg.to_str().unwrap(), code.description());
        }
        assert_eq!(snowmint_result::Ok as u32, 0);
        assert!(ErrorCode::ALL.iter().all(|c| c.as_u32() != 0));
    }

    #[test]
    fn null_and_panic_safety() {
        let mut id = 0u64;
        // SAFETY: exercising the NULL checks.
        unsafe {
            assert_eq!(
                snowmint_next_id(std::ptr::null_mut(), &mut id),
                snowmint_result::NullPointer
            );
            assert_eq!(
                snowmint_parse_any(std::ptr::null(), &mut id),
                snowmint_result::NullPointer
            );
        }
        assert_eq!(guard(|| panic!("boom")), snowmint_result::Panic);
    }
}

// Opaque IDs (after the macros above, which it uses).
mod opaque;
mod range_api;
