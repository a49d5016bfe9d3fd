//! Names users type (layouts, policies, encodings, field orders): the allowed spellings of each, and the
//! nearest one to a name that is not allowed ("did you mean twitter?"), for every runtime's messages.
//!
//! No allocation: the suggestion is a bounded Levenshtein distance (an edit is an insert, a delete or
//! a change of one character), case-insensitive, over one row on the stack.

use core::fmt;

/// What kind of name was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameKind {
    /// A layout preset (`twitter`, `discord` …).
    Layout,
    /// A generator policy (`wait`, `fail`, `strict`).
    Policy,
    /// A string form of an ID (`dec`, `hex`, `base32`, `base58`).
    Encoding,
    /// A field order (`timestamp_node_sequence` …).
    Order,
}

impl NameKind {
    /// What the name names, as messages say it: `"layout"`, `"policy"`, `"encoding"`, `"order"`.
    pub const fn what(self) -> &'static str {
        match self {
            NameKind::Layout => "layout preset",
            NameKind::Policy => "policy",
            NameKind::Encoding => "encoding",
            NameKind::Order => "order",
        }
    }

    /// Every name accepted, the usual spelling first, aliases after.
    pub const fn names(self) -> &'static [&'static str] {
        match self {
            NameKind::Layout => &crate::layout::ACCEPTED_PRESET_NAMES,
            NameKind::Policy => &["wait", "fail", "strict"],
            NameKind::Encoding => &["dec", "hex", "base32", "base58", "decimal"],
            NameKind::Order => &[
                "timestamp_node_sequence",
                "timestamp_sequence_node",
                "ts|node|seq",
                "ts|seq|node",
            ],
        }
    }

    /// How many of [`NameKind::names`] a message lists as allowed (the rest are aliases).
    pub const fn listed(self) -> usize {
        match self {
            NameKind::Layout => crate::layout::PRESET_NAMES.len(),
            NameKind::Policy => 3,
            NameKind::Encoding => 4,
            NameKind::Order => 2,
        }
    }

    /// The unknown-name error for `given` (with the nearest allowed name, if one is near).
    pub fn unknown(self, given: &str) -> crate::Error {
        crate::Error::UnknownName {
            kind: self,
            given: GivenName::new(given),
            suggestion: suggest(given, self.names()),
        }
    }
}

/// Longest name compared by [`suggest`]; longer ones get no suggestion.
const MAX_LEN: usize = 32;

/// The candidate nearest to `given` (case-insensitive), if it is near enough to be what was meant: at
/// most 1 edit for names of up to 2 characters, 2 up to 8, 3 beyond. Ties go to the earlier candidate.
///
/// ```
/// use snowmint::suggest;
/// let presets = ["twitter", "discord", "instagram"];
/// assert_eq!(suggest("Twitter", &presets), Some("twitter"));
/// assert_eq!(suggest("twiter", &presets), Some("twitter"));
/// assert_eq!(suggest("dicsord", &presets), Some("discord"));
/// assert_eq!(suggest("uuid", &presets), None);
/// ```
pub fn suggest<'a>(given: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let g = given.as_bytes();
    if g.is_empty() || g.len() > MAX_LEN {
        return None;
    }
    let limit = match g.len() {
        0..=2 => 1,
        3..=8 => 2,
        _ => 3,
    };
    let mut best: Option<(usize, &'a str)> = None;
    for &c in candidates {
        if let Some(d) = distance(g, c.as_bytes(), limit) {
            if best.map_or(true, |(b, _)| d < b) {
                best = Some((d, c));
            }
        }
    }
    best.map(|(_, c)| c)
}

/// Case-insensitive Levenshtein distance of `a` and `b` (one row, on the stack), if at most `limit`.
fn distance(a: &[u8], b: &[u8], limit: usize) -> Option<usize> {
    if b.len() > MAX_LEN || a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let mut row = [0u8; MAX_LEN + 1];
    for (j, cell) in row.iter_mut().enumerate() {
        *cell = j as u8;
    }
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i as u8 + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            let change = diag + u8::from(!ca.eq_ignore_ascii_case(cb));
            row[j + 1] = change.min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    let d = usize::from(row[b.len()]);
    (d <= limit).then_some(d)
}

/// A name as the user gave it, kept (up to 24 bytes, cut at a character boundary) for the message.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct GivenName {
    bytes: [u8; 24],
    len: u8,
    truncated: bool,
}

impl GivenName {
    fn new(s: &str) -> GivenName {
        let mut len = s.len().min(24);
        while !s.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0u8; 24];
        bytes[..len].copy_from_slice(&s.as_bytes()[..len]);
        GivenName {
            bytes,
            len: len as u8,
            truncated: len < s.len(),
        }
    }

    /// The name (its first 24 bytes if it was longer: see [`GivenName::truncated`]).
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }

    /// Whether the name given was longer than what is kept.
    pub const fn truncated(&self) -> bool {
        self.truncated
    }
}

impl fmt::Debug for GivenName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)?;
        if self.truncated {
            f.write_str("…")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let layouts = NameKind::Layout.names();
        assert_eq!(suggest("Twitter", layouts), Some("twitter"));
        assert_eq!(suggest("TWITTER", layouts), Some("twitter"));
        assert_eq!(suggest("twiter", layouts), Some("twitter"));
        assert_eq!(suggest("snowflake", layouts), Some("sonyflake"));
        assert_eq!(suggest("insta", layouts), None);
        assert_eq!(suggest("js52", layouts), Some("js53"));
        assert_eq!(suggest("", layouts), None);
        assert_eq!(suggest("x", layouts), None);
        assert_eq!(suggest(&"t".repeat(40), layouts), None);
        assert_eq!(suggest("Fail", NameKind::Policy.names()), Some("fail"));
        assert_eq!(suggest("wiat", NameKind::Policy.names()), Some("wait"));
        assert_eq!(suggest("never", NameKind::Policy.names()), None);
        assert_eq!(suggest("bas58", NameKind::Encoding.names()), Some("base58"));
        assert_eq!(suggest("HEX", NameKind::Encoding.names()), Some("hex"));
        assert_eq!(
            suggest("base64", NameKind::Encoding.names()),
            Some("base32")
        );
        assert_eq!(
            suggest("timestamp_node_seq", NameKind::Order.names()),
            None,
            "5 edits away"
        );
        assert_eq!(
            suggest("timestamp-node-sequence", NameKind::Order.names()),
            Some("timestamp_node_sequence")
        );
    }

    #[test]
    fn distance_is_bounded_and_symmetric() {
        assert_eq!(distance(b"abc", b"abc", 0), Some(0));
        assert_eq!(distance(b"abc", b"acb", 2), Some(2));
        assert_eq!(distance(b"abc", b"aXc", 1), Some(1));
        assert_eq!(distance(b"abc", b"", 3), Some(3));
        assert_eq!(distance(b"abc", b"", 2), None);
        assert_eq!(distance(b"kitten", b"sitting", 3), Some(3));
        assert_eq!(distance(b"sitting", b"kitten", 3), Some(3));
        assert_eq!(distance(b"kitten", b"sitting", 2), None);
    }

    #[test]
    fn given_names_are_cut_at_a_character_boundary() {
        let g = GivenName::new("ééééééééééééé"); // 26 bytes
        assert_eq!(g.as_str(), "éééééééééééé");
        assert!(g.truncated());
        let g = GivenName::new("Twitter");
        assert_eq!(g.as_str(), "Twitter");
        assert!(!g.truncated());
    }
}
