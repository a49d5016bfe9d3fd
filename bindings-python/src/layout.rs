//! `Layout`: a preset or a custom layout, its fields and its clock reader.

use super::*;

/// An ID layout: field widths, order, tick and epoch (see `Layout.preset`).
#[pyclass(frozen, eq, hash, module = "snowmint", name = "Layout")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct PyLayout {
    pub(crate) inner: sm::Layout,
}

/// A layout argument: a preset name or a `Layout`.
pub(crate) fn layout_arg(obj: &Bound<'_, PyAny>) -> PyResult<sm::Layout> {
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
    pub(crate) fn new(
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
    pub(crate) fn preset(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Self> {
        let name = str_arg(name, "name")?.to_cow()?;
        Ok(PyLayout {
            inner: sm::Layout::preset(&name).or_raise(py)?,
        })
    }

    /// snowcast's layout for `node_count` nodes (128..=8192, rounded up to a power of two).
    #[staticmethod]
    pub(crate) fn snowcast(
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
    pub(crate) fn hazelcast(
        py: Python<'_>,
        node_id_offset: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
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
    pub(crate) fn decimal() -> Self {
        PyLayout {
            inner: sm::Layout::decimal(),
        }
    }

    #[getter]
    pub(crate) fn name(&self) -> &'static str {
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
    pub(crate) fn timestamp_bits(&self) -> u32 {
        self.inner.timestamp_bits()
    }
    #[getter]
    pub(crate) fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    #[getter]
    pub(crate) fn sequence_bits(&self) -> u32 {
        self.inner.sequence_bits()
    }
    #[getter]
    fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }
    #[getter]
    pub(crate) fn order(&self) -> &'static str {
        self.inner.order().name()
    }
    #[getter]
    pub(crate) fn tick_ns(&self) -> u64 {
        self.inner.tick_ns()
    }
    #[getter]
    pub(crate) fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }
    #[getter]
    pub(crate) fn node_id_offset(&self) -> u64 {
        self.inner.node_id_offset()
    }
    #[getter]
    pub(crate) fn use_sign_bit(&self) -> bool {
        self.inner.config().use_sign_bit
    }
    #[getter]
    pub(crate) fn node_count(&self) -> u64 {
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
    pub(crate) fn clock_unit(&self) -> &'static str {
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
    pub(crate) fn __reduce__<'py>(
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

    pub(crate) fn __repr__(&self) -> String {
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
