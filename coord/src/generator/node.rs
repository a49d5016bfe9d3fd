//! [`NodeGenerator`]: a generator whose node ID comes from a node source, fixed or leased.

use std::sync::Arc;

use snowmint::{Layout, Options, SharedGenerator};

use crate::base::error::{Error, Result};
use crate::base::store::Store;
use crate::base::time::{SystemTime, Time};
use crate::lease::{Lease, LeaseOptions, LeaseState};
use crate::sequencer::Sequencer;
use crate::source::NodeSource;
use crate::stores::open::open_store;

/// A generator whose node ID comes from a node source: fixed (a number, `env`, `k8s`, `ip`) or held
/// under a lease (`file://`, `etcd://`, `postgres://`), released when it is dropped.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("snowmint-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap(); // a store path that does not exist is STORE_NOT_FOUND
/// let url = format!("file://{}", dir.display()); // the sequencer `default`, created on first use
/// let gen = snowmint_coord::NodeGenerator::open(&url, snowmint::Layout::twitter(), Default::default())?;
/// let lease = gen.lease().expect("a lease source");
/// println!("node {} (fencing token {}, expires {})", lease.node_id(), lease.fencing_token(), lease.expires_unix_ms());
/// let (a, b) = (gen.next_id()?, gen.next_id()?);
/// assert!(b > a);
/// # drop(gen); std::fs::remove_dir_all(dir).unwrap();
/// # Ok::<(), snowmint_coord::Error>(())
/// ```
#[derive(Debug)]
pub struct NodeGenerator {
    inner: Inner,
}

#[derive(Debug)]
// Shuttle's locks (the concurrency model's feature, coord/src/base/sync.rs) make a lease much larger.
#[cfg_attr(feature = "shuttle", allow(clippy::large_enum_variant))]
enum Inner {
    /// A plain generator on a fixed node ID, minting by the clock given (the system clock on its fast path).
    Plain(SharedGenerator, Arc<dyn Time>),
    Leased(Lease),
}

impl NodeGenerator {
    /// Opens `source` for `layout` with the system clock and default lease options.
    pub fn open(source: &str, layout: Layout, options: Options) -> Result<NodeGenerator> {
        NodeGenerator::open_with(
            source,
            layout,
            options,
            Arc::new(SystemTime),
            LeaseOptions::default(),
        )
    }

    /// Opens `source` with a state file: a lease source's lease is then one per host, shared by every
    /// process that opens the same file ([`LeaseOptions::state_file`]); a fixed node ID opens as
    /// [`NodeGenerator::open`] does. The system clock, default lease options otherwise.
    pub fn open_shared(
        source: &str,
        layout: Layout,
        options: Options,
        state_file: impl Into<std::path::PathBuf>,
    ) -> Result<NodeGenerator> {
        NodeGenerator::open_with(
            source,
            layout,
            options,
            Arc::new(SystemTime),
            LeaseOptions {
                state_file: Some(state_file.into()),
                ..LeaseOptions::default()
            },
        )
    }

    /// Opens `source` with a clock and lease options (the TTL comes from the source's `?ttl=`; its
    /// `?wait=`, when given, sets [`LeaseOptions::wait_for_node`]).
    pub fn open_with(
        source: &str,
        layout: Layout,
        options: Options,
        time: Arc<dyn Time>,
        lease_options: LeaseOptions,
    ) -> Result<NodeGenerator> {
        let parsed = NodeSource::parse(source)?;
        let NodeSource::Lease(l) = &parsed else {
            let node = parsed.resolve(source, &layout)?;
            return Ok(NodeGenerator {
                inner: Inner::Plain(SharedGenerator::new(layout, node, options)?, time),
            });
        };
        let store = open_store(&l.store)
            .map_err(|e| e.context(format!("node source {:?}", crate::source::redacted(source))))?;
        NodeGenerator::lease_from(
            store,
            &l.sequencer,
            layout,
            options,
            time,
            LeaseOptions {
                ttl: l.ttl,
                wait_for_node: if l.wait.is_zero() {
                    lease_options.wait_for_node
                } else {
                    l.wait
                },
                ..lease_options
            },
        )
    }

    /// A generator under a lease on `store`'s sequencer `name`: created with `layout` and all of its node
    /// IDs if missing; if it exists, its layout must be `layout` (`SEQUENCER_CONFLICT` otherwise).
    pub fn lease_from(
        store: Arc<dyn Store>,
        name: &str,
        layout: Layout,
        options: Options,
        time: Arc<dyn Time>,
        lease_options: LeaseOptions,
    ) -> Result<NodeGenerator> {
        let lease = Sequencer::for_layout(store, name, layout, options, time, lease_options)?
            .into_lease()?;
        Ok(NodeGenerator {
            inner: Inner::Leased(lease),
        })
    }

    /// The node ID.
    pub fn node_id(&self) -> u64 {
        match &self.inner {
            Inner::Plain(g, _) => g.node_id(),
            Inner::Leased(l) => l.node_id(),
        }
    }

    /// The lease, for a lease source.
    pub fn lease(&self) -> Option<&Lease> {
        match &self.inner {
            Inner::Plain(..) => None,
            Inner::Leased(l) => Some(l),
        }
    }

    /// What this generator has done ([`snowmint::Stats`]; for a lease source, [`Lease::stats`]).
    pub fn stats(&self) -> snowmint::Stats {
        match &self.inner {
            Inner::Plain(g, _) => g.stats(),
            Inner::Leased(l) => l.stats(),
        }
    }

    /// The lease's state (`None` for a fixed node ID, which never changes).
    pub fn state(&self) -> Option<LeaseState> {
        self.lease().map(Lease::state)
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        match &self.inner {
            Inner::Plain(g, _) => g.layout(),
            Inner::Leased(l) => l.generator().layout(),
        }
    }

    /// Mints one ID.
    #[inline]
    pub fn next_id(&self) -> Result<u64> {
        match &self.inner {
            Inner::Plain(g, t) if t.is_system() => g.next_id().map_err(Error::from),
            Inner::Plain(g, t) => g.next_id_from(&|| Ok(t.unix_ns())).map_err(Error::from),
            Inner::Leased(l) => l.next_id(),
        }
    }

    /// Fills `out` with consecutive IDs from one clock reading.
    pub fn next_ids(&self, out: &mut [u64]) -> Result<()> {
        match &self.inner {
            Inner::Plain(g, t) if t.is_system() => g.next_ids(out).map_err(Error::from),
            Inner::Plain(g, t) => g
                .next_ids_with(&|| Ok(t.unix_ns()), snowmint::sleep_ns, out)
                .map_err(Error::from),
            Inner::Leased(l) => l.next_ids(out),
        }
    }

    /// Releases the lease now (also done on drop); nothing for a fixed node ID.
    pub fn release(&self) -> Result<()> {
        match &self.inner {
            Inner::Plain(..) => Ok(()),
            Inner::Leased(l) => l.release(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::OffsetTime;

    /// A fixed node ID mints by the clock it is given (here a year behind), not the system clock.
    #[test]
    fn a_fixed_node_id_mints_by_the_clock_given() {
        const YEAR_NS: i64 = 365 * 86_400 * 1_000_000_000;
        let time: Arc<dyn Time> = Arc::new(OffsetTime::new(-YEAR_NS));
        let g = NodeGenerator::open_with(
            "3",
            Layout::twitter(),
            Options::default(),
            time.clone(),
            LeaseOptions::default(),
        )
        .unwrap();
        let mut batch = [0u64; 4];
        g.next_ids(&mut batch).unwrap();
        for id in [g.next_id().unwrap(), batch[0]] {
            let d = Layout::twitter().decode(id).unwrap();
            let at_ms = time.unix_ns() / 1_000_000;
            assert_eq!(d.node, 3);
            assert!(
                d.unix_ms <= at_ms && at_ms - d.unix_ms < 60_000,
                "ID of {} ms, the clock given reads {at_ms} ms",
                d.unix_ms
            );
        }
    }
}
