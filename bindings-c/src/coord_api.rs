//! Node sources, node-ID leases and sequencers (SPEC §3): every decision is the `snowmint-coord`
//! crate's; these functions convert C types and map its error codes.
//!
//! Blocking: `snowmint_generator_open`, `snowmint_generator_attach`, `snowmint_generator_detach`,
//! `snowmint_sequencer_*` (except `_free`) and `snowmint_shared_generator_free` of a lease-backed
//! generator wait on the store (bounded by the store's timeouts). Minting never waits on the store
//! unless the reservation runs out (then at most the TTL).

use super::*;

/// Borrows a required UTF-8 string argument (`INVALID_ARGUMENT` if it is not UTF-8).
pub(crate) unsafe fn text_arg<'a>(p: *const c_char, what: &'static str) -> Result<&'a str, Fail> {
    // SAFETY: caller checked non-NULL and passes a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|_| Fail::Argument(what))
}

fn leased_box(g: Box<coord::SequencerGenerator>, forks: u64) -> *mut snowmint_shared_generator {
    let unit = g.layout().clock_reader();
    Box::into_raw(Box::new(snowmint_shared_generator {
        inner: SharedInner::Leased(g),
        clock: HostClock {
            source: Source::System,
            userdata: std::ptr::null_mut(),
            unit,
        },
        forks,
    }))
}

/// Opens a generator from a node source: a number ("7"), "env" / "env:NAME", "k8s" / "k8s:OFFSET",
/// "ip" (a fixed node ID), or a lease source "file:///DIR", "etcd://HOST:PORT/PREFIX",
/// "postgres://USER@HOST:PORT/DB" (each with optional "?sequencer=NAME&ttl=10s&wait=30s"), which claims
/// a free node ID before it returns (blocking; with every node ID held, "wait=" waits up to that long for
/// one) and keeps it with a background thread until `snowmint_shared_generator_free`. `options` may be
/// NULL; an injected clock is refused for a lease source (INVALID_ARGUMENT: leases run on the system
/// clock). Used in a child forked after this call (pre-fork servers), the handle opens a lease of its
/// own there on first use, with its own node ID; the parent's lease never mints in the child.
///
/// Errors: INVALID_ARGUMENT (a malformed source; the message says why), NODE_ID_OUT_OF_RANGE,
/// STORE_UNAVAILABLE, NODE_IDS_EXHAUSTED, SEQUENCER_CONFLICT (the sequencer exists with another layout),
/// SEQUENCER_NOT_FOUND (no sequencer of that name: only "default" is created on first use).
/// On success `*generator_out` is a new handle: free it with `snowmint_shared_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_open(
    node_source: *const c_char,
    layout: *const snowmint_layout,
    options: *const snowmint_options,
    generator_out: *mut *mut snowmint_shared_generator,
) -> snowmint_result {
    // SAFETY: forwarded caller contract; no state file.
    unsafe {
        snowmint_generator_open_shared(
            node_source,
            std::ptr::null(),
            layout,
            options,
            generator_out,
        )
    }
}

/// `snowmint_generator_open` with a state file (`state_file` may be NULL: none). With a lease source, the
/// lease is one per host: every process that opens the same state file mints under the node ID the
/// first one claimed (recorded in the file), the lease is renewed while any of them lives (another
/// process takes the renewal over, with the same claim, when the one renewing it exits or is killed)
/// and released by the last one to free its handle; a lost lease stops every process with LEASE_LOST.
/// With a fixed node ID, the state word lives in the file as with `snowmint_shared_generator_open_file`.
///
/// Errors: those of `snowmint_generator_open`, and STATE_FILE_MISMATCH (a file made for a fixed node ID
/// or another layout, or whose processes share a lease of another source), LEASE_LOST (the processes on
/// the file hold a lost lease and are stopping).
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_open_shared(
    node_source: *const c_char,
    state_file: *const c_char,
    layout: *const snowmint_layout,
    options: *const snowmint_options,
    generator_out: *mut *mut snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        nonnull!(node_source);
        nonnull!(layout);
        nonnull!(generator_out);
        // SAFETY: non-NULL NUL-terminated string (caller contract).
        let source = unsafe { text_arg(node_source, "node_source is not UTF-8") }?;
        let state_file = if state_file.is_null() {
            None
        } else {
            // SAFETY: non-NULL NUL-terminated string (caller contract).
            Some(std::path::PathBuf::from(unsafe {
                text_arg(state_file, "state_file is not UTF-8")
            }?))
        };
        // SAFETY: non-NULL live handle.
        let l = *unsafe { layout_ref(layout) };
        // SAFETY: forwarded caller contract.
        let (opts, clock) = unsafe { convert_options(&l, options) }?;
        let is_lease = matches!(
            coord::NodeSource::parse(source),
            Ok(coord::NodeSource::Lease(_))
        );
        if is_lease && !clock.is_system() {
            return Err(Fail::Argument(
                "a lease source mints on the system clock; options.clock is for fixed node IDs",
            ));
        }
        let p = match coord::SequencerGenerator::open_sharing(
            source,
            l,
            opts,
            None,
            state_file.clone(),
        )? {
            coord::Opened::Plain(node) => {
                // The options first, then the state file: the host layer's rule.
                let g = shared_state_generator(l, node, opts, state_file)?;
                Box::into_raw(Box::new(snowmint_shared_generator {
                    inner: SharedInner::Plain(g),
                    clock,
                    forks: fork_count(),
                }))
            }
            coord::Opened::Leased(g) => {
                // Boxed, so it stays where it is: given back before a fork if it never minted.
                coord::generator::prefork::register(&g);
                leased_box(g, fork_count())
            }
        };
        // SAFETY: non-NULL.
        unsafe { put(generator_out, p) };
        Ok(())
    })
}

/// The state of a generator's node ID.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum snowmint_lease_state {
    /// Holds its node ID (always, for a fixed node ID) and mints.
    Attached = 0,
    /// Holds none (after `snowmint_generator_detach` or a lost lease): minting gives
    /// SNOWMINT_RESULT_LEASE_LOST until `snowmint_generator_attach`.
    Detached = 1,
    /// The sequencer was destroyed: minting gives SNOWMINT_RESULT_SEQUENCER_DESTROYED forever.
    Destroyed = 2,
}

/// A node-ID lease as seen at one moment.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct snowmint_lease_info {
    /// The node ID held.
    pub node_id: u64,
    /// The claim's fencing token (greater than every earlier claim's of this node ID).
    pub fencing_token: u64,
    /// When the claim expires unless renewed, Unix milliseconds.
    pub expires_unix_ms: u64,
}

fn state_of(g: &coord::SequencerGenerator) -> snowmint_lease_state {
    match g.state() {
        coord::SequencerState::Attached => snowmint_lease_state::Attached,
        coord::SequencerState::Detached => snowmint_lease_state::Detached,
        coord::SequencerState::Destroyed => snowmint_lease_state::Destroyed,
    }
}

/// Writes the lease a generator holds into `*info_out`. INVALID_ARGUMENT for a fixed node ID (it holds
/// no lease), LEASE_LOST when detached, SEQUENCER_DESTROYED when destroyed.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_lease_info(
    generator: *const snowmint_shared_generator,
    info_out: *mut snowmint_lease_info,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(info_out);
        // SAFETY: non-NULL live handle.
        let g = match &unsafe { &*generator }.inner {
            SharedInner::Plain(_) => {
                return Err(Fail::Argument(
                    "this generator has a fixed node ID: it holds no lease",
                ))
            }
            SharedInner::Leased(g) => g,
        };
        let Some(l) = g.lease() else {
            // The generator's own error: LEASE_LOST or SEQUENCER_DESTROYED.
            return match g.next_id() {
                Err(e) => Err(e.into()),
                Ok(_) => Err(coord::Error::lease_lost("the lease changed; ask again").into()),
            };
        };
        let info = snowmint_lease_info {
            node_id: l.node_id(),
            fencing_token: l.fencing_token(),
            expires_unix_ms: l.expires_unix_ms(),
        };
        // SAFETY: non-NULL.
        unsafe { put(info_out, info) };
        Ok(())
    })
}

/// Writes the generator's state into `*state_out` (a fixed node ID is always ATTACHED). A detached
/// lease-backed generator asks the store whether its sequencer was destroyed.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_lease_state(
    generator: *const snowmint_shared_generator,
    state_out: *mut snowmint_lease_state,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(state_out);
        // SAFETY: non-NULL live handle.
        let s = match &unsafe { &*generator }.inner {
            SharedInner::Plain(_) => snowmint_lease_state::Attached,
            SharedInner::Leased(g) => state_of(g),
        };
        // SAFETY: non-NULL.
        unsafe { put(state_out, s) };
        Ok(())
    })
}

/// The node ID a shared generator mints with (of its lease; of the last lease held once detached).
#[no_mangle]
pub unsafe extern "C" fn snowmint_shared_generator_node_id(
    generator: *const snowmint_shared_generator,
    node_id_out: *mut u64,
) -> snowmint_result {
    guard(|| {
        nonnull!(generator);
        nonnull!(node_id_out);
        // SAFETY: non-NULL live handle.
        let n = match &unsafe { &*generator }.inner {
            SharedInner::Plain(g) => g.node_id(),
            SharedInner::Leased(g) => g.node_id(),
        };
        // SAFETY: non-NULL.
        unsafe { put(node_id_out, n) };
        Ok(())
    })
}

/// Releases the generator's lease (blocking); minting then gives LEASE_LOST until
/// `snowmint_generator_attach`. Nothing for a fixed node ID. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_detach(
    generator: *const snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        let g = try_ref!(generator);
        check_fork(g.forks)?;
        if let SharedInner::Leased(l) = &g.inner {
            l.detach()?;
        }
        Ok(())
    })
}

/// Claims a node ID again (blocking; most likely another one). Nothing when attached or for a fixed
/// node ID; SEQUENCER_DESTROYED once destroyed; NODE_IDS_EXHAUSTED when none is free. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_attach(
    generator: *const snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        let g = try_ref!(generator);
        check_fork(g.forks)?;
        if let SharedInner::Leased(l) = &g.inner {
            l.attach()?;
        }
        Ok(())
    })
}

/// A handle on a named sequencer (snowcast's lifecycle) in a store. Thread-safe; free with
/// `snowmint_sequencer_free`. It holds no lease itself: `snowmint_sequencer_attach` gives generators.
pub struct snowmint_sequencer {
    inner: coord::Sequencer,
}

/// Writes a new handle on `seq` to `out`.
///
/// # Safety
/// `out` is non-NULL and writable.
unsafe fn put_sequencer(out: *mut *mut snowmint_sequencer, seq: coord::Sequencer) {
    // SAFETY: forwarded caller contract.
    unsafe {
        put(
            out,
            Box::into_raw(Box::new(snowmint_sequencer { inner: seq })),
        )
    }
}

/// Creates the sequencer `name` with `node_count` node IDs (0: all of the layout's) in the store
/// `store_url` names ("file:///DIR", "etcd://HOST:PORT/PREFIX", "postgres://USER@HOST:PORT/DB"; "?ttl="
/// sets the lease TTL of its generators), or a handle on the existing one with the same configuration;
/// another configuration is SEQUENCER_CONFLICT. Blocking. Free `*sequencer_out` with
/// `snowmint_sequencer_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_sequencer_create(
    store_url: *const c_char,
    name: *const c_char,
    layout: *const snowmint_layout,
    node_count: u64,
    sequencer_out: *mut *mut snowmint_sequencer,
) -> snowmint_result {
    guard(|| {
        nonnull!(store_url);
        nonnull!(name);
        nonnull!(layout);
        nonnull!(sequencer_out);
        // SAFETY: non-NULL NUL-terminated strings and a live layout (caller contract).
        let (url, name, l) = unsafe {
            (
                text_arg(store_url, "store_url is not UTF-8")?,
                text_arg(name, "name is not UTF-8")?,
                *layout_ref(layout),
            )
        };
        let nodes = if node_count == 0 {
            l.node_count()
        } else {
            node_count
        };
        let seq = coord::generator::create_sequencer(url, name, l, nodes, Options::default())?;
        // SAFETY: non-NULL.
        unsafe { put_sequencer(sequencer_out, seq) };
        Ok(())
    })
}

/// A handle on the existing sequencer `name` in `store_url` (SEQUENCER_NOT_FOUND if there is none).
/// Blocking. Free `*sequencer_out` with `snowmint_sequencer_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_sequencer_open(
    store_url: *const c_char,
    name: *const c_char,
    sequencer_out: *mut *mut snowmint_sequencer,
) -> snowmint_result {
    guard(|| {
        nonnull!(store_url);
        nonnull!(name);
        nonnull!(sequencer_out);
        // SAFETY: non-NULL NUL-terminated strings (caller contract).
        let (url, name) = unsafe {
            (
                text_arg(store_url, "store_url is not UTF-8")?,
                text_arg(name, "name is not UTF-8")?,
            )
        };
        let seq = coord::generator::open_sequencer(url, name, Options::default())?;
        // SAFETY: non-NULL.
        unsafe { put_sequencer(sequencer_out, seq) };
        Ok(())
    })
}

/// Claims a node ID of the sequencer and returns a shared generator holding it (blocking). Free it
/// with `snowmint_shared_generator_free` (which releases the lease).
#[no_mangle]
pub unsafe extern "C" fn snowmint_sequencer_attach(
    sequencer: *const snowmint_sequencer,
    generator_out: *mut *mut snowmint_shared_generator,
) -> snowmint_result {
    guard(|| {
        let s = try_ref!(sequencer);
        nonnull!(generator_out);
        let g = coord::SequencerGenerator::attach_new(s.inner.new_handle())?;
        // SAFETY: non-NULL.
        unsafe { put(generator_out, leased_box(Box::new(g), fork_count())) };
        Ok(())
    })
}

/// Releases the lease of a generator from `snowmint_sequencer_attach` (as `snowmint_generator_detach`).
#[no_mangle]
pub unsafe extern "C" fn snowmint_sequencer_detach(
    generator: *const snowmint_shared_generator,
) -> snowmint_result {
    // SAFETY: forwarded caller contract.
    unsafe { snowmint_generator_detach(generator) }
}

/// Destroys the sequencer everywhere (blocking): every generator of it, in every process, stops
/// minting within one renewal interval and gives SEQUENCER_DESTROYED forever. The name may be created
/// again; the new sequencer never repeats an old ID.
#[no_mangle]
pub unsafe extern "C" fn snowmint_sequencer_destroy(
    sequencer: *const snowmint_sequencer,
) -> snowmint_result {
    guard(|| {
        nonnull!(sequencer);
        // SAFETY: non-NULL live handle.
        unsafe { &*sequencer }.inner.destroy()?;
        Ok(())
    })
}

/// Frees a sequencer handle (generators attached from it live on). NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn snowmint_sequencer_free(sequencer: *mut snowmint_sequencer) {
    if sequencer.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: a handle from snowmint_sequencer_create/open, freed once (caller contract).
        drop(unsafe { Box::from_raw(sequencer) });
    })
}
