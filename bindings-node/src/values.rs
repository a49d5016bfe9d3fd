//! JavaScript values, read exactly (the host layer's integer rule, strings, booleans, options
//! objects, layouts, IDs) and written exactly (a field as a Number or a bigint by the layout:
//! `snowmint_host::JsNumbers`).

use super::*;

pub(crate) fn js_str(env: sys::napi_env, s: &str) -> Raw {
    let mut v = ptr::null_mut();
    unsafe {
        sys::napi_create_string_utf8(env, s.as_ptr() as *const c_char, s.len() as isize, &mut v)
    };
    v
}

pub(crate) fn type_of(env: sys::napi_env, v: Raw) -> sys::napi_valuetype {
    let mut t = 0;
    unsafe { sys::napi_typeof(env, v, &mut t) };
    t
}

pub(crate) fn is_nullish(env: sys::napi_env, v: Raw) -> bool {
    v.is_null()
        || matches!(
            type_of(env, v),
            sys::ValueType::napi_undefined | sys::ValueType::napi_null
        )
}

pub(crate) fn get_double(env: sys::napi_env, v: Raw) -> f64 {
    let mut d = 0.0;
    unsafe { sys::napi_get_value_double(env, v, &mut d) };
    d
}

/// A BigInt's value if it is in 0..2^64 (`None` if negative or too large).
pub(crate) fn get_bigint_u64(env: sys::napi_env, v: Raw) -> Option<u64> {
    let mut value = 0u64;
    let mut lossless = false;
    let status = unsafe { sys::napi_get_value_bigint_uint64(env, v, &mut value, &mut lossless) };
    if status != sys::Status::napi_ok || !lossless {
        return None;
    }
    Some(value)
}

pub(crate) fn get_string(env: sys::napi_env, v: Raw) -> Result<String> {
    let mut len = 0usize;
    let status = unsafe { sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len) };
    if status != sys::Status::napi_ok {
        return Err(type_err(env, "expected a string"));
    }
    let mut buf = vec![0u8; len + 1];
    unsafe {
        sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr() as *mut c_char, len + 1, &mut len)
    };
    buf.truncate(len);
    String::from_utf8(buf).map_err(|_| type_err(env, "string is not valid UTF-8"))
}

/// A whole number from a `number` (≤ 2^53 - 1) or a `bigint` (< 2^64), exactly; `what` names it.
pub(crate) fn get_u64(env: sys::napi_env, v: Raw, what: &str) -> Result<u64> {
    get_u64_as(env, v, what, ErrorCode::InvalidArgument)
}

/// [`get_u64`] whose whole-number values outside 0..2^64 (negative, too large a bigint) are `range`
/// (the argument's own code, e.g. `NODE_ID_OUT_OF_RANGE`); other bad values are `INVALID_ARGUMENT`:
/// the host layer's rule and messages (`snowmint_host::js`), the WASM package's too.
pub(crate) fn get_u64_as(env: sys::napi_env, v: Raw, what: &str, range: ErrorCode) -> Result<u64> {
    snowmint_host::js::u64_arg(what, js_int(env, v), range).map_err(|e| js_refusal(env, e))
}

/// A value as the host layer's integer rule sees it.
fn js_int(env: sys::napi_env, v: Raw) -> snowmint_host::js::JsInt<'static> {
    use snowmint_host::js::JsInt;
    match type_of(env, v) {
        sys::ValueType::napi_number => JsInt::Number(get_double(env, v)),
        sys::ValueType::napi_bigint => JsInt::BigInt(get_bigint_u64(env, v)),
        t => JsInt::Other(type_name(t)),
    }
}

/// JavaScript's `typeof` of a value of this type (`null` for null, as the WASM package says it).
fn type_name(t: sys::napi_valuetype) -> &'static str {
    match t {
        sys::ValueType::napi_undefined => "undefined",
        sys::ValueType::napi_null => "null",
        sys::ValueType::napi_boolean => "boolean",
        sys::ValueType::napi_number => "number",
        sys::ValueType::napi_string => "string",
        sys::ValueType::napi_symbol => "symbol",
        sys::ValueType::napi_function => "function",
        sys::ValueType::napi_bigint => "bigint",
        _ => "object",
    }
}

/// A value the host layer's rule refused: a `TypeError` or a `SnowmintError`, with its code.
fn js_refusal(env: sys::napi_env, e: snowmint_host::js::JsRefusal) -> napi::Error {
    let kind = if e.type_error {
        Kind::Type
    } else {
        Kind::Error
    };
    throw(env, kind, e.error.code.as_str(), &e.error.message, &[])
}

/// A whole number that must fit in `u32` (bit counts); larger values become `u32::MAX`, which the core
/// then rejects by field name (every u32-sized field has a limit far below it).
pub(crate) fn get_u32_saturating(env: sys::napi_env, v: Raw, what: &str) -> Result<u32> {
    Ok(get_u64(env, v, what)?.min(u32::MAX as u64) as u32)
}

pub(crate) fn get_bool(env: sys::napi_env, v: Raw, what: &str) -> Result<bool> {
    if type_of(env, v) != sys::ValueType::napi_boolean {
        return Err(type_err(env, &format!("{what} must be a boolean")));
    }
    let mut b = false;
    unsafe { sys::napi_get_value_bool(env, v, &mut b) };
    Ok(b)
}

/// An options object: checks it is an object whose keys are all in `allowed`.
pub(crate) struct Opts {
    pub(crate) env: sys::napi_env,
    pub(crate) obj: Raw,
}

impl Opts {
    pub(crate) fn new(env: sys::napi_env, obj: Raw, what: &str, allowed: &[&str]) -> Result<Opts> {
        if is_nullish(env, obj) || type_of(env, obj) != sys::ValueType::napi_object {
            return Err(type_err(env, &format!("{what} must be an object")));
        }
        let mut names = ptr::null_mut();
        unsafe { sys::napi_get_property_names(env, obj, &mut names) };
        let mut n = 0u32;
        unsafe { sys::napi_get_array_length(env, names, &mut n) };
        for i in 0..n {
            let mut key = ptr::null_mut();
            unsafe { sys::napi_get_element(env, names, i, &mut key) };
            let key = get_string(env, key)?;
            if !allowed.contains(&key.as_str()) {
                return Err(type_err(
                    env,
                    &format!(
                        "{what}: unknown option {key:?} (allowed: {})",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(Opts { env, obj })
    }

    /// The property, or `None` when absent or undefined.
    pub(crate) fn get(&self, name: &str) -> Option<Raw> {
        let name = CString::new(name).ok()?;
        let mut v = ptr::null_mut();
        unsafe { sys::napi_get_named_property(self.env, self.obj, name.as_ptr(), &mut v) };
        if v.is_null() || type_of(self.env, v) == sys::ValueType::napi_undefined {
            None
        } else {
            Some(v)
        }
    }

    pub(crate) fn required(&self, name: &str, what: &str) -> Result<Raw> {
        self.get(name)
            .ok_or_else(|| type_err(self.env, &format!("{what}: {name} is required")))
    }
}

/// `string` (a preset name) or a `Layout` instance; `undefined`/`null` is Twitter's layout.
pub(crate) fn layout_arg(env: sys::napi_env, v: Option<Raw>) -> Result<snowmint::Layout> {
    let v = match v {
        Some(v) if !is_nullish(env, v) => v,
        _ => return Ok(snowmint::Layout::twitter()),
    };
    match type_of(env, v) {
        sys::ValueType::napi_string => snowmint::Layout::preset(&get_string(env, v)?).js(env),
        sys::ValueType::napi_object => {
            use napi::bindgen_prelude::{validate_type_tag, TypeTag, ValidateNapiValue};
            // instanceof, napi_unwrap, then the class's type tag: never a blind cast. The Layout is
            // copied out at once (it is a small Copy value), so no borrow outlives this call.
            if unsafe { <&Layout as ValidateNapiValue>::validate(env, v) }.is_ok() {
                let mut data: *mut std::ffi::c_void = ptr::null_mut();
                let unwrapped =
                    unsafe { sys::napi_unwrap(env, v, &mut data) } == sys::Status::napi_ok;
                if unwrapped
                    && !data.is_null()
                    && unsafe {
                        validate_type_tag(env, v, &<Layout as TypeTag>::type_tag(), "Layout")
                    }
                    .is_ok()
                {
                    return Ok(unsafe { (*(data as *const Layout)).inner });
                }
            }
            let mut pending = false;
            unsafe { sys::napi_is_exception_pending(env, &mut pending) };
            if pending {
                let mut ignored = ptr::null_mut();
                unsafe { sys::napi_get_and_clear_last_exception(env, &mut ignored) };
            }
            Err(type_err(env, "layout must be a preset name or a Layout"))
        }
        _ => Err(type_err(env, "layout must be a preset name or a Layout")),
    }
}

/// An ID argument: a `bigint`, a safe-integer `number`, or (where `strings` is set) a string in any form.
///
/// An ID out of 0..2^64 (a negative number or bigint, a bigint ≥ 2^64) is `INVALID_ID`, as in every
/// runtime (a string out of range is `PARSE`, the core's parse error).
pub(crate) fn id_arg(env: sys::napi_env, v: Raw, strings: bool) -> Result<u64> {
    match type_of(env, v) {
        sys::ValueType::napi_string if strings => snowmint::parse_any(&get_string(env, v)?).js(env),
        _ => snowmint_host::js::id_arg(js_int(env, v)).map_err(|e| js_refusal(env, e)),
    }
}

pub(crate) fn raw_of(v: &Unknown<'_>) -> Raw {
    v.raw()
}

pub(crate) fn opt_raw(v: &Option<Unknown<'_>>) -> Option<Raw> {
    v.as_ref().map(raw_of)
}

pub(crate) fn string_arg(env: sys::napi_env, v: Raw, what: &str) -> Result<String> {
    if type_of(env, v) != sys::ValueType::napi_string {
        return Err(type_err(env, &format!("{what} must be a string")));
    }
    get_string(env, v)
}

pub(crate) fn set(env: sys::napi_env, obj: Raw, name: &str, v: Raw) {
    if let Ok(name) = CString::new(name) {
        unsafe { sys::napi_set_named_property(env, obj, name.as_ptr(), v) };
    }
}

pub(crate) fn num(env: sys::napi_env, x: f64) -> Raw {
    let mut v = ptr::null_mut();
    unsafe { sys::napi_create_double(env, x, &mut v) };
    v
}

pub(crate) fn big(env: sys::napi_env, x: u64) -> Raw {
    let mut v = ptr::null_mut();
    unsafe { sys::napi_create_bigint_uint64(env, x, &mut v) };
    v
}

/// A field's value as a Number when the layout's field fits 2^53 - 1 (`number`, from `JsNumbers`),
/// else as a bigint: exact either way, one type per layout (the WASM package's rule too).
pub(crate) fn int(env: sys::napi_env, x: u64, number: bool) -> Raw {
    if number {
        num(env, x as f64)
    } else {
        big(env, x)
    }
}
