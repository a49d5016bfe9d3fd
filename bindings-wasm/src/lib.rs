//! WebAssembly binding of [`snowmint`]: the same JavaScript API as the native Node package `snowmint`
//! (`Layout`, `Generator`, `decode`, `compose`, `minIdAt`, `encode`, `parse`, `ERROR_CODES`), for
//! browsers, bundlers and Node.
//!
//! This crate only converts JavaScript values and maps errors; sequencing, layouts, parsing and
//! formatting all happen in the core. The host clock is `Date.now()` through `js_sys` (`SystemTime`
//! panics on `wasm32-unknown-unknown`); a JavaScript clock function may be injected instead.
//!
//! Errors are real `Error` objects with `err.code` set to the core's stable code; wrong JavaScript types
//! are `TypeError`s with code `INVALID_ARGUMENT`. Every integer input is checked to be lossless: a bigint
//! outside `0..2^64`, or a Number that is not a whole number in `0..=2^53-1`, is an error, never wrapped
//! or rounded. Every integer output is exact too: `nodeId`, `sequence` and `timestampMs` are Numbers
//! when the layout's field fits 2^53 - 1 and bigints otherwise (`snowmint_host::JsNumbers`, the
//! native package's rule as well).
#![warn(missing_docs)]

#[cfg(target_arch = "wasm32")]
mod alloc;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: alloc::SizeClasses = alloc::SizeClasses::new();

use js_sys::{Array, Date, Function, Object, Reflect};
use snowmint::{ClockReader, ClockUnit, Encoding, ErrorCode, Policy, SharedGenerator};
use snowmint_host::{ClockFault, HostClock, HostRead, JsNumbers};
use wasm_bindgen::convert::TryFromJsValue;
use wasm_bindgen::prelude::*;

// ---------------------------------------------------------------------------------------------------
// Errors

use snowmint_host::cat;

/// A number as decimal text, by the core's encoder.
fn dec(n: u64) -> snowmint::Encoded {
    Encoding::Decimal.encode(n)
}

fn set(target: &JsValue, key: &str, value: &JsValue) {
    // Setting a property on an object we just created cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

/// A core error as a JavaScript `Error` with `code` (and `retryAfterMs`, `position`, `field` when they
/// apply).
fn js_err(e: snowmint::Error) -> JsValue {
    let err: JsValue = js_sys::Error::new(&match e {
        // The core's message shows the Rust call; say it in JavaScript.
        snowmint::Error::PresetNeedsParameters { .. } => cat(&[
            "invalid layout: snowcast needs an epoch and a node count: pass ",
            "{ layout: Layout.snowcast(epochMs, nodeCount) }",
        ]),
        e => e.to_string(),
    })
    .into();
    set(&err, "code", &JsValue::from_str(e.code().as_str()));
    if let Some(ms) = e.retry_after_ms() {
        set(&err, "retryAfterMs", &JsValue::from_f64(ms as f64));
    }
    match e {
        snowmint::Error::Parse { position, .. } => {
            set(&err, "position", &JsValue::from_f64(position as f64))
        }
        snowmint::Error::AmbiguousId { .. } => set(&err, "position", &JsValue::from_f64(0.0)),
        snowmint::Error::InvalidLayout { field, .. } => {
            set(&err, "field", &JsValue::from_str(field))
        }
        _ => {}
    }
    err
}

fn coded(err: JsValue, code: ErrorCode) -> JsValue {
    set(&err, "code", &JsValue::from_str(code.as_str()));
    err
}

/// A wrong JavaScript type: `TypeError` with code `INVALID_ARGUMENT`.
fn type_err(msg: &str) -> JsValue {
    coded(
        js_sys::TypeError::new(msg).into(),
        ErrorCode::InvalidArgument,
    )
}

/// A value of the right type but out of range: `Error` with code `INVALID_ARGUMENT`.
fn arg_err(msg: &str) -> JsValue {
    coded(js_sys::Error::new(msg).into(), ErrorCode::InvalidArgument)
}

// ---------------------------------------------------------------------------------------------------
// Argument conversion (lossless or an error)

/// A Number or bigint as `u64`, never wrapped or rounded.
fn u64_arg(v: &JsValue, name: &str) -> Result<u64, JsValue> {
    u64_arg_as(v, name, ErrorCode::InvalidArgument)
}

/// [`u64_arg`] whose whole-number values outside 0..2^64 (negative, too large a bigint) are `range`
/// (the argument's own code, e.g. `NODE_ID_OUT_OF_RANGE`); other bad values are `INVALID_ARGUMENT`:
/// the host layer's rule and messages (`snowmint_host::js`), the native package's too.
fn u64_arg_as(v: &JsValue, name: &str, range: ErrorCode) -> Result<u64, JsValue> {
    int_arg(v, Some((name, range)))
}

/// A Number or a bigint by the host layer's integer rule: an argument (`Some((name, range))`) or an ID
/// (`None`); the value's `typeof` is read only when it is neither.
fn int_arg(v: &JsValue, arg: Option<(&str, ErrorCode)>) -> Result<u64, JsValue> {
    use snowmint_host::js::{id_arg, u64_arg, JsInt};
    let other;
    let int = if let Some(x) = v.as_f64() {
        JsInt::Number(x)
    } else if v.is_bigint() {
        JsInt::BigInt(u64::try_from_js_value_ref(v))
    } else {
        other = type_name(v);
        JsInt::Other(&other)
    };
    match arg {
        Some((name, range)) => u64_arg(name, int, range),
        None => id_arg(int),
    }
    .map_err(js_refusal)
}

/// A value the host layer's rule refused: a `TypeError` or an `Error`, with its code.
fn js_refusal(e: snowmint_host::js::JsRefusal) -> JsValue {
    let err: JsValue = if e.type_error {
        js_sys::TypeError::new(&e.error.message).into()
    } else {
        js_sys::Error::new(&e.error.message).into()
    };
    coded(err, e.error.code)
}

/// A bit count: any u64 (the core rejects counts out of range by name); past u32 it cannot be one.
fn bits(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn string_arg(v: &JsValue, name: &str) -> Result<String, JsValue> {
    v.as_string().ok_or_else(|| wrong_type(name, "a string", v))
}

fn bool_arg(v: &JsValue, name: &str) -> Result<bool, JsValue> {
    v.as_bool().ok_or_else(|| wrong_type(name, "a boolean", v))
}

/// `TypeError`: "`name` must be `expected`, got `typeof v`".
fn wrong_type(name: &str, expected: &str, v: &JsValue) -> JsValue {
    type_err(&cat(&[
        name,
        " must be ",
        expected,
        ", got ",
        &type_name(v),
    ]))
}

fn type_name(v: &JsValue) -> String {
    if v.is_null() {
        return "null".into();
    }
    v.js_typeof().as_string().unwrap_or_default()
}

fn absent(v: &JsValue) -> bool {
    v.is_undefined()
}

/// Reads an options object, rejecting anything that is not a plain object and any unknown key.
struct Opts {
    obj: JsValue,
}

impl Opts {
    fn new(v: &JsValue, what: &str, allowed: &[&str]) -> Result<Opts, JsValue> {
        if !v.is_object() || v.is_function() || Array::is_array(v) {
            return Err(wrong_type(what, "an options object", v));
        }
        let obj: &Object = v.unchecked_ref();
        for key in Object::keys(obj).iter() {
            let key = key.as_string().unwrap_or_default();
            if !allowed.contains(&key.as_str()) {
                return Err(type_err(&cat(&[what, ": unknown option \"", &key, "\""])));
            }
        }
        Ok(Opts { obj: v.clone() })
    }

    fn get(&self, key: &str) -> JsValue {
        Reflect::get(&self.obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    }

    /// An optional whole-number option: `None` when absent.
    fn optional_u64(&self, key: &str) -> Result<Option<u64>, JsValue> {
        let v = self.get(key);
        if absent(&v) {
            return Ok(None);
        }
        u64_arg(&v, key).map(Some)
    }

    /// A required whole-number option.
    fn required_u64(&self, key: &str, what: &str) -> Result<u64, JsValue> {
        u64_arg(&self.required(key, what)?, key)
    }

    fn required(&self, key: &str, what: &str) -> Result<JsValue, JsValue> {
        let v = self.get(key);
        if absent(&v) {
            return Err(type_err(&cat(&[what, ": option ", key, " is required"])));
        }
        Ok(v)
    }
}

/// A layout argument: `undefined` (twitter), a preset name, or a `Layout`.
fn layout_arg(v: &JsValue) -> Result<snowmint::Layout, JsValue> {
    if absent(v) {
        return Ok(snowmint::Layout::twitter());
    }
    if let Some(name) = v.as_string() {
        return snowmint::Layout::preset(&name).map_err(js_err);
    }
    if v.is_object() {
        // A `Layout` object: ask it for a copy that Rust may take over (wasm-bindgen's conversion of a
        // class instance consumes the instance, and the caller's object must stay usable).
        if let Ok(copy) = Reflect::get(v, &JsValue::from_str("__copy")) {
            // (An object that only has Layout's prototype throws here: then it is no Layout.)
            if let Some(Ok(copied)) = copy.dyn_ref::<Function>().map(|f| f.call0(v)) {
                if let Some(layout) = Layout::try_from_js_value_ref(&copied) {
                    return Ok(layout.inner);
                }
            }
        }
    }
    Err(type_err(&cat(&[
        "layout must be a preset name or a Layout, got ",
        &type_name(v),
    ])))
}

// ---------------------------------------------------------------------------------------------------
// Layout

/// A validated layout: field widths, order, tick, epoch, and everything derived from them.
#[wasm_bindgen]
#[derive(Clone, Copy)]
pub struct Layout {
    inner: snowmint::Layout,
}

#[wasm_bindgen]
impl Layout {
    /// A custom layout: `{ timestampBits, nodeBits, sequenceBits, epochMs, order?, tickNs?,
    /// nodeIdOffset?, useSignBit? }` with the defaults of every binding (`snowmint_host::LayoutFields`).
    /// Invalid fields give `INVALID_LAYOUT` naming the field.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Layout, JsValue> {
        const WHAT: &str = "Layout options";
        let o = Opts::new(&options, WHAT, &snowmint_host::JS_LAYOUT_KEYS)?;
        let order = match o.get("order") {
            v if absent(&v) => None,
            v => Some(snowmint::Order::from_name(&string_arg(&v, "order")?).map_err(js_err)?),
        };
        let use_sign_bit = match o.get("useSignBit") {
            v if absent(&v) => None,
            v => Some(bool_arg(&v, "useSignBit")?),
        };
        // The defaults of every binding (snowmint_host::LayoutFields).
        let cfg = snowmint_host::LayoutFields {
            timestamp_bits: bits(o.required_u64("timestampBits", WHAT)?),
            node_bits: bits(o.required_u64("nodeBits", WHAT)?),
            sequence_bits: bits(o.required_u64("sequenceBits", WHAT)?),
            epoch_ms: o.required_u64("epochMs", WHAT)?,
            order,
            tick_ns: o.optional_u64("tickNs")?,
            node_id_offset: o.optional_u64("nodeIdOffset")?,
            use_sign_bit,
        }
        .config();
        snowmint::Layout::new(cfg)
            .map(|inner| Layout { inner })
            .map_err(js_err)
    }

    /// A preset by name: `twitter`, `discord`, `instagram`, `sonyflake`, `hazelcast`, `js53`, `decimal`.
    pub fn preset(name: JsValue) -> Result<Layout, JsValue> {
        let name = string_arg(&name, "preset name")?;
        snowmint::Layout::preset(&name)
            .map(|inner| Layout { inner })
            .map_err(js_err)
    }

    /// snowcast's layout for an epoch (Unix ms) and a node count (128..=8192, rounded up to a power of 2).
    pub fn snowcast(epoch_ms: JsValue, node_count: JsValue) -> Result<Layout, JsValue> {
        let epoch_ms = u64_arg(&epoch_ms, "epochMs")?;
        let node_count = u64_arg(&node_count, "nodeCount")?;
        snowmint::Layout::snowcast(epoch_ms, node_count)
            .map(|inner| Layout { inner })
            .map_err(js_err)
    }

    /// Hazelcast's layout with a node-ID offset added to every node ID.
    pub fn hazelcast(node_id_offset: JsValue) -> Result<Layout, JsValue> {
        let offset = u64_arg(&node_id_offset, "nodeIdOffset")?;
        snowmint::Layout::hazelcast(offset)
            .map(|inner| Layout { inner })
            .map_err(js_err)
    }

    /// A copy owned by the caller (used internally to pass a `Layout` without consuming it).
    #[wasm_bindgen(js_name = "__copy", skip_typescript)]
    pub fn copy(&self) -> Layout {
        *self
    }

    /// The preset's name, or `null` for a custom layout.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> JsValue {
        match self.inner.preset_name() {
            Some(n) => JsValue::from_str(n),
            None => JsValue::NULL,
        }
    }

    /// Bits of the timestamp field.
    #[wasm_bindgen(getter, js_name = timestampBits)]
    pub fn timestamp_bits(&self) -> u32 {
        self.inner.timestamp_bits()
    }

    /// Bits of the node field.
    #[wasm_bindgen(getter, js_name = nodeBits)]
    pub fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }

    /// Bits of the sequence field.
    #[wasm_bindgen(getter, js_name = sequenceBits)]
    pub fn sequence_bits(&self) -> u32 {
        self.inner.sequence_bits()
    }

    /// Total width in bits (64 for decimal IDs).
    #[wasm_bindgen(getter, js_name = totalBits)]
    pub fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }

    /// `'timestamp_node_sequence'` or `'timestamp_sequence_node'`.
    #[wasm_bindgen(getter)]
    pub fn order(&self) -> JsValue {
        JsValue::from_str(self.inner.order().name())
    }

    /// Tick length in nanoseconds.
    #[wasm_bindgen(getter, js_name = tickNs)]
    pub fn tick_ns(&self) -> u64 {
        self.inner.tick_ns()
    }

    /// Epoch, Unix milliseconds.
    #[wasm_bindgen(getter, js_name = epochMs)]
    pub fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }

    /// How many node IDs the node field holds.
    #[wasm_bindgen(getter, js_name = nodeCount)]
    pub fn node_count(&self) -> f64 {
        // A power of two (or the decimal layout's 100 and 1): exact as a Number at every width.
        self.inner.node_count() as f64
    }

    /// IDs one node can mint per tick.
    #[wasm_bindgen(getter, js_name = idsPerTick)]
    pub fn ids_per_tick(&self) -> f64 {
        // A power of two (or the decimal layout's 100 and 1): exact as a Number at every width.
        self.inner.ids_per_tick() as f64
    }

    /// Largest node ID a generator may be given.
    #[wasm_bindgen(getter, js_name = maxNodeId)]
    pub fn max_node_id(&self) -> u64 {
        self.inner.max_node_id()
    }

    /// Largest tick the timestamp field holds.
    #[wasm_bindgen(getter, js_name = maxTick)]
    pub fn max_tick(&self) -> u64 {
        self.inner.max_tick()
    }

    /// The first Unix millisecond the layout cannot represent.
    #[wasm_bindgen(getter, js_name = lifespanEndMs)]
    pub fn lifespan_end_ms(&self) -> u64 {
        self.inner.lifespan_end_ms()
    }

    /// The lifespan end as ISO-8601 UTC text.
    #[wasm_bindgen(getter, js_name = lifespanEndIso)]
    pub fn lifespan_end_iso(&self) -> JsValue {
        JsValue::from_str(self.inner.lifespan_end().to_buf().as_str())
    }

    /// The unit of injected clock readings: `'ms'`, or `'ns'` for sub-millisecond ticks.
    #[wasm_bindgen(getter, js_name = clockUnit)]
    pub fn clock_unit(&self) -> JsValue {
        JsValue::from_str(self.inner.clock_unit().name())
    }
}

// ---------------------------------------------------------------------------------------------------
// Generator

/// Mints unique, strictly increasing IDs for one node.
#[wasm_bindgen]
pub struct Generator {
    /// Boxed: [`Generator::fast_handle`] hands out its address, which must not move.
    inner: Box<SharedGenerator>,
    clock: Option<Function>,
    unit: snowmint::ClockReader,
}

#[wasm_bindgen]
extern "C" {
    /// `crypto.getRandomValues` of browsers and Node ≥ 19 (throws where there is no `crypto`).
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues, catch)]
    fn get_random_values(buf: &mut [u32]) -> Result<(), JsValue>;
}

/// 64 random bits from `crypto.getRandomValues`, else (no Web Crypto) from `Math.random`.
fn random_seed_js() -> u64 {
    let mut words = [0u32; 2];
    if get_random_values(&mut words).is_ok() {
        (u64::from(words[0]) << 32) | u64::from(words[1])
    } else {
        let hi = (js_sys::Math::random() * 4_294_967_296.0) as u64;
        let lo = (js_sys::Math::random() * 4_294_967_296.0) as u64;
        (hi << 32) | lo
    }
}

/// The `wait` policy's sleep: JavaScript cannot sleep synchronously, so spin on `Date.now()` for the
/// time the core asked for (at most `max_ahead` plus a tick). A host clock that steps back ends it.
fn busy_wait(ns: u64) {
    let start = Date::now();
    let end = start + ns as f64 / 1_000_000.0;
    loop {
        let now = Date::now();
        if now >= end || now < start {
            return;
        }
    }
}

/// One reading of a generator's clock in Unix nanoseconds, for the host layer's clock adapter
/// ([`snowmint_host::with_host_clock`]): `Date.now()`, or the injected clock, whose exception is the
/// fault passed on unchanged and whose value of a wrong type is a `TypeError` (code INVALID_CLOCK), as
/// in the native package. A concrete type (not `dyn Clock`): the core's generic code, knowing every
/// reading is exact, leaves out its path for cached readings (module size).
struct JsRead<'a> {
    clock: Option<&'a Function>,
    unit: ClockReader,
}

impl HostRead for JsRead<'_> {
    type Fault = JsValue;

    #[inline]
    fn read(&self) -> Result<u64, ClockFault<JsValue>> {
        let reading = match self.clock {
            None => ClockUnit::Millis.f64_to_ns(Date::now()),
            Some(clock) => {
                let v = clock.call0(&JsValue::UNDEFINED).map_err(ClockFault::Host)?;
                if let Some(x) = v.as_f64() {
                    self.unit.f64_to_ns(x)
                } else if let Some(n) = u64::try_from_js_value_ref(&v) {
                    self.unit.to_ns(n)
                } else if v.is_bigint() {
                    Err(snowmint::Error::InvalidClock {
                        reason: "the clock returned a bigint outside 0n..2^64n",
                    })
                } else {
                    return Err(ClockFault::WrongType(snowmint::Error::InvalidClock {
                        reason: "the clock must return a number or a bigint",
                    }));
                }
            }
        };
        // One conversion for every refused reading.
        reading.map_err(ClockFault::Core)
    }
}

impl Generator {
    /// Runs `f` with this generator's clock; a clock's exception reaches the caller unchanged.
    #[inline]
    fn mint<T>(
        &self,
        f: impl FnOnce(&HostClock<'_, JsRead<'_>>) -> snowmint::Result<T>,
    ) -> Result<T, JsValue> {
        let read = JsRead {
            clock: self.clock.as_ref(),
            unit: self.unit,
        };
        snowmint_host::with_host_clock(read, f).map_err(fault_to_js)
    }
}

/// What stopped a mint, as the value to throw (one function, not one copy per minting method).
#[inline(never)]
fn fault_to_js(fault: ClockFault<JsValue>) -> JsValue {
    match fault {
        ClockFault::Core(e) => js_err(e),
        ClockFault::WrongType(e) => coded(
            js_sys::TypeError::new(&e.to_string()).into(),
            ErrorCode::InvalidClock,
        ),
        ClockFault::Host(thrown) => thrown,
    }
}

#[wasm_bindgen]
impl Generator {
    /// `new Generator({ nodeId, layout?, clock?, policy?, maxAheadMs?, randomStart?, randomSeed? })`.
    ///
    /// `layout` defaults to `'twitter'`; `clock` returns Unix ms (ns for sub-ms layouts) as a whole
    /// number or bigint and defaults to `Date.now()`; `policy` defaults to `'fail'`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Generator, JsValue> {
        const WHAT: &str = "Generator options";
        let o = Opts::new(&options, WHAT, &snowmint_host::JS_GENERATOR_KEYS[..7])?;
        // A string nodeId (SPEC §3.1's fixed node source, "7") is a bigint by the time it gets here:
        // js/surface.js's decimalNodeId, which the glue calls first, reads it by the native package's
        // rule (the module pays no byte for it). The other node sources need a host (env, k8s, ip) or a
        // store (leases), which a browser has not: that string's error says so; a number or bigint
        // here is only ever wrong as a number (its precision or range).
        let node_id = u64_arg_as(
            &o.required("nodeId", WHAT)?,
            "nodeId",
            ErrorCode::NodeIdOutOfRange,
        )?;
        let layout = layout_arg(&o.get("layout"))?;
        let clock = match o.get("clock") {
            v if absent(&v) => None,
            v => Some(
                v.dyn_into::<Function>()
                    .map_err(|v| wrong_type("clock", "a function", &v))?,
            ),
        };
        let policy = match o.get("policy") {
            v if absent(&v) => Policy::Fail,
            v => Policy::from_name(&string_arg(&v, "policy")?).map_err(js_err)?,
        };
        let max_ahead_ms = o.optional_u64("maxAheadMs")?;
        let random_start = match o.get("randomStart") {
            v if absent(&v) => None,
            v => Some(bool_arg(&v, "randomStart")?),
        };
        let random_seed = o.optional_u64("randomSeed")?;
        // The one rule of every binding: defaults, the 64-bit-nanosecond bound, the seed rule.
        let options = snowmint_host::options_seeded(
            &snowmint_host::JS_NAMES,
            policy,
            max_ahead_ms,
            random_start,
            random_seed,
            random_seed_js,
        )
        .map_err(|e| arg_err(&e.message))?; // the host's option errors are all INVALID_ARGUMENT
        let inner = SharedGenerator::new(layout, node_id, options).map_err(js_err)?;
        Ok(Generator {
            inner: Box::new(inner),
            clock,
            unit: layout.clock_reader(),
        })
    }

    /// The next ID as a bigint.
    #[wasm_bindgen(js_name = nextId)]
    pub fn next_id(&self) -> Result<u64, JsValue> {
        self.mint(|clock| self.core().next_id_with(clock, busy_wait))
    }

    /// The fast path's handle on this generator's minting state (see [`refill`]), or 0 when the
    /// generator has an injected clock (the fast path reads `Date.now()`, so it is only for the default
    /// clock). Valid while the generator is alive: the state is boxed, so it never moves.
    #[wasm_bindgen(js_name = "__fastHandle", skip_typescript)]
    pub fn fast_handle(&self) -> u32 {
        match self.clock {
            Some(_) => 0,
            None => self.fast_handle_of(),
        }
    }

    /// One counter of `stats()`, which js/surface.js builds (0 minted, 1 batches, 2 borrowedTicks,
    /// 3 waits, 4 waitNs, 5 regressions).
    #[wasm_bindgen(js_name = "__stats", skip_typescript)]
    pub fn stats_field(&self, i: u32) -> f64 {
        let s = self.core().stats();
        (match i {
            0 => s.minted,
            1 => s.batches,
            2 => s.borrowed_ticks,
            3 => s.waits,
            4 => s.wait_ns,
            _ => s.regressions,
        }) as f64
    }

    // nextIdString() is js/fast-path.js's: the decimal text of nextId()'s bigint.

    // nextIdNumber() is js/surface.js's: nextId() as a Number, for layouts of at most 53 bits.

    /// `n` consecutive IDs from one clock reading (one state update for the whole batch).
    #[wasm_bindgen(js_name = nextIds)]
    pub fn next_ids(&self, n: JsValue) -> Result<js_sys::BigUint64Array, JsValue> {
        let len = snowmint::check_batch(u64_arg(&n, "n")?).map_err(js_err)?;
        // Allocated by hand so that running out of memory is an error, not an abort (and no Vec
        // growth code lands in the module).
        let mut out: Vec<u64> = if len == 0 {
            Vec::new()
        } else {
            let bytes =
                core::alloc::Layout::array::<u64>(len).map_err(|_| arg_err("n is too large"))?;
            // SAFETY: `bytes` is non-zero-sized; a non-null result is `len` zeroed, aligned u64s owned
            // by the global allocator, as `Vec::from_raw_parts` requires.
            unsafe {
                let p = std::alloc::alloc_zeroed(bytes) as *mut u64;
                if p.is_null() {
                    return Err(arg_err(&cat(&[
                        "n is ",
                        dec(len as u64).as_str(),
                        ": cannot allocate that many IDs",
                    ])));
                }
                Vec::from_raw_parts(p, len, len)
            }
        };
        self.mint(|clock| self.core().next_ids_with(clock, busy_wait, &mut out))?;
        Ok(js_sys::BigUint64Array::from(&out[..]))
    }

    /// The generator's layout.
    #[wasm_bindgen(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner.layout(),
        }
    }

    /// The node ID this generator mints for (before any offset).
    #[wasm_bindgen(getter, js_name = nodeId)]
    pub fn node_id(&self) -> JsValue {
        int(
            self.inner.node_id(),
            JsNumbers::node_id(self.inner.layout()),
        )
    }

    /// The high-water mark (the next free logical position), a bigint: persist it and pass it to
    /// `restore()` after a restart so no ID repeats, even if the clock went back meanwhile.
    #[wasm_bindgen(js_name = highWaterMark)]
    pub fn high_water_mark(&self) -> u64 {
        self.core().state()
    }

    /// Continues from a persisted high-water mark (a bigint, or its decimal string); never moves
    /// backwards.
    pub fn restore(&self, mark: JsValue) -> Result<(), JsValue> {
        let mark = match mark.as_string() {
            Some(s) => Encoding::Decimal.parse(&s).map_err(js_err)?,
            None if mark.is_bigint() => u64_arg(&mark, "mark")?,
            None => return Err(type_err("mark must be a bigint or a decimal string")),
        };
        self.core().restore(mark);
        Ok(())
    }

    /// `'wait'`, `'fail'` or `'strict'`.
    #[wasm_bindgen(getter)]
    pub fn policy(&self) -> JsValue {
        JsValue::from_str(self.inner.policy().name())
    }
}

// ---------------------------------------------------------------------------------------------------
// Decoding, composing, string forms

/// An ID argument: a bigint, a safe whole Number, or text in any string form.
fn id_arg(v: &JsValue) -> Result<u64, JsValue> {
    if let Some(s) = v.as_string() {
        return snowmint::parse_any(&s).map_err(js_err);
    }
    id_number_arg(v)
}

/// An ID as a bigint or Number; one out of 0..2^64 (negative, or a bigint ≥ 2^64) is `INVALID_ID`, as in
/// every runtime (`snowmint_host::js::id_arg`).
fn id_number_arg(v: &JsValue) -> Result<u64, JsValue> {
    int_arg(v, None)
}

/// `x` as a Number when the layout's field fits 2^53 - 1 ([`JsNumbers`]), else as a bigint: exact
/// either way, and the same type for every value of the field.
#[inline(never)]
fn int(x: u64, number: bool) -> JsValue {
    if number {
        JsValue::from_f64(x as f64)
    } else {
        JsValue::from(x)
    }
}

/// Takes an ID (bigint or any string form) apart under a layout (default `'twitter'`):
/// `{ id, timestampTicks, timestampMs, subMsNs, date, iso, nodeId, sequence }`.
#[wasm_bindgen]
pub fn decode(id: JsValue, layout: JsValue) -> Result<Object, JsValue> {
    let id = id_arg(&id)?;
    let layout = layout_arg(&layout)?;
    let d = layout.decode(id).map_err(js_err)?;
    let out = Object::new();
    let o: &JsValue = out.as_ref();
    set(o, "id", &JsValue::from(d.id));
    set(o, "timestampTicks", &JsValue::from(d.timestamp_ticks));
    let numbers = JsNumbers::of(&layout);
    set(o, "timestampMs", &int(d.unix_ms, numbers.timestamp_ms));
    set(o, "subMsNs", &JsValue::from_f64(d.sub_ms_ns as f64));
    set(
        o,
        "date",
        &Date::new(&JsValue::from_f64(d.unix_ms as f64)).into(),
    );
    set(o, "iso", &JsValue::from_str(d.iso().to_buf().as_str()));
    set(o, "nodeId", &int(d.node, numbers.node_id));
    set(o, "sequence", &int(d.sequence, numbers.sequence));
    Ok(out)
}

/// Composes an ID from `{ timestampTicks, nodeId, sequence }` (each checked against its field).
#[wasm_bindgen]
pub fn compose(fields: JsValue, layout: JsValue) -> Result<u64, JsValue> {
    const WHAT: &str = "compose fields";
    let o = Opts::new(&fields, WHAT, &["timestampTicks", "nodeId", "sequence"])?;
    let ticks = u64_arg(&o.required("timestampTicks", WHAT)?, "timestampTicks")?;
    let node = u64_arg(&o.required("nodeId", WHAT)?, "nodeId")?;
    let sequence = u64_arg(&o.required("sequence", WHAT)?, "sequence")?;
    let layout = layout_arg(&layout)?;
    layout.compose(ticks, node, sequence).map_err(js_err)
}

/// The smallest ID any generator of the layout can mint at or after `at` (a `Date` or Unix ms).
#[wasm_bindgen(js_name = minIdAt)]
pub fn min_id_at(at: JsValue, layout: JsValue) -> Result<u64, JsValue> {
    let ms = if let Some(date) = at.dyn_ref::<Date>() {
        let t = date.get_time();
        if t.is_nan() {
            return Err(arg_err("at is an invalid Date"));
        }
        u64_arg(&JsValue::from_f64(t), "at")?
    } else {
        u64_arg(&at, "at")?
    };
    let layout = layout_arg(&layout)?;
    layout.min_id_at_ms(ms).map_err(js_err)
}

fn encoding_arg(v: &JsValue, default: &str) -> Result<String, JsValue> {
    if absent(v) {
        return Ok(default.into());
    }
    string_arg(v, "encoding")
}

/// An ID as text: `'dec'` (default), `'hex'`, `'base32'` or `'base58'`.
#[wasm_bindgen]
pub fn encode(id: JsValue, encoding: JsValue) -> Result<JsValue, JsValue> {
    let id = id_number_arg(&id)?;
    let encoding = Encoding::from_name(&encoding_arg(&encoding, "dec")?).map_err(js_err)?;
    Ok(JsValue::from_str(encoding.encode(id).as_str()))
}

/// Text as an ID: `'dec'`, `'hex'`, `'base32'`, `'base58'` or `'any'` (default: told apart by shape).
#[wasm_bindgen]
pub fn parse(text: JsValue, encoding: JsValue) -> Result<u64, JsValue> {
    let text = string_arg(&text, "text")?;
    let encoding = Encoding::from_name_or_any(&encoding_arg(&encoding, "any")?).map_err(js_err)?;
    Encoding::parse_in(encoding, &text).map_err(js_err)
}

/// The string form `parse(text)` reads `text` in (0 dec, 1 hex, 2 base32, 3 base58), or the error it
/// gives: the offline page shows which form it decoded.
#[wasm_bindgen(js_name = "__formOf", skip_typescript)]
pub fn form_of(text: &str) -> Result<u32, JsValue> {
    Ok(match snowmint::parse_any_form(text).map_err(js_err)?.0 {
        Encoding::Decimal => 0,
        Encoding::Hex => 1,
        Encoding::Base32 => 2,
        Encoding::Base58 => 3,
    })
}

// ---------------------------------------------------------------------------------------------------
// The fast path of `nextId()`
//
// A call into the module costs more than minting an ID, and `Date.now()` more still: js/fast-path.js
// reads `Date.now()` itself and, while it reads the millisecond of the last call, hands out IDs the
// generator took ahead for that millisecond ([`SharedGenerator::take_in_tick_ms`]: the IDs `nextId()`
// would give one by one, in order) from a window in the module's memory, without calling in. Everything
// else, and a window run out, is a call to [`refill`]. Whatever the generator does next (any method, and
// dropping it) first gives back what the window did not hand out ([`Generator::core`]), so that IDs,
// their order, high-water marks and statistics are exactly those of minting one by one.

/// IDs per window at most; the first take in a millisecond is 2, and each refill in it doubles the next.
const WINDOW_MAX: usize = 64;

/// The window: one for the module, owned by the generator that minted last. js/fast-path.js reads it
/// through typed arrays: `owner`, `next`, `end` at bytes 0, 4, 8 (Uint32Array), `ms` at 16
/// (Float64Array), `ids` from 32 (BigUint64Array of [`WINDOW_MAX`]).
#[repr(C, align(8))]
struct Window {
    /// The owner's [`Generator::fast_handle`], or 0.
    owner: u32,
    /// Index of the next ID to hand out.
    next: u32,
    /// IDs in the window.
    end: u32,
    /// Refills in this millisecond by this owner so far (sizes the next take).
    streak: u32,
    /// The `Date.now()` reading the IDs are for.
    ms: f64,
    /// The position of `ids[0]` when the window was taken ahead (else 0 with `end` 1: nothing to give
    /// back).
    first: u64,
    ids: [u64; WINDOW_MAX],
}

struct WindowCell(core::cell::UnsafeCell<Window>);
// wasm32-unknown-unknown without the atomics feature has one thread.
unsafe impl Sync for WindowCell {}
static WINDOW: WindowCell = WindowCell(core::cell::UnsafeCell::new(Window {
    owner: 0,
    next: 0,
    end: 0,
    streak: 0,
    ms: 0.0,
    first: 0,
    ids: [0; WINDOW_MAX],
}));

/// The window. SAFETY (for every caller): one thread, and no reference to it is held across a call
/// that could reach it again (JS reads it only between calls into the module).
fn window() -> &'static mut Window {
    unsafe { &mut *WINDOW.0.get() }
}

/// Closes the window if `handle` owns it (every handle, with 0): gives back the IDs not handed out.
fn close_window(handle: u32) {
    let w = window();
    if w.owner == 0 || (handle != 0 && w.owner != handle) {
        return;
    }
    if w.next < w.end {
        // SAFETY: an owner is a live generator (dropping one closes its window first).
        let inner = unsafe { &*(w.owner as usize as *const SharedGenerator) };
        inner.give_back(w.first + w.end as u64, w.first + w.next as u64);
    }
    w.owner = 0;
    w.next = 0;
    w.end = 0;
}

impl Generator {
    /// The minting state, after giving back what the fast path's window holds for this generator: every
    /// method that reads or changes the state takes it through here.
    fn core(&self) -> &SharedGenerator {
        close_window(self.fast_handle_of());
        &self.inner
    }

    fn fast_handle_of(&self) -> u32 {
        &*self.inner as *const SharedGenerator as usize as u32
    }
}

impl Drop for Generator {
    fn drop(&mut self) {
        close_window(self.fast_handle_of());
    }
}

/// Called by js/fast-path.js when the window cannot serve a `nextId()`: with the generator's
/// [`Generator::fast_handle`] and the `Date.now()` reading it took. Closes the window, then takes IDs
/// ahead for this millisecond if the generator is in it already, or else mints one ID by the generator's
/// full path (the first ID of a millisecond). Returns true with the window holding the ID to return at
/// index 0 (and `next` at 1), or false with no ID (a wait, an error, a reading the core refuses): the
/// caller then takes the full path, `nextId`, which reads the clock again itself and reports the error.
#[wasm_bindgen(js_name = "__refill", skip_typescript)]
pub fn refill(handle: u32, now_ms: f64) -> bool {
    if handle == 0 {
        return false;
    }
    let last = window();
    let streak = if last.owner == handle && last.ms == now_ms {
        last.streak + 1
    } else {
        0
    };
    close_window(0);
    let Ok(ms) = snowmint::whole_f64(now_ms) else {
        return false;
    };
    // SAFETY: js/fast-path.js passes only a non-zero `fast_handle()` of a generator it holds and has not
    // freed (it checks the object's pointer first): a live, boxed SharedGenerator.
    let inner = unsafe { &*(handle as usize as *const SharedGenerator) };
    let w = window();
    let size = (2usize << streak.min(5)).min(WINDOW_MAX);
    let (first, end) = match inner.take_in_tick_ms(ms, &mut w.ids[..size]) {
        Some((first, n)) => (first, n as u32),
        None => match ClockUnit::Millis
            .to_ns(ms)
            .and_then(|now| inner.next_id_at(now))
        {
            Ok(snowmint::Mint::Ready(id)) => {
                w.ids[0] = id;
                (0, 1)
            }
            _ => return false,
        },
    };
    w.owner = handle;
    w.next = 1;
    w.end = end;
    w.streak = streak;
    w.ms = now_ms;
    w.first = first;
    true
}

/// The window's address (for js/fast-path.js).
#[wasm_bindgen(js_name = "__window", skip_typescript)]
pub fn window_address() -> u32 {
    WINDOW.0.get() as usize as u32
}

/// [`WINDOW_MAX`] (for js/fast-path.js).
#[wasm_bindgen(js_name = "__windowMax", skip_typescript)]
pub fn window_max() -> u32 {
    WINDOW_MAX as u32
}

/// The module's memory (for the JS entry's fast path).
#[wasm_bindgen(js_name = "__memory", skip_typescript)]
pub fn memory() -> JsValue {
    wasm_bindgen::memory()
}

/// Every error code, comma-separated (the package exports them as the array `ERROR_CODES`).
#[wasm_bindgen(js_name = "__errorCodes", skip_typescript)]
pub fn error_codes() -> JsValue {
    let mut s = String::new();
    for c in ErrorCode::ALL {
        if !s.is_empty() {
            s.push(',');
        }
        s.push_str(c.as_str());
    }
    JsValue::from_str(&s)
}
