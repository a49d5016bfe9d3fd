//! Node.js binding of snowmint (napi-rs): converts JavaScript values to core types and core errors to
//! JavaScript `Error`s with a stable `code`. Sequencing, layouts, parsing and formatting all live in the
//! core crate; nothing here re-implements them.
//!
//! Integer inputs are read exactly: a `bigint` must be non-negative and below 2^64, a `number` must be a
//! whole number no larger than 2^53 - 1 (`snowmint::whole_f64`); anything else is refused, never wrapped
//! or rounded. Wrong JavaScript types are `TypeError`s with `code: 'INVALID_ARGUMENT'` (or
//! `'INVALID_CLOCK'` for a clock reading); every other error (a value out of range, a core or
//! coordination error) is a `SnowmintError` (the package's `Error` subclass, made in `index.js` and
//! handed to the addon by `__setErrorClass`) with the code. Integer outputs are exact too: `nodeId`,
//! `sequence` and `timestampMs` are Numbers when the layout's field fits 2^53 - 1 and bigints
//! otherwise (`snowmint_host::JsNumbers`). The WASM package follows the same rules.
#![deny(clippy::all)]

use std::ffi::{c_char, CString};
use std::ptr;

use napi::bindgen_prelude::{AsyncTask, BigUint64Array, Env, This, Unknown};
use napi::{sys, JsValue, Status};
use napi_derive::napi;
use std::cell::{Cell, UnsafeCell};

use snowmint::state_file::{SharedState, StateFile};
use snowmint_coord as coord;
use snowmint_host::state_file::Refused;
use snowmint_host::window::OwnWindow;
use snowmint_host::{ClockFault, JsNumbers};
use std::sync::Arc;

use snowmint::{Encoding, ErrorCode, FastClock, Options, Order, Policy, SharedGenerator};

mod fast;
mod opaque;
mod range;
use fast::*;
// The module-exports hook napi-rs calls when the addon loads (it installs the fast paths).
pub use fast::install_fast_paths;

type Result<T> = napi::Result<T>;
type Raw = sys::napi_value;

// ---------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Kind {
    /// A `SnowmintError` (a plain `Error` before `index.js` registered the class).
    Error,
    /// A `TypeError`: a wrong JavaScript type.
    Type,
}

thread_local! {
    /// The `SnowmintError` class of the environment running on this thread (`__setErrorClass`), with
    /// that environment: a JavaScript environment runs on one thread, and its cleanup hook clears the
    /// entry, so a reference is never used in another environment or after its own is gone.
    static ERROR_CLASS: Cell<(sys::napi_env, sys::napi_ref)> = const { Cell::new((ptr::null_mut(), ptr::null_mut())) };
}

/// A new error object: a `TypeError`, or a `SnowmintError` (a plain `Error` before the class is
/// registered), with `code` set. Null if the engine could not make one.
fn new_error(env: sys::napi_env, kind: Kind, code: &str, msg: &str) -> Raw {
    let c = js_str(env, code);
    let m = js_str(env, msg);
    let mut err = ptr::null_mut();
    unsafe {
        match kind {
            Kind::Type => {
                sys::napi_create_type_error(env, c, m, &mut err);
            }
            Kind::Error => {
                let (class_env, class) = ERROR_CLASS.with(Cell::get);
                let mut ctor = ptr::null_mut();
                if class_env == env
                    && !class.is_null()
                    && sys::napi_get_reference_value(env, class, &mut ctor) == sys::Status::napi_ok
                    && !ctor.is_null()
                    && sys::napi_new_instance(env, ctor, 1, &m, &mut err) == sys::Status::napi_ok
                {
                    sys::napi_set_named_property(env, err, c"code".as_ptr(), c);
                } else {
                    err = ptr::null_mut();
                    sys::napi_create_error(env, c, m, &mut err);
                }
            }
        }
    }
    err
}

/// The environment's cleanup hook for [`ERROR_CLASS`].
unsafe extern "C" fn forget_error_class(env: *mut std::ffi::c_void) {
    ERROR_CLASS.with(|c| {
        if c.get().0 == env as sys::napi_env {
            c.set((ptr::null_mut(), ptr::null_mut()));
        }
    });
}

/// `__setErrorClass(SnowmintError)`: the class every non-type error of this environment is made of.
unsafe extern "C" fn set_error_class(env: sys::napi_env, info: sys::napi_callback_info) -> Raw {
    let mut argc = 1usize;
    let mut argv = [ptr::null_mut(); 1];
    unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        );
        if argc < 1 || type_of(env, argv[0]) != sys::ValueType::napi_function {
            type_err(env, "__setErrorClass takes a class");
            return ptr::null_mut();
        }
        let (old_env, old) = ERROR_CLASS.with(Cell::get);
        if old_env == env && !old.is_null() {
            sys::napi_delete_reference(env, old);
        } else if sys::napi_add_env_cleanup_hook(
            env,
            Some(forget_error_class),
            env as *mut std::ffi::c_void,
        ) != sys::Status::napi_ok
        {
            return ptr::null_mut();
        }
        let mut r = ptr::null_mut();
        if sys::napi_create_reference(env, argv[0], 1, &mut r) == sys::Status::napi_ok {
            ERROR_CLASS.with(|c| c.set((env, r)));
        }
    }
    ptr::null_mut()
}

/// Throws a JavaScript error with `code` (and extra numeric properties) and returns the napi error that
/// tells napi-rs an exception is already pending.
fn throw(
    env: sys::napi_env,
    kind: Kind,
    code: &str,
    msg: &str,
    extra: &[(&str, f64)],
) -> napi::Error {
    throw_with_field(env, kind, code, msg, extra, None)
}

/// [`throw`], with a `field` property (the layout field an `INVALID_LAYOUT` names) when given.
fn throw_with_field(
    env: sys::napi_env,
    kind: Kind,
    code: &str,
    msg: &str,
    extra: &[(&str, f64)],
    field: Option<&str>,
) -> napi::Error {
    unsafe {
        let mut is_pending = false;
        sys::napi_is_exception_pending(env, &mut is_pending);
        if !is_pending {
            let err = new_error(env, kind, code, msg);
            if !err.is_null() {
                for (name, value) in extra {
                    let mut v = ptr::null_mut();
                    sys::napi_create_double(env, *value, &mut v);
                    if let Ok(name) = CString::new(*name) {
                        sys::napi_set_named_property(env, err, name.as_ptr(), v);
                    }
                }
                if let Some(field) = field {
                    sys::napi_set_named_property(env, err, c"field".as_ptr(), js_str(env, field));
                }
                sys::napi_throw(env, err);
            }
        }
    }
    napi::Error::from_status(Status::PendingException)
}

/// A core error as a `SnowmintError` with the core's code; `retryAfterMs` for TOO_FAR_AHEAD,
/// `position` for PARSE, `field` for INVALID_LAYOUT (as in snowmint-wasm).
fn core_err(env: sys::napi_env, e: snowmint::Error) -> napi::Error {
    let msg = e.to_string();
    let mut extra: Vec<(&str, f64)> = Vec::new();
    if let Some(ms) = e.retry_after_ms() {
        extra.push(("retryAfterMs", ms as f64));
    }
    let mut field = None;
    match e {
        snowmint::Error::Parse { position, .. } => extra.push(("position", position as f64)),
        snowmint::Error::AmbiguousId { .. } => extra.push(("position", 0.0)),
        snowmint::Error::InvalidLayout { field: f, .. } => field = Some(f),
        _ => {}
    }
    let msg = match e {
        // The core's message shows the Rust call; say it in JavaScript.
        snowmint::Error::PresetNeedsParameters { preset } => format!(
            "invalid layout: the {preset} preset needs an epoch and a node count: pass \
             {{ layout: Layout.snowcast(epochMs, nodeCount) }} (epochMs: Unix ms; nodeCount: 128..8192)"
        ),
        _ => msg,
    };
    throw_with_field(env, Kind::Error, e.code().as_str(), &msg, &extra, field)
}

/// A coordination error as the rejection of a Promise: the `Error` object itself (with its `code`), not
/// thrown (a task's `resolve` runs where no JavaScript frame could catch it).
fn rejection(raw: sys::napi_env, e: &coord::Error) -> napi::Error {
    let err = new_error(raw, Kind::Error, e.code().as_str(), e.message());
    // SAFETY: `err` is a live JavaScript value of this environment.
    unsafe { napi::Error::from(Unknown::from_raw_unchecked(raw, err)) }
}

/// A coordination error as a JavaScript `Error` with its code.
fn coord_err(env: sys::napi_env, e: coord::Error) -> napi::Error {
    throw(env, Kind::Error, e.code().as_str(), e.message(), &[])
}

fn type_err(env: sys::napi_env, msg: &str) -> napi::Error {
    throw(
        env,
        Kind::Type,
        ErrorCode::InvalidArgument.as_str(),
        msg,
        &[],
    )
}

/// A value of the right type out of range: a `SnowmintError` with `INVALID_ARGUMENT`.
fn range_err(env: sys::napi_env, msg: &str) -> napi::Error {
    code_err(env, msg, ErrorCode::InvalidArgument)
}

/// A value of the right type but out of range, with the argument's own code.
fn code_err(env: sys::napi_env, msg: &str, code: ErrorCode) -> napi::Error {
    throw(env, Kind::Error, code.as_str(), msg, &[])
}

trait OrThrow<T> {
    fn js(self, env: sys::napi_env) -> Result<T>;
}

impl<T> OrThrow<T> for snowmint::Result<T> {
    #[inline]
    fn js(self, env: sys::napi_env) -> Result<T> {
        self.map_err(|e| core_err(env, e))
    }
}

// ---------------------------------------------------------------------------------------------------
// Reading JavaScript values exactly
// ---------------------------------------------------------------------------------------------------

fn js_str(env: sys::napi_env, s: &str) -> Raw {
    let mut v = ptr::null_mut();
    unsafe {
        sys::napi_create_string_utf8(env, s.as_ptr() as *const c_char, s.len() as isize, &mut v)
    };
    v
}

fn type_of(env: sys::napi_env, v: Raw) -> sys::napi_valuetype {
    let mut t = 0;
    unsafe { sys::napi_typeof(env, v, &mut t) };
    t
}

fn is_nullish(env: sys::napi_env, v: Raw) -> bool {
    v.is_null()
        || matches!(
            type_of(env, v),
            sys::ValueType::napi_undefined | sys::ValueType::napi_null
        )
}

fn get_double(env: sys::napi_env, v: Raw) -> f64 {
    let mut d = 0.0;
    unsafe { sys::napi_get_value_double(env, v, &mut d) };
    d
}

/// A BigInt's value if it is in 0..2^64 (`None` if negative or too large).
fn get_bigint_u64(env: sys::napi_env, v: Raw) -> Option<u64> {
    let mut value = 0u64;
    let mut lossless = false;
    let status = unsafe { sys::napi_get_value_bigint_uint64(env, v, &mut value, &mut lossless) };
    if status != sys::Status::napi_ok || !lossless {
        return None;
    }
    Some(value)
}

fn get_string(env: sys::napi_env, v: Raw) -> Result<String> {
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
fn get_u64(env: sys::napi_env, v: Raw, what: &str) -> Result<u64> {
    get_u64_as(env, v, what, ErrorCode::InvalidArgument)
}

/// [`get_u64`] whose whole-number values outside 0..2^64 (negative, too large a bigint) are `range`
/// (the argument's own code, e.g. `NODE_ID_OUT_OF_RANGE`); other bad values are `INVALID_ARGUMENT`:
/// the host layer's rule and messages (`snowmint_host::js`), the WASM package's too.
fn get_u64_as(env: sys::napi_env, v: Raw, what: &str, range: ErrorCode) -> Result<u64> {
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
fn get_u32_saturating(env: sys::napi_env, v: Raw, what: &str) -> Result<u32> {
    Ok(get_u64(env, v, what)?.min(u32::MAX as u64) as u32)
}

fn get_bool(env: sys::napi_env, v: Raw, what: &str) -> Result<bool> {
    if type_of(env, v) != sys::ValueType::napi_boolean {
        return Err(type_err(env, &format!("{what} must be a boolean")));
    }
    let mut b = false;
    unsafe { sys::napi_get_value_bool(env, v, &mut b) };
    Ok(b)
}

/// An options object: checks it is an object whose keys are all in `allowed`.
struct Opts {
    env: sys::napi_env,
    obj: Raw,
}

impl Opts {
    fn new(env: sys::napi_env, obj: Raw, what: &str, allowed: &[&str]) -> Result<Opts> {
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
    fn get(&self, name: &str) -> Option<Raw> {
        let name = CString::new(name).ok()?;
        let mut v = ptr::null_mut();
        unsafe { sys::napi_get_named_property(self.env, self.obj, name.as_ptr(), &mut v) };
        if v.is_null() || type_of(self.env, v) == sys::ValueType::napi_undefined {
            None
        } else {
            Some(v)
        }
    }

    fn required(&self, name: &str, what: &str) -> Result<Raw> {
        self.get(name)
            .ok_or_else(|| type_err(self.env, &format!("{what}: {name} is required")))
    }
}

/// `string` (a preset name) or a `Layout` instance; `undefined`/`null` is Twitter's layout.
fn layout_arg(env: sys::napi_env, v: Option<Raw>) -> Result<snowmint::Layout> {
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
fn id_arg(env: sys::napi_env, v: Raw, strings: bool) -> Result<u64> {
    match type_of(env, v) {
        sys::ValueType::napi_string if strings => snowmint::parse_any(&get_string(env, v)?).js(env),
        _ => snowmint_host::js::id_arg(js_int(env, v)).map_err(|e| js_refusal(env, e)),
    }
}

fn raw_of(v: &Unknown<'_>) -> Raw {
    v.raw()
}

fn opt_raw(v: &Option<Unknown<'_>>) -> Option<Raw> {
    v.as_ref().map(raw_of)
}

// ---------------------------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------------------------

/// A validated ID layout: bit widths, field order, tick and epoch, with its capacity and lifespan.
#[napi]
pub struct Layout {
    inner: snowmint::Layout,
}

#[napi]
impl Layout {
    /// A custom layout. Every field is checked by the core; errors name the field (`INVALID_LAYOUT`).
    /// `order` defaults to timestamp, node, sequence, `tickNs` to 1 ms, `nodeIdOffset` to 0 and
    /// `useSignBit` to false, as in every binding.
    #[napi(
        constructor,
        ts_args_type = "config: { timestampBits: number; nodeBits: number; sequenceBits: number; epochMs: number | bigint; order?: 'timestamp_node_sequence' | 'timestamp_sequence_node'; tickNs?: number | bigint; nodeIdOffset?: number | bigint; useSignBit?: boolean }"
    )]
    pub fn new(env: Env, config: Unknown<'_>) -> Result<Self> {
        let env = env.raw();
        let o = Opts::new(
            env,
            raw_of(&config),
            "Layout config",
            &snowmint_host::JS_LAYOUT_KEYS,
        )?;
        let w = "Layout config";
        let order = match o.get("order") {
            None => None,
            Some(order) => {
                if type_of(env, order) != sys::ValueType::napi_string {
                    return Err(type_err(env, "order must be a string"));
                }
                Some(Order::from_name(&get_string(env, order)?).js(env)?)
            }
        };
        // The defaults of every binding (snowmint_host::LayoutFields).
        let cfg = snowmint_host::LayoutFields {
            timestamp_bits: get_u32_saturating(
                env,
                o.required("timestampBits", w)?,
                "timestampBits",
            )?,
            node_bits: get_u32_saturating(env, o.required("nodeBits", w)?, "nodeBits")?,
            sequence_bits: get_u32_saturating(env, o.required("sequenceBits", w)?, "sequenceBits")?,
            epoch_ms: get_u64(env, o.required("epochMs", w)?, "epochMs")?,
            order,
            tick_ns: o
                .get("tickNs")
                .map(|v| get_u64(env, v, "tickNs"))
                .transpose()?,
            node_id_offset: o
                .get("nodeIdOffset")
                .map(|v| get_u64(env, v, "nodeIdOffset"))
                .transpose()?,
            use_sign_bit: o
                .get("useSignBit")
                .map(|v| get_bool(env, v, "useSignBit"))
                .transpose()?,
        }
        .config();
        Ok(Layout {
            inner: snowmint::Layout::new(cfg).js(env)?,
        })
    }

    /// A preset: `twitter`, `discord`, `instagram`, `sonyflake`, `hazelcast`, `js53`, `decimal`.
    #[napi(factory, ts_args_type = "name: PresetName")]
    pub fn preset(env: Env, name: Unknown<'_>) -> Result<Layout> {
        let env = env.raw();
        if type_of(env, raw_of(&name)) != sys::ValueType::napi_string {
            return Err(type_err(env, "preset name must be a string"));
        }
        Ok(Layout {
            inner: snowmint::Layout::preset(&get_string(env, raw_of(&name))?).js(env)?,
        })
    }

    /// snowcast's layout for an epoch (Unix ms) and a node count (128..=8192, rounded up to a power of 2).
    #[napi(
        factory,
        ts_args_type = "epochMs: number | bigint, nodeCount: number | bigint"
    )]
    pub fn snowcast(env: Env, epoch_ms: Unknown<'_>, node_count: Unknown<'_>) -> Result<Layout> {
        let env = env.raw();
        let epoch = get_u64(env, raw_of(&epoch_ms), "epochMs")?;
        let count = get_u64(env, raw_of(&node_count), "nodeCount")?;
        Ok(Layout {
            inner: snowmint::Layout::snowcast(epoch, count).js(env)?,
        })
    }

    /// Hazelcast's layout with a node-ID offset added to every node ID.
    #[napi(factory, ts_args_type = "nodeIdOffset: number | bigint")]
    pub fn hazelcast(env: Env, node_id_offset: Unknown<'_>) -> Result<Layout> {
        let env = env.raw();
        let offset = get_u64(env, raw_of(&node_id_offset), "nodeIdOffset")?;
        Ok(Layout {
            inner: snowmint::Layout::hazelcast(offset).js(env)?,
        })
    }

    /// The preset's name, or null for a custom layout.
    #[napi(getter)]
    pub fn name(&self) -> Option<&'static str> {
        self.inner.preset_name()
    }
    #[napi(getter)]
    pub fn timestamp_bits(&self) -> u32 {
        self.inner.timestamp_bits()
    }
    #[napi(getter)]
    pub fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    #[napi(getter)]
    pub fn sequence_bits(&self) -> u32 {
        self.inner.sequence_bits()
    }
    /// Total width in bits (64 for decimal IDs).
    #[napi(getter)]
    pub fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }
    #[napi(
        getter,
        ts_return_type = "'timestamp_node_sequence' | 'timestamp_sequence_node'"
    )]
    pub fn order(&self) -> &'static str {
        self.inner.order().name()
    }
    /// Tick length in nanoseconds.
    #[napi(getter)]
    pub fn tick_ns(&self) -> u64 {
        self.inner.tick_ns()
    }
    /// Epoch, Unix milliseconds.
    #[napi(getter)]
    pub fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }
    /// The node-ID offset added to every node ID.
    #[napi(getter)]
    pub fn node_id_offset(&self) -> u64 {
        self.inner.node_id_offset()
    }
    /// How many node IDs the node field holds.
    #[napi(getter)]
    pub fn node_count(&self) -> f64 {
        // A power of two (or the decimal layout's 100 and 1): exact as a Number at every width.
        self.inner.node_count() as f64
    }
    /// IDs one node can mint per tick.
    #[napi(getter)]
    pub fn ids_per_tick(&self) -> f64 {
        // A power of two (or the decimal layout's 100 and 1): exact as a Number at every width.
        self.inner.ids_per_tick() as f64
    }
    /// Largest node ID a generator may be given.
    #[napi(getter)]
    pub fn max_node_id(&self) -> u64 {
        self.inner.max_node_id()
    }
    /// Largest tick the timestamp field holds.
    #[napi(getter)]
    pub fn max_tick(&self) -> u64 {
        self.inner.max_tick()
    }
    /// The first Unix millisecond the layout cannot represent.
    #[napi(getter)]
    pub fn lifespan_end_ms(&self) -> u64 {
        self.inner.lifespan_end_ms()
    }
    /// The lifespan end as ISO-8601 UTC text.
    #[napi(getter)]
    pub fn lifespan_end_iso(&self) -> String {
        self.inner.lifespan_end().to_buf().as_str().to_owned()
    }
    /// Unit an injected clock returns: 'ms' (Unix ms), or 'ns' (Unix ns) for sub-millisecond ticks.
    #[napi(getter, ts_return_type = "'ms' | 'ns'")]
    pub fn clock_unit(&self) -> &'static str {
        self.inner.clock_unit().name()
    }
}

// ---------------------------------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------------------------------

/// A generator of unique, strictly increasing IDs for one node ID (the core's lock-free
/// `SharedGenerator`). Instances belong to the JavaScript thread that created them: in `worker_threads`
/// give each worker its own generator with a distinct node ID, or mint in one thread only.
#[napi]
pub struct Generator {
    gen: Gen,
    unit: snowmint::ClockReader,
    /// The injected clock: a reference to a JS function in `env`, or null for the system clock.
    clock: sys::napi_ref,
    env: sys::napi_env,
    /// The environment's fast-path table this generator is registered in (`__register`), or null.
    fast: Cell<*const Fast>,
    /// Its index there.
    index: Cell<u32>,
    /// The object's own window (the host layer's `OwnWindow`), of the fixed node ID's generator or of
    /// the lease held, used with the system clock: only this environment's thread reaches the object,
    /// and with the system clock nothing calls back into JavaScript while it mints. A thread-local
    /// window cost a `__tls_get_addr` call per ID from the addon.
    plain_window: OwnWindow<SharedGenerator<SharedState>>,
    lease_window: OwnWindow<coord::lease::CeiledGenerator>,
}

impl Drop for Generator {
    fn drop(&mut self) {
        self.close_own();
        if !self.clock.is_null() {
            unsafe { sys::napi_delete_reference(self.env, self.clock) };
        }
        let fast = self.fast.get();
        if !fast.is_null() {
            // SAFETY: a registered generator holds a reference on its table, so the table is alive.
            unsafe { Fast::unregister(fast, self.index.get()) };
        }
    }
}

/// What a generator has done since it was built (`gen.stats()`). Numbers, not bigints: exact up to
/// 2^53 (about 2.8 years of minting at 100 million IDs a second; 104 days of total waiting for
/// `waitNs`), and `JSON.stringify` takes them.
#[napi(object)]
pub struct GeneratorStats {
    /// IDs handed out: single IDs and every ID of every batch.
    pub minted: f64,
    /// `nextIds` calls that minted at least one ID.
    pub batches: f64,
    /// Ticks the generator moved to ahead of the clock (a used-up tick, or a clock that stepped back).
    pub borrowed_ticks: f64,
    /// Sleeps the generator took under the `wait` policy (JavaScript's default `fail` never sleeps).
    pub waits: f64,
    /// The total of those sleeps, in nanoseconds (as asked).
    pub wait_ns: f64,
    /// Clock readings below the last one seen, in whole ticks (one step back counts once).
    pub regressions: f64,
}

impl From<snowmint::Stats> for GeneratorStats {
    fn from(s: snowmint::Stats) -> Self {
        GeneratorStats {
            minted: s.minted as f64,
            batches: s.batches as f64,
            borrowed_ticks: s.borrowed_ticks as f64,
            waits: s.waits as f64,
            wait_ns: s.wait_ns as f64,
            regressions: s.regressions as f64,
        }
    }
}

/// A fixed node ID, or a node ID held under a lease (every lease decision is the coord crate's).
// The in-memory generator stays inline: it is the hot path, and one indirection costs more than the size.
#[allow(clippy::large_enum_variant)]
enum Gen {
    /// State in this process's memory, or in a state file shared by processes.
    Plain(SharedGenerator<SharedState>),
    Leased(Arc<coord::SequencerGenerator>),
}

impl Gen {
    fn layout(&self) -> &snowmint::Layout {
        match self {
            Gen::Plain(g) => g.layout(),
            Gen::Leased(l) => l.layout(),
        }
    }
    fn node_id(&self) -> u64 {
        match self {
            Gen::Plain(g) => g.node_id(),
            Gen::Leased(l) => l.node_id(),
        }
    }
}

/// The generator options (`policy`, `maxAheadMs`, `randomStart`, `randomSeed`) of `o`.
fn generator_options(env: sys::napi_env, o: &Opts) -> Result<Options> {
    let policy = match o.get("policy") {
        None => Policy::Fail,
        Some(v) => {
            if type_of(env, v) != sys::ValueType::napi_string {
                return Err(type_err(env, "policy must be 'wait', 'fail' or 'strict'"));
            }
            Policy::from_name(&get_string(env, v)?).js(env)?
        }
    };
    let max_ahead_ms = match o.get("maxAheadMs") {
        None => None,
        Some(v) => Some(get_u64(env, v, "maxAheadMs")?),
    };
    let random_start = match o.get("randomStart") {
        None => None,
        Some(v) => Some(get_bool(env, v, "randomStart")?),
    };
    let random_seed = match o.get("randomSeed") {
        None => None,
        Some(v) => Some(get_u64(env, v, "randomSeed")?),
    };
    // Defaults, the overflow check and the seed rule: the host layer's, as in every runtime.
    snowmint_host::options(
        &snowmint_host::JS_NAMES,
        policy,
        max_ahead_ms,
        random_start,
        random_seed,
    )
    .map_err(|e| code_err(env, &e.message, e.code))
}

impl Generator {
    /// Reads the injected clock once, in the layout's unit, as Unix nanoseconds. A JS exception thrown by
    /// the clock is left pending (`ClockFault::Host`); a value that is not a number or a bigint is
    /// `ClockFault::WrongType`; a bad reading is `ClockFault::Core`.
    fn read_clock(&self) -> std::result::Result<u64, ClockFault<()>> {
        let env = self.env;
        let mut f = ptr::null_mut();
        let mut undefined = ptr::null_mut();
        let mut out = ptr::null_mut();
        unsafe {
            sys::napi_get_reference_value(env, self.clock, &mut f);
            if f.is_null() {
                return Err(ClockFault::Core(snowmint::Error::InvalidClock {
                    reason: "the clock function is gone",
                }));
            }
            sys::napi_get_undefined(env, &mut undefined);
            if sys::napi_call_function(env, undefined, f, 0, ptr::null(), &mut out)
                != sys::Status::napi_ok
            {
                return Err(ClockFault::Host(()));
            }
        }
        match type_of(env, out) {
            sys::ValueType::napi_number => self
                .unit
                .f64_to_ns(get_double(env, out))
                .map_err(ClockFault::Core),
            sys::ValueType::napi_bigint => match get_bigint_u64(env, out) {
                Some(r) => self.unit.to_ns(r).map_err(ClockFault::Core),
                None => Err(ClockFault::Core(snowmint::Error::InvalidClock {
                    reason: "bigint reading is negative or not below 2^64",
                })),
            },
            _ => Err(ClockFault::WrongType(snowmint::Error::InvalidClock {
                reason: "the clock must return a number or a bigint",
            })),
        }
    }

    /// Runs a mint through the core's host loop with the right clock. Under 'wait'/'strict' the core's
    /// wait is slept on this thread (JavaScript cannot sleep otherwise); a clock that does not move
    /// between waits ends in TOO_FAR_AHEAD (the core's rule).
    #[inline]
    fn mint<T>(&self, run: impl FnOnce(&dyn snowmint::Clock) -> snowmint::Result<T>) -> Result<T> {
        let env = self.env;
        if self.clock.is_null() {
            return run(&FastClock).js(env);
        }
        // The host layer's clock adapter: the clock's own exception stays pending, a wrong type is a
        // TypeError, anything else the core's error.
        match snowmint_host::with_host_clock(|| self.read_clock(), |c| run(c)) {
            Ok(v) => Ok(v),
            Err(ClockFault::Host(())) => Err(napi::Error::from_status(Status::PendingException)),
            Err(ClockFault::WrongType(e)) => Err(throw(
                env,
                Kind::Type,
                e.code().as_str(),
                &e.to_string(),
                &[],
            )),
            Err(ClockFault::Core(e)) => Err(core_err(env, e)),
        }
    }
}

#[napi]
impl Generator {
    /// `new Generator({ nodeId, layout?, clock?, policy?, maxAheadMs?, randomStart?, randomSeed?,
    /// stateFile? })`. `stateFile` (a path, e.g. `/dev/shm/orders.snowmint`) keeps the state word in a
    /// memory-mapped file shared by every process that opens it with the same layout and node ID (else
    /// `STATE_FILE_MISMATCH`): Node cluster workers mint under one node ID with no duplicates.
    #[napi(
        constructor,
        ts_args_type = "options: { nodeId: number | bigint | string; layout?: PresetName | Layout; clock?: () => number | bigint; policy?: 'wait' | 'fail' | 'strict'; maxAheadMs?: number | bigint; randomStart?: boolean; randomSeed?: bigint | number; stateFile?: string | null }"
    )]
    pub fn new(env: Env, this: This<'_>, options: Unknown<'_>) -> Result<Self> {
        let env = env.raw();
        let this = this.object.raw();
        let o = Opts::new(
            env,
            raw_of(&options),
            "Generator options",
            &snowmint_host::JS_GENERATOR_KEYS,
        )?;
        let node_raw = o.required("nodeId", "Generator options")?;
        if o.get("waitForNodeMs").is_some_and(|w| !is_nullish(env, w)) {
            return Err(type_err(
                env,
                "waitForNodeMs is how long Generator.open waits for a lease source's node ID: use await Generator.open({ nodeId, waitForNodeMs })",
            ));
        }
        let layout = layout_arg(env, o.get("layout"))?;
        let node_id = match type_of(env, node_raw) {
            sys::ValueType::napi_string => {
                let source = get_string(env, node_raw)?;
                match coord::NodeSource::parse(&source) {
                    Ok(coord::NodeSource::Lease(_)) => {
                        return Err(throw(
                            env,
                            Kind::Error,
                            ErrorCode::InvalidArgument.as_str(),
                            &{
                                let shown = coord::source::redacted(&source);
                                format!("node source {shown:?} is a lease source: it claims a node ID over the network, so open it with `await Generator.open({{ nodeId: {shown:?} }})`")
                            },
                            &[],
                        ))
                    }
                    Ok(parsed) => parsed
                        .resolve(&source, &layout)
                        .map_err(|e| coord_err(env, e))?,
                    Err(e) => return Err(coord_err(env, e)),
                }
            }
            _ => get_u64_as(env, node_raw, "nodeId", ErrorCode::NodeIdOutOfRange)?,
        };
        let options = generator_options(env, &o)?;
        let state_file = match o.get("stateFile") {
            None => None,
            Some(v) if type_of(env, v) == sys::ValueType::napi_null => None,
            Some(v) if type_of(env, v) == sys::ValueType::napi_string => Some(get_string(env, v)?),
            Some(_) => return Err(type_err(env, "stateFile must be a path string")),
        };
        let clock = match o.get("clock") {
            None => ptr::null_mut(),
            Some(v) if type_of(env, v) == sys::ValueType::napi_null => ptr::null_mut(),
            Some(v) => {
                if type_of(env, v) != sys::ValueType::napi_function {
                    return Err(type_err(
                        env,
                        "clock must be a function returning a number or a bigint",
                    ));
                }
                // The generator's object holds the function (under a fresh symbol, fixed); the Rust side
                // keeps only a weak reference, so a clock that refers back to its generator does not keep
                // the pair alive forever. The object is alive whenever the generator is used.
                let mut r = ptr::null_mut();
                unsafe {
                    let mut key = ptr::null_mut();
                    sys::napi_create_symbol(env, ptr::null_mut(), &mut key);
                    let keep = hidden(key, v);
                    if sys::napi_define_properties(env, this, 1, &keep) != sys::Status::napi_ok
                        || sys::napi_create_reference(env, v, 0, &mut r) != sys::Status::napi_ok
                    {
                        return Err(napi::Error::from_status(Status::PendingException));
                    }
                }
                r
            }
        };
        // The options first, then the state file: the host layer's rule.
        let built =
            snowmint_host::state_file::shared_generator::<()>(layout, node_id, options, || {
                Ok(state_file.as_ref().map(std::path::PathBuf::from))
            })
            .map_err(|e| match e {
                Refused::Options(e) => core_err(env, e),
                Refused::Path(()) => unreachable!("a path string is always a path"),
                Refused::StateFile { path, error } => throw(
                    env,
                    Kind::Error,
                    error.code().as_str(),
                    &Refused::<()>::state_file_message(&path, &error),
                    &[],
                ),
            });
        let gen = match built {
            Ok(g) => g,
            Err(e) => {
                if !clock.is_null() {
                    unsafe { sys::napi_delete_reference(env, clock) };
                }
                return Err(e);
            }
        };
        Ok(Generator {
            unit: layout.clock_reader(),
            gen: Gen::Plain(gen),
            clock,
            env,
            fast: Cell::new(ptr::null()),
            index: Cell::new(0),
            plain_window: OwnWindow::new(),
            lease_window: OwnWindow::new(),
        })
    }

    /// The next ID.
    #[napi]
    pub fn next_id(&self) -> Result<u64> {
        let g = match &self.gen {
            Gen::Plain(g) => g,
            Gen::Leased(l) => return self.leased_next_id(l).map_err(|e| coord_err(self.env, e)),
        };
        if self.clock.is_null() {
            // The host clock, statically dispatched (under 'fail' the core never asks to wait), out of
            // the object's own window.
            // SAFETY: this environment's thread, the system clock (see `plain_window`); the
            // generator is the object's.
            return unsafe { self.plain_window.next_id(g, snowmint::sleep_ns) }.js(self.env);
        }
        self.mint(|clock| g.next_id_with(clock, snowmint::sleep_ns))
    }

    /// The next ID as a decimal string (for JSON).
    #[napi]
    pub fn next_id_string(&self) -> Result<String> {
        let id = self.next_id()?;
        Ok(Encoding::Decimal.encode(id).as_str().to_owned())
    }

    /// `n` consecutive IDs from one clock reading, in one atomic step.
    #[napi(ts_args_type = "n: number")]
    pub fn next_ids(&self, n: Unknown<'_>) -> Result<BigUint64Array> {
        let env = self.env;
        let n = snowmint::check_batch(get_u64(env, raw_of(&n), "n")?).js(env)?;
        let mut out = vec![0u64; n];
        self.fill(&mut out)?;
        Ok(BigUint64Array::new(out))
    }

    /// The next ID as a Number: only for layouts of at most 53 bits (e.g. `js53`).
    #[napi]
    pub fn next_id_number(&self) -> Result<f64> {
        let bits = self.gen.layout().total_bits();
        if bits > 53 {
            return Err(throw(
                self.env,
                Kind::Error,
                ErrorCode::InvalidArgument.as_str(),
                &format!("nextIdNumber needs a layout of at most 53 bits (this one has {bits}); use nextId() for a bigint or the 'js53' layout"),
                &[],
            ));
        }
        Ok(self.next_id()? as f64)
    }

    /// The layout IDs are minted in.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.gen.layout(),
        }
    }

    /// The node ID (before any offset): a Number when the layout's node field fits 2^53 - 1, else a
    /// bigint (`JsNumbers`).
    #[napi(getter, ts_return_type = "number | bigint")]
    pub fn node_id(&self) -> Unknown<'static> {
        let node_id = JsNumbers::node_id(self.gen.layout());
        let v = int(self.env, self.gen.node_id(), node_id);
        unsafe { Unknown::from_raw_unchecked(self.env, v) }
    }

    /// 'wait', 'fail' or 'strict'.
    #[napi(getter, ts_return_type = "'wait' | 'fail' | 'strict'")]
    pub fn policy(&self) -> &'static str {
        match &self.gen {
            Gen::Plain(g) => g.policy().name(),
            Gen::Leased(l) => l.sequencer().options().policy.name(),
        }
    }

    /// What this generator has done since it was built (SPEC §6a): a plain object of Numbers, a new
    /// one each call. With a state file: this process's generator; with a lease source: summed over
    /// every lease it held.
    #[napi]
    pub fn stats(&self) -> GeneratorStats {
        self.close_own();
        GeneratorStats::from(match &self.gen {
            Gen::Plain(g) => g.stats(),
            Gen::Leased(l) => l.stats(),
        })
    }

    /// The high-water mark (SPEC §2): the next free logical position, a bigint. Persist it (at
    /// shutdown, or periodically) and pass it to `restore()` after a restart: no ID repeats, even if the
    /// clock went back while the process was down. `INVALID_ARGUMENT` under a lease source.
    #[napi]
    pub fn high_water_mark(&self) -> Result<u64> {
        let g = self.plain()?;
        self.close_own();
        Ok(g.state())
    }

    /// Continues from a persisted high-water mark (a bigint, or its decimal string); never moves
    /// backwards.
    #[napi(ts_args_type = "mark: bigint | string")]
    pub fn restore(&self, mark: Unknown<'_>) -> Result<()> {
        let (env, v) = (self.env, raw_of(&mark));
        let mark = match type_of(env, v) {
            sys::ValueType::napi_string => snowmint::Encoding::Decimal
                .parse(&get_string(env, v)?)
                .js(env)?,
            sys::ValueType::napi_bigint => get_bigint_u64(env, v)
                .ok_or_else(|| range_err(env, "mark must be a bigint in 0n..2^64n"))?,
            _ => return Err(type_err(env, "mark must be a bigint or a decimal string")),
        };
        let g = self.plain()?;
        self.close_own();
        g.restore(mark);
        Ok(())
    }

    /// The state file's path, or null (the state is in this process).
    #[napi(getter)]
    pub fn state_file(&self) -> Option<String> {
        self.state_file_ref()
            .map(|f| f.path().to_string_lossy().into_owned())
    }

    /// Writes the state file to the storage device and waits for it (msync): after this a crash or
    /// power loss cannot take the file back past the present state. `INVALID_ARGUMENT` without a file.
    #[napi]
    pub fn flush(&self) -> Result<()> {
        self.file()?.flush().js(self.env)
    }

    /// Throws `STATE_FILE_MISMATCH` if the state file was unlinked or replaced while in use (processes
    /// that open the path now would get another file). `INVALID_ARGUMENT` without a file.
    #[napi]
    pub fn verify_state_file(&self) -> Result<()> {
        self.file()?.verify().js(self.env)
    }

    /// The lease held (`nodeId`, `fencingToken`, `expiresAt`), or null: a fixed node ID, or detached.
    #[napi(
        getter,
        ts_return_type = "{ nodeId: number | bigint; fencingToken: bigint; expiresAt: Date } | null"
    )]
    pub fn lease(&self) -> Result<Unknown<'static>> {
        let env = self.env;
        let lease = match &self.gen {
            Gen::Leased(l) if l.known_state() == coord::SequencerState::Attached => l.current(),
            _ => None,
        };
        let mut out = ptr::null_mut();
        match lease {
            None => unsafe {
                sys::napi_get_null(env, &mut out);
            },
            Some(l) => unsafe {
                sys::napi_create_object(env, &mut out);
                let node_id = JsNumbers::node_id(self.gen.layout());
                set(env, out, "nodeId", int(env, l.node_id(), node_id));
                set(env, out, "fencingToken", big(env, l.fencing_token()));
                let mut date = ptr::null_mut();
                sys::napi_create_date(env, l.expires_unix_ms() as f64, &mut date);
                set(env, out, "expiresAt", date);
            },
        }
        Ok(unsafe { Unknown::from_raw_unchecked(env, out) })
    }

    /// 'attached', 'detached' or 'destroyed' (a fixed node ID is always 'attached'); never waits on the
    /// network (a detached generator learns of a destruction when it attaches or mints).
    #[napi(getter, ts_return_type = "'attached' | 'detached' | 'destroyed'")]
    pub fn state(&self) -> &'static str {
        match &self.gen {
            Gen::Plain(_) => "attached",
            Gen::Leased(l) => state_name(l.known_state()),
        }
    }

    /// Releases the lease (minting then throws LEASE_LOST until `attach()`); resolves at once for a
    /// fixed node ID. The store is asked on a worker thread.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn detach(&self) -> AsyncTask<CoordTask> {
        self.close_own();
        AsyncTask::new(CoordTask::op(&self.gen, Op::Detach))
    }

    /// Claims a node ID again (most likely another one); on a worker thread.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn attach(&self) -> AsyncTask<CoordTask> {
        self.close_own();
        AsyncTask::new(CoordTask::op(&self.gen, Op::Attach))
    }

    /// Releases the lease now (as `detach()`); the keeper thread stops, nothing keeps the process alive.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<CoordTask> {
        self.close_own();
        AsyncTask::new(CoordTask::op(&self.gen, Op::Detach))
    }

    /// `await Generator.open({ nodeId, layout?, policy?, maxAheadMs?, randomStart?, randomSeed?,
    /// waitForNodeMs?, stateFile? })`: any node source; a lease source (`file:///DIR`, `etcd://…`,
    /// `postgres://…`) claims a node ID on a worker thread (the event loop keeps running). With every
    /// node ID held, `waitForNodeMs` (or the source's `?wait=`) waits up to that long for one to come
    /// free. With `stateFile`, a lease is one per host: every process that opens the same file mints
    /// under the node ID the first one claimed, and the last one to close releases it.
    #[napi(
        ts_args_type = "options: { nodeId: number | bigint | string; layout?: PresetName | Layout; policy?: 'wait' | 'fail' | 'strict'; maxAheadMs?: number | bigint; randomStart?: boolean; randomSeed?: bigint | number; waitForNodeMs?: number | bigint; stateFile?: string | null }",
        ts_return_type = "Promise<Generator>"
    )]
    pub fn open(env: Env, options: Unknown<'_>) -> Result<AsyncTask<CoordTask>> {
        let raw_env = env.raw();
        let o = Opts::new(
            raw_env,
            raw_of(&options),
            "Generator options",
            &snowmint_host::JS_GENERATOR_KEYS,
        )?;
        if o.get("clock").is_some_and(|c| !is_nullish(raw_env, c)) {
            return Err(type_err(
                raw_env,
                "Generator.open takes no clock: leases mint on the system clock (use new Generator for an injected clock)",
            ));
        }
        // With a lease source, the lease is shared by every process of the host that opens this file.
        let state_file = match o.get("stateFile") {
            Some(f) if !is_nullish(raw_env, f) => match type_of(raw_env, f) {
                sys::ValueType::napi_string => {
                    Some(std::path::PathBuf::from(get_string(raw_env, f)?))
                }
                _ => return Err(type_err(raw_env, "stateFile must be a path string")),
            },
            _ => None,
        };
        let node_raw = o.required("nodeId", "Generator options")?;
        let source = match type_of(raw_env, node_raw) {
            sys::ValueType::napi_string => get_string(raw_env, node_raw)?,
            _ => get_u64(raw_env, node_raw, "nodeId")?.to_string(),
        };
        let layout = layout_arg(raw_env, o.get("layout"))?;
        let options = generator_options(raw_env, &o)?;
        let wait_for_node =
            match o.get("waitForNodeMs") {
                Some(w) if !is_nullish(raw_env, w) => Some(std::time::Duration::from_millis(
                    get_u64(raw_env, w, "waitForNodeMs")?,
                )),
                _ => None,
            };
        Ok(AsyncTask::new(CoordTask {
            op: Op::Open {
                source,
                layout,
                options,
                wait_for_node,
                state_file,
            },
        }))
    }
}

impl Generator {
    /// The state file this generator's state lives in, if any.
    fn state_file_ref(&self) -> Option<&StateFile> {
        match &self.gen {
            Gen::Plain(g) => g.state_holder().state_file(),
            Gen::Leased(_) => None,
        }
    }

    /// The generator of a fixed node ID (a lease source's store keeps its own state: no mark).
    fn plain(&self) -> Result<&SharedGenerator<SharedState>> {
        match &self.gen {
            Gen::Plain(g) => Ok(g),
            Gen::Leased(_) => Err(throw(
                self.env,
                Kind::Error,
                ErrorCode::InvalidArgument.as_str(),
                "a generator under a lease source has no high-water mark to persist: its lease store keeps its state",
                &[],
            )),
        }
    }
    fn file(&self) -> Result<&StateFile> {
        self.state_file_ref().ok_or_else(|| {
            throw(
                self.env,
                Kind::Error,
                ErrorCode::InvalidArgument.as_str(),
                "this generator has no state file (pass stateFile)",
                &[],
            )
        })
    }
    /// Mints under a lease: one attempt on the current lease's generator out of the object's own window;
    /// anything else is the coord crate's full path (`next_id_local`, which never asks the store on this
    /// thread: it waits for the keeper at the reservation, or fails with LEASE_LOST or
    /// SEQUENCER_DESTROYED). That path mints out of the thread's window: the object's own is closed
    /// before it, and the thread's after it, so the IDs keep their order.
    fn leased_next_id(&self, l: &coord::SequencerGenerator) -> coord::Result<u64> {
        if let Some(lease) = l.current() {
            let g = lease.generator();
            // SAFETY: this environment's thread, the system clock; every lease the source held lives
            // as long as the source, which the object holds.
            let minted = unsafe { self.lease_window.next_id(g, snowmint::sleep_ns) };
            if let Ok(id) = minted {
                return Ok(id);
            }
        }
        self.close_own();
        let minted = l.next_id_local();
        if let Some(lease) = l.current() {
            lease.generator().close_thread_window();
        }
        minted
    }

    /// Closes the object's own window before its generator is asked for anything else.
    fn close_own(&self) {
        // SAFETY: this environment's thread; the generators outlive the windows.
        unsafe {
            self.plain_window.close();
            self.lease_window.close();
        }
    }

    /// Fills `out` with consecutive IDs (one atomic step).
    fn fill(&self, out: &mut [u64]) -> Result<()> {
        self.close_own();
        match &self.gen {
            Gen::Plain(g) => self.mint(|clock| g.next_ids_with(clock, snowmint::sleep_ns, out)),
            Gen::Leased(l) => l.next_ids_local(out).map_err(|e| coord_err(self.env, e)),
        }
    }

    /// A generator object for a lease held by `l` (created by `Generator.open` or `Sequencer.attach`).
    fn leased(env: sys::napi_env, l: coord::SequencerGenerator) -> Generator {
        Generator {
            unit: l.layout().clock_reader(),
            gen: Gen::Leased(Arc::new(l)),
            clock: ptr::null_mut(),
            env,
            fast: Cell::new(ptr::null()),
            index: Cell::new(0),
            plain_window: OwnWindow::new(),
            lease_window: OwnWindow::new(),
        }
    }
}

fn state_name(s: coord::SequencerState) -> &'static str {
    snowmint_host::sequencer_state_name!(coord::SequencerState, s)
}

// ---------------------------------------------------------------------------------------------------
// Coordination work on libuv's thread pool (napi AsyncTask): the event loop never waits on a store
// ---------------------------------------------------------------------------------------------------

/// What a [`CoordTask`] does off the main thread.
pub enum Op {
    Open {
        source: String,
        layout: snowmint::Layout,
        options: Options,
        /// `waitForNodeMs`: how long to wait for a node ID when all are held (`None`: the source's
        /// `?wait=`).
        wait_for_node: Option<std::time::Duration>,
        state_file: Option<std::path::PathBuf>,
    },
    Detach,
    Attach,
    Create {
        store: String,
        name: String,
        layout: snowmint::Layout,
        nodes: Option<u64>,
    },
    OpenSequencer {
        store: String,
        name: String,
    },
    AttachSequencer(Arc<coord::Sequencer>),
    Destroy(Arc<coord::Sequencer>),
    List(String),
    Nothing,
    On(Arc<coord::SequencerGenerator>, bool),
}

/// One blocking coordination call, run by napi on the thread pool; resolves a Promise.
pub struct CoordTask {
    op: Op,
}

impl CoordTask {
    fn op(gen: &Gen, op: Op) -> CoordTask {
        CoordTask {
            op: match gen {
                Gen::Plain(_) => Op::Nothing,
                Gen::Leased(l) => Op::On(l.clone(), matches!(op, Op::Attach)),
            },
        }
    }
}

/// The result of a [`CoordTask`].
pub enum Done {
    Nothing,
    Fixed(SharedGenerator<SharedState>),
    Leased(Box<coord::SequencerGenerator>),
    Sequencer(coord::Sequencer),
    Names(Vec<String>),
}

impl napi::Task for CoordTask {
    type Output = std::result::Result<Done, coord::Error>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Self::Output> {
        let op = std::mem::replace(&mut self.op, Op::Nothing);
        Ok(match op {
            Op::Nothing => Ok(Done::Nothing),
            Op::On(l, true) => l.attach().map(|_| Done::Nothing),
            Op::On(l, false) => l.detach().map(|_| Done::Nothing),
            Op::Detach | Op::Attach => Ok(Done::Nothing),
            Op::Open {
                source,
                layout,
                options,
                wait_for_node,
                state_file,
            } => match coord::SequencerGenerator::open_sharing(
                &source,
                layout,
                options,
                wait_for_node,
                state_file.clone(),
            ) {
                Ok(coord::Opened::Fixed(n)) => {
                    // A fixed node ID with a state file: the file's state word, as new Generator
                    // (the host layer's rule: the options first, then the state file).
                    snowmint_host::state_file::shared_generator::<()>(layout, n, options, || {
                        Ok(state_file)
                    })
                    .map(Done::Fixed)
                    .map_err(|e| match e {
                        Refused::Options(e) => coord::Error::from(e),
                        Refused::Path(()) => unreachable!("the path is given"),
                        Refused::StateFile { path, error } => {
                            coord::Error::from(error).context(path.display().to_string())
                        }
                    })
                }
                Ok(coord::Opened::Leased(g)) => Ok(Done::Leased(g)),
                Err(e) => Err(e),
            },
            Op::Create {
                store,
                name,
                layout,
                nodes,
            } => coord::generator::create_sequencer(
                &store,
                &name,
                layout,
                nodes.unwrap_or(layout.node_count()),
                Options::default(),
            )
            .map(Done::Sequencer),
            Op::OpenSequencer { store, name } => {
                coord::generator::open_sequencer(&store, &name, Options::default())
                    .map(Done::Sequencer)
            }
            Op::AttachSequencer(seq) => coord::SequencerGenerator::attach_new(seq.new_handle())
                .map(|g| Done::Leased(Box::new(g))),
            Op::Destroy(seq) => seq.destroy().map(|_| Done::Nothing),
            Op::List(store) => coord::generator::list_sequencers(&store).map(Done::Names),
        })
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        let raw = env.raw();
        // A rejection carries the Error object itself (with its `code`): nothing is thrown here, where
        // no JavaScript frame could catch it.
        let done = output.map_err(|e| rejection(raw, &e))?;
        let value: Raw = match done {
            Done::Nothing => {
                let mut u = ptr::null_mut();
                unsafe { sys::napi_get_undefined(raw, &mut u) };
                u
            }
            Done::Fixed(g) => {
                let gen = Generator {
                    unit: g.layout().clock_reader(),
                    gen: Gen::Plain(g),
                    clock: ptr::null_mut(),
                    env: raw,
                    fast: Cell::new(ptr::null()),
                    index: Cell::new(0),
                    plain_window: OwnWindow::new(),
                    lease_window: OwnWindow::new(),
                };
                unsafe {
                    <Generator as napi::bindgen_prelude::ToNapiValue>::to_napi_value(raw, gen)?
                }
            }
            Done::Leased(l) => unsafe {
                <Generator as napi::bindgen_prelude::ToNapiValue>::to_napi_value(
                    raw,
                    Generator::leased(raw, *l),
                )?
            },
            Done::Sequencer(s) => unsafe {
                <Sequencer as napi::bindgen_prelude::ToNapiValue>::to_napi_value(
                    raw,
                    Sequencer { inner: Arc::new(s) },
                )?
            },
            Done::Names(names) => unsafe {
                <Vec<String> as napi::bindgen_prelude::ToNapiValue>::to_napi_value(raw, names)?
            },
        };
        Ok(unsafe { Unknown::from_raw_unchecked(raw, value) })
    }
}

const SEQUENCER_KEYS: [&str; 3] = ["store", "layout", "nodeCount"];

/// A named sequencer (snowcast's lifecycle) in a store: `file:///DIR`, `etcd://HOST:PORT/PREFIX` or
/// `postgres://USER@HOST:PORT/DB`. Every call that talks to the store returns a Promise.
#[napi]
pub struct Sequencer {
    inner: Arc<coord::Sequencer>,
}

#[napi]
impl Sequencer {
    /// `await Sequencer.create(name, { store, layout?, nodeCount? })`: creates the sequencer (or a handle
    /// on the existing one with the same configuration; another configuration rejects with
    /// SEQUENCER_CONFLICT).
    #[napi(
        ts_args_type = "name: string, options: { store: string; layout?: PresetName | Layout; nodeCount?: number | bigint }",
        ts_return_type = "Promise<Sequencer>"
    )]
    pub fn create(
        env: Env,
        name: Unknown<'_>,
        options: Unknown<'_>,
    ) -> Result<AsyncTask<CoordTask>> {
        let raw = env.raw();
        let name = string_arg(raw, raw_of(&name), "name")?;
        let o = Opts::new(raw, raw_of(&options), "Sequencer options", &SEQUENCER_KEYS)?;
        let store = string_arg(raw, o.required("store", "Sequencer options")?, "store")?;
        let layout = layout_arg(raw, o.get("layout"))?;
        let nodes = match o.get("nodeCount") {
            None => None,
            Some(v) => Some(get_u64(raw, v, "nodeCount")?),
        };
        Ok(AsyncTask::new(CoordTask {
            op: Op::Create {
                store,
                name,
                layout,
                nodes,
            },
        }))
    }

    /// `await Sequencer.open(name, { store })`: a handle on the existing sequencer (`SEQUENCER_NOT_FOUND`
    /// if there is none).
    #[napi(
        ts_args_type = "name: string, options: { store: string }",
        ts_return_type = "Promise<Sequencer>"
    )]
    pub fn open(env: Env, name: Unknown<'_>, options: Unknown<'_>) -> Result<AsyncTask<CoordTask>> {
        let raw = env.raw();
        let name = string_arg(raw, raw_of(&name), "name")?;
        let o = Opts::new(raw, raw_of(&options), "Sequencer options", &["store"])?;
        let store = string_arg(raw, o.required("store", "Sequencer options")?, "store")?;
        Ok(AsyncTask::new(CoordTask {
            op: Op::OpenSequencer { store, name },
        }))
    }

    /// `await Sequencer.list({ store })`: the names of the sequencers in the store, sorted.
    #[napi(
        ts_args_type = "options: { store: string }",
        ts_return_type = "Promise<string[]>"
    )]
    pub fn list(env: Env, options: Unknown<'_>) -> Result<AsyncTask<CoordTask>> {
        let raw = env.raw();
        let o = Opts::new(raw, raw_of(&options), "Sequencer options", &["store"])?;
        let store = string_arg(raw, o.required("store", "Sequencer options")?, "store")?;
        Ok(AsyncTask::new(CoordTask {
            op: Op::List(store),
        }))
    }

    /// Claims a node ID and resolves a Generator holding it.
    #[napi(ts_return_type = "Promise<Generator>")]
    pub fn attach(&self) -> AsyncTask<CoordTask> {
        AsyncTask::new(CoordTask {
            op: Op::AttachSequencer(self.inner.clone()),
        })
    }

    /// Destroys the sequencer everywhere: every generator of it, in every process, stops minting and
    /// throws SEQUENCER_DESTROYED.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn destroy(&self) -> AsyncTask<CoordTask> {
        AsyncTask::new(CoordTask {
            op: Op::Destroy(self.inner.clone()),
        })
    }

    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.record().name.clone()
    }

    #[napi(getter)]
    pub fn node_count(&self) -> f64 {
        self.inner.record().config.nodes as f64
    }

    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner.layout(),
        }
    }
}

fn string_arg(env: sys::napi_env, v: Raw, what: &str) -> Result<String> {
    if type_of(env, v) != sys::ValueType::napi_string {
        return Err(type_err(env, &format!("{what} must be a string")));
    }
    get_string(env, v)
}

// ---------------------------------------------------------------------------------------------------
// Free functions
// ---------------------------------------------------------------------------------------------------

fn set(env: sys::napi_env, obj: Raw, name: &str, v: Raw) {
    if let Ok(name) = CString::new(name) {
        unsafe { sys::napi_set_named_property(env, obj, name.as_ptr(), v) };
    }
}

fn num(env: sys::napi_env, x: f64) -> Raw {
    let mut v = ptr::null_mut();
    unsafe { sys::napi_create_double(env, x, &mut v) };
    v
}

fn big(env: sys::napi_env, x: u64) -> Raw {
    let mut v = ptr::null_mut();
    unsafe { sys::napi_create_bigint_uint64(env, x, &mut v) };
    v
}

/// A field's value as a Number when the layout's field fits 2^53 - 1 (`number`, from `JsNumbers`),
/// else as a bigint: exact either way, one type per layout (the WASM package's rule too).
fn int(env: sys::napi_env, x: u64, number: bool) -> Raw {
    if number {
        num(env, x as f64)
    } else {
        big(env, x)
    }
}

/// Takes an ID (a bigint, or a string in any form) apart under a layout (default 'twitter').
#[napi(
    ts_args_type = "id: bigint | string, layout?: PresetName | Layout",
    ts_return_type = "Decoded"
)]
pub fn decode(env: Env, id: Unknown<'_>, layout: Option<Unknown<'_>>) -> Result<Unknown<'static>> {
    let env = env.raw();
    let id = id_arg(env, raw_of(&id), true)?;
    let layout = layout_arg(env, opt_raw(&layout))?;
    let d = layout.decode(id).js(env)?;
    let numbers = JsNumbers::of(&layout);
    let mut obj = ptr::null_mut();
    unsafe { sys::napi_create_object(env, &mut obj) };
    set(env, obj, "id", big(env, d.id));
    set(env, obj, "timestampTicks", big(env, d.timestamp_ticks));
    set(
        env,
        obj,
        "timestampMs",
        int(env, d.unix_ms, numbers.timestamp_ms),
    );
    set(env, obj, "subMsNs", num(env, d.sub_ms_ns as f64));
    let mut date = ptr::null_mut();
    // Dates hold ±8.64e15 ms; beyond that the Date is invalid (NaN) rather than wrong.
    let ms = if d.unix_ms <= 8_640_000_000_000_000 {
        d.unix_ms as f64
    } else {
        f64::NAN
    };
    unsafe { sys::napi_create_date(env, ms, &mut date) };
    set(env, obj, "date", date);
    set(env, obj, "iso", js_str(env, d.iso().to_buf().as_str()));
    set(env, obj, "nodeId", int(env, d.node, numbers.node_id));
    set(env, obj, "sequence", int(env, d.sequence, numbers.sequence));
    Ok(unsafe { Unknown::from_raw_unchecked(env, obj) })
}

/// Composes an ID from its fields (`nodeId` is the node field as stored, offset included).
#[napi(
    ts_args_type = "fields: { timestampTicks: bigint | number; nodeId: number | bigint; sequence: number | bigint }, layout?: PresetName | Layout"
)]
pub fn compose(env: Env, fields: Unknown<'_>, layout: Option<Unknown<'_>>) -> Result<u64> {
    let env = env.raw();
    let o = Opts::new(
        env,
        raw_of(&fields),
        "compose fields",
        &["timestampTicks", "nodeId", "sequence"],
    )?;
    let w = "compose fields";
    let ticks = get_u64(env, o.required("timestampTicks", w)?, "timestampTicks")?;
    let node = get_u64(env, o.required("nodeId", w)?, "nodeId")?;
    let seq = get_u64(env, o.required("sequence", w)?, "sequence")?;
    let layout = layout_arg(env, opt_raw(&layout))?;
    layout.compose(ticks, node, seq).js(env)
}

/// The smallest ID of a layout at or after an instant (a Date, or Unix ms as a number or bigint).
#[napi(ts_args_type = "at: Date | number | bigint, layout?: PresetName | Layout")]
pub fn min_id_at(env: Env, at: Unknown<'_>, layout: Option<Unknown<'_>>) -> Result<u64> {
    let env = env.raw();
    let v = raw_of(&at);
    let mut is_date = false;
    unsafe { sys::napi_is_date(env, v, &mut is_date) };
    let ms = if is_date {
        let mut t = 0.0;
        unsafe { sys::napi_get_date_value(env, v, &mut t) };
        snowmint::whole_f64(t).map_err(|_| range_err(env, "the Date is invalid or before 1970"))?
    } else {
        get_u64(env, v, "at")?
    };
    let layout = layout_arg(env, opt_raw(&layout))?;
    layout.min_id_at_ms(ms).js(env)
}

fn encoding_arg(env: sys::napi_env, v: Option<Raw>, allow_any: bool) -> Result<Option<Encoding>> {
    let v = match v {
        Some(v) if !is_nullish(env, v) => v,
        _ => {
            return Ok(if allow_any {
                None
            } else {
                Some(Encoding::Decimal)
            })
        }
    };
    if type_of(env, v) != sys::ValueType::napi_string {
        return Err(type_err(env, "encoding must be a string"));
    }
    let name = get_string(env, v)?;
    if allow_any {
        Encoding::from_name_or_any(&name).js(env)
    } else {
        Encoding::from_name(&name).map(Some).js(env)
    }
}

/// An ID as text: 'dec' (default), 'hex', 'base32' or 'base58'.
#[napi(ts_args_type = "id: bigint | number, encoding?: 'dec' | 'hex' | 'base32' | 'base58'")]
pub fn encode(env: Env, id: Unknown<'_>, encoding: Option<Unknown<'_>>) -> Result<String> {
    let env = env.raw();
    let id = id_arg(env, raw_of(&id), false)?;
    let enc = encoding_arg(env, opt_raw(&encoding), false)?.unwrap_or(Encoding::Decimal);
    Ok(enc.encode(id).as_str().to_owned())
}

/// Parses an ID from text in one encoding, or 'any' (default: told apart by shape).
#[napi(ts_args_type = "text: string, encoding?: 'dec' | 'hex' | 'base32' | 'base58' | 'any'")]
pub fn parse(env: Env, text: Unknown<'_>, encoding: Option<Unknown<'_>>) -> Result<u64> {
    let env = env.raw();
    if type_of(env, raw_of(&text)) != sys::ValueType::napi_string {
        return Err(type_err(env, "text must be a string"));
    }
    let s = get_string(env, raw_of(&text))?;
    snowmint::Encoding::parse_in(encoding_arg(env, opt_raw(&encoding), true)?, &s).js(env)
}

const fn error_codes() -> [&'static str; ErrorCode::ALL.len()] {
    let mut out = [""; ErrorCode::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = ErrorCode::ALL[i].as_str();
        i += 1;
    }
    out
}

/// Every error code an `err.code` can hold.
#[napi]
pub const ERROR_CODES: [&str; ErrorCode::ALL.len()] = error_codes();

/// Every preset name `Layout.preset` accepts (snowcast needs `Layout.snowcast`).
#[napi]
pub const PRESET_NAMES: [&str; 8] = snowmint::PRESET_NAMES;
