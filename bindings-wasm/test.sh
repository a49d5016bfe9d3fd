#!/usr/bin/env bash
# Builds snowmint-wasm, packs it (npm pack), installs the tarball into a fresh temporary project, and runs
# every test: node --test (API, bad input, 10^6 unique IDs, every conformance vector) and the real-browser
# tests (headless Debian Chromium via playwright-core: vectors inside the page, the playground driven).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
WORK="$ROOT/target/wasm-work"
"$HERE/build.sh"

# --- the package as users get it: npm pack → npm install into a fresh project ------------------------
PROJECT="$WORK/project"
rm -rf "$PROJECT" "$WORK/pack"
mkdir -p "$PROJECT" "$WORK/pack"
TARBALL="$(cd "$HERE" && npm pack --silent --pack-destination "$WORK/pack" | tail -n 1)"
echo '{"name":"snowmint-wasm-test-project","private":true,"type":"commonjs"}' > "$PROJECT/package.json"
(cd "$PROJECT" && npm install --no-audit --no-fund --silent "$WORK/pack/$TARBALL")
printf "export * from 'snowmint-wasm';\n" > "$PROJECT/api.mjs"
printf "module.exports = require('snowmint-wasm');\n" > "$PROJECT/api.cjs"
export SNOWMINT_WASM_PROJECT="$PROJECT"
export SNOWMINT_VECTORS_DIR="$ROOT/tests/vectors"
export SNOWMINT_TOOLS="$WORK/tools/node_modules"

status=0
echo "== node --test (the nodejs build, from the installed tarball)"
node --test --test-reporter=spec "$HERE"/tests/*.test.mjs || status=1

echo "== browser tests (headless Chromium)"
node --test --test-reporter=spec "$HERE/tests/browser/browser.test.mjs" || status=1

if [ "$status" -ne 0 ]; then
  echo "snowmint-wasm: SOME TESTS FAILED" >&2
else
  echo "snowmint-wasm: all tests passed"
fi
exit "$status"
