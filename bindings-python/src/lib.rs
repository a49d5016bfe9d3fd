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

mod client;
mod opaque;
mod range;
mod window;

// ---------------------------------------------------------------------------------------------------
// Exceptions: one class per stable code, all under SnowmintError(ValueError).
// ---------------------------------------------------------------------------------------------------

pyo3::create_exception!(
    snowmint,
    SnowmintError,
    PyValueError,
    "Base class of every snowmint error; `.code` is the stable, language-neutral error code."
);

/// One table of the exception classes: each stable code (core `ErrorCode`), its class under
/// `SnowmintError` and its docstring. The classes, the code → class map ([`error_type`]) and the module's
/// registration ([`register_exceptions`]) are all generated from it, so they cannot disagree; the
/// package's `__init__.py`, `__all__` and `.pyi` are checked against the module by tests/test_api.py.
macro_rules! exceptions {
    ($($class:ident => $code:ident, $doc:literal;)*) => {
        $(pyo3::create_exception!(snowmint, $class, SnowmintError, $doc);)*

        /// The exception class for a code (C-only codes fall back to the base class).
        fn error_type(py: Python<'_>, code: ErrorCode) -> Bound<'_, PyType> {
            match code {
                $(ErrorCode::$code => py.get_type::<$class>(),)*
                _ => py.get_type::<SnowmintError>(),
            }
        }

        /// Adds every class to the module, each with its `.code`, and their names as `_EXCEPTIONS`
        /// (the package's `__init__.py` re-exports exactly those).
        fn register_exceptions(py: Python<'_>, m: &Bound<'_, PyModule>) -> PyResult<()> {
            $({
                let t = py.get_type::<$class>();
                t.setattr("code", ErrorCode::$code.as_str())?;
                m.add(stringify!($class), t)?;
            })*
            m.add("_EXCEPTIONS", PyTuple::new(py, [$(stringify!($class)),*])?)?;
            Ok(())
        }
    };
}

exceptions! {
    InvalidLayoutError => InvalidLayout, "INVALID_LAYOUT: a layout field is out of range (the message names it).";
    NodeIdOutOfRangeError => NodeIdOutOfRange, "NODE_ID_OUT_OF_RANGE: the node ID does not fit the layout's node field.";
    ClockMovedBackwardsError => ClockMovedBackwards, "CLOCK_MOVED_BACKWARDS: the clock stepped back under the strict policy.";
    ClockBeforeEpochError => ClockBeforeEpoch, "CLOCK_BEFORE_EPOCH: the clock reads a time before the layout's epoch.";
    TooFarAheadError => TooFarAhead, "TOO_FAR_AHEAD: logical time would run more than max_ahead ahead of the clock; `.retry_after_ms` says when a retry succeeds.";
    LayoutExhaustedError => LayoutExhausted, "LAYOUT_EXHAUSTED: the layout's timestamp field has run out.";
    ParseError => Parse, "PARSE: a malformed ID string; `.position` is the 0-based position of the problem.";
    LeaseLostError => LeaseLost, "LEASE_LOST: the node-ID lease was lost.";
    InvalidClockError => InvalidClock, "INVALID_CLOCK: a clock reading is not a finite, non-negative whole number in range.";
    InvalidIdError => InvalidId, "INVALID_ID: an ID does not fit the layout (or is not a 64-bit unsigned integer).";
    InvalidArgumentError => InvalidArgument, "INVALID_ARGUMENT: an argument is out of range.";
    ForkedError => Forked, "FORKED: a generator created before os.fork() was used in the child.";
    NodeIdsExhaustedError => NodeIdsExhausted, "NODE_IDS_EXHAUSTED: every node ID of the sequencer is held by another live holder.";
    SequencerConflictError => SequencerConflict, "SEQUENCER_CONFLICT: a sequencer of this name exists with another configuration.";
    SequencerDestroyedError => SequencerDestroyed, "SEQUENCER_DESTROYED: the sequencer was destroyed; its handles never mint again.";
    StoreUnavailableError => StoreUnavailable, "STORE_UNAVAILABLE: the coordination store cannot be reached, refused the request or holds unreadable data.";
    StateFileMismatchError => StateFileMismatch, "STATE_FILE_MISMATCH: the state file belongs to another layout or node ID, is not a state file (truncated, foreign, damaged), was unlinked or replaced while in use, or cannot be opened (the message says which).";
    RangeExhaustedError => RangeExhausted, "RANGE_EXHAUSTED: the range sequence has handed out every value of its width.";
    SequencerNotFoundError => SequencerNotFound, "SEQUENCER_NOT_FOUND: no sequencer of this name exists in the store (only `default` is created implicitly); the message names the sequencers that exist and the nearest name.";
    StoreNotFoundError => StoreNotFound, "STORE_NOT_FOUND: the store does not exist (an embedded store's directory is missing: a mistyped path, or a store deleted); opening never creates a store, Sequencer.create does.";
    ServiceUnavailableError => ServiceUnavailable, "SERVICE_UNAVAILABLE: the ID service cannot be reached, did not answer within the client's bound, or answered with something that is not its protocol.";
}

/// An exception of the class for `code` with `message`, carrying `.code` (and any extra attributes).
fn raise(py: Python<'_>, code: ErrorCode, message: String, extra: &[(&str, u64)]) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let value = error_type(py, code).call1((message.clone(),))?;
        value.setattr("code", code.as_str())?;
        for (k, v) in extra {
            value.setattr(*k, *v)?;
        }
        Ok(PyErr::from_value(value))
    };
    make().unwrap_or_else(|e| e)
}

/// Maps a core error to its Python exception.
fn err(py: Python<'_>, e: sm::Error) -> PyErr {
    let mut extra: Vec<(&str, u64)> = Vec::new();
    if let Some(ms) = e.retry_after_ms() {
        extra.push(("retry_after_ms", ms));
    }
    match e {
        sm::Error::Parse { position, .. } => extra.push(("position", position as u64)),
        sm::Error::AmbiguousId { .. } => extra.push(("position", 0)),
        _ => {}
    }
    let message = match e {
        // The core's message shows the Rust call; say it in Python.
        sm::Error::PresetNeedsParameters { preset } => format!(
            "invalid layout: the {preset} preset needs an epoch and a node count: pass \
             layout=snowmint.Layout.snowcast(epoch_ms=..., node_count=...) (epoch: Unix ms; \
             node_count: 128..8192)"
        ),
        e => e.to_string(),
    };
    raise(py, e.code(), message, &extra)
}

/// A `state_file=` value: a path (`str` or `os.PathLike`).
fn state_file_path(p: &Bound<'_, PyAny>) -> PyResult<std::path::PathBuf> {
    p.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "state_file must be a path (str or os.PathLike), not {}",
            p.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

/// Maps a coordination error to its Python exception.
fn coord_err(py: Python<'_>, e: coord::Error) -> PyErr {
    raise(py, e.code(), e.message().to_string(), &[])
}

trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for sm::Result<T> {
    #[inline]
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| err(py, e))
    }
}

// ---------------------------------------------------------------------------------------------------
// Argument conversion: Python int -> u64 that never wraps.
// ---------------------------------------------------------------------------------------------------

/// A non-negative integer that fits 64 bits. `bool` and non-integers are `TypeError`; an int out of
/// range (negative, ≥ 2**64) raises `code` with a message naming the argument.
fn u64_arg(obj: &Bound<'_, PyAny>, name: &str, code: ErrorCode) -> PyResult<u64> {
    let py = obj.py();
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int, not bool"
        )));
    }
    if !obj.is_instance_of::<PyInt>() && !obj.hasattr("__index__")? {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int, not {}",
            obj.get_type().name()?
        )));
    }
    match obj.extract::<u64>() {
        Ok(v) => Ok(v),
        Err(e) if e.is_instance_of::<PyOverflowError>(py) => Err(raise(
            py,
            code,
            format!(
                "{name} is {obj}, allowed 0..=18446744073709551615 (a 64-bit unsigned integer)"
            ),
            &[],
        )),
        Err(e) => Err(e),
    }
}

fn bool_arg(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<bool> {
    match obj {
        None => Ok(false),
        Some(b) => Ok(b
            .cast::<PyBool>()
            .map_err(|_| PyTypeError::new_err(format!("{name} must be a bool")))?
            .is_true()),
    }
}

fn str_arg<'a>(obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<&'a Bound<'a, PyString>> {
    obj.cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be a str")))
}

// ---------------------------------------------------------------------------------------------------
// datetime helpers (the limited API has no datetime C API: go through the Python module).
// ---------------------------------------------------------------------------------------------------

static UNIX_EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TIMEDELTA: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ZERO_ARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn unix_epoch(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    UNIX_EPOCH
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            let dt = py.import("datetime")?;
            let utc = dt.getattr("timezone")?.getattr("utc")?;
            let kw = PyDict::new(py);
            kw.set_item("tzinfo", utc)?;
            Ok(dt
                .getattr("datetime")?
                .call((1970, 1, 1), Some(&kw))?
                .unbind())
        })
        .map(|o| o.bind(py))
}

fn timedelta(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    TIMEDELTA
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(py.import("datetime")?.getattr("timedelta")?.unbind())
        })
        .map(|o| o.bind(py))
}

/// A UTC `datetime` for a Unix instant (microsecond precision: what `datetime` holds).
fn utc_datetime<'py>(
    py: Python<'py>,
    unix_ms: u64,
    sub_ms_ns: u32,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let micros = unix_ms as u128 * 1000 + (sub_ms_ns / 1000) as u128;
    let datetime = || unix_epoch(py)?.add(timedelta(py)?.call1((0, 0, micros))?);
    datetime().map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(py) {
            PyOverflowError::new_err(format!(
                "{what} (Unix {unix_ms} ms) is past datetime's year 9999; use the _ms or iso form"
            ))
        } else {
            e
        }
    })
}

/// Unix nanoseconds of an aware `datetime` (exact to the microsecond). Naive datetimes are refused.
fn datetime_to_ns(py: Python<'_>, dt: &Bound<'_, PyAny>) -> PyResult<u64> {
    if dt.call_method0("utcoffset")?.is_none() {
        return Err(raise(
            py,
            ErrorCode::InvalidArgument,
            "naive datetime: give a timezone-aware datetime (e.g. tzinfo=datetime.timezone.utc)"
                .into(),
            &[],
        ));
    }
    let one_us = timedelta(py)?.call1((0, 0, 1))?;
    let micros = dt.sub(unix_epoch(py)?)?.floor_div(one_us)?;
    let micros: i128 = micros.extract()?;
    if micros < 0 {
        return Err(raise(
            py,
            ErrorCode::ClockBeforeEpoch,
            format!("{dt} is before the Unix epoch, before the layout's epoch"),
            &[],
        ));
    }
    // Every datetime (year ≤ 9999) fits in u64 nanoseconds? No: past year 2554 it does not.
    u64::try_from(micros * 1000).map_err(|_| {
        raise(
            py,
            ErrorCode::InvalidClock,
            format!("{dt} is out of range (after year 2554)"),
            &[],
        )
    })
}

// ---------------------------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------------------------

/// An ID layout: field widths, order, tick and epoch (see `Layout.preset`).
#[pyclass(frozen, eq, hash, module = "snowmint", name = "Layout")]
#[derive(Clone, PartialEq, Eq, Hash)]
struct PyLayout {
    inner: sm::Layout,
}

/// A layout argument: a preset name or a `Layout`.
fn layout_arg(obj: &Bound<'_, PyAny>) -> PyResult<sm::Layout> {
    if let Ok(l) = obj.cast::<PyLayout>() {
        return Ok(l.get().inner);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return sm::Layout::preset(&s.to_cow()?).or_raise(obj.py());
    }
    Err(PyTypeError::new_err(format!(
        "layout must be a preset name (str) or a snowmint.Layout, not {}",
        obj.get_type().name()?
    )))
}

fn layout_u64(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    u64_arg(obj, field, ErrorCode::InvalidLayout)
}

fn layout_bits(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u32> {
    let v = layout_u64(obj, field)?;
    // Anything ≥ 2**32 is far out of range: clamp so the core rejects it by name.
    Ok(u32::try_from(v).unwrap_or(u32::MAX))
}

#[pymethods]
impl PyLayout {
    #[new]
    #[pyo3(
        signature = (*, timestamp_bits, node_bits, sequence_bits, order = None, tick_ns = None, epoch_ms, node_id_offset = None, use_sign_bit = None),
        text_signature = "(*, timestamp_bits, node_bits, sequence_bits, order='timestamp_node_sequence', tick_ns=1000000, epoch_ms, node_id_offset=0, use_sign_bit=False)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        timestamp_bits: &Bound<'_, PyAny>,
        node_bits: &Bound<'_, PyAny>,
        sequence_bits: &Bound<'_, PyAny>,
        order: Option<&Bound<'_, PyAny>>,
        tick_ns: Option<&Bound<'_, PyAny>>,
        epoch_ms: &Bound<'_, PyAny>,
        node_id_offset: Option<&Bound<'_, PyAny>>,
        use_sign_bit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        // The defaults of every binding (snowmint_host::LayoutFields).
        let cfg = snowmint_host::LayoutFields {
            timestamp_bits: layout_bits(timestamp_bits, "timestamp_bits")?,
            node_bits: layout_bits(node_bits, "node_bits")?,
            sequence_bits: layout_bits(sequence_bits, "sequence_bits")?,
            epoch_ms: layout_u64(epoch_ms, "epoch_ms")?,
            order: order
                .map(|o| sm::Order::from_name(&str_arg(o, "order")?.to_cow()?).or_raise(py))
                .transpose()?,
            tick_ns: tick_ns.map(|t| layout_u64(t, "tick_ns")).transpose()?,
            node_id_offset: node_id_offset
                .map(|o| layout_u64(o, "node_id_offset"))
                .transpose()?,
            use_sign_bit: use_sign_bit
                .map(|b| bool_arg(Some(b), "use_sign_bit"))
                .transpose()?,
        }
        .config();
        Ok(PyLayout {
            inner: sm::Layout::new(cfg).or_raise(py)?,
        })
    }

    /// A preset: twitter, discord, instagram, sonyflake, hazelcast, js53, decimal.
    #[staticmethod]
    fn preset(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Self> {
        let name = str_arg(name, "name")?.to_cow()?;
        Ok(PyLayout {
            inner: sm::Layout::preset(&name).or_raise(py)?,
        })
    }

    /// snowcast's layout for `node_count` nodes (128..=8192, rounded up to a power of two).
    #[staticmethod]
    fn snowcast(
        py: Python<'_>,
        epoch_ms: &Bound<'_, PyAny>,
        node_count: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let epoch_ms = layout_u64(epoch_ms, "epoch_ms")?;
        let node_count = layout_u64(node_count, "node_count")?;
        Ok(PyLayout {
            inner: sm::Layout::snowcast(epoch_ms, node_count).or_raise(py)?,
        })
    }

    /// Hazelcast's layout with `node_id_offset` added to every node ID.
    #[staticmethod]
    #[pyo3(signature = (node_id_offset = None), text_signature = "(node_id_offset=0)")]
    fn hazelcast(py: Python<'_>, node_id_offset: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let offset = match node_id_offset {
            None => 0,
            Some(o) => layout_u64(o, "node_id_offset")?,
        };
        Ok(PyLayout {
            inner: sm::Layout::hazelcast(offset).or_raise(py)?,
        })
    }

    /// Chronicle-style decimal IDs (host ID 0..=99, 100 ns resolution).
    #[staticmethod]
    fn decimal() -> Self {
        PyLayout {
            inner: sm::Layout::decimal(),
        }
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.inner.preset_name().unwrap_or("custom")
    }
    #[getter]
    fn family(&self) -> &'static str {
        match self.inner.family() {
            sm::Family::Binary => "binary",
            sm::Family::Decimal => "decimal",
        }
    }
    #[getter]
    fn timestamp_bits(&self) -> u32 {
        self.inner.timestamp_bits()
    }
    #[getter]
    fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    #[getter]
    fn sequence_bits(&self) -> u32 {
        self.inner.sequence_bits()
    }
    #[getter]
    fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }
    #[getter]
    fn order(&self) -> &'static str {
        self.inner.order().name()
    }
    #[getter]
    fn tick_ns(&self) -> u64 {
        self.inner.tick_ns()
    }
    #[getter]
    fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }
    #[getter]
    fn node_id_offset(&self) -> u64 {
        self.inner.node_id_offset()
    }
    #[getter]
    fn use_sign_bit(&self) -> bool {
        self.inner.config().use_sign_bit
    }
    #[getter]
    fn node_count(&self) -> u64 {
        self.inner.node_count()
    }
    #[getter]
    fn ids_per_tick(&self) -> u64 {
        self.inner.ids_per_tick()
    }
    #[getter]
    fn max_node_id(&self) -> u64 {
        self.inner.max_node_id()
    }
    #[getter]
    fn max_tick(&self) -> u64 {
        self.inner.max_tick()
    }
    #[getter]
    fn lifespan_end_ms(&self) -> u64 {
        self.inner.lifespan_end_ms()
    }
    #[getter]
    fn lifespan_end_iso(&self) -> String {
        self.inner.lifespan_end().to_buf().as_str().to_owned()
    }
    /// The lifespan end as an aware UTC datetime (OverflowError past year 9999).
    #[getter]
    fn lifespan_end<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        utc_datetime(py, self.inner.lifespan_end_ms(), 0, "lifespan_end")
    }
    #[getter]
    fn clock_unit(&self) -> &'static str {
        self.inner.clock_unit().name()
    }

    /// Converts a reading of an injected clock (an int or float in `clock_unit`) into Unix nanoseconds,
    /// validating it exactly as a generator does (InvalidClockError for NaN, infinities, negatives,
    /// fractions, floats above 2**53 - 1 and values out of range).
    fn reading_to_ns(&self, py: Python<'_>, reading: &Bound<'_, PyAny>) -> PyResult<u64> {
        reading_ns(py, reading, self.inner.clock_reader()).map_err(|e| match e {
            ReadError::Py(e) => e,
            ReadError::Core(e) => err(py, e),
        })
    }

    /// Pickling: the layout is rebuilt by `_layout_restore` from its preset name and configuration
    /// (equal to this one, or the unpickling fails).
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let l = &self.inner;
        let c = l.config();
        let restore = py
            .import("snowmint._snowmint")?
            .getattr("_layout_restore")?;
        let args = (
            l.preset_name(),
            c.timestamp_bits,
            c.node_bits,
            c.sequence_bits,
            c.order.name(),
            c.tick_ns,
            c.epoch_ms,
            c.node_id_offset,
            c.use_sign_bit,
            c.node_split_bits,
        )
            .into_pyobject(py)?;
        Ok((restore, args))
    }

    fn __repr__(&self) -> String {
        let l = &self.inner;
        match (l.preset_name(), l.family()) {
            (_, sm::Family::Decimal) => "Layout.decimal()".to_owned(),
            (Some("hazelcast"), _) => format!("Layout.hazelcast({})", l.node_id_offset()),
            (Some("snowcast"), _) => format!("Layout.snowcast({}, {})", l.epoch_ms(), l.node_count()),
            (Some(name), _) => format!("Layout.preset({name:?})"),
            (None, _) => format!(
                "Layout(timestamp_bits={}, node_bits={}, sequence_bits={}, order={:?}, tick_ns={}, epoch_ms={}, node_id_offset={}, use_sign_bit={})",
                l.timestamp_bits(),
                l.node_bits(),
                l.sequence_bits(),
                l.order().name(),
                l.tick_ns(),
                l.epoch_ms(),
                l.node_id_offset(),
                if l.config().use_sign_bit { "True" } else { "False" }
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Clocks
// ---------------------------------------------------------------------------------------------------

enum ReadError {
    /// The callable raised, or returned something that is not a number (TypeError).
    Py(PyErr),
    /// A number that is not a valid reading.
    Core(sm::Error),
}

/// Validates one clock reading (int or float, in `unit`) and converts it to Unix nanoseconds.
fn reading_ns(
    py: Python<'_>,
    v: &Bound<'_, PyAny>,
    unit: sm::ClockReader,
) -> Result<u64, ReadError> {
    if v.is_instance_of::<PyBool>() {
        return Err(ReadError::Py(PyTypeError::new_err(
            "the clock must return an int or a float, not bool",
        )));
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return unit.f64_to_ns(f.value()).map_err(ReadError::Core);
    }
    if v.is_instance_of::<PyInt>() {
        return match v.extract::<u64>() {
            Ok(r) => unit.to_ns(r).map_err(ReadError::Core),
            Err(e) if e.is_instance_of::<PyOverflowError>(py) => {
                let negative = v.lt(0).unwrap_or(false);
                Err(ReadError::Core(sm::Error::InvalidClock {
                    reason: if negative {
                        "negative"
                    } else {
                        "reading out of range (does not fit 64 bits)"
                    },
                }))
            }
            Err(e) => Err(ReadError::Py(e)),
        };
    }
    let tname = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    Err(ReadError::Py(PyTypeError::new_err(format!(
        "the clock must return an int or a float (Unix {} ), not {tname}",
        if unit.unit() == ClockUnit::Nanos {
            "nanoseconds"
        } else {
            "milliseconds"
        }
    ))))
}

/// Sleeps with the GIL released (other Python threads keep running).
#[inline]
fn sleep_detached(py: Python<'_>, ns: u64) {
    py.detach(|| sm::sleep_ns(ns));
}

// ---------------------------------------------------------------------------------------------------
// Fork detection
// ---------------------------------------------------------------------------------------------------

/// Counts a fork in the child: `os.register_at_fork(after_in_child=...)` calls it. Forks that bypass
/// Python's `os.fork` (a C extension calling `fork()`) are counted by the host layer's `pthread_atfork`
/// handler, registered by `snowmint_host::fork::count`.
#[pyfunction]
fn _after_fork_in_child() {
    snowmint_host::fork::note_child();
}

// ---------------------------------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------------------------------

/// A thread-safe, lock-free ID generator (see the package docs).
#[pyclass(frozen, module = "snowmint", name = "Generator")]
struct PyGenerator {
    kind: Kind,
    policy: sm::Policy,
    clock: Option<Py<PyAny>>,
    unit: sm::ClockReader,
    forks: u64,
    max_ahead_ms: u64,
    random_start: bool,
    /// Whether the object holds its own window ([`window`]): the system clock, on an interpreter with
    /// a GIL. The window is of the fixed node ID's generator, or of the lease held.
    own: bool,
    plain_window: OwnWindow<sm::SharedGenerator<SharedState>>,
    lease_window: OwnWindow<coord::lease::CeiledGenerator>,
}

/// A fixed node ID, or a node ID held under a lease (every lease decision is the coord crate's).
// The in-memory generator stays inline: it is the hot path, and one indirection costs more than the size.
#[allow(clippy::large_enum_variant)]
enum Kind {
    /// State in this process's memory, or in a state file shared by processes.
    Plain(sm::SharedGenerator<SharedState>),
    Leased(Box<coord::SequencerGenerator>),
}

impl PyGenerator {
    /// Mints one ID: the full path of `Generator.next_id` (see [`next_id_method`], which takes it
    /// whenever its fast path does not answer).
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        self.check_fork(py)?;
        let own = self.owns_window();
        let inner = match &self.kind {
            Kind::Plain(g) => g,
            Kind::Leased(g) => return self.leased_next_id(py, g, own),
        };
        match &self.clock {
            None => self.plain_next_id(py, inner, own).or_raise(py),
            Some(c) => self.with_py_clock(py, c, |clock, sleep| inner.next_id_with(clock, sleep)),
        }
    }

    /// `next_id` as a new int, or null with the exception set. The fast path: a fixed node ID or a
    /// lease, on the system clock, in the process that made the generator (the fork check passed).
    /// Anything else takes the full path ([`next_id_full`]); an error from a fixed node ID is raised
    /// as the full path raises it; a lease's failed attempt mints nothing, and the full path decides
    /// (waits for the keeper, `LEASE_LOST`, …). Only the int's pointer leaves here: the core's
    /// result (as large as its error) stays in place.
    #[inline(always)]
    fn next_id_object(&self, py: Python<'_>) -> *mut pyo3::ffi::PyObject {
        if snowmint_host::fork::forked_since(self.forks) || self.clock.is_some() {
            return next_id_full(self, None);
        }
        let id = match &self.kind {
            // SAFETY: attached (the GIL held: `own` says the interpreter has one), in the process
            // that made the generator (checked above), and `g` is the object's for its whole life.
            Kind::Plain(g) if self.own => match unsafe { self.plain_window.try_mint(g) } {
                Some(Ok(id)) => id,
                first => return self.plain_rest(py, g, first),
            },
            Kind::Plain(g) => return self.plain_rest(py, g, None),
            Kind::Leased(g) => match self.lease_attempt(py, g, self.own) {
                Some(id) => id,
                None => return next_id_full(self, None),
            },
        };
        // SAFETY: the thread is attached; a null result is MemoryError, set by CPython.
        unsafe { pyo3::ffi::PyLong_FromUnsignedLongLong(id) }
    }

    /// The rest of [`next_id_object`](Self::next_id_object) for a fixed node ID, out of the way of
    /// its fast path (whose result stays small): `first` is the in-place attempt's answer, if any.
    #[inline(never)]
    fn plain_rest(
        &self,
        py: Python<'_>,
        g: &sm::SharedGenerator<SharedState>,
        first: Option<sm::Result<u64>>,
    ) -> *mut pyo3::ffi::PyObject {
        let minted = match first {
            Some(r) => r,
            // SAFETY: as in `next_id_object` (`own`: the in-place attempt came first).
            None if self.own => unsafe { self.plain_window.mint(g, |ns| sleep_detached(py, ns)) },
            None => thread_window_next_id(py, g),
        };
        match minted {
            // SAFETY: the thread is attached; a null result is MemoryError, set by CPython.
            Ok(id) => unsafe { pyo3::ffi::PyLong_FromUnsignedLongLong(id) },
            Err(e) => next_id_full(self, Some(Ok(e))),
        }
    }

    /// One ID of the fixed node ID's generator from the system clock: out of the object's own window
    /// (`own`: it holds one, in the process that made it) or the thread's.
    #[inline(always)]
    fn plain_next_id(
        &self,
        py: Python<'_>,
        g: &sm::SharedGenerator<SharedState>,
        own: bool,
    ) -> sm::Result<u64> {
        if !own {
            return thread_window_next_id(py, g);
        }
        // SAFETY: attached (the GIL held: `own` says the interpreter has one), in the process that
        // made the generator (`own`), and `g` is the object's for its whole life.
        unsafe { self.plain_window.next_id(g, |ns| sleep_detached(py, ns)) }
    }

    /// One lock-free attempt on the current lease's generator, from the system clock, out of the
    /// object's own window (`own`) or the thread's. A failed attempt mints nothing: `None` leaves the
    /// decision to the coord crate's full path ([`leased_next_id`](Self::leased_next_id)).
    #[inline(always)]
    fn lease_attempt(
        &self,
        py: Python<'_>,
        g: &coord::SequencerGenerator,
        own: bool,
    ) -> Option<u64> {
        let g = g.current()?.generator();
        if !own {
            return thread_window_next_id(py, g).ok();
        }
        // SAFETY: as in `plain_next_id`; every lease a source held lives as long as the source.
        unsafe { self.lease_window.next_id(g, |ns| sleep_detached(py, ns)) }.ok()
    }

    /// Mints under a lease: one lock-free attempt ([`lease_attempt`](Self::lease_attempt)); any error
    /// goes to the coord crate's full path (waits for the keeper at the reservation, LEASE_LOST,
    /// SEQUENCER_DESTROYED) with the GIL released. That path mints out of the thread's window: the
    /// object's own is closed before it, and the thread's after it, so the IDs keep their order.
    fn leased_next_id(
        &self,
        py: Python<'_>,
        g: &coord::SequencerGenerator,
        own: bool,
    ) -> PyResult<u64> {
        if let Some(id) = self.lease_attempt(py, g, own) {
            return Ok(id);
        }
        if own {
            self.close_own();
        }
        let minted = py.detach(|| g.next_id());
        if own {
            if let Some(l) = g.current() {
                l.generator().close_thread_window();
            }
        }
        minted.map_err(|e| coord_err(py, e))
    }

    /// Whether this call may use the object's own window: it holds one, in the process that made it.
    #[inline(always)]
    fn owns_window(&self) -> bool {
        self.own && !snowmint_host::fork::forked_since(self.forks)
    }

    /// Closes the object's own window before the generator is asked for anything else; in a forked
    /// child, drops it ([`window`]). The caller is attached.
    fn close_own(&self) {
        if !self.own {
            return;
        }
        // SAFETY: attached, on an interpreter with a GIL (`own`); the generators outlive the windows.
        unsafe {
            if snowmint_host::fork::forked_since(self.forks) {
                self.plain_window.abandon();
                self.lease_window.abandon();
            } else {
                self.plain_window.close();
                self.lease_window.close();
            }
        }
    }

    #[inline(always)]
    fn check_fork(&self, py: Python<'_>) -> PyResult<()> {
        // A state file is shared with the parent by construction (MAP_SHARED): safe in the child. A
        // generator opened from a lease source opens a lease of its own in the child, on first use.
        if snowmint_host::fork::forked_since(self.forks)
            && self.file().is_none()
            && !self.reopens_in_child()
        {
            return Err(err(py, sm::Error::Forked));
        }
        Ok(())
    }

    /// A generator opened from a lease source: a forked child opens its own lease (coord crate).
    #[cold]
    fn reopens_in_child(&self) -> bool {
        matches!(&self.kind, Kind::Leased(g) if g.reopens_in_child())
    }

    /// Runs a core host loop with the injected Python clock, passing the callable's own exceptions
    /// through unchanged.
    fn with_py_clock<T>(
        &self,
        py: Python<'_>,
        clock: &Py<PyAny>,
        run: impl FnOnce(&dyn Clock, &mut dyn FnMut(u64)) -> sm::Result<T>,
    ) -> PyResult<T> {
        let unit = self.unit;
        // The host layer's clock adapter: the callable's own exception (or the TypeError for a reading of
        // the wrong type) reaches the caller unchanged; a refused reading is the core's error.
        let read = || -> Result<u64, ClockFault<PyErr>> {
            let v = clock.bind(py).call0().map_err(ClockFault::Host)?;
            reading_ns(py, &v, unit).map_err(|e| match e {
                ReadError::Core(e) => ClockFault::Core(e),
                ReadError::Py(e) => ClockFault::Host(e),
            })
        };
        let mut sleep = |ns| sleep_detached(py, ns);
        snowmint_host::with_host_clock(read, |c| run(c, &mut sleep)).map_err(|f| match f {
            ClockFault::Host(e) => e,
            ClockFault::Core(e) | ClockFault::WrongType(e) => err(py, e),
        })
    }

    /// The state file this generator's state lives in, if any.
    fn file(&self) -> Option<&StateFile> {
        match &self.kind {
            Kind::Plain(g) => g.state_holder().state_file(),
            Kind::Leased(_) => None,
        }
    }

    fn plain_or_raise(&self, py: Python<'_>) -> PyResult<&sm::SharedGenerator<SharedState>> {
        match &self.kind {
            Kind::Plain(g) => Ok(g),
            Kind::Leased(_) => Err(raise(
                py,
                ErrorCode::InvalidArgument,
                "a generator under a lease source has no high-water mark to persist: its lease \
                 store keeps its state"
                    .into(),
                &[],
            )),
        }
    }

    fn file_or_raise(&self, py: Python<'_>) -> PyResult<&StateFile> {
        self.file().ok_or_else(|| {
            raise(
                py,
                ErrorCode::InvalidArgument,
                "this generator has no state file (pass state_file=...)".into(),
                &[],
            )
        })
    }

    fn fill(&self, py: Python<'_>, out: &mut [u64]) -> PyResult<()> {
        self.check_fork(py)?;
        self.close_own();
        let inner = match &self.kind {
            Kind::Plain(g) => g,
            Kind::Leased(g) => return py.detach(|| g.next_ids(out)).map_err(|e| coord_err(py, e)),
        };
        match &self.clock {
            None => inner
                .next_ids_with(&sm::FastClock, |ns| sleep_detached(py, ns), out)
                .or_raise(py),
            Some(c) => {
                self.with_py_clock(py, c, |clock, sleep| inner.next_ids_with(clock, sleep, out))
            }
        }
    }
}

/// The object's own window closes before its generator goes (a lease source's release then records
/// exactly the IDs handed out). pyo3 drops the object with the thread attached.
impl Drop for PyGenerator {
    fn drop(&mut self) {
        self.close_own();
    }
}

impl PyGenerator {
    fn leased(
        g: Box<coord::SequencerGenerator>,
        policy: sm::Policy,
        max_ahead_ms: u64,
        random_start: bool,
    ) -> PyGenerator {
        PyGenerator {
            unit: g.layout().clock_reader(),
            kind: Kind::Leased(g),
            policy,
            clock: None,
            forks: snowmint_host::fork::count(),
            max_ahead_ms,
            random_start,
            own: window::gil_guards_windows(),
            plain_window: OwnWindow::new(),
            lease_window: OwnWindow::new(),
        }
    }

    fn layout_ref(&self) -> &sm::Layout {
        match &self.kind {
            Kind::Plain(g) => g.layout(),
            Kind::Leased(g) => g.layout(),
        }
    }
}

/// `Generator.next_id()`: a C method of its own (`METH_NOARGS`, put on the class by the module's init,
/// [`add_next_id_method`]) rather than one of pyo3's, whose call wrapper cost 6–7 ns of a 52.5 ns
/// call: its thread-local GIL count (a call to `__tls_get_addr` in a shared library) raised and
/// lowered, the check of deferred reference counts, the check of `self`'s type (the method descriptor
/// made it already) and the core's whole result carried through its panic boundary. Here the fast path
/// ([`PyGenerator::next_id_object`]) mints and returns the int, and only a pointer crosses the panic
/// boundary; anything else — an error, a panic, a fork, a Python clock, a lease's full path — goes to
/// [`next_id_full`], which runs attached as pyo3 counts it, so every exception is the one the full
/// path has always raised.
unsafe extern "C" fn next_id_method(
    slf: *mut pyo3::ffi::PyObject,
    _args: *mut pyo3::ffi::PyObject,
) -> *mut pyo3::ffi::PyObject {
    // SAFETY: CPython calls a method with the thread attached; the method descriptor let only
    // instances of the class (frozen: `get` needs no borrow) through as `slf`.
    let py = unsafe { Python::assume_attached() };
    let g = unsafe { Bound::ref_from_ptr(py, &slf).cast_unchecked::<PyGenerator>() }.get();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| g.next_id_object(py))) {
        Ok(id) => id,
        Err(payload) => next_id_full(g, Some(Err(payload))),
    }
}

/// The full path of [`next_id_method`]: raises `first` if given (the fast path's error, or its panic
/// as pyo3's `PanicException`, as in pyo3's methods), else mints through [`PyGenerator::next_id`].
#[cold]
#[inline(never)]
fn next_id_full(
    g: &PyGenerator,
    first: Option<Result<sm::Error, Box<dyn std::any::Any + Send>>>,
) -> *mut pyo3::ffi::PyObject {
    Python::attach(|py| {
        let minted = match first {
            Some(Ok(e)) => Err(err(py, e)),
            Some(Err(payload)) => Err(panic_err(payload)),
            None => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| g.next_id(py)))
                .unwrap_or_else(|payload| Err(panic_err(payload))),
        };
        match minted.and_then(|id| Ok(id.into_pyobject(py)?.into_any())) {
            Ok(id) => id.into_ptr(),
            Err(e) => {
                e.restore(py);
                std::ptr::null_mut()
            }
        }
    })
}

/// A panic's payload as pyo3's `PanicException`, with the message pyo3's methods give it.
fn panic_err(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("panic from Rust code")
        .to_string();
    pyo3::panic::PanicException::new_err((message,))
}

/// Puts [`next_id_method`] on the class as `next_id`: a method descriptor (so CPython checks `self`'s
/// type and calls it with no argument tuple), with the signature and docstring pyo3 would give it.
fn add_next_id_method(py: Python<'_>) -> PyResult<()> {
    let ty = py.get_type::<PyGenerator>();
    // The definition must outlive the class: made once per process (the module is initialised once).
    let def = Box::leak(Box::new(pyo3::ffi::PyMethodDef {
        ml_name: c"next_id".as_ptr(),
        ml_meth: pyo3::ffi::PyMethodDefPointer {
            PyCFunction: next_id_method,
        },
        ml_flags: pyo3::ffi::METH_NOARGS,
        ml_doc: c"next_id($self, /)\n--\n\nMints one ID.".as_ptr(),
    }));
    // SAFETY: the type is a live type object, `def` lives for the rest of the process; a null
    // result is an exception set by CPython.
    let descr = unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyDescr_NewMethod(ty.as_ptr().cast(), def))?
    };
    ty.setattr("next_id", descr)
}

/// One ID from the system clock out of the calling thread's window: a generator without a window of
/// its own (a free-threaded interpreter, a forked child), out of the way of the fast path.
#[inline(never)]
fn thread_window_next_id<S: sm::StateWord, L: sm::Ceiling>(
    py: Python<'_>,
    g: &sm::SharedGenerator<S, L>,
) -> sm::Result<u64> {
    g.next_id_with(&sm::FastClock, |ns| sleep_detached(py, ns))
}

fn state_name(s: coord::SequencerState) -> &'static str {
    snowmint_host::sequencer_state_name!(coord::SequencerState, s)
}

/// A node-ID lease as seen at one moment.
#[pyclass(frozen, eq, module = "snowmint", name = "Lease")]
#[derive(PartialEq)]
struct PyLease {
    #[pyo3(get)]
    node_id: u64,
    #[pyo3(get)]
    fencing_token: u64,
    #[pyo3(get)]
    expires_unix_ms: u64,
}

#[pymethods]
impl PyLease {
    /// When the claim expires unless renewed (a UTC datetime).
    #[getter]
    fn expires_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        utc_datetime(py, self.expires_unix_ms, 0, "expires_at")
    }
    fn __repr__(&self) -> String {
        format!(
            "Lease(node_id={}, fencing_token={}, expires_unix_ms={})",
            self.node_id, self.fencing_token, self.expires_unix_ms
        )
    }
}

/// A named sequencer (snowcast's lifecycle) in a store.
#[pyclass(frozen, module = "snowmint", name = "Sequencer")]
struct PySequencer {
    seq: coord::Sequencer,
    policy: sm::Policy,
}

fn store_arg(store: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(str_arg(store, "store")?.to_cow()?.into_owned())
}

#[pymethods]
impl PySequencer {
    /// Creates the sequencer `name` in `store` (or a handle on the existing one with the same
    /// configuration; another configuration raises SequencerConflictError). Blocking, GIL released.
    #[staticmethod]
    #[pyo3(
        signature = (name, *, store, layout = None, node_count = None),
        text_signature = "(name, *, store, layout='twitter', node_count=None)"
    )]
    fn create(
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        store: &Bound<'_, PyAny>,
        layout: Option<&Bound<'_, PyAny>>,
        node_count: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let name = str_arg(name, "name")?.to_cow()?.into_owned();
        let store = store_arg(store)?;
        let layout = match layout {
            None => sm::Layout::twitter(),
            Some(l) => layout_arg(l)?,
        };
        let nodes = match node_count {
            None => layout.node_count(),
            Some(n) => u64_arg(n, "node_count", ErrorCode::InvalidArgument)?,
        };
        let seq = py
            .detach(|| {
                coord::generator::create_sequencer(
                    &store,
                    &name,
                    layout,
                    nodes,
                    sm::Options::default(),
                )
            })
            .map_err(|e| coord_err(py, e))?;
        Ok(PySequencer {
            seq,
            policy: sm::Policy::Wait,
        })
    }

    /// A handle on the existing sequencer `name` in `store` (SequencerNotFoundError if there is none).
    #[staticmethod]
    #[pyo3(signature = (name, *, store))]
    fn open(py: Python<'_>, name: &Bound<'_, PyAny>, store: &Bound<'_, PyAny>) -> PyResult<Self> {
        let name = str_arg(name, "name")?.to_cow()?.into_owned();
        let store = store_arg(store)?;
        let seq = py
            .detach(|| coord::generator::open_sequencer(&store, &name, sm::Options::default()))
            .map_err(|e| coord_err(py, e))?;
        Ok(PySequencer {
            seq,
            policy: sm::Policy::Wait,
        })
    }

    /// The names of the sequencers in `store`, sorted.
    #[staticmethod]
    #[pyo3(signature = (*, store))]
    fn list(py: Python<'_>, store: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let store = store_arg(store)?;
        py.detach(|| coord::generator::list_sequencers(&store))
            .map_err(|e| coord_err(py, e))
    }

    /// Claims a node ID and returns a Generator holding it (blocking, GIL released).
    fn attach(&self, py: Python<'_>) -> PyResult<PyGenerator> {
        let g = py
            .detach(|| coord::SequencerGenerator::attach_new(self.seq.new_handle()))
            .map_err(|e| coord_err(py, e))?;
        Ok(PyGenerator::leased(Box::new(g), self.policy, 15_000, false))
    }

    /// Destroys the sequencer everywhere: every generator attached to it, in every process, stops minting
    /// and raises SequencerDestroyedError.
    fn destroy(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.seq.destroy())
            .map_err(|e| coord_err(py, e))
    }

    #[getter]
    fn name(&self) -> String {
        self.seq.record().name.clone()
    }
    #[getter]
    fn node_count(&self) -> u64 {
        self.seq.record().config.nodes
    }
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout {
            inner: *self.seq.layout(),
        }
    }
    /// "destroyed" once destroyed by any handle in any process, else "detached" (attach() returns a
    /// generator; the handle itself holds no lease).
    #[getter]
    fn state(&self, py: Python<'_>) -> &'static str {
        state_name(py.detach(|| self.seq.state()))
    }
    fn __repr__(&self) -> String {
        format!(
            "Sequencer(name={:?}, node_count={}, store={:?})",
            self.seq.record().name,
            self.seq.record().config.nodes,
            self.seq.store().describe()
        )
    }
}

/// The buffer of an `array.array('Q')` of `n` items as a mutable slice.
///
/// # Safety
/// The caller must make sure that nothing resizes or frees the array while the slice is used.
unsafe fn u64_array_slice<'a>(arr: &Bound<'_, PyAny>, n: usize) -> PyResult<&'a mut [u64]> {
    let itemsize: usize = arr.getattr("itemsize")?.extract()?;
    let info = arr.call_method0("buffer_info")?;
    let info = info.cast::<PyTuple>()?;
    let addr: usize = info.get_item(0)?.extract()?;
    let len: usize = info.get_item(1)?.extract()?;
    if itemsize != 8 || len != n || addr == 0 || !addr.is_multiple_of(std::mem::align_of::<u64>()) {
        return Err(PyRuntimeError::new_err(
            "array('Q') is not a buffer of 64-bit integers here",
        ));
    }
    Ok(std::slice::from_raw_parts_mut(addr as *mut u64, n))
}

fn batch_len(py: Python<'_>, n: &Bound<'_, PyAny>) -> PyResult<usize> {
    sm::check_batch(u64_arg(n, "n", ErrorCode::InvalidArgument)?).or_raise(py)
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(
        signature = (node_id, layout = None, *, clock = None, policy = None, max_ahead_ms = None, random_start = None, random_seed = None, state_file = None, wait_for_node_ms = None),
        text_signature = "(node_id, layout='twitter', *, clock=None, policy='wait', max_ahead_ms=15000, random_start=False, random_seed=None, state_file=None, wait_for_node_ms=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        node_id: &Bound<'_, PyAny>,
        layout: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        policy: Option<&Bound<'_, PyAny>>,
        max_ahead_ms: Option<&Bound<'_, PyAny>>,
        random_start: Option<&Bound<'_, PyAny>>,
        random_seed: Option<&Bound<'_, PyAny>>,
        state_file: Option<&Bound<'_, PyAny>>,
        wait_for_node_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let wait_for_node = wait_for_node_ms
            .filter(|v| !v.is_none())
            .map(|v| u64_arg(v, "wait_for_node_ms", ErrorCode::InvalidArgument))
            .transpose()?
            .map(std::time::Duration::from_millis);
        // No default: two processes left on one default node ID would mint the same IDs.
        // A string is a node source (SPEC §3.1), parsed and opened by the coord crate.
        let source: Option<String> = match node_id.cast::<PyString>() {
            Ok(s) => Some(s.to_cow()?.into_owned()),
            Err(_) => None,
        };
        let number = match &source {
            None => Some(u64_arg(node_id, "node_id", ErrorCode::NodeIdOutOfRange)?),
            Some(_) => None,
        };
        let layout = match layout {
            None => sm::Layout::twitter(),
            Some(l) => layout_arg(l)?,
        };
        let clock = match clock {
            None => None,
            Some(c) if c.is_none() => None,
            Some(c) if c.is_callable() => Some(c.clone().unbind()),
            Some(c) => {
                return Err(PyTypeError::new_err(format!(
                "clock must be a callable returning Unix {} (or None for the system clock), not {}",
                if layout.clock_unit() == ClockUnit::Nanos {
                    "nanoseconds"
                } else {
                    "milliseconds"
                },
                c.get_type().name()?
            )))
            }
        };
        let policy = match policy {
            None => sm::Policy::Wait,
            Some(p) => sm::Policy::from_name(&str_arg(p, "policy")?.to_cow()?).or_raise(py)?,
        };
        let max_ahead_given = max_ahead_ms
            .map(|m| u64_arg(m, "max_ahead_ms", ErrorCode::InvalidArgument))
            .transpose()?;
        let random_start = random_start
            .filter(|v| !v.is_none())
            .map(|v| bool_arg(Some(v), "random_start"))
            .transpose()?;
        let random_seed = random_seed
            .filter(|v| !v.is_none())
            .map(|s| u64_arg(s, "random_seed", ErrorCode::InvalidArgument))
            .transpose()?;
        // Defaults, the overflow check and the seed rule: the host layer's, as in every runtime.
        let options = snowmint_host::options(
            &snowmint_host::PYTHON_NAMES,
            policy,
            max_ahead_given,
            random_start,
            random_seed,
        )
        .map_err(|e| raise(py, e.code, e.message, &[]))?;
        let max_ahead_ms = options.max_ahead_ns / 1_000_000;
        let random_start = options.random_start_seed.is_some();
        let node_id = match (number, source) {
            (Some(_), _) if wait_for_node.is_some() => {
                return Err(raise(
                    py,
                    ErrorCode::InvalidArgument,
                    "wait_for_node_ms is how long a lease source waits for a node ID; node_id is a number".into(),
                    &[],
                ))
            }
            (Some(n), _) => n,
            (None, Some(source)) => {
                let lease = matches!(
                    coord::NodeSource::parse(&source),
                    Ok(coord::NodeSource::Lease(_))
                );
                if lease && clock.is_some() {
                    return Err(raise(
                        py,
                        ErrorCode::InvalidArgument,
                        format!("node source {:?}: a lease source mints on the system clock; clock= is for fixed node IDs", coord::source::redacted(&source)),
                        &[],
                    ));
                }
                // With state_file=, the lease is shared by every process of the host that opens it.
                let shared_path = match state_file {
                    Some(p) if lease && !p.is_none() => Some(state_file_path(p)?),
                    _ => None,
                };
                // Blocking claim with the GIL released (other threads run while the store answers).
                match py.detach(|| {
                    coord::SequencerGenerator::open_sharing(
                        &source,
                        layout,
                        options,
                        wait_for_node,
                        shared_path,
                    )
                }) {
                    Ok(coord::Opened::Fixed(n)) => n,
                    Ok(coord::Opened::Leased(g)) => {
                        // Boxed, so it stays where it is: given back before a fork if it never minted
                        // (a pre-fork server's master that imports the application and never mints).
                        coord::generator::prefork::register(&g);
                        return Ok(PyGenerator::leased(g, policy, max_ahead_ms, random_start));
                    }
                    Err(e) => return Err(coord_err(py, e)),
                }
            }
            (None, None) => unreachable!("either a number or a string"),
        };
        // The options first, then the path, then the state file: the host layer's rule (the file
        // opened with the GIL released).
        let path = match state_file {
            Some(p) if !p.is_none() => state_file_path(p).map(Some),
            _ => Ok(None),
        };
        let plain = py
            .detach(|| {
                snowmint_host::state_file::shared_generator(layout, node_id, options, || path)
            })
            .map_err(|e| match e {
                Refused::Options(e) => err(py, e),
                Refused::Path(e) => e,
                Refused::StateFile { path, error } => raise(
                    py,
                    error.code(),
                    Refused::<PyErr>::state_file_message(&path, &error),
                    &[],
                ),
            })?;
        let own = window::gil_guards_windows() && clock.is_none();
        Ok(PyGenerator {
            kind: Kind::Plain(plain),
            policy,
            clock,
            unit: layout.clock_reader(),
            forks: snowmint_host::fork::count(),
            max_ahead_ms,
            random_start,
            own,
            plain_window: OwnWindow::new(),
            lease_window: OwnWindow::new(),
        })
    }

    /// Mints `n` consecutive IDs from one clock reading (one atomic step) as a list of ints.
    ///
    /// The IDs go straight from the core's reservation into new ints, with no buffer in between. The
    /// core refuses an impossible batch before anything is reserved; a list that cannot be allocated
    /// raises MemoryError after the reservation (those IDs are skipped, never repeated).
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = batch_len(py, n)?;
        self.check_fork(py)?;
        self.close_own();
        let inner = match &self.kind {
            Kind::Plain(g) => g,
            Kind::Leased(_) => {
                let mut buf = vec![0u64; n];
                self.fill(py, &mut buf)?;
                return PyList::new(py, buf);
            }
        };
        let ids = match &self.clock {
            None => inner
                .next_ids_iter_with(&sm::FastClock, |ns| sleep_detached(py, ns), n)
                .or_raise(py)?,
            Some(c) => self.with_py_clock(py, c, |clock, sleep| {
                inner.next_ids_iter_with(clock, sleep, n)
            })?,
        };
        // SAFETY: a new list of n NULL slots, owned here; PyErr::fetch reports why it could not be made.
        let list = unsafe {
            Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(n as pyo3::ffi::Py_ssize_t))?
                .cast_into_unchecked::<PyList>()
        };
        for (i, id) in ids.enumerate() {
            // SAFETY: i < n, the list's length, and the slot is empty; PyList_SetItem steals the new int.
            // On a failed allocation the partly filled list is dropped (its empty slots are NULL).
            unsafe {
                let v = pyo3::ffi::PyLong_FromUnsignedLongLong(id);
                if v.is_null() {
                    return Err(PyErr::fetch(py));
                }
                pyo3::ffi::PyList_SetItem(list.as_ptr(), i as pyo3::ffi::Py_ssize_t, v);
            }
        }
        Ok(list)
    }

    /// Mints `n` consecutive IDs from one clock reading into a new `array.array('Q')`, written in place.
    fn next_ids_array<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = batch_len(py, n)?;
        self.check_fork(py)?;
        // A private one-element array('Q', [0]), repeated n times: one allocation, one pass of writes.
        let zero = ZERO_ARRAY.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(py
                .import("array")?
                .getattr("array")?
                .call1(("Q", vec![0u64]))?
                .unbind())
        })?;
        let arr = zero.bind(py).call_method1("__mul__", (n,))?;
        if n == 0 {
            return Ok(arr);
        }
        // SAFETY: the array was created above and no other reference to it exists, so nothing can resize
        // or free its buffer while we write (not even while the GIL is released during a wait).
        let out = unsafe { u64_array_slice(&arr, n)? };
        self.fill(py, out)?;
        Ok(arr)
    }

    /// Fills an existing `array.array('Q')` with consecutive IDs from one clock reading (one atomic
    /// step), in place: reuse one array for batch after batch with no allocation at all.
    fn next_ids_into(&self, py: Python<'_>, out: &Bound<'_, PyAny>) -> PyResult<()> {
        let array_type = py.import("array")?.getattr("array")?;
        if !out.is_instance(&array_type)? || out.getattr("typecode")?.ne("Q")? {
            return Err(PyTypeError::new_err(
                "next_ids_into takes an array.array('Q')",
            ));
        }
        self.check_fork(py)?;
        let n: usize = sm::check_batch(out.len()? as u64).or_raise(py)?;
        if n == 0 {
            return Ok(());
        }
        // While a memoryview exports the array's buffer, the array cannot be resized or freed (it raises
        // BufferError), so the address below stays valid even while a wait releases the GIL or an
        // injected clock runs Python code.
        let pin = py
            .import("builtins")?
            .getattr("memoryview")?
            .call1((out,))?;
        // SAFETY: pinned above; length and item size checked by u64_array_slice.
        let result = match unsafe { u64_array_slice(out, n) } {
            Ok(slice) => self.fill(py, slice),
            Err(e) => Err(e),
        };
        pin.call_method0("release")?;
        result
    }

    /// Lets the garbage collector see the injected clock, so a cycle through it (a clock that is a
    /// method of an object holding this generator) is collected. The reference is immutable: objects
    /// on the cycle with mutable references (the object's `__dict__`, a closure's cell) break it.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(c) = &self.clock {
            visit.call(c)?;
        }
        Ok(())
    }

    /// The layout IDs are minted in.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout {
            inner: *self.layout_ref(),
        }
    }
    /// The node ID (for a lease source: of the lease held, or of the last one held once detached).
    #[getter]
    fn node_id(&self) -> u64 {
        match &self.kind {
            Kind::Plain(g) => g.node_id(),
            Kind::Leased(g) => g.node_id(),
        }
    }
    #[getter]
    fn policy(&self) -> &'static str {
        self.policy.name()
    }
    /// The high-water mark (SPEC §2): the next free logical position, an int. Persist it (at shutdown,
    /// or periodically) and pass it to `restore()` after a restart: no ID repeats, even if the clock
    /// went back while the process was down. Not for a lease source (the store keeps its state).
    fn high_water_mark(&self, py: Python<'_>) -> PyResult<u64> {
        let g = self.plain_or_raise(py)?;
        self.close_own();
        Ok(g.state())
    }
    /// What this generator has done since it was built, as a dict of ints (`minted`, `batches`,
    /// `borrowed_ticks`, `waits`, `wait_ns`, `regressions`; SPEC §6a). With a state file: this
    /// process's generator; with a lease source: summed over every lease it held.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.close_own();
        let s = match &self.kind {
            Kind::Plain(g) => g.stats(),
            Kind::Leased(g) => g.stats(),
        };
        let d = PyDict::new(py);
        for (name, value) in [
            ("minted", s.minted),
            ("batches", s.batches),
            ("borrowed_ticks", s.borrowed_ticks),
            ("waits", s.waits),
            ("wait_ns", s.wait_ns),
            ("regressions", s.regressions),
        ] {
            d.set_item(name, value)?;
        }
        Ok(d)
    }
    /// Continues from a persisted high-water mark (an int, or its decimal str); never moves backwards.
    fn restore(&self, py: Python<'_>, mark: &Bound<'_, PyAny>) -> PyResult<()> {
        let mark = if let Ok(s) = mark.cast::<PyString>() {
            sm::Encoding::Decimal.parse(&s.to_cow()?).or_raise(py)?
        } else {
            u64_arg(mark, "mark", ErrorCode::InvalidArgument)?
        };
        let g = self.plain_or_raise(py)?;
        self.close_own();
        g.restore(mark);
        Ok(())
    }
    /// The lease held (node_id, fencing_token, expires_at), or None: a fixed node ID, or detached.
    #[getter]
    fn lease(&self) -> Option<PyLease> {
        match &self.kind {
            Kind::Plain(_) => None,
            Kind::Leased(g) => g.lease().map(|l| PyLease {
                node_id: l.node_id(),
                fencing_token: l.fencing_token(),
                expires_unix_ms: l.expires_unix_ms(),
            }),
        }
    }
    /// "attached", "detached" or "destroyed" (a fixed node ID is always "attached").
    #[getter]
    fn state(&self, py: Python<'_>) -> &'static str {
        match &self.kind {
            Kind::Plain(_) => "attached",
            Kind::Leased(g) => state_name(py.detach(|| g.state())),
        }
    }
    /// Releases the lease (minting then raises LeaseLostError until attach()); nothing for a fixed node ID.
    fn detach(&self, py: Python<'_>) -> PyResult<()> {
        self.check_fork(py)?;
        self.close_own();
        match &self.kind {
            Kind::Plain(_) => Ok(()),
            Kind::Leased(g) => py.detach(|| g.detach()).map_err(|e| coord_err(py, e)),
        }
    }
    /// Claims a node ID again (blocking, GIL released); nothing when attached or for a fixed node ID.
    fn attach(&self, py: Python<'_>) -> PyResult<()> {
        self.check_fork(py)?;
        self.close_own();
        match &self.kind {
            Kind::Plain(_) => Ok(()),
            Kind::Leased(g) => py.detach(|| g.attach()).map_err(|e| coord_err(py, e)),
        }
    }
    /// Releases the lease now (as detach()); also done by `with` and when the generator is collected.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        if snowmint_host::fork::forked_since(self.forks) && !self.reopens_in_child() {
            // A forked child: the lease is the parent's (the coord crate already stopped it here).
            return Ok(());
        }
        // (A generator opened from a source releases, in a forked child, the lease it opened there.)
        self.detach(py)
    }
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }
    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
    #[getter]
    fn max_ahead_ms(&self) -> u64 {
        self.max_ahead_ms
    }
    #[getter]
    fn random_start(&self) -> bool {
        self.random_start
    }
    /// The path of the state file this generator shares, or None (its state is in this process).
    #[getter]
    fn state_file(&self) -> Option<std::ffi::OsString> {
        self.file().map(|f| f.path().as_os_str().to_owned())
    }

    /// Writes the state file to the storage device and waits for it (msync): after this a crash or power
    /// loss cannot take the file back past the present state. ValueError without a state file.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let file = self.file_or_raise(py)?;
        py.detach(|| file.flush()).or_raise(py)
    }

    /// Checks that the state file is still the one at its path: StateFileMismatchError if it was
    /// unlinked or replaced (processes that open the path now would get another file).
    fn verify_state_file(&self, py: Python<'_>) -> PyResult<()> {
        self.file_or_raise(py)?.verify().or_raise(py)
    }

    /// The injected clock, or None for the system clock.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        let file = match self.file() {
            Some(f) => format!(", state_file={:?}", f.path().display().to_string()),
            None => String::new(),
        };
        format!(
            "Generator(node_id={}, layout={}, policy={:?}{file})",
            self.node_id(),
            PyLayout {
                inner: *self.layout_ref()
            }
            .__repr__(),
            self.policy.name()
        )
    }
}

// ---------------------------------------------------------------------------------------------------
// Decoding, composing, string forms
// ---------------------------------------------------------------------------------------------------

/// Rebuilds a pickled `Layout` (see `Layout.__reduce__`): the preset it came from, else its
/// configuration, checked to give back the same layout.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _layout_restore(
    py: Python<'_>,
    preset: Option<&str>,
    timestamp_bits: u32,
    node_bits: u32,
    sequence_bits: u32,
    order: &str,
    tick_ns: u64,
    epoch_ms: u64,
    node_id_offset: u64,
    use_sign_bit: bool,
    node_split_bits: u32,
) -> PyResult<PyLayout> {
    let cfg = sm::LayoutConfig {
        timestamp_bits,
        node_bits,
        sequence_bits,
        order: sm::Order::from_name(order).or_raise(py)?,
        tick_ns,
        epoch_ms,
        node_id_offset,
        use_sign_bit,
        node_split_bits,
    };
    let inner = match preset {
        Some("hazelcast") => sm::Layout::hazelcast(node_id_offset),
        Some("snowcast") => sm::Layout::snowcast(epoch_ms, 1u64 << node_bits.min(63)),
        Some(name) => sm::Layout::preset(name),
        None => sm::Layout::new(cfg),
    }
    .or_raise(py)?;
    if inner.config() != &cfg || inner.preset_name() != preset {
        return Err(PyValueError::new_err(
            "pickled Layout does not match the layout its preset or configuration gives",
        ));
    }
    Ok(PyLayout { inner })
}

/// An ID taken apart under a layout.
#[pyclass(frozen, eq, hash, module = "snowmint", name = "Decoded")]
#[derive(PartialEq, Eq, Hash)]
struct PyDecoded {
    inner: sm::Decoded,
    /// The layout it was decoded under (pickling decodes the ID again under it).
    layout: sm::Layout,
}

#[pymethods]
impl PyDecoded {
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id
    }
    #[getter]
    fn timestamp_ticks(&self) -> u64 {
        self.inner.timestamp_ticks
    }
    /// Unix time of the tick's start, whole milliseconds.
    #[getter]
    fn timestamp_ms(&self) -> u64 {
        self.inner.unix_ms
    }
    /// Nanoseconds past `timestamp_ms` (sub-millisecond layouts).
    #[getter]
    fn sub_ms_ns(&self) -> u32 {
        self.inner.sub_ms_ns
    }
    /// Unix nanoseconds of the tick's start (None past year 2554).
    #[getter]
    fn unix_ns(&self) -> Option<u64> {
        self.inner.unix_ns()
    }
    /// The node field as stored (node ID plus any node_id_offset).
    #[getter]
    fn node_id(&self) -> u64 {
        self.inner.node
    }
    #[getter]
    fn sequence(&self) -> u64 {
        self.inner.sequence
    }
    #[getter]
    fn iso(&self) -> String {
        self.inner.iso().to_buf().as_str().to_owned()
    }
    #[getter]
    fn datetime<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        utc_datetime(
            py,
            self.inner.unix_ms,
            self.inner.sub_ms_ns,
            "the ID's time",
        )
    }
    /// The layout the ID was decoded under.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout { inner: self.layout }
    }
    /// The fields as a dict of plain values (``json.dumps`` takes it): ``id``, ``timestamp_ticks``,
    /// ``timestamp_ms``, ``sub_ms_ns``, ``unix_ns`` (None past 2554), ``node_id``, ``sequence``, ``iso``.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = &self.inner;
        let out = PyDict::new(py);
        out.set_item("id", d.id)?;
        out.set_item("timestamp_ticks", d.timestamp_ticks)?;
        out.set_item("timestamp_ms", d.unix_ms)?;
        out.set_item("sub_ms_ns", d.sub_ms_ns)?;
        out.set_item("unix_ns", d.unix_ns())?;
        out.set_item("node_id", d.node)?;
        out.set_item("sequence", d.sequence)?;
        out.set_item("iso", d.iso().to_buf().as_str())?;
        Ok(out)
    }
    /// Pickling: `decode(id, layout)` again.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (u64, PyLayout))> {
        let decode = py.import("snowmint._snowmint")?.getattr("decode")?;
        Ok((decode, (self.inner.id, PyLayout { inner: self.layout })))
    }
    fn __repr__(&self) -> String {
        let d = &self.inner;
        format!(
            "Decoded(id={}, timestamp_ticks={}, timestamp_ms={}, sub_ms_ns={}, node_id={}, sequence={}, iso={:?})",
            d.id,
            d.timestamp_ticks,
            d.unix_ms,
            d.sub_ms_ns,
            d.node,
            d.sequence,
            d.iso().to_buf().as_str()
        )
    }
}

fn id_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    u64_arg(obj, "id", ErrorCode::InvalidId)
}

/// An ID to decode: an int, or a str in any form (decimal, hex, base32, base58 by `parse()`'s rules,
/// ambiguous strings refused), as JavaScript takes them. Out of range (negative, ≥ 2**64) as an int is
/// InvalidIdError; as a str, ParseError — as in every runtime.
fn id_or_text_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(s) = obj.cast::<PyString>() {
        return sm::parse_any(&s.to_cow()?).or_raise(obj.py());
    }
    id_arg(obj)
}

/// Takes an ID apart under a layout.
#[pyfunction]
#[pyo3(signature = (id, layout = None), text_signature = "(id, layout='twitter')")]
fn decode(
    py: Python<'_>,
    id: &Bound<'_, PyAny>,
    layout: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyDecoded> {
    let id = id_or_text_arg(id)?;
    let layout = layout
        .map(layout_arg)
        .transpose()?
        .unwrap_or_else(sm::Layout::twitter);
    Ok(PyDecoded {
        inner: layout.decode(id).or_raise(py)?,
        layout,
    })
}

/// Composes an ID from its fields (the node field as stored), each checked against the layout.
#[pyfunction]
#[pyo3(signature = (timestamp_ticks, node_id, sequence, layout = None), text_signature = "(timestamp_ticks, node_id, sequence, layout='twitter')")]
fn compose(
    py: Python<'_>,
    timestamp_ticks: &Bound<'_, PyAny>,
    node_id: &Bound<'_, PyAny>,
    sequence: &Bound<'_, PyAny>,
    layout: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let ticks = u64_arg(
        timestamp_ticks,
        "timestamp_ticks",
        ErrorCode::LayoutExhausted,
    )?;
    let node = u64_arg(node_id, "node_id", ErrorCode::NodeIdOutOfRange)?;
    let seq = u64_arg(sequence, "sequence", ErrorCode::InvalidArgument)?;
    let layout = layout
        .map(layout_arg)
        .transpose()?
        .unwrap_or_else(sm::Layout::twitter);
    layout.compose(ticks, node, seq).or_raise(py)
}

/// The smallest ID any generator of the layout can mint at or after an instant: an aware `datetime`
/// or Unix milliseconds (int).
#[pyfunction]
#[pyo3(signature = (at, layout = None), text_signature = "(at, layout='twitter')")]
fn min_id_at(
    py: Python<'_>,
    at: &Bound<'_, PyAny>,
    layout: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let layout = layout
        .map(layout_arg)
        .transpose()?
        .unwrap_or_else(sm::Layout::twitter);
    if at.is_instance_of::<PyInt>() && !at.is_instance_of::<PyBool>() {
        let ms = u64_arg(at, "unix_ms", ErrorCode::InvalidArgument)?;
        return layout.min_id_at_ms(ms).or_raise(py);
    }
    let datetime_type = py.import("datetime")?.getattr("datetime")?;
    if at.is_instance(&datetime_type)? {
        let ns = datetime_to_ns(py, at)?;
        return layout.min_id_at_ns(ns).or_raise(py);
    }
    Err(PyTypeError::new_err(format!(
        "min_id_at takes an aware datetime or Unix milliseconds (int), not {}",
        at.get_type().name()?
    )))
}

/// Writes an ID as text: "dec", "hex" (16 digits), "base32" (13, Crockford) or "base58" (11).
#[pyfunction]
#[pyo3(signature = (id, encoding = None), text_signature = "(id, encoding='dec')")]
fn encode(
    py: Python<'_>,
    id: &Bound<'_, PyAny>,
    encoding: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let id = id_arg(id)?;
    let enc = match encoding {
        None => sm::Encoding::Decimal,
        Some(e) => sm::Encoding::from_name(&str_arg(e, "encoding")?.to_cow()?).or_raise(py)?,
    };
    Ok(enc.encode(id).as_str().to_owned())
}

/// Parses an ID from text in one encoding, or "any" (told apart by shape).
#[pyfunction]
#[pyo3(signature = (text, encoding = None), text_signature = "(text, encoding='any')")]
fn parse(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    encoding: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let text = str_arg(text, "text")?.to_cow()?;
    let encoding = match encoding {
        None => None,
        Some(e) => {
            sm::Encoding::from_name_or_any(&str_arg(e, "encoding")?.to_cow()?).or_raise(py)?
        }
    };
    sm::Encoding::parse_in(encoding, &text).or_raise(py)
}

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
