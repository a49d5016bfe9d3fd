//! Options, host clocks and the two generator handles (single-thread and shared).

use super::*;

// ---------------------------------------------------------------------------------------------------
// Clocks and generators
// ---------------------------------------------------------------------------------------------------

/// An injected clock: returns the current Unix time in the layout's clock unit (whole milliseconds, or
/// nanoseconds for layouts with sub-millisecond ticks; see `snowmint_layout_info.clock_unit`).
///
/// A clock callback must not unwind: no C++ exception, no `longjmp` out of it. Catch inside the
/// callback and report a failure as a reading snowmint refuses (NaN from a `snowmint_clock_f64_fn`
/// gives SNOWMINT_RESULT_INVALID_CLOCK). An exception that escapes anyway is not undefined behaviour
/// (the callback type is declared `C-unwind` on the Rust side): it stops at the API function's panic
/// boundary, which cannot catch a foreign exception, and the process aborts.
pub type snowmint_clock_fn = unsafe extern "C-unwind" fn(userdata: *mut c_void) -> u64;

/// An injected clock returning a floating-point reading in the layout's clock unit. A reading that is
/// not a finite, non-negative whole number ≤ 2^53 - 1 makes the call fail with
/// SNOWMINT_RESULT_INVALID_CLOCK (never rounded).
///
/// Like every callback, it must not unwind (see `snowmint_clock_fn`).
pub type snowmint_clock_f64_fn = unsafe extern "C-unwind" fn(userdata: *mut c_void) -> f64;

/// How a generator behaves. Initialise with `snowmint_options_default`, then change fields; or pass
/// NULL for the defaults (wait policy, max_ahead 15 s, sequence start 0, the system clock).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct snowmint_options {
    /// One of `SNOWMINT_POLICY_*` (default WAIT).
    pub policy: u32,
    /// How far logical time may run ahead of the clock, in nanoseconds (default 15 000 000 000).
    pub max_ahead_ns: u64,
    /// One of `SNOWMINT_SEQUENCE_START_*` (default ZERO).
    pub sequence_start: u32,
    /// The seed for SNOWMINT_SEQUENCE_START_SEEDED.
    pub seed: u64,
    /// An injected clock, or NULL. At most one of `clock` and `clock_f64` may be set; with neither the
    /// generator reads the system clock (CLOCK_REALTIME). Called with `clock_userdata`, on the thread
    /// that mints; for a shared generator used by several threads it must be thread-safe.
    /// It must not unwind (throw): see `snowmint_clock_fn`.
    pub clock: Option<unsafe extern "C-unwind" fn(userdata: *mut c_void) -> u64>,
    /// An injected floating-point clock, or NULL.
    pub clock_f64: Option<unsafe extern "C-unwind" fn(userdata: *mut c_void) -> f64>,
    /// Passed to the clock callback; snowmint never dereferences it.
    pub clock_userdata: *mut c_void,
}

impl Default for snowmint_options {
    fn default() -> Self {
        let o = Options::default();
        snowmint_options {
            policy: policy_number(o.policy),
            max_ahead_ns: o.max_ahead_ns,
            sequence_start: 0,
            seed: 0,
            clock: None,
            clock_f64: None,
            clock_userdata: std::ptr::null_mut(),
        }
    }
}

/// Writes the default options into `*options_out`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_options_default(
    options_out: *mut snowmint_options,
) -> snowmint_result {
    guard(|| {
        nonnull!(options_out);
        // SAFETY: non-NULL.
        unsafe { put(options_out, snowmint_options::default()) };
        Ok(())
    })
}

/// A batch length within the one limit of every binding (`snowmint::MAX_BATCH`, 2^24 IDs).
pub(crate) fn checked_len(n: usize) -> Result<usize, Fail> {
    Ok(snowmint::check_batch(n as u64)?)
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Source {
    System,
    Int(snowmint_clock_fn),
    Float(snowmint_clock_f64_fn),
}

/// The host clock of a generator: the system clock or a C callback.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostClock {
    pub(crate) source: Source,
    pub(crate) userdata: *mut c_void,
    pub(crate) unit: snowmint::ClockReader,
}

// SAFETY: the userdata pointer is only passed back to the caller's callback; the header documents that
// a shared generator's callback must be thread-safe.
unsafe impl Send for HostClock {}
// SAFETY: as above.
unsafe impl Sync for HostClock {}

impl HostClock {
    /// Whether this is the system clock (no C callback).
    #[inline(always)]
    pub(crate) fn is_system(&self) -> bool {
        matches!(self.source, Source::System)
    }
}

impl Clock for HostClock {
    #[inline(always)]
    fn now_ns(&self) -> snowmint::Result<u64> {
        match self.source {
            Source::System => FastClock.now_ns(),
            // SAFETY: a C callback given by the caller, with its own userdata.
            Source::Int(f) => self.unit.to_ns(unsafe { f(self.userdata) }),
            // SAFETY: as above.
            Source::Float(f) => self.unit.f64_to_ns(unsafe { f(self.userdata) }),
        }
    }

    /// The system clock as the core's `FastClock` (a cached reading where the TSC proves the millisecond
    /// is still the same); a C callback is always read.
    #[inline(always)]
    fn now_ns_within(&self, window_ns: u64) -> snowmint::Result<(u64, bool)> {
        match self.source {
            Source::System => FastClock.now_ns_within(window_ns),
            _ => Ok((self.now_ns()?, true)),
        }
    }
}

/// Converts C options to the core's, plus the host clock.
pub(crate) unsafe fn convert_options(
    layout: &Layout,
    options: *const snowmint_options,
) -> Result<(Options, HostClock), Fail> {
    let o = if options.is_null() {
        snowmint_options::default()
    } else {
        // SAFETY: non-NULL; a readable snowmint_options.
        unsafe { *options }
    };
    let policy = match o.policy {
        0 => Policy::Wait,
        1 => Policy::Fail,
        2 => Policy::Strict,
        _ => {
            return Err(Fail::Argument(
                "options.policy is not one of SNOWMINT_POLICY_*",
            ))
        }
    };
    let random_start_seed = match o.sequence_start {
        0 => None,
        1 => Some(snowmint_host::os_seed()),
        2 => Some(o.seed),
        _ => {
            return Err(Fail::Argument(
                "options.sequence_start is not one of SNOWMINT_SEQUENCE_START_*",
            ))
        }
    };
    let source = match (o.clock, o.clock_f64) {
        (None, None) => Source::System,
        (Some(f), None) => Source::Int(f),
        (None, Some(f)) => Source::Float(f),
        (Some(_), Some(_)) => {
            return Err(Fail::Argument(
                "options.clock and options.clock_f64 are both set; set at most one",
            ))
        }
    };
    Ok((
        Options {
            policy,
            max_ahead_ns: o.max_ahead_ns,
            random_start_seed,
        },
        HostClock {
            source,
            userdata: o.clock_userdata,
            unit: layout.clock_reader(),
        },
    ))
}
/// A generator for one thread at a time (no atomics). Create with `snowmint_generator_new`; free with
/// `snowmint_generator_free`. Do not call it from two threads at once: use `snowmint_shared_generator`.
pub struct snowmint_generator {
    pub(crate) inner: Generator,
    pub(crate) clock: HostClock,
    pub(crate) forks: u64,
}

/// A lock-free generator that many threads may call at once (one compare-and-swap per call). Create
/// with `snowmint_shared_generator_new` (its state in this process) or
/// `snowmint_shared_generator_open_file` (its state in a file shared by every process that opens it);
/// free with `snowmint_shared_generator_free` once no thread uses it.
///
/// A shared generator opened from a lease source (`snowmint_generator_open`) holds a node-ID lease that
/// a background thread renews; it is thread-safe in the same way (mint, read its lease or state, detach
/// and attach from any thread), and `snowmint_shared_generator_free` releases the lease.
pub struct snowmint_shared_generator {
    pub(crate) inner: SharedInner,
    pub(crate) clock: HostClock,
    pub(crate) forks: u64,
}

#[allow(clippy::large_enum_variant)] // the hot path mints from the inline variant; a box would add a load
pub(crate) enum SharedInner {
    /// State in this process's memory, or in a state file.
    Plain(SharedGenerator<SharedState>),
    /// A node-ID lease from a store.
    #[cfg(feature = "coord")]
    Leased(Box<coord::SequencerGenerator>),
}

/// The one constructor path of every generator handle: NULL checks, the layout copied, the options
/// converted (with the host clock), the handle built by `make` and boxed into `*out` on success.
unsafe fn new_handle<H>(
    layout: *const snowmint_layout,
    options: *const snowmint_options,
    out: *mut *mut H,
    make: impl FnOnce(Layout, Options, HostClock) -> Result<H, Fail>,
) -> snowmint_result {
    guard(|| {
        nonnull!(layout);
        nonnull!(out);
        // SAFETY: non-NULL live handle.
        let l = *unsafe { layout_ref(layout) };
        // SAFETY: forwarded caller contract.
        let (opts, clock) = unsafe { convert_options(&l, options) }?;
        let handle = make(l, opts, clock)?;
        // SAFETY: non-NULL.
        unsafe { put(out, Box::into_raw(Box::new(handle))) };
        Ok(())
    })
}

impl snowmint_shared_generator {
    /// A handle over a plain (memory or state-file) shared generator, created in this process now.
    pub(crate) fn new_plain(g: SharedGenerator<SharedState>, clock: HostClock) -> Self {
        snowmint_shared_generator {
            inner: SharedInner::Plain(g),
            clock,
            forks: fork_count(),
        }
    }

    /// FORKED for a generator used in a forked child, unless its state is in a state file, which is
    /// shared with the parent by construction (MAP_SHARED): safe in the child; or it was opened from a
    /// lease source (`snowmint_generator_open`), which opens a lease of its own in the child on first use.
    #[inline(always)]
    pub(crate) fn check_fork(&self) -> Result<(), Fail> {
        if snowmint_host::fork::forked_since(self.forks) && !self.safe_in_child() {
            return Err(Fail::Core(Error::Forked));
        }
        Ok(())
    }

    #[cold]
    fn safe_in_child(&self) -> bool {
        match &self.inner {
            SharedInner::Plain(g) => g.state_holder().state_file().is_some(),
            #[cfg(feature = "coord")]
            SharedInner::Leased(g) => g.reopens_in_child(),
        }
    }

    pub(crate) fn state_file(&self) -> Result<&StateFile, Fail> {
        const NONE: Fail = Fail::Argument(
            "the generator has no state file (made with snowmint_shared_generator_new or snowmint_generator_open)",
        );
        match &self.inner {
            SharedInner::Plain(g) => g.state_holder().state_file().ok_or(NONE),
            #[cfg(feature = "coord")]
            SharedInner::Leased(_) => Err(NONE),
        }
    }

    pub(crate) fn plain(&self) -> Result<&SharedGenerator<SharedState>, Fail> {
        match &self.inner {
            SharedInner::Plain(g) => Ok(g),
            #[cfg(feature = "coord")]
            SharedInner::Leased(_) => Err(Fail::Argument(
                "a lease-backed generator keeps its position in the store's reservation: no state to save or restore",
            )),
        }
    }
}

/// Creates a single-thread generator minting for `node_id` under `layout` (the layout is copied; the
/// handle may be freed afterwards). `options` may be NULL for the defaults. NODE_ID_OUT_OF_RANGE when
/// the node ID does not fit.
///
/// On success `*generator_out` is a new handle: free it with `snowmint_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_new(
    layout: *const snowmint_layout,
    node_id: u64,
    options: *const snowmint_options,
    generator_out: *mut *mut snowmint_generator,
) -> snowmint_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        new_handle(layout, options, generator_out, |l, opts, clock| {
            Ok(snowmint_generator {
                inner: Generator::new(l, node_id, opts)?,
                clock,
                forks: fork_count(),
            })
        })
    }
}

/// Creates a thread-safe, lock-free generator minting for `node_id` under `layout` (copied).
/// `options` may be NULL for the defaults.
///
/// On success `*generator_out` is a new handle: free it with `snowmint_shared_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_new(
    layout: *const snowmint_layout,
    node_id: u64,
    options: *const snowmint_options,
    generator_out: *mut *mut snowmint_shared_generator,
) -> snowmint_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        new_handle(layout, options, generator_out, |l, opts, clock| {
            let g = SharedGenerator::with_state(l, node_id, opts, SharedState::memory())?;
            Ok(snowmint_shared_generator::new_plain(g, clock))
        })
    }
}

/// Opens a thread-safe, lock-free generator whose state word lives in the state file at `path` (a
/// NUL-terminated path), shared by every process and thread that opens the same file: workers of one
/// service mint under one node ID with no duplicates. The file is created (atomically) if it is missing.
/// A process that restarts continues after the last ID any process minted; a child forked after this
/// call may keep using the handle (no SNOWMINT_RESULT_FORKED: the file is shared by construction).
///
/// SNOWMINT_RESULT_STATE_FILE_MISMATCH when the file was made for another layout or node ID, is not a
/// state file (wrong size, magic or checksum: truncated, foreign or damaged), is a directory, cannot be
/// created or opened for writing (a read-only path, no permission), or another process still maps a
/// file that was unlinked or replaced at this path; `snowmint_last_error_message` says which. A file
/// that does not check out is never changed. Unix only; see the README for the file format, what
/// survives a reboot (tmpfs or disk) and `snowmint_shared_generator_flush`.
///
/// On success `*generator_out` is a new handle: free it with `snowmint_shared_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_open_file(
    path: *const c_char,
    layout: *const snowmint_layout,
    node_id: u64,
    options: *const snowmint_options,
    generator_out: *mut *mut snowmint_shared_generator,
) -> snowmint_result {
    if path.is_null() {
        // The first argument is checked first, as everywhere.
        return guard(|| Err(Fail::Null("path")));
    }
    // SAFETY: non-NULL, NUL-terminated (caller contract).
    let path = unsafe { CStr::from_ptr(path) };
    let path = std::path::Path::new(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(
        path.to_bytes(),
    ));
    // SAFETY: forwarded caller contract.
    unsafe {
        new_handle(layout, options, generator_out, |l, opts, clock| {
            // The options first, then the state file: the host layer's rule.
            let g = shared_state_generator(l, node_id, opts, Some(path.to_path_buf()))?;
            Ok(snowmint_shared_generator::new_plain(g, clock))
        })
    }
}

/// Writes a file-backed generator's state to the storage device and waits for it (`msync(MS_SYNC)`):
/// after this, a crash or power loss cannot take the file back past the present state (on tmpfs the
/// file does not survive a reboot at all). SNOWMINT_RESULT_INVALID_ARGUMENT for a generator without a
/// state file.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_flush(
    generator: *const snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        let g = try_ref!(generator);
        g.state_file()?.flush()?;
        Ok(())
    })
}

/// Checks that a file-backed generator's file is still the one at its path:
/// SNOWMINT_RESULT_STATE_FILE_MISMATCH if it was unlinked or replaced (processes that open the path now
/// would get another file). SNOWMINT_RESULT_INVALID_ARGUMENT for a generator without a state file.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_verify(
    generator: *const snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        let g = try_ref!(generator);
        g.state_file()?.verify()?;
        Ok(())
    })
}

/// Frees a generator. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_free(generator: *mut snowmint_generator) {
    if generator.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: a handle from snowmint_generator_new, freed once (caller contract).
        drop(unsafe { Box::from_raw(generator) });
    })
}

/// Frees a shared generator once no thread uses it. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_free(generator: *mut snowmint_shared_generator) {
    if generator.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: a handle from snowmint_shared_generator_new, freed once, unused (caller contract).
        drop(unsafe { Box::from_raw(generator) });
    })
}

/// Mints one ID into `*id_out`, reading the generator's clock. Under the wait policy the calling thread
/// sleeps while logical time is more than max_ahead ahead of the clock; an injected clock that does not
/// move between two waits gives SNOWMINT_RESULT_TOO_FAR_AHEAD instead of a hang. A generator created
/// before fork() and used in the child gives SNOWMINT_RESULT_FORKED (create a new one in the child, with
/// its own node ID).
#[no_mangle]
pub unsafe extern "C" fn snowmint_next_id(
    generator: *mut snowmint_generator,
    id_out: *mut u64,
) -> snowmint_result {
    // The minting path on its own: valid arguments, no fork, the system clock (as the core's own
    // FastClock, statically dispatched: what Rust's next_id() does). Every other case, and every
    // error, is `next_id_checked`'s, which records it.
    // SAFETY: NULL or a live handle, used by one thread at a time (the crate's caller contract).
    if let Some(g) = unsafe { generator.as_mut() } {
        if !id_out.is_null() && !snowmint_host::fork::forked_since(g.forks) && g.clock.is_system() {
            return mint_into(
                || g.inner.next_id_with(&FastClock, snowmint::sleep_ns),
                id_out,
            );
        }
    }
    // SAFETY: the caller's arguments, as given.
    unsafe { next_id_checked(generator, id_out) }
}

/// [`snowmint_next_id`] with every check, for the cases its minting path leaves.
#[cold]
#[inline(never)]
unsafe fn next_id_checked(generator: *mut snowmint_generator, id_out: *mut u64) -> snowmint_result {
    guard(|| {
        let g = try_mut!(generator);
        nonnull!(id_out);
        check_fork(g.forks)?;
        let id = if g.clock.is_system() {
            g.inner.next_id_with(&FastClock, snowmint::sleep_ns)?
        } else {
            g.inner.next_id_with(&g.clock, snowmint::sleep_ns)?
        };
        // SAFETY: non-NULL.
        unsafe { put(id_out, id) };
        Ok(())
    })
}

/// Fills `buf[0..n]` with `n` consecutive IDs from one clock reading (one state update). `buf` is
/// written only on success; `buf` may be NULL when `n` is 0. A batch larger than the layout can ever
/// hold within max_ahead is SNOWMINT_RESULT_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn snowmint_next_ids(
    generator: *mut snowmint_generator,
    buf: *mut u64,
    n: usize,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        if n == 0 {
            return Ok(());
        }
        nonnull!(buf);
        // SAFETY: non-NULL live handle, one thread at a time (caller contract).
        let g = unsafe { &mut *generator };
        check_fork(g.forks)?;
        // SAFETY: buf holds n writable u64 (caller contract).
        let out = unsafe { std::slice::from_raw_parts_mut(buf, checked_len(n)?) };
        g.inner.next_ids_with(&g.clock, snowmint::sleep_ns, out)?;
        Ok(())
    })
}

/// `snowmint_next_id` for a shared generator; any number of threads may call it at once.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_next_id(
    generator: *const snowmint_shared_generator,
    id_out: *mut u64,
) -> snowmint_result {
    // The minting path on its own, as in `snowmint_next_id`: a generator in this process's memory or a
    // state file, valid arguments, no fork, the system clock.
    // SAFETY: NULL or a live handle (the crate's caller contract).
    if let Some(g) = unsafe { generator.as_ref() } {
        if let SharedInner::Plain(inner) = &g.inner {
            if !id_out.is_null()
                && !snowmint_host::fork::forked_since(g.forks)
                && g.clock.is_system()
            {
                return mint_into(
                    || inner.next_id_with(&FastClock, snowmint::sleep_ns),
                    id_out,
                );
            }
        }
    }
    // SAFETY: the caller's arguments, as given.
    unsafe { shared_next_id_checked(generator, id_out) }
}

/// [`snowmint_shared_next_id`] with every check, for the cases its minting path leaves (a lease, a
/// fork, an injected clock, NULL).
#[cold]
#[inline(never)]
unsafe fn shared_next_id_checked(
    generator: *const snowmint_shared_generator,
    id_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        let g = try_ref!(generator);
        nonnull!(id_out);
        g.check_fork()?;
        // One arm in the ID-only build (no `coord` feature).
        #[cfg_attr(not(feature = "coord"), allow(clippy::infallible_destructuring_match))]
        let inner = match &g.inner {
            SharedInner::Plain(inner) => inner,
            #[cfg(feature = "coord")]
            SharedInner::Leased(l) => {
                let id = l.next_id()?;
                // SAFETY: non-NULL.
                unsafe { put(id_out, id) };
                return Ok(());
            }
        };
        let id = if g.clock.is_system() {
            inner.next_id_with(&FastClock, snowmint::sleep_ns)?
        } else {
            inner.next_id_with(&g.clock, snowmint::sleep_ns)?
        };
        // SAFETY: non-NULL.
        unsafe { put(id_out, id) };
        Ok(())
    })
}

/// `snowmint_next_ids` for a shared generator: `n` IDs in one compare-and-swap.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_next_ids(
    generator: *const snowmint_shared_generator,
    buf: *mut u64,
    n: usize,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        if n == 0 {
            return Ok(());
        }
        nonnull!(buf);
        // SAFETY: non-NULL live handle.
        let g = unsafe { &*generator };
        g.check_fork()?;
        // SAFETY: buf holds n writable u64 (caller contract).
        let out = unsafe { std::slice::from_raw_parts_mut(buf, checked_len(n)?) };
        match &g.inner {
            SharedInner::Plain(inner) => inner.next_ids_with(&g.clock, snowmint::sleep_ns, out)?,
            #[cfg(feature = "coord")]
            SharedInner::Leased(l) => l.next_ids(out)?,
        }
        Ok(())
    })
}

/// The generator's high-water mark (its next free logical position): persist it and pass it to
/// `snowmint_generator_restore` after a restart so no ID repeats even if the clock went back.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_state(
    generator: *const snowmint_generator,
    state_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(state_out);
        // SAFETY: non-NULL live handles.
        unsafe { put(state_out, (*generator).inner.state()) };
        Ok(())
    })
}

/// Continues from a persisted high-water mark (never moves backwards).
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_restore(
    generator: *mut snowmint_generator,
    state: u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        // SAFETY: non-NULL live handle, one thread at a time.
        unsafe { (*generator).inner.restore(state) };
        Ok(())
    })
}

/// `snowmint_generator_state` for a shared generator.
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_state(
    generator: *const snowmint_shared_generator,
    state_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(state_out);
        // SAFETY: non-NULL live handles.
        let state = unsafe { &*generator }.plain()?.state();
        // SAFETY: non-NULL.
        unsafe { put(state_out, state) };
        Ok(())
    })
}

/// `snowmint_generator_restore` for a shared generator (safe while other threads mint).
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_restore(
    generator: *const snowmint_shared_generator,
    state: u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        // SAFETY: non-NULL live handle.
        unsafe { &*generator }.plain()?.restore(state);
        Ok(())
    })
}

/// What a generator has done since it was created (SPEC §6a); every field only grows. For a shared
/// generator on a state file: this process's handle only; under a lease source: summed over every
/// lease it held.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct snowmint_stats {
    /// IDs handed out: single IDs and every ID of every batch.
    pub minted: u64,
    /// Batch calls (`*_next_ids`) that minted at least one ID.
    pub batches: u64,
    /// Ticks the generator moved to ahead of the clock (a used-up tick, or a clock that stepped back).
    pub borrowed_ticks: u64,
    /// Sleeps the generator took under SNOWMINT_POLICY_WAIT (logical time `max_ahead` ahead).
    pub waits: u64,
    /// The total of those sleeps, in nanoseconds (as asked).
    pub wait_ns: u64,
    /// Clock readings below the last one seen, in whole ticks (one step back counts once).
    pub regressions: u64,
}

impl From<snowmint::Stats> for snowmint_stats {
    fn from(s: snowmint::Stats) -> Self {
        snowmint_stats {
            minted: s.minted,
            batches: s.batches,
            borrowed_ticks: s.borrowed_ticks,
            waits: s.waits,
            wait_ns: s.wait_ns,
            regressions: s.regressions,
        }
    }
}

/// Writes what `generator` has done into `*stats_out` (see `snowmint_stats`).
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_stats(
    generator: *const snowmint_generator,
    stats_out: *mut snowmint_stats,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(stats_out);
        // SAFETY: non-NULL live handle.
        let stats = unsafe { &*generator }.inner.stats();
        // SAFETY: non-NULL.
        unsafe { put(stats_out, stats.into()) };
        Ok(())
    })
}

/// `snowmint_generator_stats` for a shared generator (safe while other threads mint: each field is
/// read atomically; `minted` may trail a request in flight and never goes backwards).
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_stats(
    generator: *const snowmint_shared_generator,
    stats_out: *mut snowmint_stats,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(stats_out);
        // SAFETY: non-NULL live handle.
        let stats = match &unsafe { &*generator }.inner {
            SharedInner::Plain(g) => g.stats(),
            #[cfg(feature = "coord")]
            SharedInner::Leased(g) => g.stats(),
        };
        // SAFETY: non-NULL.
        unsafe { put(stats_out, stats.into()) };
        Ok(())
    })
}

/// A generator on a fixed node ID, its state in the state file at `path` (or in memory): the host
/// layer's rule (`snowmint_host::state_file`: the options are checked before the file system is touched).
pub(crate) fn shared_state_generator(
    layout: snowmint_core::Layout,
    node_id: u64,
    options: snowmint_core::Options,
    path: Option<std::path::PathBuf>,
) -> Result<SharedGenerator<SharedState>, Fail> {
    use snowmint_host::state_file::{shared_generator, Refused};
    shared_generator::<core::convert::Infallible>(layout, node_id, options, || Ok(path)).map_err(
        |e| match e {
            Refused::Options(e) | Refused::StateFile { error: e, .. } => Fail::Core(e),
            Refused::Path(never) => match never {},
        },
    )
}
