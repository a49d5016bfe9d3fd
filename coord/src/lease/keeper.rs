//! The keeper: the thread (or, for a stepped lease, the caller) that renews the claim, extends the
//! reservation and checks the sequencer, round after round.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use snowmint::ErrorCode;

#[cfg(doc)]
use crate::base::store::Store;
use crate::shared_lease::{self};

use super::shared::{duration_ms, ms, Shared};
use super::state::{LeaseState, DESTROYED, LOST};

pub(super) fn keeper(shared: Arc<Shared>, state_of: impl Fn() -> u64) {
    // A shared lease: one process of the host keeps it; the others wait to take over.
    if shared.file.is_some() && !become_keeper(&shared) {
        return;
    }
    // A shared lease's keeper also looks for requests of other processes that met the ceiling.
    let poll = shared.file.as_ref().map(|_| shared_lease::POLL);
    let others_want = || {
        poll.is_some()
            && shared.state() == LeaseState::Held
            && shared.wanted.load(Ordering::SeqCst) > shared.ceiling.load(Ordering::SeqCst)
    };
    // Full rounds keep their period however often a mint asks for an extension in between.
    let mut next_round = std::time::Instant::now() + shared.period();
    // Rounds since the last sequencer check ([`keeper_round_light`]).
    let mut rounds = 0u32;
    // A round asked for now ([`Lease::poke`]) is a full one.
    let mut urgent;
    loop {
        let full = {
            let mut w = shared.wake.lock().unwrap_or_else(|p| p.into_inner());
            let now = std::time::Instant::now();
            if !w.stop && !w.urgent && !w.extend && now < next_round && !others_want() {
                let wait = next_round - now;
                w = shared
                    .wake_cv
                    .wait_timeout(w, poll.map_or(wait, |p| p.min(wait)))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            if w.stop {
                return;
            }
            let now = std::time::Instant::now();
            urgent = w.urgent;
            let full = w.urgent || now >= next_round;
            let extend = w.extend || others_want();
            // A full round extends too.
            w.urgent = false;
            w.extend = false;
            if !full && !extend {
                continue; // a spurious wake-up
            }
            full
        };
        let going = if full {
            next_round = std::time::Instant::now() + shared.period();
            rounds += 1;
            let check = rounds >= CHECK_EVERY;
            if check || urgent {
                rounds = 0;
            }
            if urgent {
                keeper_round(&shared, state_of())
            } else {
                keeper_round_light(&shared, state_of(), check)
            }
        } else {
            extend_round(&shared, state_of())
        };
        if !going {
            return;
        }
    }
}

/// A process of a shared lease waits until it holds the keeper lock (the keeper before it left or was
/// killed), then adopts the claim ([`Store::adopt`]: renews the same claim, same fencing token, from
/// this process; an expired or taken claim is not brought back: the lease is then lost for every
/// process). `false`: the lease ended (or this process stopped) first.
pub(super) fn become_keeper(shared: &Shared) -> bool {
    let Some(file) = &shared.file else {
        return true;
    };
    let ttl_ms = duration_ms(shared.options.ttl);
    let mut idle = false;
    loop {
        {
            let w = shared.wake.lock().unwrap_or_else(|p| p.into_inner());
            if w.stop || shared.state() != LeaseState::Held {
                return false;
            }
            if !file.try_keeper().unwrap_or(false) {
                if !idle {
                    // Another process keeps the lease: this one holds no store connection while it
                    // waits (its next store call, the adoption when it takes over, opens one again).
                    shared.store.idle();
                    idle = true;
                }
                let _ = shared.wake_cv.wait_timeout(w, shared_lease::POLL);
                continue;
            }
        }
        let started = shared.time.monotonic_ns();
        match shared
            .store
            .adopt(&shared.claim(), ttl_ms, ms(shared.time.unix_ns()))
        {
            Ok(renewed) => {
                *shared.claim.lock().unwrap_or_else(|p| p.into_inner()) = renewed;
                shared.good_until.store(
                    started.saturating_add(ttl_ms.saturating_mul(1_000_000)),
                    Ordering::SeqCst,
                );
                return true;
            }
            Err(e) if e.code() == ErrorCode::LeaseLost => {
                shared.lost_or_destroyed();
                return false;
            }
            Err(_) if shared.past_ttl() => {
                shared.set_state(LOST);
                return false;
            }
            Err(_) => {
                // The store is unreachable for now: try again (another process may take over first).
                file.resign_keeper();
                let w = shared.wake.lock().unwrap_or_else(|p| p.into_inner());
                let _ = shared.wake_cv.wait_timeout(w, shared_lease::POLL);
            }
        }
    }
}

/// One full keeper round (a stepped lease's, [`Lease::keeper_round`]): check the sequencer, renew the
/// claim, extend the reservation. `false` once the lease has ended (lost or destroyed): the keeper
/// stops. The keeper thread's rounds are light ([`keeper_round_light`]).
pub(super) fn keeper_round(shared: &Shared, next_free: u64) -> bool {
    match shared.check_sequencer() {
        Ok(true) => {}
        Ok(false) => {
            shared.set_state(DESTROYED);
            let _ = shared.store.release(&shared.claim());
            return false;
        }
        // Unanswered: the renewal is still tried (a store that answers some requests keeps the claim;
        // a sequencer destroyed meanwhile ended it, and the renewal fails with LEASE_LOST).
        Err(_) if !shared.past_ttl() => {}
        Err(_) => {
            shared.set_state(LOST);
            return false;
        }
    }
    if let Err(going) = renew_claim(shared) {
        return going;
    }
    extend_round(shared, next_free)
}

/// Renews the claim. `Err(going)` when the renewal failed: `false` once the lease has ended (lost,
/// destroyed, or past its TTL), `true` to try again next round.
pub(super) fn renew_claim(shared: &Shared) -> std::result::Result<(), bool> {
    let ttl_ms = duration_ms(shared.options.ttl);
    // Before the renewal is sent: the store's new expiry is at least this plus the TTL.
    let started = shared.time.monotonic_ns();
    let claim = shared.claim();
    match shared
        .store
        .renew(&claim, ttl_ms, ms(shared.time.unix_ns()))
    {
        Ok(renewed) => {
            *shared.claim.lock().unwrap_or_else(|p| p.into_inner()) = renewed;
            shared.good_until.store(
                started.saturating_add(ttl_ms.saturating_mul(1_000_000)),
                Ordering::SeqCst,
            );
        }
        Err(e) if e.code() == ErrorCode::LeaseLost => {
            shared.lost_or_destroyed();
            return Err(false);
        }
        Err(_) => {
            if shared.past_ttl() {
                shared.set_state(LOST);
                return Err(false);
            }
            return Err(true);
        }
    }
    Ok(())
}

/// The keeper thread's rounds check the sequencer every this many rounds (about once per TTL).
pub(super) const CHECK_EVERY: u32 = 3;

/// A round of the keeper thread: renew the claim first, then write the reservation only when the
/// room under the ceiling is under half the step (or low, [`Shared::room_low`]), and check the
/// sequencer every [`CHECK_EVERY`] rounds (`check`). `false` once the lease has ended.
///
/// Every store call between two renewals delays the next one, and the claim's TTL counts from the
/// renewal's send: under faults (answers late, each call waiting out a late answer and its re-send,
/// [`crate::stores::remote`]) a check and a reservation in front of every renewal lost leases (PostgreSQL
/// with 30 % of answers held back 3 s). A destroy ends the claims (the renewal or the reservation
/// then fails with `LEASE_LOST`, and [`Shared::lost_or_destroyed`] reads the record) and the store
/// refuses a destroyed incarnation's reservation; the check ends the lease of a destroyed sequencer
/// on a store where the claims outlive it. A stepped lease's rounds stay full ([`keeper_round`]).
pub(super) fn keeper_round_light(shared: &Shared, next_free: u64, check: bool) -> bool {
    if let Err(going) = renew_claim(shared) {
        return going;
    }
    if !shared.room_left(next_free) && !extend_round(shared, next_free) {
        if shared.state() == LeaseState::Destroyed {
            // The store refused a destroyed incarnation's reservation: its claim is given back.
            let _ = shared.store.release(&shared.claim());
        }
        return false;
    }
    if !check {
        return true;
    }
    match shared.check_sequencer() {
        Ok(true) => true,
        Ok(false) => {
            shared.set_state(DESTROYED);
            let _ = shared.store.release(&shared.claim());
            false
        }
        // Unanswered: the claim was renewed; the next round asks again.
        Err(_) => true,
    }
}

/// Extends the reservation to [`Shared::target`] when the ceiling is below it (one store write,
/// conditioned on the claim). `false` once the store said the claim is lost: the keeper stops. Other
/// errors leave the ceiling as it is for the next round.
pub(super) fn extend_round(shared: &Shared, next_free: u64) -> bool {
    let extended = shared.target(next_free).and_then(|target| {
        if target >= shared.ceiling.load(Ordering::SeqCst) {
            shared.extend_to(target)
        } else {
            Ok(())
        }
    });
    if let Err(e) = extended {
        if e.code() == ErrorCode::LeaseLost {
            shared.lost_or_destroyed();
            return false;
        }
    }
    true
}
