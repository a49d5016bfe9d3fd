//! `snowmint.RangeSequence`: compact integer IDs from ranges leased global → datacenter → process
//! ([`snowmint_coord::RangeSequence`], SPEC §4). Converts types and maps errors; the allocation is the
//! coordination crate's.

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use snowmint::ErrorCode;
use snowmint_coord as coord;

use crate::{coord_err, raise, str_arg, u64_arg};

/// A range sequence: `next_id()` takes the next value of the held range (one atomic step; the GIL is
/// released only when a range must be waited for).
#[pyclass(frozen, module = "snowmint", name = "RangeSequence")]
pub(crate) struct PyRangeSequence {
    inner: coord::RangeSequence,
}

fn opt_u64(obj: Option<&Bound<'_, PyAny>>, name: &str, default: u64) -> PyResult<u64> {
    match obj {
        None => Ok(default),
        Some(o) => u64_arg(o, name, ErrorCode::InvalidArgument),
    }
}

fn narrow(py: Python<'_>, v: u64, name: &str) -> PyResult<u32> {
    u32::try_from(v).map_err(|_| {
        raise(
            py,
            ErrorCode::InvalidArgument,
            format!("{name} is {v}, too large"),
            &[],
        )
    })
}

#[pymethods]
impl PyRangeSequence {
    /// Opens sequence `name` for datacenter `dc` (blocking until the first range is held; GIL released).
    #[new]
    #[pyo3(
        signature = (name, *, dc, global_store, local_store = None, dc_range = None, process_range = None,
                     bits = None, start = None, threshold = None, wait_ms = None),
        text_signature = "(name, *, dc, global_store, local_store=None, dc_range=1000000, process_range=1000, bits=31, start=1, threshold=50, wait_ms=2000)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        dc: &Bound<'_, PyAny>,
        global_store: &Bound<'_, PyAny>,
        local_store: Option<&Bound<'_, PyAny>>,
        dc_range: Option<&Bound<'_, PyAny>>,
        process_range: Option<&Bound<'_, PyAny>>,
        bits: Option<&Bound<'_, PyAny>>,
        start: Option<&Bound<'_, PyAny>>,
        threshold: Option<&Bound<'_, PyAny>>,
        wait_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let text = |o: &Bound<'_, PyAny>, what: &str| -> PyResult<String> {
            Ok(str_arg(o, what)?.to_cow()?.into_owned())
        };
        let name = text(name, "name")?;
        let dc = text(dc, "dc")?;
        let global = text(global_store, "global_store")?;
        let local = match local_store {
            None => global.clone(),
            Some(l) => text(l, "local_store")?,
        };
        let d = coord::RangeOptions::default();
        let options = coord::RangeOptions {
            dc_range: opt_u64(dc_range, "dc_range", d.dc_range)?,
            process_range: opt_u64(process_range, "process_range", d.process_range)?,
            bits: narrow(py, opt_u64(bits, "bits", u64::from(d.bits))?, "bits")?,
            start: opt_u64(start, "start", d.start)?,
            threshold_percent: narrow(
                py,
                opt_u64(threshold, "threshold", u64::from(d.threshold_percent))?,
                "threshold",
            )?,
            wait: Duration::from_millis(opt_u64(wait_ms, "wait_ms", d.wait.as_millis() as u64)?),
        };
        let inner = py
            .detach(|| coord::RangeSequence::open_urls(&name, &dc, &global, &local, options))
            .map_err(|e| coord_err(py, e))?;
        Ok(PyRangeSequence { inner })
    }

    /// The next value (an int below 2**bits).
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        if let Some(v) = self.inner.try_next_id() {
            return Ok(v);
        }
        py.detach(|| self.inner.next_id())
            .map_err(|e| coord_err(py, e))
    }

    /// `n` values, increasing.
    fn next_ids(&self, py: Python<'_>, n: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        let n = u64_arg(n, "n", ErrorCode::InvalidArgument)?;
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        py.detach(|| self.inner.next_ids(n))
            .map_err(|e| coord_err(py, e))
    }

    /// What this handle has done: values, process_ranges, dc_ranges, late, wait_ns, current, ready.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("values", s.values)?;
        d.set_item("process_ranges", s.process_ranges)?;
        d.set_item("dc_ranges", s.dc_ranges)?;
        d.set_item("late", s.late)?;
        d.set_item("wait_ns", s.wait_ns)?;
        d.set_item("current", s.current)?;
        d.set_item("ready", s.ready)?;
        Ok(d)
    }

    #[getter]
    fn bits(&self) -> u32 {
        self.inner.options().bits
    }

    fn __repr__(&self) -> String {
        let o = self.inner.options();
        format!(
            "RangeSequence(bits={}, dc_range={}, process_range={}, current={:?})",
            o.bits,
            o.dc_range,
            o.process_range,
            self.inner.stats().current
        )
    }
}
