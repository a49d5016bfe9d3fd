//! A sequencer handle on the store a URL names: what the bindings' `create_sequencer`,
//! `open_sequencer` and `list_sequencers` call.

use std::sync::Arc;

use snowmint::{Layout, Options};

use crate::base::error::{Error, Result};
use crate::base::store::Store;
use crate::base::time::SystemTime;
use crate::lease::LeaseOptions;
use crate::sequencer::Sequencer;
use crate::source::NodeSource;
use crate::stores::open::open_store;

/// The store a URL names (`file:///DIR`, `etcd://…`, `postgres://…`) and the lease options its `?ttl=`
/// sets.
/// (`create`: an embedded store's missing directory is created, [`crate::source::create_store`].)
fn store_at(url: &str, create: bool) -> Result<(Arc<dyn Store>, LeaseOptions)> {
    let open = if create {
        crate::stores::open::create_store
    } else {
        open_store
    };
    match NodeSource::parse(url)? {
        NodeSource::Lease(l) => Ok((
            open(&l.store).map_err(|e| e.context(format!("store {url:?}")))?,
            LeaseOptions {
                ttl: l.ttl,
                wait_for_node: l.wait,
                ..LeaseOptions::default()
            },
        )),
        _ => Err(Error::invalid(format!(
            "store {url:?}: not a store URL (file:///DIR, etcd://HOST:PORT/PREFIX or postgres://USER@HOST:PORT/DB)"
        ))),
    }
}

/// [`Sequencer::create`] on the store `url` names (its `?ttl=` is the lease TTL of the handle).
pub fn create_sequencer(
    url: &str,
    name: &str,
    layout: Layout,
    nodes: u64,
    options: Options,
) -> Result<Sequencer> {
    let (store, lease_options) = store_at(url, true)?;
    Sequencer::create_with(
        store,
        Arc::new(SystemTime),
        name,
        layout,
        nodes,
        options,
        lease_options,
    )
}

/// [`Sequencer::open`] on the store `url` names.
pub fn open_sequencer(url: &str, name: &str, options: Options) -> Result<Sequencer> {
    let (store, lease_options) = store_at(url, false)?;
    Sequencer::open_with(store, Arc::new(SystemTime), name, options, lease_options)
}

/// The names of the sequencers in the store `url` names, sorted.
pub fn list_sequencers(url: &str) -> Result<Vec<String>> {
    let (store, _) = store_at(url, false)?;
    let mut names: Vec<String> = store.sequencers()?.into_iter().map(|r| r.name).collect();
    names.sort();
    Ok(names)
}
