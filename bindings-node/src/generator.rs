//! `Generator`: the core's lock-free generator (in memory or on a state file) or a leased one from a
//! node source (`Generator.open`), its windows and statistics.

use super::*;

/// A generator of unique, strictly increasing IDs for one node ID (the core's lock-free
/// `SharedGenerator`). Instances belong to the JavaScript thread that created them: in `worker_threads`
/// give each worker its own generator with a distinct node ID, or mint in one thread only.
#[napi]
pub struct Generator {
    pub(crate) gen: Gen,
    pub(crate) unit: snowmint::ClockReader,
    /// The injected clock: a reference to a JS function in `env`, or null for the system clock.
    pub(crate) clock: sys::napi_ref,
    pub(crate) env: sys::napi_env,
    /// The environment's fast-path table this generator is registered in (`__register`), or null.
    pub(crate) fast: Cell<*const Fast>,
    /// Its index there.
    pub(crate) index: Cell<u32>,
    /// The object's own window (the host layer's `OwnWindow`), of the fixed node ID's generator or of
    /// the lease held, used with the system clock: only this environment's thread reaches the object,
    /// and with the system clock nothing calls back into JavaScript while it mints. A thread-local
    /// window cost a `__tls_get_addr` call per ID from the addon.
    pub(crate) plain_window: OwnWindow<SharedGenerator<SharedState>>,
    pub(crate) lease_window: OwnWindow<coord::lease::CeiledGenerator>,
}

impl Drop for Generator {
    fn drop(&mut self) {
        self.close_own();
        if !self.clock.is_null() {
            unsafe { sys::napi_delete_reference(self.env, self.clock) };
        }
        let fast = self.fast.get();
        if !fast.is_null() {
            // SAFETY: a registered generator holds a reference on its table, so the table is alive.
            unsafe { Fast::unregister(fast, self.index.get()) };
        }
    }
}

/// What a generator has done since it was built (`gen.stats()`). Numbers, not bigints: exact up to
/// 2^53 (about 2.8 years of minting at 100 million IDs a second; 104 days of total waiting for
/// `waitNs`), and `JSON.stringify` takes them.
#[napi(object)]
pub struct GeneratorStats {
    /// IDs handed out: single IDs and every ID of every batch.
    pub minted: f64,
    /// `nextIds` calls that minted at least one ID.
    pub batches: f64,
    /// Ticks the generator moved to ahead of the clock (a used-up tick, or a clock that stepped back).
    pub borrowed_ticks: f64,
    /// Sleeps the generator took under the `wait` policy (JavaScript's default `fail` never sleeps).
    pub waits: f64,
    /// The total of those sleeps, in nanoseconds (as asked).
    pub wait_ns: f64,
    /// Clock readings below the last one seen, in whole ticks (one step back counts once).
    pub regressions: f64,
}

impl From<snowmint::Stats> for GeneratorStats {
    fn from(s: snowmint::Stats) -> Self {
        GeneratorStats {
            minted: s.minted as f64,
            batches: s.batches as f64,
            borrowed_ticks: s.borrowed_ticks as f64,
            waits: s.waits as f64,
            wait_ns: s.wait_ns as f64,
            regressions: s.regressions as f64,
        }
    }
}

/// A fixed node ID, or a node ID held under a lease (every lease decision is the coord crate's).
// The in-memory generator stays inline: it is the hot path, and one indirection costs more than the size.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Gen {
    /// State in this process's memory, or in a state file shared by processes.
    Plain(SharedGenerator<SharedState>),
    Leased(Arc<coord::SequencerGenerator>),
}

impl Gen {
    pub(crate) fn layout(&self) -> &snowmint::Layout {
        match self {
            Gen::Plain(g) => g.layout(),
            Gen::Leased(l) => l.layout(),
        }
    }
    pub(crate) fn node_id(&self) -> u64 {
        match self {
            Gen::Plain(g) => g.node_id(),
            Gen::Leased(l) => l.node_id(),
        }
    }
}

/// The generator options (`policy`, `maxAheadMs`, `randomStart`, `randomSeed`) of `o`.
fn generator_options(env: sys::napi_env, o: &Opts) -> Result<Options> {
    let policy = match o.get("policy") {
        None => Policy::Fail,
        Some(v) => {
            if type_of(env, v) != sys::ValueType::napi_string {
                return Err(type_err(env, "policy must be 'wait', 'fail' or 'strict'"));
            }
            Policy::from_name(&get_string(env, v)?).js(env)?
        }
    };
    let max_ahead_ms = match o.get("maxAheadMs") {
        None => None,
        Some(v) => Some(get_u64(env, v, "maxAheadMs")?),
    };
    let random_start = match o.get("randomStart") {
        None => None,
        Some(v) => Some(get_bool(env, v, "randomStart")?),
    };
    let random_seed = match o.get("randomSeed") {
        None => None,
        Some(v) => Some(get_u64(env, v, "randomSeed")?),
    };
    // Defaults, the overflow check and the seed rule: the host layer's, as in every runtime.
    snowmint_host::options(
        &snowmint_host::JS_NAMES,
        policy,
        max_ahead_ms,
        random_start,
        random_seed,
    )
    .map_err(|e| code_err(env, &e.message, e.code))
}

impl Generator {
    /// Reads the injected clock once, in the layout's unit, as Unix nanoseconds. A JS exception thrown by
    /// the clock is left pending (`ClockFault::Host`); a value that is not a number or a bigint is
    /// `ClockFault::WrongType`; a bad reading is `ClockFault::Core`.
    fn read_clock(&self) -> std::result::Result<u64, ClockFault<()>> {
        let env = self.env;
        let mut f = ptr::null_mut();
        let mut undefined = ptr::null_mut();
        let mut out = ptr::null_mut();
        unsafe {
            sys::napi_get_reference_value(env, self.clock, &mut f);
            if f.is_null() {
                return Err(ClockFault::Core(snowmint::Error::InvalidClock {
                    reason: "the clock function is gone",
                }));
            }
            sys::napi_get_undefined(env, &mut undefined);
            if sys::napi_call_function(env, undefined, f, 0, ptr::null(), &mut out)
                != sys::Status::napi_ok
            {
                return Err(ClockFault::Host(()));
            }
        }
        match type_of(env, out) {
            sys::ValueType::napi_number => self
                .unit
                .f64_to_ns(get_double(env, out))
                .map_err(ClockFault::Core),
            sys::ValueType::napi_bigint => match get_bigint_u64(env, out) {
                Some(r) => self.unit.to_ns(r).map_err(ClockFault::Core),
                None => Err(ClockFault::Core(snowmint::Error::InvalidClock {
                    reason: "bigint reading is negative or not below 2^64",
                })),
            },
            _ => Err(ClockFault::WrongType(snowmint::Error::InvalidClock {
                reason: "the clock must return a number or a bigint",
            })),
        }
    }

    /// Runs a mint through the core's host loop with the right clock. Under 'wait'/'strict' the core's
    /// wait is slept on this thread (JavaScript cannot sleep otherwise); a clock that does not move
    /// between waits ends in TOO_FAR_AHEAD (the core's rule).
    #[inline]
    pub(crate) fn mint<T>(
        &self,
        run: impl FnOnce(&dyn snowmint::Clock) -> snowmint::Result<T>,
    ) -> Result<T> {
        let env = self.env;
        if self.clock.is_null() {
            return run(&FastClock).js(env);
        }
        // The host layer's clock adapter: the clock's own exception stays pending, a wrong type is a
        // TypeError, anything else the core's error.
        match snowmint_host::with_host_clock(|| self.read_clock(), |c| run(c)) {
            Ok(v) => Ok(v),
            Err(ClockFault::Host(())) => Err(napi::Error::from_status(Status::PendingException)),
            Err(ClockFault::WrongType(e)) => Err(throw(
                env,
                Kind::Type,
                e.code().as_str(),
                &e.to_string(),
                &[],
            )),
            Err(ClockFault::Core(e)) => Err(core_err(env, e)),
        }
    }
}

#[napi]
impl Generator {
    /// `new Generator({ nodeId, layout?, clock?, policy?, maxAheadMs?, randomStart?, randomSeed?,
    /// stateFile? })`. `stateFile` (a path, e.g. `/dev/shm/orders.snowmint`) keeps the state word in a
    /// memory-mapped file shared by every process that opens it with the same layout and node ID (else
    /// `STATE_FILE_MISMATCH`): Node cluster workers mint under one node ID with no duplicates.
    #[napi(
        constructor,
        ts_args_type = "options: { nodeId: number | bigint | string; layout?: PresetName | Layout; clock?: () => number | bigint; policy?: 'wait' | 'fail' | 'strict'; maxAheadMs?: number | bigint; randomStart?: boolean; randomSeed?: bigint | number; stateFile?: string | null }"
    )]
    pub fn new(env: Env, this: This<'_>, options: Unknown<'_>) -> Result<Self> {
        let env = env.raw();
        let this = this.object.raw();
        let o = Opts::new(
            env,
            raw_of(&options),
            "Generator options",
            &snowmint_host::JS_GENERATOR_KEYS,
        )?;
        let node_raw = o.required("nodeId", "Generator options")?;
        if o.get("waitForNodeMs").is_some_and(|w| !is_nullish(env, w)) {
            return Err(type_err(
                env,
                "waitForNodeMs is how long Generator.open waits for a lease source's node ID: use await Generator.open({ nodeId, waitForNodeMs })",
            ));
        }
        let layout = layout_arg(env, o.get("layout"))?;
        let node_id = match type_of(env, node_raw) {
            sys::ValueType::napi_string => {
                let source = get_string(env, node_raw)?;
                match coord::NodeSource::parse(&source) {
                    Ok(coord::NodeSource::Lease(_)) => {
                        return Err(throw(
                            env,
                            Kind::Error,
                            ErrorCode::InvalidArgument.as_str(),
                            &{
                                let shown = coord::source::redacted(&source);
                                format!("node source {shown:?} is a lease source: it claims a node ID over the network, so open it with `await Generator.open({{ nodeId: {shown:?} }})`")
                            },
                            &[],
                        ))
                    }
                    Ok(parsed) => parsed
                        .resolve(&source, &layout)
                        .map_err(|e| coord_err(env, e))?,
                    Err(e) => return Err(coord_err(env, e)),
                }
            }
            _ => get_u64_as(env, node_raw, "nodeId", ErrorCode::NodeIdOutOfRange)?,
        };
        let options = generator_options(env, &o)?;
        let state_file = match o.get("stateFile") {
            None => None,
            Some(v) if type_of(env, v) == sys::ValueType::napi_null => None,
            Some(v) if type_of(env, v) == sys::ValueType::napi_string => Some(get_string(env, v)?),
            Some(_) => return Err(type_err(env, "stateFile must be a path string")),
        };
        let clock = match o.get("clock") {
            None => ptr::null_mut(),
            Some(v) if type_of(env, v) == sys::ValueType::napi_null => ptr::null_mut(),
            Some(v) => {
                if type_of(env, v) != sys::ValueType::napi_function {
                    return Err(type_err(
                        env,
                        "clock must be a function returning a number or a bigint",
                    ));
                }
                // The generator's object holds the function (under a fresh symbol, fixed); the Rust side
                // keeps only a weak reference, so a clock that refers back to its generator does not keep
                // the pair alive forever. The object is alive whenever the generator is used.
                let mut r = ptr::null_mut();
                unsafe {
                    let mut key = ptr::null_mut();
                    sys::napi_create_symbol(env, ptr::null_mut(), &mut key);
                    let keep = hidden(key, v);
                    if sys::napi_define_properties(env, this, 1, &keep) != sys::Status::napi_ok
                        || sys::napi_create_reference(env, v, 0, &mut r) != sys::Status::napi_ok
                    {
                        return Err(napi::Error::from_status(Status::PendingException));
                    }
                }
                r
            }
        };
        // The options first, then the state file: the host layer's rule.
        let built =
            snowmint_host::state_file::shared_generator::<()>(layout, node_id, options, || {
                Ok(state_file.as_ref().map(std::path::PathBuf::from))
            })
            .map_err(|e| match e {
                Refused::Options(e) => core_err(env, e),
                Refused::Path(()) => unreachable!("a path string is always a path"),
                Refused::StateFile { path, error } => throw(
                    env,
                    Kind::Error,
                    error.code().as_str(),
                    &Refused::<()>::state_file_message(&path, &error),
                    &[],
                ),
            });
        let gen = match built {
            Ok(g) => g,
            Err(e) => {
                if !clock.is_null() {
                    unsafe { sys::napi_delete_reference(env, clock) };
                }
                return Err(e);
            }
        };
        Ok(Generator {
            unit: layout.clock_reader(),
            gen: Gen::Plain(gen),
            clock,
            env,
            fast: Cell::new(ptr::null()),
            index: Cell::new(0),
            plain_window: OwnWindow::new(),
            lease_window: OwnWindow::new(),
        })
    }

    /// The next ID.
    #[napi]
    pub fn next_id(&self) -> Result<u64> {
        let g = match &self.gen {
            Gen::Plain(g) => g,
            Gen::Leased(l) => return self.leased_next_id(l).map_err(|e| coord_err(self.env, e)),
        };
        if self.clock.is_null() {
            // The host clock, statically dispatched (under 'fail' the core never asks to wait), out of
            // the object's own window.
            // SAFETY: this environment's thread, the system clock (see `plain_window`); the
            // generator is the object's.
            return unsafe { self.plain_window.next_id(g, snowmint::sleep_ns) }.js(self.env);
        }
        self.mint(|clock| g.next_id_with(clock, snowmint::sleep_ns))
    }

    /// The next ID as a decimal string (for JSON).
    #[napi]
    pub fn next_id_string(&self) -> Result<String> {
        let id = self.next_id()?;
        Ok(Encoding::Decimal.encode(id).as_str().to_owned())
    }

    /// `n` consecutive IDs from one clock reading, in one atomic step.
    #[napi(ts_args_type = "n: number")]
    pub fn next_ids(&self, n: Unknown<'_>) -> Result<BigUint64Array> {
        let env = self.env;
        let n = snowmint::check_batch(get_u64(env, raw_of(&n), "n")?).js(env)?;
        let mut out = vec![0u64; n];
        self.fill(&mut out)?;
        Ok(BigUint64Array::new(out))
    }

    /// The next ID as a Number: only for layouts of at most 53 bits (e.g. `js53`).
    #[napi]
    pub fn next_id_number(&self) -> Result<f64> {
        let bits = self.gen.layout().total_bits();
        if bits > 53 {
            return Err(throw(
                self.env,
                Kind::Error,
                ErrorCode::InvalidArgument.as_str(),
                &format!("nextIdNumber needs a layout of at most 53 bits (this one has {bits}); use nextId() for a bigint or the 'js53' layout"),
                &[],
            ));
        }
        Ok(self.next_id()? as f64)
    }

    /// The layout IDs are minted in.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.gen.layout(),
        }
    }

    /// The node ID (before any offset): a Number when the layout's node field fits 2^53 - 1, else a
    /// bigint (`JsNumbers`).
    #[napi(getter, ts_return_type = "number | bigint")]
    pub fn node_id(&self) -> Unknown<'static> {
        let node_id = JsNumbers::node_id(self.gen.layout());
        let v = int(self.env, self.gen.node_id(), node_id);
        unsafe { Unknown::from_raw_unchecked(self.env, v) }
    }

    /// 'wait', 'fail' or 'strict'.
    #[napi(getter, ts_return_type = "'wait' | 'fail' | 'strict'")]
    pub fn policy(&self) -> &'static str {
        match &self.gen {
            Gen::Plain(g) => g.policy().name(),
            Gen::Leased(l) => l.sequencer().options().policy.name(),
        }
    }

    /// What this generator has done since it was built (SPEC §6a): a plain object of Numbers, a new
    /// one each call. With a state file: this process's generator; with a lease source: summed over
    /// every lease it held.
    #[napi]
    pub fn stats(&self) -> GeneratorStats {
        self.close_own();
        GeneratorStats::from(match &self.gen {
            Gen::Plain(g) => g.stats(),
            Gen::Leased(l) => l.stats(),
        })
    }

    /// The high-water mark (SPEC §2): the next free logical position, a bigint. Persist it (at
    /// shutdown, or periodically) and pass it to `restore()` after a restart: no ID repeats, even if the
    /// clock went back while the process was down. `INVALID_ARGUMENT` under a lease source.
    #[napi]
    pub fn high_water_mark(&self) -> Result<u64> {
        let g = self.plain()?;
        self.close_own();
        Ok(g.state())
    }

    /// Continues from a persisted high-water mark (a bigint, or its decimal string); never moves
    /// backwards.
    #[napi(ts_args_type = "mark: bigint | string")]
    pub fn restore(&self, mark: Unknown<'_>) -> Result<()> {
        let (env, v) = (self.env, raw_of(&mark));
        let mark = match type_of(env, v) {
            sys::ValueType::napi_string => snowmint::Encoding::Decimal
                .parse(&get_string(env, v)?)
                .js(env)?,
            sys::ValueType::napi_bigint => get_bigint_u64(env, v)
                .ok_or_else(|| range_err(env, "mark must be a bigint in 0n..2^64n"))?,
            _ => return Err(type_err(env, "mark must be a bigint or a decimal string")),
        };
        let g = self.plain()?;
        self.close_own();
        g.restore(mark);
        Ok(())
    }

    /// The state file's path, or null (the state is in this process).
    #[napi(getter)]
    pub fn state_file(&self) -> Option<String> {
        self.state_file_ref()
            .map(|f| f.path().to_string_lossy().into_owned())
    }

    /// Writes the state file to the storage device and waits for it (msync): after this a crash or
    /// power loss cannot take the file back past the present state. `INVALID_ARGUMENT` without a file.
    #[napi]
    pub fn flush(&self) -> Result<()> {
        self.file()?.flush().js(self.env)
    }

    /// Throws `STATE_FILE_MISMATCH` if the state file was unlinked or replaced while in use (processes
    /// that open the path now would get another file). `INVALID_ARGUMENT` without a file.
    #[napi]
    pub fn verify_state_file(&self) -> Result<()> {
        self.file()?.verify().js(self.env)
    }

    /// The lease held (`nodeId`, `fencingToken`, `expiresAt`), or null: a fixed node ID, or detached.
    #[napi(
        getter,
        ts_return_type = "{ nodeId: number | bigint; fencingToken: bigint; expiresAt: Date } | null"
    )]
    pub fn lease(&self) -> Result<Unknown<'static>> {
        let env = self.env;
        let lease = match &self.gen {
            Gen::Leased(l) if l.known_state() == coord::SequencerState::Attached => l.current(),
            _ => None,
        };
        let mut out = ptr::null_mut();
        match lease {
            None => unsafe {
                sys::napi_get_null(env, &mut out);
            },
            Some(l) => unsafe {
                sys::napi_create_object(env, &mut out);
                let node_id = JsNumbers::node_id(self.gen.layout());
                set(env, out, "nodeId", int(env, l.node_id(), node_id));
                set(env, out, "fencingToken", big(env, l.fencing_token()));
                let mut date = ptr::null_mut();
                sys::napi_create_date(env, l.expires_unix_ms() as f64, &mut date);
                set(env, out, "expiresAt", date);
            },
        }
        Ok(unsafe { Unknown::from_raw_unchecked(env, out) })
    }

    /// 'attached', 'detached' or 'destroyed' (a fixed node ID is always 'attached'); never waits on the
    /// network (a detached generator learns of a destruction when it attaches or mints).
    #[napi(getter, ts_return_type = "'attached' | 'detached' | 'destroyed'")]
    pub fn state(&self) -> &'static str {
        match &self.gen {
            Gen::Plain(_) => "attached",
            Gen::Leased(l) => state_name(l.known_state()),
        }
    }

    /// Releases the lease (minting then throws LEASE_LOST until `attach()`); resolves at once for a
    /// fixed node ID. The store is asked on a worker thread.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn detach(&self) -> AsyncTask<CoordTask> {
        self.close_own();
        AsyncTask::new(CoordTask::op(&self.gen, Op::Detach))
    }

    /// Claims a node ID again (most likely another one); on a worker thread.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn attach(&self) -> AsyncTask<CoordTask> {
        self.close_own();
        AsyncTask::new(CoordTask::op(&self.gen, Op::Attach))
    }

    /// Releases the lease now (as `detach()`); the keeper thread stops, nothing keeps the process alive.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<CoordTask> {
        self.close_own();
        AsyncTask::new(CoordTask::op(&self.gen, Op::Detach))
    }

    /// `await Generator.open({ nodeId, layout?, policy?, maxAheadMs?, randomStart?, randomSeed?,
    /// waitForNodeMs?, stateFile? })`: any node source; a lease source (`file:///DIR`, `etcd://…`,
    /// `postgres://…`) claims a node ID on a worker thread (the event loop keeps running). With every
    /// node ID held, `waitForNodeMs` (or the source's `?wait=`) waits up to that long for one to come
    /// free. With `stateFile`, a lease is one per host: every process that opens the same file mints
    /// under the node ID the first one claimed, and the last one to close releases it.
    #[napi(
        ts_args_type = "options: { nodeId: number | bigint | string; layout?: PresetName | Layout; policy?: 'wait' | 'fail' | 'strict'; maxAheadMs?: number | bigint; randomStart?: boolean; randomSeed?: bigint | number; waitForNodeMs?: number | bigint; stateFile?: string | null }",
        ts_return_type = "Promise<Generator>"
    )]
    pub fn open(env: Env, options: Unknown<'_>) -> Result<AsyncTask<CoordTask>> {
        let raw_env = env.raw();
        let o = Opts::new(
            raw_env,
            raw_of(&options),
            "Generator options",
            &snowmint_host::JS_GENERATOR_KEYS,
        )?;
        if o.get("clock").is_some_and(|c| !is_nullish(raw_env, c)) {
            return Err(type_err(
                raw_env,
                "Generator.open takes no clock: leases mint on the system clock (use new Generator for an injected clock)",
            ));
        }
        // With a lease source, the lease is shared by every process of the host that opens this file.
        let state_file = match o.get("stateFile") {
            Some(f) if !is_nullish(raw_env, f) => match type_of(raw_env, f) {
                sys::ValueType::napi_string => {
                    Some(std::path::PathBuf::from(get_string(raw_env, f)?))
                }
                _ => return Err(type_err(raw_env, "stateFile must be a path string")),
            },
            _ => None,
        };
        let node_raw = o.required("nodeId", "Generator options")?;
        let source = match type_of(raw_env, node_raw) {
            sys::ValueType::napi_string => get_string(raw_env, node_raw)?,
            _ => get_u64(raw_env, node_raw, "nodeId")?.to_string(),
        };
        let layout = layout_arg(raw_env, o.get("layout"))?;
        let options = generator_options(raw_env, &o)?;
        let wait_for_node =
            match o.get("waitForNodeMs") {
                Some(w) if !is_nullish(raw_env, w) => Some(std::time::Duration::from_millis(
                    get_u64(raw_env, w, "waitForNodeMs")?,
                )),
                _ => None,
            };
        Ok(AsyncTask::new(CoordTask {
            op: Op::Open {
                source,
                layout,
                options,
                wait_for_node,
                state_file,
            },
        }))
    }
}

impl Generator {
    /// The state file this generator's state lives in, if any.
    fn state_file_ref(&self) -> Option<&StateFile> {
        match &self.gen {
            Gen::Plain(g) => g.state_holder().state_file(),
            Gen::Leased(_) => None,
        }
    }

    /// The generator of a fixed node ID (a lease source's store keeps its own state: no mark).
    pub(crate) fn plain(&self) -> Result<&SharedGenerator<SharedState>> {
        match &self.gen {
            Gen::Plain(g) => Ok(g),
            Gen::Leased(_) => Err(throw(
                self.env,
                Kind::Error,
                ErrorCode::InvalidArgument.as_str(),
                "a generator under a lease source has no high-water mark to persist: its lease store keeps its state",
                &[],
            )),
        }
    }
    pub(crate) fn file(&self) -> Result<&StateFile> {
        self.state_file_ref().ok_or_else(|| {
            throw(
                self.env,
                Kind::Error,
                ErrorCode::InvalidArgument.as_str(),
                "this generator has no state file (pass stateFile)",
                &[],
            )
        })
    }
    /// Mints under a lease: one attempt on the current lease's generator out of the object's own window;
    /// anything else is the coord crate's full path (`next_id_local`, which never asks the store on this
    /// thread: it waits for the keeper at the reservation, or fails with LEASE_LOST or
    /// SEQUENCER_DESTROYED). That path mints out of the thread's window: the object's own is closed
    /// before it, and the thread's after it, so the IDs keep their order.
    fn leased_next_id(&self, l: &coord::SequencerGenerator) -> coord::Result<u64> {
        if let Some(lease) = l.current() {
            let g = lease.generator();
            // SAFETY: this environment's thread, the system clock; every lease the source held lives
            // as long as the source, which the object holds.
            let minted = unsafe { self.lease_window.next_id(g, snowmint::sleep_ns) };
            if let Ok(id) = minted {
                return Ok(id);
            }
        }
        self.close_own();
        let minted = l.next_id_local();
        if let Some(lease) = l.current() {
            lease.generator().close_thread_window();
        }
        minted
    }

    /// Closes the object's own window before its generator is asked for anything else.
    fn close_own(&self) {
        // SAFETY: this environment's thread; the generators outlive the windows.
        unsafe {
            self.plain_window.close();
            self.lease_window.close();
        }
    }

    /// Fills `out` with consecutive IDs (one atomic step).
    pub(crate) fn fill(&self, out: &mut [u64]) -> Result<()> {
        self.close_own();
        match &self.gen {
            Gen::Plain(g) => self.mint(|clock| g.next_ids_with(clock, snowmint::sleep_ns, out)),
            Gen::Leased(l) => l.next_ids_local(out).map_err(|e| coord_err(self.env, e)),
        }
    }

    /// A generator object for a lease held by `l` (created by `Generator.open` or `Sequencer.attach`).
    pub(crate) fn leased(env: sys::napi_env, l: coord::SequencerGenerator) -> Generator {
        Generator {
            unit: l.layout().clock_reader(),
            gen: Gen::Leased(Arc::new(l)),
            clock: ptr::null_mut(),
            env,
            fast: Cell::new(ptr::null()),
            index: Cell::new(0),
            plain_window: OwnWindow::new(),
            lease_window: OwnWindow::new(),
        }
    }
}

fn state_name(s: coord::SequencerState) -> &'static str {
    snowmint_host::sequencer_state_name!(coord::SequencerState, s)
}
