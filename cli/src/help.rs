//! Help texts that teach: what each command does, examples to copy, and what each layout is.

use std::fmt::Write as _;

use snowmint::{Layout, Order};

use crate::render::tick;

/// The help text of a topic of `snowmint help` (every command, and `layouts`): what
/// `snowmint COMMAND --help` prints, and the EXAMPLES of its man page ([`examples`]). A text's
/// `{OPTIONS}` (and `{FIELD OPTIONS}`, `{OUTPUT}`) is the command's options as the definitions describe
/// them ([`crate::spec::options`]).
pub fn text(topic: &str) -> Option<String> {
    let text = match topic {
        "" => MAIN.to_string(),
        "mint" => MINT.to_string(),
        "inspect" => INSPECT.to_string(),
        "layout" => layout_help(),
        "layouts" => layouts_table(),
        "sequencer" => SEQUENCER.to_string(),
        "lease" => LEASE.to_string(),
        "opaque" => crate::opaque::HELP.to_string(),
        "range" => RANGE.to_string(),
        "serve" => crate::serve::HELP.to_string(),
        "completions" => COMPLETIONS.to_string(),
        "man" => MAN.to_string(),
        _ => return None,
    };
    // The lists the definitions make: the synopses, the commands, the topics of `snowmint help`, the
    // shells.
    let mut text = text;
    if text.contains("{USAGE}\n") {
        let path: Vec<&str> = [topic].into_iter().filter(|t| !t.is_empty()).collect();
        text = text.replace("{USAGE}\n", &crate::spec::usage(&path));
    }
    let mut text = text
        .replace("{COMMANDS}", &crate::spec::commands().join("|"))
        .replace("{TOPICS}", &crate::spec::topics().join("|"))
        .replace("{SHELLS}", &crate::spec::SHELLS.join("|"));
    for (marker, heading) in [
        ("{OPTIONS}\n", None),
        ("{FIELD OPTIONS}\n", Some(crate::spec::FIELDS)),
        ("{OUTPUT}\n", Some("OUTPUT")),
    ] {
        if text.contains(marker) {
            text = text.replace(marker, &crate::spec::options(&[topic], heading));
        }
    }
    Some(text)
}

/// The EXAMPLES of a topic's help text (`""`: `snowmint --help`), one per line as the help shows them:
/// the man pages print the same lines.
pub fn examples(topic: &str) -> Vec<String> {
    let Some(text) = text(topic) else {
        return Vec::new();
    };
    let Some((_, rest)) = text.split_once("\nEXAMPLES\n") else {
        return Vec::new();
    };
    rest.lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l[2..].to_string())
        .collect()
}

pub const MAIN: &str = "\
snowmint — mint, inspect and design unique 64-bit IDs (the Snowflake family)

A snowmint ID packs a timestamp, a node ID and a per-tick sequence number into one 64-bit
integer. IDs sort by creation time, and any number of machines mint them without talking to
each other, as long as each machine (or process) uses its own node ID.

USAGE
{USAGE}
  snowmint help [{TOPICS}]
  (the options of a command, and what it does: snowmint COMMAND --help)

EXAMPLES
  snowmint mint --node 0                      one ID: twitter layout, node 0
  snowmint mint -n 5 --node 7                 five IDs for node 7, one per line
  snowmint mint --layout discord --format base58
  snowmint inspect 1212161512043450368        time, node, sequence and every string form
  snowmint inspect 3hs6qtU4AFc                any string form is recognised (here base58)
  snowmint mint -n 2 | snowmint inspect -     inspect IDs read from standard input
  snowmint inspect 175928847299117063 --layout discord
  snowmint layout --layout sonyflake          bit diagram, capacity and when the layout runs out
  snowmint layout --timestamp-bits 40 --node-bits 8 --sequence-bits 15 --epoch-ms 1704067200000
  snowmint mint -n 3 --json | jq -r .id        JSON lines, IDs as decimal strings
  snowmint man | man -l -                      the manual

LAYOUTS (--layout NAME; 'snowmint help layouts' for the full table)
  twitter (default), discord, instagram, sonyflake, hazelcast, snowcast, js53, decimal,
  or a custom layout from field options (see 'snowmint layout --help').

ERRORS AND EXIT STATUS
  Bad input prints 'error[CODE]: message' on stderr, with the codes every snowmint library uses
  (INVALID_LAYOUT, NODE_ID_OUT_OF_RANGE, PARSE, INVALID_ID, INVALID_ARGUMENT, ...), also with --json.
  0  success
  1  failure: a value was rejected (a layout, node ID or ID) or an operation failed (a store,
     a state file, writing the output)
  2  usage error: the command line is malformed (unknown command or option, a missing value,
     not a number, an option given twice); the message points at the command's --help
";

pub const COMPLETIONS: &str = "\
snowmint completions — print a shell completion script

USAGE
  snowmint completions {SHELLS}

Generated from the same argument definitions as 'snowmint man': commands, options, preset and
encoding names complete.

EXAMPLES
  snowmint completions bash > ~/.local/share/bash-completion/completions/snowmint
  snowmint completions zsh > \"${fpath[1]}/_snowmint\"
  snowmint completions fish > ~/.config/fish/completions/snowmint.fish
";

pub const MAN: &str = "\
snowmint man — print a man page (roff)

USAGE
  snowmint man [{COMMANDS}]
  snowmint man COMMAND ACTION        (or COMMAND-ACTION: sequencer-create, lease-list, range-next …)

Without a command: snowmint(1); with one: snowmint-COMMAND(1); with an action of sequencer, lease,
opaque or range: snowmint-COMMAND-ACTION(1), the pages snowmint-COMMAND(1) names.

EXAMPLES
  snowmint man | man -l -
  snowmint man > ~/.local/share/man/man1/snowmint.1
  snowmint man mint > ~/.local/share/man/man1/snowmint-mint.1
  snowmint man sequencer create > ~/.local/share/man/man1/snowmint-sequencer-create.1
";

pub const MINT: &str = "\
snowmint mint — mint new IDs from the system clock

USAGE
{USAGE}

OPTIONS
{OPTIONS}

EXAMPLES
  snowmint mint --node 0
  snowmint mint -n 3 --node 7 --format hex
  SNOWMINT_NODE_ID=12 snowmint mint --layout sonyflake
  snowmint mint --layout snowcast --epoch-ms 1704067200000 --node-count 1024 --node 5
  snowmint mint --layout hazelcast --node-id-offset 100 --node 3
  snowmint mint -n 10 --node 3 --state-file /dev/shm/orders.snowmint
  snowmint mint -n 5 --node 'file:///var/lib/snowmint?sequencer=orders'
  snowmint mint -n 5 --node 'file:///var/lib/snowmint' --state-file /dev/shm/orders.lease
  snowmint mint -n 3 --json

NOTES
  With a fixed node ID mint never runs ahead of the clock: when a tick's sequence numbers are used
  up it waits for the next tick. Under a lease it may borrow ahead (up to 15 s; on the embedded store
  up to its max_ahead, 1 s, and a new claim there starts 1 s ahead). Either way, before exiting it
  waits out the tick of its last ID, so nothing it printed lies ahead of the clock once it has exited
  (with --state-file the file carries the state instead, and mint may exit up to 15 s ahead of the
  clock as every generator may). A file:/// store that does not exist is STORE_NOT_FOUND (exit 1):
  'snowmint sequencer create NAME --store URL' creates it. A clock before the layout's epoch, or past
  its lifespan, is an error (CLOCK_BEFORE_EPOCH, LAYOUT_EXHAUSTED), never a wrapped ID.
";

pub const INSPECT: &str = "\
snowmint inspect — take IDs apart: time, node, sequence and every string form

USAGE
{USAGE}

The ID may be written in any string form: decimal digits, hex (16 digits or 0x...), Crockford
base32 (13 characters) or base58 (11 characters). An all-digit ID of 16, 13 or 11 characters that
hex, base32 or base58 also reads is refused with both readings: --from names the form then. The
report's first line says which form was read. '-' reads IDs, separated by white space, from
standard input. The layout must be the one the ID was minted with (default twitter): the same 64
bits mean a different time under another layout.

OPTIONS
{OPTIONS}

EXAMPLES
  snowmint inspect 1212161512043450368
  snowmint inspect 10d2a6b3c0001000 0x10d2a6b3c0001000
  snowmint inspect 175928847299117063 --layout discord
  snowmint inspect 123456 --from hex
  snowmint mint -n 3 --node 7 | snowmint inspect -
  snowmint inspect 1212161512043450368 --json
";

const LAYOUT_INTRO: &str = "\
snowmint layout — design a layout: bit diagram, lifespan and capacity

USAGE
{USAGE}

A preset (default twitter), or a custom layout from field options: the fields left out keep the
preset's values (twitter's by default).

FIELD OPTIONS
{FIELD OPTIONS}

OUTPUT
{OUTPUT}

EXAMPLES
  snowmint layout
  snowmint layout --layout sonyflake
  snowmint layout --layout snowcast --epoch-ms 1704067200000 --node-count 1024
  snowmint layout --timestamp-bits 42 --node-bits 6 --sequence-bits 15 --epoch-ms 1704067200000
  snowmint layout --layout discord --epoch-ms 1704067200000

";

/// What each preset is, in one line.
const ABOUT: [(&str, &str); 8] = [
    ("twitter", "Twitter's original Snowflake (2010), the default; node = 5 datacenter + 5 worker bits"),
    ("discord", "Discord's IDs: Twitter's shape with a 2015 epoch; node = 5 worker + 5 process bits"),
    ("instagram", "Instagram's sharded IDs: 13-bit shard ID, 10-bit sequence"),
    ("sonyflake", "Sony's Sonyflake: 10 ms ticks, 16-bit machine ID (often from the private IP), 256 IDs per tick"),
    ("hazelcast", "Hazelcast Flake IDs: sequence above node; --node-id-offset shifts node IDs"),
    ("snowcast", "snowcast: your epoch (--epoch-ms) and cluster size (--node-count 128..8192)"),
    ("js53", "53-bit IDs: JavaScript Numbers and JSON carry them exactly; 16 nodes"),
    ("decimal", "Chronicle-style decimal IDs: Unix ns in 100 ns steps, last two digits = host 0..99"),
];

/// The full help of `snowmint layout`, with the preset table.
pub fn layout_help() -> String {
    let mut s = LAYOUT_INTRO.to_string();
    s.push_str(&layouts_table());
    s
}

/// Every preset, with its fields as the core defines them.
pub fn layouts_table() -> String {
    let mut s = String::from("LAYOUTS\n");
    let _ = writeln!(
        s,
        "  {:<10} {:>5} {:>5} {:>4} {:>6}  {:<14} {:<13} about",
        "name", "time", "node", "seq", "tick", "order", "epoch"
    );
    for (name, about) in ABOUT {
        let layout = match name {
            "snowcast" => Layout::snowcast(0, 1024),
            _ => Layout::preset(name),
        };
        let Ok(l) = layout else { continue };
        let order = match l.order() {
            Order::TimestampNodeSequence => "ts|node|seq",
            Order::TimestampSequenceNode => "ts|seq|node",
        };
        let (t, n, q, epoch) = match name {
            "decimal" => ("-".into(), "-".into(), "-".into(), "1970-01-01".to_string()),
            "snowcast" => (
                "41".to_string(),
                "7-13".to_string(),
                "23-n".to_string(),
                "--epoch-ms".to_string(),
            ),
            _ => (
                l.timestamp_bits().to_string(),
                l.node_bits().to_string(),
                l.sequence_bits().to_string(),
                snowmint::IsoTime::from_unix_ms(l.epoch_ms())
                    .to_buf()
                    .as_str()[..10]
                    .to_string(),
            ),
        };
        let _ = writeln!(
            s,
            "  {name:<10} {t:>5} {n:>5} {q:>4} {:>6}  {order:<14} {epoch:<13} {about}",
            tick(l.tick_ns())
        );
    }
    s
}

pub const SEQUENCER: &str = "\
snowmint sequencer — named sequencers: a name bound to a layout and node count in a store

USAGE
{USAGE}

  create    registers NAME with the layout and node count (default: every node ID of the layout);
            the same configuration again is no error, another one is SEQUENCER_CONFLICT
  show      the configuration, then every node ID with a holder or a reservation: who holds it,
            its fencing token and expiry, and the position it is reserved up to; a NAME with no
            live record is SEQUENCER_NOT_FOUND (exit status 1)
  list      every live sequencer
  destroy   removes NAME: every holder, in every process, stops within one renewal interval with
            SEQUENCER_DESTROYED. A new NAME never repeats an ID value of the old one
            (it starts above the old one's highest reserved ID, whatever its layout).

  A sequencer is one ID space. A lease source (a node source URL?sequencer=NAME) attaches to an
  existing NAME and adopts its layout and node count (another layout is SEQUENCER_CONFLICT); only
  `default` is created on first use, any other missing NAME is SEQUENCER_NOT_FOUND.

OPTIONS
{OPTIONS}

EXAMPLES
  snowmint sequencer create orders --store file:///tmp/ids --node-count 128
  snowmint mint -n 3 --node 'file:///tmp/ids?sequencer=orders'
  snowmint sequencer show orders --store file:///tmp/ids
";

pub const LEASE: &str = "\
snowmint lease — who holds which node ID: holder, fencing token, expiry and reservation

USAGE
{USAGE}

  list    every node ID held now, in every sequencer of the store
  show    every node ID of sequencer NAME with a holder or a reservation (reservations outlive their
          holders); a NAME with no live record is SEQUENCER_NOT_FOUND (exit status 1)

OPTIONS
{OPTIONS}

EXAMPLES
  snowmint lease list --store file:///tmp/ids
  snowmint lease show orders --store etcd://127.0.0.1:2379/ids --json
";

pub const RANGE: &str = "\
snowmint range — compact integer IDs (31 bits by default) from ranges leased global → datacenter → process

USAGE
{USAGE}

  next   takes values, one per line, increasing. A datacenter moves a range of values from the global
         row at a time; this process takes exactly the count asked for from its datacenter's row and,
         by default, does not pre-allocate, so it leaves no hole when it exits. RANGE_EXHAUSTED once
         every value of the width is out.
  show   the global row (global last value, the last range each datacenter took) and, given a
         datacenter and its store, that datacenter's row (last value given to a process, reserved
         and pre-allocated ranges)

  The global store is shared by every datacenter; the local store is the datacenter's own. An
  embedded store (file:///DIR) must exist: a missing one is STORE_NOT_FOUND and nothing is written
  ('snowmint sequencer create', or making the directory, creates one).

OPTIONS
{OPTIONS}

EXAMPLES
  snowmint range next orders --dc eu --store etcd://127.0.0.1:2379/ids --local-store file:///var/lib/ids -n 3
  snowmint range show orders --store etcd://127.0.0.1:2379/ids --dc eu --local-store file:///var/lib/ids
";
