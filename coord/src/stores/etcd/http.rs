//! The smallest HTTP/1.1 client etcd's JSON gateway needs: `POST` with a JSON body over one kept-alive
//! connection (opened by a [`Dial`]: TCP, TLS over TCP for `etcd+https://` (`coord/src/stores/tls.rs`),
//! or the simulation's in-memory network), responses framed by `Content-Length` or `chunked` (trailers
//! skipped), every step bounded by a timeout; an `Authorization` header carries etcd's auth token. No
//! redirects, no proxies: the gateway on a cluster's client URLs needs none of them.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::time::{Duration, Instant};

use super::transport::{Dial, Stream};

/// The largest response body read (a range over a big sequencer is a few hundred KiB).
const MAX_BODY: usize = 64 << 20;

/// One connection to one endpoint (`host:port`).
#[derive(Debug)]
pub(crate) struct Connection {
    reader: BufReader<Box<dyn Stream>>,
    host: String,
}

/// An HTTP response: status and body.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub body: Vec<u8>,
    /// The server asked to close the connection after this response.
    pub close: bool,
}

impl Connection {
    /// Connects to `endpoint` (`host:port`) through `dial`, within `timeout` (a TLS handshake included).
    pub(crate) fn open(
        dial: &dyn Dial,
        endpoint: &str,
        timeout: Duration,
    ) -> io::Result<Connection> {
        Ok(Connection {
            reader: BufReader::new(
                dial.dial(endpoint, timeout)
                    .map_err(|e| timed_out(e, "no connection", timeout))?,
            ),
            host: endpoint.to_string(),
        })
    }

    /// Sends `POST path` with a JSON `body` (and etcd's auth `token`, if any) and reads the whole
    /// response, within `timeout`.
    pub(crate) fn post(
        &mut self,
        path: &str,
        body: &[u8],
        token: Option<&str>,
        timeout: Duration,
    ) -> io::Result<Response> {
        let deadline = Instant::now() + timeout;
        let stream = self.reader.get_mut();
        stream.set_write_timeout(Some(timeout))?;
        let authorization = token.map_or(String::new(), |t| format!("Authorization: {t}\r\n"));
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n{authorization}Content-Length: {}\r\n\r\n",
            self.host,
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        stream
            .write_all(&request)
            .and_then(|()| stream.flush())
            .and_then(|()| self.read_response(deadline))
            .map_err(|e| timed_out(e, "no answer", timeout))
    }

    fn set_deadline(&mut self, deadline: Instant) -> io::Result<()> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "request timed out"));
        }
        self.reader.get_mut().set_read_timeout(Some(left))
    }

    fn line(&mut self, deadline: Instant) -> io::Result<String> {
        self.set_deadline(deadline)?;
        let mut line = String::new();
        let n = (&mut self.reader).take(64 * 1024).read_line(&mut line)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        if !line.ends_with('\n') {
            return Err(bad("a header line without an end"));
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_string())
    }

    fn exact(&mut self, n: usize, out: &mut Vec<u8>, deadline: Instant) -> io::Result<()> {
        if out.len() + n > MAX_BODY {
            return Err(bad("response body too large"));
        }
        let start = out.len();
        out.resize(start + n, 0);
        let mut filled = start;
        while filled < out.len() {
            self.set_deadline(deadline)?;
            match self.reader.read(&mut out[filled..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ))
                }
                Ok(k) => filled += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn read_response(&mut self, deadline: Instant) -> io::Result<Response> {
        let status_line = self.line(deadline)?;
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .filter(|_| version.starts_with("HTTP/1."))
            .ok_or_else(|| bad("not an HTTP/1.x status line"))?;
        let mut length: Option<usize> = None;
        let mut chunked = false;
        let mut close = version == "HTTP/1.0";
        loop {
            let line = self.line(deadline)?;
            if line.is_empty() {
                break;
            }
            let Some((name, value)) = line.split_once(':') else {
                return Err(bad("a header without a colon"));
            };
            let value = value.trim();
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => {
                    length = Some(value.parse().map_err(|_| bad("a bad Content-Length"))?)
                }
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "connection" => close = value.eq_ignore_ascii_case("close"),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let size_line = self.line(deadline)?;
                let size =
                    usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                        .map_err(|_| bad("a bad chunk size"))?;
                if size == 0 {
                    // Trailers (the gateway sends gRPC ones), up to the empty line.
                    while !self.line(deadline)?.is_empty() {}
                    break;
                }
                self.exact(size, &mut body, deadline)?;
                let mut crlf = Vec::new();
                self.exact(2, &mut crlf, deadline)?;
                if crlf != b"\r\n" {
                    return Err(bad("a chunk without its CRLF"));
                }
            }
        } else if let Some(n) = length {
            self.exact(n, &mut body, deadline)?;
        } else {
            // Delimited by the end of the connection.
            close = true;
            self.set_deadline(deadline)?;
            (&mut self.reader)
                .take(MAX_BODY as u64)
                .read_to_end(&mut body)?;
        }
        Ok(Response {
            status,
            body,
            close,
        })
    }
}

/// A socket step that ran out of time, said so with the bound: a read past its timeout comes back from
/// the OS as `WouldBlock` ("Resource temporarily unavailable (os error 11)" on Linux), which names
/// neither the timeout nor that nothing answered.
fn timed_out(e: io::Error, what: &str, timeout: Duration) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
            io::ErrorKind::TimedOut,
            format!("{what} within {} ms", timeout.as_millis()),
        ),
        _ => e,
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed HTTP response: {what}"),
    )
}

/// Standard base64 (RFC 4648, with padding), as the gateway writes `bytes` fields.
pub(crate) fn base64_encode(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional); `None` on any other character.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let text = text.trim_end_matches('=').as_bytes();
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        out.push((n >> 16) as u8);
        if chunk.len() > 2 {
            out.push((n >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(n as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::transport::TcpDial;
    use super::*;

    #[test]
    fn base64_round_trips_rfc4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(plain.as_bytes()), coded);
            assert_eq!(base64_decode(coded).unwrap(), plain.as_bytes());
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(base64_decode(&base64_encode(&all)).unwrap(), all);
        assert_eq!(base64_decode("Zm9v!"), None);
        assert_eq!(base64_decode("Z"), None);
    }

    fn serve(reply: &'static [u8]) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            s.write_all(reply).unwrap();
            std::thread::sleep(Duration::from_millis(300));
        });
        addr
    }

    /// One POST to a server that answers `reply` (then keeps the socket open for a moment, so that
    /// reads end by framing, not by EOF).
    fn post_to(reply: &'static [u8]) -> io::Result<Response> {
        let t = Duration::from_secs(2);
        Connection::open(&TcpDial::default(), &serve(reply), t)?.post("/p", b"{}", None, t)
    }

    #[test]
    fn reads_chunked_responses_with_trailers_and_content_length() {
        let r = post_to(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X\r\n\r\n5\r\nhello\r\n1;ext\r\n!\r\n0\r\nX: y\r\n\r\n").unwrap();
        assert_eq!(
            (r.status, r.body.as_slice(), r.close),
            (200, &b"hello!"[..], false)
        );
        let r =
            post_to(b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                .unwrap();
        assert_eq!(
            (r.status, r.body.as_slice(), r.close),
            (404, &b"{}"[..], true)
        );
    }

    #[test]
    fn a_silent_server_times_out_within_the_bound() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let mut c = Connection::open(&TcpDial::default(), &addr, Duration::from_secs(1)).unwrap();
        let t0 = Instant::now();
        let e = c
            .post("/p", b"{}", None, Duration::from_millis(300))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e:?}");
        assert_eq!(e.to_string(), "no answer within 300 ms");
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        drop(listener);
    }

    #[test]
    fn malformed_responses_are_errors() {
        for reply in [
            &b"SMTP ready\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        ] {
            assert_eq!(
                post_to(reply).unwrap_err().kind(),
                io::ErrorKind::InvalidData
            );
        }
    }
}
