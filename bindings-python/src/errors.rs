//! Exceptions: one class per stable code, all under `SnowmintError(ValueError)`, and the mapping of the
//! core's and the coordination layer's errors to them.

use super::*;

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
        pub(crate) fn register_exceptions(py: Python<'_>, m: &Bound<'_, PyModule>) -> PyResult<()> {
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
pub(crate) fn raise(
    py: Python<'_>,
    code: ErrorCode,
    message: String,
    extra: &[(&str, u64)],
) -> PyErr {
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
pub(crate) fn err(py: Python<'_>, e: sm::Error) -> PyErr {
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
pub(crate) fn state_file_path(p: &Bound<'_, PyAny>) -> PyResult<std::path::PathBuf> {
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
pub(crate) fn coord_err(py: Python<'_>, e: coord::Error) -> PyErr {
    raise(py, e.code(), e.message().to_string(), &[])
}

pub(crate) trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for sm::Result<T> {
    #[inline]
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| err(py, e))
    }
}
