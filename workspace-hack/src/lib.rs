//! No code: this crate only pins one feature set for shared dependencies (see its Cargo.toml), so each
//! dependency is compiled once for every artifact and test of the workspace.
#![no_std]
