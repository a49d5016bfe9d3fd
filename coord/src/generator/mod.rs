//! The two generators a node source opens to, each in its own file: [`NodeGenerator`] (`node.rs`: a
//! fixed node ID or one lease, for Rust callers and the CLI) and [`SequencerGenerator`]
//! (`sequencer.rs`: a sequencer handle plus its current lease, what the language bindings wrap, with
//! [`Opened`] for what a source opens to); the generators given back before a fork ([`prefork`]); and
//! the bindings' sequencer calls on the store a URL names (`by_url.rs`).

mod by_url;
mod node;
pub mod prefork;
mod sequencer;

pub use by_url::{create_sequencer, list_sequencers, open_sequencer};
pub use node::NodeGenerator;
pub use sequencer::{Opened, SequencerGenerator};
