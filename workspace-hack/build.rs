//! Nothing to build: the build script exists so that the build dependencies above take part in the
//! feature resolution of proc macros (see Cargo.toml).
fn main() {}
