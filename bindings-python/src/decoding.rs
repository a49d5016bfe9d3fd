//! Decoding, composing, string forms: `decode`, `Decoded`, `compose`, `min_id_at`, `encode`, `parse`.

use super::*;

/// Rebuilds a pickled `Layout` (see `Layout.__reduce__`): the preset it came from, else its
/// configuration, checked to give back the same layout.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _layout_restore(
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
pub(crate) struct PyDecoded {
    pub(crate) inner: sm::Decoded,
    /// The layout it was decoded under (pickling decodes the ID again under it).
    pub(crate) layout: sm::Layout,
}

#[pymethods]
impl PyDecoded {
    #[getter]
    pub(crate) fn id(&self) -> u64 {
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
    pub(crate) fn sub_ms_ns(&self) -> u32 {
        self.inner.sub_ms_ns
    }
    /// Unix nanoseconds of the tick's start (None past year 2554).
    #[getter]
    fn unix_ns(&self) -> Option<u64> {
        self.inner.unix_ns()
    }
    /// The node field as stored (node ID plus any node_id_offset).
    #[getter]
    pub(crate) fn node_id(&self) -> u64 {
        self.inner.node
    }
    #[getter]
    pub(crate) fn sequence(&self) -> u64 {
        self.inner.sequence
    }
    #[getter]
    pub(crate) fn iso(&self) -> String {
        self.inner.iso().to_buf().as_str().to_owned()
    }
    #[getter]
    pub(crate) fn datetime<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        utc_datetime(
            py,
            self.inner.unix_ms,
            self.inner.sub_ms_ns,
            "the ID's time",
        )
    }
    /// The layout the ID was decoded under.
    #[getter]
    pub(crate) fn layout(&self) -> PyLayout {
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
    pub(crate) fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (u64, PyLayout))> {
        let decode = py.import("snowmint._snowmint")?.getattr("decode")?;
        Ok((decode, (self.inner.id, PyLayout { inner: self.layout })))
    }
    pub(crate) fn __repr__(&self) -> String {
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
pub(crate) fn decode(
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
pub(crate) fn compose(
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
pub(crate) fn min_id_at(
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
pub(crate) fn encode(
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
pub(crate) fn parse(
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
