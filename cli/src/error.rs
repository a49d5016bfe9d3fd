//! Errors as the CLI reports them: `error[CODE]: message` on stderr, with the same stable codes as
//! every snowmint library, and an exit status (2: the command line is wrong; 1: a value was rejected).

use std::fmt::Write as _;

use snowmint::{Error, ErrorCode};

/// Exit status for a malformed command line (unknown option, missing value, not a number).
pub const EXIT_USAGE: i32 = 2;
/// Exit status for input the core rejected (a node ID out of range, an invalid layout, a bad ID …).
pub const EXIT_REJECTED: i32 = 1;

#[derive(Debug)]
pub struct CliError {
    pub code: ErrorCode,
    pub message: String,
    /// Extra lines printed under the message (a caret under a bad character, a hint).
    pub detail: Vec<String>,
    pub exit: i32,
}

impl CliError {
    /// A malformed command line; points at the command's help.
    pub fn usage(message: impl Into<String>, command: &str) -> CliError {
        let hint = if command.is_empty() {
            "see 'snowmint --help'".to_string()
        } else {
            format!("see 'snowmint {command} --help'")
        };
        CliError {
            code: ErrorCode::InvalidArgument,
            message: message.into(),
            detail: vec![hint],
            exit: EXIT_USAGE,
        }
    }

    /// A value the core rejected, with the core's own message.
    pub fn core(err: Error) -> CliError {
        CliError {
            code: err.code(),
            message: err.to_string(),
            detail: Vec::new(),
            exit: EXIT_REJECTED,
        }
    }

    /// A value the core rejected, with a message of our own (when the core's names no user-facing flag).
    pub fn rejected(code: ErrorCode, message: impl Into<String>) -> CliError {
        CliError {
            code,
            message: message.into(),
            detail: Vec::new(),
            exit: EXIT_REJECTED,
        }
    }

    /// Adds a line of detail.
    pub fn with(mut self, line: impl Into<String>) -> CliError {
        self.detail.push(line.into());
        self
    }

    /// The text written to stderr.
    pub fn render(&self) -> String {
        let mut s = format!("error[{}]: {}\n", self.code.as_str(), self.message);
        for line in &self.detail {
            let _ = writeln!(s, "  {line}");
        }
        s
    }
}

impl From<Error> for CliError {
    fn from(err: Error) -> CliError {
        CliError::core(err)
    }
}
