//! Result codes, their texts, and this thread's last error (`snowmint_last_error_*`).

use super::*;

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
    pub(crate) fn from_code(code: ErrorCode) -> snowmint_result {
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
    pub(crate) fn code(self) -> Option<ErrorCode> {
        ErrorCode::from_u32(self as u32)
    }
}
/// Text of a code from a static table (NUL-terminated): its name, or its description.
pub(crate) fn static_text(result: u32, names: bool) -> *const c_char {
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
