//! Opening the two stores of a range sequence by their URLs (the global one connected on first use).

use std::sync::Arc;

use crate::base::defect::{Defect, Hook};
use crate::base::error::Result;
use crate::base::store::Store;
use crate::source::parse_store_url;
use crate::stores::lazy::LazyStore;
use crate::stores::open::{open_store, StoreOpener};

use super::options::RangeOptions;
use super::rows::check_names;

/// Opens the global and the local store of two URLs (one connection when they are the same). The
/// local store is connected now; the global one on first use, so that a process whose datacenter row
/// holds values opens and serves while the global store is unreachable (SPEC §4).
pub fn open_pair(global_url: &str, local_url: &str) -> Result<(Arc<dyn Store>, Arc<dyn Store>)> {
    embedded_stores_exist(global_url, local_url)?;
    open_pair_through(global_url, local_url, Arc::new(open_store))
}

/// An embedded store named by either URL that does not exist is `STORE_NOT_FOUND` before either store
/// is opened, so that nothing is written anywhere (the global store is otherwise opened on first use,
/// after the datacenter row was written). Only the explicit create commands create a store
/// ([`crate::source::create_store`]).
pub(super) fn embedded_stores_exist(global_url: &str, local_url: &str) -> Result<()> {
    // A malformed URL is left to `connect_pair` (INVALID_ARGUMENT naming it).
    let (Ok(g), Ok(l)) = (parse_store_url(global_url), parse_store_url(local_url)) else {
        return Ok(());
    };
    for (what, url) in [("global store", g), ("local store", l)] {
        if let crate::base::url::StoreUrl::File { dir, .. } = url {
            if !dir.is_dir() {
                // The store's own refusal (its message says how to create one); writes nothing.
                crate::stores::file::FileStore::open(dir).map_err(|e| e.context(what))?;
            }
        }
    }
    Ok(())
}

/// [`open_pair`] with the stores opened by `open` (the deterministic simulation's stores; the global
/// store's connection on first use goes through it too).
pub fn open_pair_through(
    global_url: &str,
    local_url: &str,
    open: Arc<StoreOpener>,
) -> Result<(Arc<dyn Store>, Arc<dyn Store>)> {
    connect_pair(global_url, local_url, open, Hook::NONE)
}

/// The checks of a process opened by its stores' URLs, then its stores ([`RangeSequence::open_urls`],
/// and the simulation's stepped allocator with its opener and planted defect).
pub(super) fn checked_pair(
    name: &str,
    dc: &str,
    (global_url, local_url): (&str, &str),
    options: &RangeOptions,
    open: Arc<StoreOpener>,
    defect: Hook,
) -> Result<(Arc<dyn Store>, Arc<dyn Store>)> {
    options.check()?;
    check_names(name, dc)?;
    connect_pair(global_url, local_url, open, defect)
}

/// [`open_pair_through`], with the planted defect `RangeOpenConnectsGlobal` (the simulation's proof):
/// the global store connected now.
pub(super) fn connect_pair(
    global_url: &str,
    local_url: &str,
    open: Arc<StoreOpener>,
    defect: Hook,
) -> Result<(Arc<dyn Store>, Arc<dyn Store>)> {
    let g = parse_store_url(global_url).map_err(|e| e.context("global store"))?;
    let l = parse_store_url(local_url).map_err(|e| e.context("local store"))?;
    let local = open(&l).map_err(|e| e.context("local store"))?;
    let global: Arc<dyn Store> = if g == l {
        local.clone()
    } else if defect.is(Defect::RangeOpenConnectsGlobal) {
        open(&g).map_err(|e| e.context("global store"))? // the defect: connected before it is needed
    } else {
        Arc::new(LazyStore::new(g, open))
    };
    Ok((global, local))
}
