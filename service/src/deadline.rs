//! Every state of a connection is bounded in time, so that a client that stops reading (or trickles)
//! gives its slot back:
//!
//! - reading a request's head, and waiting idle for the next one on a keep-alive connection:
//!   [`crate::server::READ_TIMEOUT`] (hyper's header timer, which runs from the end of one answer);
//! - reading a body: [`crate::server::READ_TIMEOUT`];
//! - writing an answer (or the pipelined answers queued behind it): a write that makes no progress for
//!   [`WRITE_STALL`] closes the connection ([`Stall`], under TLS too);
//! - the connection as a whole: after [`MAX_LIFETIME`] it is closed gracefully (the answer in flight
//!   is finished, `connection: close`), and [`WRITE_STALL`] later whatever it is doing (the server's
//!   `connection`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// How long a write may wait for the client to read before the connection is closed.
pub const WRITE_STALL: Duration = Duration::from_secs(10);
/// How long one connection is served before it is closed gracefully.
pub const MAX_LIFETIME: Duration = Duration::from_secs(300);

/// A socket whose writes fail with `TimedOut` once one has waited [`WRITE_STALL`] without progress.
pub struct Stall<S> {
    inner: S,
    limit: Duration,
    timer: Option<Pin<Box<Sleep>>>,
}

impl<S> Stall<S> {
    /// `inner`, its writes bounded by `limit`.
    pub fn new(inner: S, limit: Duration) -> Stall<S> {
        Stall {
            inner,
            limit,
            timer: None,
        }
    }

    /// A write's outcome: progress (or an error) clears the timer; waiting starts it, and fails once it
    /// has run out.
    fn judge<T>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if r.is_ready() {
            self.timer = None;
            return r;
        }
        let limit = self.limit;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not read the answer in time",
            )));
        }
        Poll::Pending
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Stall<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Stall<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let r = Pin::new(&mut me.inner).poll_write(cx, buf);
        me.judge(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let r = Pin::new(&mut me.inner).poll_write_vectored(cx, bufs);
        me.judge(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let r = Pin::new(&mut me.inner).poll_flush(cx);
        me.judge(cx, r)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let r = Pin::new(&mut me.inner).poll_shutdown(cx);
        me.judge(cx, r)
    }
}
