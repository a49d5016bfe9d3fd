//! `Sequencer` and `Lease`: a named sequencer in a coordination store and its node-ID leases.

use super::*;

pub(crate) fn state_name(s: coord::SequencerState) -> &'static str {
    snowmint_host::sequencer_state_name!(coord::SequencerState, s)
}

/// A node-ID lease as seen at one moment.
#[pyclass(frozen, eq, module = "snowmint", name = "Lease")]
#[derive(PartialEq)]
pub(crate) struct PyLease {
    #[pyo3(get)]
    pub(crate) node_id: u64,
    #[pyo3(get)]
    pub(crate) fencing_token: u64,
    #[pyo3(get)]
    pub(crate) expires_unix_ms: u64,
}

#[pymethods]
impl PyLease {
    /// When the claim expires unless renewed (a UTC datetime).
    #[getter]
    pub(crate) fn expires_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        utc_datetime(py, self.expires_unix_ms, 0, "expires_at")
    }
    pub(crate) fn __repr__(&self) -> String {
        format!(
            "Lease(node_id={}, fencing_token={}, expires_unix_ms={})",
            self.node_id, self.fencing_token, self.expires_unix_ms
        )
    }
}

/// A named sequencer (snowcast's lifecycle) in a store.
#[pyclass(frozen, module = "snowmint", name = "Sequencer")]
pub(crate) struct PySequencer {
    pub(crate) seq: coord::Sequencer,
    pub(crate) policy: sm::Policy,
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
    pub(crate) fn create(
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
    pub(crate) fn open(
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        store: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
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
    pub(crate) fn list(py: Python<'_>, store: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let store = store_arg(store)?;
        py.detach(|| coord::generator::list_sequencers(&store))
            .map_err(|e| coord_err(py, e))
    }

    /// Claims a node ID and returns a Generator holding it (blocking, GIL released).
    pub(crate) fn attach(&self, py: Python<'_>) -> PyResult<PyGenerator> {
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
    pub(crate) fn name(&self) -> String {
        self.seq.record().name.clone()
    }
    #[getter]
    pub(crate) fn node_count(&self) -> u64 {
        self.seq.record().config.nodes
    }
    #[getter]
    pub(crate) fn layout(&self) -> PyLayout {
        PyLayout {
            inner: *self.seq.layout(),
        }
    }
    /// "destroyed" once destroyed by any handle in any process, else "detached" (attach() returns a
    /// generator; the handle itself holds no lease).
    #[getter]
    pub(crate) fn state(&self, py: Python<'_>) -> &'static str {
        state_name(py.detach(|| self.seq.state()))
    }
    pub(crate) fn __repr__(&self) -> String {
        format!(
            "Sequencer(name={:?}, node_count={}, store={:?})",
            self.seq.record().name,
            self.seq.record().config.nodes,
            self.seq.store().describe()
        )
    }
}
