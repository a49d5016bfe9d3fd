//! The one error type of coordination: a stable [`ErrorCode`] (the same table as the core's, shared by
//! every runtime) and a message that names the source, the store or the sequencer and says why.

use std::fmt;

use snowmint::ErrorCode;

/// A coordination error: a stable code and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }

    /// `STORE_UNAVAILABLE`: the store cannot be reached, refused, or holds data that cannot be read.
    pub fn unavailable(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::StoreUnavailable, message)
    }

    /// `LEASE_LOST`: the claim is no longer held (expired, taken by another holder, released).
    pub fn lease_lost(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::LeaseLost, message)
    }

    /// `INVALID_ARGUMENT`: bad input (a malformed node source, a TTL of 0 …).
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message (without the code).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with `context: ` put before its message (e.g. the node source it came from).
    pub fn context(self, context: impl fmt::Display) -> Error {
        Error {
            code: self.code,
            message: format!("{context}: {}", self.message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<snowmint::Error> for Error {
    fn from(e: snowmint::Error) -> Error {
        Error::new(e.code(), e.to_string())
    }
}

/// An I/O error of a store as `STORE_UNAVAILABLE`, saying what was being done.
#[allow(dead_code)] // used by the stores
pub(crate) fn io(what: impl fmt::Display, e: std::io::Error) -> Error {
    Error::unavailable(format!("{what}: {e}"))
}
