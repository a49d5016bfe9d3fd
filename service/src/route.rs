//! The routes of the protocol ([`Route`]) and their query strings.

use super::*;

/// The routes of the protocol (what `/metrics` counts requests by).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Route {
    /// `POST /v1/ids`
    Ids,
    /// `POST /v1/leases`
    Leases,
    /// `POST /v1/leases/{token}/renew`
    Renew,
    /// `DELETE /v1/leases/{token}`
    Release,
    /// `GET /healthz`
    Health,
    /// `GET /metrics`
    Metrics,
    /// Anything else.
    Unknown,
}

impl Route {
    /// The route of a path (the query removed).
    pub fn of(path: &str) -> Route {
        match path {
            "/v1/ids" => Route::Ids,
            "/v1/leases" => Route::Leases,
            "/healthz" => Route::Health,
            "/metrics" => Route::Metrics,
            p => match p.strip_prefix("/v1/leases/") {
                Some(rest)
                    if rest
                        .strip_suffix("/renew")
                        .is_some_and(|t| !t.is_empty() && !t.contains('/')) =>
                {
                    Route::Renew
                }
                Some(rest) if !rest.is_empty() && !rest.contains('/') => Route::Release,
                _ => Route::Unknown,
            },
        }
    }

    /// The route's label in `snowmint_http_requests_total{route=…}`.
    pub fn label(self) -> &'static str {
        match self {
            Route::Ids => "/v1/ids",
            Route::Leases => "/v1/leases",
            Route::Renew => "/v1/leases/{token}/renew",
            Route::Release => "/v1/leases/{token}",
            Route::Health => "/healthz",
            Route::Metrics => "/metrics",
            Route::Unknown => "other",
        }
    }

    /// `true` if answering may wait on the store (run it off the reactor).
    pub fn blocks(self) -> bool {
        matches!(self, Route::Leases | Route::Renew | Route::Release)
    }

    /// `true` for the routes `--auth-token-file` guards (the data routes; `/healthz` and `/metrics`
    /// stay open).
    pub fn needs_token(self) -> bool {
        matches!(
            self,
            Route::Ids | Route::Leases | Route::Renew | Route::Release
        )
    }

    pub(crate) fn allows(self, method: &str) -> bool {
        match self {
            Route::Ids | Route::Leases | Route::Renew => method == "POST",
            Route::Release => method == "DELETE",
            Route::Health | Route::Metrics => method == "GET" || method == "HEAD",
            Route::Unknown => false,
        }
    }

    pub(crate) fn allow(self) -> &'static str {
        match self {
            Route::Ids | Route::Leases | Route::Renew => "POST",
            Route::Release => "DELETE",
            Route::Health | Route::Metrics => "GET, HEAD",
            Route::Unknown => "",
        }
    }
}

pub(crate) fn no_query(query: Option<&str>) -> Result<(), ApiError> {
    match query {
        None | Some("") => Ok(()),
        Some(q) => Err(ApiError::bad(
            "query",
            format!(
                "unexpected query {:?}; this route takes none",
                json::clip(q, 100)
            ),
        )),
    }
}

/// `count=N` of `POST /v1/ids` (1 when absent); any other parameter is an error.
pub(crate) fn parse_count(query: Option<&str>, max: u64) -> Result<u64, ApiError> {
    let mut count = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k != "count" {
            return Err(ApiError::bad(
                "query",
                format!(
                    "unknown query parameter {:?}; POST /v1/ids takes count=N",
                    json::clip(k, 40)
                ),
            ));
        }
        if count.is_some() {
            return Err(ApiError::bad("count", "count is given twice"));
        }
        let n = if !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit()) {
            v.parse::<u64>().ok()
        } else {
            None
        };
        match n {
            Some(n) if (1..=max).contains(&n) => count = Some(n),
            Some(_) => {
                return Err(ApiError::bad(
                    "count",
                    format!("count must be 1..={max}, got {v}"),
                ))
            }
            None => {
                return Err(ApiError::bad(
                    "count",
                    format!(
                        "count must be a whole number 1..={max}, got {:?}",
                        json::clip(v, 40)
                    ),
                ))
            }
        }
    }
    Ok(count.unwrap_or(1))
}
