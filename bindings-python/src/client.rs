//! `snowmint._IdBuffer`: the hot path of `snowmint.Client` / `AsyncClient` (python/snowmint/_client.py).
//!
//! A client keeps batches of IDs fetched from the ID service (SPEC §6a, `POST /v1/ids`). Taking one must
//! cost less than a Python method call does, so the batches, the validity check and the refill trigger
//! live here; the HTTP I/O, retries and threads live in Python. Validity is judged on the client's own
//! monotonic clock (the service's `valid_until` is never compared with it): a batch fetched at local time
//! `t` serves until `t + min(client validity, valid_for_ms)`, and its IDs are dropped, never returned,
//! once that has passed. Every batch must start above every ID the buffer accepted before (SPEC §6a: a
//! client refuses a batch that does not continue above the last ID it handed out): a service that
//! repeats a batch or goes backward is not the protocol (`SERVICE_UNAVAILABLE`), whatever the Python
//! side does around it.
//!
//! Calls into Python (the injected clock, the refill trigger, the slow path) are made with the buffer's
//! lock released, so a trigger that takes the GIL-holding thread's own path never deadlocks.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyList, PyString};

use snowmint::ErrorCode;

use crate::raise;

/// One batch: `ids[pos..]` are left; usable while the clock reads below `expires_ms`.
struct Batch {
    ids: Vec<u64>,
    pos: usize,
    expires_ms: u64,
}

#[derive(Default)]
struct State {
    batches: VecDeque<Batch>,
    /// Valid or not yet judged: the sum of the batches' remaining IDs.
    left: usize,
    /// A refill has been asked for and not yet answered (`push` or `refill_done`).
    refilling: bool,
    /// IDs dropped because their batch expired (the client's `stats()`).
    expired: u64,
    /// IDs handed out.
    taken: u64,
    /// Closed: batches that arrive later (a refill in flight) are dropped.
    closed: bool,
    /// The highest ID ever accepted (so at least the last one handed out): a batch must start above it.
    highest: Option<u64>,
}

impl State {
    /// Drops the batches whose validity has passed at `now` and those used up.
    fn prune(&mut self, now: u64) {
        while let Some(b) = self.batches.front() {
            let left = b.ids.len() - b.pos;
            if left == 0 {
                self.batches.pop_front();
            } else if now >= b.expires_ms {
                self.expired += left as u64;
                self.left -= left;
                self.batches.pop_front();
            } else {
                break;
            }
        }
    }

    fn take(&mut self, now: u64) -> Option<u64> {
        self.prune(now);
        let b = self.batches.front_mut()?;
        let id = b.ids[b.pos];
        b.pos += 1;
        self.left -= 1;
        self.taken += 1;
        Some(id)
    }

    /// Whether a refill should be asked for now (and marks it asked).
    fn wants_refill(&mut self, low_water: usize) -> bool {
        if !self.refilling && self.left < low_water {
            self.refilling = true;
            true
        } else {
            false
        }
    }
}

/// The batches of one client. Thread-safe (one lock; no Python call is made while it is held).
#[pyclass(frozen, module = "snowmint", name = "_IdBuffer")]
pub(crate) struct IdBuffer {
    state: Mutex<State>,
    origin: Instant,
    clock: Option<Py<PyAny>>,
    validity_ms: u64,
    low_water: usize,
    /// Called (no arguments) when the IDs left fall below `low_water`: starts a background refill.
    on_low: Py<PyAny>,
    /// Called (no arguments) when no valid ID is left: fetches and returns one (blocking or awaitable).
    slow: Py<PyAny>,
}

/// The host's monotonic clock in ms, as bounds of the true time: `(lower, upper)`. On Linux the coarse
/// clock (read in a few ns, where the precise one costs a third of the hot path) with its resolution
/// (one kernel tick, a few ms): a batch is judged expired when `upper` has reached its end, and fetched
/// at `lower`, so no ID is ever returned past its validity however coarse the clock.
#[cfg(target_os = "linux")]
fn host_ms(_origin: &Instant) -> (u64, u64) {
    use std::sync::OnceLock;
    fn read(clock: libc::clockid_t) -> Option<(u64, u64)> {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer to a timespec.
        let ok = unsafe { libc::clock_gettime(clock, &mut t) } == 0;
        ok.then_some((t.tv_sec as u64, t.tv_nsec as u64))
    }
    // The coarse clock when its resolution is fine enough (it shares CLOCK_MONOTONIC's origin).
    static COARSE_RES_MS: OnceLock<Option<u64>> = OnceLock::new();
    let res = *COARSE_RES_MS.get_or_init(|| {
        let mut r = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer to a timespec.
        let ok = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut r) } == 0;
        let ms = (r.tv_sec as u64) * 1000 + (r.tv_nsec as u64).div_ceil(1_000_000);
        (ok && ms <= 100).then_some(ms)
    });
    let (clock, res) = match res {
        Some(ms) => (libc::CLOCK_MONOTONIC_COARSE, ms),
        None => (libc::CLOCK_MONOTONIC, 0),
    };
    match read(clock) {
        // Truncation to whole ms loses up to 1 ms more.
        Some((s, ns)) => {
            let ms = s * 1000 + ns / 1_000_000;
            (ms, ms + res + 1)
        }
        // Never seen on Linux; every batch is then judged expired (the client fails, never mints wrong).
        None => (0, u64::MAX),
    }
}

#[cfg(not(target_os = "linux"))]
fn host_ms(origin: &Instant) -> (u64, u64) {
    let ms = origin.elapsed().as_millis() as u64;
    (ms, ms + 1)
}

impl IdBuffer {
    /// The clock for judging expiry: an upper bound of the true time.
    fn now(&self, py: Python<'_>) -> PyResult<u64> {
        match &self.clock {
            None => Ok(host_ms(&self.origin).1),
            Some(c) => {
                let v = c.bind(py).call0()?;
                let ms = if v.is_instance_of::<PyFloat>() {
                    let f: f64 = v.extract()?;
                    if !(f.is_finite() && f >= 0.0) {
                        return Err(raise(
                            py,
                            ErrorCode::InvalidClock,
                            format!("the client's clock returned {f}, expected monotonic milliseconds >= 0"),
                            &[],
                        ));
                    }
                    f as u64
                } else {
                    v.extract::<u64>().map_err(|_| {
                        raise(
                            py,
                            ErrorCode::InvalidClock,
                            "the client's clock must return monotonic milliseconds (an int or float >= 0)"
                                .to_string(),
                            &[],
                        )
                    })?
                };
                Ok(ms)
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic never happens while the lock is held (no Python call, no allocation failure path
        // that unwinds): recover the state rather than poison every later call.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes one valid ID, asking for a refill when the batch runs low.
    fn take(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        let now = self.now(py)?;
        // Nothing valid left: the caller fetches itself (a background refill would fetch twice).
        let (id, trigger) = {
            let mut s = self.lock();
            let id = s.take(now);
            let t = id.is_some() && s.wants_refill(self.low_water);
            (id, t)
        };
        if trigger {
            self.on_low.bind(py).call0()?;
        }
        Ok(id)
    }
}

/// A decimal u64 from the service (ASCII digits only, no sign, no spaces): anything else is not the
/// protocol.
fn parse_id(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn not_protocol(py: Python<'_>, why: String) -> PyErr {
    raise(
        py,
        ErrorCode::ServiceUnavailable,
        format!("the ID service answered with something that is not its protocol: {why}"),
        &[],
    )
}

#[pymethods]
impl IdBuffer {
    #[new]
    #[pyo3(signature = (validity_ms, low_water, on_low, slow, clock = None))]
    fn new(
        validity_ms: u64,
        low_water: usize,
        on_low: Py<PyAny>,
        slow: Py<PyAny>,
        clock: Option<Py<PyAny>>,
    ) -> Self {
        IdBuffer {
            state: Mutex::new(State::default()),
            origin: Instant::now(),
            clock,
            validity_ms,
            low_water,
            on_low,
            slow,
        }
    }

    /// The next ID: from the batch when one is valid (the hot path), else whatever `slow()` returns.
    fn next_id(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.take(py)? {
            Some(id) => Ok(id.into_pyobject(py)?.into_any().unbind()),
            None => self.slow.bind(py).call0().map(Bound::unbind),
        }
    }

    /// The next valid ID, or None (never calls `slow`; may ask for a refill).
    fn try_take(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.take(py)
    }

    /// Up to `n` valid IDs, increasing within each batch (may ask for a refill).
    fn take_many(&self, py: Python<'_>, n: usize) -> PyResult<Vec<u64>> {
        let now = self.now(py)?;
        let (out, trigger) = {
            let mut s = self.lock();
            let mut out = Vec::with_capacity(n.min(s.left));
            while out.len() < n {
                match s.take(now) {
                    Some(id) => out.push(id),
                    None => break,
                }
            }
            let t = out.len() == n && s.wants_refill(self.low_water);
            (out, t)
        };
        if trigger {
            self.on_low.bind(py).call0()?;
        }
        Ok(out)
    }

    /// Adds a batch answered by the service: `ids` its decimal strings (strictly increasing, and the
    /// first above every ID this buffer accepted before: a repeated or backward batch is refused),
    /// `fetched_at_ms` the clock reading taken before the request was sent, `valid_for_ms` the
    /// service's. Clears the refill flag. Raises ServiceUnavailableError when the batch is not the
    /// protocol's (nothing is added then).
    fn push(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyList>,
        fetched_at_ms: u64,
        valid_for_ms: u64,
    ) -> PyResult<usize> {
        let mut parsed = Vec::with_capacity(ids.len());
        let mut prev: Option<u64> = None;
        for (i, item) in ids.iter().enumerate() {
            let s = item
                .cast::<PyString>()
                .map_err(|_| not_protocol(py, format!("ids[{i}] is not a decimal string")))?;
            let text = s.to_cow()?;
            let id = parse_id(&text).ok_or_else(|| {
                not_protocol(py, format!("ids[{i}] is {text:?}, not a decimal u64"))
            })?;
            if prev.is_some_and(|p| id <= p) {
                return Err(not_protocol(
                    py,
                    format!("ids[{i}] = {id} does not increase"),
                ));
            }
            prev = Some(id);
            parsed.push(id);
        }
        let expires_ms = fetched_at_ms.saturating_add(self.validity_ms.min(valid_for_ms));
        let n = parsed.len();
        let mut s = self.lock();
        s.refilling = false;
        if let (Some(&first), Some(highest)) = (parsed.first(), s.highest) {
            if first <= highest {
                drop(s);
                return Err(not_protocol(
                    py,
                    format!(
                        "a batch starting at {first} does not continue above {highest}, an ID this client already received (a repeated or backward batch)"
                    ),
                ));
            }
        }
        if let Some(&last) = parsed.last() {
            s.highest = Some(last);
        }
        if n > 0 && !s.closed {
            s.left += n;
            s.batches.push_back(Batch {
                ids: parsed,
                pos: 0,
                expires_ms,
            });
        }
        Ok(n)
    }

    /// Clears the refill flag without a batch (the refill failed; the next take may ask again).
    fn refill_done(&self) {
        self.lock().refilling = false;
    }

    /// The client's monotonic clock, in ms (the injected one when given): a lower bound of the true
    /// time, for the moment a request is sent.
    fn now_ms(&self, py: Python<'_>) -> PyResult<u64> {
        match &self.clock {
            None => Ok(host_ms(&self.origin).0),
            Some(_) => self.now(py),
        }
    }

    /// Valid IDs left (expired batches are dropped first).
    fn available(&self, py: Python<'_>) -> PyResult<usize> {
        let now = self.now(py)?;
        let mut s = self.lock();
        s.prune(now);
        Ok(s.left)
    }

    /// Drops every batch (a forked child's copy of its parent's).
    fn clear(&self) {
        let mut s = self.lock();
        s.batches.clear();
        s.left = 0;
    }

    /// Drops every batch, now and whenever one arrives later (the client's close()).
    fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.batches.clear();
        s.left = 0;
    }

    /// (taken, expired): IDs handed out, IDs dropped because their batch expired.
    fn counts(&self) -> (u64, u64) {
        let s = self.lock();
        (s.taken, s.expired)
    }

    #[getter]
    fn validity_ms(&self) -> u64 {
        self.validity_ms
    }

    #[getter]
    fn low_water(&self) -> usize {
        self.low_water
    }
}
