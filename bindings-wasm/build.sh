#!/usr/bin/env bash
# Installs what a fresh machine lacks for the WASM binding, then builds the npm package `snowmint-wasm`
# (dist/{nodejs,web,bundler,no-modules}) and the offline page's copy of the module (www/pkg/).
# Idempotent; fast when up to date.
#   build.sh [--browser] [--peers] [--tools-only]
# The build needs only its bindings generator (bindgen/, built here) and wasm-opt (npm binaryen);
# --browser also installs what the
# browser tests drive (Debian's Chromium, playwright-core: test.sh), --peers the benchmark's peers
# (nodejs-snowflake, @sapphire/snowflake: bench.sh). `make demo` runs the package in Node: neither;
# it runs this script beside its other builds, so that compiling the bindings generator on a fresh
# machine and the WASM build overlap them. `--tools-only` installs the tools and builds nothing.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WORK="$ROOT/target/wasm-work"            # scratch: npm tools, browser profiles, screenshots
TOOLS="$WORK/tools"
# shellcheck source=../scripts/lib.sh
source "$ROOT/scripts/lib.sh"
log() { printf '[build-wasm] %s\n' "$*" >&2; }

# --- Rust target ---------------------------------------------------------------------------------
need_cargo
rust_targets wasm32-unknown-unknown >&2

# --- Node tools (wasm-opt from npm binaryen; with --browser playwright-core, with --peers the
# benchmark's peers), each installed when missing ------------------------------------------------
need_node >&2
mkdir -p "$TOOLS"
npm_tools=(binaryen)
tools_only=0
for arg in "$@"; do
  case "$arg" in
    --browser) npm_tools+=(playwright-core) ;;
    --peers) npm_tools+=(nodejs-snowflake @sapphire/snowflake) ;;
    --tools-only) tools_only=1 ;;
    *) echo "build.sh: unknown option $arg (--browser, --peers, --tools-only)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${npm_tools[@]}"; do [ -f "$TOOLS/node_modules/$p/package.json" ] || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "npm install ${missing[*]} (in $TOOLS)"
  [ -f "$TOOLS/package.json" ] || echo '{"name":"snowmint-wasm-tools","private":true}' > "$TOOLS/package.json"
  (cd "$TOOLS" && npm install --no-audit --no-fund "${missing[@]}")
fi
WASM_OPT="$TOOLS/node_modules/.bin/wasm-opt"

# --- Chromium (Debian) for the browser tests ----------------------------------------------------
if [[ " $* " == *" --browser "* ]]; then [ -x /usr/bin/chromium ] || apt_install chromium >&2; fi

# --- The bindings generator (bindgen/: wasm-bindgen's generator library at exactly the version of
# the wasm-bindgen crate in Cargo.lock, without the rest of wasm-bindgen-cli) --------------------
WB_VERSION="$(cd "$ROOT" && cargo metadata --format-version 1 | node -e '
  let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
    const p = JSON.parse(s).packages.find(p => p.name === "wasm-bindgen");
    if (!p) process.exit(1);
    process.stdout.write(p.version);
  });')"
BINDGEN_PIN="$(sed -n 's/^wasm-bindgen-cli-support = "=\(.*\)"$/\1/p' "$HERE/bindgen/Cargo.toml")"
if [ "$BINDGEN_PIN" != "$WB_VERSION" ] || ! grep -q "const VERSION: &str = \"$WB_VERSION\";" "$HERE/bindgen/src/main.rs"; then
  echo "build.sh: Cargo.lock has wasm-bindgen $WB_VERSION, bindings-wasm/bindgen pins wasm-bindgen-cli-support $BINDGEN_PIN: set both versions there (Cargo.toml, VERSION in src/main.rs) to $WB_VERSION and run cargo update in that folder" >&2
  exit 1
fi
# Its own target folder (a workspace of its own); cargo finds it current after the first build (about
# a minute on 2 cores on a fresh machine).
BINDGEN_TARGET="$TARGET/wasm-bindgen-tool"
BINDGEN="$BINDGEN_TARGET/debug/snowmint-wasm-bindgen"
log "cargo build bindings-wasm/bindgen (wasm-bindgen-cli-support $WB_VERSION; about a minute the first time)"
CARGO_TARGET_DIR="$BINDGEN_TARGET" cargo build --locked --manifest-path "$HERE/bindgen/Cargo.toml" >&2
[ "$tools_only" = 1 ] && exit 0

# --- Build -----------------------------------------------------------------------------------------
# Size-tuned release profile for this artifact only (the workspace profile stays as it is for others):
# opt-level z and fat LTO take about 8 KB off the module.
# Two modules: the main one (60.5 KB budget) and Opaque IDs' own (opaque/, loaded next to it by js/).
log "cargo build --target wasm32-unknown-unknown --release -p snowmint-wasm -p snowmint-wasm-opaque (opt-level z, fat LTO)"
# Source paths in panic locations are shortened (the registry's and the toolchain's): smaller, and the
# modules do not carry this machine's directories.
RUST_HASH="$(rustc -vV | sed -n 's/^commit-hash: //p')"
REMAP="--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}/registry/src=/crates --remap-path-prefix=/rustc/$RUST_HASH=/rustc"
# A target folder of its own (target/wasm-build): cargo locks target/release for any release build, a
# cross build's too (its build scripts and macros), so in target/ this build would wait for the native
# ones; in its own folder `make demo` builds it beside them (they leave a core idle in their long
# single-threaded steps). Only the few macro crates it needs are compiled twice.
WASM_TARGET="$TARGET/wasm-build"
(cd "$ROOT" && RUSTFLAGS="$REMAP" CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=fat \
  CARGO_TARGET_DIR="$WASM_TARGET" cargo build --target wasm32-unknown-unknown --release -p snowmint-wasm -p snowmint-wasm-opaque)
RAW="$WASM_TARGET/wasm32-unknown-unknown/release/snowmint_wasm.wasm"
RAW_OPAQUE="$WASM_TARGET/wasm32-unknown-unknown/release/snowmint_wasm_opaque.wasm"
STAMP="$HERE/dist/.stamp"
# dist/ is current when it was made from this very module by this very script.
WANT="$(sha256sum "$RAW" "$RAW_OPAQUE" "$HERE/build.sh" "$HERE/js/surface.js" "$HERE/js/client.js" "$HERE/js/fast-path.js" "$HERE/js/offline.js" "$HERE/js/patch-glue.mjs" "$HERE/bindgen/src/main.rs" "$HERE/bindgen/Cargo.lock" | awk '{print $1}' | tr -d '\n')"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -f "$HERE/www/pkg/snowmint_wasm_inline.js" ]; then
  log "dist/ is up to date"
  exit 0
fi
rm -rf "$HERE/dist" "$HERE/www/pkg"
mkdir -p "$HERE/dist" "$HERE/www/pkg"
FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
          --enable-mutable-globals --enable-reference-types --enable-multivalue)
for t in nodejs web bundler no-modules; do
  for m in snowmint_wasm snowmint_wasm_opaque; do
    raw="$RAW"; [ "$m" = snowmint_wasm_opaque ] && raw="$RAW_OPAQUE"
    "$BINDGEN" --target "$t" --out-dir "$HERE/dist/$t" --out-name "$m" "$raw"
    # -Oz, then flatten + rereloop + -Oz twice more: 630 bytes smaller, same speed.
    "$WASM_OPT" -Oz --flatten --rereloop -Oz -Oz --converge --strip-producers --strip-target-features "${FEATURES[@]}" "$HERE/dist/$t/${m}_bg.wasm" -o "$HERE/dist/$t/${m}_bg.wasm"
  done
done
# The errors the modules make are the package's SnowmintError (js/surface.js), imported by the glue.
node "$HERE/js/patch-glue.mjs" dist "$HERE/dist"
# The page works from file:// too: a classic script (no-modules build) with the module inlined as base64.
cp "$HERE/dist/no-modules/snowmint_wasm.js" "$HERE/www/pkg/snowmint_wasm.js"
node -e '
  const fs = require("fs");
  const b64 = fs.readFileSync(process.argv[1]).toString("base64");
  fs.writeFileSync(process.argv[2],
    "// Generated by build.sh: the optimized snowmint .wasm, inlined so the page works from file://.\n" +
    "var SNOWMINT_WASM_BASE64 = \"" + b64 + "\";\n");
' "$HERE/dist/no-modules/snowmint_wasm_bg.wasm" "$HERE/www/pkg/snowmint_wasm_inline.js"
# OfflineGenerator (js/offline.js) as a classic script for the page: `export ` dropped, one global.
node -e '
  const fs = require("fs");
  const src = fs.readFileSync(process.argv[1], "utf8").replace(/^export /m, "");
  fs.writeFileSync(process.argv[2], "// Generated from js/offline.js by build.sh: do not edit.\n" +
    "var snowmint_offline = (function () {\n" + src + "\nreturn { makeOfflineGenerator };\n})();\n");
' "$HERE/js/offline.js" "$HERE/www/pkg/snowmint_offline.js"
# The fast nextId() path (js/fast-path.js) the same way, for the page's classic scripts.
node -e '
  const fs = require("fs");
  const src = fs.readFileSync(process.argv[1], "utf8").replace(/^export /gm, "");
  fs.writeFileSync(process.argv[2], "// Generated from js/fast-path.js by build.sh: do not edit.\n" +
    "var snowmint_fast_path = (function () {\n" + src + "\nreturn { installFastPath, makeOpaque };\n})();\n");
' "$HERE/js/fast-path.js" "$HERE/www/pkg/snowmint_fast_path.js"
echo "$WANT" > "$STAMP"
SIZE=$(stat -c %s "$HERE/dist/web/snowmint_wasm_bg.wasm")
log "optimized .wasm: $SIZE bytes ($((SIZE / 1024)) KiB); raw $(stat -c %s "$RAW") bytes; Opaque IDs' module: $(stat -c %s "$HERE/dist/web/snowmint_wasm_opaque_bg.wasm") bytes"
if [ "$SIZE" -gt 61952 ]; then
  log "WARNING: the optimized .wasm is over its 60.5 KB budget (tests/size.test.mjs fails)"
fi
