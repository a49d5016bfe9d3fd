//! `datetime` helpers (the limited API has no datetime C API: they go through the Python module).

use super::*;

static UNIX_EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TIMEDELTA: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
pub(crate) static ZERO_ARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

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
pub(crate) fn utc_datetime<'py>(
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
pub(crate) fn datetime_to_ns(py: Python<'_>, dt: &Bound<'_, PyAny>) -> PyResult<u64> {
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
