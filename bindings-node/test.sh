#!/usr/bin/env bash
# Tests the Node package as a user installs it: build, `npm pack`, `npm install` of the tarball into a
# fresh project under target/, then `node --test` over: every conformance vector (tests/js/conformance.mjs),
# the API and its error table (CommonJS), ESM imports, worker_threads, the README quickstart, and
# `tsc --noEmit` of examples/example.ts against the generated index.d.ts.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"

bash "$HERE/build.sh"

WORK="$ROOT/target/node-test"
PROJECT="$WORK/project"
mkdir -p "$WORK" "$PROJECT"
rm -f "$WORK"/snowmint-*.tgz
(cd "$HERE" && npm pack --silent --pack-destination "$WORK" >/dev/null)
TARBALL="$(ls "$WORK"/snowmint-*.tgz)"
echo "test.sh: packed $(basename "$TARBALL") ($(tar -tzf "$TARBALL" | tr '\n' ' '))"

cd "$PROJECT"
if [ ! -f package.json ]; then
  printf '{ "name": "snowmint-user", "version": "1.0.0", "private": true }\n' > package.json
fi
if [ ! -x node_modules/.bin/tsc ]; then
  npm install --no-audit --no-fund --loglevel=error --save-dev "typescript@^5"
fi
# A fresh install of the tarball every run (the same version number, new contents).
rm -rf node_modules/snowmint
npm install --no-audit --no-fund --loglevel=error "$TARBALL"

rm -rf tests examples
cp -r "$HERE/tests" "$HERE/examples" .
cp "$HERE/README.md" README.md

export SNOWMINT_VECTORS="${SNOWMINT_VECTORS:-$ROOT/tests/vectors}"
export SNOWMINT_CONFORMANCE="$ROOT/tests/js/conformance.mjs"
status=0
node --test --test-reporter=spec tests/ > "$WORK/last-run.txt" 2>&1 || status=$?
# Per-case lines of the conformance files are indented: show the top-level results only.
grep -vE '^\s+(✔|▶|ℹ)' "$WORK/last-run.txt" | grep -vE '^\s*$' | grep -E '^(✔|✖|▶|ℹ)' || true
# The runner's closing counts, then a plain summary line.
pass=$(grep -E '^ℹ pass ' "$WORK/last-run.txt" | awk '{print $3}')
fail=$(grep -E '^ℹ fail ' "$WORK/last-run.txt" | awk '{print $3}')
echo "node: ${pass:-0} passed, ${fail:-0} failed"
if [ "$status" -ne 0 ] || [ "${fail:-1}" != "0" ] || [ "${pass:-0}" = "0" ]; then
  grep -B2 -A25 '✖' "$WORK/last-run.txt" | head -150 || true
  exit 1
fi
