//! Coordination work on libuv's thread pool (napi `AsyncTask`): the event loop never waits on a store.

use super::*;

/// What a [`CoordTask`] does off the main thread.
pub enum Op {
    Open {
        source: String,
        layout: snowmint::Layout,
        options: Options,
        /// `waitForNodeMs`: how long to wait for a node ID when all are held (`None`: the source's
        /// `?wait=`).
        wait_for_node: Option<std::time::Duration>,
        state_file: Option<std::path::PathBuf>,
    },
    Detach,
    Attach,
    Create {
        store: String,
        name: String,
        layout: snowmint::Layout,
        nodes: Option<u64>,
    },
    OpenSequencer {
        store: String,
        name: String,
    },
    AttachSequencer(Arc<coord::Sequencer>),
    Destroy(Arc<coord::Sequencer>),
    List(String),
    Nothing,
    On(Arc<coord::SequencerGenerator>, bool),
}

/// One blocking coordination call, run by napi on the thread pool; resolves a Promise.
pub struct CoordTask {
    pub(crate) op: Op,
}

impl CoordTask {
    pub(crate) fn op(gen: &Gen, op: Op) -> CoordTask {
        CoordTask {
            op: match gen {
                Gen::Plain(_) => Op::Nothing,
                Gen::Leased(l) => Op::On(l.clone(), matches!(op, Op::Attach)),
            },
        }
    }
}

/// The result of a [`CoordTask`].
pub enum Done {
    Nothing,
    Plain(SharedGenerator<SharedState>),
    Leased(Box<coord::SequencerGenerator>),
    Sequencer(coord::Sequencer),
    Names(Vec<String>),
}

impl napi::Task for CoordTask {
    type Output = std::result::Result<Done, coord::Error>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Self::Output> {
        let op = std::mem::replace(&mut self.op, Op::Nothing);
        Ok(match op {
            Op::Nothing => Ok(Done::Nothing),
            Op::On(l, true) => l.attach().map(|_| Done::Nothing),
            Op::On(l, false) => l.detach().map(|_| Done::Nothing),
            Op::Detach | Op::Attach => Ok(Done::Nothing),
            Op::Open {
                source,
                layout,
                options,
                wait_for_node,
                state_file,
            } => match coord::SequencerGenerator::open_sharing(
                &source,
                layout,
                options,
                wait_for_node,
                state_file.clone(),
            ) {
                Ok(coord::Opened::Plain(n)) => {
                    // A fixed node ID with a state file: the file's state word, as new Generator
                    // (the host layer's rule: the options first, then the state file).
                    snowmint_host::state_file::shared_generator::<()>(layout, n, options, || {
                        Ok(state_file)
                    })
                    .map(Done::Plain)
                    .map_err(|e| match e {
                        Refused::Options(e) => coord::Error::from(e),
                        Refused::Path(()) => unreachable!("the path is given"),
                        Refused::StateFile { path, error } => {
                            coord::Error::from(error).context(path.display().to_string())
                        }
                    })
                }
                Ok(coord::Opened::Leased(g)) => Ok(Done::Leased(g)),
                Err(e) => Err(e),
            },
            Op::Create {
                store,
                name,
                layout,
                nodes,
            } => coord::generator::create_sequencer(
                &store,
                &name,
                layout,
                nodes.unwrap_or(layout.node_count()),
                Options::default(),
            )
            .map(Done::Sequencer),
            Op::OpenSequencer { store, name } => {
                coord::generator::open_sequencer(&store, &name, Options::default())
                    .map(Done::Sequencer)
            }
            Op::AttachSequencer(seq) => coord::SequencerGenerator::attach_new(seq.new_handle())
                .map(|g| Done::Leased(Box::new(g))),
            Op::Destroy(seq) => seq.destroy().map(|_| Done::Nothing),
            Op::List(store) => coord::generator::list_sequencers(&store).map(Done::Names),
        })
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        let raw = env.raw();
        // A rejection carries the Error object itself (with its `code`): nothing is thrown here, where
        // no JavaScript frame could catch it.
        let done = output.map_err(|e| rejection(raw, &e))?;
        let value: Raw = match done {
            Done::Nothing => {
                let mut u = ptr::null_mut();
                unsafe { sys::napi_get_undefined(raw, &mut u) };
                u
            }
            Done::Plain(g) => {
                let gen = Generator {
                    unit: g.layout().clock_reader(),
                    gen: Gen::Plain(g),
                    clock: ptr::null_mut(),
                    env: raw,
                    fast: Cell::new(ptr::null()),
                    index: Cell::new(0),
                    plain_window: OwnWindow::new(),
                    lease_window: OwnWindow::new(),
                };
                unsafe {
                    <Generator as napi::bindgen_prelude::ToNapiValue>::to_napi_value(raw, gen)?
                }
            }
            Done::Leased(l) => unsafe {
                <Generator as napi::bindgen_prelude::ToNapiValue>::to_napi_value(
                    raw,
                    Generator::leased(raw, *l),
                )?
            },
            Done::Sequencer(s) => unsafe {
                <Sequencer as napi::bindgen_prelude::ToNapiValue>::to_napi_value(
                    raw,
                    Sequencer { inner: Arc::new(s) },
                )?
            },
            Done::Names(names) => unsafe {
                <Vec<String> as napi::bindgen_prelude::ToNapiValue>::to_napi_value(raw, names)?
            },
        };
        Ok(unsafe { Unknown::from_raw_unchecked(raw, value) })
    }
}
