//! The value parsers of the command-line definitions ([`crate::spec`]): each turns an option's text
//! into the typed value its command reads, or says what is wrong with it. clap names the option
//! (`--count expects a whole number, got "x"`, exit status 2: [`crate::spec`]'s error mapping); a
//! value the core rejects is left to the command, so that it keeps the core's code and exit status 1
//! (ARCHITECTURE.md, "The command line").

use std::fmt;
use std::time::Duration;

use crate::error::CliError;

/// What a value parser refused: the message after the option's name (`" expects a whole number,
/// got \"x\""`, `": not a duration"`).
#[derive(Debug)]
pub struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// A whole number in decimal digits (underscores allowed as separators: `1_700_000_000_000`).
pub fn number(text: &str) -> Result<u64, Refused> {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Refused(format!(" expects a whole number, got {text:?}")));
    }
    digits
        .parse::<u64>()
        .map_err(|_| Refused(format!(" is {text}, larger than 18446744073709551615")))
}

/// A bit count: a whole number that fits a `u32`.
pub fn bits(text: &str) -> Result<u32, Refused> {
    let n = number(text)?;
    u32::try_from(n).map_err(|_| Refused(format!(" is {n}, far more bits than 64")))
}

/// A time-to-live or validity: `70s`, `500ms`, `1m`.
pub fn ttl(text: &str) -> Result<Duration, Refused> {
    snowmint_coord::source::parse_ttl(text).map_err(|why| Refused(format!(": {why}")))
}

/// How long to wait: `500ms`, `2s`, `1m`, or 0.
pub fn wait(text: &str) -> Result<Duration, Refused> {
    snowmint_coord::source::parse_wait(text).map_err(|why| Refused(format!(": {why}")))
}

/// A web origin the service accepts calls from (`https://app.example.com`, or `*`).
pub fn origin(text: &str) -> Result<String, Refused> {
    snowmint_service::check_origin(text)
        .map(|()| text.to_string())
        .map_err(|why| Refused(format!(": {why}")))
}

/// A whole number outside the command line (`$SNOWMINT_NODE_ID`), with a message that names it.
pub fn parse_number(name: &str, text: &str, command: &'static str) -> Result<u64, CliError> {
    number(text).map_err(|r| CliError::usage(format!("{name}{r}"), command))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(number("1_000").unwrap(), 1000);
        assert!(number("-1").is_err());
        assert!(number("1.5").is_err());
        assert!(number("18446744073709551616").is_err());
        assert_eq!(
            parse_number("X", "y", "t").unwrap_err().message,
            "X expects a whole number, got \"y\""
        );
    }
}
