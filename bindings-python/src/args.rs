//! Argument conversion: a Python `int` to `u64` that never wraps, `bool` and `str` arguments.

use super::*;

/// A non-negative integer that fits 64 bits. `bool` and non-integers are `TypeError`; an int out of
/// range (negative, ≥ 2**64) raises `code` with a message naming the argument.
pub(crate) fn u64_arg(obj: &Bound<'_, PyAny>, name: &str, code: ErrorCode) -> PyResult<u64> {
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

pub(crate) fn bool_arg(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<bool> {
    match obj {
        None => Ok(false),
        Some(b) => Ok(b
            .cast::<PyBool>()
            .map_err(|_| PyTypeError::new_err(format!("{name} must be a bool")))?
            .is_true()),
    }
}

pub(crate) fn str_arg<'a>(
    obj: &'a Bound<'_, PyAny>,
    name: &str,
) -> PyResult<&'a Bound<'a, PyString>> {
    obj.cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be a str")))
}
