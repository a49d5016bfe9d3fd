//! The C boundary, written once: why a call failed ([`Fail`]), the panic boundary ([`guard`]), the
//! pointer checks (`nonnull!`, `try_ref!`, `try_mut!`) and the out-parameter and string helpers.

use super::*;

/// Why a call failed, as recorded for `snowmint_last_error_*`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fail {
    Core(Error),
    /// A coordination error; its message is in `COORD_MESSAGE` (this thread's last one).
    #[cfg(feature = "coord")]
    Coord(ErrorCode),
    Null(&'static str),
    TooSmall {
        needed: usize,
    },
    Argument(&'static str),
    Panic,
}

impl Fail {
    pub(crate) fn result(&self) -> snowmint_result {
        match self {
            Fail::Core(e) => snowmint_result::from_code(e.code()),
            #[cfg(feature = "coord")]
            Fail::Coord(code) => snowmint_result::from_code(*code),
            Fail::Null(_) => snowmint_result::NullPointer,
            Fail::TooSmall { .. } => snowmint_result::BufferTooSmall,
            Fail::Argument(_) => snowmint_result::InvalidArgument,
            Fail::Panic => snowmint_result::Panic,
        }
    }

    pub(crate) fn message(&self) -> String {
        match self {
            // The core's message shows the Rust call; say it in C.
            Fail::Core(Error::PresetNeedsParameters { preset }) => format!(
                "invalid layout: the {preset} preset needs an epoch and a node count: call \
                 snowmint_layout_new_snowcast(epoch_ms, node_count, &layout) (epoch_ms: Unix ms; \
                 node_count: 128..8192)"
            ),
            Fail::Core(e) => e.to_string(),
            #[cfg(feature = "coord")]
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
    pub(crate) static LAST: Cell<Option<Fail>> = const { Cell::new(None) };
    #[cfg(feature = "coord")]
    static COORD_MESSAGE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

#[cfg(feature = "coord")]
impl From<coord::Error> for Fail {
    fn from(e: coord::Error) -> Fail {
        let _ = COORD_MESSAGE.try_with(|m| *m.borrow_mut() = e.message().to_string());
        Fail::Coord(e.code())
    }
}

pub(crate) fn record(f: Fail) {
    let _ = LAST.try_with(|c| c.set(Some(f)));
}

/// Runs an API body: a panic becomes `SNOWMINT_RESULT_PANIC`, an error is recorded for this thread.
#[inline(always)]
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Fail>) -> snowmint_result {
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

/// Runs a mint and writes its ID to `id_out` (non-NULL): the API's minting paths, with nothing between
/// the caller and the core but the panic boundary. An error or a panic is recorded as [`guard`]
/// records it, out of the way ([`failed`]).
#[inline(always)]
pub(crate) fn mint_into(
    mint: impl FnOnce() -> Result<u64, Error>,
    id_out: *mut u64,
) -> snowmint_result {
    // The closure hands back the result code alone: what crosses the panic boundary stays small (a
    // whole `Result<u64, Error>` went through memory there, about 1 ns per call).
    let minted = catch_unwind(AssertUnwindSafe(|| match mint() {
        Ok(id) => {
            // SAFETY: the caller checked `id_out` non-NULL.
            unsafe { put(id_out, id) };
            snowmint_result::Ok
        }
        Err(e) => failed(Fail::Core(e)),
    }));
    minted.unwrap_or_else(|_| failed(Fail::Panic))
}

/// Records `f` and gives its result (see [`guard`]).
#[cold]
#[inline(never)]
pub(crate) fn failed(f: Fail) -> snowmint_result {
    record(f);
    f.result()
}

/// Runs a body that cannot report an error (accessors, `_free`): a panic gives `fallback`.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// A required pointer argument: NULL returns `NULL_POINTER` naming the argument.
macro_rules! nonnull {
    ($p:ident) => {
        if $p.is_null() {
            return Err(Fail::Null(stringify!($p)));
        }
    };
}

/// `&*handle` for a required handle argument, NULL-checked (rustls-ffi's `try_ref_from_ptr!`).
macro_rules! try_ref {
    ($p:ident) => {{
        nonnull!($p);
        // SAFETY: non-NULL; a live handle from its `_new` function (the crate's caller contract).
        unsafe { &*$p }
    }};
}

/// `&mut *handle` for a required handle argument, NULL-checked (rustls-ffi's `try_mut_from_ptr!`); the
/// caller contract gives a single-thread handle to one thread at a time.
macro_rules! try_mut {
    ($p:ident) => {{
        nonnull!($p);
        // SAFETY: non-NULL; a live handle, used by one thread at a time (the crate's caller contract).
        unsafe { &mut *$p }
    }};
}

// ---------------------------------------------------------------------------------------------------
// Helpers for C data
// ---------------------------------------------------------------------------------------------------

/// Writes `text` + NUL into `buf[..cap]`; reports the length through `len_out` (optional).
pub(crate) unsafe fn write_text(
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
pub(crate) unsafe fn c_str<'a>(p: *const c_char, encoding: &'static str) -> Result<&'a str, Fail> {
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

pub(crate) unsafe fn put<T>(out: *mut T, value: T) {
    // SAFETY: caller checked non-NULL; the C caller passes a writable T.
    unsafe { out.write(value) }
}
