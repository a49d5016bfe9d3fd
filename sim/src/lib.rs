//! Deterministic simulation of the lease and sequencer algorithms (SPEC §3.2, §3.3): the real `Lease`
//! code, stepped (no keeper threads), over the in-memory store, with every holder's clock, the store's
//! clock and every fault drawn from one seed. The same seed replays the same run, step by step. The
//! shared state file (SPEC §4a) runs in a second world: processes of one host minting from one real
//! memory-mapped file with clocks of their own, crashing and opening it again.
//!
//! Faults: clocks stepped back and forth, frozen and smeared; holders paused past their TTL, crashed
//! (no release) and restarted; the store unreachable from a holder (a partition), failing requests at
//! random, or applying a request and answering after the holder gave up; the sequencer destroyed and
//! created again with another node count (2 to 4), another epoch (0.5 to 2 s later or earlier) or
//! another split of the bits between node and sequence (holders adopt the stored layout; a refusal
//! must be `SEQUENCER_CONFLICT` for a value floor beyond `max_ahead`), and an operator's destroy of
//! the incarnation it read before the re-creation landing after it (it must leave the new one).
//! After every step: no ID minted twice across all holders, IDs strictly increasing per lease, and
//! per node ID the stored reservation lies past every position minted on it (a reservation moved
//! back, or written for a ceiling never acknowledged, is caught before a crash turns it into a
//! duplicate). At the end of a run: per node ID, the positions of successive leases do not overlap (what
//! SPEC §3.2 promises, and what lets the long run check 10^9 IDs without keeping them).
//!
//! ```text
//! cargo test -p snowmint-sim --test simulation            # make test's bounded run
//! cargo test -p snowmint-sim --test simulation -- --replay SEED
//! cargo test --release -p snowmint-sim --test simulation -- --long
//! ```
//! Options: `--seeds N` (default 500 lease seeds; the state file and the embedded store run N/50 seeds of `--steps`/2, the
//! service N/25 seeds of `--steps`/2, the hosts N/5 seeds of `--steps`/4, the
//! ranges N/5 seeds of `--steps`/4, the leases over etcd N/50 seeds of `--steps`/2, the ranges over
//! etcd N/25 seeds of `--steps`/4, the leases over PostgreSQL N/25 seeds of `--steps`/2, the ranges
//! over PostgreSQL N/10 seeds of `--steps`/4, the shared lease N/50 seeds of `--steps`/1000 rounds per
//! process, the windows N/10 seeds of `--steps`/2), `--first SEED`, `--steps N` (per seed,
//! default 4000), `--world NAME` (only that world: `leases`, `ranges`, `etcd leases`, `etcd ranges`,
//! `postgres leases`, `postgres ranges`, `embedded leases`, `service`, `hosts`, `shared lease`,
//! `windows`, `state file`), `--replay
//! SEED` (one seed, every step printed, `--steps` being that world's own; with `--state-file`,
//! `--ranges`, `--etcd`, `--ranges --etcd`, `--postgres`, `--ranges --postgres`, `--embedded`,
//! `--service`, `--hosts`, `--shared-lease` or `--windows`, that
//! world; `--defect NAME` plants one of the table's
//! defects), `--long` (1024 nodes, 10^9 IDs: the README's figures), `--defects` / `--no-defects` (only
//! / without the planted-defect proof; `--defect NAME` proves only that one), `--defect-seeds N` (the
//! proof's bound, default 2000), `--no-late-reservations` (reservations are never delayed or
//! duplicated).
//! The default run (proof included) takes about a minute and a half of CPU in debug (the shared-lease
//! world, in real time, adds about 6 s of wall time and little CPU).
//!
//! Network faults of real clients (`Link`): a row write whose answer is lost and which the client sends
//! again (applied first or not), another process acting in between, answered by the store's re-send
//! rule; a request duplicated; a request delayed, landing after the client's next write. Range
//! processes of two datacenters run under them. Reservations are delayed and duplicated too: an older
//! reservation landing after a newer one must leave the stored one (the stores' never-lower rule,
//! `snowmint_coord::store`); before that rule, seed 3 of the default lease seeds found duplicates, and the
//! planted `reservation-lowered` defect puts the old behaviour back.
//!
//! Range processes open as `RangeSequence::open_urls` does (`SteppedAllocator::open`: both stores by
//! URL through a `StoreOpener` that gives the process's links, the global store connected on first
//! use, then the first process range), at the start, after a crash, and restarted with the global store
//! partitioned away: a refusal while the datacenter's store answers and its row holds values (before
//! and after the attempt) is a violation (SPEC §4: opening and serving touch only the datacenter's
//! store while its row holds values; the planted `range-open-connects-global` connects the global
//! store at once, as before the fix).
//!
//! The network boundary (`--etcd`; module `etcd`, its network faults in `net`): the same lease and range worlds over the real etcd
//! client (`EtcdStore`, through its transport seam `etcd::transport::Dial`) on a simulated network to
//! a simulated etcd cluster with etcd's semantics (revisions, transactions, leases expiring by
//! simulated time). There `Link`'s fault knobs act at the network: a request lost before the server, an
//! answer lost or late after the server applied it (the client times out and re-sends on the next
//! endpoint), a connection dropped after commit (the client re-sends on a fresh connection), a request
//! duplicated or delayed past later ones (of any client; half of them stalled up to 1.5 s, landing
//! after the sender's next keeper rounds: what the reservation's mod-revision compare guards
//! against), a partition. A timeout costs its length in
//! simulated time; nothing sleeps, so a seed replays exactly. The range world's races run there too:
//! while a client's answer is lost, another process takes a range.
//!
//! The PostgreSQL store (`--postgres`; module `postgres`, its network faults in `net`): the same lease and range worlds over the
//! real `PostgresStore` through its statement seam `postgres::backend::Connect` to a simulated
//! database that implements each of the store's statements over in-memory tables, judged by the true
//! time as `now()` (the SQL texts and the wire protocol are the real-server tests' part). `Link`'s
//! knobs act at the connection: a statement lost before the server (a timeout), an answer lost after
//! the statement committed (a timeout: the store drops the connection), a connection dropped after
//! commit (the store sends the statement once more on a new connection: a claim's re-send must find
//! the claim it made, by its nonce), a statement duplicated or delayed past later ones of any client
//! (a connection the client gave up on, its statement still queued), a partition. One more check
//! there: a claim call that answered one node ID left no other node ID claimed under its holder
//! string (the store's re-send rule; a node ID held by nobody until its TTL otherwise).
//!
//! The embedded store (`--world "embedded leases"`, `--replay SEED --embedded`): each holder opens the
//! real `FileStore` on one directory (tmpfs; one seed in two reached through a symbolic link,
//! `embedded -> release-0`), which is deleted (`rm -rf`) or moved away and replaced by an empty one
//! under running holders; a lease on the old directory must end at its next keeper round that reaches
//! the store, and the host registry must keep a new directory's claims off its node ID meanwhile (no ID
//! twice). Its history is lost too, as `cli/tests/history.rs` loses it under real processes (issue 39;
//! `World::lose_history`, 2 % of the steps): deleted or moved away and made again, restored from a
//! `cp -a` backup taken earlier (old claim records, reservations and sequencer record), the symbolic
//! link re-pointed (`mv -T`) to a new or restored directory, or the host registry not shared (the
//! holders' `/dev/shm` is not the next claimer's: another container, or the registry deleted) and the
//! directory replaced; the operator creates the sequencer again where it is missing. There only the
//! store's bound keeps the old directory's holders, minting on up to their reservations, apart from
//! the new claims (`Store::max_ahead`: reservations at most `now + 1 s`, every new claim above it): the
//! planted `embedded-no-max-ahead` reverts it (before these faults it passed 200 seeds of this world;
//! now caught at seed 1). Every world of leases checks that no node ID's fencing token is given twice:
//! the embedded store's, across its lost histories, from the clock's floor (planted
//! `embedded-token-from-history`: tokens from the directory's history only, 1 again in a new one).
//! The sequencer is re-created there with its own layout only, and there are
//! no clock faults: a deleted directory takes its reservations and value floor with it, after which
//! only the clock keeps the old IDs apart (SPEC §8) — with per-holder clock steps, or a host clock
//! stepped back, or an epoch changed after a floor put IDs ahead of the clock, this world does mint IDs
//! twice, whatever the product does.
//!
//! The ID service (`--world service`, `--replay SEED --service`; module `worlds::service`): three instances of
//! the real `snowmint_service::Service`, on fixed node IDs claimed on the client sequencer (`--node N
//! --leases URL`) or on a lease source naming it (`--node URL?sequencer=…`), the store those URLs name
//! opened through the service's own code path by an injected `StoreOpener` (the in-memory store behind
//! `Link`'s faults), the own lease stepped; clients minting under leases taken, renewed and released
//! through the service's routes by any instance, the client sequencer destroyed and created again by the
//! operator. Now and then an instance starts with the operator's mistake, a lease source on another
//! sequencer with `--client-sequencer` the client sequencer, which it must refuse: no ID twice across
//! instances and clients, no sequencer record the operator did not create, and no start of the mistake
//! (reported at the end of the run, so that what it leads to, an instance and a client on one node ID,
//! meets the no-ID-twice check first). One seed in three, the store declares the embedded store's bound
//! (`max_ahead`, 1 s) and its history is lost now and then (deleted and made again, the service
//! restarted on it; no clock steps then): every client lease taken after it must start at or above the
//! limit of every lease of the lost history on its node ID (planted:
//! `client-lease-ignores-unknown-history`, the client lease started from the stored reservation and the
//! clock alone). (This crate depends on `snowmint-service`, so that its
//! instances run in this binary; its planted defects are coord's, in the same table.)
//!
//! One lease per host (`--world "shared lease"`, `--replay SEED --shared-lease`; module `worlds::shared_lease`):
//! three hosts of three processes each, every process opening the lease source with its host's state
//! file, the processes of a host starting at once, minting, exiting cleanly or crashing, and starting
//! again; in real time on threads (a shared lease has a keeper thread and the kernel's
//! open-file-description locks), the seed drawing each process's schedule. Checked: no ID twice, the
//! processes of a host that hold their lease at once on one node ID (issue 40: the first claimer wins,
//! the others adopt its record), no clean exit releasing the claim while another process of the host
//! holds it (planted: `shared-lease-no-others`, `SharedFile::others` always `false`).
//!
//! The bindings' per-object ID windows (`--world windows`, `--replay SEED --windows`; module `worlds::windows`):
//! `snowmint_host::window::OwnWindow` as Python and Node drive it, on a simulated clock (its
//! `try_mint_from` / `mint_from`): four objects on the generators of two node IDs, waits that let more
//! calls of the same object in (the GIL released) and last longer than asked, leases changing
//! generators, windows closed, the clock stepped back. Checked: no ID twice, each object's IDs under a
//! generator increasing (planted: `window-of-another-generator`, a window handed out under a generator
//! that did not take it; `window-keeps-earlier`, the window put back after a wait closed and the one
//! taken earlier kept).
//!
//! The `ip` node source (`--world hosts`, `--replay SEED --hosts`; module `worlds::hosts`): fleets of hosts
//! with the interface lists real hosts have (bridges with one address on every host, link-local and
//! down interfaces, a /16 numbered by rack whose host parts may not fit the node field, `ip:IFACE` on
//! some hosts), each host's node ID from the real `ip_node` (a refusal: the host does not start), the
//! started ones minting with the real generator: no ID twice across hosts.
//!
//! Claims' expiry, in every world on the in-memory and embedded stores (which judge by the simulated
//! time they are given): `Link` notes each claim's expiry as the store answers it, and a renewal
//! answered after that expiry is a violation (SPEC §3.2: every store expires a claim at its TTL and
//! refuses its renewal). An expired claim nobody took again mints no duplicate, so the rule is
//! checked itself.
//!
//! The proof (planted defects: this crate turns on the feature `planted-defects` of coord and of the
//! host layer; their one seam is `snowmint_coord::defect`, ARCHITECTURE.md): each one- or two-line
//! mistake of the table in `defects::DEFECTS` must be caught within `--defect-seeds`; the run prints
//! how many seeds each took and fails if one is not caught. A batch that meets the ceiling on a healthy holder must succeed
//! after the keeper's round (a liveness check: what catches a keeper reserving less than the batch).
//!
//! The crate (`publish = false`; SPEC and ARCHITECTURE.md: the simulation beside the code it drives):
//! one file per world under `worlds/` (`leases`, with the embedded store's directory in `embedded`;
//! `ranges`, `state_file`, `service`, `hosts`, `shared_lease`, `windows`), the fault layers (`link`: the
//! in-memory store's link and the range world's races; `net`: the real clients' networks; `etcd` and
//! `postgres`: the simulated cluster and database behind those clients' seams), the simulated time
//! (`clock`, `rng`), the planted-defects table (`defects`) and the runner (`runner`: the command line,
//! the bounded runs, the proof). Its one test, `tests/simulation.rs` (no harness), calls [`main`].

mod clock;
mod defects;
mod etcd;
mod link;
mod net;
mod postgres;
mod rng;
mod runner;
mod worlds;

pub use runner::main;
