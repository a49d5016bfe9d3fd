//! The store interface: everything the lease and sequencer algorithm needs from a coordination store,
//! and nothing else. The algorithm ([`crate::lease`], [`crate::sequencer`]) is written once against
//! [`Store`]; the embedded store ([`crate::file`]), the in-memory store ([`crate::memory`]), etcd and
//! PostgreSQL implement it.
//!
//! Rules every implementation keeps (the algorithm's correctness rests on them):
//! - **Claims** are per `(sequencer, node ID)`. [`Store::claim`] atomically takes one node ID of
//!   `0..nodes` that nobody holds (or whose holder expired), preferring `start`, `start + 1` … (wrapping),
//!   and returns `Ok(None)` when every one is held. A claim carries a **fencing token** strictly greater
//!   than the token of every earlier claim of the same `(sequencer, node ID)`, across releases, expiry,
//!   sequencer destruction and re-creation (etcd: the claim key's create revision; PostgreSQL: a counter;
//!   embedded: the token in the claim record, written under the record's lock).
//! - **Expiry**: a claim ends at its expiry whoever holds it, a live holder included: from then on the
//!   node ID can be claimed again, and [`Store::renew`] of it fails with `LEASE_LOST` (a store that
//!   judges expiry by its own clock decides when that is).
//! - **Reservations** are per `(sequencer, node ID)` too, stored apart from the claim: they survive
//!   release, expiry and [`Store::destroy_sequencer`]. [`Store::reserve`] writes one only while the
//!   claim it names is still the current claim of that node ID (compared by fencing token, atomically
//!   with the write); otherwise it fails with `LEASE_LOST` and writes nothing. A successful return means
//!   the write is durable (a later [`Store::reservation`] by anyone sees it).
//! - **Reservations never move back** under a layout: a [`Store::reserve`] whose position (or end
//!   time) is below the stored reservation's under the same layout fingerprint does not lower it — it
//!   is a stale write (sent before the stored one and delayed, or re-sent after it), the newer one
//!   stands — and, the claim being current, reports success, because the stored reservation already
//!   covers it. The store keeps the larger of the two, field by field, checked atomically with the
//!   write ([`Reservation::written_over`]). So a write the client gave up on (its answer late or lost)
//!   that reaches the store after a higher one cannot undo what the holder minted under the higher
//!   one. A new holder starts strictly after the stored reservation, so its writes are above it under
//!   the same layout anyway; under another layout fingerprint a write replaces the stored one. Only a
//!   clean release lowers it, with [`Store::lower_reservation`], to the last position its sealed
//!   generator minted.
//! - **Time** is an input: requests carry the caller's clock reading (`now_unix_ms`). A store that judges
//!   expiry by its own clock (etcd leases, PostgreSQL's `now()`) may ignore it; the embedded and in-memory
//!   stores use it. No implementation needs to read a clock itself, so a simulator can drive any store.
//! - **Sequencer records** bind a name to a [`SequencerConfig`]. Each record has an `incarnation`, a number
//!   that no earlier record of the same name had (so a handle of a destroyed sequencer tells a re-created
//!   one apart from its own).
//! - **Value floor** (SPEC §3.3): a re-created sequencer never mints an ID *value* an earlier incarnation
//!   of its name could have minted, whatever its layout (epoch, node-ID offset, widths). Reservations
//!   alone cannot say so: they rule out earlier *positions* under one layout, and the layout goes with
//!   the record. So the store keeps, per name and across destroy, a **floor**: every ID any destroyed
//!   incarnation could have minted is below it. [`Store::destroy_sequencer`] raises it atomically with
//!   the removal ([`floor_after`]: the destroyed record's own floor, and the first ID of the tick after
//!   the highest reserved tick of its layout), and [`Store::create_sequencer`] copies it into the new
//!   record ([`SequencerRecord::floor`]); a new holder starts at the first tick whose IDs are all at or
//!   above it ([`first_tick_at_or_above`]). For the floor to be final, no holder of the destroyed
//!   incarnation may claim or reserve once it is computed: [`Store::claim`] takes a node ID only while
//!   the record of [`ClaimRequest::incarnation`] is live, and [`Store::reserve`] writes only while the
//!   claim is live under a live record — both atomically with the destroy (etcd: the destroy transaction
//!   deletes the claim keys, compares the record's create revision and that no reservation key changed
//!   since it was read; PostgreSQL: the destroy transaction locks the record row, ends every claim of
//!   the name and only then reads the reservations; embedded: everything under the registry lock;
//!   in-memory: one mutex). A destroy names the incarnation it destroys and removes nothing else: a
//!   handle of an older incarnation never destroys a newer one.
//! - **Rows** (range allocation, [`crate::range`]) are named text values changed only by
//!   compare-and-set: [`Store::swap_row`] writes a row only if it still holds the value the caller read
//!   (or is absent, for `None`), atomically and durably; concurrent swaps of one row from the same
//!   value succeed once. The new text is the write's identity: callers make it unique to the write (a
//!   nonce in it), and a swap that finds the row holding exactly its new text reports it written. A
//!   swap whose error leaves it unknown (a timeout) may or may not have been applied: the caller reads
//!   the row back ([`Store::row`]) to tell. Rows are never deleted.
//! - **Re-sends**: a client may send a write again after a timeout or a broken connection, and the
//!   first send may have been applied. Every write is safe so: its outcome is decided by the write's own
//!   identity (a claim's etcd lease, or the nonce a PostgreSQL claim stores; a row's new text with its
//!   nonce; a record's configuration), never by comparing values another writer could have produced.
//!   A re-sent claim finds the claim it made, not a second node ID. Renewals,
//!   releases are conditional on the fencing token and write the same values again; a reservation's
//!   re-send is conditional on the fencing token and finds the stored reservation covering it (its own,
//!   or a higher one written since; never lowered), which is as good as writing it;
//!   a re-sent row swap that finds its own text reports it written; a re-sent sequencer creation finds
//!   the record it created. A re-send may still find the row changed again by another writer since its
//!   first send: it then reports "not written" although it was, so callers make the intent they retry
//!   idempotent ([`crate::range`]: adding a range the row already holds, or already gave out, is a
//!   no-op).
//! - Errors: `STORE_UNAVAILABLE` for a store that cannot be reached, times out, or holds unreadable data;
//!   `LEASE_LOST` for a claim that is no longer held; `SEQUENCER_CONFLICT` from
//!   [`Store::create_sequencer`]. Messages name the store ([`Store::describe`]).
//!
//! Every method may block on I/O, bounded by the store's own timeouts; the server stores send a
//! request again after its answer timed out or its connection broke, a bounded number of times
//! (`Resend` in `coord/src/stores/remote.rs`), which the re-send rule above makes safe.

use crate::base::error::Result;

/// A sequencer's configuration: what every holder of the name must agree on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SequencerConfig {
    /// The layout in its canonical text form ([`crate::layout_text`]); compared as text.
    pub layout: String,
    /// How many node IDs the sequencer hands out: `0..nodes` (at most the layout's node count).
    pub nodes: u64,
}

/// A sequencer record as the store holds it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SequencerRecord {
    /// The name.
    pub name: String,
    /// The configuration it was created with.
    pub config: SequencerConfig,
    /// Differs from the incarnation of every earlier record of this name (destroyed ones included).
    pub incarnation: u64,
    /// When it was created (the creator's clock, Unix ms); informational.
    pub created_unix_ms: u64,
    /// Every ID an earlier (destroyed) incarnation of this name could have minted is below this value;
    /// holders of this one mint only IDs at or above it (see the module documentation). 0 for a name
    /// never destroyed.
    pub floor: u64,
}

/// A persisted reservation: every logical position up to `position` (under the layout whose fingerprint
/// is `layout_fingerprint`), and every tick that starts before `until_unix_ms` under any layout, may
/// already have been minted by some holder of this node ID. A new holder starts strictly after both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reservation {
    /// The last reserved logical position (`tick << sequence_bits | sequence`).
    pub position: u64,
    /// [`crate::layout_fingerprint`] of the layout `position` is in (63 bits).
    pub layout_fingerprint: u64,
    /// Unix milliseconds at or after the end of the tick of `position`.
    pub until_unix_ms: u64,
}

impl Reservation {
    /// What the store holds after `self` is written over `stored` (the rule "reservations never move
    /// back" of the module documentation): under the same layout fingerprint the larger position and
    /// the later end time (a stale write changes nothing); otherwise, or with nothing stored, `self`.
    pub fn written_over(self, stored: Option<&Reservation>) -> Reservation {
        match stored {
            Some(s) if s.layout_fingerprint == self.layout_fingerprint => Reservation {
                position: self.position.max(s.position),
                layout_fingerprint: self.layout_fingerprint,
                until_unix_ms: self.until_unix_ms.max(s.until_unix_ms),
            },
            _ => self,
        }
    }

    /// What [`Store::reserve`] (or, `lower`, [`Store::lower_reservation`]) leaves when the store holds
    /// `stored`.
    pub(crate) fn kept(self, stored: Option<&Reservation>, lower: bool) -> Reservation {
        if lower {
            self
        } else {
            self.written_over(stored)
        }
    }
}

/// A held claim on one node ID of a sequencer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Claim {
    /// The sequencer's name.
    pub sequencer: String,
    /// The node ID held.
    pub node_id: u64,
    /// The fencing token: strictly greater than that of every earlier claim of this node ID.
    pub token: u64,
    /// When the claim expires unless renewed, Unix ms, as the store judges it (the embedded and in-memory
    /// stores: the caller's `now + ttl`).
    pub expires_unix_ms: u64,
}

/// A request to claim a free node ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimRequest<'a> {
    /// The sequencer's name.
    pub sequencer: &'a str,
    /// The incarnation of the sequencer the claimer attached to: nothing is claimed unless it is the
    /// live record's (`SEQUENCER_DESTROYED` otherwise).
    pub incarnation: u64,
    /// Node IDs `0..nodes` may be claimed.
    pub nodes: u64,
    /// The first node ID to try (then `start + 1` …, wrapping): spreads concurrent claimers.
    pub start: u64,
    /// Time to live of the claim, milliseconds (at least 1).
    pub ttl_ms: u64,
    /// Who claims, for people reading [`Store::holders`] (e.g. `"pid 4242 on web-3"`).
    pub holder: &'a str,
    /// The caller's clock, Unix ms.
    pub now_unix_ms: u64,
}

/// One node ID of a sequencer as [`Store::holders`] reports it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NodeState {
    /// The node ID.
    pub node_id: u64,
    /// The current claim, if one is held (not expired).
    pub claim: Option<HeldBy>,
    /// The persisted reservation, if any.
    pub reservation: Option<Reservation>,
}

/// Who holds a claim.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HeldBy {
    /// The holder's description from its [`ClaimRequest`].
    pub holder: String,
    /// The claim's fencing token.
    pub token: u64,
    /// Expiry, Unix ms, as the store judges it.
    pub expires_unix_ms: u64,
}

/// A coordination store. See the module documentation for the rules every implementation keeps.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The store as people should see it in messages: its URL without any password.
    fn describe(&self) -> String;

    /// Closes the store's connections until its next call, which opens them again: a process of a
    /// shared lease that is not its keeper makes no store call while it waits to take over
    /// ([`crate::lease`]'s shared mode), so it holds no connection meanwhile. Nothing by default (the
    /// stores without connections of their own, and etcd's).
    fn idle(&self) {}

    /// What any holder may mint ahead of the clock, when the store's history can be lost without its
    /// holders knowing (the embedded store: a directory deleted, replaced, restored from a backup, seen
    /// from another mount namespace; [`crate::file::MAX_AHEAD`]). A lease on such a store never reserves
    /// further ahead of its clock than this, and a new claim starts above `now + max_ahead` whatever the
    /// store holds (SPEC §3.2, "A store whose history is lost"). `None` (the default): the store's
    /// history is kept (etcd, PostgreSQL), and the stored reservation alone decides.
    fn max_ahead(&self) -> Option<std::time::Duration> {
        None
    }

    /// Registers `name` with `config` and the name's current floor; an existing record with the same
    /// config is returned as it is (not an error); one with another config is `SEQUENCER_CONFLICT`.
    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now_unix_ms: u64,
    ) -> Result<SequencerRecord>;

    /// The live record of `name`, if there is one.
    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>>;

    /// Every live record, ordered by name.
    fn sequencers(&self) -> Result<Vec<SequencerRecord>>;

    /// Removes the record of `name` if it is incarnation `incarnation`, ends its claims (fencing tokens
    /// and reservations stay) and raises the name's floor ([`floor_after`]), all atomically. `Ok(false)`
    /// if there was no such record (none, or another incarnation: left as it is).
    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool>;

    /// Takes one free node ID; `Ok(None)` when all `nodes` are held; `SEQUENCER_DESTROYED` when the
    /// live record of the name is not the request's incarnation.
    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>>;

    /// Extends a claim by `ttl_ms` from now; `LEASE_LOST` if it is no longer the current claim or has
    /// expired.
    fn renew(&self, claim: &Claim, ttl_ms: u64, now_unix_ms: u64) -> Result<Claim>;

    /// Gives a claim up (nothing happens if it is no longer held).
    fn release(&self, claim: &Claim) -> Result<()>;

    /// Takes part in `claim`, taken by another process (the processes of a host that share one leased
    /// node ID through a state file, [`crate::lease`]): renews it as [`Store::renew`] does (`LEASE_LOST`
    /// once it is no longer the current claim or has expired: an ended claim is never brought back),
    /// and makes this handle one of its holders, so that it may renew, reserve and release it from now
    /// on. The default is [`Store::renew`]: a claim is named by its node ID and fencing token, which any
    /// handle can renew (etcd finds the claim's etcd lease from its key). The embedded store also takes
    /// the claim's liveness lock in this process, so the claim outlives the process that took it.
    fn adopt(&self, claim: &Claim, ttl_ms: u64, now_unix_ms: u64) -> Result<Claim> {
        self.renew(claim, ttl_ms, now_unix_ms)
    }

    /// Stops being one of `claim`'s holders without ending it (another process that shares it keeps
    /// it; see [`Store::adopt`]). The default does nothing.
    fn leave(&self, claim: &Claim) -> Result<()> {
        let _ = claim;
        Ok(())
    }

    /// The persisted reservation of a node ID, if one was ever written.
    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>>;

    /// Durably writes the reservation of `claim`'s node ID, only if `claim` is still the current claim
    /// (compared by fencing token, atomically with the write); `LEASE_LOST` otherwise. Never lowers the
    /// stored reservation under the same layout: the store keeps
    /// [`Reservation::written_over`] the stored one, and a write the stored one covers succeeds without
    /// changing it.
    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()>;

    /// The final reservation of a clean release ([`crate::Lease::release`]): written like
    /// [`Store::reserve`] (only while `claim` is the current claim, `LEASE_LOST` otherwise), but it
    /// replaces the stored reservation even when lower, so that the next holder starts right after what
    /// was minted. Only for a holder whose generator is sealed at `reservation` (nothing above it was
    /// minted under the claim, nor will be), so a delayed or re-sent copy is harmless too. The default
    /// keeps the higher stored reservation ([`Store::reserve`]), which is safe: the next holder then
    /// starts after it.
    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.reserve(claim, reservation)
    }

    /// Every node ID of `sequencer` that has a live claim or a reservation, ordered by node ID.
    fn holders(&self, sequencer: &str, now_unix_ms: u64) -> Result<Vec<NodeState>>;

    /// The value of row `key` (1 to 130 characters of `A-Z a-z 0-9 _ . - @`), `None` if it was never
    /// written.
    fn row(&self, key: &str) -> Result<Option<String>>;

    /// Compare-and-set on row `key`: writes `new` only if the row holds `expected` (`None`: the row does
    /// not exist), atomically with the comparison. `Ok(true)`: written, durably (also when a re-send of
    /// this write finds `new`, which the caller makes unique to the write, already there); `Ok(false)`:
    /// the row holds something else. An error leaves the write applied or not: read back.
    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool>;
}

/// The floor of `record`'s name once `record` is destroyed (see the module documentation): the
/// larger of its own floor and, for the highest tick `T` reserved under its layout (`reservations`: the
/// name's stored reservations; those of other layouts belong to earlier incarnations, below its floor
/// already), the first ID of tick `T + 1` — every ID of ticks up to `T` is below it. `u64::MAX` when
/// `T` is the layout's last tick.
pub fn floor_after(
    record: &SequencerRecord,
    reservations: impl IntoIterator<Item = Reservation>,
) -> Result<u64> {
    let layout = crate::base::layout::layout_from_text(&record.config.layout)?;
    let fingerprint = crate::base::layout::layout_fingerprint(&layout);
    let mut floor = record.floor;
    for r in reservations {
        if r.layout_fingerprint == fingerprint {
            let tick = r.position >> layout.sequence_bits();
            let first_after = tick
                .checked_add(1)
                .and_then(|t| layout.compose(t, 0, 0).ok())
                .unwrap_or(u64::MAX);
            floor = floor.max(first_after);
        }
    }
    Ok(floor)
}

/// The first tick of `layout` whose every ID is at or above `floor` (IDs grow with the tick in every
/// layout: the timestamp is the top field), `None` if even the last tick has IDs below it.
pub fn first_tick_at_or_above(layout: &snowmint::Layout, floor: u64) -> Option<u64> {
    let lowest = |t: u64| layout.compose(t, 0, 0).unwrap_or(u64::MAX);
    if lowest(layout.max_tick()) < floor {
        return None;
    }
    let (mut lo, mut hi) = (0u64, layout.max_tick());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if lowest(mid) >= floor {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}
