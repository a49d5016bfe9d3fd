//! Logged-in connections kept across stores: when a [`super::PostgresStore`] on a real database is
//! dropped, its connections (the one in use and the second) are kept here for [`IDLE_FOR`], and the
//! next store of the same database, user, TLS settings and schema opened in this process within that
//! time takes them instead of logging in again.
//!
//! A login is several answers (the TLS request of `sslmode=prefer`, the startup, each step of the
//! authentication), each of which may come late on a faulty link: an application that opens its
//! generator again after an open failed (the store is dropped with it) would otherwise throw away the
//! connections its failed open already paid for, and each new open would have to win every login
//! answer again. What a kept connection carries is only its login: every statement names its schema
//! and its parameters; a transaction's connection is never kept after a failure
//! ([`super::PostgresStore`] drops it).
//!
//! Bounded: at most [`PER_KEY`] connections per key and [`MOST`] in all; a thread of its own drops
//! each once [`IDLE_FOR`] has passed (so a process that never opens the store again holds them no
//! longer). A forked child never sees its parent's ([`ProcessLocal`]).

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::backend::Connection;
use crate::process_local::ProcessLocal;

/// How long a connection of a dropped store is kept for the next store.
pub(super) const IDLE_FOR: Duration = Duration::from_secs(10);
/// Kept connections per key at most.
const PER_KEY: usize = 2;
/// Kept connections in all at most.
const MOST: usize = 8;

/// What identifies the connections a store may share with another: its URL as the driver gets it
/// (password included), its TLS parameters and its schema. Never shown (`Debug` hides it).
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Key(pub(super) String);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}

struct Kept {
    key: Key,
    since: Instant,
    /// An answer was late on the store that kept it.
    late: bool,
    conn: Box<dyn Connection>,
}

#[derive(Default)]
struct Idle {
    kept: Vec<Kept>,
    reaping: bool,
}

fn idle() -> Option<&'static Mutex<Idle>> {
    static IDLE: OnceLock<ProcessLocal<Mutex<Idle>>> = OnceLock::new();
    IDLE.get_or_init(|| ProcessLocal::new(Mutex::new(Idle::default())))
        .get()
}

fn lock(m: &Mutex<Idle>) -> std::sync::MutexGuard<'_, Idle> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Keeps `conns` (those not closed) of a store being dropped; `late`: an answer was late on it.
pub(super) fn keep(key: &Key, conns: Vec<Box<dyn Connection>>, late: bool) {
    let Some(m) = idle() else { return };
    let mut dropped = Vec::new();
    let spawn = {
        let mut idle = lock(m);
        for conn in conns.into_iter().filter(|c| !c.is_closed()) {
            let same = idle.kept.iter().filter(|k| k.key == *key).count();
            if same >= PER_KEY || idle.kept.len() >= MOST {
                dropped.push(conn);
                continue;
            }
            idle.kept.push(Kept {
                key: key.clone(),
                since: Instant::now(),
                late,
                conn,
            });
        }
        !idle.kept.is_empty() && !std::mem::replace(&mut idle.reaping, true)
    };
    drop(dropped);
    if spawn {
        let spawned = std::thread::Builder::new()
            .name("snowmint-pg-idle".into())
            .spawn(move || reap(m));
        if spawned.is_err() {
            let kept = {
                let mut idle = lock(m);
                idle.reaping = false;
                std::mem::take(&mut idle.kept)
            };
            drop(kept);
        }
    }
}

/// A kept connection of `key` that is not known to be closed, and whether an answer was late on the
/// store that kept it.
pub(super) fn take(key: &Key) -> Option<(Box<dyn Connection>, bool)> {
    let m = idle()?;
    let mut idle = lock(m);
    let mut closed = Vec::new();
    let mut found = None;
    while let Some(i) = idle.kept.iter().position(|k| k.key == *key) {
        let k = idle.kept.remove(i);
        if k.conn.is_closed() || k.since.elapsed() >= IDLE_FOR {
            closed.push(k);
            continue;
        }
        found = Some((k.conn, k.late));
        break;
    }
    drop(idle);
    drop(closed);
    found
}

/// Drops each kept connection once [`IDLE_FOR`] has passed; ends when none is left.
fn reap(m: &'static Mutex<Idle>) {
    loop {
        let (expired, next) = {
            let mut idle = lock(m);
            let (expired, kept): (Vec<Kept>, Vec<Kept>) = std::mem::take(&mut idle.kept)
                .into_iter()
                .partition(|k| k.since.elapsed() >= IDLE_FOR);
            idle.kept = kept;
            let next = idle.kept.iter().map(|k| k.since + IDLE_FOR).min();
            if next.is_none() {
                idle.reaping = false;
            }
            (expired, next)
        };
        drop(expired);
        let Some(next) = next else { return };
        std::thread::sleep(
            next.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(10)),
        );
    }
}

/// Whether the server of `key` answered a TLS request of `sslmode=prefer` with "no", shared by the
/// stores of `key` in this process ([`super::backend::Driver`]): later logins do not ask again.
/// At most [`MOST_KEYS`] keys are remembered (others get a flag of their own).
pub(super) fn plain(key: &Key) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    type Flags = Vec<(Key, std::sync::Arc<std::sync::atomic::AtomicBool>)>;
    static PLAIN: Mutex<Flags> = Mutex::new(Vec::new());
    let mut flags = PLAIN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, f)) = flags.iter().find(|(k, _)| k == key) {
        return f.clone();
    }
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if flags.len() < MOST_KEYS {
        flags.push((key.clone(), flag.clone()));
    }
    flag
}

/// Keys [`plain`] remembers at most.
const MOST_KEYS: usize = 64;
