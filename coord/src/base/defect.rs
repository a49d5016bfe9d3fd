//! The one seam of the planted defects, the test machinery's only part in the product code: the
//! [`Defect`] a proof plants (the simulation's, crate `snowmint-sim` in `sim/`; the shuttle model's,
//! `coord/tests/shuttle.rs`) and the [`Hook`] the product code carries and asks, at every site the same
//! way: `self.defect.is(Defect::RenewIgnoresExpiry)`. Without the feature `planted-defects` the hook is
//! zero-sized and never on (each check a constant `false`, compiled away) and nothing can plant one:
//! `Hook::planted` and every entry point that takes a defect (the stores' `plant`,
//! `RangeSequence::open_planted`, `SteppedAllocator`, `source::ip_node_planted`) exist with the feature
//! only. The service's two defects are here too (it asks the same hook); the bindings' windows, in the
//! host layer below this crate, have a hook of the same form over their own two
//! (`snowmint_host::window::WindowDefect`), and the simulated store's are the simulation's own.

/// Defects the proofs must catch, each one fix reverted (most break a rule of SPEC §3.2). Hidden from
/// the documentation: the test machinery's vocabulary, not the crate's API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Defect {
    /// The algorithm as it is.
    #[default]
    None,
    /// A new holder ignores the stored reservation and starts from its clock.
    IgnoreReservation,
    /// The ceiling is raised before the store acknowledges the reservation (and even if it never does).
    CeilingBeforeAck,
    /// A range sequence writes its rows against what they hold at the time of the write, not against
    /// what it read (a range taken without the compare).
    RangeWithoutCompare,
    /// A range sequence adds a range moved from the global row to its datacenter row without checking
    /// that the row already holds it (a re-sent add, its first answer lost, adds it twice).
    RangeAddWithoutOverlap,
    /// A range sequence takes a compare-and-set whose outcome is unknown (a timeout) as applied,
    /// without reading the row back.
    RangeTimeoutAsWritten,
    /// The keeper's reservation target ignores the end of a batch that met the ceiling
    /// (`Shared::wanted`): it reserves less than the batch needs.
    KeeperIgnoresWanted,
    /// The memory store writes a reservation before it re-checks the claim (a refused reservation is
    /// written anyway).
    ReserveBeforeRecheck,
    /// The memory store writes a reservation as it comes, without keeping the larger of it and the
    /// stored one (a delayed or duplicated older write moves the reservation back).
    ReservationLowered,
    /// The etcd client takes a reservation transaction whose compare failed, the claim still held, as
    /// written (without computing again from the reservation it read back).
    EtcdReserveFailedAsWritten,
    /// A range sequence adds a range moved from the global row to its datacenter row without clipping
    /// it to the row's floor (a re-sent add, after processes took all of it, adds it again).
    RangeAddNotClipped,
    /// The etcd client takes a failed row compare-and-set whose row holds its text, up to the nonce, as
    /// its own write.
    EtcdRowResendByValue,
    /// The etcd client writes a reservation under the claim's compare alone, without the compare on
    /// the key's mod revision (the fix of the never-lower rule reverted: a delayed or re-sent older
    /// write lands over a newer one).
    EtcdReserveWithoutModCompare,
    /// A new holder starts after the node's reservation alone, not also above the value floor of the
    /// sequencer's earlier incarnations (the fix of a re-created sequencer repeating old IDs reverted:
    /// positions compared, not ID values).
    StartIgnoresFloor,
    /// The PostgreSQL store claims with the statement as it was before a re-send looked for the claim it
    /// made (no `mine`): a claim re-sent after its answer was lost takes a second node ID, the first
    /// held by nobody until its TTL.
    PgClaimResendTakesAnother,
    /// The PostgreSQL store reserves with the statement that has no keep-the-larger `CASE` (a delayed or
    /// re-sent older reservation lowers the stored one).
    PgReserveWithoutKeepLarger,
    /// The memory store destroys a sequencer by name, without its condition on the incarnation.
    DestroyWithoutCondition,
    /// The embedded store renews and reserves without checking that the claim's file is still the
    /// one at its path (a deleted or replaced directory goes unnoticed).
    EmbeddedIgnoresPath,
    /// `release` reads the generator's next free position before it stops minting (a plain load, not
    /// the swap that seals the word): an ID minted in between lies past the reservation it lowers to,
    /// and the node ID's next holder mints it again.
    ReleaseReadsBeforeSeal,
    /// The ID service opens a fixed `--node N` given a store of client leases as a fixed node ID,
    /// without claiming it on the client sequencer (the fix of an instance's node ID leased to a
    /// client reverted: the store hands it out).
    ServiceFixedNodeUnclaimed,
    /// A lease source (and the service's client sequencer) creates any sequencer it names that does
    /// not exist, not only `default` (the fix of implicit creation, `SEQUENCER_NOT_FOUND`, reverted).
    ImplicitCreation,
    /// The memory store, and the embedded store, renew a claim past its expiry (the fix of renewals
    /// after the TTL reverted; the embedded store also keeps the claim in its process past expiry).
    RenewIgnoresExpiry,
    /// A range sequence installs its next process range with the end stored before the cursor: a
    /// minting thread that reads the new end in between takes a value from the old cursor, outside
    /// the new range (another process's).
    RangeEndBeforeCursor,
    /// A range sequence opened by its stores' URLs connects the global store at once, not on first use
    /// (the fix of a process that could not open while the global store was unreachable, reverted):
    /// opening fails with the global store unreachable though the datacenter row holds values.
    RangeOpenConnectsGlobal,
    /// The ID service with a lease source as `--node` takes a `--client-sequencer` other than the
    /// source's, and leases client node IDs from it (the fix of an instance minting with a node ID a
    /// client lease also got, reverted: two sequencers, one node-ID space).
    ServiceOtherClientSequencer,
    /// The `ip` node source takes a bridge's address (`docker0`'s 172.17.0.1 on every host).
    IpTakesBridge,
    /// The `ip` node source truncates a host part that does not fit the node field to its low bits
    /// (10.1.1.5 and 10.1.2.5 of a /16 both node 5 under 8 node bits).
    IpHostTruncated,
    /// The embedded store declares no bound on a lost history (`FileStore::max_ahead` `None`, the fix
    /// of issue 39 reverted): its holders reserve ahead as on any store, and a holder that finds no
    /// history for its node ID (a directory deleted, moved, restored, re-pointed or seen without the
    /// host registry) starts at the clock, not above `now + 1 s`.
    EmbeddedNoMaxAhead,
    /// A shared lease's state file never sees the other sharers (`SharedFile::others` always `false`):
    /// every process that leaves takes itself for the last one and releases the claim under the
    /// processes still minting, and a joiner claims anew beside them.
    SharedLeaseNoOthers,
    /// The ID service's client lease starts from the node ID's stored reservation and the clock alone,
    /// not also above `now + max_ahead` on a store whose history can be lost (the fix reverted): a
    /// client that takes a node ID after the embedded store's directory was lost mints what a client of
    /// the lost history minted ahead of the clock.
    ClientLeaseIgnoresUnknownHistory,
    /// The embedded store's fencing tokens come from the directory's history only (the last token of
    /// the node ID and its reservation's, plus one), without the clock's floor: a directory whose
    /// history is lost gives its tokens again (1 in a new directory).
    EmbeddedTokenFromHistory,
}

/// The planted defect a store, lease, shared lease, range sequence or node source carries: with the
/// feature `planted-defects`, which one ([`Defect::None`]: none); without it, nothing (zero-sized) and
/// never on.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hook(#[cfg(feature = "planted-defects")] Defect);

impl Hook {
    /// No defect planted.
    pub const NONE: Hook = Hook(
        #[cfg(feature = "planted-defects")]
        Defect::None,
    );

    /// The hook with `defect` planted (feature `planted-defects` only).
    #[cfg(feature = "planted-defects")]
    pub const fn planted(defect: Defect) -> Hook {
        Hook(defect)
    }

    /// Whether `defect` is the one planted: always `false` without the feature `planted-defects`.
    #[inline(always)]
    pub fn is(self, defect: Defect) -> bool {
        #[cfg(feature = "planted-defects")]
        return self.0 == defect;
        #[cfg(not(feature = "planted-defects"))]
        {
            let _ = defect;
            false
        }
    }
}

// Without the feature the hook takes no room in the product's structs.
#[cfg(not(feature = "planted-defects"))]
const _: () = assert!(std::mem::size_of::<Hook>() == 0);
