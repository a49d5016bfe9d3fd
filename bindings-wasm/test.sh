#!/usr/bin/env bash
# Builds snowmint-wasm, packs it (npm pack), installs the tarball into a fresh temporary project, and runs
# every test: node --test (API, bad input, 10^6 unique IDs, every conformance vector, the ID-service
# Client and OfflineGenerator under the seeded fault simulation tests/js/client-sim.mjs), tests/installed/ run
# inside that project as user code (CommonJS require, ESM import, `tsc --noEmit` of examples/ with
# @ts-expect-error negatives; asserting that the glue and the .wasm come from node_modules, not this folder)
# and the real-browser tests (headless Debian Chromium via playwright-core: vectors inside the page, the
# playground driven).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../scripts/lib.sh" # ROOT, the shared helpers
conformance_dir_absolute
WORK="$ROOT/target/wasm-work"
"$HERE/build.sh" --browser   # and what the browser tests drive: Chromium, playwright-core
# The README's install commands, as written, into a throw-away project (build.sh finds the module current).
bash "$ROOT/scripts/test-install.sh" bindings-wasm/README.md

# --- the package as users get it: npm pack → npm install into a fresh project ------------------------
PROJECT="$WORK/project"
rm -rf "$PROJECT" "$WORK/pack"
mkdir -p "$PROJECT" "$WORK/pack"
TARBALL="$(cd "$HERE" && npm pack --silent --pack-destination "$WORK/pack" | tail -n 1)"
listing="$(tar -tzf "$WORK/pack/$TARBALL")"   # listed first: `grep -q` would close the pipe on tar (pipefail)
for lic in LICENSE-MIT LICENSE-APACHE; do
  grep -qx "package/$lic" <<<"$listing" || { echo "test.sh: the package lacks $lic" >&2; exit 1; }
done
echo '{"name":"snowmint-wasm-test-project","private":true,"type":"commonjs"}' > "$PROJECT/package.json"
(cd "$PROJECT" && npm install --no-audit --no-fund --silent "$WORK/pack/$TARBALL")
printf "export * from 'snowmint-wasm';\n" > "$PROJECT/api.mjs"
printf "module.exports = require('snowmint-wasm');\n" > "$PROJECT/api.cjs"
export SNOWMINT_WASM_PROJECT="$PROJECT"
export SNOWMINT_VECTORS_DIR="$ROOT/tests/vectors"
export SNOWMINT_TOOLS="$WORK/tools/node_modules"

# TypeScript for the type check (a tool kept between runs; the project itself is fresh every run).
if [ ! -x "$WORK/tools/node_modules/.bin/tsc" ]; then
  (cd "$WORK/tools" && npm install --no-audit --no-fund --loglevel=error "typescript@^5")
fi
# Tests that run INSIDE the project, as a user's code: require / import 'snowmint-wasm', tsc --noEmit.
cp -r "$HERE/tests/installed" "$PROJECT/tests"
cp -r "$HERE/examples" "$PROJECT/examples"

# The ID service (`snowmint serve`) for the client tests (tests/client.test.mjs, the README's Client block).
export SNOWMINT_SERVE="$(bash "$ROOT/scripts/service-bin.sh")"

status=0
echo "== node --test (the nodejs build, from the installed tarball)"
node --test --test-reporter=spec "$HERE"/tests/*.test.mjs 2>&1 | tee "$WORK/run-node.txt" || status=1

echo "== node --test in the installed project (CommonJS require, ESM import, TypeScript tsc --noEmit)"
(cd "$PROJECT" && env -u NODE_PATH SNOWMINT_WASM_SRC="$HERE" SNOWMINT_TSC="$WORK/tools/node_modules/.bin/tsc" \
  node --test --test-reporter=spec tests/) 2>&1 | tee "$WORK/run-installed.txt" || status=1

echo "== the native package's WebAssembly fallback (bindings-node/fallback.js), installed as on a platform without an addon"
# The main `snowmint` tarball and this one, no platform package (as on macOS or Windows); then the
# platform package the node stage packed, with SNOWMINT_WASM=1. Each in a fresh project.
FALLBACK="$WORK/fallback"
MAIN_TGZ="$WORK/pack/$(cd "$ROOT/bindings-node" && npm pack --silent --pack-destination "$WORK/pack" | tail -n 1)"
PLATFORM_TGZ="$(ls "$ROOT"/target/node-test/pack/snowmint-linux-x64-gnu-*.tgz 2>/dev/null | head -n 1 || true)"
: >"$WORK/run-fallback.txt"
for variant in no-addon ${PLATFORM_TGZ:+forced}; do
  rm -rf "$FALLBACK" && mkdir -p "$FALLBACK/tests"
  echo '{"name":"snowmint-fallback-test-project","private":true}' > "$FALLBACK/package.json"
  tarballs=("$MAIN_TGZ" "$WORK/pack/$TARBALL")
  force=()
  if [ "$variant" = forced ]; then tarballs+=("$PLATFORM_TGZ"); force=(SNOWMINT_WASM=1); fi
  (cd "$FALLBACK" && npm install --no-audit --no-fund --silent "${tarballs[@]}")
  [ "$variant" = no-addon ] && [ -e "$FALLBACK/node_modules/snowmint-linux-x64-gnu" ] \
    && { echo "test.sh: the no-addon project has a platform package" >&2; status=1; }
  cp "$ROOT/bindings-node/tests-fallback/fallback.test.mjs" "$FALLBACK/tests/"
  echo "-- $variant"
  (cd "$FALLBACK" && env -u NODE_PATH -u SNOWMINT_CONFORMANCE_DIR "${force[@]}" SNOWMINT_VECTORS="$ROOT/tests/vectors" \
    SNOWMINT_CONFORMANCE="$ROOT/tests/js/conformance.mjs" node --test --test-reporter=spec tests/) >>"$WORK/run-fallback.txt" 2>&1 || status=1
  tail -n 12 "$WORK/run-fallback.txt" | grep -E "^ℹ (pass|fail) " || true
done
rm -rf "$FALLBACK"

echo "== browser tests (headless Chromium)"
node --test --test-reporter=spec "$HERE/tests/browser/browser.test.mjs" 2>&1 | tee "$WORK/run-browser.txt" || status=1

echo "== offline minting in Chromium against a real snowmint serve (the CLI, built once)"
(cd "$ROOT" && cargo build -q -p snowmint-cli)
SNOWMINT_CLI="$ROOT/target/debug/snowmint" \
  node --test --test-reporter=spec "$HERE/tests/browser/offline.test.mjs" 2>&1 | tee "$WORK/run-offline.txt" || status=1

echo "== OfflineGenerator and Client in Chromium against a misbehaving service (tests/service/fake_service.py)"
node --test --test-reporter=spec "$HERE/tests/browser/offline-hostile.test.mjs" 2>&1 | tee "$WORK/run-hostile.txt" || status=1

# One summary line over the runs.
sum() { cat "$WORK"/run-node.txt "$WORK"/run-installed.txt "$WORK"/run-fallback.txt "$WORK"/run-browser.txt "$WORK"/run-offline.txt "$WORK"/run-hostile.txt | awk -v k="$1" '$1 == "ℹ" && $2 == k { n += $3 } END { print n + 0 }'; }
passed=$(sum pass); failed=$(sum fail)
echo "snowmint-wasm: $passed passed, $failed failed"
[ "$failed" = "0" ] && [ "$passed" -gt 0 ] || status=1

if [ "$status" -ne 0 ]; then
  echo "snowmint-wasm: SOME TESTS FAILED" >&2
else
  echo "snowmint-wasm: all tests passed"
fi
exit "$status"
