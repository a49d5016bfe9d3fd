//! `Opaque`: the core's keyed permutation ([`snowmint::Opaque`]) for Node. Converts values and maps
//! errors; the permutation is the core's.

use std::ptr;

use napi::bindgen_prelude::{BigUint64Array, Env, Unknown};
use napi::sys;
use napi_derive::napi;
use snowmint::{Encoding, ErrorCode};

use crate::{
    core_err, encoding_arg, get_bigint_u64, get_string, get_u64, layout_arg, opt_raw, raw_of,
    throw, type_err, type_of, Kind, Layout, Opts, OrThrow, Raw, Result,
};

const OPAQUE_KEYS: [&str; 2] = ["key", "layout"];

/// Encodes IDs into opaque tokens of the layout's width and back with a 16-byte secret key: tokens
/// reveal neither time, node nor count (a keyed permutation; not authentication: every number of the
/// width decodes to some ID).
#[napi]
pub struct Opaque {
    inner: snowmint::Opaque,
    layout: snowmint::Layout,
}

/// The bytes of a `Uint8Array` (or `Buffer`).
fn key_bytes(env: sys::napi_env, v: Raw) -> Result<Vec<u8>> {
    let mut is_typed = false;
    unsafe { sys::napi_is_typedarray(env, v, &mut is_typed) };
    let not_bytes = || type_err(env, "key must be a Uint8Array of 16 bytes");
    if !is_typed {
        return Err(not_bytes());
    }
    let (mut kind, mut len, mut data) = (0, 0usize, ptr::null_mut());
    let (mut buffer, mut offset) = (ptr::null_mut(), 0usize);
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env,
            v,
            &mut kind,
            &mut len,
            &mut data,
            &mut buffer,
            &mut offset,
        )
    };
    if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array {
        return Err(not_bytes());
    }
    if len == 0 || data.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: N-API reports `len` readable bytes at `data` for this live array.
    Ok(unsafe { std::slice::from_raw_parts(data as *const u8, len) }.to_vec())
}

/// An ID or token: a bigint or safe-integer number. Negative or ≥ 2^64 is INVALID_ID (a value outside
/// any width), like one outside the layout's width.
fn value_arg(env: sys::napi_env, v: Raw, what: &str) -> Result<u64> {
    if type_of(env, v) == sys::ValueType::napi_bigint {
        return get_bigint_u64(env, v).ok_or_else(|| {
            throw(
                env,
                Kind::Error,
                ErrorCode::InvalidId.as_str(),
                &format!("{what} must be a bigint in 0..2^64 (negative or too large)"),
                &[],
            )
        });
    }
    get_u64(env, v, what)
}

impl Opaque {
    fn map_many(
        &self,
        env: sys::napi_env,
        values: &Unknown<'_>,
        what: &str,
        f: fn(&snowmint::Opaque, &mut [u64]) -> snowmint::Result<()>,
    ) -> Result<BigUint64Array> {
        let v = raw_of(values);
        let mut is_typed = false;
        unsafe { sys::napi_is_typedarray(env, v, &mut is_typed) };
        let (mut kind, mut len, mut data) = (0, 0usize, ptr::null_mut());
        let (mut buffer, mut offset) = (ptr::null_mut(), 0usize);
        if !is_typed
            || unsafe {
                sys::napi_get_typedarray_info(
                    env,
                    v,
                    &mut kind,
                    &mut len,
                    &mut data,
                    &mut buffer,
                    &mut offset,
                )
            } != sys::Status::napi_ok
            || kind != sys::TypedarrayType::biguint64_array
        {
            return Err(type_err(env, &format!("{what} must be a BigUint64Array")));
        }
        let mut out = if len == 0 || data.is_null() {
            Vec::new()
        } else {
            // SAFETY: N-API reports `len` u64 at `data` (a BigUint64Array is 8-byte aligned).
            unsafe { std::slice::from_raw_parts(data as *const u64, len) }.to_vec()
        };
        f(&self.inner, &mut out).js(env)?;
        Ok(BigUint64Array::new(out))
    }
}

#[napi]
impl Opaque {
    /// `new Opaque({ key, layout? })`: `key` is 16 secret bytes (`INVALID_ARGUMENT` otherwise), `layout`
    /// a preset name or a `Layout` (default `'twitter'`, 63 bits; `'js53'` gives 53-bit tokens).
    #[napi(
        constructor,
        ts_args_type = "options: { key: Uint8Array; layout?: PresetName | Layout }"
    )]
    pub fn new(env: Env, options: Unknown<'_>) -> Result<Self> {
        let env = env.raw();
        let o = Opts::new(env, raw_of(&options), "Opaque options", &OPAQUE_KEYS)?;
        let key = key_bytes(env, o.required("key", "Opaque options")?)?;
        let layout = layout_arg(env, o.get("layout"))?;
        let inner = snowmint::Opaque::for_layout(&key, &layout).map_err(|e| {
            if key.len() != snowmint::OPAQUE_KEY_LEN {
                let msg = format!("{e} (got {} bytes)", key.len());
                throw(env, Kind::Error, e.code().as_str(), &msg, &[])
            } else {
                core_err(env, e)
            }
        })?;
        Ok(Opaque { inner, layout })
    }

    /// The token of an ID.
    #[napi(ts_args_type = "id: bigint | number")]
    pub fn encode(&self, env: Env, id: Unknown<'_>) -> Result<u64> {
        let env = env.raw();
        self.inner
            .encode(value_arg(env, raw_of(&id), "id")?)
            .js(env)
    }

    /// The ID of a token.
    #[napi(ts_args_type = "token: bigint | number")]
    pub fn decode(&self, env: Env, token: Unknown<'_>) -> Result<u64> {
        let env = env.raw();
        self.inner
            .decode(value_arg(env, raw_of(&token), "token")?)
            .js(env)
    }

    /// The token of an ID as text: 'dec' (default), 'hex', 'base32' or 'base58' (11 characters).
    #[napi(ts_args_type = "id: bigint | number, encoding?: 'dec' | 'hex' | 'base32' | 'base58'")]
    pub fn encode_string(
        &self,
        env: Env,
        id: Unknown<'_>,
        encoding: Option<Unknown<'_>>,
    ) -> Result<String> {
        let env = env.raw();
        let enc = encoding_arg(env, opt_raw(&encoding), false)?.unwrap_or(Encoding::Decimal);
        let token = self
            .inner
            .encode(value_arg(env, raw_of(&id), "id")?)
            .js(env)?;
        Ok(enc.encode(token).as_str().to_owned())
    }

    /// The ID of a token given as text in one encoding, or 'any' (default: told apart by shape).
    #[napi(ts_args_type = "text: string, encoding?: 'dec' | 'hex' | 'base32' | 'base58' | 'any'")]
    pub fn decode_string(
        &self,
        env: Env,
        text: Unknown<'_>,
        encoding: Option<Unknown<'_>>,
    ) -> Result<u64> {
        let env = env.raw();
        if type_of(env, raw_of(&text)) != sys::ValueType::napi_string {
            return Err(type_err(env, "text must be a string"));
        }
        let s = get_string(env, raw_of(&text))?;
        let token = snowmint::Encoding::parse_in(encoding_arg(env, opt_raw(&encoding), true)?, &s)
            .js(env)?;
        self.inner.decode(token).js(env)
    }

    /// The tokens of many IDs, as a new array (an error leaves nothing behind).
    #[napi(ts_args_type = "ids: BigUint64Array")]
    pub fn encode_many(&self, env: Env, ids: Unknown<'_>) -> Result<BigUint64Array> {
        self.map_many(env.raw(), &ids, "ids", snowmint::Opaque::encode_in_place)
    }

    /// The IDs of many tokens, as a new array.
    #[napi(ts_args_type = "tokens: BigUint64Array")]
    pub fn decode_many(&self, env: Env, tokens: Unknown<'_>) -> Result<BigUint64Array> {
        self.map_many(
            env.raw(),
            &tokens,
            "tokens",
            snowmint::Opaque::decode_in_place,
        )
    }

    /// The width in bits: IDs and tokens are below 2^bits.
    #[napi(getter)]
    pub fn bits(&self) -> u32 {
        self.inner.bits()
    }

    /// The layout whose width this permutation has.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout { inner: self.layout }
    }
}

// ---------------------------------------------------------------------------------------------------
// Fast paths: encode / decode as plain N-API functions over a handle
// ---------------------------------------------------------------------------------------------------
//
// A napi-rs method call (the class's unwrap and type-tag check, the argument glue) costs several
// times the permutation. So `index.js` asks once per object for a handle (`__opaqueHandle`: an
// External holding a copy of the permutation, type-tagged), and its `encode` / `decode` call the two
// module-level functions below with that handle (one N-API call with two arguments each), which leave
// the result in the ID cell that `nextId` uses too. The errors are the same as the methods' above.

const HANDLE_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x6f70_6171_7565_5f31, // "opaque_1"
    upper: 0x736e_6f77_6d69_6e74, // "snowmint"
};

unsafe extern "C" fn drop_handle(
    _env: sys::napi_env,
    data: *mut std::ffi::c_void,
    _hint: *mut std::ffi::c_void,
) {
    // SAFETY: `data` is the Box leaked by `opaque_handle`, finalized once by N-API.
    drop(unsafe { Box::from_raw(data as *mut snowmint::Opaque) });
}

/// The `Opaque` an object wraps, checked as `unwrap_generator` checks a Generator: its class's type
/// tag, then napi_unwrap (never a blind cast).
unsafe fn unwrap_opaque<'a>(env: sys::napi_env, obj: Raw) -> Option<&'a Opaque> {
    use napi::bindgen_prelude::TypeTag;
    let mut wrapped: *mut std::ffi::c_void = ptr::null_mut();
    let mut tagged = false;
    let tag = <Opaque as TypeTag>::type_tag();
    // SAFETY: plain N-API queries on a value of this call.
    unsafe {
        if obj.is_null()
            || type_of(env, obj) != sys::ValueType::napi_object
            || sys::napi_check_object_type_tag(env, obj, &tag, &mut tagged) != sys::Status::napi_ok
            || !tagged
            || sys::napi_unwrap(env, obj, &mut wrapped) != sys::Status::napi_ok
            || wrapped.is_null()
        {
            type_err(env, "__opaqueHandle takes an Opaque");
            return None;
        }
        // SAFETY: tagged and wrapped by napi-rs as an Opaque.
        Some(&*(wrapped as *const Opaque))
    }
}

/// `__opaqueHandle(opaque)`: the handle of an `Opaque` (checked: instanceof, unwrap, type tag).
pub(crate) unsafe extern "C" fn opaque_handle(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
    crate::guarded(env, || {
        let mut argv = [ptr::null_mut(); 1];
        let mut argc = 1usize;
        unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        let o = unsafe { unwrap_opaque(env, argv[0]) }?;
        let data = Box::into_raw(Box::new(o.inner)) as *mut std::ffi::c_void;
        let mut ext = ptr::null_mut();
        // SAFETY: `data` is a live Box; N-API calls `drop_handle` once when the External is collected.
        unsafe {
            if sys::napi_create_external(env, data, Some(drop_handle), ptr::null_mut(), &mut ext)
                != sys::Status::napi_ok
            {
                drop(Box::from_raw(data as *mut snowmint::Opaque));
                return None;
            }
            sys::napi_type_tag_object(env, ext, &HANDLE_TAG);
        }
        Some(ext)
    })
}

/// The permutation of a handle argument (checked: an External with our type tag).
unsafe fn handle<'a>(env: sys::napi_env, v: Raw) -> Option<&'a snowmint::Opaque> {
    let mut tagged = false;
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    // SAFETY: plain N-API queries on a value of this call.
    unsafe {
        if type_of(env, v) != sys::ValueType::napi_external
            || sys::napi_check_object_type_tag(env, v, &HANDLE_TAG, &mut tagged)
                != sys::Status::napi_ok
            || !tagged
            || sys::napi_get_value_external(env, v, &mut data) != sys::Status::napi_ok
            || data.is_null()
        {
            type_err(env, "not an Opaque handle");
            return None;
        }
        // SAFETY: tagged by `opaque_handle`, so `data` is its Box, alive while the External is.
        Some(&*(data as *const snowmint::Opaque))
    }
}

/// One direction of the permutation.
type Permute = fn(&snowmint::Opaque, u64) -> snowmint::Result<u64>;

/// Encodes or decodes into the environment's ID cell (what `__idSlot()` views; `index.js` reads it
/// there: a BigUint64Array read costs a few nanoseconds, `napi_create_bigint_uint64` several times
/// that). Returns undefined, or throws the method's error with nothing written.
unsafe fn fast(env: sys::napi_env, info: sys::napi_callback_info, decode: bool) -> Raw {
    crate::guarded(env, || {
        let mut argv = [ptr::null_mut(); 2];
        let table = unsafe { crate::fast_call(env, info, &mut argv) }?;
        let o = unsafe { handle(env, argv[0]) }?;
        let (what, f): (&str, Permute) = if decode {
            ("token", snowmint::Opaque::decode)
        } else {
            ("id", snowmint::Opaque::encode)
        };
        let x = value_arg(env, argv[1], what).ok()?;
        let y = f(o, x).js(env).ok()?;
        // SAFETY: the table is alive (the function holds the environment's reference) and used on this
        // thread only; JavaScript reads the cell right after this call returns.
        unsafe { *(*table).cell.get() = y };
        None
    })
}

/// `__opaqueEncode(handle, id)`.
pub(crate) unsafe extern "C" fn opaque_encode(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
    unsafe { fast(env, info, false) }
}

/// `__opaqueDecode(handle, token)`.
pub(crate) unsafe extern "C" fn opaque_decode(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
    unsafe { fast(env, info, true) }
}
