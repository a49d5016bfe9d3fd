//! A small hand-written command-line parser: `--name value`, `--name=value`, `-n 5`, `-n5`, `--`.
//!
//! Hand-written, so that a value the core rejects keeps the core's error code and exit status 1 and a
//! malformed command line is exit status 2 with a hint (ARCHITECTURE.md, "The command line"); every
//! mistake becomes a [`CliError::usage`] that names the flag, and an unknown one gets the nearest
//! option of the command's clap definitions ([`crate::spec::did_you_mean`]).

use std::collections::HashSet;

use crate::error::CliError;

/// One command-line item.
#[derive(Debug, PartialEq, Eq)]
pub enum Item {
    /// `--name` or `-n`, with a value written inline (`--name=value`, `-n5`) if any.
    Flag {
        name: String,
        inline: Option<String>,
    },
    /// Anything else (or anything after `--`).
    Positional(String),
}

/// The arguments of one command, read left to right.
pub struct Args {
    rest: std::vec::IntoIter<String>,
    only_positionals: bool,
    seen: HashSet<String>,
    command: &'static str,
}

impl Args {
    pub fn new(args: Vec<String>, command: &'static str) -> Args {
        Args {
            rest: args.into_iter(),
            only_positionals: false,
            seen: HashSet::new(),
            command,
        }
    }

    /// The next item, or `None` at the end.
    pub fn next_item(&mut self) -> Result<Option<Item>, CliError> {
        let Some(arg) = self.rest.next() else {
            return Ok(None);
        };
        if self.only_positionals {
            return Ok(Some(Item::Positional(arg)));
        }
        if arg == "--" {
            self.only_positionals = true;
            return self.next_item();
        }
        let item = if let Some(long) = arg.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => Item::Flag {
                    name: format!("--{name}"),
                    inline: Some(value.to_string()),
                },
                None => Item::Flag {
                    name: arg.clone(),
                    inline: None,
                },
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            let mut chars = arg[1..].chars();
            let c = chars.next().unwrap_or('-');
            let tail: String = chars.collect();
            Item::Flag {
                name: format!("-{c}"),
                inline: if tail.is_empty() { None } else { Some(tail) },
            }
        } else {
            Item::Positional(arg)
        };
        if let Item::Flag { name, .. } = &item {
            if !self.seen.insert(canonical(name).to_string()) {
                return Err(CliError::usage(
                    format!("{name} is given twice; give each option once"),
                    self.command,
                ));
            }
        }
        Ok(Some(item))
    }

    /// The value of a flag: written inline, or the next argument.
    pub fn value(&mut self, name: &str, inline: Option<String>) -> Result<String, CliError> {
        if let Some(v) = inline {
            return Ok(v);
        }
        match self.rest.next() {
            Some(v) if !(v.starts_with("--") && v.len() > 2) => Ok(v),
            _ => Err(CliError::usage(
                format!("{name} needs a value"),
                self.command,
            )),
        }
    }

    /// Rejects an inline value given to a flag that takes none (`--help=yes`).
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

    /// An error for a flag this command does not know, with the nearest option the command's
    /// definitions ([`crate::spec`]) have, if one is near.
    pub fn unknown(&self, name: &str) -> CliError {
        let meant = crate::spec::did_you_mean(&[self.command], name);
        CliError::usage(
            format!(
                "unknown option {name} for 'snowmint {}'{meant}",
                self.command
            ),
            self.command,
        )
    }
}

/// Aliases count as the same option for the "given twice" check.
fn canonical(name: &str) -> &str {
    match name {
        "-n" => "--count",
        "--preset" => "--layout",
        "-h" => "--help",
        "-l" => "--layout",
        "-f" => "--format",
        other => other,
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

    fn items(v: &[&str]) -> Vec<Item> {
        let mut a = Args::new(v.iter().map(|s| s.to_string()).collect(), "test");
        let mut out = Vec::new();
        while let Some(i) = a.next_item().unwrap() {
            out.push(i);
        }
        out
    }

    #[test]
    fn forms() {
        assert_eq!(
            items(&["-n5", "--node=3", "x", "--", "--y"]),
            vec![
                Item::Flag {
                    name: "-n".into(),
                    inline: Some("5".into())
                },
                Item::Flag {
                    name: "--node".into(),
                    inline: Some("3".into())
                },
                Item::Positional("x".into()),
                Item::Positional("--y".into()),
            ]
        );
        assert_eq!(items(&["-"]), vec![Item::Positional("-".into())]);
    }

    #[test]
    fn duplicates_rejected() {
        let mut a = Args::new(vec!["-n".into(), "--count".into()], "mint");
        a.next_item().unwrap();
        assert!(a.next_item().is_err());
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("--x", "1_000", "t").unwrap(), 1000);
        assert!(parse_number("--x", "-1", "t").is_err());
        assert!(parse_number("--x", "1.5", "t").is_err());
        assert!(parse_number("--x", "18446744073709551616", "t").is_err());
    }
}
