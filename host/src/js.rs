//! The JavaScript integer rule, one for the native package and the WASM package: a `number` or a
//! `bigint` read as `u64` exactly, never wrapped or rounded, with one message per outcome.
//!
//! - a `number` must be a whole number in `0..=2^53-1` (`snowmint::whole_f64`; past 2^53 - 1 a Number
//!   may already have been rounded);
//! - a `bigint` must be in `0n..2^64n`;
//! - a whole value below zero (a negative whole Number, a negative bigint) or a bigint from 2^64 on is
//!   out of range: the argument's own code (`NODE_ID_OUT_OF_RANGE` for a node ID, `INVALID_ID` for an
//!   ID, else `INVALID_ARGUMENT`); any other refused Number is `INVALID_ARGUMENT`;
//! - any other type is a `TypeError` (code `INVALID_ARGUMENT`).
//!
//! The host-input vectors (`tests/host-inputs/`) hold both packages to these codes, and their
//! `js_message` cases to these messages.

use snowmint::ErrorCode;

use crate::{cat, HostError};

/// A JavaScript value as the integer rule sees it (the binding reads it from its engine).
#[derive(Clone, Copy, Debug)]
pub enum JsInt<'a> {
    /// A `number`.
    Number(f64),
    /// A `bigint`: its value if it is in `0n..2^64n`, `None` if it is negative or at least 2^64.
    BigInt(Option<u64>),
    /// Any other value, by its `typeof` (`null` for null).
    Other(&'a str),
}

/// A refused value: a `TypeError` (a wrong type) or the package's `SnowmintError`, with the code and the
/// message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsRefusal {
    /// A wrong JavaScript type: a `TypeError` (with `code` set too), not a `SnowmintError`.
    pub type_error: bool,
    /// The code and the message.
    pub error: HostError,
}

/// What every message says an integer argument must be.
pub const U64_RANGE: &str = "a whole number in 0..=2^53-1 or a bigint in 0n..2^64n";

/// `name` as `u64` by the rule above; `range` is the code of a value outside `0..2^64` (negative, or a
/// bigint from 2^64 on).
#[inline]
pub fn u64_arg(name: &str, v: JsInt<'_>, range: ErrorCode) -> Result<u64, JsRefusal> {
    rule(name, v, range, false)
}

/// An ID (`id`) as `u64`: [`u64_arg`], except that every negative Number is outside `0..2^64` too
/// (`INVALID_ID`, as in every runtime: an ID is never negative, whole or not).
#[inline]
pub fn id_arg(v: JsInt<'_>) -> Result<u64, JsRefusal> {
    rule("id", v, ErrorCode::InvalidId, true)
}

/// The rule, one body for both (module size in WebAssembly): a negative Number is out of range when it
/// is whole, or always (`every_negative`).
fn rule(
    name: &str,
    v: JsInt<'_>,
    range: ErrorCode,
    every_negative: bool,
) -> Result<u64, JsRefusal> {
    const OUT: &str = ": the value given is negative or at least 2^64";
    let (type_error, code, parts) = match v {
        JsInt::Number(x) => match snowmint::whole_f64(x) {
            Ok(n) => return Ok(n),
            Err(_) if x < 0.0 && (every_negative || is_whole(x)) => {
                (false, range, [" must be ", U64_RANGE, OUT, ""])
            }
            Err(e) => {
                let reason = match e {
                    snowmint::Error::InvalidClock { reason } => reason,
                    _ => "out of range",
                };
                let parts = [" must be ", U64_RANGE, ": the number given is ", reason];
                (false, ErrorCode::InvalidArgument, parts)
            }
        },
        JsInt::BigInt(Some(n)) => return Ok(n),
        JsInt::BigInt(None) => (false, range, [" must be ", U64_RANGE, OUT, ""]),
        JsInt::Other(type_name) => (
            true,
            ErrorCode::InvalidArgument,
            [" must be ", "a number or a bigint", ", got ", type_name],
        ),
    };
    Err(JsRefusal {
        type_error,
        error: HostError {
            code,
            message: cat(&[name, parts[0], parts[1], parts[2], parts[3]]),
        },
    })
}

/// Whether a Number is a whole number (without `f64::trunc`, which `no_std` lacks): from 2^52 on every
/// finite `f64` is whole; below, the conversion to `i64` is exact for whole numbers only (and `f64::abs`
/// is not in `core` at the crate's minimum Rust).
fn is_whole(x: f64) -> bool {
    const BIG: f64 = 4_503_599_627_370_496.0; // 2^52
    x.is_finite() && (x >= BIG || x <= -BIG || x == (x as i64) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<u64, JsRefusal>) -> (bool, ErrorCode, alloc::string::String) {
        let e = r.unwrap_err();
        (e.type_error, e.error.code, e.error.message)
    }

    #[test]
    fn numbers_and_bigints_exactly() {
        let node = ErrorCode::NodeIdOutOfRange;
        assert_eq!(u64_arg("nodeId", JsInt::Number(7.0), node), Ok(7));
        assert_eq!(
            u64_arg("nodeId", JsInt::BigInt(Some(u64::MAX)), node),
            Ok(u64::MAX)
        );
        let (t, c, m) = code(u64_arg("nodeId", JsInt::Number(-1.0), node));
        assert_eq!((t, c), (false, node));
        assert_eq!(
            m,
            "nodeId must be a whole number in 0..=2^53-1 or a bigint in 0n..2^64n: the value given is \
             negative or at least 2^64"
        );
        assert_eq!(code(u64_arg("nodeId", JsInt::BigInt(None), node)).2, m);
        let (t, c, m) = code(u64_arg("nodeId", JsInt::Number(1.5), node));
        assert_eq!((t, c), (false, ErrorCode::InvalidArgument));
        assert!(
            m.ends_with(": the number given is not a whole number"),
            "{m}"
        );
        // A negative fraction is no whole value below zero: not out of range, refused as a Number.
        let (_, c, m) = code(u64_arg("nodeId", JsInt::Number(-1.5), node));
        assert_eq!(c, ErrorCode::InvalidArgument);
        assert!(m.ends_with(": the number given is negative"), "{m}");
        let (_, c, _) = code(u64_arg("nodeId", JsInt::Number(f64::NAN), node));
        assert_eq!(c, ErrorCode::InvalidArgument);
        let (_, c, m) = code(u64_arg("x", JsInt::Number(9_007_199_254_740_992.0), node));
        assert_eq!(c, ErrorCode::InvalidArgument);
        assert!(m.ends_with("above 2^53 - 1, precision may be lost"), "{m}");
        let (t, c, m) = code(u64_arg("nodeId", JsInt::Other("boolean"), node));
        assert_eq!((t, c), (true, ErrorCode::InvalidArgument));
        assert_eq!(m, "nodeId must be a number or a bigint, got boolean");
    }

    #[test]
    fn whole_numbers() {
        for x in [0.0, -1.0, 7.0, -4_503_599_627_370_497.0, -1e300, f64::MIN] {
            assert!(is_whole(x), "{x}");
        }
        for x in [-1.5, 0.5, -0.1, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(!is_whole(x), "{x}");
        }
    }

    #[test]
    fn every_negative_id_is_out_of_range() {
        for x in [-1.0, -1.5, f64::NEG_INFINITY] {
            let (t, c, m) = code(id_arg(JsInt::Number(x)));
            assert_eq!((t, c), (false, ErrorCode::InvalidId));
            assert!(m.starts_with("id must be "), "{m}");
        }
        assert_eq!(code(id_arg(JsInt::BigInt(None))).1, ErrorCode::InvalidId);
        assert_eq!(
            code(id_arg(JsInt::Number(1.5))).1,
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(id_arg(JsInt::Number(f64::NAN))).1,
            ErrorCode::InvalidArgument
        );
        assert_eq!(id_arg(JsInt::BigInt(Some(5))), Ok(5));
    }
}
