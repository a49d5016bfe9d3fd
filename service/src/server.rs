//! The HTTP/1.1 server (hyper 1 on tokio): keep-alive connections, bounded bodies and header reads,
//! store calls on blocking threads, graceful shutdown on SIGINT/SIGTERM.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use snowmint::ErrorCode;
use tokio::net::TcpListener;

use crate::{body_too_large, ApiError, Response, Route, Service, MAX_BODY};

/// How long a client may take to send a request's headers, and then its body.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long in-flight requests may take to finish once shutdown begins.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

fn to_hyper(r: Response) -> hyper::Response<Full<Bytes>> {
    let mut out = hyper::Response::new(Full::new(Bytes::from(r.body)));
    *out.status_mut() = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = out.headers_mut();
    if !r.content_type.is_empty() {
        h.insert(CONTENT_TYPE, HeaderValue::from_static(r.content_type));
    }
    for (name, value) in r.headers {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    out
}

async fn answer(
    service: Arc<Service>,
    req: Request<Incoming>,
    late: bool,
) -> hyper::Response<Full<Bytes>> {
    // CORS (`--cors-origin`): the origin's pages may read every answer; a preflight of a known route is
    // answered here, before the protocol.
    let cors = service.config().cors_allow(
        req.headers()
            .get(hyper::header::ORIGIN)
            .and_then(|v| v.to_str().ok()),
    );
    let preflight = req.method() == hyper::Method::OPTIONS
        && req
            .headers()
            .contains_key(hyper::header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut r = answer_protocol(service, req, late, cors.is_some() && preflight).await;
    if let Some(origin) = cors {
        let h = r.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&origin) {
            h.insert(hyper::header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        }
        h.insert(hyper::header::VARY, HeaderValue::from_static("origin"));
        h.insert(
            hyper::header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("retry-after"),
        );
        if preflight {
            h.insert(
                hyper::header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, POST, DELETE"),
            );
            h.insert(
                hyper::header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static("content-type"),
            );
            h.insert(
                hyper::header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("600"),
            );
        }
    }
    r
}

async fn answer_protocol(
    service: Arc<Service>,
    req: Request<Incoming>,
    late: bool,
    preflight: bool,
) -> hyper::Response<Full<Bytes>> {
    let method = req.method().as_str().to_string();
    let target = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".to_string());
    let route = Route::of(target.split('?').next().unwrap_or(""));
    if preflight && route != Route::Unknown {
        let mut r = hyper::Response::new(Full::new(Bytes::new()));
        *r.status_mut() = StatusCode::NO_CONTENT;
        return r;
    }
    if late && route != Route::Metrics {
        return to_hyper(service.refuse(route, Service::shutdown_error()));
    }
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(len) = declared.filter(|&l| l > MAX_BODY as u64) {
        return to_hyper(service.refuse(route, body_too_large(len as usize)));
    }
    let body = match tokio::time::timeout(
        READ_TIMEOUT,
        Limited::new(req.into_body(), MAX_BODY).collect(),
    )
    .await
    {
        Ok(Ok(b)) => b.to_bytes(),
        Ok(Err(e))
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return to_hyper(service.refuse(route, body_too_large(MAX_BODY + 1)));
        }
        Ok(Err(e)) => {
            let err = ApiError::bad("body", format!("cannot read the body: {e}"));
            return to_hyper(service.refuse(route, err));
        }
        Err(_) => {
            let err = ApiError::new(
                408,
                ErrorCode::InvalidArgument,
                format!(
                    "the body did not arrive within {} s",
                    READ_TIMEOUT.as_secs()
                ),
            )
            .field("body");
            return to_hyper(service.refuse(route, err));
        }
    };
    let r = if route.blocks() {
        let s = service.clone();
        match tokio::task::spawn_blocking(move || s.handle(&method, &target, &body)).await {
            Ok(r) => r,
            Err(_) => service.refuse(
                route,
                ApiError::new(500, ErrorCode::Panic, "the request's worker failed"),
            ),
        }
    } else {
        service.handle(&method, &target, &body)
    };
    to_hyper(r)
}

/// Serves `service` on `listener` until `shutdown` completes, then stops accepting, lets in-flight
/// requests finish (at most [`SHUTDOWN_GRACE`]) and returns. The caller releases the service's lease.
pub async fn serve(
    service: Arc<Service>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(READ_TIMEOUT)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(a) => a,
                    // Out of file descriptors and the like: wait a little instead of spinning.
                    Err(_) => { tokio::time::sleep(Duration::from_millis(10)).await; continue; }
                };
                let _ = stream.set_nodelay(true);
                let s = service.clone();
                let conn = builder.serve_connection(
                    TokioIo::new(stream),
                    service_fn(move |req| {
                        let s = s.clone();
                        // Judged when the request's head arrived: one received before shutdown began
                        // finishes, even if its body arrives later.
                        let late = s.is_shutting_down();
                        async move { Ok::<_, Infallible>(answer(s, req, late).await) }
                    }),
                );
                let watched = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = watched.await;
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    service.begin_shutdown();
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
    Ok(())
}

/// SIGINT or SIGTERM.
pub async fn signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// `snowmint serve`: opens the service, listens on `listen`, reports the address on standard output
/// (`snowmint serve: listening on http://ADDR`, useful with port 0), serves until SIGINT/SIGTERM, then
/// shuts down gracefully and releases the service's own lease.
pub fn run(service: Service, listen: SocketAddr) -> Result<(), snowmint_coord::Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("snowmint-serve")
        .build()
        .map_err(|e| {
            snowmint_coord::Error::unavailable(format!("cannot start the runtime: {e}"))
        })?;
    let service = Arc::new(service);
    runtime.block_on(async {
        let listener = TcpListener::bind(listen).await.map_err(|e| {
            snowmint_coord::Error::invalid(format!("cannot listen on {listen}: {e}"))
        })?;
        let addr = listener.local_addr().map_err(|e| {
            snowmint_coord::Error::invalid(format!("cannot listen on {listen}: {e}"))
        })?;
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "snowmint serve: listening on http://{addr} (node ID {}, layout {})",
                service.node_id(),
                service.config().layout_name
            );
            let _ = out.flush();
        }
        serve(service.clone(), listener, signal())
            .await
            .map_err(|e| snowmint_coord::Error::unavailable(format!("serving: {e}")))
    })?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    service.release()
}
