//! Python's use of the host layer's [`OwnWindow`](snowmint_host::window::OwnWindow): on an interpreter
//! with a GIL, `Generator.next_id` hands IDs out of a window the generator object holds, which the
//! threads sharing the object take turns on under the GIL (so the object's IDs strictly increase in the
//! order the GIL let the calls through). A wait releases the GIL, so a call that may wait takes the
//! window out of the object first (the host layer's rules). On a free-threaded interpreter running
//! without a GIL, generators mint out of their threads' windows, as the core does by itself; a forked
//! child's generator (on a state file, or a lease source's) too.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether generators' windows may be held by the objects (see the module docs): set at import.
static GIL_GUARDS_WINDOWS: AtomicBool = AtomicBool::new(false);

/// Records at import whether the interpreter has a GIL: not on a free-threaded interpreter running
/// without one (`sys._is_gil_enabled()`, CPython 3.13 and later; a GIL once enabled stays enabled).
pub(crate) fn note_interpreter(py: pyo3::Python<'_>) -> pyo3::PyResult<()> {
    use pyo3::types::PyAnyMethods;
    let sys = py.import("sys")?;
    let gil = match sys.getattr("_is_gil_enabled") {
        Ok(f) => f.call0()?.is_truthy()?,
        Err(_) => true,
    };
    GIL_GUARDS_WINDOWS.store(gil, Ordering::Relaxed);
    Ok(())
}

/// Whether generators made now hold their own windows.
pub(crate) fn gil_guards_windows() -> bool {
    GIL_GUARDS_WINDOWS.load(Ordering::Relaxed)
}
