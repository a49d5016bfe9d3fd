//! `Sequencer`: a named sequencer (snowcast's lifecycle) in a store; every call that talks to the store
//! returns a Promise.

use super::*;

const SEQUENCER_KEYS: [&str; 3] = ["store", "layout", "nodeCount"];

/// A named sequencer (snowcast's lifecycle) in a store: `file:///DIR`, `etcd://HOST:PORT/PREFIX` or
/// `postgres://USER@HOST:PORT/DB`. Every call that talks to the store returns a Promise.
#[napi]
pub struct Sequencer {
    pub(crate) inner: Arc<coord::Sequencer>,
}

#[napi]
impl Sequencer {
    /// `await Sequencer.create(name, { store, layout?, nodeCount? })`: creates the sequencer (or a handle
    /// on the existing one with the same configuration; another configuration rejects with
    /// SEQUENCER_CONFLICT).
    #[napi(
        ts_args_type = "name: string, options: { store: string; layout?: PresetName | Layout; nodeCount?: number | bigint }",
        ts_return_type = "Promise<Sequencer>"
    )]
    pub fn create(
        env: Env,
        name: Unknown<'_>,
        options: Unknown<'_>,
    ) -> Result<AsyncTask<CoordTask>> {
        let raw = env.raw();
        let name = string_arg(raw, raw_of(&name), "name")?;
        let o = Opts::new(raw, raw_of(&options), "Sequencer options", &SEQUENCER_KEYS)?;
        let store = string_arg(raw, o.required("store", "Sequencer options")?, "store")?;
        let layout = layout_arg(raw, o.get("layout"))?;
        let nodes = match o.get("nodeCount") {
            None => None,
            Some(v) => Some(get_u64(raw, v, "nodeCount")?),
        };
        Ok(AsyncTask::new(CoordTask {
            op: Op::Create {
                store,
                name,
                layout,
                nodes,
            },
        }))
    }

    /// `await Sequencer.open(name, { store })`: a handle on the existing sequencer (`SEQUENCER_NOT_FOUND`
    /// if there is none).
    #[napi(
        ts_args_type = "name: string, options: { store: string }",
        ts_return_type = "Promise<Sequencer>"
    )]
    pub fn open(env: Env, name: Unknown<'_>, options: Unknown<'_>) -> Result<AsyncTask<CoordTask>> {
        let raw = env.raw();
        let name = string_arg(raw, raw_of(&name), "name")?;
        let o = Opts::new(raw, raw_of(&options), "Sequencer options", &["store"])?;
        let store = string_arg(raw, o.required("store", "Sequencer options")?, "store")?;
        Ok(AsyncTask::new(CoordTask {
            op: Op::OpenSequencer { store, name },
        }))
    }

    /// `await Sequencer.list({ store })`: the names of the sequencers in the store, sorted.
    #[napi(
        ts_args_type = "options: { store: string }",
        ts_return_type = "Promise<string[]>"
    )]
    pub fn list(env: Env, options: Unknown<'_>) -> Result<AsyncTask<CoordTask>> {
        let raw = env.raw();
        let o = Opts::new(raw, raw_of(&options), "Sequencer options", &["store"])?;
        let store = string_arg(raw, o.required("store", "Sequencer options")?, "store")?;
        Ok(AsyncTask::new(CoordTask {
            op: Op::List(store),
        }))
    }

    /// Claims a node ID and resolves a Generator holding it.
    #[napi(ts_return_type = "Promise<Generator>")]
    pub fn attach(&self) -> AsyncTask<CoordTask> {
        AsyncTask::new(CoordTask {
            op: Op::AttachSequencer(self.inner.clone()),
        })
    }

    /// Destroys the sequencer everywhere: every generator of it, in every process, stops minting and
    /// throws SEQUENCER_DESTROYED.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn destroy(&self) -> AsyncTask<CoordTask> {
        AsyncTask::new(CoordTask {
            op: Op::Destroy(self.inner.clone()),
        })
    }

    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.record().name.clone()
    }

    #[napi(getter)]
    pub fn node_count(&self) -> f64 {
        self.inner.record().config.nodes as f64
    }

    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner.layout(),
        }
    }
}
