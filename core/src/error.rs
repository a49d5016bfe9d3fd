//! One error type for the whole product, with codes that are the same in every language.

use core::fmt;

/// Defines [`ErrorCode`] and its tables (every code, its text, its description, its documentation) from
/// one list, so that nothing about a code is written twice (the C API's result enum is generated from
/// these tables too: `bindings-c/build.rs`).
macro_rules! error_codes {
    ($($(#[doc = $doc:literal])* $name:ident = $num:literal, $text:literal, $description:literal;)*) => {
        /// The stable, language-neutral code of an [`Error`].
        ///
        /// The string form (`"CLOCK_MOVED_BACKWARDS"`) is what Python exceptions, JavaScript `err.code`
        /// and the conformance vectors use; the number is what the C API returns. Numbers are never
        /// reused.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        #[repr(u32)]
        pub enum ErrorCode {
            $($(#[doc = $doc])* $name = $num,)*
        }

        impl ErrorCode {
            /// Every code, in numeric order.
            pub const ALL: [ErrorCode; [$($num),*].len()] = [$(ErrorCode::$name),*];

            /// The code as text, e.g. `"NODE_ID_OUT_OF_RANGE"`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => $text,)*
                }
            }

            /// A one-line description of what the code means (the C API's `snowmint_result_message`).
            pub const fn description(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => $description,)*
                }
            }

            /// The code's documentation (above: one line per line), for bindings generated from the
            /// core, such as the C header's result enum.
            pub const fn doc(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => concat!($($doc, "\n"),*),)*
                }
            }
        }
    };
}

error_codes! {
    /// A layout field is out of range or the fields do not fit together (the message names the field).
    InvalidLayout = 1, "INVALID_LAYOUT", "invalid layout";
    /// A node ID does not fit the layout's node field.
    NodeIdOutOfRange = 2, "NODE_ID_OUT_OF_RANGE", "node ID out of range for the layout";
    /// The clock stepped backwards under the `strict` policy.
    ClockMovedBackwards = 3, "CLOCK_MOVED_BACKWARDS", "the clock moved backwards (strict policy)";
    /// The clock reads a time before the layout's epoch.
    ClockBeforeEpoch = 4, "CLOCK_BEFORE_EPOCH", "the clock reads a time before the layout's epoch";
    /// Minting now would put logical time further ahead of the clock than `max_ahead` (`fail` policy,
    /// or a frozen clock).
    TooFarAhead = 5, "TOO_FAR_AHEAD", "logical time would run too far ahead of the clock";
    /// The layout's timestamp field has run out (the clock is past the layout's lifespan).
    LayoutExhausted = 6, "LAYOUT_EXHAUSTED", "the layout's timestamp field has run out";
    /// A string is not a valid ID in the requested form.
    Parse = 7, "PARSE", "malformed ID string";
    /// The node-ID lease this generator minted under was lost.
    LeaseLost = 8, "LEASE_LOST", "the node-ID lease was lost";
    /// A clock reading is not a finite, non-negative whole number in range.
    InvalidClock = 9, "INVALID_CLOCK", "the clock reading is not a finite, non-negative whole number in range";
    /// An ID does not fit the layout (bits set above its width).
    InvalidId = 10, "INVALID_ID", "the ID does not fit the layout";
    /// Any other argument is out of range (a sequence number too large, a batch that can never fit …).
    InvalidArgument = 11, "INVALID_ARGUMENT", "invalid argument";
    /// A forked child tried to use its parent's generator state.
    Forked = 12, "FORKED", "generator used in a forked child process";
    /// Every node ID of the sequencer is held by another live holder.
    NodeIdsExhausted = 13, "NODE_IDS_EXHAUSTED", "every node ID of the sequencer is held";
    /// A sequencer of this name exists with another configuration.
    SequencerConflict = 14, "SEQUENCER_CONFLICT", "a sequencer of this name exists with another configuration";
    /// The sequencer was destroyed; its handles never mint again.
    SequencerDestroyed = 15, "SEQUENCER_DESTROYED", "the sequencer was destroyed";
    /// The coordination store cannot be reached, refused the request or holds unreadable data.
    StoreUnavailable = 16, "STORE_UNAVAILABLE", "the coordination store is unavailable";
    /// A state file (a generator's state word shared through a memory-mapped file) cannot be used:
    /// another layout or node ID, not a state file, damaged, truncated, unlinked or replaced while in
    /// use, or refused by the OS (the message says which).
    StateFileMismatch = 17, "STATE_FILE_MISMATCH", "the state file does not belong to this generator or cannot be used";
    /// A range sequence has handed out every value of its width (SPEC §4).
    RangeExhausted = 18, "RANGE_EXHAUSTED", "the range sequence has handed out every value of its width";
    /// An ID service (SPEC §6a) cannot be reached, did not answer within the client's bound, or answered
    /// with something that is not the service's protocol.
    ServiceUnavailable = 19, "SERVICE_UNAVAILABLE", "the ID service cannot be reached";
    /// No sequencer of this name exists in the store (only `default` is created implicitly; create any
    /// other with `sequencer create` first).
    SequencerNotFound = 20, "SEQUENCER_NOT_FOUND", "no sequencer of this name exists";
    /// The store does not exist: an embedded store's directory is missing (a mistyped path, or a store
    /// deleted). Opening a store never creates one; creating a sequencer (`sequencer create`) does.
    StoreNotFound = 21, "STORE_NOT_FOUND", "the store does not exist";
    /// C API: a required pointer argument was NULL.
    NullPointer = 100, "NULL_POINTER", "a required pointer was NULL";
    /// C API: an output buffer is too small; the needed length is reported.
    BufferTooSmall = 101, "BUFFER_TOO_SMALL", "the output buffer is too small";
    /// C API: a panic was caught at the boundary (a bug: please report it).
    Panic = 102, "PANIC", "internal error (a panic was caught)";
}

impl ErrorCode {
    /// The code as the number the C API returns.
    pub const fn as_u32(self) -> u32 {
        self as u32
    }

    /// The code for a number, if it is one.
    pub fn from_u32(n: u32) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_u32() == n)
    }

    /// The code for its text form, if it is one.
    pub fn from_name(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a string could not be parsed as an ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// The string is empty.
    Empty,
    /// A character is not a digit of the encoding.
    InvalidCharacter,
    /// The string is longer than the encoding's fixed width.
    TooLong,
    /// The value does not fit in 64 bits.
    Overflow,
    /// `parse_any` could not tell which encoding the string is in.
    Ambiguous,
}

/// Everything that can go wrong, with the data to say exactly what and by how much.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A layout field is out of range; `field` names it, `allowed` says what is accepted.
    InvalidLayout {
        /// The offending field, e.g. `"timestamp_bits"`.
        field: &'static str,
        /// The value given.
        value: u64,
        /// What is allowed, e.g. `"1..=64"`.
        allowed: &'static str,
    },
    /// The node ID (after any `node_id_offset`) does not fit the node field.
    NodeIdOutOfRange {
        /// The node ID given (before the offset).
        node_id: u64,
        /// The layout's node-ID offset.
        offset: u64,
        /// The largest node ID the field holds.
        max: u64,
    },
    /// The clock is behind the last issued ID's tick under the `strict` policy.
    ClockMovedBackwards {
        /// How far back, in nanoseconds.
        by_ns: u64,
    },
    /// The clock reads before the layout's epoch.
    ClockBeforeEpoch {
        /// The reading, Unix nanoseconds.
        unix_ns: u64,
        /// The layout's epoch, Unix milliseconds.
        epoch_ms: u64,
    },
    /// Logical time would run ahead of the clock by more than `max_ahead` (`fail` policy).
    TooFarAhead {
        /// How far ahead of the clock the last ID of the request would be, in nanoseconds.
        ahead_ns: u64,
        /// How long until the same request would succeed, in nanoseconds.
        retry_after_ns: u64,
    },
    /// The clock (or the logical time) is past the last tick the layout can hold.
    LayoutExhausted {
        /// The layout's lifespan end, Unix milliseconds.
        lifespan_end_ms: u64,
    },
    /// A malformed ID string.
    Parse {
        /// What was wrong.
        kind: ParseErrorKind,
        /// Character position (0-based) of the problem.
        position: usize,
        /// The offending character, if any.
        character: Option<char>,
        /// The encoding's name, e.g. `"base58"`.
        encoding: &'static str,
    },
    /// The node-ID lease was lost.
    LeaseLost,
    /// A clock reading is unusable.
    InvalidClock {
        /// Why, e.g. `"not a whole number"`.
        reason: &'static str,
    },
    /// An ID has bits set above the layout's width.
    InvalidId {
        /// The ID.
        id: u64,
        /// The layout's total width in bits.
        bits: u32,
    },
    /// An argument is out of its range.
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// The value given.
        value: u64,
        /// The largest value allowed.
        max: u64,
    },
    /// The generator was created in a parent process and used in a forked child.
    Forked,
    /// Options that cannot be used together (code `INVALID_ARGUMENT`).
    InvalidOptions {
        /// What is wrong and what to do instead.
        reason: &'static str,
    },
    /// A name (layout, policy, encoding, field order) that is not one of the allowed names (code
    /// `INVALID_LAYOUT` for layouts and orders, `INVALID_ARGUMENT` for policies and encodings).
    UnknownName {
        /// What kind of name.
        kind: crate::NameKind,
        /// The name as given.
        given: crate::GivenName,
        /// The nearest allowed name, if one is near.
        suggestion: Option<&'static str>,
    },
    /// A preset that needs parameters was asked for by name alone (code `INVALID_LAYOUT`): `snowcast`
    /// needs an epoch and a node count ([`Layout::snowcast`](crate::Layout::snowcast)).
    PresetNeedsParameters {
        /// The preset, `"snowcast"`.
        preset: &'static str,
    },
    /// An all-digit string that is also an ID of a fixed-width form (code `PARSE`): `parse_any` never
    /// chooses; name the encoding.
    AmbiguousId {
        /// Its value read as decimal.
        decimal: u64,
        /// The other form that reads it.
        other: crate::Encoding,
        /// Its value read in that form.
        other_value: u64,
    },
    /// A clock reading plainly in another unit than the one expected (code `INVALID_CLOCK`): read in
    /// the expected unit it falls outside the layout's lifespan, in the other unit inside it.
    ClockUnit {
        /// The reading.
        reading: u64,
        /// The unit readings must be in.
        expected: crate::ClockUnit,
        /// Nanoseconds per unit of the unit the reading looks like (10^9 seconds … 1 nanoseconds).
        looks_like_ns: u64,
    },
    /// A state file cannot be used by this generator (code `STATE_FILE_MISMATCH`). Only with the
    /// `std` feature, like state files themselves (a `no_std` build keeps none of this text).
    #[cfg(feature = "std")]
    StateFile {
        /// What is wrong with it.
        problem: StateFileProblem,
    },
}

/// What is wrong with a state file (`Error::StateFile`, code `STATE_FILE_MISMATCH`).
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateFileProblem {
    /// The operating system refused an operation on the path (a read-only directory, no permission …).
    Os {
        /// The operation, e.g. `"open"`.
        op: &'static str,
        /// The OS error number (`errno`).
        errno: i32,
    },
    /// The path is a directory or another kind of file that is not a regular file.
    NotAFile,
    /// The file does not have the size of a state file (truncated, or not a state file).
    Size {
        /// Its size in bytes.
        len: u64,
        /// A state file's size.
        expected: u64,
    },
    /// The file does not start with the state file's magic number: it is something else.
    NotAStateFile,
    /// A state file of a format version this build does not read.
    Version {
        /// The file's version.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The header's checksum does not match its contents: the file is damaged.
    Checksum,
    /// The file was made for another layout (fingerprints of the layouts differ).
    Layout {
        /// The file's layout fingerprint.
        file: u64,
        /// This generator's layout fingerprint.
        ours: u64,
        /// The file's layout, as its header records it (`None`: a file written before state files
        /// recorded their layout, which names only its fingerprint).
        file_layout: Option<LayoutRecord>,
        /// This generator's layout.
        our_layout: LayoutRecord,
    },
    /// The file was made for another node ID.
    NodeId {
        /// The file's node ID.
        file: u64,
        /// This generator's node ID.
        ours: u64,
    },
    /// The state word holds a position past the layout's lifespan: the file is damaged.
    StateOutOfRange {
        /// The word's value.
        state: u64,
    },
    /// The mapped file has been unlinked from its path (processes that open the path now get another
    /// file: two states).
    Unlinked,
    /// Another file is mapped under the same path by another process (or by this one): the path was
    /// unlinked or replaced while in use, which would split the state between two files.
    Replaced {
        /// A process that maps the other file (0 when not known).
        pid: u32,
    },
    /// The state word was written in the other byte order: a host (or an emulated process) of the
    /// other endianness made the file, and this one would read its state word wrongly.
    ByteOrder {
        /// Whether the file's state word is big-endian.
        file_big_endian: bool,
    },
}

#[cfg(feature = "std")]
/// The usual name of an OS error number (Linux numbering; also right for these on the BSDs and macOS).
fn errno_name(errno: i32) -> &'static str {
    match errno {
        1 => "operation not permitted",
        2 => "no such file or directory",
        5 => "input/output error",
        12 => "out of memory",
        13 => "permission denied",
        17 => "file exists",
        20 => "a path component is not a directory",
        21 => "is a directory",
        22 => "invalid argument",
        24 => "too many open files",
        28 => "no space left on device",
        30 => "read-only file system",
        _ => "OS error",
    }
}

/// A layout as a state file records it: the fields [`crate::Layout::fingerprint`] is made of (family,
/// widths, order and sign bit, tick, epoch, node-ID offset), to name it in messages.
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutRecord(pub(crate) [u64; 6]);

#[cfg(feature = "std")]
impl LayoutRecord {
    /// The record of `layout`.
    pub const fn of(layout: &crate::Layout) -> LayoutRecord {
        LayoutRecord(layout.fingerprint_words())
    }
}

/// `twitter (ts=41 node=10 seq=12 order=ts|node|seq tick_ns=1000000 epoch_ms=1288834974657 offset=0
/// sign=false)`: the preset it equals, if any, and its fields.
#[cfg(feature = "std")]
impl fmt::Display for LayoutRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [family, widths, order_sign, tick_ns, epoch_ms, offset] = self.0;
        let preset = crate::PRESET_NAMES
            .iter()
            .find(|n| crate::Layout::preset(n).is_ok_and(|l| l.fingerprint_words() == self.0));
        if let Some(name) = preset {
            write!(f, "{name} (")?;
        } else {
            f.write_str("(")?;
        }
        if family == 2 {
            return write!(
                f,
                "decimal tick_ns={tick_ns} epoch_ms={epoch_ms} offset={offset})"
            );
        }
        let order = if order_sign & 0xff == 1 {
            "ts|node|seq"
        } else {
            "ts|seq|node"
        };
        write!(
            f,
            "ts={} node={} seq={} order={order} tick_ns={tick_ns} epoch_ms={epoch_ms} offset={offset} sign={})",
            widths & 0xffff,
            (widths >> 16) & 0xffff,
            (widths >> 32) & 0xffff,
            order_sign >> 8 != 0
        )
    }
}

#[cfg(feature = "std")]
impl fmt::Display for StateFileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StateFileProblem::Os { op, errno } => {
                write!(f, "{op} failed: {} (os error {errno})", errno_name(errno))
            }
            StateFileProblem::NotAFile => f.write_str("not a regular file (a directory?)"),
            StateFileProblem::Size { len, expected } => write!(
                f,
                "{len} bytes long, a state file has {expected}: truncated, or not a state file"
            ),
            StateFileProblem::NotAStateFile => {
                f.write_str("not a snowmint state file (wrong magic number)")
            }
            StateFileProblem::Version { found, supported } => write!(
                f,
                "format version {found}, this build reads version {supported}"
            ),
            StateFileProblem::Checksum => {
                f.write_str("damaged: the header's checksum does not match its contents")
            }
            StateFileProblem::Layout {
                file,
                file_layout,
                our_layout,
                ..
            } => {
                f.write_str("made for another layout, ")?;
                match file_layout {
                    Some(l) => write!(f, "{l}")?,
                    None => write!(
                        f,
                        "with fingerprint {file:016x} (a file from before state files named their layout)"
                    )?,
                }
                write!(f, ", not this generator's {our_layout}")
            }
            StateFileProblem::NodeId { file, ours } => {
                // u64::MAX: a file whose processes share a leased node ID (`state_file::LEASED_NODE`).
                const LEASED: &str = "a leased node ID (a lease source with a state file)";
                match (file, ours) {
                    (u64::MAX, n) => write!(f, "made for {LEASED}, not node ID {n}"),
                    (n, u64::MAX) => write!(f, "made for node ID {n}, not {LEASED}"),
                    (a, b) => write!(f, "made for node ID {a}, not {b}"),
                }
            }
            StateFileProblem::StateOutOfRange { state } => write!(
                f,
                "damaged: its state word {state} is past the layout's last position"
            ),
            StateFileProblem::Unlinked => f.write_str(
                "unlinked from its path while mapped: new processes would open another file and split the state; stop every process using it, then start again",
            ),
            StateFileProblem::Replaced { pid: 0 } => f.write_str(
                "another file now has this path (the state file was replaced while in use): two files would split the state; stop every process using either, then start again",
            ),
            StateFileProblem::Replaced { pid } => write!(
                f,
                "process {pid} maps another file under this path (the state file was unlinked or replaced while in use): two files would split the state; stop the processes using the old file first"
            ),
            StateFileProblem::ByteOrder { file_big_endian } => {
                let (file, ours) = if file_big_endian {
                    ("big", "little")
                } else {
                    ("little", "big")
                };
                write!(
                    f,
                    "made by a {file}-endian process, this one is {ours}-endian: the state word is kept in the byte order of the host that made the file; use a state file per byte order"
                )
            }
        }
    }
}

impl Error {
    /// The stable code of this error.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidLayout { .. } => ErrorCode::InvalidLayout,
            Error::NodeIdOutOfRange { .. } => ErrorCode::NodeIdOutOfRange,
            Error::ClockMovedBackwards { .. } => ErrorCode::ClockMovedBackwards,
            Error::ClockBeforeEpoch { .. } => ErrorCode::ClockBeforeEpoch,
            Error::TooFarAhead { .. } => ErrorCode::TooFarAhead,
            Error::LayoutExhausted { .. } => ErrorCode::LayoutExhausted,
            Error::Parse { .. } => ErrorCode::Parse,
            Error::LeaseLost => ErrorCode::LeaseLost,
            Error::InvalidClock { .. } => ErrorCode::InvalidClock,
            Error::InvalidId { .. } => ErrorCode::InvalidId,
            Error::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            Error::Forked => ErrorCode::Forked,
            Error::InvalidOptions { .. } => ErrorCode::InvalidArgument,
            Error::UnknownName { kind, .. } => match kind {
                crate::NameKind::Layout | crate::NameKind::Order => ErrorCode::InvalidLayout,
                crate::NameKind::Policy | crate::NameKind::Encoding => ErrorCode::InvalidArgument,
            },
            Error::PresetNeedsParameters { .. } => ErrorCode::InvalidLayout,
            Error::AmbiguousId { .. } => ErrorCode::Parse,
            Error::ClockUnit { .. } => ErrorCode::InvalidClock,
            #[cfg(feature = "std")]
            Error::StateFile { .. } => ErrorCode::StateFileMismatch,
        }
    }

    /// For [`Error::TooFarAhead`]: milliseconds until a retry would succeed, rounded up (JavaScript's
    /// `retryAfterMs`). `None` for other errors.
    pub fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Error::TooFarAhead { retry_after_ns, .. } => Some(retry_after_ns.div_ceil(1_000_000)),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidLayout { field, value, allowed } => {
                write!(f, "invalid layout: {field} is {value}, allowed {allowed}")
            }
            Error::NodeIdOutOfRange { node_id, offset, max } => {
                if offset == 0 {
                    write!(f, "node ID {node_id} out of range: the layout allows 0..={max}")
                } else {
                    write!(
                        f,
                        "node ID {node_id} + node_id_offset {offset} out of range: the layout allows 0..={max}"
                    )
                }
            }
            Error::ClockMovedBackwards { by_ns } => write!(
                f,
                "clock moved backwards by {} ms ({by_ns} ns); the strict policy refuses to mint",
                by_ns.div_ceil(1_000_000)
            ),
            Error::ClockBeforeEpoch { unix_ns, epoch_ms } => write!(
                f,
                "clock reads Unix {} ms, before the layout's epoch {epoch_ms} ms",
                unix_ns / 1_000_000
            ),
            Error::TooFarAhead { ahead_ns, retry_after_ns } => write!(
                f,
                "logical time would be {} ms ahead of the clock, past max_ahead; retry after {} ms",
                ahead_ns.div_ceil(1_000_000),
                retry_after_ns.div_ceil(1_000_000)
            ),
            Error::LayoutExhausted { lifespan_end_ms } => write!(
                f,
                "layout exhausted: its timestamp field ran out at Unix {lifespan_end_ms} ms ({})",
                crate::time::IsoTime::from_unix_ms(lifespan_end_ms)
            ),
            Error::Parse { kind, position, character, encoding } => match (kind, character) {
                (ParseErrorKind::Empty, _) => write!(f, "cannot parse an empty string as a {encoding} ID"),
                // Quoted as is; a control character escaped as '\u{1f}' (not `{c:?}`, whose
                // Unicode tables cost the WASM module kilobytes).
                (ParseErrorKind::InvalidCharacter, Some(c)) => {
                    f.write_str("invalid character '")?;
                    if c.is_control() {
                        write!(f, "{}", c.escape_unicode())?;
                    } else {
                        write!(f, "{c}")?;
                    }
                    write!(f, "' at position {position} for a {encoding} ID")
                }
                (ParseErrorKind::TooLong, _) => write!(
                    f,
                    "{encoding} ID too long: position {position} is past the {} characters an ID can have",
                    crate::Encoding::from_name(encoding).map_or(0, |e| e.width())
                ),
                (ParseErrorKind::Overflow, _) => {
                    write!(f, "{encoding} ID out of range: the value does not fit in 64 bits")
                }
                (ParseErrorKind::Ambiguous, _) => write!(
                    f,
                    "cannot tell the encoding of the string; give it as decimal, 0x-hex, 16 hex digits, 13 base32 or 11 base58 characters"
                ),
                (ParseErrorKind::InvalidCharacter, None) => {
                    write!(f, "invalid character at position {position} for a {encoding} ID")
                }
            },
            Error::LeaseLost => write!(f, "the node-ID lease was lost; this generator no longer mints"),
            Error::InvalidClock { reason } => write!(f, "invalid clock reading: {reason}"),
            Error::InvalidId { id, bits } => {
                write!(f, "ID {id} does not fit the layout's {bits} bits")
            }
            Error::InvalidArgument { name, value, max } => {
                write!(f, "{name} is {value}, allowed at most {max}")
            }
            Error::InvalidOptions { reason } => write!(f, "invalid options: {reason}"),
            Error::UnknownName { kind, given, suggestion } => {
                // Quoted as given (no Debug escaping: its Unicode tables would cost the WASM module).
                f.write_str("unknown ")?;
                f.write_str(kind.what())?;
                f.write_str(" \"")?;
                f.write_str(given.as_str())?;
                f.write_str(if given.truncated() { "\"…" } else { "\"" })?;
                if let Some(s) = suggestion {
                    write!(f, " (did you mean {s}?)")?;
                }
                f.write_str("; allowed: ")?;
                for (i, name) in kind.names()[..kind.listed()].iter().enumerate() {
                    f.write_str(if i == 0 { "" } else { ", " })?;
                    f.write_str(name)?;
                }
                Ok(())
            }
            Error::PresetNeedsParameters { preset } => write!(
                f,
                "invalid layout: the {preset} preset needs an epoch and a node count: Layout::snowcast(epoch_ms, node_count)"
            ),
            Error::AmbiguousId { decimal, other, other_value } => write!(
                f,
                "ambiguous ID string: it reads as dec {decimal} or as {} {other_value}; parse it with the encoding named (\"dec\" or \"{}\")",
                other.name(),
                other.name()
            ),
            Error::ClockUnit { reading, expected, looks_like_ns } => {
                let (unit, per) = match expected {
                    crate::ClockUnit::Millis => ("milliseconds", 1_000_000),
                    crate::ClockUnit::Nanos => ("nanoseconds", 1),
                };
                let (name, op, by) = match looks_like_ns {
                    1_000_000_000 => ("seconds", "multiply", 1_000_000_000 / per),
                    1_000_000 => ("milliseconds", "multiply", 1_000_000 / per),
                    1_000 if per > 1_000 => ("microseconds", "divide", per / 1_000),
                    1_000 => ("microseconds", "multiply", 1_000),
                    _ => ("nanoseconds", "divide", per),
                };
                write!(
                    f,
                    "invalid clock reading {reading}: expected Unix {unit}, but it looks like {name}: {op} by {by}"
                )
            }
            #[cfg(feature = "std")]
            Error::StateFile { problem } => write!(f, "state file: {problem}"),
            Error::Forked => write!(
                f,
                "generator used in a forked child: create one with its own node ID in the child"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// `Result` with snowmint's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
