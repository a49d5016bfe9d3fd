//! `Generator`: the core's lock-free generator (in memory or on a state file) or a leased one from a
//! node source, its `next_id` C method and its windows.

use super::*;

/// A thread-safe, lock-free ID generator (see the package docs).
#[pyclass(frozen, module = "snowmint", name = "Generator")]
pub(crate) struct PyGenerator {
    kind: Kind,
    pub(crate) policy: sm::Policy,
    pub(crate) clock: Option<Py<PyAny>>,
    pub(crate) unit: sm::ClockReader,
    pub(crate) forks: u64,
    max_ahead_ms: u64,
    random_start: bool,
    /// Whether the object holds its own window ([`window`]): the system clock, on an interpreter with
    /// a GIL. The window is of the fixed node ID's generator, or of the lease held.
    pub(crate) own: bool,
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
    pub(crate) fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
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
    pub(crate) fn file(&self) -> Option<&StateFile> {
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
    pub(crate) fn leased(
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
pub(crate) unsafe extern "C" fn next_id_method(
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
pub(crate) fn add_next_id_method(py: Python<'_>) -> PyResult<()> {
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
    pub(crate) fn new(
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
                    Ok(coord::Opened::Plain(n)) => n,
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
    pub(crate) fn next_ids<'py>(
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
    pub(crate) fn layout(&self) -> PyLayout {
        PyLayout {
            inner: *self.layout_ref(),
        }
    }
    /// The node ID (for a lease source: of the lease held, or of the last one held once detached).
    #[getter]
    pub(crate) fn node_id(&self) -> u64 {
        match &self.kind {
            Kind::Plain(g) => g.node_id(),
            Kind::Leased(g) => g.node_id(),
        }
    }
    #[getter]
    pub(crate) fn policy(&self) -> &'static str {
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
    pub(crate) fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
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
    pub(crate) fn restore(&self, py: Python<'_>, mark: &Bound<'_, PyAny>) -> PyResult<()> {
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
    pub(crate) fn lease(&self) -> Option<PyLease> {
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
    pub(crate) fn state(&self, py: Python<'_>) -> &'static str {
        match &self.kind {
            Kind::Plain(_) => "attached",
            Kind::Leased(g) => state_name(py.detach(|| g.state())),
        }
    }
    /// Releases the lease (minting then raises LeaseLostError until attach()); nothing for a fixed node ID.
    pub(crate) fn detach(&self, py: Python<'_>) -> PyResult<()> {
        self.check_fork(py)?;
        self.close_own();
        match &self.kind {
            Kind::Plain(_) => Ok(()),
            Kind::Leased(g) => py.detach(|| g.detach()).map_err(|e| coord_err(py, e)),
        }
    }
    /// Claims a node ID again (blocking, GIL released); nothing when attached or for a fixed node ID.
    pub(crate) fn attach(&self, py: Python<'_>) -> PyResult<()> {
        self.check_fork(py)?;
        self.close_own();
        match &self.kind {
            Kind::Plain(_) => Ok(()),
            Kind::Leased(g) => py.detach(|| g.attach()).map_err(|e| coord_err(py, e)),
        }
    }
    /// Releases the lease now (as detach()); also done by `with` and when the generator is collected.
    pub(crate) fn close(&self, py: Python<'_>) -> PyResult<()> {
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
    pub(crate) fn state_file(&self) -> Option<std::ffi::OsString> {
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
    pub(crate) fn clock(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    pub(crate) fn __repr__(&self) -> String {
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
