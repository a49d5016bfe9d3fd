//! Clocks: an injected Python clock read through the host layer's adapter, and sleeping with the GIL
//! released.

use super::*;

pub(crate) enum ReadError {
    /// The callable raised, or returned something that is not a number (TypeError).
    Py(PyErr),
    /// A number that is not a valid reading.
    Core(sm::Error),
}

/// Validates one clock reading (int or float, in `unit`) and converts it to Unix nanoseconds.
pub(crate) fn reading_ns(
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
pub(crate) fn sleep_detached(py: Python<'_>, ns: u64) {
    py.detach(|| sm::sleep_ns(ns));
}
