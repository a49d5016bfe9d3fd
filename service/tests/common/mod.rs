//! Helpers of the service's tests and bench: a raw HTTP/1.1 keep-alive client (std sockets, nothing
//! hidden), the service in process on a real 127.0.0.1 socket, and `snowmint serve` as a child process.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint_service::{Config, Service};

/// One answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "status {}: body is not JSON ({e}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The error code of an error body, checking the body's shape on the way.
    pub fn error_code(&self) -> String {
        let v = self.json();
        let e = &v["error"];
        assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        e["code"]
            .as_str()
            .unwrap_or_else(|| panic!("no code: {v}"))
            .to_string()
    }

    /// The IDs of a `/v1/ids` answer.
    pub fn ids(&self) -> Vec<u64> {
        assert_eq!(self.status, 200, "{}", self.text());
        self.json()["ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|v| {
                v.as_str()
                    .expect("a decimal string")
                    .parse::<u64>()
                    .expect("a u64")
            })
            .collect()
    }
}

/// A keep-alive HTTP/1.1 connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    pub fn open(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_nodelay(true).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        Conn {
            reader: BufReader::new(s.try_clone().unwrap()),
            writer: s,
        }
    }

    /// The socket (to read an answer with no body, such as HEAD's).
    pub fn stream(&self) -> &TcpStream {
        &self.writer
    }

    /// Writes raw bytes (a request in pieces).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write");
    }

    pub fn request(&mut self, method: &str, target: &str, body: &[u8]) -> Reply {
        let head = format!(
            "{method} {target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        let mut req = head.into_bytes();
        req.extend_from_slice(body);
        self.send_raw(&req);
        self.read_reply()
    }

    pub fn read_reply(&mut self) -> Reply {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("status line");
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {line:?}"));
        let mut headers = Vec::new();
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            self.reader.read_line(&mut h).expect("header");
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').expect("header line");
            let (k, v) = (k.trim().to_string(), v.trim().to_string());
            if k.eq_ignore_ascii_case("content-length") {
                len = v.parse().unwrap();
            }
            headers.push((k, v));
        }
        let mut body = vec![0u8; len];
        self.reader.read_exact(&mut body).expect("body");
        Reply {
            status,
            headers,
            body,
        }
    }
}

/// A request written as is (`\n` become `\r\n`; a `content-length` is added from the body) on a new
/// connection, and its answer.
pub fn raw(addr: SocketAddr, head: &str, body: &[u8]) -> Reply {
    let mut req = head.trim_end().replace('\n', "\r\n");
    req.push_str(&format!("\r\ncontent-length: {}\r\n\r\n", body.len()));
    let mut c = Conn::open(addr);
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    c.send_raw(&bytes);
    c.read_reply()
}

/// One request on a new connection.
pub fn once(addr: SocketAddr, method: &str, target: &str, body: &[u8]) -> Reply {
    Conn::open(addr).request(method, target, body)
}

/// The service in this process on a real socket, stopped (gracefully) when dropped.
pub struct InProcess {
    pub addr: SocketAddr,
    pub service: Arc<Service>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InProcess {
    pub fn start(service: Service) -> InProcess {
        InProcess::start_tls(service, None)
    }

    /// [`InProcess::start`] over TLS when `tls` is given.
    pub fn start_tls(service: Service, tls: Option<Arc<rustls::ServerConfig>>) -> InProcess {
        let service = Arc::new(service);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (tx, rx) = std::sync::mpsc::channel();
        let s = service.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(l.local_addr().unwrap()).unwrap();
                snowmint_service::server::serve_tls(s, l, tls, async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
            });
        });
        let addr = rx.recv_timeout(Duration::from_secs(10)).expect("listening");
        InProcess {
            addr,
            service,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Stops it (graceful shutdown) and waits for the server to return.
    pub fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A fixed-node configuration with the twitter layout.
pub fn config(node: &str) -> Config {
    Config::new(node, "twitter").unwrap()
}

/// The `snowmint` binary (built by service/test.sh before the tests; $SNOWMINT_BIN overrides).
pub fn snowmint_bin() -> PathBuf {
    if let Ok(p) = std::env::var("SNOWMINT_BIN") {
        return PathBuf::from(p);
    }
    // target/debug/deps/TEST → target/debug/snowmint
    let exe = std::env::current_exe().unwrap();
    let p = exe.parent().unwrap().parent().unwrap().join("snowmint");
    assert!(
        p.exists(),
        "{} missing: cargo build -p snowmint-cli first",
        p.display()
    );
    p
}

/// `snowmint serve` as a child process, killed (SIGKILL) when dropped unless it already exited.
pub struct Served {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Served {
    pub fn start(args: &[&str]) -> Served {
        let mut child = Command::new(snowmint_bin())
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn snowmint serve");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).expect("the listening line");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| {
                let _ = child.kill();
                panic!("no address in {line:?}")
            });
        Served { child, addr }
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: a signal to our own child, by its PID.
        unsafe {
            libc::kill(self.child.id() as i32, sig);
        }
    }

    /// Waits for the exit (at most `limit`), returning its status code.
    pub fn wait(&mut self, limit: Duration) -> Option<i32> {
        let t = Instant::now();
        while t.elapsed() < limit {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s.code().unwrap_or(-1));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A throw-away directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("snowmint-service-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    pub fn url(&self, query: &str) -> String {
        format!("file://{}{query}", self.0.display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A strict parser of the Prometheus text format 0.0.4: every sample's family has a `# TYPE` (counter
/// or gauge) and a `# HELP` before it, names and labels are well formed, values are numbers, counters
/// end in `_total`, no series twice. Returns `series → value`, a series written `name{k="v",…}` with
/// the labels as given.
pub fn parse_prometheus(text: &str) -> std::collections::BTreeMap<String, f64> {
    use std::collections::{BTreeMap, BTreeSet};
    let name_ok = |n: &str| {
        !n.is_empty()
            && n.bytes().enumerate().all(|(i, b)| {
                b.is_ascii_alphabetic() || b == b'_' || b == b':' || (i > 0 && b.is_ascii_digit())
            })
    };
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut helps: BTreeSet<String> = BTreeSet::new();
    let mut series = BTreeMap::new();
    assert!(
        text.ends_with('\n'),
        "the exposition must end with a newline"
    );
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# ") {
            let mut parts = rest.splitn(3, ' ');
            let kind = parts.next().unwrap();
            let name = parts
                .next()
                .unwrap_or_else(|| panic!("bad comment {line:?}"));
            let arg = parts
                .next()
                .unwrap_or_else(|| panic!("bad comment {line:?}"));
            assert!(name_ok(name), "bad name in {line:?}");
            match kind {
                "HELP" => assert!(helps.insert(name.to_string()), "HELP twice: {line:?}"),
                "TYPE" => {
                    assert!(matches!(arg, "counter" | "gauge"), "type {arg:?}");
                    assert!(
                        types.insert(name.to_string(), arg.to_string()).is_none(),
                        "TYPE twice: {line:?}"
                    );
                }
                _ => panic!("unknown comment {line:?}"),
            }
            continue;
        }
        assert!(
            !line.is_empty() && !line.starts_with('#'),
            "bad line {line:?}"
        );
        let (key, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("no value: {line:?}"));
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("bad value in {line:?}"));
        let name = key.split('{').next().unwrap();
        assert!(name_ok(name), "bad name in {line:?}");
        let t = types
            .get(name)
            .unwrap_or_else(|| panic!("{name} has no TYPE before it"));
        assert!(helps.contains(name), "{name} has no HELP");
        if t == "counter" {
            assert!(
                name.ends_with("_total"),
                "counter {name} must end in _total"
            );
            assert!(value >= 0.0, "{line:?}");
        }
        if let Some(labels) = key.strip_prefix(name) {
            if !labels.is_empty() {
                let inner = labels
                    .strip_prefix('{')
                    .and_then(|l| l.strip_suffix('}'))
                    .unwrap_or_else(|| panic!("bad labels in {line:?}"));
                // k="v" pairs, values with \\ \" \n escapes only.
                let b = inner.as_bytes();
                let mut i = 0;
                while i < b.len() {
                    let eq = inner[i..]
                        .find('=')
                        .map(|e| e + i)
                        .unwrap_or_else(|| panic!("{line:?}"));
                    assert!(name_ok(&inner[i..eq]), "bad label name in {line:?}");
                    assert_eq!(b.get(eq + 1), Some(&b'"'), "{line:?}");
                    let mut j = eq + 2;
                    loop {
                        match b.get(j) {
                            Some(b'\\') => {
                                assert!(
                                    matches!(b.get(j + 1), Some(b'\\' | b'"' | b'n')),
                                    "{line:?}"
                                );
                                j += 2;
                            }
                            Some(b'"') => break,
                            Some(_) => j += 1,
                            None => panic!("unterminated label value in {line:?}"),
                        }
                    }
                    i = j + 1;
                    if i < b.len() {
                        assert_eq!(b[i], b',', "{line:?}");
                        i += 1;
                    }
                }
            }
        }
        assert!(
            series.insert(key.to_string(), value).is_none(),
            "series twice: {line:?}"
        );
    }
    series
}

/// A TCP proxy to a store server that the test can pause (it stops moving bytes: the store looks
/// stalled, as a paused etcd does) and cut (every connection closed, new ones refused at once: the
/// store is gone), and resume.
pub struct Proxy {
    pub addr: SocketAddr,
    state: Arc<std::sync::atomic::AtomicU8>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

const RUNNING: u8 = 0;
const PAUSED: u8 = 1;
const CUT: u8 = 2;

impl Proxy {
    /// Proxies to `upstream` (HOST:PORT) from a free 127.0.0.1 port.
    pub fn start(upstream: &str) -> Proxy {
        use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(AtomicU8::new(RUNNING));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp, up) = (state.clone(), stop.clone(), upstream.to_string());
        std::thread::spawn(move || {
            while !sp.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        if st.load(Ordering::Relaxed) == CUT {
                            continue; // dropped: closed at once
                        }
                        let Ok(server) = TcpStream::connect(&up) else {
                            continue;
                        };
                        for (from, to) in [
                            (client.try_clone().unwrap(), server.try_clone().unwrap()),
                            (server, client),
                        ] {
                            let (st, sp) = (st.clone(), sp.clone());
                            std::thread::spawn(move || pipe(from, to, &st, &sp));
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Proxy { addr, state, stop }
    }

    fn set(&self, s: u8) {
        self.state.store(s, std::sync::atomic::Ordering::SeqCst);
    }

    /// Stops moving bytes (connections stay open, requests get no answer).
    pub fn pause(&self) {
        self.set(PAUSED)
    }

    /// Closes every connection and refuses new ones.
    pub fn cut(&self) {
        self.set(CUT)
    }

    /// Moves bytes again (new connections; after a cut the old ones are gone).
    pub fn resume(&self) {
        self.set(RUNNING)
    }

    /// `url` (a store URL) with its HOST:PORT replaced by the proxy's.
    pub fn url(&self, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").unwrap();
        let (auth, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (user, _) = auth.rsplit_once('@').map_or(("", auth), |(u, h)| (u, h));
        let user = if user.is_empty() {
            String::new()
        } else {
            format!("{user}@")
        };
        format!("{scheme}://{user}{}/{path}", self.addr)
    }

    /// The first HOST:PORT of `url`.
    pub fn upstream_of(url: &str) -> String {
        let rest = url.split_once("://").unwrap().1;
        let auth = rest.split('/').next().unwrap();
        let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
        host.split(',').next().unwrap().to_string()
    }
}

fn pipe(
    mut from: TcpStream,
    mut to: TcpStream,
    state: &std::sync::atomic::AtomicU8,
    stop: &std::sync::atomic::AtomicBool,
) {
    use std::sync::atomic::Ordering;
    from.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if stop.load(Ordering::Relaxed) || state.load(Ordering::Relaxed) == CUT {
            let _ = from.shutdown(std::net::Shutdown::Both);
            let _ = to.shutdown(std::net::Shutdown::Both);
            return;
        }
        if state.load(Ordering::Relaxed) == PAUSED {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        match from.read(&mut buf) {
            Ok(0) => {
                let _ = to.shutdown(std::net::Shutdown::Write);
                return;
            }
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return,
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The URL of a real server's store in `var` (set by scripts/servers.sh); `None` (the test skips) without
/// it, unless `SNOWMINT_REQUIRE_SERVERS` is set.
pub fn server_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(u) => Some(u),
        Err(_) => {
            assert!(
                std::env::var("SNOWMINT_REQUIRE_SERVERS").is_err(),
                "SNOWMINT_REQUIRE_SERVERS is set but {var} is not"
            );
            eprintln!("skipped: no {var} (service/test.sh starts the servers)");
            None
        }
    }
}

/// A CA, and a certificate for 127.0.0.1 and localhost signed by it, made with the openssl CLI.
pub fn make_ca(dir: &Path) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=snowmint test CA",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
}

/// A TCP connection to `addr` from the local address `from` (another loopback address is another
/// client), with a receive buffer of `recv_buffer` bytes if given.
pub fn connect_from(
    from: std::net::IpAddr,
    addr: SocketAddr,
    recv_buffer: Option<u32>,
) -> TcpStream {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let s = rt.block_on(async {
        let socket = if from.is_ipv4() {
            tokio::net::TcpSocket::new_v4()
        } else {
            tokio::net::TcpSocket::new_v6()
        }
        .unwrap();
        if let Some(n) = recv_buffer {
            socket.set_recv_buffer_size(n).unwrap();
        }
        socket.bind(SocketAddr::new(from, 0)).unwrap();
        socket.connect(addr).await.expect("connect")
    });
    let s = s.into_std().unwrap();
    s.set_nonblocking(false).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// Reads one answer (status, headers, a `content-length` body) from any stream.
pub fn read_reply_from(r: &mut impl Read) -> std::io::Result<Reply> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if r.read(&mut byte)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line in {text:?}")))?;
    let mut headers = Vec::new();
    let mut len = 0usize;
    for l in lines.filter(|l| !l.is_empty()) {
        let (k, v) = l.split_once(':').unwrap_or((l, ""));
        let (k, v) = (k.trim().to_string(), v.trim().to_string());
        if k.eq_ignore_ascii_case("content-length") {
            len = v.parse().unwrap_or(0);
        }
        headers.push((k, v));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    Ok(Reply {
        status,
        headers,
        body,
    })
}

/// A TLS client configuration trusting the CA of [`make_ca`] in `dir`.
pub fn tls_client(dir: &Path) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls::pki_types::CertificateDer::pem_file_iter(dir.join("ca.pem")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// A TLS stream over `tcp` to 127.0.0.1.
pub fn tls_over(
    config: &Arc<rustls::ClientConfig>,
    tcp: TcpStream,
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let conn = rustls::ClientConnection::new(config.clone(), name).unwrap();
    rustls::StreamOwned::new(conn, tcp)
}

/// One request from `from` on a new connection (over TLS with `tls`), with a bearer token if given;
/// `None` if the connection was refused or closed without an answer.
pub fn request_from(
    addr: SocketAddr,
    from: IpAddr,
    tls: Option<&Arc<rustls::ClientConfig>>,
    method: &str,
    target: &str,
    token: Option<&str>,
) -> Option<Reply> {
    let tcp = connect_from(from, addr, None);
    let auth = token.map_or(String::new(), |t| format!("authorization: Bearer {t}\r\n"));
    let req =
        format!("{method} {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n{auth}content-length: 0\r\n\r\n");
    match tls {
        None => {
            let mut tcp = tcp;
            tcp.write_all(req.as_bytes())
                .ok()
                .and_then(|_| read_reply_from(&mut tcp).ok())
        }
        Some(c) => {
            let mut s = tls_over(c, tcp);
            s.write_all(req.as_bytes())
                .and_then(|_| s.flush())
                .ok()
                .and_then(|_| read_reply_from(&mut s).ok())
        }
    }
}

/// The wall clock in Unix milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}
