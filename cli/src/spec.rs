//! The command line described as clap argument definitions: every command, option, value name and
//! allowed value. It is the one list of commands: shell completions (`snowmint completions SHELL`,
//! clap_complete), the man pages (`snowmint man [COMMAND]`, clap_mangen, and the SEE ALSO list of
//! snowmint(1)), the topics of `snowmint help`, and the "did you mean" of an unknown command, action
//! or option ([`suggestion`]) all come from it.
//!
//! clap parses with them too ([`parse`]): each command's code reads the parsed items (`args.rs`) and
//! interprets their values, so that a value the core rejects keeps the core's code and exit status 1
//! (ARCHITECTURE.md, "The command line"). The hand-written help texts are tied to the definitions by
//! tests, on commands and on options: every command defined here is dispatched, has a help text, a
//! man page and a row in the README's table and man-page loop; every option defined here is read by
//! its command, and every option a command's help text shows is defined here
//! (`tests/completions.rs`).

use std::io::Write;

use clap::{Arg, ArgAction, Command, ValueHint};
use clap_complete::Shell;
use snowmint::PRESET_NAMES;

use crate::args::Item;
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
/// The commands: every subcommand of [`command`] that is not hidden, in order. Each has a help text
/// and a man page of its own.
pub fn commands() -> Vec<String> {
    command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect()
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

fn opt(name: &'static str, value: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value)
        .num_args(1)
        // `--node -1` is a (wrong) value, which the command names, not an unknown option `-1`.
        .allow_negative_numbers(true)
        .help(help)
}

fn flag(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .action(ArgAction::SetTrue)
        .help(help)
}

/// `--json` of a command that prints one JSON object per line.
fn json_lines() -> Arg {
    flag(
        "json",
        "print one JSON object per line (IDs and values as decimal strings; field names in --help)",
    )
}

fn json() -> Arg {
    flag(
        "json",
        "print JSON (IDs as decimal strings; field names in the README)",
    )
}

/// The layout options every command shares (`layout_args.rs`).
fn layout_args(cmd: Command) -> Command {
    let layout = opt(
        "layout",
        "L",
        "the layout: a preset, then field options for a custom one",
    )
    .short('l')
    .value_parser(Named(&PRESET_NAMES));
    // One word for a layout: --layout (with -l); --preset is its former name in `snowmint layout`.
    cmd.arg(layout.alias("preset"))
        .arg(opt(
            "epoch-ms",
            "MS",
            "epoch, Unix milliseconds (snowcast's parameter, or a field)",
        ))
        .arg(opt("node-count", "N", "snowcast's node count, 128..=8192"))
        .arg(opt(
            "node-id-offset",
            "N",
            "added to every node ID before packing (hazelcast's parameter)",
        ))
        .arg(opt("timestamp-bits", "B", "bits of the timestamp (1..=64)"))
        .arg(opt("node-bits", "B", "bits of the node ID (0..=63)"))
        .arg(opt(
            "sequence-bits",
            "B",
            "bits of the per-tick sequence (0..=63)",
        ))
        .arg(opt(
            "node-split-bits",
            "B",
            "high bits of the node field shown as a separate part",
        ))
        .arg(opt("order", "ORDER", "field order below the timestamp").value_parser(Named(&ORDERS)))
        .arg(opt("tick-ns", "NS", "tick length in nanoseconds"))
        .arg(flag("use-sign-bit", "allow all 64 bits"))
}

/// The whole command line.
pub fn command() -> Command {
    let mint = Command::new("mint")
        .about("Mint new IDs from the system clock")
        .arg(opt("count", "N", "how many IDs (default 1)").short('n'))
        .arg(opt(
            "node",
            "SOURCE",
            "node ID: a number, env[:NAME], k8s[:OFFSET], ip, or a lease URL (default $SNOWMINT_NODE_ID, else 0 with a warning)",
        ))
        .arg(
            opt("format", "F", "string form of the IDs (default dec)")
                .short('f')
                .value_parser(Named(&ENCODINGS)),
        )
        .arg(
            opt("state-file", "PATH", "mint from the state shared through this file")
                .value_hint(ValueHint::FilePath),
        )
        .arg(flag(
            "stats",
            "print the generator's counters as one JSON line on stderr",
        ))
        .arg(json());
    let inspect = Command::new("inspect")
        .about("Take IDs apart: time, node, sequence and every string form")
        .arg(
            Arg::new("ids")
                .value_name("ID")
                .num_args(1..)
                .required(true)
                .help("IDs in any string form; - reads them from standard input"),
        )
        .arg(
            opt("from", "ENC", "the string form of the IDs (default any)")
                .value_parser(Named(&ENCODINGS_ANY)),
        )
        .arg(json());
    let layout = Command::new("layout")
        .about("Design a layout: bit diagram, lifespan and capacity")
        .arg(json());
    let store = || {
        opt("store", "URL", "file:///DIR, etcd://HOST:PORT/PREFIX or postgres://USER@HOST/DB (default $SNOWMINT_STORE)")
            .value_hint(ValueHint::Url)
    };
    let name = || {
        Arg::new("name")
            .value_name("NAME")
            .required(true)
            .help("the sequencer's name")
    };
    let sequencer = Command::new("sequencer")
        .disable_help_subcommand(true)
        .about("Named sequencers: a name bound to a layout and node count in a store")
        .subcommand_required(true)
        .subcommand(
            layout_args(
                Command::new("create")
                    .about("Register NAME with a layout and node count")
                    .arg(name())
                    .arg(store())
                    .arg(json()),
            )
            // One word for a node count: the sequencer's (snowcast's parameter too, with its layout).
            .mut_arg("node-count", |a| {
                a.alias("nodes").help(
                    "node count (default: every node ID of the layout; with --layout snowcast, its parameter too)",
                )
            }),
        )
        .subcommand(
            Command::new("show")
                .about("The configuration and every node ID's holder and reservation (SEQUENCER_NOT_FOUND, exit 1, for a NAME with no live record)")
                .arg(name())
                .arg(store())
                .arg(json()),
        )
        .subcommand(
            Command::new("list")
                .about("Every live sequencer")
                .arg(store())
                .arg(json_lines()),
        )
        .subcommand(
            Command::new("destroy")
                .about("Remove NAME; every holder stops with SEQUENCER_DESTROYED")
                .arg(name())
                .arg(store())
                .arg(json()),
        );
    let lease = Command::new("lease")
        .disable_help_subcommand(true)
        .about("Who holds which node ID: holder, fencing token, expiry and reservation")
        .subcommand_required(true)
        .subcommand(
            Command::new("list")
                .about("Every node ID held now, in every sequencer of the store")
                .arg(store())
                .arg(json_lines()),
        )
        .subcommand(
            Command::new("show")
                .about("Every node ID of sequencer NAME with a holder or a reservation")
                .arg(name())
                .arg(store())
                .arg(json_lines()),
        );
    let opaque_cmd = |name: &'static str, about: &'static str, what: &'static str| {
        layout_args(
            Command::new(name)
                .about(about)
                .arg(
                    Arg::new("values")
                        .value_name(what)
                        .num_args(1..)
                        .required(true)
                        .help("values in any string form; - reads them from standard input"),
                )
                .arg(
                    opt(
                        "key-file",
                        "F",
                        "the 16-byte key: 16 raw bytes or 32 hex digits",
                    )
                    .value_hint(ValueHint::FilePath),
                )
                .arg(
                    opt("format", "F", "how to print what comes out (default dec)")
                        .short('f')
                        .value_parser(Named(&ENCODINGS)),
                )
                .arg(
                    opt("from", "F", "how to read what goes in (default any)")
                        .value_parser(Named(&ENCODINGS_ANY)),
                )
                .arg(json_lines()),
        )
    };
    let opaque = Command::new("opaque")
        .disable_help_subcommand(true)
        .about("Turn IDs into opaque tokens and back, with a secret key")
        .subcommand_required(true)
        .subcommand(opaque_cmd("encode", "IDs to tokens", "ID"))
        .subcommand(opaque_cmd("decode", "Tokens to IDs", "TOKEN"));
    let range_name = || {
        Arg::new("name")
            .value_name("NAME")
            .required(true)
            .help("the range sequence's name")
    };
    // The stores of a range sequence: --store (the global one, as every command's store) and
    // --local-store; --global and --local are their former names.
    let range_store = |name: &'static str, alias: &'static str, help: &'static str| {
        opt(name, "URL", help)
            .alias(alias)
            .value_hint(ValueHint::Url)
    };
    let global_store = || {
        range_store(
            "store",
            "global",
            "the global store every datacenter shares (default $SNOWMINT_STORE)",
        )
    };
    let range = Command::new("range")
        .disable_help_subcommand(true)
        .about("Compact integer IDs (31 bits by default) from ranges leased from a global row to datacenters to processes")
        .subcommand_required(true)
        .subcommand(
            Command::new("next")
                .about("Take N values, one per line, increasing")
                .arg(range_name())
                .arg(opt("dc", "DC", "this process's datacenter"))
                .arg(global_store())
                .arg(range_store("local-store", "local", "the datacenter's own store (default: the global one)"))
                .arg(opt("count", "N", "how many values (default 1)").short('n'))
                .arg(opt("bits", "B", "value width, 1..=63 (default 31)"))
                .arg(opt("start", "S", "the first value (default 1)"))
                .arg(opt("dc-range", "N", "values a datacenter takes from the global row at a time"))
                .arg(opt("process-range", "N", "values this process takes from its datacenter's row"))
                .arg(opt("threshold", "PERCENT", "use of a range at which the next is fetched (default 100: none)"))
                .arg(opt("wait", "DURATION", "how long to wait for a range (500ms, 2s, 1m; default 0: do not wait)"))
                // Its former spelling, in milliseconds without a unit (kept for scripts).
                .arg(opt("wait-ms", "MS", "--wait in milliseconds (the former spelling)").hide(true))
                .arg(json_lines()),
        )
        .subcommand(
            Command::new("show")
                .about("The global row and, with --dc and --local-store, that datacenter's row")
                .arg(range_name())
                .arg(global_store())
                .arg(opt("dc", "DC", "a datacenter whose row to show"))
                .arg(range_store("local-store", "local", "that datacenter's store (default: the global one)"))
                .arg(json()),
        );
    let duration = |name: &'static str, help: &'static str| opt(name, "DURATION", help);
    let serve = Command::new("serve")
        .about("The ID service: batches of IDs over HTTP, node-ID leases for clients that mint locally")
        .arg(opt("listen", "HOST:PORT", "address to listen on (port 0: any free port)"))
        .arg(opt(
            "node",
            "SOURCE",
            "the service's node ID: a number, env[:NAME], k8s[:OFFSET], ip, or a lease URL",
        ))
        .arg(duration("validity", "how long a batch may be used (default 600s)"))
        .arg(opt("max-count", "N", "the largest count of one batch (default 10000)"))
        .arg(
            opt("store", "URL", "the store of client leases with a fixed --node (its node ID is claimed there)")
                .alias("leases")
                .value_hint(ValueHint::Url),
        )
        .arg(opt(
            "client-sequencer",
            "NAME",
            "the sequencer of client leases and of the instances' node IDs",
        ))
        .arg(duration("lease-ttl", "a client lease's claim time-to-live (default 70s)"))
        .arg(duration(
            "lease-reservation",
            "how far past the clock a client lease's reservation reaches (default 60s)",
        ))
        .arg(
            opt(
                "cors-origin",
                "ORIGIN",
                "a web origin whose pages may call the service (CORS); repeatable; * for any",
            )
            .action(ArgAction::Append),
        )
        .arg(
            opt("allowed-host", "NAME", "a host name requests may name in Host; repeatable")
                .action(ArgAction::Append),
        )
        .arg(
            opt("auth-token-file", "PATH", "bearer tokens required on /v1/ids and /v1/leases")
                .value_hint(ValueHint::FilePath),
        )
        .arg(opt("tls-cert", "PATH", "serve HTTPS with this PEM certificate chain").value_hint(ValueHint::FilePath))
        .arg(opt("tls-key", "PATH", "the PEM private key of --tls-cert").value_hint(ValueHint::FilePath))
        .arg(opt("max-leases-per-client", "N", "client leases one client may hold at once (default 8)"))
        .arg(opt(
            "max-leases-per-network",
            "N",
            "client leases one network (IPv4 /24, IPv6 /64) may hold without a token (default 16)",
        ))
        .arg(opt(
            "max-unauthenticated-leases",
            "N",
            "client leases every client without a token may hold together (default a quarter of the node IDs)",
        ))
        .arg(opt("max-connections", "N", "connections served at once (default 256)"))
        .arg(opt(
            "max-connections-per-source",
            "N",
            "connections one address (IPv6: /64) may hold at once (default a quarter of --max-connections)",
        ));
    let completions = Command::new("completions")
        .about("Print a shell completion script (bash, zsh, fish, elvish, powershell)")
        .arg(
            Arg::new("shell")
                .value_name("SHELL")
                .required(true)
                .value_parser(SHELLS),
        );
    let man = Command::new("man")
        .about("Print the man page (roff) of snowmint, of one command or of one action (sequencer create)")
        .arg(Arg::new("command").value_name("COMMAND"))
        .arg(Arg::new("action").value_name("ACTION"));
    let help = Command::new("help")
        .about("Help on a command, or on the layouts")
        .hide(true)
        .arg(Arg::new("topic").value_name("TOPIC"));
    let root = Command::new("snowmint")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Mint, inspect and design unique, time-ordered 64-bit IDs (the Snowflake family)")
        .long_about(
            "A snowmint ID packs a timestamp, a node ID and a per-tick sequence number into one 64-bit \
             integer. IDs sort by creation time, and any number of machines mint them without talking \
             to each other, as long as each machine (or process) uses its own node ID.",
        )
        .disable_help_subcommand(true)
        .subcommand_required(false)
        .subcommand(layout_args(mint))
        .subcommand(layout_args(inspect))
        .subcommand(layout_args(layout))
        .subcommand(sequencer)
        .subcommand(lease)
        .subcommand(opaque)
        .subcommand(range)
        .subcommand(layout_args(serve))
        .subcommand(completions)
        .subcommand(man);
    // The topics of `snowmint help` and the pages of `snowmint man`: every command (and the table of
    // layouts), from the definitions above.
    let mut topics: Vec<String> = root
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let pages = topics.clone();
    topics.insert(3, "layouts".into());
    // An action's page is also named as one word (`snowmint man sequencer-create`, its file's name).
    let mut pages_named = pages.clone();
    pages_named.extend(action_pages(&root));
    let actions: Vec<String> = root
        .get_subcommands()
        .flat_map(|c| c.get_subcommands().map(|a| a.get_name().to_string()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    root.mut_subcommand("man", |man| {
        man.mut_arg("command", |a| a.value_parser(pages_named))
            .mut_arg("action", |a| a.value_parser(actions))
    })
    .subcommand(help.mut_arg("topic", |a| a.value_parser(topics)))
}

/// `snowmint completions SHELL`.
pub fn completions(args: &[String], out: &mut impl Write) -> Result<(), Failure> {
    let [name] = args else {
        return Err(CliError::usage(
            format!("give one shell: snowmint completions {}", SHELLS.join("|")),
            "completions",
        )
        .into());
    };
    let shell: Shell = match name.as_str() {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        "elvish" => Shell::Elvish,
        "powershell" => Shell::PowerShell,
        _ => {
            return Err(CliError::usage(
                format!("unknown shell {name:?}: use one of {}", SHELLS.join(", ")),
                "completions",
            )
            .into())
        }
    };
    // Into memory first: clap_complete panics on a failed write (`… | head`), ours is handled.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "snowmint", &mut script);
    out.write_all(&script)?;
    Ok(())
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
    pages.extend(action_pages(&command()));
    pages
}

/// `snowmint man [COMMAND [ACTION]]` (or `COMMAND-ACTION`): the page of snowmint, of
/// `snowmint-COMMAND` or of `snowmint-COMMAND-ACTION`.
pub fn man(args: &[String], out: &mut impl Write) -> Result<(), Failure> {
    let root = command();
    let names = man_pages();
    let page = match args {
        [] => None,
        [name] => Some(name.clone()),
        [name, action] => Some(format!("{name}-{action}")),
        _ => return Err(CliError::usage("give at most a command and an action", "man").into()),
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
    let root_page = args.is_empty();
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
/// names, string forms, orders): the command's code checks the value, so that a wrong one is the
/// core's error with its code, nearest name and exit status 1, as in every snowmint library.
#[derive(Clone, Copy, Debug)]
struct Named(&'static [&'static str]);

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

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|v| clap::builder::PossibleValue::new(*v)),
        ))
    }
}

/// The definitions as the parser uses them: every command reads `-h`/`--help` itself (to print its
/// teaching help text) and says itself what is missing (`give an ID to inspect, e.g. …`), so nothing
/// is required here; a command whose positionals are all single takes any further ones too, for its
/// own "unexpected argument" message.
fn for_parsing(cmd: Command) -> Command {
    let single = cmd
        .get_positionals()
        .all(|a| a.get_num_args().is_some_and(|n| n.max_values() <= 1));
    let mut cmd = cmd
        .disable_help_flag(true)
        .disable_version_flag(true)
        .subcommand_required(false)
        .mut_args(|a| a.required(false))
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::SetTrue),
        )
        .mut_subcommands(for_parsing);
    if single && cmd.get_subcommands().next().is_none() {
        cmd = cmd.arg(Arg::new("extra").num_args(0..).hide(true));
    }
    cmd
}

/// Parses `snowmint COMMAND ARGS…` with the definitions: the items of the command (and of its action,
/// given as the first positional item), in command-line order, each option under its long name.
pub fn parse(command: &str, args: Vec<String>) -> Result<Vec<Item>, CliError> {
    let root = command_for(command);
    let argv = std::iter::once(command.to_string()).chain(args.iter().cloned());
    let matches = root
        .clone()
        .try_get_matches_from(argv)
        .map_err(|e| clap_error(command, &args, &e))?;
    let mut items: Vec<(usize, Item)> = Vec::new();
    let (mut cmd, mut m) = (&root, &matches);
    loop {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
                continue;
            }
            let indices: Vec<usize> = m.indices_of(id).map(Iterator::collect).unwrap_or_default();
            let name = match (arg.get_long(), arg.get_short()) {
                (Some(long), _) => format!("--{long}"),
                (None, Some(short)) => format!("-{short}"),
                (None, None) => String::new(),
            };
            if matches!(arg.get_action(), ArgAction::SetTrue) {
                items.extend(indices.into_iter().map(|i| {
                    let name = name.clone();
                    (i, Item::Flag { name, inline: None })
                }));
                continue;
            }
            let values = m.get_raw(id).into_iter().flatten();
            for (i, v) in indices.into_iter().zip(values) {
                let v = v.to_string_lossy().into_owned();
                items.push((
                    i,
                    if arg.is_positional() {
                        Item::Positional(v)
                    } else {
                        Item::Flag {
                            name: name.clone(),
                            inline: Some(v),
                        }
                    },
                ));
            }
        }
        match m.subcommand() {
            Some((action, sub)) => {
                // The action comes before its own items (their indices are after it).
                items.push((0, Item::Positional(action.to_string())));
                cmd = cmd
                    .find_subcommand(action)
                    .expect("clap matched a defined subcommand");
                m = sub;
            }
            None => break,
        }
    }
    items.sort_by_key(|(i, _)| *i);
    Ok(items.into_iter().map(|(_, item)| item).collect())
}

/// The definition of `command`, as the parser uses it, under a root of that name.
fn command_for(name: &str) -> Command {
    let sub = command()
        .find_subcommand(name)
        .cloned()
        .unwrap_or_else(|| Command::new(name.to_string()));
    for_parsing(sub)
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

/// What clap refused, as the CLI says it: `error[INVALID_ARGUMENT]: …` naming the option, exit status 2.
fn clap_error(command: &str, args: &[String], e: &clap::Error) -> CliError {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    // "--count <N>": the option as written in the definitions.
    let arg = context(ContextKind::InvalidArg);
    let option = arg.split([' ', '=']).next().unwrap_or("").to_string();
    let message = match e.kind() {
        ErrorKind::UnknownArgument if arg.starts_with('-') => {
            return unknown_option(command, &arg);
        }
        ErrorKind::UnknownArgument => format!("unexpected argument {arg:?}"),
        ErrorKind::InvalidSubcommand => {
            return unknown_action(command, &context(ContextKind::InvalidSubcommand));
        }
        ErrorKind::ArgumentConflict => {
            // Which spelling was given twice, as written (an alias counts as the option).
            let written = args
                .iter()
                .map(|a| a.split('=').next().unwrap_or(a))
                .filter(|a| a.starts_with('-'))
                .find(|a| {
                    args.iter()
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
        _ => {
            let text = e.render().to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            first.to_string()
        }
    };
    CliError::usage(message, command)
}
