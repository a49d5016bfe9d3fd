//! A generator on a fixed node ID, its state in the process's memory or in a state file: one rule for
//! every binding (Python's `Generator(state_file=…)`, Node's `new Generator({ stateFile })` and
//! `Generator.open`, C's `snowmint_generator_new_file` and `snowmint_generator_open_file`):
//!
//! 1. the options are checked first (a bad layout, node ID or option is refused before the file system
//!    is touched: no state file is created for a generator that could never mint);
//! 2. then the host's path argument is read (a host may read it late, so that an options error is the
//!    one reported when both are wrong);
//! 3. then the state file is opened (or created) for the layout and node ID, and the generator keeps its
//!    state word there; without a path, in the process's memory.

use std::path::PathBuf;
use std::string::String;

use snowmint::state_file::{SharedState, StateFile};
use snowmint::{Layout, Options, SharedGenerator};

/// Why [`shared_generator`] refused.
#[derive(Debug)]
pub enum Refused<P> {
    /// The options (layout, node ID, policy …): the core's error, before the path was read.
    Options(snowmint::Error),
    /// The host's path argument could not be read (its own error, such as a `TypeError`).
    Path(P),
    /// The state file at `path` could not be opened or belongs to another layout or node ID.
    StateFile {
        /// The path as given.
        path: PathBuf,
        /// The core's error (`STATE_FILE_MISMATCH` …).
        error: snowmint::Error,
    },
}

impl<P> Refused<P> {
    /// The message of a [`Refused::StateFile`] as the bindings show it: the path, then the core's
    /// message (`/dev/shm/orders.snowmint: state file mismatch: …`).
    pub fn state_file_message(path: &std::path::Path, error: &snowmint::Error) -> String {
        std::format!("{}: {error}", path.display())
    }
}

/// The generator for `layout`, `node_id` and `options`, its state in the file `path()` names (`None`:
/// in memory), by the three steps above.
pub fn shared_generator<P>(
    layout: Layout,
    node_id: u64,
    options: Options,
    path: impl FnOnce() -> Result<Option<PathBuf>, P>,
) -> Result<SharedGenerator<SharedState>, Refused<P>> {
    // Bad options are refused before the file system is touched.
    SharedGenerator::new(layout, node_id, options).map_err(Refused::Options)?;
    let state = match path().map_err(Refused::Path)? {
        None => SharedState::memory(),
        Some(path) => match StateFile::open(&path, &layout, node_id) {
            Ok(file) => SharedState::file(file),
            Err(error) => return Err(Refused::StateFile { path, error }),
        },
    };
    SharedGenerator::with_state(layout, node_id, options, state).map_err(Refused::Options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use snowmint::ErrorCode;

    fn twitter() -> Layout {
        Layout::preset("twitter").unwrap()
    }

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(std::format!(
            "snowmint-host-{}-{name}.state",
            std::process::id()
        ))
    }

    #[test]
    fn options_first_then_the_path_then_the_file() {
        // A node ID out of range: refused before the path is even read, so no file is created.
        let path = scratch("never");
        let r = shared_generator::<()>(twitter(), 1 << 20, Options::default(), || {
            panic!("the path was read before the options were checked")
        });
        assert!(matches!(r, Err(Refused::Options(e)) if e.code() == ErrorCode::NodeIdOutOfRange));
        assert!(!path.exists());
        // The host's own path error, after the options.
        let r = shared_generator(twitter(), 1, Options::default(), || Err("not a path"));
        assert!(matches!(r, Err(Refused::Path("not a path"))));
        // In memory.
        let g = shared_generator::<()>(twitter(), 1, Options::default(), || Ok(None)).unwrap();
        assert!(g.state_holder().state_file().is_none());
    }

    #[test]
    fn a_state_file_for_another_node_is_refused_with_its_path() {
        let path = scratch("node");
        let _ = std::fs::remove_file(&path);
        let open = |node| {
            shared_generator::<()>(twitter(), node, Options::default(), || {
                Ok(Some(path.clone()))
            })
        };
        let first = open(1);
        let second = open(2);
        let _ = std::fs::remove_file(&path);
        let g = first.unwrap();
        assert!(g.state_holder().state_file().is_some());
        match second {
            Err(Refused::StateFile { path: p, error }) => {
                assert_eq!(p, path);
                assert_eq!(error.code(), ErrorCode::StateFileMismatch);
                let m = Refused::<()>::state_file_message(&p, &error);
                assert!(m.starts_with(&std::format!("{}: ", path.display())), "{m}");
            }
            Err(other) => panic!("expected a state file mismatch, got {other:?}"),
            Ok(_) => panic!("a state file of node 1 opened for node 2"),
        }
    }
}
