//! Positions and reservations: the reservation record for a position, and where a new holder of a node ID
//! starts after the stored one (SPEC §3.2).

use snowmint::Layout;

use crate::base::store::Reservation;

/// The reservation record for "every position up to `position`" under `layout` (whose
/// [`crate::layout_fingerprint`] is `fingerprint`): it also covers, in time, the end of `position`'s tick.
pub fn reservation_for(layout: &Layout, fingerprint: u64, position: u64) -> Reservation {
    let tick = position >> layout.sequence_bits();
    let end_ns = layout
        .epoch_ns()
        .saturating_add((tick + 1).saturating_mul(layout.tick_ns()));
    Reservation {
        position,
        layout_fingerprint: fingerprint,
        until_unix_ms: end_ns.div_ceil(1_000_000),
    }
}

/// The first position a new holder of a node ID may mint under `layout` (fingerprint `fingerprint`)
/// after the stored reservation `r`: after its position under the same layout, and after every tick
/// that starts before its `until_unix_ms` under any layout (SPEC §3.2).
pub fn start_after(layout: &Layout, fingerprint: u64, r: &Reservation) -> u64 {
    let mut start = 0;
    if r.layout_fingerprint == fingerprint {
        start = r.position.saturating_add(1);
    }
    // Every tick that starts before `until_unix_ms` is taken, under any layout.
    start.max(start_after_ns(
        layout,
        r.until_unix_ms.saturating_mul(1_000_000),
    ))
}

/// The first position of the first tick of `layout` that starts at or after `until_ns` (Unix ns).
pub fn start_after_ns(layout: &Layout, until_ns: u64) -> u64 {
    let since = until_ns.saturating_sub(layout.epoch_ns());
    let tick = since.div_ceil(layout.tick_ns());
    tick.saturating_mul(1u64 << layout.sequence_bits())
}

/// On a store whose history can be lost (its bound `bound_ns`, [`crate::Store::max_ahead`]), the first
/// position under `layout` a new holder of a node ID may mint whatever the store holds, the clock
/// reading `now_ns`: past every tick that starts before `now + bound`, the furthest any earlier holder
/// of the node ID could have reserved (its last write was before now; SPEC §3.2). `0` without a bound.
/// The coord leases and the ID service's client leases both start at or above it.
pub fn unknown_history_start(layout: &Layout, bound_ns: Option<u64>, now_ns: u64) -> u64 {
    match bound_ns {
        Some(b) => start_after_ns(layout, now_ns.saturating_add(b)),
        None => 0,
    }
}

/// How long (ns) a holder that starts at `start` (at or above [`unknown_history_start`]) waits, the
/// clock reading `now_ns`, before the store's bound `bound_ns` past the clock reaches `start`'s tick and
/// a reservation can cover it: at most a tick, and a tenth of a millisecond more.
pub fn bound_reaches_in_ns(layout: &Layout, bound_ns: u64, start: u64, now_ns: u64) -> u64 {
    let tick_start = layout
        .epoch_ns()
        .saturating_add((start >> layout.sequence_bits()).saturating_mul(layout.tick_ns()));
    let left = tick_start.saturating_sub(bound_ns).saturating_sub(now_ns);
    left.min(layout.tick_ns()).saturating_add(100_000)
}
