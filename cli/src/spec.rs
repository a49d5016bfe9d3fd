//! The command line, defined once: every command, action, option, value name and allowed value as
//! typed clap definitions ([`Cli`] and the types under it). clap parses with them ([`parse`]) and each
//! command's code reads the typed values (no option is matched by name anywhere else); shell
//! completions (`snowmint completions SHELL`, clap_complete), the man pages (`snowmint man [COMMAND]`,
//! clap_mangen, and the SEE ALSO list of snowmint(1)), the topics of `snowmint help`, the "did you
//! mean" of an unknown command, action or option ([`did_you_mean`]) and the list of commands
//! ([`commands`]) all come from them.
//!
//! A value the core rejects (a preset name, a string form, a node ID) is read as text here and checked
//! by the command, so that it keeps the core's code and exit status 1; what clap refuses is a usage
//! error, exit status 2, in the words of [`clap_error`] (ARCHITECTURE.md, "The command line"). The
//! teaching help texts (`help.rs`) are what `-h`/`--help` prints ([`command`] sets them), and the man
//! pages print their EXAMPLES; `tests/completions.rs` ties the definitions to them.

use std::io::Write;
use std::time::Duration;

use clap::builder::PossibleValue;
use clap::{Arg, Args, Command, CommandFactory, FromArgMatches, Parser, Subcommand, ValueHint};
use clap_complete::Shell;
use snowmint::PRESET_NAMES;

use crate::args::{bits, number, origin, ttl, wait};
use crate::error::CliError;
use crate::Failure;

/// Shells `snowmint completions` writes scripts for.
pub const SHELLS: [&str; 5] = ["bash", "zsh", "fish", "elvish", "powershell"];
const ENCODINGS: [&str; 4] = ["dec", "hex", "base32", "base58"];
const ENCODINGS_ANY: [&str; 5] = ["dec", "hex", "base32", "base58", "any"];
const ORDERS: [&str; 4] = [
    "timestamp_node_sequence",
    "timestamp_sequence_node",
    "ts|node|seq",
    "ts|seq|node",
];

/// `snowmint [COMMAND]`.
#[derive(Parser, Debug)]
#[command(
    name = "snowmint",
    version,
    about = "Mint, inspect and design unique, time-ordered 64-bit IDs (the Snowflake family)",
    long_about = "A snowmint ID packs a timestamp, a node ID and a per-tick sequence number into one 64-bit \
                  integer. IDs sort by creation time, and any number of machines mint them without talking \
                  to each other, as long as each machine (or process) uses its own node ID.",
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Cmd>,
}

/// The commands, in the order every list of them shows.
#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // one value per run
pub enum Cmd {
    /// Mint new IDs from the system clock
    Mint(Mint),
    /// Take IDs apart: time, node, sequence and every string form
    Inspect(Inspect),
    /// Design a layout: bit diagram, lifespan and capacity
    Layout(LayoutCmd),
    /// Named sequencers: a name bound to a layout and node count in a store
    #[command(subcommand, disable_help_subcommand = true)]
    Sequencer(SequencerCmd),
    /// Who holds which node ID: holder, fencing token, expiry and reservation
    #[command(subcommand, disable_help_subcommand = true)]
    Lease(LeaseCmd),
    /// Turn IDs into opaque tokens and back, with a secret key
    #[command(subcommand, disable_help_subcommand = true)]
    Opaque(OpaqueCmd),
    /// Compact integer IDs (31 bits by default) from ranges leased from a global row to datacenters to processes
    #[command(subcommand, disable_help_subcommand = true)]
    Range(RangeCmd),
    /// The ID service: batches of IDs over HTTP, node-ID leases for clients that mint locally
    Serve(Serve),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(Completions),
    /// Print the man page (roff) of snowmint, of one command or of one action (sequencer create)
    Man(Man),
    /// Help on a command, or on the layouts
    #[command(hide = true)]
    Help(HelpTopic),
}

/// The layout options every command that builds a layout shares (`layout_args.rs` builds it).
#[derive(Args, Debug, Default)]
pub struct LayoutOpts {
    /// the layout: a preset, then field options for a custom one
    // One word for a layout: --layout (with -l); --preset is its former name in `snowmint layout`.
    #[arg(
        short = 'l',
        long,
        value_name = "L",
        alias = "preset",
        value_parser = Named::of(&PRESET_NAMES),
        long_help = "twitter (default), discord, instagram, sonyflake, hazelcast, snowcast, js53,\n\
                     decimal; field options make a custom layout (see 'snowmint layout --help')"
    )]
    pub layout: Option<String>,
    /// snowcast's node count, 128..=8192
    #[arg(
        long,
        value_name = "N",
        value_parser = number,
        long_help = "snowcast's node count, 128..=8192 (rounded up to a power of two)"
    )]
    pub node_count: Option<u64>,
    /// bits of the timestamp (1..=64)
    #[arg(
        long,
        value_name = "B",
        value_parser = bits,
        help_heading = FIELDS,
        long_help = "bits of the timestamp (1..=64)"
    )]
    pub timestamp_bits: Option<u32>,
    /// bits of the node ID (0..=63)
    #[arg(
        long,
        value_name = "B",
        value_parser = bits,
        help_heading = FIELDS,
        long_help = "bits of the node ID (0..=63)"
    )]
    pub node_bits: Option<u32>,
    /// bits of the per-tick sequence (0..=63)
    #[arg(
        long,
        value_name = "B",
        value_parser = bits,
        help_heading = FIELDS,
        long_help = "bits of the per-tick sequence (0..=63); the three add up to at most 63"
    )]
    pub sequence_bits: Option<u32>,
    /// allow all 64 bits
    #[arg(
        long,
        help_heading = FIELDS,
        long_help = "allow all 64 bits (IDs may then be negative as signed integers)"
    )]
    pub use_sign_bit: bool,
    /// field order below the timestamp
    #[arg(
        long,
        value_name = "ORDER",
        value_parser = Named::of(&ORDERS),
        help_heading = FIELDS,
        long_help = "timestamp_node_sequence (ts|node|seq) or timestamp_sequence_node (ts|seq|node)"
    )]
    pub order: Option<String>,
    /// tick length in nanoseconds
    #[arg(
        long,
        value_name = "NS",
        value_parser = number,
        help_heading = FIELDS,
        long_help = "tick length in nanoseconds (1000000 = 1 ms)"
    )]
    pub tick_ns: Option<u64>,
    /// epoch, Unix milliseconds (snowcast's parameter, or a field)
    #[arg(
        long,
        value_name = "MS",
        value_parser = number,
        help_heading = FIELDS,
        long_help = "epoch, Unix milliseconds (the time of timestamp 0; snowcast's parameter)"
    )]
    pub epoch_ms: Option<u64>,
    /// added to every node ID before packing (hazelcast's parameter)
    #[arg(
        long,
        value_name = "N",
        value_parser = number,
        help_heading = FIELDS,
        long_help = "added to every node ID before packing (hazelcast's parameter)"
    )]
    pub node_id_offset: Option<u64>,
    /// high bits of the node field shown as a separate part
    #[arg(
        long,
        value_name = "B",
        value_parser = bits,
        help_heading = FIELDS,
        long_help = "high bits of the node field shown as a separate part (twitter: 5 datacenter bits)"
    )]
    pub node_split_bits: Option<u32>,
}

/// The heading of the layout's field options, in --help (`{FIELD OPTIONS}`) and the man pages.
pub const FIELDS: &str = "FIELD OPTIONS";

/// `--json` of `snowmint sequencer`.
#[derive(Args, Debug)]
pub struct SequencerJson {
    /// print JSON (create, show, destroy: one object; list: one per line)
    #[arg(
        long,
        long_help = "create, show and destroy: one JSON object; list: one per line (JSON Lines). Fields:\n\
                     name, store, nodes, incarnation, created, created_unix_ms, layout (its text), preset\n\
                     (or null); show adds holders and node_ids, each as 'snowmint lease --help' describes;\n\
                     destroy adds destroyed (true)"
    )]
    pub json: bool,
}

/// `--json` of `snowmint lease`.
#[derive(Args, Debug)]
pub struct LeaseJson {
    /// print one JSON object per node ID and line
    #[arg(
        long,
        long_help = "one JSON object per node ID and line: sequencer, node_id, holder, token (the fencing\n\
                     token), expires, expires_unix_ms (null when nobody holds it), reservation (null, or\n\
                     position, until, until_unix_ms, layout_fingerprint)"
    )]
    pub json: bool,
}

/// `--json` of `snowmint range`.
#[derive(Args, Debug)]
pub struct RangeJson {
    /// print JSON (next: one object per value and line; show: one object)
    #[arg(
        long,
        long_help = "next: one object per value and line, {\"id\": \"<decimal>\"}; show: one object, name,\n\
                     global (null, or bits, start, last, next, datacenters {DC: {start, end}}) and, with\n\
                     a datacenter, datacenter {name, row (null, or last, reserved, pre_allocated,\n\
                     fetching_until)}; values are decimal strings"
    )]
    pub json: bool,
}

/// `--store` of the store commands (`$SNOWMINT_STORE` when it is not given).
#[derive(Args, Debug)]
pub struct StoreOpt {
    /// file:///DIR, etcd://HOST:PORT/PREFIX or postgres://USER@HOST/DB (default $SNOWMINT_STORE)
    #[arg(
        long,
        value_name = "URL",
        value_hint = ValueHint::Url,
        long_help = "the store: file:///DIR (the embedded store: a directory on this host),\n\
                     etcd://HOST:PORT[,...]/PREFIX or postgres://USER@HOST:PORT/DB (default $SNOWMINT_STORE)"
    )]
    pub store: Option<String>,
}

/// `snowmint mint`. The long help of an option is the line its command's --help shows under OPTIONS
/// ([`options`]), and its man page.
#[derive(Args, Debug)]
pub struct Mint {
    /// how many IDs (default 1)
    #[arg(
        short = 'n',
        long,
        value_name = "N",
        value_parser = number,
        long_help = "how many IDs (default 1), one per line, strictly increasing"
    )]
    pub count: Option<u64>,
    /// node ID: a number, env[:NAME], k8s[:OFFSET], ip, or a lease URL (default $SNOWMINT_NODE_ID, else 0 with a warning)
    #[arg(
        long,
        value_name = "SOURCE",
        long_help = "this machine's node ID (default: $SNOWMINT_NODE_ID, else 0 with a warning on\n\
                     stderr). Two minters with the same node ID and layout can produce the same ID:\n\
                     give each its own, or take one by lease. SOURCE is a number, env[:NAME], k8s[:OFFSET], ip, or a lease:\n\
                     file:///DIR (this host), etcd://HOST:PORT[,...]/PREFIX, postgres://USER@HOST/DB,\n\
                     with ?sequencer=NAME&ttl=10s. A lease is held while minting, released at exit."
    )]
    pub node: Option<String>,
    #[command(flatten)]
    pub layout: LayoutOpts,
    /// string form of the IDs (default dec)
    #[arg(
        short = 'f',
        long,
        value_name = "F",
        value_parser = Named::of(&ENCODINGS),
        long_help = "dec (default), hex (16 digits), base32 (13 Crockford characters) or base58\n\
                     (11 characters); the fixed-width forms sort like the numbers"
    )]
    pub format: Option<String>,
    /// mint from the state shared through this file
    #[arg(
        long,
        value_name = "PATH",
        value_hint = ValueHint::FilePath,
        long_help = "mint from the generator state shared through this file by every process that\n\
                     opens it with the same layout and node ID (e.g. /dev/shm/orders.snowmint, the\n\
                     file a service's workers use): no ID repeats between them or across runs.\n\
                     Created if missing; another layout or node ID, or a damaged file, is\n\
                     STATE_FILE_MISMATCH. The state is flushed to storage (msync) before exiting.\n\
                     With a lease source as --node: one lease per host, shared by every process on\n\
                     the file (the first claims the node ID, the others mint under it, the last\n\
                     one to exit releases it)."
    )]
    pub state_file: Option<String>,
    /// print JSON (IDs as decimal strings; field names in the README)
    #[arg(
        long,
        long_help = "one JSON object per line: {\"id\":\"<decimal>\",\"text\":\"<in --format>\"}"
    )]
    pub json: bool,
    /// print the generator's counters as one JSON line on stderr
    #[arg(
        long,
        long_help = "after minting, the generator's counters as one JSON line on stderr:\n\
                     {\"minted\":N,\"batches\":N,\"borrowed_ticks\":N,\"waits\":N,\"wait_ns\":N,\n\
                     \"regressions\":N} (IDs, batches, ticks borrowed ahead of the clock, sleeps and\n\
                     their total nanoseconds, clock readings below the last one seen)"
    )]
    pub stats: bool,
}

/// `snowmint inspect`.
#[derive(Args, Debug)]
pub struct Inspect {
    /// IDs in any string form; - reads them from standard input
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
    /// the string form of the IDs (default any)
    #[arg(
        long,
        value_name = "ENC",
        value_parser = Named::of(&ENCODINGS_ANY),
        long_help = "the string form of the IDs (default any: told apart by shape)"
    )]
    pub from: Option<String>,
    #[command(flatten)]
    pub layout: LayoutOpts,
    /// print JSON (IDs as decimal strings; field names in the README)
    #[arg(
        long,
        long_help = "one JSON object per ID and line: id (a decimal string), input, read_as, layout, time,\n\
                     unix_ms, sub_ms_ns, timestamp_ticks, node, node_id, node_parts, sequence,\n\
                     shows_nanos, encodings {dec, hex, base32, base58} (see the README)"
    )]
    pub json: bool,
}

/// `snowmint layout`.
#[derive(Args, Debug)]
pub struct LayoutCmd {
    #[command(flatten)]
    pub layout: LayoutOpts,
    /// print JSON (IDs as decimal strings; field names in the README)
    #[arg(
        long,
        help_heading = "OUTPUT",
        long_help = "one JSON object: preset and the nine fields above (as in the Rust serde\n\
                     form), layout, family, total_bits, epoch, lifespan_end(_ms), node_count,\n\
                     max_node_id, ids_per_tick, ids_per_second(_per_node), clock_unit"
    )]
    pub json: bool,
}

/// The actions of `snowmint sequencer`.
#[derive(Subcommand, Debug)]
pub enum SequencerCmd {
    /// Register NAME with a layout and node count
    Create {
        /// the sequencer's name
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        store: StoreOpt,
        #[command(flatten)]
        json: SequencerJson,
        // Its --node-count is the sequencer's (snowcast's parameter too, with its layout): [`command`].
        #[command(flatten)]
        layout: LayoutOpts,
    },
    /// The configuration and every node ID's holder and reservation (SEQUENCER_NOT_FOUND, exit 1, for a NAME with no live record)
    Show {
        /// the sequencer's name
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        store: StoreOpt,
        #[command(flatten)]
        json: SequencerJson,
    },
    /// Every live sequencer
    List {
        #[command(flatten)]
        store: StoreOpt,
        #[command(flatten)]
        json: SequencerJson,
    },
    /// Remove NAME; every holder stops with SEQUENCER_DESTROYED
    Destroy {
        /// the sequencer's name
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        store: StoreOpt,
        #[command(flatten)]
        json: SequencerJson,
    },
}

/// The actions of `snowmint lease`.
#[derive(Subcommand, Debug)]
pub enum LeaseCmd {
    /// Every node ID held now, in every sequencer of the store
    List {
        #[command(flatten)]
        store: StoreOpt,
        #[command(flatten)]
        json: LeaseJson,
    },
    /// Every node ID of sequencer NAME with a holder or a reservation
    Show {
        /// the sequencer's name
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        store: StoreOpt,
        #[command(flatten)]
        json: LeaseJson,
    },
}

/// The actions of `snowmint opaque`.
#[derive(Subcommand, Debug)]
pub enum OpaqueCmd {
    /// IDs to tokens
    Encode(Opaque),
    /// Tokens to IDs
    // Its values are tokens: named TOKEN ([`command`]).
    Decode(Opaque),
}

/// `snowmint opaque encode|decode`.
#[derive(Args, Debug)]
pub struct Opaque {
    /// values in any string form; - reads them from standard input
    #[arg(value_name = "ID", required = true)]
    pub values: Vec<String>,
    /// the 16-byte key: 16 raw bytes or 32 hex digits
    #[arg(
        long,
        value_name = "F",
        value_hint = ValueHint::FilePath,
        long_help = "the 16-byte key: 16 raw bytes, or 32 hex digits (white space around them is ignored)"
    )]
    pub key_file: Option<String>,
    #[command(flatten)]
    pub layout: LayoutOpts,
    /// how to print what comes out (default dec)
    #[arg(
        short = 'f',
        long,
        value_name = "F",
        value_parser = Named::of(&ENCODINGS),
        long_help = "how to print what comes out: dec (default), hex, base32 or base58"
    )]
    pub format: Option<String>,
    /// how to read what goes in (default any)
    #[arg(
        long,
        value_name = "F",
        value_parser = Named::of(&ENCODINGS_ANY),
        long_help = "how to read what goes in: dec, hex, base32, base58 or any (default any)"
    )]
    pub from: Option<String>,
    /// print one JSON object per line (IDs and values as decimal strings; field names in --help)
    #[arg(
        long,
        long_help = "one JSON object per value and line: input (as given), id and token (decimal\n\
                     strings), text (what comes out, in the --format form)"
    )]
    pub json: bool,
}

/// The actions of `snowmint range`. Its stores are --store (the global one, as every command's store)
/// and --local-store; --global and --local are their former names.
#[derive(Subcommand, Debug)]
pub enum RangeCmd {
    /// Take N values, one per line, increasing
    Next(RangeNext),
    /// The global row and, with --dc and --local-store, that datacenter's row
    Show(RangeShow),
}

/// `snowmint range next`.
#[derive(Args, Debug)]
pub struct RangeNext {
    /// the range sequence's name
    #[arg(value_name = "NAME")]
    pub name: String,
    /// this process's datacenter
    #[arg(
        long,
        value_name = "DC",
        required = true,
        long_help = "the datacenter: next takes values from its row; show adds its row (with its store)"
    )]
    pub dc: Option<String>,
    /// the global store every datacenter shares (default $SNOWMINT_STORE)
    #[arg(
        long,
        value_name = "URL",
        alias = "global",
        value_hint = ValueHint::Url,
        long_help = "the global store, shared by every datacenter: file:///DIR, etcd://HOST:PORT[,...]/PREFIX\n\
                     or postgres://USER@HOST:PORT/DB (default $SNOWMINT_STORE; former name: global)"
    )]
    pub store: Option<String>,
    /// the datacenter's own store (default: the global one)
    #[arg(
        long,
        value_name = "URL",
        alias = "local",
        value_hint = ValueHint::Url,
        long_help = "the datacenter's own store (default: the global one; former name: local)"
    )]
    pub local_store: Option<String>,
    /// how many values (default 1)
    #[arg(
        short = 'n',
        long,
        value_name = "N",
        value_parser = number,
        long_help = "how many values (default 1), taken from the datacenter's row"
    )]
    pub count: Option<u64>,
    /// value width, 1..=63 (default 31)
    #[arg(
        long,
        value_name = "B",
        value_parser = bits,
        long_help = "the values' width, 1 to 63 (default 31: a signed 32-bit column)"
    )]
    pub bits: Option<u32>,
    /// the first value (default 1)
    #[arg(
        long,
        value_name = "S",
        value_parser = number,
        long_help = "the first value (default 1)"
    )]
    pub start: Option<u64>,
    /// values a datacenter takes from the global row at a time
    #[arg(
        long,
        value_name = "N",
        value_parser = number,
        long_help = "values a datacenter moves from the global row at a time (default 1000000)"
    )]
    pub dc_range: Option<u64>,
    /// values this process takes from its datacenter's row
    #[arg(
        long,
        value_name = "N",
        value_parser = number,
        long_help = "values this process takes from its datacenter's row at a time (default: exactly\n\
                     the count asked for)"
    )]
    pub process_range: Option<u64>,
    /// use of a range at which the next is fetched (default 100: none)
    #[arg(
        long,
        value_name = "PERCENT",
        value_parser = number,
        long_help = "use of a range at which the next is fetched ahead (default 100: never, so a process\n\
                     that exits leaves no hole)"
    )]
    pub threshold: Option<u64>,
    /// how long to wait for a range (500ms, 2s, 1m; default 0: do not wait)
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = wait,
        long_help = "how long to wait for a range: 500ms, 2s, 1m (default 0: do not wait)"
    )]
    pub wait: Option<Duration>,
    /// --wait in milliseconds (the former spelling)
    // Kept for scripts: milliseconds without a unit.
    #[arg(long, value_name = "MS", value_parser = number, hide = true)]
    pub wait_ms: Option<u64>,
    #[command(flatten)]
    pub json: RangeJson,
}

/// `snowmint range show`. Its options' long help is `range next`'s (one row each in --help).
#[derive(Args, Debug)]
pub struct RangeShow {
    /// the range sequence's name
    #[arg(value_name = "NAME")]
    pub name: String,
    /// the global store every datacenter shares (default $SNOWMINT_STORE)
    #[arg(long, value_name = "URL", alias = "global", value_hint = ValueHint::Url)]
    pub store: Option<String>,
    /// a datacenter whose row to show
    #[arg(long, value_name = "DC")]
    pub dc: Option<String>,
    /// that datacenter's store (default: the global one)
    #[arg(long, value_name = "URL", alias = "local", value_hint = ValueHint::Url)]
    pub local_store: Option<String>,
    #[command(flatten)]
    pub json: RangeJson,
}

/// `snowmint serve`.
#[derive(Args, Debug)]
pub struct Serve {
    /// address to listen on (port 0: any free port)
    #[arg(
        long,
        value_name = "HOST:PORT",
        required = true,
        long_help = "address to listen on, an IP address or a host name such as localhost (port 0:\n\
                     any free port); the first line on standard output\n\
                     says where it listens: snowmint serve: listening on http://HOST:PORT ..."
    )]
    pub listen: Option<String>,
    /// the service's node ID: a number, env[:NAME], k8s[:OFFSET], ip, or a lease URL
    #[arg(
        long,
        value_name = "SOURCE",
        required = true,
        long_help = "the service's node ID: a number, env[:NAME], k8s[:OFFSET], ip, or a lease source\n\
                     (file:///DIR, etcd://HOST:PORT/PREFIX, postgres://USER@HOST:PORT/DB) that the\n\
                     service holds while it runs (/healthz turns 503 if it is lost). A fixed node ID\n\
                     with --store is claimed on the client sequencer of that store (refused while\n\
                     another instance or a client holds it, released at shutdown); without --store\n\
                     the service waits 2 s before it serves (an instance before it may have minted up\n\
                     to 2 s ahead of the clock)."
    )]
    pub node: Option<String>,
    /// how long a batch may be used (default 600s)
    #[arg(
        long, value_name = "DURATION", value_parser = ttl,
        long_help = "how long a batch may be used (valid_for_ms of every batch; default 600s)"
    )]
    pub validity: Option<Duration>,
    /// the largest count of one batch (default 10000)
    #[arg(
        long, value_name = "N", value_parser = number,
        long_help = "the largest count of one batch (default 10000)"
    )]
    pub max_count: Option<u64>,
    /// the store of client leases with a fixed --node (its node ID is claimed there)
    #[arg(
        long, value_name = "URL", alias = "leases", value_hint = ValueHint::Url,
        long_help = "the store of client leases with a fixed --node (a lease source's own store\n\
                     is the store of client leases; --store with it is refused; formerly named leases)"
    )]
    pub store: Option<String>,
    /// the sequencer of client leases and of the instances' node IDs
    #[arg(
        long,
        value_name = "NAME",
        long_help = "the sequencer of client leases and of every instance's node ID (default: the\n\
                     node source's sequencer, and no other is accepted with a lease source; else\n\
                     clients), so that no client is leased a node ID an instance mints with"
    )]
    pub client_sequencer: Option<String>,
    /// a client lease's claim time-to-live (default 70s)
    #[arg(
        long, value_name = "DURATION", value_parser = ttl,
        long_help = "a client lease's claim time-to-live (default 70s); longer than the reservation"
    )]
    pub lease_ttl: Option<Duration>,
    /// how far past the clock a client lease's reservation reaches (default 60s)
    #[arg(
        long, value_name = "DURATION", value_parser = ttl,
        long_help = "how far past the clock a client lease's reservation reaches (default 60s)"
    )]
    pub lease_reservation: Option<Duration>,
    /// a web origin whose pages may call the service (CORS); repeatable; * for any
    #[arg(
        long, value_name = "ORIGIN", value_parser = origin,
        long_help = "a web origin (https://app.example.com) whose pages may call the service from the\n\
                     browser (CORS: preflights answered, access-control-allow-origin sent); repeatable;\n\
                     * allows any origin. A request carrying any other Origin than these and the\n\
                     service's own is refused (403), and a POST body must be application/json (415)."
    )]
    pub cors_origin: Vec<String>,
    /// a host name requests may name in Host; repeatable
    #[arg(
        long,
        value_name = "NAME",
        long_help = "a host name requests may name in Host (DNS rebinding); repeatable; IP addresses\n\
                     are always accepted. Default: localhost when --listen is a loopback address;\n\
                     on any other address, --allowed-host or --auth-token-file is required (refused\n\
                     at start without either)."
    )]
    pub allowed_host: Vec<String>,
    /// bearer tokens required on /v1/ids and /v1/leases
    #[arg(
        long, value_name = "PATH", value_hint = ValueHint::FilePath,
        long_help = "a file of bearer tokens (one per line, 16+ characters, # comments): every request\n\
                     to /v1/ids and /v1/leases... must carry authorization: Bearer TOKEN (401 otherwise);\n\
                     /healthz and /metrics stay open. Without it, anyone who can reach the port can\n\
                     take IDs and leases."
    )]
    pub auth_token_file: Option<String>,
    /// serve HTTPS with this PEM certificate chain
    #[arg(
        long, value_name = "PATH", value_hint = ValueHint::FilePath,
        long_help = "serve HTTPS with this PEM certificate chain (rustls), with --tls-key"
    )]
    pub tls_cert: Option<String>,
    /// the PEM private key of --tls-cert
    #[arg(
        long, value_name = "PATH", value_hint = ValueHint::FilePath,
        long_help = "the PEM private key of --tls-cert"
    )]
    pub tls_key: Option<String>,
    /// client leases one client may hold at once (default 8)
    #[arg(
        long, value_name = "N", value_parser = number,
        long_help = "client leases one client (its token, else its address) may hold at once\n\
                     (default 8; 429 beyond), counted from the leases the store holds (every instance\n\
                     on the store, and a restarted one, counts the same leases)"
    )]
    pub max_leases_per_client: Option<u64>,
    /// client leases one network (IPv4 /24, IPv6 /64) may hold without a token (default 16)
    #[arg(
        long, value_name = "N", value_parser = number,
        long_help = "client leases the clients of one network (IPv4 /24, IPv6 /64) may hold\n\
                     together without a token (default twice --max-leases-per-client; 429 beyond)"
    )]
    pub max_leases_per_network: Option<u64>,
    /// client leases every client without a token may hold together (default a quarter of the node IDs)
    #[arg(
        long, value_name = "N", value_parser = number,
        long_help = "client leases every client without a token may hold together (default\n\
                     a quarter of the client sequencer's node IDs: 256 of 1024; 429 beyond)"
    )]
    pub max_unauthenticated_leases: Option<u64>,
    /// connections served at once (default 256)
    #[arg(
        long, value_name = "N", value_parser = number,
        long_help = "connections served at once (default 256; one more is answered 503 and closed)"
    )]
    pub max_connections: Option<u64>,
    /// connections one address (IPv6: /64) may hold at once (default a quarter of --max-connections)
    #[arg(
        long, value_name = "N", value_parser = number,
        long_help = "connections one source (an IPv4 address, an IPv6 /64) may hold at\n\
                     once (default a quarter of --max-connections: 64; one more is answered 503 and\n\
                     closed). Behind a reverse proxy, raise it to --max-connections.\n\
                     "
    )]
    pub max_connections_per_source: Option<u64>,
    #[command(flatten)]
    pub layout: LayoutOpts,
}

/// `snowmint completions SHELL`.
#[derive(Args, Debug)]
pub struct Completions {
    #[arg(value_name = "SHELL", value_parser = Named::of(&SHELLS))]
    pub shell: String,
}

/// `snowmint man [COMMAND [ACTION]]`: the pages and actions it names are set by [`command`].
#[derive(Args, Debug)]
pub struct Man {
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
    #[arg(value_name = "ACTION")]
    pub action: Option<String>,
}

/// `snowmint help [TOPIC]`: its topics are set by [`command`].
#[derive(Args, Debug)]
pub struct HelpTopic {
    #[arg(value_name = "TOPIC")]
    pub topic: Option<String>,
}

/// The whole command line: the definitions above, with what they cannot say themselves: the help
/// text each command's -h/--help prints (its teaching text, `help.rs`), values named by the tree
/// (`man`'s pages and actions, `help`'s topics), and options whose help differs between commands.
pub fn command() -> Command {
    let model = definitions();
    let root = model.clone();
    // The topics of `snowmint help` and the pages of `snowmint man`: every command (and the table of
    // layouts), from the definitions above.
    let pages: Vec<String> = commands();
    let topics = topics();
    // An action's page is also named as one word (`snowmint man sequencer-create`, its file's name).
    let mut pages_named = pages.clone();
    pages_named.extend(action_pages(&root));
    let actions: Vec<String> = root
        .get_subcommands()
        .flat_map(|c| c.get_subcommands().map(|a| a.get_name().to_string()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let root = root
        .mut_subcommand("man", |man| {
            man.mut_arg("command", |a| a.value_parser(Named::list(pages_named)))
                .mut_arg("action", |a| a.value_parser(Named::list(actions)))
        })
        .mut_subcommand("help", |help| {
            help.mut_arg("topic", |a| a.value_parser(Named::list(topics)))
        });
    with_help(root, &model, "")
}

/// The definitions ([`Cli`]) with what an action says differently from the options it shares: the
/// sequencer's node count (snowcast's parameter too, with its layout), decode's values (tokens).
fn definitions() -> Command {
    let model = Cli::command();
    let changed = model
        .clone()
        .mut_subcommand("sequencer", |s| {
            s.mut_subcommand("create", |c| {
                c.mut_arg("node_count", |a| {
                    a.alias("nodes")
                        .help("node count (default: every node ID of the layout; with --layout snowcast, its parameter too)")
                        .long_help(
                            "create: the node count (default: every node ID of the layout; former name:\n\
                             nodes); with the snowcast layout it is that layout's node-count parameter too",
                        )
                })
            })
        })
        .mut_subcommand("opaque", |o| {
            o.mut_subcommand("decode", |d| d.mut_arg("values", |a| a.value_name("TOKEN")))
        });
    in_order(changed, &model)
}

/// `cmd` with its subcommands, and theirs, in the order of `model` (clap moves a changed one to the end).
fn in_order(cmd: Command, model: &Command) -> Command {
    model.get_subcommands().fold(cmd, |cmd, sub| {
        cmd.mut_subcommand(sub.get_name(), |c| in_order(c, sub))
    })
}

/// `cmd` and everything under it: -h/--help prints the help text of `topic` (an action's: its
/// command's), and an option's value may look like a negative number (`--node -1` is a wrong value,
/// which the command names, not an unknown option `-1`). The subcommands are put back in the order of
/// `model`, the definitions' (clap moves a changed one to the end).
fn with_help(cmd: Command, model: &Command, topic: &str) -> Command {
    // `help` has no text of its own: snowmint's.
    let text = crate::help::text(topic)
        .or_else(|| crate::help::text(""))
        .unwrap_or_default();
    let cmd = cmd.override_help(text).mut_args(|a| {
        if !a.is_positional() && a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    });
    model.get_subcommands().fold(cmd, |cmd, sub| {
        let name = sub.get_name();
        let sub_topic = if topic.is_empty() { name } else { topic };
        cmd.mut_subcommand(name, |c| with_help(c, sub, sub_topic))
    })
}

/// The options under `heading` (`None`: OPTIONS) of the command at `path` (`["mint"]`; of a command
/// with actions, its actions') as its --help shows them: every option with a long help, in the
/// definitions' order, `-n, --count N` then its long help, aligned.
pub fn options(path: &[&str], heading: Option<&str>) -> String {
    let root = definitions();
    let mut cmd = &root;
    for p in path {
        cmd = cmd.find_subcommand(p).expect("a defined command");
    }
    let mut rows: Vec<(String, String)> = Vec::new();
    for c in std::iter::once(cmd).chain(cmd.get_subcommands()) {
        for a in c.get_arguments() {
            let (Some(long), Some(help)) = (a.get_long(), a.get_long_help()) else {
                continue;
            };
            if a.is_hide_set() || a.get_help_heading() != heading {
                continue;
            }
            let mut left = match a.get_short() {
                Some(s) => format!("-{s}, --{long}"),
                None => format!("--{long}"),
            };
            if let Some(value) = a.get_value_names().and_then(|v| v.first()) {
                if a.get_action().takes_values() {
                    left = format!("{left} {value}");
                }
            }
            if !rows.iter().any(|(l, _)| *l == left) {
                rows.push((left, help.to_string()));
            }
        }
    }
    // The texts start in one column, two spaces after the longest name of at most 19 characters; a
    // longer name is followed by two spaces.
    let width = rows
        .iter()
        .map(|(l, _)| l.len() + 2)
        .filter(|w| *w <= 21)
        .max()
        .unwrap_or(0)
        .max(18);
    let mut s = String::new();
    for (left, help) in rows {
        for (i, line) in help.lines().enumerate() {
            match i {
                0 if left.len() >= width => s.push_str(&format!("  {left}  {line}\n")),
                0 => s.push_str(&format!("  {left:<width$}{line}\n")),
                _ => s.push_str(&format!("  {:width$}{line}\n", "")),
            }
        }
    }
    s
}

/// The USAGE lines of `snowmint --help` (`path` `[]`: one line per command, its options other than the
/// required ones as `[OPTIONS]`) or of a command's (`["range"]`: one line per action, every option), from
/// the definitions: positionals, then options in the definitions' order, a required one bare, a
/// repeatable one with `...`, a value named by its few allowed values (`dec|hex|base32|base58`, at most 32 characters) or its
/// value name, the layout's field options as `[FIELD OPTIONS...]`; wrapped at 100 columns.
pub fn usage(path: &[&str]) -> String {
    let root = definitions();
    let mut cmd = &root;
    for p in path {
        cmd = cmd.find_subcommand(p).expect("a defined command");
    }
    let mut s = String::new();
    if path.is_empty() {
        for c in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
            let mut words = vec![format!("snowmint {}", c.get_name())];
            if c.has_subcommands() {
                let actions: Vec<&Command> = c.get_subcommands().collect();
                let names: Vec<&str> = actions.iter().map(|a| a.get_name()).collect();
                words.push(names.join("|"));
                // The actions' positionals: one word if they agree, in brackets if some have none.
                let each: Vec<String> = actions.iter().map(|a| positionals(a).join(" ")).collect();
                let mut kinds: Vec<&String> = each.iter().filter(|p| !p.is_empty()).collect();
                kinds.dedup();
                let joined = kinds
                    .iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join("|");
                match (kinds.len(), each.iter().any(String::is_empty)) {
                    (0, _) => {}
                    (_, true) => words.push(format!("[{joined}]")),
                    (_, false) => words.push(joined),
                }
                if actions.iter().any(|a| !option_words(a, false).is_empty()) {
                    words.push("[OPTIONS]".to_string());
                }
            } else {
                words.extend(positionals(c));
                words.extend(option_words(c, true));
            }
            s.push_str(&wrap(&words));
        }
    } else if cmd.has_subcommands() {
        for a in cmd.get_subcommands() {
            let mut words = vec![format!("snowmint {} {}", path.join(" "), a.get_name())];
            words.extend(positionals(a));
            words.extend(option_words(a, false));
            s.push_str(&wrap(&words));
        }
    } else {
        let mut words = vec![format!("snowmint {}", path.join(" "))];
        words.extend(positionals(cmd));
        words.extend(option_words(cmd, false));
        s.push_str(&wrap(&words));
    }
    s
}

/// The positionals of `cmd` as its synopsis names them: `NAME`, `ID...`, `[ACTION]`.
fn positionals(cmd: &Command) -> Vec<String> {
    cmd.get_positionals()
        .map(|a| {
            let name = a
                .get_value_names()
                .and_then(|v| v.first())
                .map_or_else(|| a.get_id().to_string().to_uppercase(), |v| v.to_string());
            let allowed: Vec<String> = a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            let name = if !allowed.is_empty() && allowed.join("|").len() <= 32 {
                allowed.join("|")
            } else {
                name
            };
            let many = matches!(a.get_action(), clap::ArgAction::Append);
            let word = if many { format!("{name}...") } else { name };
            if a.is_required_set() {
                word
            } else {
                format!("[{word}]")
            }
        })
        .collect()
}

/// The options of `cmd` as its synopsis names them (`brief`: the required ones, then `[OPTIONS]`).
fn option_words(cmd: &Command, brief: bool) -> Vec<String> {
    let mut words = Vec::new();
    let mut others = false;
    for a in cmd.get_arguments() {
        if a.is_positional() || a.is_hide_set() {
            continue;
        }
        if a.get_help_heading() == Some(FIELDS) {
            let fields = format!("[{FIELDS}...]");
            if !brief && !words.contains(&fields) {
                words.push(fields);
            }
            others = true;
            continue;
        }
        let Some(long) = a.get_long() else { continue };
        let mut word = format!("--{long}");
        if a.get_action().takes_values() {
            let allowed: Vec<String> = a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            let value = match a.get_value_names().and_then(|v| v.first()) {
                _ if !allowed.is_empty() && allowed.join("|").len() <= 32 => allowed.join("|"),
                Some(v) => v.to_string(),
                None => long.to_uppercase(),
            };
            word = format!("{word} {value}");
        }
        if matches!(a.get_action(), clap::ArgAction::Append) {
            word.push_str(" ...");
        }
        if a.is_required_set() {
            words.push(word);
        } else if brief {
            others = true;
        } else {
            words.push(format!("[{word}]"));
        }
    }
    if brief && others {
        words.push("[OPTIONS]".to_string());
    }
    words
}

/// `words` as synopsis lines: two spaces in, at most 100 columns, later lines under the first word's end.
fn wrap(words: &[String]) -> String {
    let indent = words.first().map_or(0, |w| w.len() + 3);
    let mut s = String::new();
    let mut line = String::from(" ");
    for (i, w) in words.iter().enumerate() {
        if i > 1 && line.len() + 1 + w.len() > 100 {
            s.push_str(&line);
            s.push('\n');
            line = " ".repeat(indent - 1);
        }
        line.push(' ');
        line.push_str(w);
    }
    s.push_str(&line);
    s.push('\n');
    s
}

/// What the command line asks for: a command to run, or a text to print (a help text, the version).
#[allow(clippy::large_enum_variant)] // one value per run
pub enum Parsed {
    Run(Option<Cmd>),
    Print(String),
}

/// Parses `snowmint ARGS…` with the definitions.
pub fn parse(argv: &[String]) -> Result<Parsed, CliError> {
    let words = std::iter::once("snowmint".to_string()).chain(argv.iter().cloned());
    let root = command();
    let matches = match root.clone().try_get_matches_from(words.clone()) {
        Ok(m) => m,
        Err(e) if !e.use_stderr() => return Ok(Parsed::Print(e.render().to_string())),
        // Only options the command cannot do without are missing (`required` in the definitions:
        // the synopses, completions and man pages show them so): the command names what is missing
        // in its own words, from the typed value it finds empty, after what it checks first.
        Err(e) if only_options_missing(&e) => optional(root.clone())
            .try_get_matches_from(words)
            .map_err(|e| clap_error(&root, argv, &e))?,
        Err(e) => return Err(clap_error(&root, argv, &e)),
    };
    let cli = Cli::from_arg_matches(&matches).map_err(|e| clap_error(&root, argv, &e))?;
    Ok(Parsed::Run(cli.command))
}

/// Whether `e` says that required options, and nothing else, are missing.
fn only_options_missing(e: &clap::Error) -> bool {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    e.kind() == ErrorKind::MissingRequiredArgument
        && matches!(e.get(ContextKind::InvalidArg),
            Some(ContextValue::Strings(v)) if !v.is_empty() && v.iter().all(|a| a.starts_with('-')))
}

/// `cmd` and everything under it with no option required (positionals stay as defined).
fn optional(cmd: Command) -> Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let cmd = cmd.mut_args(|a| {
        if a.is_positional() {
            a
        } else {
            a.required(false)
        }
    });
    names
        .iter()
        .fold(cmd, |cmd, name| cmd.mut_subcommand(name, optional))
}

pub fn commands() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect()
}

/// The topics of `snowmint help`: every command, and the table of layouts after `layout`.
pub fn topics() -> Vec<String> {
    let mut topics = commands();
    let at = topics
        .iter()
        .position(|c| c == "layout")
        .map_or(0, |i| i + 1);
    topics.insert(at, "layouts".into());
    topics
}

/// " (did you mean …?)", or nothing, for a word the parser did not know: under `path` (`[]`: the commands;
/// `["sequencer"]`: its actions and every option of them; `["mint"]`: mint's options), the defined
/// name nearest to `given`, by the core's rule ([`snowmint::suggest`]).
pub fn did_you_mean(path: &[&str], given: &str) -> String {
    match suggestion(path, given) {
        // An option of other actions of this command: say which, not "did you mean" itself.
        Some(s) if s == given => {
            let root = command();
            let mut cmd = &root;
            for p in path {
                match cmd.find_subcommand(p) {
                    Some(c) => cmd = c,
                    None => return String::new(),
                }
            }
            let long = given.trim_start_matches('-');
            let actions: Vec<&str> = cmd
                .get_subcommands()
                .filter(|c| c.get_arguments().any(|a| a.get_long() == Some(long)))
                .map(|c| c.get_name())
                .collect();
            format!(" ({given} is an option of {} only)", actions.join(", "))
        }
        Some(s) => format!(" (did you mean {s}?)"),
        None => String::new(),
    }
}

/// The name [`did_you_mean`] suggests, if any.
fn suggestion(path: &[&str], given: &str) -> Option<String> {
    let root = command();
    let mut cmd = &root;
    for p in path {
        cmd = cmd.find_subcommand(p)?;
    }
    let mut names: Vec<String> = Vec::new();
    if given.starts_with("--") {
        let mut stack = vec![cmd];
        while let Some(c) = stack.pop() {
            for a in c.get_arguments() {
                names.extend(a.get_long().map(|l| format!("--{l}")));
            }
            stack.extend(c.get_subcommands());
        }
    } else if given.starts_with('-') {
        return None; // one letter: every other letter is as near
    } else {
        names.extend(
            cmd.get_subcommands()
                .filter(|c| !c.is_hide_set())
                .map(|c| c.get_name().to_string()),
        );
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    snowmint::suggest(given, &names).map(str::to_string)
}

/// The pages of the commands' actions, `sequencer-create` …: every page a command's page names in its
/// SUBCOMMANDS section (`snowmint-sequencer-create(1)`), which `snowmint man` renders.
fn action_pages(root: &Command) -> Vec<String> {
    root.get_subcommands()
        .filter(|c| !c.is_hide_set())
        .flat_map(|c| {
            c.get_subcommands()
                .filter(|a| !a.is_hide_set())
                .map(move |a| format!("{}-{}", c.get_name(), a.get_name()))
        })
        .collect()
}

/// Every man page `snowmint man` renders besides snowmint(1): `snowmint-COMMAND` for each command and
/// `snowmint-COMMAND-ACTION` for each action, as the file names the README's loop installs.
pub fn man_pages() -> Vec<String> {
    let mut pages = commands();
    pages.extend(action_pages(&Cli::command()));
    pages
}

/// `snowmint completions SHELL`.
pub fn completions(shell: &str, out: &mut impl Write) -> Result<(), Failure> {
    let Ok(shell) = shell.parse::<Shell>() else {
        return Err(CliError::usage(
            format!("unknown shell {shell:?}: use one of {}", SHELLS.join(", ")),
            "completions",
        )
        .into());
    };
    // Into memory first: clap_complete panics on a failed write (`… | head`), ours is handled.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "snowmint", &mut script);
    out.write_all(&script)?;
    Ok(())
}

/// `snowmint man [COMMAND [ACTION]]` (or `COMMAND-ACTION`): the page of snowmint, of
/// `snowmint-COMMAND` or of `snowmint-COMMAND-ACTION`.
pub fn man(args: &Man, out: &mut impl Write) -> Result<(), Failure> {
    let root = command();
    let names = man_pages();
    let page = match (&args.command, &args.action) {
        (Some(name), Some(action)) => Some(format!("{name}-{action}")),
        (name, _) => name.clone(),
    };
    let cmd = match &page {
        None => root,
        Some(page) if names.contains(page) => {
            // A command's page, or an action's (the only pages with a '-' after a command's name).
            let (name, action) = match commands().iter().find(|c| page == *c) {
                Some(c) => (c.clone(), None),
                None => {
                    let (c, a) = page
                        .split_once('-')
                        .expect("an action page is COMMAND-ACTION");
                    (c.to_string(), Some(a.to_string()))
                }
            };
            let mut sub = root
                .find_subcommand(&name)
                .cloned()
                .expect("every page's command is defined");
            if let Some(action) = &action {
                sub = sub
                    .find_subcommand(action)
                    .cloned()
                    .expect("every action page's action is defined");
            }
            let words = page.replacen('-', " ", usize::from(action.is_some()));
            sub.name(format!("snowmint-{page}"))
                .bin_name(format!("snowmint {words}"))
                .version(env!("CARGO_PKG_VERSION"))
                .disable_version_flag(true)
        }
        Some(page) => {
            return Err(CliError::usage(
                format!(
                    "no man page for {page:?}: snowmint man [{}]",
                    names.join("|")
                ),
                "man",
            )
            .into())
        }
    };
    let root_page = page.is_none();
    clap_mangen::Man::new(cmd).render(out)?;
    out.write_all(MAN_EXIT_STATUS.as_bytes())?;
    if root_page {
        out.write_all(MAN_ROOT_EXTRA.as_bytes())?;
    }
    out.write_all(man_examples(page.as_deref().unwrap_or("")).as_bytes())?;
    if root_page {
        let pages: Vec<String> = names.iter().map(|c| format!("snowmint\\-{c}(1)")).collect();
        writeln!(
            out,
            ".SH \"SEE ALSO\"\n{};\n\\fBsnowmint help layouts\\fR for the table of layouts",
            pages.join(", ")
        )?;
    }
    Ok(())
}

/// The EXAMPLES section of a page, in roff: the examples of the command's help text, as `--help`
/// shows them (an action's page: those of its command that run the action).
fn man_examples(page: &str) -> String {
    let (command, action) = match page.split_once('-') {
        Some((c, a)) => (c, Some(a)),
        None => (page, None),
    };
    let lines: Vec<String> = crate::help::examples(command)
        .into_iter()
        .filter(|l| action.is_none_or(|a| l.contains(&format!("snowmint {command} {a}"))))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut s = String::from(".SH EXAMPLES\n.nf\n");
    for line in lines {
        let line = line.replace('\\', "\\e").replace('-', "\\-");
        if line.starts_with(['.', '\'']) {
            s.push_str("\\&");
        }
        s.push_str(&line);
        s.push('\n');
    }
    s.push_str(".fi\n");
    s
}

/// Sections clap has no field for, in roff (every page: exit status; snowmint(1): environment).
const MAN_EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
0
success
.TP
1
failure: a value was rejected (a layout, node ID or ID) or an operation failed (a store, a state
file, writing the output); \fBerror[\fICODE\fB]:\fR and a message on standard error, with the
codes every snowmint library uses (INVALID_LAYOUT, NODE_ID_OUT_OF_RANGE, PARSE, ...)
.TP
2
usage error: the command line is malformed (an unknown command or option, a missing value, not a
number, an option given twice)
"#;

const MAN_ROOT_EXTRA: &str = r#".SH ENVIRONMENT
.TP
SNOWMINT_NODE_ID
the node ID of \fBsnowmint mint\fR when \fB\-\-node\fR is not given (without it: node 0, with a
warning on standard error, since two processes minting as one node make the same IDs)
.TP
SNOWMINT_STORE
the store URL of \fBsnowmint sequencer\fR when \fB\-\-store\fR is not given
"#;

/// A value parser that takes any text and tells completions and man pages the values there are (preset
/// names, string forms, orders, shells, pages, topics): the command's code checks the value, so that a
/// wrong one is the core's error with its code, nearest name and exit status 1, as in every snowmint
/// library (or the command's own message).
#[derive(Clone, Debug)]
struct Named(Vec<String>);

impl Named {
    fn of(names: &[&str]) -> Named {
        Named(names.iter().map(|n| n.to_string()).collect())
    }

    fn list(names: Vec<String>) -> Named {
        Named(names)
    }
}

impl clap::builder::TypedValueParser for Named {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &Command,
        _arg: Option<&Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|v| PossibleValue::new(v.clone())),
        ))
    }
}
/// An option `command` has no definition of, with the nearest one it has.
pub fn unknown_option(command: &str, given: &str) -> CliError {
    CliError::usage(
        format!(
            "unknown option {given} for 'snowmint {command}'{}",
            did_you_mean(&[command], given)
        ),
        command,
    )
}

/// An action `command` has no definition of, with the nearest one and every one it has.
pub fn unknown_action(command: &str, given: &str) -> CliError {
    let actions: Vec<String> = self::command()
        .find_subcommand(command)
        .map(|c| {
            c.get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect()
        })
        .unwrap_or_default();
    CliError::usage(
        format!(
            "unknown action {given:?}{}: {}",
            did_you_mean(&[command], given),
            actions.join(", ")
        ),
        command,
    )
}

/// `a, b or c`.
fn either(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// What clap refused, as the CLI says it: `error[INVALID_ARGUMENT]: …` naming the option, or what is
/// missing as the command teaches it, exit status 2.
fn clap_error(root: &Command, argv: &[String], e: &clap::Error) -> CliError {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    // The command the error is in (its first word), and the action of it (the next word).
    let sub = argv.first().and_then(|w| root.find_subcommand(w));
    let command = sub.map_or("", |c| c.get_name());
    let action = sub.and_then(|c| argv.get(1).and_then(|w| c.find_subcommand(w)));
    // "--count <N>": the option as written in the definitions.
    let arg = context(ContextKind::InvalidArg);
    let option = arg.split([' ', '=']).next().unwrap_or("").to_string();
    let word = match context(ContextKind::InvalidSubcommand) {
        s if s.is_empty() => arg.clone(),
        s => s,
    };
    let kind = e.kind();
    let unknown_word = matches!(
        kind,
        ErrorKind::InvalidSubcommand | ErrorKind::UnknownArgument
    );
    if unknown_word && sub.is_none() {
        let meant = did_you_mean(&[], &word);
        let mut e = CliError::usage(format!("unknown command {word:?}{meant}"), "");
        e.detail
            .insert(0, format!("commands: {}, help", commands().join(", ")));
        return e;
    }
    let actions: Vec<&str> = sub.map_or(Vec::new(), |c| {
        c.get_subcommands().map(|a| a.get_name()).collect()
    });
    if unknown_word && !actions.is_empty() && action.is_none() && !word.starts_with('-') {
        return unknown_action(command, &word);
    }
    let message = match kind {
        ErrorKind::UnknownArgument if arg.starts_with('-') => {
            return unknown_option(command, &arg);
        }
        ErrorKind::UnknownArgument => match (command, action) {
            ("mint", _) => {
                format!("unexpected argument {arg:?} (the count is given with -n, e.g. -n {arg})")
            }
            ("layout", _) => {
                format!("unexpected argument {arg:?} (name a preset with --layout {arg})")
            }
            ("completions", _) => give_one_shell(),
            ("man", _) => "give at most a command and an action".to_string(),
            (c, Some(a)) if a.get_positionals().next().is_none() => {
                format!("'{c} {}' takes no NAME (got {arg:?})", a.get_name())
            }
            _ => format!("unexpected argument {arg:?}"),
        },
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            match command {
                "opaque" => "say 'snowmint opaque encode' or 'snowmint opaque decode'".to_string(),
                "range" => give_range_action(),
                _ => format!("give an action: {}", either(&actions)),
            }
        }
        ErrorKind::MissingRequiredArgument => match (command, action.map(|a| a.get_name())) {
            ("inspect", _) => {
                "give an ID to inspect, e.g. 'snowmint inspect 1212161512043450368'".to_string()
            }
            ("completions", _) => give_one_shell(),
            ("range", _) => give_range_action(),
            ("opaque", Some(a)) => {
                let what = if a == "decode" { "a token" } else { "an ID" };
                format!("give {what} (or - to read them from standard input)")
            }
            (c, Some(a)) => format!("'{c} {a}' needs a NAME"),
            _ => first_line(e),
        },
        ErrorKind::ArgumentConflict => {
            // Which spelling was given twice, as written (an alias counts as the option).
            let written = argv
                .iter()
                .map(|a| a.split('=').next().unwrap_or(a))
                .filter(|a| a.starts_with('-'))
                .find(|a| {
                    argv.iter()
                        .filter(|b| b.split('=').next() == Some(a))
                        .count()
                        > 1
                })
                .unwrap_or(&option);
            format!("{written} is given twice; give each option once")
        }
        ErrorKind::InvalidValue if context(ContextKind::InvalidValue).is_empty() => {
            format!("{option} needs a value")
        }
        ErrorKind::TooManyValues => format!(
            "{option} takes no value (got {:?})",
            context(ContextKind::InvalidValue)
        ),
        ErrorKind::ValueValidation => {
            match std::error::Error::source(e)
                .and_then(|s| s.downcast_ref::<crate::args::Refused>())
            {
                Some(refused) => format!("{option}{refused}"),
                None => first_line(e),
            }
        }
        _ => first_line(e),
    };
    CliError::usage(message, command)
}

/// The first line of clap's own message.
fn first_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or("");
    first.trim_start_matches("error: ").to_string()
}

fn give_one_shell() -> String {
    format!("give one shell: snowmint completions {}", SHELLS.join("|"))
}

fn give_range_action() -> String {
    "give an action and a NAME: range next NAME … or range show NAME …".to_string()
}
