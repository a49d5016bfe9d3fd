//! `snowmint-wasm-bindgen --target TARGET --out-dir DIR --out-name NAME INPUT.wasm`: the JavaScript glue
//! and TypeScript declarations of a module built with `wasm-bindgen`, written as the `wasm-bindgen`
//! command of `wasm-bindgen-cli` writes them with the same arguments and its defaults (the same calls
//! on the same library, `wasm-bindgen-cli-support`, in the same order). TARGET: `bundler`, `web`,
//! `nodejs` or `no-modules`. `--version` prints the library's version.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use wasm_bindgen_cli_support::Bindgen;

/// The version of `wasm-bindgen-cli-support` this tool is built against (its Cargo.toml pins it).
const VERSION: &str = "0.2.130";

struct Args {
    target: String,
    out_dir: PathBuf,
    out_name: Option<String>,
    input: PathBuf,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Option<Args>> {
    let (mut target, mut out_dir, mut out_name, mut input) =
        (String::from("bundler"), None, None, None);
    while let Some(arg) = argv.next() {
        let mut value = |name: &str| argv.next().with_context(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--version" | "-V" => return Ok(None),
            "--target" => target = value("--target")?,
            "--out-dir" => out_dir = Some(PathBuf::from(value("--out-dir")?)),
            "--out-name" => out_name = Some(value("--out-name")?),
            a if a.starts_with('-') => bail!("unknown option {a:?} (this tool takes --target, --out-dir, --out-name and the input)"),
            a if input.is_none() => input = Some(PathBuf::from(a)),
            a => bail!("a second input {a:?}: one module at a time"),
        }
    }
    Ok(Some(Args {
        target,
        out_dir: out_dir.context("--out-dir is required")?,
        out_name,
        input: input.context("the input module (a .wasm file) is required")?,
    }))
}

fn run(args: &Args) -> Result<()> {
    let mut b = Bindgen::new();
    match args.target.as_str() {
        "bundler" => b.bundler(true)?,
        "web" => b.web(true)?,
        "nodejs" => b.nodejs(true)?,
        "no-modules" => b.no_modules(true)?,
        t => bail!("unknown target {t:?}: bundler, web, nodejs or no-modules"),
    };
    // wasm-bindgen-cli's defaults, set in its order.
    #[allow(deprecated)]
    b.input_path(&args.input)
        .nodejs(false)?
        .web(false)?
        .browser(false)?
        .no_modules(false)?
        .debug(false)
        .demangle(true)
        .keep_lld_exports(false)
        .keep_debug(false)
        .split_debug_info(false)
        .remove_name_section(false)
        .remove_producers_section(false)
        .typescript(true)
        .omit_imports(false)
        .omit_default_module_path(false)
        .split_linked_modules(false)
        .js_string_builtins(false)
        .ts_typed_array_buffers(false)
        .reference_types(false)
        .reset_state_function(false)
        .force_enable_abort_handler(false);
    if let Some(name) = &args.out_name {
        b.out_name(name);
    }
    b.generate(&args.out_dir)
}

fn main() -> ExitCode {
    match parse(std::env::args().skip(1)) {
        Ok(None) => {
            println!("snowmint-wasm-bindgen {VERSION}");
            ExitCode::SUCCESS
        }
        Ok(Some(args)) => match run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("snowmint-wasm-bindgen: {e:#}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("snowmint-wasm-bindgen: {e:#}");
            ExitCode::from(2)
        }
    }
}
