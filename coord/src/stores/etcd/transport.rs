//! How the etcd client opens a connection: the [`Dial`] seam. [`TcpDial`] (the default) connects over
//! std TCP; a deterministic simulation plugs in an in-memory network instead (a simulated gateway behind
//! it, faults drawn from a seed), so that the client's own code — its timeouts, its re-sends on a fresh
//! connection or the next endpoint — runs unchanged against it. `etcd+https://` is [`TcpDial`] with a
//! TLS configuration: rustls over the TCP stream (`coord/src/stores/tls.rs`).

use std::fmt::Debug;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One open connection: a byte stream with read and write timeouts. A read or write that does not
/// complete within its timeout fails with [`io::ErrorKind::TimedOut`] or [`io::ErrorKind::WouldBlock`]
/// (a simulated stream reports it at once, without waiting, so that runs do not depend on wall time).
pub trait Stream: Read + Write + Send + Debug {
    /// The bound on each following read (`None`: none).
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// The bound on each following write (`None`: none).
    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
}

/// Opens connections to endpoints (`host:port`).
pub trait Dial: Send + Sync + Debug {
    /// Connects to `endpoint` within `timeout`.
    fn dial(&self, endpoint: &str, timeout: Duration) -> io::Result<Box<dyn Stream>>;
}

/// TCP (`TCP_NODELAY`), trying each of the endpoint's addresses within the timeout in all; with a TLS
/// configuration, rustls over it (the handshake within the same timeout).
#[derive(Debug, Default, Clone)]
pub struct TcpDial {
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl TcpDial {
    /// Plain TCP when `tls` is `None`, else TLS over TCP.
    pub fn new(tls: Option<Arc<rustls::ClientConfig>>) -> TcpDial {
        TcpDial { tls }
    }
}

impl Stream for crate::stores::tls::Stream {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.tcp().set_read_timeout(timeout)
    }
    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.tcp().set_write_timeout(timeout)
    }
}

impl Stream for TcpStream {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }
    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_write_timeout(self, timeout)
    }
}

impl Dial for TcpDial {
    fn dial(&self, endpoint: &str, timeout: Duration) -> io::Result<Box<dyn Stream>> {
        let deadline = Instant::now() + timeout;
        let addrs: Vec<SocketAddr> = endpoint.to_socket_addrs()?.collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, "the host name has no address");
        for addr in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                last = io::Error::new(io::ErrorKind::TimedOut, "connect timed out");
                break;
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    let left = deadline
                        .saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(1));
                    stream.set_read_timeout(Some(left))?;
                    stream.set_write_timeout(Some(left))?;
                    return Ok(Box::new(crate::stores::tls::Stream::new(
                        stream,
                        endpoint,
                        self.tls.as_ref(),
                    )?));
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}
