//! Shell completions and man pages, generated from the clap definitions (`src/spec.rs`), checked the
//! way a user meets them: bash parses and runs the script, groff renders the pages without a warning;
//! and the definitions are checked against the parser and the help texts, so they cannot drift apart.

mod common;

use std::collections::BTreeMap;
use std::process::{Command, Output};

use common::{commands, run_with};

fn run(args: &[&str]) -> Output {
    run_with(args, "")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "snowmint {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn has(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Runs `program args` with `input` on stdin; returns (success, stdout, stderr).
fn pipe(program: &str, args: &[&str], input: &[u8]) -> (bool, String, String) {
    let out = common::pipe(Command::new(program).args(args), input);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The commands with options, as the bash script names them (`snowmint__mint`), and their options.
fn bash_options() -> BTreeMap<String, Vec<String>> {
    let script = ok(&["completions", "bash"]);
    let mut map = BTreeMap::new();
    let mut case: Option<String> = None;
    for line in script.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_suffix(')') {
            if name.starts_with("snowmint") && !name.contains(' ') {
                case = Some(name.to_string());
            }
        }
        if let (Some(c), Some(rest)) = (&case, t.strip_prefix("opts=\"")) {
            let opts = rest
                .trim_end_matches('"')
                .split_whitespace()
                .filter(|o| o.starts_with('-'))
                .map(str::to_string)
                .collect();
            map.insert(c.clone(), opts);
            case = None;
        }
    }
    map
}

#[test]
fn bash_script_parses_and_completes() {
    let script = ok(&["completions", "bash"]);
    let dir = std::env::temp_dir().join(format!("snowmint-compl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("snowmint.bash");
    std::fs::write(&path, &script).unwrap();
    let st = Command::new("bash").arg("-n").arg(&path).status().unwrap();
    assert!(st.success(), "bash -n rejects the completion script");
    // Run the completion function as bash does on TAB: words so far, the word under the cursor.
    let complete = |words: &[&str]| -> Vec<String> {
        let cur = words.last().unwrap();
        let prev = if words.len() > 1 {
            words[words.len() - 2]
        } else {
            ""
        };
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let prog = format!(
            "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; \
             _snowmint snowmint '{cur}' '{prev}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path.display(),
            quoted.join(" "),
            words.len() - 1,
            words.join(" "),
        );
        let out = Command::new("bash").args(["-c", &prog]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let cmds = complete(&["snowmint", ""]);
    for c in commands() {
        assert!(cmds.contains(&c.to_string()), "{c} not completed: {cmds:?}");
    }
    assert_eq!(complete(&["snowmint", "mint", "--js"]), vec!["--json"]);
    // One word for a layout in every command (--preset, its former name in `layout`, is not offered).
    assert_eq!(complete(&["snowmint", "layout", "--lay"]), vec!["--layout"]);
    assert_eq!(complete(&["snowmint", "layout", "--pre"]), vec![""]);
    let presets = complete(&["snowmint", "mint", "--layout", ""]);
    for p in snowmint::PRESET_NAMES {
        assert!(presets.contains(&p.to_string()), "{p}: {presets:?}");
    }
    let forms = complete(&["snowmint", "inspect", "--from", "b"]);
    assert_eq!(forms, vec!["base32", "base58"]);
    assert_eq!(complete(&["snowmint", "completions", "z"]), vec!["zsh"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `snowmint completions bash | head -1`: the reader leaving early is no failure (and no panic).
#[test]
fn output_to_a_closed_pipe() {
    for args in [
        ["completions", "bash"],
        ["man", "mint"],
        ["man", "sequencer"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The read end closes before the program has started writing: every write fails (EPIPE).
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

#[test]
fn every_shell_gets_a_script() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let s = ok(&["completions", shell]);
        assert!(s.contains("snowmint") && s.contains("json"), "{shell}");
        if ["bash", "zsh", "fish"].contains(&shell) {
            assert!(
                s.contains("base58") && s.contains("sonyflake"),
                "{shell}: allowed values"
            );
        }
    }
    for (shell, flag) in [("zsh", "-n"), ("fish", "--no-execute")] {
        if has(shell) {
            let script = ok(&["completions", shell]);
            let (good, _, err) = pipe(shell, &[flag], script.as_bytes());
            assert!(good, "{shell} {flag}: {err}");
        } else {
            eprintln!("note: {shell} is not installed; its script is checked for content only");
        }
    }
    let e = run(&["completions", "tcsh"]);
    assert_eq!(e.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&e.stderr).contains("bash, zsh, fish, elvish, powershell"));
    assert_eq!(run(&["completions"]).status.code(), Some(2));
    assert!(ok(&["completions", "--help"]).contains("snowmint completions bash"));
}

/// Renders a page with groff (the formatter `man -l` uses), failing on any warning.
fn render(page: &str) -> String {
    let (good, text, err) = pipe(
        "groff",
        &["-man", "-Tutf8", "-ww", "-z", "-rLL=200n"],
        page.as_bytes(),
    );
    assert!(good && err.trim().is_empty(), "groff: {err}");
    let (good, text2, err) = pipe(
        "groff",
        &[
            "-man",
            "-Tascii",
            "-rLL=200n",
            "-rHY=0",
            "-P-c",
            "-P-b",
            "-P-u",
        ],
        page.as_bytes(),
    );
    assert!(good, "groff: {err}");
    assert!(text.is_empty());
    text2
}

#[test]
fn man_pages_render() {
    if !has("groff") {
        assert!(
            std::env::var_os("SNOWMINT_REQUIRE_MAN").is_none(),
            "groff is required (SNOWMINT_REQUIRE_MAN is set): apt-get install groff-base"
        );
        eprintln!("note: groff is not installed; man pages not rendered");
        return;
    }
    let page = render(&ok(&["man"]));
    for needle in [
        "Mint, inspect and design",
        "SYNOPSIS",
        "snowmint-mint(1)",
        "snowmint-completions(1)",
        "EXIT STATUS",
        "usage error",
        "SNOWMINT_NODE_ID",
        "EXAMPLES",
    ] {
        assert!(
            page.contains(needle),
            "{needle} missing from snowmint(1):\n{page}"
        );
    }
    for cmd in commands() {
        let page = render(&ok(&["man", &cmd]));
        assert!(page.contains(&format!("snowmint-{cmd}")), "{page}");
        assert!(page.contains("EXIT STATUS"), "{cmd}");
    }
    let mint = render(&ok(&["man", "mint"]));
    for needle in [
        "--count",
        "--json",
        "--state-file",
        "--layout",
        "base58",
        "sonyflake",
    ] {
        assert!(
            mint.contains(needle),
            "{needle} missing from snowmint-mint(1)"
        );
    }
    if has("man") {
        let dir = std::env::temp_dir().join(format!("snowmint-man-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("snowmint.1");
        std::fs::write(&path, ok(&["man"])).unwrap();
        let out = Command::new("man")
            .arg("-l")
            .arg(&path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            out.status.success(),
            "man -l: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("EXIT STATUS"));
    }
    let e = run(&["man", "nope"]);
    assert_eq!(e.status.code(), Some(2));
}

/// Every page a man page names (`snowmint-sequencer-create(1)` in snowmint-sequencer(1)'s
/// SUBCOMMANDS, every page in snowmint(1)'s SEE ALSO) is one `snowmint man` prints, under that name,
/// and groff renders; the README's loops install exactly those pages.
#[test]
fn every_page_a_man_page_names_exists() {
    let mut named = std::collections::BTreeSet::new();
    let mut read = vec![ok(&["man"])];
    for c in commands() {
        read.push(ok(&["man", &c]));
    }
    for page in &read {
        for part in page.split("snowmint\\-").skip(1) {
            if let Some((name, _)) = part.split_once("(1)") {
                if name.len() < 40 && !name.contains(' ') {
                    named.insert(name.replace("\\-", "-"));
                }
            }
        }
    }
    let actions: Vec<&String> = named.iter().filter(|n| !commands().contains(n)).collect();
    assert!(
        named.contains("lease-list") && named.contains("sequencer-create"),
        "{named:?}"
    );
    assert!(!named.iter().any(|n| n.ends_with("-help")), "{named:?}");
    let groff = has("groff");
    for name in &named {
        let page = ok(&["man", name]);
        assert!(
            page.contains(&format!(".TH snowmint-{name} 1")),
            "snowmint man {name}: {}",
            page.lines().take(4).collect::<Vec<_>>().join("\n")
        );
        if groff {
            assert!(render(&page).contains("EXIT STATUS"), "{name}");
        }
        if let Some((c, a)) = name.split_once('-') {
            if actions.contains(&name) {
                assert_eq!(ok(&["man", c, a]), page, "snowmint man {c} {a}");
            }
        }
    }
    // The README's second loop: the actions' pages, exactly.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find("for p in ")
        .expect("the README's loop of action pages");
    let words: Vec<&str> = readme[start + "for p in ".len()..]
        .split("; do")
        .next()
        .unwrap()
        .split_whitespace()
        .filter(|w| *w != "\\")
        .collect();
    let want: Vec<&str> = actions.iter().map(|s| s.as_str()).collect();
    let mut got = words.clone();
    got.sort();
    assert_eq!(got, want, "the README's loop of action pages");
}

/// Every option the definitions give a command is one its parser knows, and every option its help
/// text shows is in the definitions: completions and man pages describe the real command line.
#[test]
fn definitions_match_the_parser_and_the_help() {
    let opts = bash_options();
    let commands: [(&str, &[&str]); 14] = [
        ("snowmint__subcmd__mint", &["mint"]),
        ("snowmint__subcmd__serve", &["serve"]),
        (
            "snowmint__subcmd__inspect",
            &["inspect", "1212161512043450368"],
        ),
        ("snowmint__subcmd__layout", &["layout"]),
        (
            "snowmint__subcmd__sequencer__subcmd__create",
            &["sequencer", "create", "x"],
        ),
        (
            "snowmint__subcmd__sequencer__subcmd__show",
            &["sequencer", "show", "x"],
        ),
        (
            "snowmint__subcmd__sequencer__subcmd__list",
            &["sequencer", "list"],
        ),
        (
            "snowmint__subcmd__sequencer__subcmd__destroy",
            &["sequencer", "destroy", "x"],
        ),
        (
            "snowmint__subcmd__opaque__subcmd__encode",
            &["opaque", "encode", "1"],
        ),
        (
            "snowmint__subcmd__opaque__subcmd__decode",
            &["opaque", "decode", "1"],
        ),
        ("snowmint__subcmd__lease__subcmd__list", &["lease", "list"]),
        (
            "snowmint__subcmd__lease__subcmd__show",
            &["lease", "show", "x"],
        ),
        (
            "snowmint__subcmd__range__subcmd__next",
            &["range", "next", "x"],
        ),
        (
            "snowmint__subcmd__range__subcmd__show",
            &["range", "show", "x"],
        ),
    ];
    for (case, argv) in commands {
        let defined = opts
            .get(case)
            .unwrap_or_else(|| panic!("{case} not in the bash script: {:?}", opts.keys()));
        assert!(defined.len() >= 2, "{case}: {defined:?}");
        for o in defined {
            if o == "-h" || o == "--help" {
                continue;
            }
            // Without a value: the parser either takes the option or says it needs a value;
            // it never calls it unknown.
            let mut a: Vec<&str> = argv.to_vec();
            a.push(o);
            if o == "--json" || o == "--use-sign-bit" {
                a.push("--help"); // print the help rather than mint or touch a store
            }
            let out = run(&a);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !err.contains("unknown option"),
                "{case}: {o} is defined for completion but the parser rejects it: {err}"
            );
        }
        // Every option in the command's help text is defined.
        let help = ok(&[argv[0], "--help"]);
        // Its synopsis and options, not its examples (which may show other commands' options).
        let help = help.split("\nEXAMPLES").next().unwrap();
        for word in help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
            let is_option =
                word.starts_with("--") && word.len() > 2 && word.as_bytes()[2].is_ascii_lowercase();
            if is_option && !defined.iter().any(|d| d == word) {
                // A help text may show a sibling's option (sequencer's shows --nodes for create).
                let shared_help = matches!(argv[0], "sequencer" | "opaque" | "lease" | "range");
                let anywhere = opts.values().flatten().any(|d| d == word);
                assert!(
                    shared_help && anywhere,
                    "{case}: its help shows {word}, which the definitions lack"
                );
            }
        }
    }
}

/// One list of commands, the definitions' (`src/spec.rs`): every command is dispatched and has a
/// help text (`snowmint COMMAND --help` = `snowmint help COMMAND`), a line in `snowmint --help`, a man
/// page that snowmint(1) names, a row in the CLI README's table and a page in its man-page loop; and
/// nothing else is in those lists.
#[test]
fn every_command_is_dispatched_documented_and_in_the_readme() {
    let commands = commands();
    let main_help = ok(&["--help"]);
    let root_page = ok(&["man"]);
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `snowmint "))
        .map(|l| l.split([' ', '`']).next().unwrap())
        .collect();
    let man_loop: Vec<&str> = readme
        .lines()
        .find_map(|l| l.strip_prefix("for c in "))
        .and_then(|l| l.strip_suffix("; do"))
        .expect("the README's man-page loop")
        .split_whitespace()
        .collect();
    assert_eq!(table, commands, "the README's table of commands");
    assert_eq!(man_loop, commands, "the README's man-page loop");
    for c in &commands {
        let help = ok(&[c, "--help"]);
        assert!(help.starts_with(&format!("snowmint {c} ")), "{c}: {help}");
        assert_eq!(ok(&["help", c]), help, "snowmint help {c}");
        assert!(
            main_help.contains(&format!("\n  snowmint {c} ")),
            "{c} in snowmint --help"
        );
        assert!(
            root_page.contains(&format!("snowmint\\-{c}(1)")),
            "{c} in snowmint(1)"
        );
        assert!(
            ok(&["man", c]).contains(&format!("snowmint\\-{c}")),
            "snowmint man {c}"
        );
    }
    // `snowmint man --help` and `snowmint --help` list them in their synopses.
    let pages = format!("snowmint man [{}]", commands.join("|"));
    assert!(ok(&["man", "--help"]).contains(&pages), "{pages}");
    let mut topics = commands.clone();
    topics.insert(3, "layouts".into());
    let topics = format!("snowmint help [{}]", topics.join("|"));
    assert!(main_help.contains(&topics), "{topics}");
    // The unknown-command message lists them too.
    let out = run(&["no-such-command"]);
    let listed = format!("commands: {}, help", commands.join(", "));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&listed),
        "{listed}"
    );
}

/// The examples a command's `--help` shows are its man page's EXAMPLES, line for line (and
/// `snowmint --help`'s are snowmint(1)'s): one text, two renderings.
#[test]
fn man_pages_hold_the_examples_of_the_help() {
    let examples = |help: &str| -> Vec<String> {
        let Some((_, rest)) = help.split_once("\nEXAMPLES\n") else {
            return Vec::new();
        };
        rest.lines()
            .take_while(|l| l.starts_with("  "))
            .map(|l| l[2..].to_string())
            .collect()
    };
    let man_examples = |page: &str| -> Vec<String> {
        let Some((_, rest)) = page.split_once(".SH EXAMPLES\n.nf\n") else {
            return Vec::new();
        };
        rest.lines()
            .take_while(|l| *l != ".fi")
            .map(|l| {
                l.strip_prefix("\\&")
                    .unwrap_or(l)
                    .replace("\\-", "-")
                    .replace("\\e", "\\")
            })
            .collect()
    };
    let mut topics = vec![String::new()];
    topics.extend(commands());
    for c in &topics {
        let (help, page) = if c.is_empty() {
            (ok(&["--help"]), ok(&["man"]))
        } else {
            (ok(&[c, "--help"]), ok(&["man", c]))
        };
        let want = examples(&help);
        assert!(!want.is_empty(), "snowmint {c} --help has no EXAMPLES");
        assert_eq!(man_examples(&page), want, "snowmint man {c}");
    }
    // An action's page: the examples of its command that run it.
    let create = man_examples(&ok(&["man", "sequencer", "create"]));
    assert!(
        !create.is_empty()
            && create
                .iter()
                .all(|l| l.contains("snowmint sequencer create")),
        "{create:?}"
    );
}

/// The OPTIONS a command's `--help` shows are its definitions' long help: its man page describes
/// each option in the same words.
#[test]
fn help_options_are_the_man_pages_options() {
    for (c, heading) in [
        ("mint", "OPTIONS"),
        ("inspect", "OPTIONS"),
        ("opaque", "OPTIONS"),
        ("serve", "OPTIONS"),
        ("layout", "FIELD OPTIONS"),
    ] {
        let help = ok(&[c, "--help"]);
        let options = help
            .split(&format!("\n{heading}\n"))
            .nth(1)
            .and_then(|s| s.split("\n\n").next())
            .unwrap_or_else(|| panic!("{c} --help has no {heading}"));
        let page = ok(&["man", c, if c == "opaque" { "encode" } else { "" }]
            .into_iter()
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>())
        .replace("\\-", "-")
        .replace("\\*(Aq", "'");
        let mut seen = 0;
        for line in options.lines() {
            let Some(row) = line.strip_prefix("  -") else {
                continue;
            };
            if row.starts_with(' ') {
                continue; // `-` (standard input): not an option
            }
            let Some((_, text)) = row.split_once("  ") else {
                continue;
            };
            let text = text.trim();
            assert!(page.contains(text), "snowmint man {c} lacks {text:?}");
            seen += 1;
        }
        assert!(seen >= 3, "{c}: {options}");
    }
}
