//! Errors: a core or coordination error as a `SnowmintError` (the class `index.js` registers) with its
//! stable `code`, a wrong JavaScript type as a `TypeError`, thrown or handed to a Promise.

use super::*;

#[derive(Clone, Copy)]
pub(crate) enum Kind {
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
pub(crate) unsafe extern "C" fn set_error_class(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
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
pub(crate) fn throw(
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
pub(crate) fn core_err(env: sys::napi_env, e: snowmint::Error) -> napi::Error {
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
pub(crate) fn rejection(raw: sys::napi_env, e: &coord::Error) -> napi::Error {
    let err = new_error(raw, Kind::Error, e.code().as_str(), e.message());
    // SAFETY: `err` is a live JavaScript value of this environment.
    unsafe { napi::Error::from(Unknown::from_raw_unchecked(raw, err)) }
}

/// A coordination error as a JavaScript `Error` with its code.
pub(crate) fn coord_err(env: sys::napi_env, e: coord::Error) -> napi::Error {
    throw(env, Kind::Error, e.code().as_str(), e.message(), &[])
}

pub(crate) fn type_err(env: sys::napi_env, msg: &str) -> napi::Error {
    throw(
        env,
        Kind::Type,
        ErrorCode::InvalidArgument.as_str(),
        msg,
        &[],
    )
}

/// A value of the right type out of range: a `SnowmintError` with `INVALID_ARGUMENT`.
pub(crate) fn range_err(env: sys::napi_env, msg: &str) -> napi::Error {
    code_err(env, msg, ErrorCode::InvalidArgument)
}

/// A value of the right type but out of range, with the argument's own code.
pub(crate) fn code_err(env: sys::napi_env, msg: &str, code: ErrorCode) -> napi::Error {
    throw(env, Kind::Error, code.as_str(), msg, &[])
}

pub(crate) trait OrThrow<T> {
    fn js(self, env: sys::napi_env) -> Result<T>;
}

impl<T> OrThrow<T> for snowmint::Result<T> {
    #[inline]
    fn js(self, env: sys::napi_env) -> Result<T> {
        self.map_err(|e| core_err(env, e))
    }
}
