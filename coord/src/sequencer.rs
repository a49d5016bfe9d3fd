//! Named sequencers (SPEC §3.3, snowcast's lifecycle): the [`Sequencer`] handle (the generators opened from a
//! node source are in [`crate::generator`]).
//!
//! A [`Sequencer`] handle is **Attached** (holds a lease and mints), **Detached** (holds none: after
//! [`Sequencer::detach`] or a lost lease; minting fails with `LEASE_LOST`; [`Sequencer::attach`] claims
//! again) or **Destroyed** (after [`Sequencer::destroy`] by any handle in any process: minting fails with
//! `SEQUENCER_DESTROYED` forever).
//!
//! A sequencer is **one ID space**: every ID its holders mint is distinct, and two sequencers of one
//! store are two unrelated spaces (their node IDs overlap). So a name is never made up on the way:
//! only [`crate::source::DEFAULT_SEQUENCER`] is created implicitly (by a lease source that names no
//! sequencer or `default`); attaching to any other name that does not exist is `SEQUENCER_NOT_FOUND`
//! (naming the sequencers that exist and the nearest name), and attaching adopts the stored
//! configuration (another layout is `SEQUENCER_CONFLICT`).
//!
//! **Re-creation** (SPEC §3.3): a sequencer created under a name that had one never mints an ID value a
//! destroyed incarnation could have minted, whatever the layouts (epoch, node-ID offset, field widths).
//! Reservations outlive the record but only rule out *positions* of one layout; so the store keeps a
//! value floor per name, raised atomically by each destroy from the destroyed layout and its
//! reservations, with no claim or reservation of the destroyed incarnation possible afterwards
//! ([`crate::store`], "Value floor"). Chosen over keeping every destroyed configuration: one number per
//! name, computed once, final, and the same on every store. A new holder starts at the first tick whose
//! every ID is at or above the floor; if that tick begins further than `max_ahead` from now (an epoch
//! moved back, a narrower layout), `create` is refused with `SEQUENCER_CONFLICT` saying why (the new
//! record is removed again). [`Sequencer::destroy`] removes only the incarnation of its handle.

use std::sync::Arc;

use snowmint::{ErrorCode, Layout, Options};

use crate::base::defect::Defect;
use crate::base::error::{Error, Result};
use crate::base::store::{SequencerConfig, SequencerRecord, Store};
use crate::base::store_errors::conflict;
use crate::base::sync::RwLock;
use crate::base::time::{SystemTime, Time};
use crate::lease::{Lease, LeaseOptions, LeaseState};
use crate::source::NodeSource;
use crate::stores::open::open_store;

// The public paths of the names, value floors and layout text, and of the node-source generator, this
// module used to hold.
pub use crate::base::floor::{floor_position, floor_start};
pub use crate::base::layout::layout_from_text;
pub use crate::base::name::check_name;
#[doc(hidden)]
pub use crate::generator::NodeGenerator;

/// The stored layout of a lease source's sequencer (`None` for a fixed node source, or a sequencer that
/// does not exist): what a caller that names no layout adopts.
pub fn stored_layout(source: &str) -> Result<Option<Layout>> {
    let NodeSource::Lease(l) = NodeSource::parse(source)? else {
        return Ok(None);
    };
    let store = open_store(&l.store)
        .map_err(|e| e.context(format!("node source {:?}", crate::source::redacted(source))))?;
    store
        .sequencer(&l.sequencer)?
        .map(|r| layout_from_text(&r.config.layout))
        .transpose()
}

/// `SEQUENCER_NOT_FOUND` for `name` in `store`: which sequencers exist, the nearest name, and the
/// command that creates it (with `layout`'s options when the caller has one, e.g. a lease source).
pub fn not_found(store: &dyn Store, name: &str, layout: Option<&Layout>) -> Error {
    let names: Vec<String> = store
        .sequencers()
        .map(|v| v.into_iter().map(|r| r.name).collect())
        .unwrap_or_default();
    let nearest = names
        .iter()
        .map(|n| (edit_distance(n, name), n))
        .min()
        .filter(|(d, n)| *d <= n.len().max(name.len()) / 2)
        .map(|(_, n)| format!("; did you mean {n:?}?"))
        .unwrap_or_default();
    let existing = if names.is_empty() {
        "none exists".to_string()
    } else {
        format!("existing: {}", names.join(", "))
    };
    Error::new(
        ErrorCode::SequencerNotFound,
        format!(
            "{}: no sequencer named {name:?} ({existing}){nearest} — create it first with `{}`{} (only {:?} is created implicitly)",
            store.describe(),
            create_command(&store.describe(), name, layout),
            if has_secret(&store.describe()) {
                " with SNOWMINT_STORE set to the store's URL, its password included (never shown here)"
            } else {
                ""
            },
            crate::base::name::DEFAULT_SEQUENCER
        ),
    )
}

/// Whether a store's description stands for a URL with a secret it does not show: a password
/// redacted (`postgres://app:***@…`, `password=***`) or an etcd user (whose password is dropped).
fn has_secret(described: &str) -> bool {
    let authority = |url: &str| {
        url.split_once("://")
            .map(|(_, rest)| rest.split(['/', '?']).next().unwrap_or("").to_string())
    };
    described.contains("***")
        || (described.starts_with("etcd") && authority(described).is_some_and(|a| a.contains('@')))
}

/// The `snowmint sequencer create` command line that creates `name` in the store described as
/// `store` with `layout` (none: the command's default, twitter), every word shell-quoted so that it
/// works when pasted. A store whose URL holds a secret is written `"$SNOWMINT_STORE"` (messages never
/// show a password); one without a URL (the in-process memory store) `URL`.
pub fn create_command(store: &str, name: &str, layout: Option<&Layout>) -> String {
    let store = if !store.contains("://") {
        "URL".to_string()
    } else if has_secret(store) {
        "\"$SNOWMINT_STORE\"".to_string()
    } else {
        shell_word(store)
    };
    let mut cmd = format!(
        "snowmint sequencer create {} --store {store}",
        shell_word(name)
    );
    if let Some(layout) = layout {
        for word in layout_options(layout) {
            cmd.push(' ');
            cmd.push_str(&shell_word(&word));
        }
    }
    cmd
}

/// The `snowmint` layout options that give `layout`: `--layout PRESET` when it is a preset, else the
/// fields that differ from twitter (the options' base).
pub fn layout_options(layout: &Layout) -> Vec<String> {
    let text = crate::base::layout::layout_text(layout);
    if let Some(preset) = snowmint::PRESET_NAMES
        .iter()
        .find(|n| Layout::preset(n).is_ok_and(|l| crate::base::layout::layout_text(&l) == text))
    {
        if *preset == "twitter" {
            return Vec::new();
        }
        return vec!["--layout".into(), preset.to_string()];
    }
    let c = layout.config();
    let t = *Layout::twitter().config();
    // The options reset the split when --node-bits is given.
    let split_given = if c.node_bits == t.node_bits {
        c.node_split_bits != t.node_split_bits
    } else {
        c.node_split_bits != 0
    };
    let numbers: [(&str, bool, u64); 7] = [
        (
            "--timestamp-bits",
            c.timestamp_bits != t.timestamp_bits,
            c.timestamp_bits.into(),
        ),
        (
            "--node-bits",
            c.node_bits != t.node_bits,
            c.node_bits.into(),
        ),
        (
            "--sequence-bits",
            c.sequence_bits != t.sequence_bits,
            c.sequence_bits.into(),
        ),
        ("--node-split-bits", split_given, c.node_split_bits.into()),
        ("--tick-ns", c.tick_ns != t.tick_ns, c.tick_ns),
        ("--epoch-ms", c.epoch_ms != t.epoch_ms, c.epoch_ms),
        (
            "--node-id-offset",
            c.node_id_offset != t.node_id_offset,
            c.node_id_offset,
        ),
    ];
    let mut words = Vec::new();
    for (flag, given, value) in numbers {
        if given {
            words.extend([flag.to_string(), value.to_string()]);
        }
    }
    if c.order != t.order {
        words.extend(["--order".to_string(), c.order.name().to_string()]);
    }
    if c.use_sign_bit {
        words.push("--use-sign-bit".into());
    }
    words
}

/// `word` as one POSIX shell word: as is when it has only safe characters, else in single quotes.
fn shell_word(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.,/:@%+=".contains(&b));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Levenshtein distance (names are at most 64 bytes).
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// Creates (or finds, with the same configuration) the record `name` and checks that its value floor
/// leaves a start within `max_ahead` of now under `layout`; a record this call created is removed
/// again when it does not (`SEQUENCER_CONFLICT`).
fn create_record(
    store: &dyn Store,
    time: &dyn Time,
    name: &str,
    layout: &Layout,
    nodes: u64,
    options: &Options,
) -> Result<SequencerRecord> {
    let config = SequencerConfig {
        layout: crate::base::layout::layout_text(layout),
        nodes,
    };
    let now_ns = time.unix_ns();
    let now_ms = now_ns / 1_000_000;
    let record = store.create_sequencer(name, &config, now_ms)?;
    if let Err(e) = floor_start(&record, layout, now_ns, options.max_ahead_ns) {
        if record.created_unix_ms == now_ms {
            // Ours (or one created in the same millisecond, which would fail the same way).
            store.destroy_sequencer(name, record.incarnation)?;
        }
        return Err(e);
    }
    Ok(record)
}

/// The state of a [`Sequencer`] handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SequencerState {
    /// Holds a node ID and mints.
    Attached,
    /// Holds none; minting fails with `LEASE_LOST`; `attach()` claims again.
    Detached,
    /// Destroyed; minting fails with `SEQUENCER_DESTROYED`, forever.
    Destroyed,
}

/// A handle on a named sequencer.
#[derive(Debug)]
pub struct Sequencer {
    store: Arc<dyn Store>,
    time: Arc<dyn Time>,
    record: SequencerRecord,
    layout: Layout,
    options: Options,
    lease_options: LeaseOptions,
    lease: RwLock<Option<Arc<Lease>>>,
    destroyed: std::sync::atomic::AtomicBool,
}

impl Sequencer {
    /// Creates the sequencer `name` (or returns a handle on the existing one with the same
    /// configuration; another configuration is `SEQUENCER_CONFLICT`, and so is a layout that reaches the
    /// value floor of the name's destroyed incarnations only further than `max_ahead` from now). The
    /// handle starts Detached.
    pub fn create(
        store: Arc<dyn Store>,
        name: &str,
        layout: Layout,
        nodes: u64,
    ) -> Result<Sequencer> {
        Sequencer::create_with(
            store,
            Arc::new(SystemTime),
            name,
            layout,
            nodes,
            Options::default(),
            LeaseOptions::default(),
        )
    }

    /// [`Sequencer::create`] with a clock, generator options and lease options.
    pub fn create_with(
        store: Arc<dyn Store>,
        time: Arc<dyn Time>,
        name: &str,
        layout: Layout,
        nodes: u64,
        options: Options,
        lease_options: LeaseOptions,
    ) -> Result<Sequencer> {
        check_name(name)?;
        if nodes == 0 || nodes > layout.node_count() {
            return Err(Error::invalid(format!(
                "sequencer {name:?}: {nodes} nodes; the layout holds 1..={}",
                layout.node_count()
            )));
        }
        let record = create_record(&*store, &*time, name, &layout, nodes, &options)?;
        Ok(Sequencer::handle(
            store,
            time,
            record,
            layout,
            options,
            lease_options,
        ))
    }

    /// A handle on the existing sequencer `name` (its layout and node count from the store).
    pub fn open(store: Arc<dyn Store>, name: &str) -> Result<Sequencer> {
        Sequencer::open_with(
            store,
            Arc::new(SystemTime),
            name,
            Options::default(),
            LeaseOptions::default(),
        )
    }

    /// [`Sequencer::open`] with a clock, generator options and lease options.
    pub fn open_with(
        store: Arc<dyn Store>,
        time: Arc<dyn Time>,
        name: &str,
        options: Options,
        lease_options: LeaseOptions,
    ) -> Result<Sequencer> {
        check_name(name)?;
        let record = store
            .sequencer(name)?
            .ok_or_else(|| not_found(&*store, name, None))?;
        let layout = layout_from_text(&record.config.layout)?;
        Ok(Sequencer::handle(
            store,
            time,
            record,
            layout,
            options,
            lease_options,
        ))
    }

    fn handle(
        store: Arc<dyn Store>,
        time: Arc<dyn Time>,
        record: SequencerRecord,
        layout: Layout,
        options: Options,
        lease_options: LeaseOptions,
    ) -> Sequencer {
        Sequencer {
            store,
            time,
            record,
            layout,
            options,
            lease_options,
            lease: RwLock::new(None),
            destroyed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A new, Detached handle on the same incarnation of the sequencer (same store, layout and options):
    /// each handle holds a lease of its own once attached.
    pub fn new_handle(&self) -> Sequencer {
        Sequencer::handle(
            self.store.clone(),
            self.time.clone(),
            self.record.clone(),
            self.layout,
            self.options,
            self.lease_options.clone(),
        )
    }

    /// The handle a lease source uses: `store`'s sequencer `name` (its stored node count), whose layout
    /// must be `layout` (`SEQUENCER_CONFLICT` otherwise). Only [`crate::source::DEFAULT_SEQUENCER`] is
    /// created if missing (with `layout` and all of its node IDs); any other missing name is
    /// `SEQUENCER_NOT_FOUND`.
    pub fn for_layout(
        store: Arc<dyn Store>,
        name: &str,
        layout: Layout,
        options: Options,
        time: Arc<dyn Time>,
        lease_options: LeaseOptions,
    ) -> Result<Sequencer> {
        check_name(name)?;
        let text = crate::base::layout::layout_text(&layout);
        let record = match store.sequencer(name)? {
            Some(r) if r.config.layout == text => r,
            Some(r) => {
                let wanted = SequencerConfig {
                    layout: text,
                    nodes: r.config.nodes,
                };
                return Err(conflict(name, &r.config, &wanted).context(store.describe()));
            }
            None if name == crate::base::name::DEFAULT_SEQUENCER
                || lease_options.defect.is(Defect::ImplicitCreation) =>
            {
                create_record(
                    &*store,
                    &*time,
                    name,
                    &layout,
                    layout.node_count(),
                    &options,
                )?
            }
            None => return Err(not_found(&*store, name, Some(&layout))),
        };
        Ok(Sequencer::handle(
            store,
            time,
            record,
            layout,
            options,
            lease_options,
        ))
    }

    /// A lease on this sequencer, the handle given up for it ([`crate::NodeGenerator::lease_from`]).
    pub(crate) fn into_lease(self) -> Result<Lease> {
        Lease::acquire(
            self.store,
            self.time,
            self.record,
            self.layout,
            self.options,
            self.lease_options,
        )
    }

    /// The generator options its generators mint with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The store this handle works on.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The record this handle belongs to.
    pub fn record(&self) -> &SequencerRecord {
        &self.record
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn destroyed_error(&self) -> Error {
        Error::new(
            ErrorCode::SequencerDestroyed,
            format!(
                "sequencer {:?} was destroyed; this handle never mints again",
                self.record.name
            ),
        )
    }

    /// The state.
    pub fn state(&self) -> SequencerState {
        if self.destroyed.load(std::sync::atomic::Ordering::SeqCst) {
            return SequencerState::Destroyed;
        }
        match self.lease().map(|l| l.state()) {
            Some(LeaseState::Held) => SequencerState::Attached,
            Some(LeaseState::Destroyed) => {
                self.destroyed
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                SequencerState::Destroyed
            }
            // No keeper watches a detached handle: ask the store.
            _ if self.destroyed_in_store() => SequencerState::Destroyed,
            _ => SequencerState::Detached,
        }
    }

    /// The state as this handle knows it, without asking the store (for callers that must not wait on
    /// the network, such as an event loop): a Detached handle reports Destroyed only once it has seen
    /// the destruction (through its lease's keeper, a mint, an attach or [`Sequencer::state`]).
    pub fn known_state(&self) -> SequencerState {
        if self.destroyed.load(std::sync::atomic::Ordering::SeqCst) {
            return SequencerState::Destroyed;
        }
        match self.lease().map(|l| l.state()) {
            Some(LeaseState::Held) => SequencerState::Attached,
            Some(LeaseState::Destroyed) => SequencerState::Destroyed,
            _ => SequencerState::Detached,
        }
    }

    /// `true` (and remembered) if the store no longer has this incarnation of the sequencer. A store
    /// that cannot be asked leaves the answer `false`.
    fn destroyed_in_store(&self) -> bool {
        let gone = matches!(
            self.store.sequencer(&self.record.name),
            Ok(r) if r.as_ref().is_none_or(|r| r.incarnation != self.record.incarnation)
        );
        if gone {
            self.destroyed
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        gone
    }

    /// The current lease, if attached (or detached by a loss not yet acted on).
    pub fn lease(&self) -> Option<Arc<Lease>> {
        self.lease.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Claims a node ID (most likely another one than before). Attached already: nothing happens.
    pub fn attach(&self) -> Result<()> {
        match self.state() {
            SequencerState::Destroyed => return Err(self.destroyed_error()),
            SequencerState::Attached => return Ok(()),
            SequencerState::Detached => {}
        }
        match self.store.sequencer(&self.record.name)? {
            Some(r) if r.incarnation == self.record.incarnation => {}
            _ => {
                self.destroyed
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                return Err(self.destroyed_error());
            }
        }
        let mut slot = self.lease.write().unwrap_or_else(|p| p.into_inner());
        // Release a lost lease first (its claim may already be someone else's; release is a no-op then).
        slot.take();
        let lease = Lease::acquire(
            self.store.clone(),
            self.time.clone(),
            self.record.clone(),
            self.layout,
            self.options,
            self.lease_options.clone(),
        )?;
        *slot = Some(Arc::new(lease));
        Ok(())
    }

    /// Releases the node ID. Minting then fails with `LEASE_LOST` until [`Sequencer::attach`].
    pub fn detach(&self) -> Result<()> {
        let lease = self.lease.write().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(lease) = lease {
            // Released now, even if a minting thread still holds the Arc: it then gets LEASE_LOST.
            lease.release()?;
        }
        Ok(())
    }

    /// Destroys the sequencer everywhere: every handle of it, in every process, stops minting within
    /// one renewal interval and fails with `SEQUENCER_DESTROYED` forever.
    pub fn destroy(&self) -> Result<()> {
        self.destroyed
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.detach();
        // Only this handle's incarnation: a newer one under the same name is left as it is.
        self.store
            .destroy_sequencer(&self.record.name, self.record.incarnation)?;
        Ok(())
    }

    /// Mints one ID: `LEASE_LOST` when detached, `SEQUENCER_DESTROYED` when destroyed (a detached
    /// handle asks the store).
    pub fn next_id(&self) -> Result<u64> {
        if self.destroyed.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(self.destroyed_error());
        }
        match self.lease() {
            Some(l) => l.next_id().map_err(|e| {
                // A lease that ended (a renewal that failed on a busy host, a claim that went with the
                // record) while the sequencer was destroyed reports the destruction, as a keeper would.
                if e.code() == ErrorCode::LeaseLost && self.destroyed_in_store() {
                    self.destroyed_error()
                } else {
                    e
                }
            }),
            None if self.destroyed_in_store() => Err(self.destroyed_error()),
            None => Err(Error::lease_lost(format!(
                "sequencer {:?} is detached; attach() to mint",
                self.record.name
            ))),
        }
    }
}
