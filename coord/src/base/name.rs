//! Names every store uses in a key, a file name or a row: sequencer names and row keys.

use crate::base::error::{Error, Result};

/// The sequencer a lease source uses unless `?sequencer=` names one.
pub const DEFAULT_SEQUENCER: &str = "default";

/// Checks a sequencer name: 1 to 64 characters of `A-Z a-z 0-9 _ . -`, not starting with `.` or `-`
/// (every store uses it as part of a key, a file name or a row).
pub fn check_name(name: &str) -> Result<()> {
    let ok = (1..=64).contains(&name.len())
        && !name.starts_with(['.', '-'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "sequencer name {name:?}: use 1 to 64 characters of A-Z a-z 0-9 _ . - (not starting with . or -)"
        )))
    }
}

/// Checks a row key: 1 to 130 characters of `A-Z a-z 0-9 _ . - @` (stores use it in a key, a file name
/// or a column).
pub(crate) fn check_row_key(key: &str) -> Result<()> {
    let ok = (1..=130).contains(&key.len())
        && !key.starts_with('.')
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-@".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(crate::base::error::Error::invalid(format!(
            "row key {key:?}: use 1 to 130 characters of A-Z a-z 0-9 _ . - @ (not starting with .)"
        )))
    }
}
