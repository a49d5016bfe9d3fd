//! The planted-defects table: every defect the proof must catch, the world that catches it, and whether
//! it is planted in the product code, in the simulated store, or both (`--defect NAME` replays one).

use snowmint_coord::defect::Defect;
use snowmint_host::window::WindowDefect;

use crate::runner::Sim;

/// A planted defect as the proof runs it: in the product code (`code`: coord's and the service's
/// [`Defect`]; `window`: the host layer's [`WindowDefect`]), in the simulated store (`store`), or both;
/// in one world.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Planted {
    pub(crate) name: &'static str,
    pub(crate) code: Defect,
    pub(crate) store: StoreDefect,
    pub(crate) window: Option<WindowDefect>,
    pub(crate) world: Sim,
}

impl Planted {
    pub(crate) const NONE: Planted = Planted::code("none", Defect::None, Sim::Leases);
    pub(crate) const fn code(name: &'static str, code: Defect, world: Sim) -> Planted {
        Planted {
            name,
            code,
            store: StoreDefect::None,
            window: None,
            world,
        }
    }
    const fn window(name: &'static str, window: WindowDefect) -> Planted {
        Planted {
            window: Some(window),
            ..Planted::code(name, Defect::None, Sim::Windows)
        }
    }
}

/// The defects of the simulated store (`crate::link::Link`'s answer to a re-sent row write), not of
/// the product: what the real stores' re-send rule must not be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StoreDefect {
    /// The re-send rule as the stores have it ([`snowmint_coord::Store::swap_row`]).
    None,
    /// A re-sent row write that finds the row as it was asked to write it, up to the nonce, answered
    /// as written (identity by value, not by the write's nonce).
    ResendByValue,
    /// A re-sent row write whose first send was applied answered as not written (the old re-send
    /// rule; together with [`Defect::RangeAddWithoutOverlap`], the pair the range fix closed).
    ResendNotWritten,
}

/// Every planted defect the proof must catch (`--defect NAME` replays one).
pub(crate) const DEFECTS: [Planted; 34] = [
    Planted::code("ignore-reservation", Defect::IgnoreReservation, Sim::Leases),
    Planted::code("ceiling-before-ack", Defect::CeilingBeforeAck, Sim::Leases),
    Planted::code(
        "keeper-ignores-wanted",
        Defect::KeeperIgnoresWanted,
        Sim::Leases,
    ),
    Planted::code(
        "reserve-before-recheck",
        Defect::ReserveBeforeRecheck,
        Sim::Leases,
    ),
    Planted::code(
        "reservation-lowered",
        Defect::ReservationLowered,
        Sim::Leases,
    ),
    Planted::code(
        "range-without-compare",
        Defect::RangeWithoutCompare,
        Sim::Ranges,
    ),
    Planted::code(
        "range-add-without-overlap",
        Defect::RangeAddWithoutOverlap,
        Sim::Ranges,
    ),
    Planted::code(
        "range-timeout-as-written",
        Defect::RangeTimeoutAsWritten,
        Sim::Ranges,
    ),
    Planted {
        name: "resend-by-value",
        code: Defect::None,
        store: StoreDefect::ResendByValue,
        window: None,
        world: Sim::Ranges,
    },
    // The pair the range fix closed: the old store's re-send answer with the add that checked nothing.
    Planted {
        name: "resend-not-written+range-add-without-overlap",
        code: Defect::RangeAddWithoutOverlap,
        store: StoreDefect::ResendNotWritten,
        window: None,
        world: Sim::Ranges,
    },
    // In the etcd client, found through the simulated network.
    Planted::code(
        "etcd-reserve-failed-as-written",
        Defect::EtcdReserveFailedAsWritten,
        Sim::EtcdLeases,
    ),
    Planted::code(
        "range-add-not-clipped",
        Defect::RangeAddNotClipped,
        Sim::Ranges,
    ),
    Planted::code(
        "etcd-range-add-not-clipped",
        Defect::RangeAddNotClipped,
        Sim::EtcdRanges,
    ),
    Planted::code(
        "etcd-row-resend-by-value",
        Defect::EtcdRowResendByValue,
        Sim::EtcdRanges,
    ),
    Planted::code(
        "etcd-reserve-without-mod-compare",
        Defect::EtcdReserveWithoutModCompare,
        Sim::EtcdLeases,
    ),
    Planted::code(
        "start-ignores-floor",
        Defect::StartIgnoresFloor,
        Sim::Leases,
    ),
    Planted::code(
        "destroy-without-condition",
        Defect::DestroyWithoutCondition,
        Sim::Leases,
    ),
    Planted::code(
        "embedded-ignores-path",
        Defect::EmbeddedIgnoresPath,
        Sim::FileLeases,
    ),
    // In the PostgreSQL store, found through its simulated database and network.
    Planted::code(
        "pg-claim-resend-takes-another",
        Defect::PgClaimResendTakesAnother,
        Sim::PgLeases,
    ),
    Planted::code(
        "pg-reserve-without-keep-larger",
        Defect::PgReserveWithoutKeepLarger,
        Sim::PgLeases,
    ),
    // In the ID service: an instance's fixed node ID not claimed on the client sequencer.
    Planted::code(
        "service-fixed-node-unclaimed",
        Defect::ServiceFixedNodeUnclaimed,
        Sim::Service,
    ),
    // In the in-memory store: a renewal after the claim's TTL succeeds (the checker's expiry rule).
    Planted::code(
        "renew-ignores-expiry",
        Defect::RenewIgnoresExpiry,
        Sim::Leases,
    ),
    // A sequencer other than `default` created by the lease source that names it (here the service's
    // `--client-sequencer`), after the operator destroyed it.
    Planted::code("implicit-creation", Defect::ImplicitCreation, Sim::Service),
    // The same in the embedded store (the fix of its claims that never expired while their process
    // lived, reverted).
    Planted::code(
        "embedded-renew-ignores-expiry",
        Defect::RenewIgnoresExpiry,
        Sim::FileLeases,
    ),
    // A range process that cannot open while the global store is unreachable, its datacenter row
    // holding values (the global store connected at once, not on first use).
    Planted::code(
        "range-open-connects-global",
        Defect::RangeOpenConnectsGlobal,
        Sim::Ranges,
    ),
    // The service started with a lease source on one sequencer and `--client-sequencer` another.
    Planted::code(
        "service-other-client-sequencer",
        Defect::ServiceOtherClientSequencer,
        Sim::Service,
    ),
    // The `ip` node source: a bridge's address taken; a host part past the node field truncated.
    Planted::code("ip-takes-bridge", Defect::IpTakesBridge, Sim::Hosts),
    Planted::code("ip-host-truncated", Defect::IpHostTruncated, Sim::Hosts),
    // The embedded store's bound on a lost history reverted (issue 39): a holder that finds no
    // history starts at the clock, beside a holder of the lost directory minting on.
    Planted::code(
        "embedded-no-max-ahead",
        Defect::EmbeddedNoMaxAhead,
        Sim::FileLeases,
    ),
    // The embedded store's fencing tokens from the directory's history only: a lost history gives
    // a node ID's tokens again.
    Planted::code(
        "embedded-token-from-history",
        Defect::EmbeddedTokenFromHistory,
        Sim::FileLeases,
    ),
    // One lease per host: the state file never sees the other sharers (issue 40).
    Planted::code(
        "shared-lease-no-others",
        Defect::SharedLeaseNoOthers,
        Sim::SharedLease,
    ),
    // The service's client lease on the embedded store starts from the stored reservation and the
    // clock alone, not above `now + max_ahead`: after the store's history was lost, a client mints
    // what a client of the lost history minted offline ahead of the clock.
    Planted::code(
        "client-lease-ignores-unknown-history",
        Defect::ClientLeaseIgnoresUnknownHistory,
        Sim::Service,
    ),
    // The bindings' windows: a window of an earlier lease's generator handed out under the new one.
    Planted::window("window-of-another-generator", WindowDefect::IgnoresOwner),
    // The bindings' windows: after a wait that let another call in, the earlier window kept.
    Planted::window("window-keeps-earlier", WindowDefect::KeepsEarlier),
];
