//! The one error type of coordination: a stable [`ErrorCode`] (the same table as the core's, shared by
//! every runtime) and a message that names the source, the store or the sequencer and says why.
//!
//! Every message goes through [`redact_secrets`] when the error is made (and again when context is put
//! before it), so no password reaches a message in any runtime, whichever code wrote it: the one place
//! the CLI, the service and the Python, Node, WASM and C bindings all pass through.

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
            message: redact_secrets(&message.into()),
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
            message: redact_secrets(&format!("{context}: {}", self.message)),
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

/// `text` with every secret a store URL can carry replaced by `***`: the password of a URL's user part
/// (`postgres://app:secret@host/db`, `etcd+https://root:secret@h1,h2/p`) and the value of a `password=`
/// parameter (libpq's `?password=…`, a `password=…` keyword string). User names, hosts, paths and
/// certificate file names stay (they say which store failed); a key file's contents are never read into
/// a message in the first place.
pub fn redact_secrets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let url = rest.find("://").map(|i| i + 3);
        let param = find_password_param(rest);
        match (url, param) {
            (Some(start), p) if p.is_none_or(|value| start <= value) => {
                out.push_str(&rest[..start]);
                rest = &rest[start..];
                // The user part ends at the last '@' before the path, query, fragment or the end of
                // the URL in the text (a quote, a space, a closing bracket).
                let end = rest
                    .find(|c: char| "/?#\"' \t\n)]>".contains(c))
                    .unwrap_or(rest.len());
                if let Some(at) = rest[..end].rfind('@') {
                    if let Some(colon) = rest[..at].find(':') {
                        out.push_str(&rest[..colon]);
                        out.push_str(":***");
                        rest = &rest[at..];
                        continue;
                    }
                }
            }
            (_, Some(value)) => {
                out.push_str(&rest[..value]);
                out.push_str("***");
                let after = &rest[value..];
                let end = match after.chars().next() {
                    // A quoted value ends at its closing quote.
                    Some(q @ ('\'' | '"')) => after[1..].find(q).map_or(after.len(), |i| i + 2),
                    _ => after
                        .find(|c: char| "&\"' \t\n)]>,;".contains(c))
                        .unwrap_or(after.len()),
                };
                rest = &after[end..];
            }
            (None, None) => {
                out.push_str(rest);
                rest = "";
            }
            (Some(_), None) => unreachable!("matched by the first arm"),
        }
    }
    out
}

/// `text` with every URL in it (`etcd://…`, `postgres://…`, `file:///…`: a scheme, `://`, and what
/// follows up to a space, a quote or a closing bracket) replaced by `<store>`: what the ID service
/// answers its clients, who are not told where its store is.
pub fn without_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        // Past the last character that cannot be in a scheme (which may be wider than one byte).
        let start = rest[..i]
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .map_or(0, |(j, c)| j + c.len_utf8());
        let after = &rest[i + 3..];
        let end = after
            .find(|c: char| c.is_whitespace() || "\"'`)]>".contains(c))
            .unwrap_or(after.len());
        // A URL's last character is never the ':' or ',' of the sentence around it.
        let url_end = after[..end].trim_end_matches([':', ',', ';', '.']).len();
        out.push_str(&rest[..start]);
        out.push_str("<store>");
        rest = &after[url_end..];
    }
    out.push_str(rest);
    out
}

/// Where the value of the first `password=` in `text` starts (a whole parameter name: at the start or
/// after `?`, `&`, a space or a quote).
fn find_password_param(text: &str) -> Option<usize> {
    const NAME: &str = "password=";
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(NAME) {
        let start = from + i;
        let before = lower[..start].chars().next_back();
        if before.is_none_or(|c| "?& \t\"'(,;".contains(c)) {
            return Some(start + NAME.len());
        }
        from = start + NAME.len();
    }
    None
}

/// An I/O error of a store as `STORE_UNAVAILABLE`, saying what was being done.
#[allow(dead_code)] // used by the stores
pub(crate) fn io(what: impl fmt::Display, e: std::io::Error) -> Error {
    Error::unavailable(format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_reach_messages() {
        for (text, want) in [
            (
                "postgres://u:secret@h:5432/db",
                "postgres://u:***@h:5432/db",
            ),
            (
                "node source \"postgres://app:s3cr%40t@h/db?x=1\": refused",
                "node source \"postgres://app:***@h/db?x=1\": refused",
            ),
            (
                "etcd+https://root:pw@a:1,b:2/p?cacert=/ca.pem",
                "etcd+https://root:***@a:1,b:2/p?cacert=/ca.pem",
            ),
            ("postgres://u@h/db?x=1", "postgres://u@h/db?x=1"),
            (
                "postgres://h/db?user=u&password=hunter2&sslmode=require",
                "postgres://h/db?user=u&password=***&sslmode=require",
            ),
            ("host=h password='x y' user=u", "host=h password=*** user=u"),
            ("a://x@y then b://u:p@q", "a://x@y then b://u:***@q"),
            ("no url at all: a:b@c", "no url at all: a:b@c"),
            ("passwordless=1 mypassword=x", "passwordless=1 mypassword=x"),
            ("ünïcode://ü:ß@h/ä", "ünïcode://ü:***@h/ä"),
        ] {
            assert_eq!(redact_secrets(text), want, "{text}");
        }
        assert_eq!(
            without_urls("etcd store etcd+https://root@h:1,h:2/p?cacert=/ca.pem: reading: refused"),
            "etcd store <store>: reading: refused"
        );
        assert_eq!(
            without_urls("node source \"postgres://a:***@h/db\": x; file:///d/e. (file://y)"),
            "node source \"<store>\": x; <store>. (<store>)"
        );
        assert_eq!(
            without_urls("no store here: 10.0.0.1:5"),
            "no store here: 10.0.0.1:5"
        );
        // A character of several bytes just before the scheme (found by the fuzz target service_request).
        assert_eq!(
            without_urls("}}} \u{84}ÂÂÂ:///\u{ff}"),
            "}}} \u{84}ÂÂÂ<store>"
        );
        assert_eq!(without_urls("ÂÂx+y://h/ä"), "ÂÂ<store>");
        let e = Error::invalid("postgres://u:secret@h/db").context("file://x:y@z");
        assert!(
            !e.message().contains("secret") && !e.message().contains(":y@"),
            "{e}"
        );
    }
}
