//! snowmint's Rust benchmarks live in `benches/` (run them with `make bench` or `benches/bench.sh`):
//! the core, the state file and opaque IDs, each side by side with the peers in one run. A crate of
//! their own so that the peers are never dependencies of the core.
