//! `RangeSequence`: compact integer IDs from ranges leased global → datacenter → process
//! ([`snowmint_coord::RangeSequence`], SPEC §4) for Node. Converts values and maps errors; the allocation
//! is the coordination crate's. Opening runs on libuv's thread pool (the event loop never waits on a
//! store); `nextId()` is one atomic step on the held range.

use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::{AsyncTask, Either, Env, Float64Array, Uint32Array, Unknown};

use napi::sys;
use napi_derive::napi;
use snowmint::ErrorCode;
use snowmint_coord as coord;

use crate::{
    coord_err, get_u64, guarded, range_err, raw_of, rejection, string_arg, throw, type_err,
    type_of, Kind, Opts, Raw, Result,
};

const RANGE_KEYS: [&str; 10] = [
    "name",
    "dc",
    "globalStore",
    "localStore",
    "dcRange",
    "processRange",
    "bits",
    "start",
    "threshold",
    "waitMs",
];

/// Integers of a fixed width (31 bits by default) from a range sequence: unique across every process
/// and datacenter, strictly increasing per process.
#[napi]
pub struct RangeSequence {
    inner: Arc<coord::RangeSequence>,
}

/// What a range sequence handle has done.
#[napi(object)]
pub struct RangeStats {
    /// Values handed out by this handle.
    pub values: f64,
    /// Ranges this process took from its datacenter row.
    pub process_ranges: f64,
    /// Ranges this process moved from the global row to its datacenter row.
    pub dc_ranges: f64,
    /// Times minting had to wait for a range.
    pub late: f64,
    /// Total time minting waited, nanoseconds.
    pub wait_ns: f64,
    /// The current range `[start, end)`.
    pub current: Vec<f64>,
    /// The pre-allocated next range, if ready.
    pub ready: Option<Vec<f64>>,
}

/// Opens a range sequence on the thread pool.
pub struct RangeOpenTask {
    args: Option<(String, String, String, String, coord::RangeOptions)>,
}

impl napi::Task for RangeOpenTask {
    type Output = std::result::Result<coord::RangeSequence, coord::Error>;
    type JsValue = RangeSequence;

    fn compute(&mut self) -> Result<Self::Output> {
        let Some((name, dc, global, local, options)) = self.args.take() else {
            return Ok(Err(coord::Error::invalid("the task ran twice")));
        };
        Ok(coord::RangeSequence::open_urls(
            &name, &dc, &global, &local, options,
        ))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        output
            .map(|inner| RangeSequence {
                inner: Arc::new(inner),
            })
            .map_err(|e| rejection(env.raw(), &e))
    }
}

#[napi]
impl RangeSequence {
    /// `await RangeSequence.open({ name, dc, globalStore, localStore?, dcRange?, processRange?, bits?,
    /// start?, threshold?, waitMs? })`: resolves once the first process range is held. `bits` is 1 to 53
    /// here (values are exact Numbers); 31 by default.
    #[napi(
        ts_args_type = "options: { name: string; dc: string; globalStore: string; localStore?: string; dcRange?: number; processRange?: number; bits?: number; start?: number; threshold?: number; waitMs?: number }",
        ts_return_type = "Promise<RangeSequence>"
    )]
    pub fn open(env: Env, options: Unknown<'_>) -> Result<AsyncTask<RangeOpenTask>> {
        let raw = env.raw();
        let what = "RangeSequence options";
        let o = Opts::new(raw, raw_of(&options), what, &RANGE_KEYS)?;
        let text = |key: &str| -> Result<String> { string_arg(raw, o.required(key, what)?, key) };
        let (name, dc, global) = (text("name")?, text("dc")?, text("globalStore")?);
        let local = match o.get("localStore") {
            None => global.clone(),
            Some(v) => string_arg(raw, v, "localStore")?,
        };
        let d = coord::RangeOptions::default();
        let num = |key: &str, default: u64| -> Result<u64> {
            o.get(key).map_or(Ok(default), |v| get_u64(raw, v, key))
        };
        let small = |key: &str, default: u32| -> Result<u32> {
            let v = num(key, u64::from(default))?;
            u32::try_from(v).map_err(|_| range_err(raw, &format!("{key} is {v}, too large")))
        };
        let options = coord::RangeOptions {
            dc_range: num("dcRange", d.dc_range)?,
            process_range: num("processRange", d.process_range)?,
            bits: small("bits", d.bits)?,
            start: num("start", d.start)?,
            threshold_percent: small("threshold", d.threshold_percent)?,
            wait: Duration::from_millis(num("waitMs", d.wait.as_millis() as u64)?),
        };
        if options.bits > 53 {
            return Err(throw(
                raw,
                Kind::Error,
                ErrorCode::InvalidArgument.as_str(),
                &format!(
                    "bits is {}: in JavaScript a range sequence is 1 to 53 bits wide (values are exact Numbers)",
                    options.bits
                ),
                &[],
            ));
        }
        options.check().map_err(|e| coord_err(raw, e))?;
        Ok(AsyncTask::new(RangeOpenTask {
            args: Some((name, dc, global, local, options)),
        }))
    }

    /// The next value (a Number below 2 ** bits): one atomic step on the held range; blocks only when
    /// the range is used up and the next is not ready (at most `waitMs`).
    #[napi]
    pub fn next_id(&self, env: Env) -> Result<f64> {
        if let Some(v) = self.inner.try_next_id() {
            return Ok(v as f64);
        }
        self.inner
            .next_id()
            .map(|v| v as f64)
            .map_err(|e| coord_err(env.raw(), e))
    }

    /// `n` values, increasing: a `Uint32Array` when `bits` ≤ 32, else a `Float64Array`.
    #[napi(
        ts_args_type = "n: number",
        ts_return_type = "Uint32Array | Float64Array"
    )]
    pub fn next_ids(&self, env: Env, n: Unknown<'_>) -> Result<Either<Uint32Array, Float64Array>> {
        let raw = env.raw();
        let n = get_u64(raw, raw_of(&n), "n")?;
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let values = self.inner.next_ids(n).map_err(|e| coord_err(raw, e))?;
        Ok(if self.inner.options().bits <= 32 {
            Either::A(Uint32Array::new(
                values.into_iter().map(|v| v as u32).collect(),
            ))
        } else {
            Either::B(Float64Array::new(
                values.into_iter().map(|v| v as f64).collect(),
            ))
        })
    }

    /// Values handed out, ranges taken per level, late pre-allocations, time spent waiting.
    #[napi]
    pub fn stats(&self) -> RangeStats {
        let s = self.inner.stats();
        RangeStats {
            values: s.values as f64,
            process_ranges: s.process_ranges as f64,
            dc_ranges: s.dc_ranges as f64,
            late: s.late as f64,
            wait_ns: s.wait_ns as f64,
            current: vec![s.current.0 as f64, s.current.1 as f64],
            ready: s.ready.map(|(a, b)| vec![a as f64, b as f64]),
        }
    }

    /// The value width in bits.
    #[napi(getter)]
    pub fn bits(&self) -> u32 {
        self.inner.options().bits
    }
}

// ---------------------------------------------------------------------------------------------------
// The fast nextId: a napi-rs method call costs several times the atomic step, so `index.js` asks once per
// sequence for a handle (`__rangeHandle`: an External holding the sequence, type-tagged) and its own
// `nextId` calls the module-level `__rangeNext(handle)`, which leaves the value in the environment's ID
// cell (read as a double). Errors are the method's.
// ---------------------------------------------------------------------------------------------------

const HANDLE_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x7261_6e67_6573_6571, // "rangeseq"
    upper: 0x736e_6f77_6d69_6e74, // "snowmint"
};

unsafe extern "C" fn drop_handle(
    _env: sys::napi_env,
    data: *mut std::ffi::c_void,
    _hint: *mut std::ffi::c_void,
) {
    // SAFETY: `data` is the Box leaked by `range_handle`, finalized once by N-API.
    drop(unsafe { Box::from_raw(data as *mut Arc<coord::RangeSequence>) });
}

fn args<const N: usize>(env: sys::napi_env, info: sys::napi_callback_info) -> Option<[Raw; N]> {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    // SAFETY: `argv` has room for N values.
    let ok = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    } == sys::Status::napi_ok;
    (ok && argc >= N).then_some(argv)
}

/// `__rangeHandle(sequence)`: the handle of a `RangeSequence` (checked: type tag, then unwrap).
pub(crate) unsafe extern "C" fn range_handle(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
    guarded(env, || {
        use napi::bindgen_prelude::TypeTag;
        let refuse = || {
            type_err(env, "__rangeHandle takes a RangeSequence");
            None
        };
        let Some([obj]) = args::<1>(env, info) else {
            return refuse();
        };
        let mut wrapped: *mut std::ffi::c_void = ptr::null_mut();
        let mut tagged = false;
        let tag = <RangeSequence as TypeTag>::type_tag();
        // SAFETY: plain N-API queries on a value of this call.
        let ok = unsafe {
            type_of(env, obj) == sys::ValueType::napi_object
                && sys::napi_check_object_type_tag(env, obj, &tag, &mut tagged)
                    == sys::Status::napi_ok
                && tagged
                && sys::napi_unwrap(env, obj, &mut wrapped) == sys::Status::napi_ok
                && !wrapped.is_null()
        };
        if !ok {
            return refuse();
        }
        // SAFETY: tagged and wrapped by napi-rs as a RangeSequence.
        let seq = unsafe { &*(wrapped as *const RangeSequence) };
        let data = Box::into_raw(Box::new(seq.inner.clone())) as *mut std::ffi::c_void;
        let mut ext = ptr::null_mut();
        // SAFETY: `data` is a live Box; N-API calls `drop_handle` once when the External is collected.
        unsafe {
            if sys::napi_create_external(env, data, Some(drop_handle), ptr::null_mut(), &mut ext)
                != sys::Status::napi_ok
            {
                drop(Box::from_raw(data as *mut Arc<coord::RangeSequence>));
                return None;
            }
            sys::napi_type_tag_object(env, ext, &HANDLE_TAG);
        }
        Some(ext)
    })
}

/// `__rangeNext(handle)`: writes the next value, as a double's bits, into the environment's ID cell
/// (`index.js` reads it through a Float64Array over the cell: cheaper than creating a Number here) and
/// returns undefined; throws the `nextId` method's errors with nothing written.
pub(crate) unsafe extern "C" fn range_next(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
    guarded(env, || {
        let mut argv = [ptr::null_mut(); 1];
        let table = unsafe { crate::fast_call(env, info, &mut argv) }?;
        let handle = argv[0];
        let mut tagged = false;
        let mut data: *mut std::ffi::c_void = ptr::null_mut();
        // SAFETY: plain N-API queries on a value of this call.
        let ok = unsafe {
            type_of(env, handle) == sys::ValueType::napi_external
                && sys::napi_check_object_type_tag(env, handle, &HANDLE_TAG, &mut tagged)
                    == sys::Status::napi_ok
                && tagged
                && sys::napi_get_value_external(env, handle, &mut data) == sys::Status::napi_ok
                && !data.is_null()
        };
        if !ok {
            type_err(env, "__rangeNext takes a handle from __rangeHandle");
            return None;
        }
        // SAFETY: tagged by `range_handle`, so `data` is its Box, alive while the External is.
        let seq = unsafe { &*(data as *const Arc<coord::RangeSequence>) };
        let v = match seq.try_next_id() {
            Some(v) => v,
            None => match seq.next_id() {
                Ok(v) => v,
                Err(e) => {
                    coord_err(env, e);
                    return None;
                }
            },
        };
        // SAFETY: the table is alive (the function holds the environment's reference) and used on this
        // thread only; JavaScript reads the cell right after this call returns. Values are below 2^53
        // (`open` refuses wider sequences), so the double is exact.
        unsafe { *(*table).cell.get() = (v as f64).to_bits() };
        None
    })
}
