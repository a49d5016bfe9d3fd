//! # snowmint
//!
//! Unique, time-ordered 64-bit IDs of the Snowflake family, minted locally with no coordination.
//!
//! This crate is the whole algorithm, `#![no_std]`: layouts ([`Layout`]: bit widths, field order, tick,
//! epoch, and the presets of Twitter, Discord, Instagram, Sonyflake, Hazelcast, snowcast, a 53-bit
//! JavaScript-safe one and Chronicle-style decimal IDs), generation ([`Generator`] for one thread,
//! [`SharedGenerator`] lock-free for many), decoding and string forms. The Python, Node, WASM and C
//! bindings wrap it and emit bit-identical IDs.
//!
//! The core never reads a clock and never sleeps: it takes clock readings (Unix nanoseconds) and answers
//! with an ID, an error, or how long to wait. With the `std` feature (on by default) it also offers the
//! system clock ([`SystemClock`], and [`FastClock`]: the same clock, exact at the millisecond, mostly read
//! through the CPU's time-stamp counter; the default of `next_id()`) and methods that sleep for you.
//!
//! ```
//! use snowmint::{Layout, Options, SharedGenerator};
//!
//! let gen = SharedGenerator::new(Layout::preset("discord")?, 7, Options::default())?;
//! let id = gen.next_id()?;
//! let d = gen.layout().decode(id)?;
//! assert_eq!(d.node, 7);
//! println!("{id} minted at {} ({})", d.iso(), snowmint::Encoding::Base58.encode(id));
//! # Ok::<(), snowmint::Error>(())
//! ```
//!
//! ## One node ID for many processes
//! With `std` on Unix, [`SharedGenerator::open_file`] keeps the state word in a memory-mapped
//! [`StateFile`] shared by every process that opens the same path (Chronicle style): the workers of one
//! service mint under one node ID with no duplicates, a restarted process continues after the last ID,
//! and a forked child is safe by construction. See [`state_file`] for the format, errors and durability.
//!
//! ## Serde (feature `serde`, off by default, no_std)
//! `Layout`, `LayoutConfig`, `Order` and `Decoded` implement `Serialize` and `Deserialize` (serde
//! without its `std` feature and without allocation, so the feature builds for bare-metal targets too).
//! A `Layout` is written as `preset` (the preset's name or `null`) beside the nine `LayoutConfig`
//! fields; reading one back runs the same validation as [`Layout::new`] (a preset's fields must be the
//! preset's), so no invalid `Layout` comes through serde. `Decoded`'s `id` is a decimal string in
//! human-readable formats such as JSON (exact in JavaScript) and a `u64` in binary ones; reading
//! accepts both. `cargo add snowmint --features serde` (from this repository: `cargo add --path core
//! --features serde`).
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use snowmint::{Layout, LayoutConfig};
//! let json = serde_json::to_string(&Layout::twitter()).unwrap();
//! assert!(json.starts_with(r#"{"preset":"twitter","timestamp_bits":41,"#));
//! assert_eq!(serde_json::from_str::<Layout>(&json).unwrap(), Layout::twitter());
//! // 41 + 10 + 13 bits: rejected as Layout::new rejects it.
//! let too_wide = LayoutConfig { sequence_bits: 13, ..LayoutConfig::default() };
//! let err = serde_json::from_value::<Layout>(serde_json::json!({
//!     "preset": null, "timestamp_bits": 41, "node_bits": 10, "sequence_bits": 13,
//!     "order": "timestamp_node_sequence", "tick_ns": 1000000, "epoch_ms": 1288834974657u64,
//!     "node_id_offset": 0, "use_sign_bit": false, "node_split_bits": 0,
//! })).unwrap_err();
//! assert!(err.to_string().contains(&Layout::new(too_wide).unwrap_err().to_string()));
//! # }
//! ```
//!
//! ## The generation rule
//! For a clock reading at tick `c`, an ID takes logical position `max(c, last + 1)` where a position is
//! `tick << sequence_bits | sequence`. A backwards clock step or a burst past a tick's sequence borrows
//! positions ahead of the clock, at most `max_ahead` (default 15 s) ahead; past that the [`Policy`]
//! decides: `Wait` (sleep for the returned time), `Fail` ([`Error::TooFarAhead`]) or `Strict` (any
//! backwards step is [`Error::ClockMovedBackwards`], as Twitter's original).
#![no_std]
#![warn(missing_docs)]

#[cfg(feature = "std")]
extern crate std;

mod clock;
mod decode;
mod encoding;
mod error;
#[cfg(feature = "std")]
mod fast_clock;
mod generator;
mod layout;
mod names;
mod opaque;
#[cfg(feature = "serde")]
mod serde_impl;
#[cfg(all(feature = "std", unix, target_has_atomic = "64", not(loom)))]
pub mod state_file;
mod stats;
mod time;

#[cfg(feature = "std")]
pub use clock::{sleep_ns, SystemClock};
pub use clock::{Clock, FixedClock};
pub use decode::Decoded;
pub use encoding::{fixed_width_reading, parse_any, parse_any_form, Encoded, Encoding, ENCODINGS};
pub use error::{Error, ErrorCode, ParseErrorKind, Result};
#[cfg(feature = "std")]
pub use error::{LayoutRecord, StateFileProblem};
#[cfg(feature = "std")]
pub use fast_clock::FastClock;
#[cfg(target_has_atomic = "64")]
pub use generator::shared::{Ceiling, SharedGenerator, StateWord, Unbounded};
pub use generator::{
    check_batch, mix64, Generator, Ids, Mint, Options, Policy, Window, DEFAULT_MAX_AHEAD_NS,
    MAX_BATCH, MAX_WINDOW,
};
pub use layout::{
    whole_f64, ClockReader, ClockUnit, Family, Layout, LayoutConfig, Order, MAX_EPOCH_MS,
    PRESET_NAMES,
};
pub use names::{suggest, GivenName, NameKind};
pub use opaque::{Opaque, OPAQUE_KEY_LEN, OPAQUE_MAX_BITS, OPAQUE_MIN_BITS};
#[cfg(all(feature = "std", unix, target_has_atomic = "64", not(loom)))]
pub use state_file::StateFile;
pub use stats::Stats;
pub use time::{IsoBuf, IsoTime};
