#!/usr/bin/env bash
# Builds the Node addon (napi-rs): installs what a fresh machine lacks (Node/npm, Rust, @napi-rs/cli),
# then `napi build --platform --release` (with host-cargo.sh as its cargo: the addon builds into
# target/release/, on the dependency graph the CLI, libsnowmint and the wheels share), which writes
# snowmint.linux-x64-gnu.node, binding.js (the generated loader, which the hand-written index.js wraps)
# and index.d.ts (dts-header.d.ts + the types of src/, both generated: not in git) into this folder, and
# copies the addon into its platform package npm/linux-x64-gnu/.
# Fast when up to date (cargo skips the compile). `--tools-only` installs the tools (npm install) and builds
# nothing: `make demo` runs it beside its first cargo build, so the download overlaps the compile.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

# shellcheck source=../scripts/lib.sh
source "$HERE/../scripts/lib.sh"
need_node
need_cargo

# @napi-rs/cli (dev dependency). `npm install`, not `npm ci` (see shared/TOOLCHAIN.md).
if [ ! -x node_modules/.bin/napi ]; then
  npm install --no-audit --no-fund --loglevel=error
fi
[ "${1:-}" = "--tools-only" ] && exit 0

# Up to date: the addon is newer than every input (this folder's sources and the core's).
addon="$(ls -t "$HERE"/snowmint.*.node 2>/dev/null | head -1 || true)"
if [ -n "$addon" ] && [ -f binding.js ] && [ -f index.d.ts ] && [ -z "$(find "$HERE/src" "$HERE/Cargo.toml" "$HERE/build.rs" "$HERE/package.json" "$HERE/dts-header.d.ts" "$HERE/../core/src" "$HERE/../core/Cargo.toml" "$HERE/../coord/src" "$HERE/../coord/Cargo.toml" "$HERE/../host/src" "$HERE/../host/Cargo.toml" "$HERE/../Cargo.lock" -newer "$addon" -print -quit 2>/dev/null)" ]; then
  echo "build.sh: $(basename "$addon") is up to date" >&2
else
  # --platform names the addon snowmint.<platform>.node, as the generated loader expects. CARGO: napi's
  # cargo without its `--target <host>`, so the addon builds into target/release/ on the dependencies the
  # CLI, libsnowmint and the wheels compiled there (host-cargo.sh), not a second graph of its own.
  cargo_dir="$(cargo_dir_beside node)"
  CARGO_TARGET_DIR="$cargo_dir" CARGO="$HERE/host-cargo.sh" node_modules/.bin/napi build --platform --release --no-const-enum --js binding.js >&2
  cargo_dir_done "$cargo_dir"
  ls -1 "$HERE"/snowmint.*.node >&2
fi

# The JavaScript surface shared with snowmint-wasm (its one source is bindings-wasm/js/surface.js).
node "$HERE/../bindings-wasm/js/patch-glue.mjs" cjs "$HERE/surface.cjs"
# The ID-service Client, shared the same way (its one source is bindings-wasm/js/client.js).
node "$HERE/../bindings-wasm/js/patch-glue.mjs" client "$HERE/client.cjs"

# The napi-rs platform-package layout: npm/<platform>/ is the package `snowmint-<platform>` that holds
# the binary (made by `napi create-npm-dirs`, committed); the main package ships only the loader and
# names each platform package in optionalDependencies. `napi artifacts` copies the built addon into
# its platform package (napi.targets in package.json: this machine's). The other platforms' packages
# (npm/linux-arm64-gnu, the musl ones) are built by `make dist` (scripts/dist.sh) into target/dist/.
for dir in "$HERE"/npm/*/; do
  platform="$(basename "$dir")"
  [ -f "$HERE/snowmint.$platform.node" ] || continue
  if ! cmp -s "$HERE/snowmint.$platform.node" "$dir/snowmint.$platform.node"; then
    node_modules/.bin/napi artifacts --output-dir . --npm-dir npm >&2
  fi
done
