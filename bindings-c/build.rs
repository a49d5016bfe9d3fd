//! Writes include/snowmint.h with cbindgen (only when its text changes, so `make` sees no new mtime).
use std::path::PathBuf;

fn main() {
    let dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=src/opaque.rs");
    println!("cargo:rerun-if-changed=src/coord_api.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    // The shared library's SONAME, libsnowmint.so.MAJOR: programs record it (not the unversioned
    // libsnowmint.so) and `make install` puts the usual symlinks beside libsnowmint.so.VERSION.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if !matches!(os.as_str(), "macos" | "ios" | "windows") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets the version");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libsnowmint.so.{major}");
    }
    let config =
        cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml is valid");
    let bindings = cbindgen::Builder::new()
        .with_crate(&dir)
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
