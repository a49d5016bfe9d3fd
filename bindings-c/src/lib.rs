//! C API for snowmint (`#include <snowmint.h>`).
//!
//! A thin layer: it converts C types to the core's, maps the core's errors to `snowmint_result` codes,
//! and never re-implements sequencing, layouts, parsing or formatting. Conventions follow rustls-ffi:
//! every fallible function returns a [`snowmint_result`]; outputs go through `*_out` pointers written
//! only on success; every pointer is NULL-checked; every body runs inside `catch_unwind`, so a panic
//! becomes `SNOWMINT_RESULT_PANIC` instead of unwinding into C.
//!
//! # Safety (every `unsafe extern "C"` function)
//! Each pointer argument is either NULL (reported as `SNOWMINT_RESULT_NULL_POINTER` where it is
//! required) or valid for the access the header documents: handles come from the matching `_new`
//! function and are not yet freed, `*_out` pointers are writable, strings are NUL-terminated, buffers
//! hold the stated number of elements. A plain `snowmint_generator` is used by one thread at a time.
#![allow(non_camel_case_types)]
// The contract above is the header's; repeating it on each function adds nothing for C readers.
#![allow(clippy::missing_safety_doc)]
// b"…\0" literals keep the workspace's rust-version (1.75; C-string literals need 1.77).
#![allow(clippy::manual_c_str_literals)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr, OsStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

#[cfg(feature = "coord")]
use snowmint_coord as coord;
use snowmint_core as snowmint;
use snowmint_core::state_file::{SharedState, StateFile};
use snowmint_core::{
    parse_any, Clock, ClockUnit, Encoding, Error, ErrorCode, FastClock, Generator, Layout,
    LayoutConfig, Options, Order, ParseErrorKind, Policy, SharedGenerator,
};

// The boundary first: its macros are used by every module after it.
#[macro_use]
mod boundary;
// In the header's order: results, layouts, codecs, generators.
mod codecs;
mod errors;
mod fork;
mod generators;
mod layouts;
use boundary::*;
pub use codecs::*;
pub use errors::*;
use fork::*;
pub use generators::*;
pub use layouts::*;

// Compiled out of the ID-only library (no `coord` feature); the header hides their declarations
// under SNOWMINT_ID_ONLY.
#[cfg(feature = "coord")]
mod coord_api;
#[cfg(feature = "coord")]
pub use coord_api::*;

/// The library version, e.g. "0.1.0" (static; never NULL).
#[no_mangle]
pub extern "C" fn snowmint_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_core() {
        for code in ErrorCode::ALL {
            let r = snowmint_result::from_code(code);
            assert_eq!(r as u32, code.as_u32(), "{code}");
            assert_eq!(r.code(), Some(code));
            // SAFETY: static NUL-terminated strings.
            let name = unsafe { CStr::from_ptr(snowmint_result_name(code.as_u32())) };
            assert_eq!(name.to_str().unwrap(), code.as_str());
            let msg = unsafe { CStr::from_ptr(snowmint_result_message(code.as_u32())) };
            assert_eq!(msg.to_str().unwrap(), code.description());
        }
        assert_eq!(snowmint_result::Ok as u32, 0);
        assert!(ErrorCode::ALL.iter().all(|c| c.as_u32() != 0));
    }

    /// The README's list of result codes is the core's table, complete, in its order:
    /// `SNOWMINT_RESULT_OK` = 0, then `` `NAME` N`` for every code.
    #[test]
    fn readme_lists_every_code() {
        let readme = include_str!("../README.md").replace('\n', " ");
        let listed: Vec<(String, u32)> = readme
            .split("`SNOWMINT_RESULT_OK` = 0")
            .nth(1)
            .expect("the README's result codes")
            .split("Numbers are never reused")
            .next()
            .unwrap()
            .split('`')
            .skip(1) // then name, what follows it, name, …
            .collect::<Vec<_>>()
            .chunks(2)
            .filter_map(|pair| {
                let [name, after] = pair else { return None };
                let number = after
                    .trim_start()
                    .split(|c: char| !c.is_ascii_digit())
                    .next()?;
                let upper = name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
                (upper && !number.is_empty()).then(|| (name.to_string(), number.parse().unwrap()))
            })
            .collect();
        let core: Vec<(String, u32)> = ErrorCode::ALL
            .iter()
            .map(|c| (c.as_str().to_string(), c.as_u32()))
            .collect();
        assert_eq!(listed, core);
    }

    #[test]
    fn null_and_panic_safety() {
        let mut id = 0u64;
        // SAFETY: exercising the NULL checks.
        unsafe {
            assert_eq!(
                snowmint_next_id(std::ptr::null_mut(), &mut id),
                snowmint_result::NullPointer
            );
            assert_eq!(
                snowmint_parse_any(std::ptr::null(), &mut id),
                snowmint_result::NullPointer
            );
        }
        assert_eq!(guard(|| panic!("boom")), snowmint_result::Panic);
    }
}

// Opaque IDs (after the macros above, which it uses).
mod opaque;
#[cfg(feature = "coord")]
mod range_api;
