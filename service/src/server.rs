//! The HTTP/1.1 server (hyper 1 on tokio): keep-alive connections, each state of them bounded in time
//! ([`crate::deadline`]), slots shared out by source ([`crate::slots`]), bounded bodies, store calls on
//! blocking threads, graceful shutdown on SIGINT/SIGTERM.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use snowmint::ErrorCode;
use tokio::net::TcpListener;

use crate::deadline::{Stall, MAX_LIFETIME, WRITE_STALL};
use crate::slots::Slots;
use crate::{body_too_large, ApiError, ClientKey, Head, Response, Route, Service, MAX_BODY};

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
    peer: IpAddr,
    tls: bool,
) -> hyper::Response<Full<Bytes>> {
    let h = req.headers();
    let route = Route::of(req.uri().path());
    let text = |name: hyper::header::HeaderName, field| {
        crate::judged_header(field, h.get_all(name).iter().map(HeaderValue::as_bytes))
    };
    let head = (|| {
        Ok::<_, ApiError>(Head {
            method: req.method().as_str(),
            host: text(HOST, "host")?.or_else(|| req.uri().authority().map(|a| a.as_str())),
            origin: text(ORIGIN, "origin")?,
            authorization: text(AUTHORIZATION, "authorization")?,
            content_type: text(CONTENT_TYPE, "content-type")?,
            tls,
        })
    })();
    let head = match head {
        Ok(head) => head,
        Err(e) => return to_hyper(service.refuse(route, e)),
    };
    // CORS (`--cors-origin`): the origin's pages may read every answer (a refusal too); a preflight of
    // a known route from an allowed origin to an allowed host is answered here, before the protocol.
    let cors = service.config().cors_allow(head.origin);
    let preflight = req.method() == hyper::Method::OPTIONS
        && h.contains_key(hyper::header::ACCESS_CONTROL_REQUEST_METHOD)
        && cors.is_some()
        && route != Route::Unknown
        && head
            .host
            .is_none_or(|host| service.config().host_allowed(host));
    let mut r = if preflight {
        let mut r = hyper::Response::new(Full::new(Bytes::new()));
        *r.status_mut() = StatusCode::NO_CONTENT;
        r
    } else {
        match service.config().admit(route, &head, peer) {
            Ok(client) => answer_protocol(service, req, late, client, route).await,
            Err(e) => to_hyper(service.refuse(route, e)),
        }
    };
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
                HeaderValue::from_static("content-type, authorization"),
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
    client: ClientKey,
    route: Route,
) -> hyper::Response<Full<Bytes>> {
    let method = req.method().as_str().to_string();
    let target = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".to_string());
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
        // On a blocking thread, with a slot of the store calls in flight, answered by the deadline
        // whatever the store does (a call past it finishes in the background, holding its slot).
        // Who wins: the worker delivering its answer (1), or the deadline (2), whose 503 the client
        // is then given; a worker that loses undoes its answer (a lease taken is released).
        let outcome = Arc::new(std::sync::atomic::AtomicU8::new(0));
        let s = service.clone();
        let slots = service.store_calls().clone();
        let o = outcome.clone();
        let work = async move {
            let slot = slots.acquire_owned().await;
            tokio::task::spawn_blocking(move || {
                let _slot = slot;
                let r = s.handle_as(&client, &method, &target, &body);
                if o.compare_exchange(0, 1, SeqCst, SeqCst).is_err() {
                    s.abandon(&client, route, &r);
                }
                r
            })
            .await
        };
        tokio::pin!(work);
        let worked = match tokio::time::timeout(crate::STORE_DEADLINE, &mut work).await {
            Ok(w) => Some(w),
            Err(_) if outcome.compare_exchange(0, 2, SeqCst, SeqCst).is_ok() => None,
            // The answer was delivered just as the deadline passed: it is the client's.
            Err(_) => Some(work.await),
        };
        match worked {
            Some(Ok(r)) => r,
            Some(Err(_)) => service.refuse(
                route,
                ApiError::new(500, ErrorCode::Panic, "the request's worker failed"),
            ),
            None => service.store_timeout(route),
        }
    } else {
        service.handle_as(&client, &method, &target, &body)
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
    serve_tls(service, listener, None, shutdown).await
}

/// The answer to a connection over `--max-connections`, before it is closed.
fn too_many_connections() -> Vec<u8> {
    let body = ApiError::new(
        503,
        ErrorCode::ServiceUnavailable,
        "too many connections (--max-connections); retry in a moment",
    )
    .into_response()
    .body;
    let mut out = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

/// [`serve`] over TLS when `tls` is given (`--tls-cert`/`--tls-key`; the handshake must finish within
/// [`READ_TIMEOUT`]). At most `--max-connections` connections are served at once, at most
/// `--max-connections-per-source` of them (default a quarter) from one source ([`crate::slots`]); one
/// more is answered `503 SERVICE_UNAVAILABLE` and closed. Every state of a connection is bounded in time
/// ([`crate::deadline`]).
pub async fn serve_tls(
    service: Arc<Service>,
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(READ_TIMEOUT)
        .keep_alive(true);
    let builder = Arc::new(builder);
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    service.supervise();
    let config = service.config();
    let slots = Slots::new(
        config.max_connections,
        config
            .max_connections_per_source
            .unwrap_or_else(|| crate::slots::default_per_source(config.max_connections)),
    );
    // Shutdown: `closing` turns true; every connection task holds a clone of `alive`, so the server
    // knows when the last one has finished.
    let (closing, closed) = tokio::sync::watch::channel(false);
    let (alive, mut all_done) = tokio::sync::mpsc::channel::<()>(1);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (mut stream, peer) = match accepted {
                    Ok(a) => a,
                    // Out of file descriptors and the like: wait a little instead of spinning.
                    Err(_) => { tokio::time::sleep(Duration::from_millis(10)).await; continue; }
                };
                let _ = stream.set_nodelay(true);
                let Ok(slot) = slots.take(peer.ip()) else {
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        use tokio::io::AsyncWriteExt;
                        // Over TLS the refusal would need a handshake: the connection is just closed.
                        if acceptor.is_none() {
                            let _ = tokio::time::timeout(WRITE_STALL, stream.write_all(&too_many_connections())).await;
                        }
                        let _ = tokio::time::timeout(WRITE_STALL, stream.shutdown()).await;
                    });
                    continue;
                };
                let (s, b, c, a, alive) = (service.clone(), builder.clone(), closed.clone(), acceptor.clone(), alive.clone());
                let peer = peer.ip();
                let stream = Stall::new(stream, WRITE_STALL);
                tokio::spawn(async move {
                    let _slot = slot;
                    let _alive = alive;
                    match a {
                        None => connection(s, &b, c, TokioIo::new(stream), peer, false).await,
                        Some(a) => {
                            if let Ok(Ok(tls)) = tokio::time::timeout(READ_TIMEOUT, a.accept(stream)).await {
                                connection(s, &b, c, TokioIo::new(tls), peer, true).await;
                            }
                        }
                    }
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    service.begin_shutdown();
    let _ = closing.send(true);
    drop(alive);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, all_done.recv()).await;
    Ok(())
}

/// Serves one connection's requests until it ends, the server shuts down or it reaches
/// [`MAX_LIFETIME`]; then it is closed gracefully (the answer in flight is finished), and dropped
/// [`WRITE_STALL`] later whatever it is doing.
async fn connection<I>(
    service: Arc<Service>,
    builder: &http1::Builder,
    mut closing: tokio::sync::watch::Receiver<bool>,
    io: I,
    peer: IpAddr,
    tls: bool,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let conn = builder.serve_connection(
        io,
        service_fn(move |req| {
            let s = service.clone();
            // Judged when the request's head arrived: one received before shutdown began finishes,
            // even if its body arrives later.
            let late = s.is_shutting_down();
            async move { Ok::<_, Infallible>(answer(s, req, late, peer, tls).await) }
        }),
    );
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = tokio::time::sleep(MAX_LIFETIME) => {}
        _ = closing.wait_for(|c| *c) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(WRITE_STALL, conn).await;
}

/// The TLS configuration of `--tls-cert PATH --tls-key PATH` (PEM: the certificate chain, leaf first,
/// and its private key), HTTP/1.1 over TLS 1.2 or 1.3.
pub fn tls_config(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Result<Arc<rustls::ServerConfig>, snowmint_coord::Error> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |what: &str, path: &std::path::Path, e: &dyn std::fmt::Display| {
        snowmint_coord::Error::invalid(format!("{what} {}: {e}", path.display()))
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| bad("--tls-cert", cert, &e))?;
    if chain.is_empty() {
        return Err(bad("--tls-cert", cert, &"no certificate in the file"));
    }
    // The key's text is never echoed: only why it cannot be read.
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| bad("--tls-key", key, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad("--tls-cert", cert, &e))?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| bad("--tls-key", key, &e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
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
    let tls = match (&service.config().tls_cert, &service.config().tls_key) {
        (Some(c), Some(k)) => Some(tls_config(c, k)?),
        (None, None) => None,
        _ => {
            return Err(snowmint_coord::Error::invalid(
                "--tls-cert and --tls-key go together",
            ))
        }
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
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
        if let Some(notice) = service.notice() {
            eprintln!("snowmint serve: {notice}");
        }
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "snowmint serve: listening on {scheme}://{addr} (node ID {}, layout {})",
                service.node_id(),
                service.config().layout_name
            );
            let _ = out.flush();
        }
        serve_tls(service.clone(), listener, tls, signal())
            .await
            .map_err(|e| snowmint_coord::Error::unavailable(format!("serving: {e}")))
    })?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    release_bounded(service)
}

/// How long the release of the own lease may take at shutdown.
pub const RELEASE_BOUND: Duration = Duration::from_secs(3);

/// Releases the service's own lease, waiting at most [`RELEASE_BOUND`]: a store that is gone or does
/// not answer leaves the claim to expire at its TTL (said on standard error), and the exit is clean.
fn release_bounded(service: Arc<Service>) -> Result<(), snowmint_coord::Error> {
    let (tx, rx) = std::sync::mpsc::channel();
    let _ = std::thread::Builder::new()
        .name("snowmint-serve-release".into())
        .spawn(move || {
            let _ = tx.send(service.release());
        });
    let why = match rx.recv_timeout(RELEASE_BOUND) {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!(
            "the store did not answer within {} s",
            RELEASE_BOUND.as_secs()
        ),
    };
    eprintln!("snowmint serve: the own lease was not released ({why}); it expires at its TTL");
    Ok(())
}
