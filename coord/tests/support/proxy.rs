//! A TCP proxy for tests, between a store client and a real server: forwards every byte both ways,
//! except that it can lose exactly one chosen answer *after the server applied the request* (the
//! answer is held back past the client's timeout, or the connection is closed instead of forwarding
//! it), or delay one chosen *request* (held back before the server sees it, past the client's timeout,
//! and forwarded later: a stalled proposal or gateway request, a statement queued on a connection the
//! client gave up on), and it can stop, so the server looks unreachable.
//!
//! A request is what the client sent on a connection since the server last sent anything; its answer
//! is what the server sends next (HTTP/1.1 and the PostgreSQL protocol both alternate so, as the store
//! clients use them). A [`Rule`] picks the `nth` request (1-based, counted over every connection of the
//! proxy) for which `matches(request bytes)` is true, and applies its [`Fault`] to that request's answer
//! (or, for [`Fault::HoldRequest`] and [`Fault::ParkRequest`], to the request itself) only; everything
//! before and after is forwarded untouched.
//!
//! A held request is matched on the bytes received so far, before the chunk that completes the match
//! is forwarded, so the server holds at most an incomplete request meanwhile. While it is held nothing
//! more of that connection reaches the server; once released the held bytes go to the server, and the
//! server side of the connection stays open until the server answered (at most 10 s), even if the
//! client closed its side long ago, so the server runs the request to its end (the answer goes to the
//! client if it still listens). [`Proxy::delivered`] tells when that answer came.
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
//!
//! A delayed request: `fault: Fault::ParkRequest`, then `proxy.release()` when the test wants the
//! server to see it, and `proxy.delivered() == 1` once the server answered it.
//!
//! Moderate faults on every answer ([`Proxy::start_random`], [`Random`]): each answer independently,
//! with probability `fraction` drawn from a seeded generator (one draw per answer, in the order the
//! answers come), is held back (`Fault::Hold`) or lost (`Fault::Close`); [`Proxy::fired`] counts
//! them and [`Proxy::answers`] every answer seen.

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
    /// The request itself is held back this long (the server does not see it meanwhile), then
    /// forwarded.
    HoldRequest(Duration),
    /// The request itself is held back until [`Proxy::release`] (or the proxy stops; at most 60 s),
    /// then forwarded.
    ParkRequest,
}

impl Fault {
    /// Whether the fault applies to the request rather than to its answer.
    fn on_request(self) -> bool {
        matches!(self, Fault::HoldRequest(_) | Fault::ParkRequest)
    }
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

/// Faults on a seeded random share of the answers ([`Proxy::start_random`]).
#[derive(Clone, Copy, Debug)]
pub struct Random {
    /// Seeds the draws (the same seed and order of answers give the same faults).
    pub seed: u64,
    /// The share of answers faulted, 0.0 to 1.0.
    pub fraction: f64,
    /// What happens to a faulted answer: [`Fault::Hold`] or [`Fault::Close`].
    pub fault: Fault,
}

struct Shared {
    upstream: String,
    rule: Option<Rule>,
    /// Random faults, and the generator's state.
    random: Option<(Random, Mutex<u64>)>,
    /// Answers seen (with random faults).
    answers: AtomicUsize,
    /// Matching requests seen so far.
    seen: AtomicUsize,
    /// Answers lost (or requests held) so far (0 or 1).
    fired: AtomicUsize,
    /// [`Proxy::release`] was called.
    released: AtomicBool,
    /// Held requests the server answered after they were forwarded.
    delivered: AtomicUsize,
    stopped: AtomicBool,
    /// Connections forwarded whose client has not closed its side yet.
    open: AtomicUsize,
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
        Self::start_with(upstream, rule, None)
    }

    /// Listens on a free 127.0.0.1 port and forwards every connection to `upstream`, faulting a
    /// seeded random share of the answers ([`Random`]).
    pub fn start_random(upstream: &str, random: Random) -> Proxy {
        assert!(
            !random.fault.on_request(),
            "random faults apply to answers: Hold or Close"
        );
        assert!((0.0..=1.0).contains(&random.fraction));
        Self::start_with(upstream, None, Some(random))
    }

    fn start_with(upstream: &str, rule: Option<Rule>, random: Option<Random>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a proxy port");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().unwrap().to_string();
        let shared = Arc::new(Shared {
            upstream: upstream.to_string(),
            rule,
            random: random.map(|r| (r, Mutex::new(r.seed))),
            answers: AtomicUsize::new(0),
            seen: AtomicUsize::new(0),
            fired: AtomicUsize::new(0),
            released: AtomicBool::new(false),
            delivered: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
            open: AtomicUsize::new(0),
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

    /// How many answers the server sent (counted with random faults only).
    pub fn answers(&self) -> usize {
        self.shared.answers.load(Ordering::Acquire)
    }

    /// How many answers were lost (or requests held) so far (0 or 1; with random faults, any number).
    pub fn fired(&self) -> usize {
        self.shared.fired.load(Ordering::Acquire)
    }

    /// Forwards the request held by [`Fault::ParkRequest`] (now, or as soon as it arrives).
    pub fn release(&self) {
        self.shared.released.store(true, Ordering::Release);
    }

    /// How many held requests the server has answered since they were forwarded (0 or 1).
    pub fn delivered(&self) -> usize {
        self.shared.delivered.load(Ordering::Acquire)
    }

    /// How many forwarded connections their client still holds open (it has not closed its side).
    pub fn open(&self) -> usize {
        self.shared.open.load(Ordering::Acquire)
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
    shared.open.fetch_add(1, Ordering::AcqRel);
    // The request bytes since the server last answered on this connection.
    let request = Arc::new(Mutex::new(Pending::default()));
    // A held request of this connection was forwarded: its answer is the next the server sends.
    let forwarded_held = Arc::new(AtomicBool::new(false));
    {
        let (mut from, mut to, request, shared, forwarded_held) = (
            client.try_clone().unwrap(),
            server.try_clone().unwrap(),
            request.clone(),
            shared.clone(),
            forwarded_held.clone(),
        );
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n @ 1..) = from.read(&mut buf) {
                // Recorded before it is forwarded, so the answer can never come before its request.
                let hold = {
                    let mut pending = request.lock().unwrap();
                    pending.bytes.extend_from_slice(&buf[..n]);
                    shared.chosen_request(&mut pending)
                };
                if let Some(fault) = hold {
                    shared.hold(fault);
                    forwarded_held.store(true, Ordering::Release);
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            shared.open.fetch_sub(1, Ordering::AcqRel);
            if forwarded_held.load(Ordering::Acquire) {
                // The client may be long gone: the server still runs the request to its end.
                let deadline = std::time::Instant::now() + Duration::from_secs(10);
                while forwarded_held.load(Ordering::Acquire)
                    && std::time::Instant::now() < deadline
                    && !shared.stopped.load(Ordering::Acquire)
                {
                    std::thread::sleep(Duration::from_millis(5));
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
            if forwarded_held.swap(false, Ordering::AcqRel) {
                shared.delivered.fetch_add(1, Ordering::AcqRel);
            }
            if !asked.bytes.is_empty() {
                if let Some(fault) = shared.chosen(&asked.bytes) {
                    match fault {
                        Fault::Hold(d) => std::thread::sleep(d),
                        Fault::Close => {
                            let _ = to.shutdown(Shutdown::Both);
                            let _ = from.shutdown(Shutdown::Both);
                            return;
                        }
                        Fault::HoldRequest(_) | Fault::ParkRequest => {
                            unreachable!("request faults are applied to the request")
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

/// A request being received: its bytes so far, and whether it was already counted by a request
/// fault's rule (as soon as it matched, before it was complete).
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    counted: bool,
}

impl Shared {
    /// The request fault to apply to `pending` now (before its newest bytes are forwarded), if it is
    /// the chosen request and has just come to match.
    fn chosen_request(&self, pending: &mut Pending) -> Option<Fault> {
        let rule = self.rule.as_ref()?;
        if pending.counted || !rule.fault.on_request() || !(rule.matches)(&pending.bytes) {
            return None;
        }
        pending.counted = true;
        self.nth(rule)
    }

    /// Waits out a request fault.
    fn hold(&self, fault: Fault) {
        let deadline = std::time::Instant::now()
            + match fault {
                Fault::HoldRequest(d) => d,
                _ => Duration::from_secs(60),
            };
        while std::time::Instant::now() < deadline
            && !self.stopped.load(Ordering::Acquire)
            && !(fault == Fault::ParkRequest && self.released.load(Ordering::Acquire))
        {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The fault to apply to the answer of `request`, if it is the chosen one (or drawn).
    fn chosen(&self, request: &[u8]) -> Option<Fault> {
        if let Some((random, state)) = &self.random {
            self.answers.fetch_add(1, Ordering::AcqRel);
            let draw = {
                let mut s = state.lock().unwrap();
                *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
                snowmint::mix64(*s)
            };
            // 53 bits of the draw, as a fraction of 1.
            let faulted = ((draw >> 11) as f64) / ((1u64 << 53) as f64) < random.fraction;
            if faulted {
                self.fired.fetch_add(1, Ordering::AcqRel);
            }
            return faulted.then_some(random.fault);
        }
        let rule = self.rule.as_ref()?;
        if rule.fault.on_request() || !(rule.matches)(request) {
            return None;
        }
        self.nth(rule)
    }

    /// Counts a matching request: `rule`'s fault if it is the `nth`.
    fn nth(&self, rule: &Rule) -> Option<Fault> {
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
