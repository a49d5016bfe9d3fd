//! Node.js binding of snowmint (napi-rs): converts JavaScript values to core types and core errors to
//! JavaScript `Error`s with a stable `code`. Sequencing, layouts, parsing and formatting all live in the
//! core crate; nothing here re-implements them.
//!
//! Integer inputs are read exactly: a `bigint` must be non-negative and below 2^64, a `number` must be a
//! whole number no larger than 2^53 - 1 (`snowmint::whole_f64`); anything else is refused, never wrapped
//! or rounded. Wrong JavaScript types are `TypeError`s with `code: 'INVALID_ARGUMENT'` (or
//! `'INVALID_CLOCK'` for a clock reading); every other error (a value out of range, a core or
//! coordination error) is a `SnowmintError` (the package's `Error` subclass, made in `index.js` and
//! handed to the addon by `__setErrorClass`) with the code. Integer outputs are exact too: `nodeId`,
//! `sequence` and `timestampMs` are Numbers when the layout's field fits 2^53 - 1 and bigints
//! otherwise (`snowmint_host::JsNumbers`). The WASM package follows the same rules.
#![deny(clippy::all)]

// The imports the crate's files share: each file takes them, and its siblings' items, with
// `use super::*`.
use std::ffi::{c_char, CString};
use std::ptr;

use napi::bindgen_prelude::{AsyncTask, BigUint64Array, Env, This, Unknown};
use napi::{sys, JsValue, Status};
use napi_derive::napi;
use std::cell::{Cell, UnsafeCell};

use snowmint::state_file::{SharedState, StateFile};
use snowmint_coord as coord;
use snowmint_host::state_file::Refused;
use snowmint_host::window::OwnWindow;
use snowmint_host::{ClockFault, JsNumbers};
use std::sync::Arc;

use snowmint::{Encoding, ErrorCode, FastClock, Options, Order, Policy, SharedGenerator};

mod errors;
mod fast;
mod functions;
mod generator;
mod layout;
mod opaque;
mod range;
mod sequencer;
mod tasks;
mod values;

use errors::*;
use fast::*;
pub use functions::*;
pub use generator::*;
pub use layout::*;
pub use sequencer::*;
pub use tasks::*;
use values::*;
// The module-exports hook napi-rs calls when the addon loads (it installs the fast paths).
pub use fast::install_fast_paths;

type Result<T> = napi::Result<T>;
type Raw = sys::napi_value;
