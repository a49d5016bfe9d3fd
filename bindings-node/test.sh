#!/usr/bin/env bash
# Tests the Node package as users install it, in the napi-rs platform-package layout: build, `npm pack`
# of the platform package (npm/linux-x64-gnu → snowmint-linux-x64-gnu, which holds the .node) and of the
# main package (snowmint: the loader, index.mjs, index.d.ts, no binary), `npm install` of BOTH tarballs
# into a fresh project under target/, then `node --test` from that project over: where everything was
# loaded from (the platform package, nothing from this folder), every conformance vector
# (tests/js/conformance.mjs), the API and its error table (CommonJS), ESM imports, worker_threads, state
# files shared by child processes (with C processes on the same file, and the README's cluster recipe), the
# README's cluster and PM2 recipes with a lease source (tests/recipes.test.cjs; pm2 is installed into the
# tools dir), the ID-service Client and OfflineGenerator under the seeded fault simulation
# (tests/js/client-sim.mjs, with its sensitivity runs; their lines are shown), the README quickstart, and `tsc --noEmit` of examples/example.ts against the shipped index.d.ts.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../scripts/lib.sh" # ROOT, the shared helpers
conformance_dir_absolute

bash "$HERE/build.sh"
# The README's install commands, as written, into a throw-away project (build.sh finds the addon current).
bash "$ROOT/scripts/test-install.sh" bindings-node/README.md

WORK="$ROOT/target/node-test"
PACK="$WORK/pack"
TOOLS="$WORK/tools"            # TypeScript, installed once (the project itself is fresh every run)
PROJECT="$WORK/project"
rm -rf "$PACK" "$PROJECT"
mkdir -p "$PACK" "$TOOLS" "$PROJECT"

# --- the tarballs ---------------------------------------------------------------------------------
PLATFORM_TGZ="$PACK/$(cd "$HERE/npm/linux-x64-gnu" && npm pack --silent --pack-destination "$PACK" | tail -n 1)"
MAIN_TGZ="$PACK/$(cd "$HERE" && npm pack --silent --pack-destination "$PACK" | tail -n 1)"
echo "test.sh: packed $(basename "$PLATFORM_TGZ") ($(tar -tzf "$PLATFORM_TGZ" | tr '\n' ' '))"
echo "test.sh: packed $(basename "$MAIN_TGZ") ($(tar -tzf "$MAIN_TGZ" | tr '\n' ' '))"
if tar -tzf "$MAIN_TGZ" | grep -q '\.node$'; then
  echo "test.sh: the main package must not ship a .node (it belongs in the platform package)" >&2
  exit 1
fi
for tgz in "$MAIN_TGZ" "$PLATFORM_TGZ"; do
  listing="$(tar -tzf "$tgz")"   # listed first: `grep -q` would close the pipe on tar (pipefail)
  for lic in LICENSE-MIT LICENSE-APACHE; do
    grep -qx "package/$lic" <<<"$listing" || { echo "test.sh: $(basename "$tgz") lacks $lic" >&2; exit 1; }
  done
done
tar -tzf "$PLATFORM_TGZ" | grep -qx 'package/snowmint.linux-x64-gnu.node' \
  || { echo "test.sh: the platform package lacks snowmint.linux-x64-gnu.node" >&2; exit 1; }

# --- TypeScript (a tool, kept between runs) -------------------------------------------------------
if [ ! -x "$TOOLS/node_modules/.bin/tsc" ]; then
  [ -f "$TOOLS/package.json" ] || echo '{ "name": "snowmint-node-test-tools", "private": true }' > "$TOOLS/package.json"
  (cd "$TOOLS" && npm install --no-audit --no-fund --loglevel=error "typescript@^5")
fi

# --- PM2 (a tool, kept between runs): the README's PM2 recipe runs under it (tests/recipes.test.cjs) ---
if [ ! -x "$TOOLS/node_modules/.bin/pm2-runtime" ]; then
  [ -f "$TOOLS/package.json" ] || echo '{ "name": "snowmint-node-test-tools", "private": true }' > "$TOOLS/package.json"
  (cd "$TOOLS" && timeout 300 npm install --no-audit --no-fund --loglevel=error "pm2@7")
fi

# --- the JavaScript format (prettier, .prettierrc.json at the root: every hand-written JS/TS file) --
if [ ! -x "$TOOLS/node_modules/.bin/prettier" ]; then
  [ -f "$TOOLS/package.json" ] || echo '{ "name": "snowmint-node-test-tools", "private": true }' > "$TOOLS/package.json"
  (cd "$TOOLS" && npm install --no-audit --no-fund --loglevel=error "prettier@3")
fi
(cd "$ROOT" && "$TOOLS/node_modules/.bin/prettier" --check --log-level warn .) \
  || { echo "test.sh: JavaScript not formatted: run prettier --write . (its config: .prettierrc.json)" >&2; exit 1; }

# --- a fresh project with both tarballs installed -------------------------------------------------
cd "$PROJECT"
printf '{ "name": "snowmint-user", "version": "1.0.0", "private": true }\n' > package.json
npm install --no-audit --no-fund --loglevel=error "$PLATFORM_TGZ" "$MAIN_TGZ"
cp -r "$HERE/tests" "$HERE/examples" .
cp "$HERE/README.md" README.md

export SNOWMINT_VECTORS="${SNOWMINT_VECTORS:-$ROOT/tests/vectors}"
export SNOWMINT_CONFORMANCE="$ROOT/tests/js/conformance.mjs"
export SNOWMINT_TSC="$TOOLS/node_modules/.bin/tsc"
export SNOWMINT_PM2_RUNTIME="$TOOLS/node_modules/.bin/pm2-runtime"
export SNOWMINT_NODE_SRC="$HERE"            # the tests assert that nothing is loaded from here
export SNOWMINT_CARGO_TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
# The C binding's state-file worker: C processes minting on the same state file as Node ones
# (tests/state-file.test.cjs). Quick when the C stage has built it already.
bash "$ROOT/bindings-c/build.sh"
make -s -C "$ROOT/bindings-c" "$SNOWMINT_CARGO_TARGET/bindings-c/static/state_file" >&2
export SNOWMINT_C_STATE_WORKER="$SNOWMINT_CARGO_TARGET/bindings-c/static/state_file"
# Real etcd and PostgreSQL servers for tests/coord.test.mjs (free 127.0.0.1 ports, throw-away data,
# stopped on every exit path), and the TLS and authentication ones with their failure cases (tls_servers).
# shellcheck source=../scripts/servers.sh
source "$ROOT/scripts/servers.sh"
binding_servers
# The ID service (`snowmint serve`) for the client tests (tests/client.test.mjs, the README's Client block).
export SNOWMINT_SERVE="$(bash "$ROOT/scripts/service-bin.sh")"
# --recipes-long (`make test-long`): the README's cluster recipes killed mid-load (tests/recipes-killed.test.cjs),
# 3 runs in a row per recipe and store (`make test` runs each once, with the rest of tests/).
tests=(tests/)
if [ "${1:-}" = "--recipes-long" ]; then export SNOWMINT_RECIPE_RUNS=3; tests=(tests/recipes-killed.test.cjs); fi
status=0
# No NODE_PATH and no napi override: the package must resolve from the project's node_modules alone.
env -u NODE_PATH -u NAPI_RS_NATIVE_LIBRARY_PATH -u NAPI_RS_FORCE_WASI \
  node --test --test-reporter=spec "${tests[@]}" > "$WORK/last-run.txt" 2>&1 || status=$?
# Per-case lines of the conformance files are indented: show the top-level results only.
grep -vE '^\s+(✔|▶|ℹ)' "$WORK/last-run.txt" | grep -vE '^\s*$' | grep -E '^(✔|✖|▶|ℹ)' || true
# The client simulation's figures: its faults, and the seed at which each check put back was caught.
grep -E '^client simulation' "$WORK/last-run.txt" || true
# The runner's closing counts, then a plain summary line.
pass=$(grep -E '^ℹ pass ' "$WORK/last-run.txt" | awk '{print $3}')
fail=$(grep -E '^ℹ fail ' "$WORK/last-run.txt" | awk '{print $3}')
echo "node: ${pass:-0} passed, ${fail:-0} failed"
if [ "$status" -ne 0 ] || [ "${fail:-1}" != "0" ] || [ "${pass:-0}" = "0" ]; then
  grep -B2 -A25 '✖' "$WORK/last-run.txt" | head -150 || true
  exit 1
fi
