//! The raw N-API fast paths, kept apart from the typed napi-rs code of the rest of the binding: the
//! benchmark (`bench.mjs`) shows the single-ID call costs less than half as much through them (SPEC §6).
//! Everything here calls the same Rust methods as the napi-rs versions and throws the same errors.

use super::*;

//
// napi-rs's generated method glue, and `napi_unwrap` itself (a private-property lookup), each cost more
// than minting an ID. So after the classes are registered, the minting methods on `Generator.prototype`
// are replaced by plain N-API callbacks that check `this` in full (the class's type tag, then
// napi_unwrap: never a blind cast) and then install on that object its own copies of the methods,
// created with the generator's address as their N-API `data`. Each copy holds a strong reference to its
// object (a symbol-keyed property), so the generator outlives every function that can reach it; a copy
// called with another `this` still mints from its own generator, like a bound method. They call the same
// Rust methods as the napi-rs versions above and throw the same errors.
//
// One step further for `nextId`, with the package's `index.js`. N-API's `napi_create_bigint_uint64`
// costs more than the rest of a mint, while JavaScript reads a bigint out of a BigUint64Array in a few
// nanoseconds. And V8 calls a native function quickly only when its optimizing compiler knows which
// function it is; a per-generator function (as above) is called through a generic path that costs more
// than the mint. So each JavaScript environment gets one table (`Fast`): an ID cell, and the generators
// registered at construction (`__register` returns the generator's index). `index.js` calls the one
// `__mintAt(index)` function, which mints into the cell, and reads the cell through a BigUint64Array
// over it (`__idSlot`). JavaScript runs one thread per environment, so a mint's write and the read that
// follows it cannot interleave with another mint.

pub(crate) type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> Raw;

pub(crate) const FAST_METHODS: [(&std::ffi::CStr, Callback); 3] = [
    (c"nextId", fast_next_id),
    (c"nextIdString", fast_next_id_string),
    (c"nextIds", fast_next_ids),
];

/// One JavaScript environment's fast-path table: its ID cell and its registered generators. Used only on
/// the environment's thread. Reference-counted by the environment (released by its cleanup hook), by
/// each `__idSlot` buffer over the cell (released by the buffer's finalizer) and by each registered
/// generator (released when it is dropped): freed by whichever comes last.
pub(crate) struct Fast {
    pub(crate) cell: UnsafeCell<u64>,
    generators: UnsafeCell<Vec<*const Generator>>,
    free: UnsafeCell<Vec<u32>>,
    refs: Cell<usize>,
}

impl Fast {
    /// A new table with one reference (the environment's).
    pub(crate) fn new() -> *const Fast {
        Box::into_raw(Box::new(Fast {
            cell: UnsafeCell::new(0),
            generators: UnsafeCell::new(Vec::new()),
            free: UnsafeCell::new(Vec::new()),
            refs: Cell::new(1),
        }))
    }

    /// Drops one reference; the last one frees the table.
    ///
    /// # Safety
    /// `fast` came from `Fast::new` and the caller owns one of its references.
    pub(crate) unsafe fn release(fast: *const Fast) {
        let refs = (*fast).refs.get() - 1;
        (*fast).refs.set(refs);
        if refs == 0 {
            drop(Box::from_raw(fast as *mut Fast));
        }
    }

    /// Registers `g` (once: a registered generator keeps its index); the generator holds a reference.
    ///
    /// # Safety
    /// `fast` is alive; `g` is a live, wrapped generator of this environment.
    pub(crate) unsafe fn register(fast: *const Fast, g: &Generator) -> u32 {
        if !g.fast.get().is_null() {
            return g.index.get();
        }
        let (generators, free) = (&mut *(*fast).generators.get(), &mut *(*fast).free.get());
        let index = match free.pop() {
            Some(i) => {
                generators[i as usize] = g;
                i
            }
            None => {
                generators.push(g);
                (generators.len() - 1) as u32
            }
        };
        (*fast).refs.set((*fast).refs.get() + 1);
        g.fast.set(fast);
        g.index.set(index);
        index
    }

    /// Removes generator `index` and drops its reference.
    ///
    /// # Safety
    /// `fast` is alive and `index` was returned by `register` for a generator now being dropped.
    pub(crate) unsafe fn unregister(fast: *const Fast, index: u32) {
        let (generators, free) = (&mut *(*fast).generators.get(), &mut *(*fast).free.get());
        generators[index as usize] = ptr::null();
        free.push(index);
        Fast::release(fast);
    }

    /// The registered generator at `index`, if any.
    ///
    /// # Safety
    /// `fast` is alive; called on its environment's thread.
    pub(crate) unsafe fn get<'a>(fast: *const Fast, index: u32) -> Option<&'a Generator> {
        let generators = &*(*fast).generators.get();
        let p = *generators.get(index as usize)?;
        (!p.is_null()).then(|| &*p)
    }
}

/// A native function named `name` that calls `cb` with `data`.
pub(crate) unsafe fn create_function(
    env: sys::napi_env,
    name: &std::ffi::CStr,
    cb: Callback,
    data: *mut std::ffi::c_void,
) -> Option<Raw> {
    let mut f = ptr::null_mut();
    (sys::napi_create_function(
        env,
        name.as_ptr(),
        name.to_bytes().len() as isize,
        Some(cb),
        data,
        &mut f,
    ) == sys::Status::napi_ok)
        .then_some(f)
}

/// A fixed, hidden property: symbol `key` holding `value` (read-only, not enumerable).
pub(crate) fn hidden(key: Raw, value: Raw) -> sys::napi_property_descriptor {
    sys::napi_property_descriptor {
        utf8name: ptr::null(),
        name: key,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::default,
        data: ptr::null_mut(),
    }
}

/// A method property `name` (writable, configurable, not enumerable) holding `f`.
pub(crate) fn method(name: &std::ffi::CStr, f: Raw) -> sys::napi_property_descriptor {
    sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value: f,
        attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    }
}

/// A function calling `cb` with `data`, holding `keep` alive (under the symbol `key`).
pub(crate) unsafe fn bound_function(
    env: sys::napi_env,
    name: &std::ffi::CStr,
    cb: Callback,
    data: *mut std::ffi::c_void,
    key: Raw,
    keep: Raw,
) -> Option<Raw> {
    let f = create_function(env, name, cb, data)?;
    let keep = hidden(key, keep);
    (sys::napi_define_properties(env, f, 1, &keep) == sys::Status::napi_ok).then_some(f)
}

/// Installs the generator's own bound copies of `methods` on `this` (best effort: a frozen object keeps
/// using the prototype's methods).
pub(crate) unsafe fn install_bound(
    env: sys::napi_env,
    this: Raw,
    data: *mut std::ffi::c_void,
    methods: &[(&std::ffi::CStr, Callback)],
) {
    let mut key = ptr::null_mut();
    if sys::napi_create_symbol(env, ptr::null_mut(), &mut key) != sys::Status::napi_ok {
        return;
    }
    let mut props = Vec::with_capacity(methods.len());
    for &(name, cb) in methods {
        let Some(f) = bound_function(env, name, cb, data, key, this) else {
            return;
        };
        props.push(method(name, f));
    }
    if sys::napi_define_properties(env, this, props.len(), props.as_ptr()) != sys::Status::napi_ok {
        // A frozen or non-extensible object: clear the TypeError, the prototype methods keep working.
        let mut ignored = ptr::null_mut();
        sys::napi_get_and_clear_last_exception(env, &mut ignored);
    }
}

/// The `Generator` wrapped by `obj`, checked in full (the class's type tag, then `napi_unwrap`); a
/// TypeError is thrown for anything else.
pub(crate) unsafe fn unwrap_generator(
    env: sys::napi_env,
    obj: Raw,
) -> Option<*mut std::ffi::c_void> {
    use napi::bindgen_prelude::TypeTag;
    let mut wrapped: *mut std::ffi::c_void = ptr::null_mut();
    let mut tagged = false;
    let tag = <Generator as TypeTag>::type_tag();
    if obj.is_null()
        || type_of(env, obj) != sys::ValueType::napi_object
        || sys::napi_check_object_type_tag(env, obj, &tag, &mut tagged) != sys::Status::napi_ok
        || !tagged
        || sys::napi_unwrap(env, obj, &mut wrapped) != sys::Status::napi_ok
        || wrapped.is_null()
    {
        type_err(env, "this is not a Generator");
        return None;
    }
    Some(wrapped)
}

/// The generator a minting call is for: the function's own `data` (a bound copy), or `this` checked in
/// full (a prototype method; the bound copies are then installed on it). `None`: an exception is pending.
pub(crate) unsafe fn target<'a>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    argv: &mut [Raw],
) -> Option<&'a Generator> {
    let mut this = ptr::null_mut();
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    let mut argc = argv.len();
    let argv_ptr = if argv.is_empty() {
        ptr::null_mut()
    } else {
        argv.as_mut_ptr()
    };
    if sys::napi_get_cb_info(env, info, &mut argc, argv_ptr, &mut this, &mut data)
        != sys::Status::napi_ok
    {
        return None;
    }
    for a in argv.iter_mut().skip(argc) {
        sys::napi_get_undefined(env, a);
    }
    if !data.is_null() {
        return Some(&*(data as *const Generator));
    }
    let wrapped = unwrap_generator(env, this)?;
    install_bound(env, this, wrapped, &FAST_METHODS);
    Some(&*(wrapped as *const Generator))
}

/// Runs a callback body, turning a panic into a thrown error (never an unwind across FFI).
pub(crate) fn guarded(env: sys::napi_env, f: impl FnOnce() -> Option<Raw>) -> Raw {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Some(v)) => v,
        Ok(None) => ptr::null_mut(),
        Err(_) => {
            throw(
                env,
                Kind::Error,
                ErrorCode::Panic.as_str(),
                "internal error (a panic was caught)",
                &[],
            );
            ptr::null_mut()
        }
    }
}

pub(crate) unsafe extern "C" fn fast_next_id(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
    guarded(env, || {
        let g = unsafe { target(env, info, &mut []) }?;
        let id = g.next_id().ok()?;
        Some(big(env, id))
    })
}

pub(crate) unsafe extern "C" fn fast_next_id_string(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
    guarded(env, || {
        let g = unsafe { target(env, info, &mut []) }?;
        let id = g.next_id().ok()?;
        Some(js_str(env, Encoding::Decimal.encode(id).as_str()))
    })
}

pub(crate) unsafe extern "C" fn fast_next_ids(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
    guarded(env, || {
        let mut argv = [ptr::null_mut(); 1];
        let g = unsafe { target(env, info, &mut argv) }?;
        // The same conversion and the one batch limit as `Generator::next_ids`.
        let n = snowmint::check_batch(get_u64(env, argv[0], "n").ok()?)
            .js(env)
            .ok()? as u64;
        // Mint straight into a fresh ArrayBuffer's memory: no copy.
        let mut data: *mut std::ffi::c_void = ptr::null_mut();
        let mut buffer = ptr::null_mut();
        if unsafe { sys::napi_create_arraybuffer(env, n as usize * 8, &mut data, &mut buffer) }
            != sys::Status::napi_ok
        {
            return None;
        }
        if n > 0 {
            let out = unsafe { std::slice::from_raw_parts_mut(data as *mut u64, n as usize) };
            g.fill(out).ok()?;
        }
        let mut array = ptr::null_mut();
        if unsafe {
            sys::napi_create_typedarray(
                env,
                sys::TypedarrayType::biguint64_array,
                n as usize,
                buffer,
                0,
                &mut array,
            )
        } != sys::Status::napi_ok
        {
            return None;
        }
        Some(array)
    })
}

/// The calling function's `data` (the environment's `Fast`) and its first `argv.len()` arguments
/// (`undefined` for missing ones). `None`: an exception is pending.
pub(crate) unsafe fn fast_call(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    argv: &mut [Raw],
) -> Option<*const Fast> {
    let mut argc = argv.len();
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    if sys::napi_get_cb_info(
        env,
        info,
        &mut argc,
        argv.as_mut_ptr(),
        ptr::null_mut(),
        &mut data,
    ) != sys::Status::napi_ok
        || data.is_null()
    {
        return None;
    }
    for a in argv.iter_mut().skip(argc) {
        sys::napi_get_undefined(env, a);
    }
    Some(data as *const Fast)
}

/// `__idSlot()`: a BigUint64Array of one element over the environment's ID cell, or null where the
/// runtime refuses external buffers (the package then keeps N-API's `nextId`).
pub(crate) unsafe extern "C" fn id_slot_array(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Raw {
    guarded(env, || unsafe {
        let fast = fast_call(env, info, &mut [])?;
        unsafe extern "C" fn finalize(
            _env: sys::napi_env,
            _data: *mut std::ffi::c_void,
            hint: *mut std::ffi::c_void,
        ) {
            // SAFETY: the buffer held one reference on its table.
            unsafe { Fast::release(hint as *const Fast) };
        }
        let mut buffer = ptr::null_mut();
        let mut array = ptr::null_mut();
        // The buffer's reference is taken first: a runtime may run the finalizer at any time after.
        (*fast).refs.set((*fast).refs.get() + 1);
        if sys::napi_create_external_arraybuffer(
            env,
            (*fast).cell.get() as *mut std::ffi::c_void,
            8,
            Some(finalize),
            fast as *mut std::ffi::c_void,
            &mut buffer,
        ) != sys::Status::napi_ok
        {
            // No buffer, so no finalizer: give the reference back (the environment still holds one).
            Fast::release(fast);
        } else if sys::napi_create_typedarray(
            env,
            sys::TypedarrayType::biguint64_array,
            1,
            buffer,
            0,
            &mut array,
        ) == sys::Status::napi_ok
            && views_cell(env, fast, array)
        {
            return Some(array);
        }
        let mut ignored = ptr::null_mut();
        let mut null = ptr::null_mut();
        sys::napi_get_and_clear_last_exception(env, &mut ignored);
        sys::napi_get_null(env, &mut null);
        Some(null)
    })
}

/// Whether `array[0]` reads the table's cell. A runtime may implement external buffers by copying the
/// data (some N-API implementations outside Node do); the view would then never see a minted ID.
///
/// # Safety
/// `fast` is alive; `array` is a BigUint64Array of at least one element.
pub(crate) unsafe fn views_cell(env: sys::napi_env, fast: *const Fast, array: Raw) -> bool {
    [0x0123_4567_89ab_cdef_u64, 0xfedc_ba98_7654_3210]
        .iter()
        .all(|&marker| {
            *(*fast).cell.get() = marker;
            let mut v = ptr::null_mut();
            let (mut seen, mut lossless) = (0u64, false);
            sys::napi_get_element(env, array, 0, &mut v) == sys::Status::napi_ok
                && sys::napi_get_value_bigint_uint64(env, v, &mut seen, &mut lossless)
                    == sys::Status::napi_ok
                && lossless
                && seen == marker
        })
}

/// `__register(generator)`: registers the generator in the environment's table, installs its own
/// `nextIdString` and `nextIds`, and returns its index. A TypeError for anything but a Generator.
pub(crate) unsafe extern "C" fn register(env: sys::napi_env, info: sys::napi_callback_info) -> Raw {
    guarded(env, || unsafe {
        let mut argv = [ptr::null_mut(); 1];
        let fast = fast_call(env, info, &mut argv)?;
        let wrapped = unwrap_generator(env, argv[0])?;
        let index = Fast::register(fast, &*(wrapped as *const Generator));
        install_bound(env, argv[0], wrapped, &FAST_METHODS[1..]);
        let mut v = ptr::null_mut();
        sys::napi_create_uint32(env, index, &mut v);
        Some(v)
    })
}

/// `__mintAt(index)`: mints from registered generator `index` into the environment's ID cell and returns
/// undefined; throws exactly as `nextId` does.
pub(crate) unsafe extern "C" fn mint_at(env: sys::napi_env, info: sys::napi_callback_info) -> Raw {
    guarded(env, || unsafe {
        let mut argv = [ptr::null_mut(); 1];
        let fast = fast_call(env, info, &mut argv)?;
        let mut index = u32::MAX;
        sys::napi_get_value_uint32(env, argv[0], &mut index);
        let Some(g) = Fast::get(fast, index) else {
            type_err(env, "not the index of a live Generator");
            return None;
        };
        let id = g.next_id().ok()?;
        *(*fast).cell.get() = id;
        None
    })
}

/// Internal exports for the package's `index.js`, each with the environment's table as its `data`.
pub(crate) const INTERNAL_EXPORTS: [(&std::ffi::CStr, Callback); 9] = [
    (c"__setErrorClass", set_error_class),
    (c"__idSlot", id_slot_array),
    (c"__register", register),
    (c"__mintAt", mint_at),
    (c"__opaqueHandle", opaque::opaque_handle),
    (c"__opaqueEncode", opaque::opaque_encode),
    (c"__opaqueDecode", opaque::opaque_decode),
    (c"__rangeHandle", range::range_handle),
    (c"__rangeNext", range::range_next),
];

/// The environment's cleanup hook: drops the environment's reference on its table.
pub(crate) unsafe extern "C" fn release_fast(arg: *mut std::ffi::c_void) {
    // SAFETY: registered with the environment's reference, once.
    unsafe { Fast::release(arg as *const Fast) };
}

/// After the classes are registered: replace the minting methods of `Generator.prototype`.
#[napi(module_exports)]
pub fn install_fast_paths(exports: napi::bindgen_prelude::Object<'_>, env: Env) -> Result<()> {
    let env = env.raw();
    let exports = exports.raw();
    let fail = |what: &str| napi::Error::from_reason(format!("cannot install {what}"));
    unsafe {
        let mut ctor = ptr::null_mut();
        sys::napi_get_named_property(env, exports, c"Generator".as_ptr(), &mut ctor);
        let mut proto = ptr::null_mut();
        sys::napi_get_named_property(env, ctor, c"prototype".as_ptr(), &mut proto);
        let methods = FAST_METHODS
            .iter()
            .map(|&(name, cb)| {
                create_function(env, name, cb, ptr::null_mut()).map(|f| method(name, f))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| fail("the Generator fast paths"))?;
        if sys::napi_define_properties(env, proto, methods.len(), methods.as_ptr())
            != sys::Status::napi_ok
        {
            return Err(fail("the Generator fast paths"));
        }
        let fast = Fast::new();
        if sys::napi_add_env_cleanup_hook(env, Some(release_fast), fast as *mut std::ffi::c_void)
            != sys::Status::napi_ok
        {
            Fast::release(fast);
            return Err(fail("the environment's cleanup hook"));
        }
        let internal = INTERNAL_EXPORTS
            .iter()
            .map(|&(name, cb)| {
                create_function(env, name, cb, fast as *mut std::ffi::c_void)
                    .map(|f| method(name, f))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| fail("the internal exports"))?;
        if sys::napi_define_properties(env, exports, internal.len(), internal.as_ptr())
            != sys::Status::napi_ok
        {
            return Err(fail("the internal exports"));
        }
    }
    Ok(())
}
