//! Fork detection: `os.register_at_fork`'s hook counts forks in the child (the host layer's guard).

use super::*;

/// Counts a fork in the child: `os.register_at_fork(after_in_child=...)` calls it. Forks that bypass
/// Python's `os.fork` (a C extension calling `fork()`) are counted by the host layer's `pthread_atfork`
/// handler, registered by `snowmint_host::fork::count`.
#[pyfunction]
pub(crate) fn _after_fork_in_child() {
    snowmint_host::fork::note_child();
}
