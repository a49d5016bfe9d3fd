//! Writes the result enum (`$OUT_DIR/result.rs`, from the core's table of error codes: their numbers,
//! names and documentation are written once, in `core/src/error.rs`), then include/snowmint.h with
//! cbindgen (only when its text changes, so `make` sees no new mtime).
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use snowmint_core::ErrorCode;

/// `snowmint_result`: `Ok` and one variant per core error code, with the core's documentation, and
/// `from_code`.
fn result_enum(out: &Path) -> PathBuf {
    let mut variants = String::new();
    let mut arms = String::new();
    for code in ErrorCode::ALL {
        let name = format!("{code:?}");
        for line in code.doc().lines() {
            writeln!(variants, "    ///{line}").unwrap();
        }
        writeln!(variants, "    {name} = {},", code.as_u32()).unwrap();
        writeln!(
            arms,
            "            ErrorCode::{name} => snowmint_result::{name},"
        )
        .unwrap();
    }
    let text = format!(
        "/// The result of every fallible call: `SNOWMINT_RESULT_OK` (0) or an error code. The numbers are the
/// core's `ErrorCode` numbers, the same codes every language reports; they are never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum snowmint_result {{
    /// Success.
    Ok = 0,
{variants}}}

impl snowmint_result {{
    /// The result for a core error code.
    pub(crate) fn from_code(code: ErrorCode) -> snowmint_result {{
        match code {{
{arms}            // Not reached: every code is listed above (the core's enum is non-exhaustive).
            _ => snowmint_result::Panic,
        }}
    }}
}}
"
    );
    let path = out.join("result.rs");
    std::fs::write(&path, text).expect("write result.rs");
    path
}

fn main() {
    let dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=src/errors.rs");
    println!("cargo:rerun-if-changed=src/opaque.rs");
    println!("cargo:rerun-if-changed=src/coord_api.rs");
    println!("cargo:rerun-if-changed=src/range_api.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    // The shared library's SONAME, libsnowmint.so.MAJOR: programs record it (not the unversioned
    // libsnowmint.so) and `make install` puts the usual symlinks beside libsnowmint.so.VERSION.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if !matches!(os.as_str(), "macos" | "ios" | "windows") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets the version");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libsnowmint.so.{major}");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let result = result_enum(&out);
    let config =
        cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml is valid");
    let bindings = cbindgen::Builder::new()
        .with_crate(&dir)
        .with_src(&result)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut text = Vec::new();
    bindings.write(&mut text);
    let path = dir.join("include").join("snowmint.h");
    if std::fs::read(&path).ok().as_deref() != Some(&text[..]) {
        std::fs::create_dir_all(path.parent().unwrap()).expect("create include/");
        std::fs::write(&path, &text).expect("write include/snowmint.h");
    }
}
