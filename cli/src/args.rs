//! The arguments of one command as its code reads them: the items the command-line definitions
//! ([`crate::spec`], clap) parsed, in command-line order, and the value helpers that turn an item into
//! a number with a message that names the flag.
//!
//! clap does the parsing (options and their values, `--name=value`, `-n5`, `--`, an option given twice,
//! an unknown option with the nearest one, a missing value); each command then reads its items and
//! gives a value the core rejects the core's own error code and exit status 1, and a malformed
//! command line exit status 2 with a hint (ARCHITECTURE.md, "The command line").

use std::collections::VecDeque;

use crate::error::CliError;

/// One command-line item.
#[derive(Debug, PartialEq, Eq)]
pub enum Item {
    /// An option by its long name (`--count`, whatever alias was written), with its value if it
    /// takes one.
    Flag {
        name: String,
        inline: Option<String>,
    },
    /// A positional argument (an action such as `create`, a NAME, an ID), in order.
    Positional(String),
}

/// The arguments of one command, read left to right.
pub struct Args {
    items: VecDeque<Item>,
    /// What clap refused, reported by the first [`Args::next_item`].
    error: Option<CliError>,
    command: &'static str,
}

impl Args {
    /// Parses `snowmint COMMAND ARGS…` with the command-line definitions.
    pub fn new(args: Vec<String>, command: &'static str) -> Args {
        let (items, error) = match crate::spec::parse(command, args) {
            Ok(items) => (items.into(), None),
            Err(e) => (VecDeque::new(), Some(e)),
        };
        Args {
            items,
            error,
            command,
        }
    }

    /// The next item, or `None` at the end; the parse error first, if there was one.
    pub fn next_item(&mut self) -> Result<Option<Item>, CliError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        Ok(self.items.pop_front())
    }

    /// The value of an option (clap has checked it has one).
    pub fn value(&mut self, name: &str, inline: Option<String>) -> Result<String, CliError> {
        inline.ok_or_else(|| CliError::usage(format!("{name} needs a value"), self.command))
    }

    /// Rejects a value given to a flag that takes none.
    pub fn no_value(&self, name: &str, inline: Option<String>) -> Result<(), CliError> {
        match inline {
            None => Ok(()),
            Some(v) => Err(CliError::usage(
                format!("{name} takes no value (got {v:?})"),
                self.command,
            )),
        }
    }

    /// The value of a flag as a whole number.
    pub fn number(&mut self, name: &str, inline: Option<String>) -> Result<u64, CliError> {
        let text = self.value(name, inline)?;
        parse_number(name, &text, self.command)
    }

    /// The value of a flag as a bit count.
    pub fn bits(&mut self, name: &str, inline: Option<String>) -> Result<u32, CliError> {
        let n = self.number(name, inline)?;
        u32::try_from(n).map_err(|_| {
            CliError::usage(
                format!("{name} is {n}, far more bits than 64"),
                self.command,
            )
        })
    }

    /// An error for an option the definitions give this command but its code does not read (a
    /// definition without its code: `tests/completions.rs` keeps them in step).
    pub fn unknown(&self, name: &str) -> CliError {
        crate::spec::unknown_option(self.command, name)
    }
}

/// A whole number in decimal digits (underscores allowed as separators: `1_700_000_000_000`).
pub fn parse_number(name: &str, text: &str, command: &'static str) -> Result<u64, CliError> {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CliError::usage(
            format!("{name} expects a whole number, got {text:?}"),
            command,
        ));
    }
    digits.parse::<u64>().map_err(|_| {
        CliError::usage(
            format!("{name} is {text}, larger than 18446744073709551615"),
            command,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_number("--x", "1_000", "t").unwrap(), 1000);
        assert!(parse_number("--x", "-1", "t").is_err());
        assert!(parse_number("--x", "1.5", "t").is_err());
        assert!(parse_number("--x", "18446744073709551616", "t").is_err());
    }
}
