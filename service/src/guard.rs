//! Who may call the service (SPEC §6a, on a network): the `Host` a request names (DNS rebinding), the
//! `Origin` it carries (cross-site requests), its bearer token (`--auth-token-file`) and its body's
//! media type, all judged from the request's head before the protocol runs. Also the key a client is
//! counted under for the per-client lease cap.

use std::net::IpAddr;
use std::path::Path;

use sha2::{Digest, Sha256};
use snowmint::ErrorCode;

use crate::{ApiError, Config, Route};

/// What [`Config::admit`] reads of a request's head.
#[derive(Clone, Copy, Debug, Default)]
pub struct Head<'a> {
    /// The method.
    pub method: &'a str,
    /// `Host` (or the authority of an absolute-form target).
    pub host: Option<&'a str>,
    /// `Origin`.
    pub origin: Option<&'a str>,
    /// `Authorization`.
    pub authorization: Option<&'a str>,
    /// `Content-Type`.
    pub content_type: Option<&'a str>,
    /// The scheme the service is reached by (`https` with `--tls-cert`).
    pub tls: bool,
}

/// Who a request counts as, for the lease caps and a lease's owner: the token it presented (by its
/// SHA-256 digest, never its text), else its source address.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientKey {
    /// A token of `--auth-token-file`, by its SHA-256 digest.
    Token([u8; 32]),
    /// A source address (no token file).
    Addr(IpAddr),
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientKey::Token(_) => f.write_str("Token(..)"),
            ClientKey::Addr(a) => write!(f, "Addr({a})"),
        }
    }
}

/// The bearer tokens of `--auth-token-file`, kept as SHA-256 digests (compared in constant time; the
/// token's text is in no message, log or metric).
#[derive(Clone, Default)]
pub struct Tokens(Vec<[u8; 32]>);

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens({} tokens)", self.0.len())
    }
}

impl Tokens {
    /// Tokens from text: one per line; blank lines and lines starting with `#` are skipped.
    pub fn parse(text: &str) -> Result<Tokens, String> {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if t.len() < 16 || !t.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(format!(
                    "line {}: a token is at least 16 printable ASCII characters with no spaces",
                    i + 1
                ));
            }
            out.push(Sha256::digest(t.as_bytes()).into());
        }
        if out.is_empty() {
            return Err("the file holds no token (one per line)".into());
        }
        Ok(Tokens(out))
    }

    /// The tokens of the file at `path` (`--auth-token-file`).
    pub fn load(path: &Path) -> Result<Tokens, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Tokens::parse(&text).map_err(|why| format!("{}: {why}", path.display()))
    }

    /// `true` if there are none (no `--auth-token-file`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The position of `presented` among the tokens. Every token is compared, each in constant time.
    fn find(&self, presented: &str) -> Option<usize> {
        let d: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found = None;
        for (i, t) in self.0.iter().enumerate() {
            let diff = t
                .iter()
                .zip(d.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b));
            if std::hint::black_box(diff) == 0 {
                found = Some(i);
            }
        }
        found
    }
}

/// The host of a `Host` value (`name:port`, `[v6]:port`), lower-cased.
fn host_name(host: &str) -> String {
    let h = host.trim();
    let name = if let Some(rest) = h.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        h.rsplit_once(':')
            .filter(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()))
            .map_or(h, |(n, _)| n)
    };
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// The text of a header the guard judges (`Host`, `Origin`, `Authorization`, `Content-Type`), given
/// every value the request carries for it: absent, or exactly one value of visible ASCII. A value with
/// any other byte, or a second value, is `400`: a header the guard cannot read is never taken as absent
/// (a refused `Origin` with one non-ASCII byte would otherwise pass as no `Origin` at all).
pub fn judged_header<'a>(
    field: &'static str,
    mut values: impl Iterator<Item = &'a [u8]>,
) -> Result<Option<&'a str>, ApiError> {
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(ApiError::bad(
            field,
            format!("the request carries {field} more than once"),
        ));
    }
    let visible = first
        .iter()
        .all(|&b| b == b'\t' || (0x20..0x7f).contains(&b));
    match std::str::from_utf8(first) {
        Ok(text) if visible => Ok(Some(text)),
        _ => Err(ApiError::bad(
            field,
            format!("{field} holds a byte that is not visible ASCII"),
        )),
    }
}

fn forbidden(field: &'static str, message: String) -> ApiError {
    ApiError::new(403, ErrorCode::InvalidArgument, message).field(field)
}

impl Config {
    /// Whether a request naming `host` may be served: an IP address always (a page cannot rebind an
    /// address), a name only if it is one of `--allowed-host` (any name when none is given).
    pub fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        self.allowed_hosts.is_empty()
            || name.parse::<IpAddr>().is_ok()
            || self
                .allowed_hosts
                .iter()
                .any(|a| a.eq_ignore_ascii_case(&name))
    }

    /// Whether a request carrying `origin` may be served: the service's own origin (its scheme and the
    /// request's `Host`), or one of `--cors-origin` (`*`: any).
    pub fn origin_allowed(&self, origin: &str, host: Option<&str>, tls: bool) -> bool {
        let own = host.is_some_and(|h| {
            let scheme = if tls { "https://" } else { "http://" };
            origin
                .strip_prefix(scheme)
                .is_some_and(|o| o.eq_ignore_ascii_case(h.trim()))
        });
        own || self.cors_allow(Some(origin)).is_some()
    }

    /// Judges a request's head before the protocol: `Host` (403), `Origin` (403), the bearer token of
    /// the data routes (401) and a POST body's media type (415). Returns who the request counts as
    /// (`peer`: its source address).
    pub fn admit(&self, route: Route, head: &Head, peer: IpAddr) -> Result<ClientKey, ApiError> {
        if let Some(host) = head.host {
            if !self.host_allowed(host) {
                return Err(forbidden(
                    "host",
                    format!(
                        "host {:?} is not served here (--allowed-host)",
                        crate::json::clip(host, 100)
                    ),
                ));
            }
        } else if !self.allowed_hosts.is_empty() {
            return Err(forbidden("host", "the request names no host".into()));
        }
        if let Some(origin) = head.origin {
            if !self.origin_allowed(origin, head.host, head.tls) {
                return Err(forbidden(
                    "origin",
                    format!(
                        "requests from pages of origin {:?} are refused (--cors-origin)",
                        crate::json::clip(origin, 100)
                    ),
                ));
            }
        }
        let mut key = ClientKey::Addr(peer);
        if !self.auth_tokens.is_empty() && route.needs_token() {
            let presented = head
                .authorization
                .and_then(|a| {
                    let (scheme, rest) = a.trim().split_once(' ')?;
                    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
                })
                .filter(|t| !t.is_empty());
            let found = presented.and_then(|t| self.auth_tokens.find(t));
            match found {
                Some(i) => key = ClientKey::Token(self.auth_tokens.0[i]),
                None => {
                    let mut e = ApiError::new(
                        401,
                        ErrorCode::InvalidArgument,
                        if presented.is_some() {
                            "the bearer token is not one of the service's"
                        } else {
                            "this route needs a bearer token: authorization: Bearer TOKEN"
                        },
                    )
                    .field("authorization");
                    e.www_authenticate = true;
                    return Err(e);
                }
            }
        }
        if head.method == "POST" {
            if let Some(ct) = head.content_type {
                let media = ct.split(';').next().unwrap_or("").trim();
                if !media.eq_ignore_ascii_case("application/json") {
                    return Err(ApiError::new(
                        415,
                        ErrorCode::InvalidArgument,
                        format!(
                            "a POST body is application/json, not {:?}",
                            crate::json::clip(media, 60)
                        ),
                    )
                    .field("content-type"));
                }
            }
        }
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judged_headers_are_one_visible_ascii_value() {
        let one = |v: &'static [u8]| judged_header("origin", [v].into_iter());
        assert_eq!(
            one(b"https://a.example").unwrap(),
            Some("https://a.example")
        );
        assert_eq!(judged_header("origin", std::iter::empty()).unwrap(), None);
        for bad in [
            &b"https://\xc3\xa9vil.example"[..],
            b"https://evil\x80",
            b"x\x7f",
        ] {
            let e = one(bad).unwrap_err().into_response();
            assert_eq!(e.status, 400, "{bad:?}");
        }
        let two = judged_header("origin", [&b"a"[..], b"b"].into_iter()).unwrap_err();
        assert_eq!(two.into_response().status, 400);
    }

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(host_name("Example.COM:8080"), "example.com");
        assert_eq!(host_name("[::1]:80"), "::1");
        assert_eq!(host_name("localhost."), "localhost");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
    }

    #[test]
    fn tokens_are_found_by_position_and_short_ones_refused() {
        let t = Tokens::parse("# ops\nabcdefghijklmnop\n\nqrstuvwxyz0123456789\n").unwrap();
        assert_eq!(t.find("qrstuvwxyz0123456789"), Some(1));
        assert_eq!(t.find("abcdefghijklmnop"), Some(0));
        assert_eq!(t.find("abcdefghijklmno"), None);
        assert!(Tokens::parse("short\n").is_err());
        assert!(Tokens::parse("# only a comment\n").is_err());
        assert_eq!(format!("{t:?}"), "Tokens(2 tokens)");
    }
}
