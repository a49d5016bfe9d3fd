//! An answer ([`Response`]) and a refusal ([`ApiError`]: a status, a stable code and a message).

use super::*;

/// An answer: status, content type, extra headers and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// `content-type` (empty for a body-less 204).
    pub content_type: &'static str,
    /// Extra headers (`allow`, `retry-after`).
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// A failed request: status and the error body's fields.
#[derive(Clone, Debug)]
pub struct ApiError {
    pub(crate) status: u16,
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
    pub(crate) field: Option<&'static str>,
    pub(crate) retry_after_ms: Option<u64>,
    pub(crate) allow: Option<&'static str>,
    /// `www-authenticate: Bearer` (a 401).
    pub(crate) www_authenticate: bool,
}

impl ApiError {
    /// An answer's error. Clients are not told where the store is: every URL in `message` (and so any
    /// password in one) becomes `<store>`.
    pub(crate) fn new(status: u16, code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: snowmint_coord::without_urls(&message.into()),
            field: None,
            retry_after_ms: None,
            allow: None,
            www_authenticate: false,
        }
    }

    pub(crate) fn field(mut self, field: &'static str) -> ApiError {
        self.field = Some(field);
        self
    }

    pub(crate) fn bad(field: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(400, ErrorCode::InvalidArgument, message).field(field)
    }

    /// The status a store or generator error answers with (SERVICE-API.md's mapping).
    pub(crate) fn from_coord(e: snowmint_coord::Error) -> ApiError {
        let status = match e.code() {
            ErrorCode::StoreUnavailable
            | ErrorCode::NodeIdsExhausted
            | ErrorCode::TooFarAhead
            | ErrorCode::ServiceUnavailable => 503,
            ErrorCode::LeaseLost | ErrorCode::SequencerDestroyed | ErrorCode::SequencerConflict => {
                409
            }
            ErrorCode::SequencerNotFound => 404,
            ErrorCode::InvalidArgument | ErrorCode::Parse => 400,
            _ => 500,
        };
        ApiError::new(status, e.code(), e.message())
    }

    pub(crate) fn into_response(self) -> Response {
        let mut headers = Vec::new();
        if let Some(allow) = self.allow {
            headers.push(("allow", allow.to_string()));
        }
        if self.www_authenticate {
            headers.push(("www-authenticate", "Bearer".to_string()));
        }
        if let Some(ms) = self.retry_after_ms {
            headers.push(("retry-after", ms.div_ceil(1000).max(1).to_string()));
        }
        Response {
            status: self.status,
            content_type: json::CONTENT_TYPE,
            headers,
            body: json::error(
                self.code.as_str(),
                &self.message,
                self.field,
                self.retry_after_ms,
            ),
        }
    }
}

pub(crate) fn json_response(status: u16, body: Vec<u8>) -> Response {
    Response {
        status,
        content_type: json::CONTENT_TYPE,
        headers: Vec::new(),
        body,
    }
}

/// `413` for a body of `len` bytes.
pub fn body_too_large(len: usize) -> ApiError {
    ApiError::new(
        413,
        ErrorCode::InvalidArgument,
        format!("the body is {len} bytes; at most {MAX_BODY} are accepted"),
    )
    .field("body")
}

impl ApiError {
    /// The answer for this error.
    pub fn response(self) -> Response {
        self.into_response()
    }
}
