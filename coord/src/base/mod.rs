//! Layer 0, the base: the vocabulary every store and the fleet logic share, importing nothing of the
//! crate above it (coord/tests/layers.rs checks it; ARCHITECTURE.md, "coord in layers").
//!
//! The store contract ([`store`]: the trait, its records, its rules) and what every store computes or
//! refuses alike (names, value floors, layout text, the refusals), store URLs and credentials, the
//! error type, the planted defects' type, and the small process-level helpers (clock, locks, nonces,
//! fork-time lock sections, the host's name).

pub mod defect;
pub mod duration;
pub mod error;
pub mod floor;
pub mod hostname;
pub mod layout;
pub mod lock_sections;
pub mod name;
pub mod nonce;
pub mod store;
pub mod store_errors;
pub mod sync;
pub mod time;
pub mod url;
