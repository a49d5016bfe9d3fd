//! Opaque IDs for `snowmint-wasm`: the core's keyed permutation ([`snowmint::Opaque`]) in a module of
//! its own, `snowmint_wasm_opaque_bg.wasm`, next to the main one.
//!
//! Why a second module: the main module has a 60.5 KB budget (bindings-wasm/tests/size.test.mjs) that it
//! already nearly fills, and the permutation with its glue costs about 6 KB. Pages that never use
//! `Opaque` load only the main module's code path; the package's entries (`js/`) load both and expose
//! one `Opaque` class that resolves the layout through the main module and calls this one.
//!
//! This crate converts values and maps errors; the permutation, its key and width checks are the core's.

use js_sys::{BigUint64Array, Reflect, Uint8Array};
use snowmint::ErrorCode;
use wasm_bindgen::prelude::*;

// The main module's small allocator (dlmalloc would cost about 8 KB here too).
#[cfg(target_arch = "wasm32")]
#[path = "../../src/alloc.rs"]
mod alloc;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: alloc::SizeClasses = alloc::SizeClasses::new();

fn coded(err: JsValue, code: ErrorCode) -> JsValue {
    let _ = Reflect::set(&err, &"code".into(), &code.as_str().into());
    err
}

fn dec(n: u64) -> snowmint::Encoded {
    snowmint::Encoding::Decimal.encode(n)
}

/// The core's error with its code. The message is the core's `Display` text, written here for the two
/// errors this module can meet: `Display` for every error would pull in the core's whole formatting
/// (about 8 KB of this module).
fn js_err(e: snowmint::Error) -> JsValue {
    let msg = match e {
        snowmint::Error::InvalidOptions { reason } => ["invalid options: ", reason].concat(),
        snowmint::Error::InvalidId { id, bits } => [
            "ID ",
            dec(id).as_str(),
            " does not fit the layout's ",
            dec(bits.into()).as_str(),
            " bits",
        ]
        .concat(),
        other => other.code().as_str().into(),
    };
    coded(js_sys::Error::new(&msg).into(), e.code())
}

fn type_err(msg: &str) -> JsValue {
    coded(
        js_sys::TypeError::new(msg).into(),
        ErrorCode::InvalidArgument,
    )
}

/// An ID or token: a safe-integer Number or a bigint in 0..2^64, never wrapped or rounded. A bigint
/// outside 0..2^64 is INVALID_ID (outside every width), as in the Node package.
fn value_arg(v: &JsValue, name: &str) -> Result<u64, JsValue> {
    if let Some(x) = v.as_f64() {
        return snowmint::whole_f64(x).map_err(|_| {
            let msg = [
                name,
                " must be a whole number in 0..=2^53-1 or a bigint in 0n..2^64n",
            ]
            .concat();
            coded(js_sys::Error::new(&msg).into(), ErrorCode::InvalidArgument)
        });
    }
    if v.is_bigint() {
        return u64::try_from(v.clone()).map_err(|_| {
            let msg = [name, " must be a bigint in 0..2^64 (negative or too large)"].concat();
            coded(js_sys::RangeError::new(&msg).into(), ErrorCode::InvalidId)
        });
    }
    Err(type_err(&[name, " must be a number or a bigint"].concat()))
}

/// The permutation of one width under one key. The package's `Opaque` class wraps it.
#[wasm_bindgen(js_name = OpaqueCore)]
pub struct OpaqueCore {
    inner: snowmint::Opaque,
}

impl OpaqueCore {
    fn many(&self, v: &JsValue, name: &str, decode: bool) -> Result<BigUint64Array, JsValue> {
        let mut xs = v
            .dyn_ref::<BigUint64Array>()
            .ok_or_else(|| type_err(&[name, " must be a BigUint64Array"].concat()))?
            .to_vec();
        if decode {
            self.inner.decode_in_place(&mut xs)
        } else {
            self.inner.encode_in_place(&mut xs)
        }
        .map_err(js_err)?;
        Ok(BigUint64Array::from(&xs[..]))
    }
}

/// The value of a fast-path call as the `i64` of its bits; an error throws (the class checks first).
fn checked(r: snowmint::Result<u64>) -> i64 {
    match r {
        Ok(v) => v as i64,
        Err(_) => wasm_bindgen::throw_str("INVALID_ID: value outside the width (fast path)"),
    }
}

#[wasm_bindgen(js_class = OpaqueCore)]
impl OpaqueCore {
    /// `key` must be a Uint8Array of 16 bytes; `bits` is the layout's width (32..=64).
    #[wasm_bindgen(constructor)]
    pub fn new(key: JsValue, bits: u32) -> Result<OpaqueCore, JsValue> {
        let key = key
            .dyn_ref::<Uint8Array>()
            .ok_or_else(|| type_err("key must be a Uint8Array of 16 bytes"))?
            .to_vec();
        let inner = snowmint::Opaque::new(&key, bits).map_err(|e| {
            let err = js_err(e);
            if key.len() != snowmint::OPAQUE_KEY_LEN {
                let msg = Reflect::get(&err, &"message".into())
                    .ok()
                    .and_then(|m| m.as_string())
                    .unwrap_or_default();
                let msg = [
                    msg.as_str(),
                    " (got ",
                    dec(key.len() as u64).as_str(),
                    " bytes)",
                ]
                .concat();
                let _ = Reflect::set(&err, &"message".into(), &msg.into());
            }
            err
        })?;
        Ok(OpaqueCore { inner })
    }

    /// The fast path of `encode` for a bigint the package's `Opaque` class has checked to be in
    /// `0..2^bits` (a bigint in, an `i64` across, as wasm-bindgen passes a `u64`): no JS value to
    /// inspect through imports, and no `Result` to unpack. The token comes back as the `i64` of the same
    /// bits (a bigint below 0 for tokens of 2^63 and above: the class takes `BigInt.asUintN(64, …)` of
    /// those). The core checks the range again and throws if the class's check ever let one through.
    #[wasm_bindgen(js_name = "__encode", skip_typescript)]
    pub fn encode_i64(&self, id: u64) -> i64 {
        checked(self.inner.encode(id))
    }

    /// The fast path of `decode`, as [`OpaqueCore::encode_i64`].
    #[wasm_bindgen(js_name = "__decode", skip_typescript)]
    pub fn decode_i64(&self, token: u64) -> i64 {
        checked(self.inner.decode(token))
    }

    /// The token of an ID.
    pub fn encode(&self, id: JsValue) -> Result<u64, JsValue> {
        self.inner.encode(value_arg(&id, "id")?).map_err(js_err)
    }

    /// The ID of a token.
    pub fn decode(&self, token: JsValue) -> Result<u64, JsValue> {
        self.inner
            .decode(value_arg(&token, "token")?)
            .map_err(js_err)
    }

    /// The tokens of many IDs, as a new array (an error leaves nothing behind).
    #[wasm_bindgen(js_name = encodeMany)]
    pub fn encode_many(&self, ids: JsValue) -> Result<BigUint64Array, JsValue> {
        self.many(&ids, "ids", false)
    }

    /// The IDs of many tokens, as a new array.
    #[wasm_bindgen(js_name = decodeMany)]
    pub fn decode_many(&self, tokens: JsValue) -> Result<BigUint64Array, JsValue> {
        self.many(&tokens, "tokens", true)
    }

    /// The width in bits.
    #[wasm_bindgen(getter)]
    pub fn bits(&self) -> u32 {
        self.inner.bits()
    }
}
