//! The JSON the service writes (by hand: a batch of 10000 decimal strings is the hot path) and the little
//! it reads (the optional `{"holder": …}` of a lease request).

use crate::ApiError;

pub const CONTENT_TYPE: &str = "application/json";

/// At most `max` characters of `s` (for echoing input in messages).
pub fn clip(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `s` as a JSON string literal.
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

pub fn push_u64(out: &mut Vec<u8>, n: u64) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(n).as_bytes());
}

/// A u64 as a decimal string.
pub fn push_dec(out: &mut Vec<u8>, n: u64) {
    out.push(b'"');
    push_u64(out, n);
    out.push(b'"');
}

/// `{"error": {"code": …, "message": …, "field": …, "retry_after_ms": …}}`
pub fn error(
    code: &str,
    message: &str,
    field: Option<&str>,
    retry_after_ms: Option<u64>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + message.len());
    out.extend_from_slice(b"{\"error\":{\"code\":");
    push_str(&mut out, code);
    out.extend_from_slice(b",\"message\":");
    push_str(&mut out, message);
    if let Some(f) = field {
        out.extend_from_slice(b",\"field\":");
        push_str(&mut out, f);
    }
    if let Some(ms) = retry_after_ms {
        out.extend_from_slice(b",\"retry_after_ms\":");
        push_u64(&mut out, ms);
    }
    out.extend_from_slice(b"}}");
    out
}

/// The answer of `POST /v1/ids`.
pub fn ids(
    ids: &[u64],
    valid_until: u64,
    valid_for_ms: u64,
    layout: &str,
    node_id: u64,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(ids.len() * 23 + 128 + layout.len());
    out.extend_from_slice(b"{\"ids\":[");
    for (i, &id) in ids.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_dec(&mut out, id);
    }
    out.extend_from_slice(b"],\"valid_until\":");
    push_u64(&mut out, valid_until);
    out.extend_from_slice(b",\"valid_for_ms\":");
    push_u64(&mut out, valid_for_ms);
    out.extend_from_slice(b",\"layout\":");
    push_str(&mut out, layout);
    out.extend_from_slice(b",\"node_id\":");
    push_u64(&mut out, node_id);
    out.push(b'}');
    out
}

/// The answer of `GET /healthz`.
pub fn health(node_id: u64, layout: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + layout.len());
    out.extend_from_slice(b"{\"status\":\"ok\",\"node_id\":");
    push_u64(&mut out, node_id);
    out.extend_from_slice(b",\"layout\":");
    push_str(&mut out, layout);
    out.push(b'}');
    out
}

/// Parses JSON, refusing an object with a key twice (serde_json keeps the last one silently, so two
/// readers of one body could disagree on it).
fn strict(body: &[u8]) -> Result<serde_json::Value, serde_json::Error> {
    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
    struct Strict(serde_json::Value);
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Strict;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E: Error>(self, v: bool) -> Result<Strict, E> {
            Ok(Strict(v.into()))
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<Strict, E> {
            Ok(Strict(v.into()))
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<Strict, E> {
            Ok(Strict(v.into()))
        }
        fn visit_f64<E: Error>(self, v: f64) -> Result<Strict, E> {
            Ok(Strict(v.into()))
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<Strict, E> {
            Ok(Strict(v.into()))
        }
        fn visit_unit<E: Error>(self) -> Result<Strict, E> {
            Ok(Strict(serde_json::Value::Null))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
            let mut out = Vec::new();
            while let Some(Strict(v)) = seq.next_element()? {
                out.push(v);
            }
            Ok(Strict(out.into()))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
            let mut out = serde_json::Map::new();
            while let Some(k) = map.next_key::<String>()? {
                let Strict(v) = map.next_value()?;
                if out.contains_key(&k) {
                    return Err(A::Error::custom(format!(
                        "the key {:?} is given twice",
                        clip(&k, 40)
                    )));
                }
                out.insert(k, v);
            }
            Ok(Strict(out.into()))
        }
    }
    impl<'de> Deserialize<'de> for Strict {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
            d.deserialize_any(V)
        }
    }
    serde_json::from_slice::<Strict>(body).map(|s| s.0)
}

fn parse(body: &[u8]) -> Result<Option<serde_json::Map<String, serde_json::Value>>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let v = strict(body).map_err(|e| {
        ApiError::new(
            400,
            snowmint::ErrorCode::Parse,
            format!("the body is not JSON: {e}"),
        )
        .field("body")
    })?;
    match v {
        serde_json::Value::Object(m) => Ok(Some(m)),
        _ => Err(ApiError::bad("body", "the body must be a JSON object")),
    }
}

/// A body that must be empty or `{}`.
pub fn empty_body(body: &[u8]) -> Result<(), ApiError> {
    match parse(body)? {
        Some(m) if !m.is_empty() => Err(ApiError::bad(
            "body",
            format!(
                "this route takes no body (or {{}}); got the field {:?}",
                clip(m.keys().next().map(String::as_str).unwrap_or(""), 40)
            ),
        )),
        _ => Ok(()),
    }
}

/// The optional `holder` of `POST /v1/leases`.
pub fn holder(body: &[u8]) -> Result<Option<String>, ApiError> {
    let Some(mut m) = parse(body)? else {
        return Ok(None);
    };
    let holder = match m.remove("holder") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) if s.chars().count() <= 200 => Some(s),
        Some(serde_json::Value::String(_)) => {
            return Err(ApiError::bad(
                "body",
                "holder is longer than 200 characters",
            ))
        }
        Some(_) => return Err(ApiError::bad("body", "holder must be a string")),
    };
    if let Some(k) = m.keys().next() {
        return Err(ApiError::bad(
            "body",
            format!("unknown field {:?}; the body takes holder", clip(k, 40)),
        ));
    }
    Ok(holder)
}
