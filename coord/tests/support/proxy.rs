//! A TCP proxy for tests, between a store client and a real server: forwards every byte both ways,
//! except that it can lose exactly one chosen answer *after the server applied the request* (the
//! answer is held back past the client's timeout, or the connection is closed instead of forwarding
//! it), and it can stop, so the server looks unreachable.
//!
//! A request is what the client sent on a connection since the server last sent anything; its answer
//! is what the server sends next (HTTP/1.1 and the PostgreSQL protocol both alternate so, as the store
//! clients use them). A [`Rule`] picks the `nth` request (1-based, counted over every connection of the
//! proxy) for which `matches(request bytes)` is true, and applies its [`Fault`] to that request's answer
//! only; everything before and after is forwarded untouched.
//!
//! ```ignore
//! let proxy = Proxy::start("127.0.0.1:2379", Some(Rule {
//!     matches: Box::new(|request| contains(request, b"kv/txn")),
//!     nth: 1,
//!     fault: Fault::Close,
//! }));
//! let url = format!("etcd://{}/prefix", proxy.addr());   // the client now talks through the proxy
//! // … run the client …
//! assert_eq!(proxy.fired(), 1);                            // the chosen answer was lost
//! proxy.stop();                                            // from now on: connection refused
//! ```

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What happens to the chosen answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Held back this long, then forwarded (a client with a shorter timeout gives up first).
    Hold(Duration),
    /// Not forwarded: both sides of the connection are closed instead.
    Close,
}

/// Whether a request (the bytes the client sent since the last answer) is one of those counted.
pub type Matcher = Box<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// Which answer is lost, and how.
pub struct Rule {
    /// Which requests are counted.
    pub matches: Matcher,
    /// The matching request whose answer is lost (1: the first one).
    pub nth: usize,
    /// What happens to that answer.
    pub fault: Fault,
}

struct Shared {
    upstream: String,
    rule: Option<Rule>,
    /// Matching requests seen so far.
    seen: AtomicUsize,
    /// Answers lost so far (0 or 1).
    fired: AtomicUsize,
    stopped: AtomicBool,
    /// Every connection's two sockets, to close them on [`Proxy::stop`].
    live: Mutex<Vec<TcpStream>>,
}

/// A running proxy; stopped when dropped.
pub struct Proxy {
    addr: String,
    shared: Arc<Shared>,
}

impl Proxy {
    /// Listens on a free 127.0.0.1 port and forwards every connection to `upstream` (`host:port`),
    /// losing the answer `rule` picks (none without a rule).
    pub fn start(upstream: &str, rule: Option<Rule>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a proxy port");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().unwrap().to_string();
        let shared = Arc::new(Shared {
            upstream: upstream.to_string(),
            rule,
            seen: AtomicUsize::new(0),
            fired: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
            live: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        std::thread::spawn(move || {
            // Polled, so that `stop` closes the port itself (later connects are refused).
            while !s.stopped.load(Ordering::Acquire) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        connection(&s, client);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Proxy { addr, shared }
    }

    /// `127.0.0.1:PORT`, to put in the client's URL instead of the server's address.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// How many answers were lost so far (0 or 1).
    pub fn fired(&self) -> usize {
        self.shared.fired.load(Ordering::Acquire)
    }

    /// Closes the port and every connection: the server is unreachable through the proxy from now on.
    pub fn stop(&self) {
        self.shared.stopped.store(true, Ordering::Release);
        for s in self.shared.live.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        // The accept loop notices within its poll interval.
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One client connection: the server side, and a pump each way.
fn connection(shared: &Arc<Shared>, client: TcpStream) {
    let Ok(server) = TcpStream::connect(&shared.upstream) else {
        return; // the client sees its connection closed, as if the server were down
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    {
        let mut live = shared.live.lock().unwrap();
        live.push(client.try_clone().unwrap());
        live.push(server.try_clone().unwrap());
    }
    // The request bytes since the server last answered on this connection.
    let request = Arc::new(Mutex::new(Vec::<u8>::new()));
    {
        let (mut from, mut to, request) = (
            client.try_clone().unwrap(),
            server.try_clone().unwrap(),
            request.clone(),
        );
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n @ 1..) = from.read(&mut buf) {
                // Recorded before it is forwarded, so the answer can never come before its request.
                request.lock().unwrap().extend_from_slice(&buf[..n]);
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        });
    }
    let shared = shared.clone();
    let (mut from, mut to) = (server, client);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = from.read(&mut buf) {
            let asked = std::mem::take(&mut *request.lock().unwrap());
            if !asked.is_empty() {
                if let Some(fault) = shared.chosen(&asked) {
                    match fault {
                        Fault::Hold(d) => std::thread::sleep(d),
                        Fault::Close => {
                            let _ = to.shutdown(Shutdown::Both);
                            let _ = from.shutdown(Shutdown::Both);
                            return;
                        }
                    }
                }
            }
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

impl Shared {
    /// The fault to apply to the answer of `request`, if it is the chosen one.
    fn chosen(&self, request: &[u8]) -> Option<Fault> {
        let rule = self.rule.as_ref()?;
        if !(rule.matches)(request) {
            return None;
        }
        let n = self.seen.fetch_add(1, Ordering::AcqRel) + 1;
        (n == rule.nth).then(|| {
            self.fired.fetch_add(1, Ordering::AcqRel);
            rule.fault
        })
    }
}

/// Whether `haystack` contains `needle` (for [`Rule::matches`]).
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
