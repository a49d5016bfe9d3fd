//! Opening a store from its URL: the one dispatch point to the stores.

use std::sync::Arc;

use snowmint::ErrorCode;

use crate::base::error::{Error, Result};
use crate::base::store::Store;
use crate::base::url::StoreUrl;

/// What opens a store by its URL: [`open_store`] in production; the code paths that open stores by URL
/// and keep connecting later (a range sequence's global store, [`crate::range::open_pair_through`];
/// the ID service's lease source) take one, so that the deterministic simulation puts its simulated
/// stores behind the same code.
pub type StoreOpener = dyn Fn(&StoreUrl) -> Result<Arc<dyn Store>> + Send + Sync;

/// Opens the store a URL names. **Dispatch point** for the server stores: `etcd://` goes to
/// `crate::etcd::open` and `postgres://` to `crate::postgres::open` (in `etcd.rs` / `postgres.rs`,
/// built with the features `etcd` / `postgres`).
///
/// An embedded store (`file:///DIR`) must exist: a missing directory is `STORE_NOT_FOUND`
/// ([`create_store`] creates it).
pub fn open_store(url: &StoreUrl) -> Result<Arc<dyn Store>> {
    match url {
        StoreUrl::File { dir, max_ahead } => Ok(Arc::new(
            crate::stores::file::FileStore::open(dir)?
                .with_max_ahead(max_ahead.unwrap_or(crate::stores::file::MAX_AHEAD)),
        )),
        #[cfg(feature = "etcd")]
        StoreUrl::Etcd(u) => crate::stores::etcd::open(u),
        #[cfg(feature = "postgres")]
        StoreUrl::Postgres(u) => crate::stores::postgres::open(u),
        #[allow(unreachable_patterns)]
        other => Err(Error::new(
            ErrorCode::StoreUnavailable,
            format!("{other}: this build of snowmint has no support for this store (not built)"),
        )),
    }
}

/// [`open_store`], creating an embedded store whose directory is missing: what creating a sequencer
/// does (the one deliberate act that creates a store).
pub fn create_store(url: &StoreUrl) -> Result<Arc<dyn Store>> {
    match url {
        StoreUrl::File { dir, max_ahead } => Ok(Arc::new(
            crate::stores::file::FileStore::create(dir)?
                .with_max_ahead(max_ahead.unwrap_or(crate::stores::file::MAX_AHEAD)),
        )),
        other => open_store(other),
    }
}
