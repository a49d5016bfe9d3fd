//! Python binding of snowmint: the native module `snowmint._snowmint`.
//!
//! This crate converts types and maps errors; every rule (layouts, sequencing, clock regression,
//! decoding, string forms) lives in the `snowmint` core. The pure-Python package `python/snowmint/`
//! re-exports what is defined here and ships the type stubs.
//!
//! Design notes:
//! - `Generator` wraps the core's lock-free [`snowmint::SharedGenerator`]: one compare-and-swap per
//!   request, `&self`, so the class is `frozen` and safe without the GIL (`gil_used = false`).
//! - `Generator.next_id` is a C method of its own (`next_id_method`), not a pyo3 method: the call
//!   wrapper cost more than the rest of a mint; its errors take pyo3's path unchanged.
//! - On an interpreter with a GIL, a generator hands IDs out of a window it holds itself (the host
//!   layer's `OwnWindow`, `window.rs`), not out of the calling thread's (a thread-local: a call per ID
//!   from a shared library).
//! - With no injected clock the system clock is read in Rust (no Python call on the fast path). Sleeps
//!   (the `wait` policy) run with the GIL released.
//! - Fork rule: a process-wide fork counter is bumped in the child by an `os.register_at_fork` hook
//!   (and a `pthread_atfork` handler, for forks that bypass `os.fork`); each generator remembers the counter it was created under and compares it on every mint (one
//!   relaxed atomic load). A generator used in a forked child raises `ForkedError` instead of repeating
//!   the parent's IDs — except one opened from a lease source, which opens a lease of its own in the
//!   child on first use (the coord crate: pre-fork servers such as gunicorn `--preload`), and one on a
//!   state file (shared by construction).

// The imports the crate's files share: each file takes them, and its siblings' items, with
// `use super::*`.
use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use pyo3::PyTraverseError;

use snowmint as sm;
use snowmint::state_file::{SharedState, StateFile};
use snowmint::{Clock, ClockUnit, ErrorCode};
use snowmint_coord as coord;
use snowmint_host::state_file::Refused;
use snowmint_host::window::OwnWindow;
use snowmint_host::ClockFault;

mod args;
mod client;
mod clock;
mod datetime;
mod decoding;
mod errors;
mod fork;
mod generator;
mod layout;
mod opaque;
mod range;
mod sequencer;
mod window;

use args::*;
use clock::*;
use datetime::*;
use decoding::*;
use errors::*;
use fork::*;
use generator::*;
use layout::*;
use sequencer::*;

// ---------------------------------------------------------------------------------------------------
// Module
// ---------------------------------------------------------------------------------------------------

#[pymodule(gil_used = false)]
fn _snowmint(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyLayout>()?;
    m.add_class::<PyGenerator>()?;
    add_next_id_method(py)?;
    m.add_class::<PyDecoded>()?;
    m.add_class::<opaque::PyOpaque>()?;
    m.add_class::<PyLease>()?;
    m.add_class::<PySequencer>()?;
    m.add_class::<range::PyRangeSequence>()?;
    m.add_class::<client::IdBuffer>()?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(_layout_restore, m)?)?;
    // One source for the version: the crate's (Cargo.toml), which maturin also writes into the
    // wheel's metadata.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(compose, m)?)?;
    m.add_function(wrap_pyfunction!(min_id_at, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    let after_fork = wrap_pyfunction!(_after_fork_in_child, m)?;
    m.add_function(after_fork.clone())?;

    let base = py.get_type::<SnowmintError>();
    base.setattr("code", py.None())?;
    // The input to blame, when an ID service's error names one (snowmint.Client).
    base.setattr("field", py.None())?;
    m.add("SnowmintError", base)?;
    register_exceptions(py, m)?;
    py.get_type::<TooFarAheadError>()
        .setattr("retry_after_ms", 0)?;
    py.get_type::<ParseError>().setattr("position", 0)?;

    m.add("PRESET_NAMES", sm::PRESET_NAMES.to_vec())?;
    m.add(
        "ENCODINGS",
        sm::ENCODINGS.iter().map(|e| e.name()).collect::<Vec<_>>(),
    )?;
    m.add(
        "ERROR_CODES",
        ErrorCode::ALL
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>(),
    )?;

    // Whether generators may hold their own windows: an interpreter with a GIL.
    window::note_interpreter(py)?;
    // The fork rule: count forks in the child; generators compare the count on every mint.
    #[cfg(unix)]
    snowmint_host::fork::count(); // registers the pthread_atfork handler
    let os = py.import("os")?;
    if os.hasattr("register_at_fork")? {
        let kw = PyDict::new(py);
        kw.set_item("after_in_child", after_fork)?;
        os.getattr("register_at_fork")?.call((), Some(&kw))?;
    }
    Ok(())
}
