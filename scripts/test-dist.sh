#!/usr/bin/env bash
# The `dist` stage of `make test` (`make test-dist` alone): builds the portable artifacts
# (scripts/dist.sh; in `make test` its four cross builds ran beforehand, beside the other stages: stage
# dist-build) and checks each where this machine can run it.
#   - every wheel's platform tag, by auditwheel (manylinux2014 and musllinux_1_2, x86_64 and aarch64);
#   - every Node addon's CPU and C library: glibc symbols no newer than 2.17, or musl's loader;
#   - the manylinux2014 x86_64 wheel in this machine's CPython, the linux-x64-gnu package in its Node;
#   - the manylinux2014 aarch64 wheel in Debian's arm64 CPython 3.11 and the linux-arm64-gnu package in
#     Debian's arm64 Node 18, each unpacked from its .deb files and run under qemu-aarch64;
#   each running every conformance vector (tests/vectors/);
#   - the sdist: `pip wheel` builds it with cargo, and the result mints.
# The musl artifacts are built and checked, not run (no musl CPython or Node here); nothing is built for
# macOS or Windows (Node there gets the WebAssembly fallback, tested in the wasm stage).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
bash scripts/dist.sh
OUT="$ROOT/target/dist"
WORK="$OUT/test"
TOOLS="$OUT/tools-venv"
apt_install qemu-user binutils-aarch64-linux-gnu
rm -rf "$WORK/run" && mkdir -p "$WORK/run"
fails=0
check() { # check NAME COMMAND…
  local name="$1"; shift
  if "$@"; then echo "dist: $name: ok"; else echo "dist: $name: FAILED" >&2; fails=$((fails + 1)); fi
}

# --- tags and libraries ----------------------------------------------------------------------------
tag_ok() { # tag_ok WHEEL: auditwheel finds the wheel consistent with one of the platform tags it bears
  local found
  found="$("$TOOLS/bin/auditwheel" show "$1" 2>&1 | tr -s ' \n' ' ' | sed -n 's/.*consistent with the following platform tag: "\([^"]*\)".*/\1/p')"
  echo "$(basename "$1"): auditwheel: $found"
  [ -n "$found" ] && tr '.' '\n' <<<"$(basename "$1" .whl | sed 's/.*-cp39-abi3-//')" | grep -qx "$found"
}
# A module for musl: dynamically linked, needing only the C library (musl's loader serves the names
# libc.so, libm, libpthread… itself), no glibc symbol versions. (auditwheel cannot judge musllinux
# wheels on a glibc host: it looks for the host's musl.)
musl_ok() { # musl_ok FILE CPU
  file "$1" | grep -q "$2" && file "$1" | grep -q 'dynamically linked' || { echo "$1: $(file -b "$1")" >&2; return 1; }
  local needed; needed="$(objdump -p "$1" 2>/dev/null | awk '/NEEDED/ { print $2 }' | sort -u | tr '\n' ' ')"
  echo "$(basename "$1"): needs $needed"
  ! grep -q 'GLIBC_' <(strings "$1") && ! grep -qvE '^lib(c|m|pthread|dl|rt|util)\.so' <(tr ' ' '\n' <<<"$needed" | sed '/^$/d')
}
wheel_musl_ok() { # wheel_musl_ok WHEEL CPU
  local d="$WORK/run/$(basename "$1" .whl)"
  rm -rf "$d" && mkdir -p "$d" && python3 -m zipfile -e "$1" "$d" && musl_ok "$d/snowmint/_snowmint.abi3.so" "$2"
}
for w in "$OUT"/python/*.whl; do
  case $w in
    *musllinux*x86_64*) check "$(basename "$w"): a module for musl x86-64" wheel_musl_ok "$w" x86-64 ;;
    *musllinux*aarch64*) check "$(basename "$w"): a module for musl aarch64" wheel_musl_ok "$w" aarch64 ;;
    *) check "$(basename "$w"): platform tag (auditwheel)" tag_ok "$w" ;;
  esac
done
node_ok() { # node_ok PLATFORM
  local f="$WORK/run/$1.node"
  tar -xzf "$OUT/npm/snowmint-$1-"*.tgz -O "package/snowmint.$1.node" > "$f"
  local want_cpu; case $1 in *x64*) want_cpu=x86-64 ;; *) want_cpu=aarch64 ;; esac
  file "$f" | grep -q "$want_cpu" || { echo "$1: not $want_cpu: $(file -b "$f")" >&2; return 1; }
  case $1 in
    *gnu)
      local v; v="$( (case $1 in *arm64*) aarch64-linux-gnu-objdump -T "$f" ;; *) objdump -T "$f" ;; esac) | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)"
      echo "$1: newest glibc symbol $v"
      [ "$(printf '%s\nGLIBC_2.17\n' "$v" | sort -V | tail -n 1)" = GLIBC_2.17 ] ;;
    *musl) musl_ok "$f" "$want_cpu" ;;
  esac
}
for p in linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl; do check "snowmint-$p: CPU and C library" node_ok "$p"; done

# --- this machine: the x86_64 wheel in CPython, the linux-x64-gnu package in Node -------------------
VECTORS="$ROOT/tests/vectors"
PYTEST="$WORK/pytest"   # pytest, pure Python, for this machine's and the emulated CPython 3.11
[ -d "$PYTEST/_pytest" ] || "$TOOLS/bin/pip" install -q --target "$PYTEST" "pytest>=8,<9"
py_vectors() { # py_vectors SITE [qemu -L ROOT] PYTHON
  local site="$1"; shift
  (cd "$ROOT/bindings-python" && env -u SNOWMINT_CONFORMANCE_DIR PYTHONPATH="$site:$PYTEST" SNOWMINT_VECTORS="$VECTORS" \
    timeout 600 "$@" -m pytest -q -p no:cacheprovider tests/test_vectors.py)
}
unpack_wheel() { rm -rf "$2" && mkdir -p "$2" && python3 -m zipfile -e "$1" "$2"; }
unpack_wheel "$(ls "$OUT"/python/snowmint-*manylinux2014_x86_64*.whl)" "$WORK/run/x86_64"
check "manylinux2014 x86_64 wheel: vectors on CPython $(python3 -c 'import platform; print(platform.python_version())')" \
  py_vectors "$WORK/run/x86_64" python3

node_vectors() { # node_vectors PLATFORM [qemu -L ROOT] NODE
  local platform="$1"; shift
  local project="$WORK/run/node-$platform"
  rm -rf "$project" && mkdir -p "$project/tests"
  echo '{"name":"snowmint-dist-test","private":true}' > "$project/package.json"
  # --force: npm refuses a package for another CPU than this machine's (the emulated Node's here).
  (cd "$project" && npm install --no-audit --no-fund --silent --omit=optional --force \
    "$(ls "$OUT"/npm/snowmint-0*.tgz)" "$(ls "$OUT"/npm/snowmint-"$platform"-*.tgz)") || return 1
  cat > "$project/tests/vectors.test.mjs" <<'EOF'
import test from 'node:test'
import assert from 'node:assert/strict'
import { pathToFileURL } from 'node:url'
import * as api from 'snowmint'
test('the native addon serves', () => assert.equal(api.backend, 'native'))
const { runConformance } = await import(pathToFileURL(process.env.SNOWMINT_CONFORMANCE).href)
await runConformance(api, { test, assert, vectorsDir: process.env.SNOWMINT_VECTORS })
EOF
  # The test file run directly (node:test reports in this process): `node --test` would start a child
  # process by its own path, which an emulated Node cannot (no binfmt here).
  (cd "$project" && env -u SNOWMINT_CONFORMANCE_DIR SNOWMINT_VECTORS="$VECTORS" SNOWMINT_CONFORMANCE="$ROOT/tests/js/conformance.mjs" \
    timeout 600 "$@" tests/vectors.test.mjs > "$WORK/run/node-$platform.txt" 2>&1) || { tail -n 30 "$WORK/run/node-$platform.txt" >&2; return 1; }
  grep -E '^# (pass|fail) ' "$WORK/run/node-$platform.txt"
}
check "linux-x64-gnu package: vectors on Node $(node --version)" node_vectors linux-x64-gnu node

# --- aarch64 under qemu: Debian's arm64 CPython and Node, unpacked from their .deb files -----------
ARM="$WORK/arm64"
foreign_debs "$ARM/debs" libc6:arm64 libgcc-s1:arm64 libstdc++6:arm64 zlib1g:arm64 libssl3:arm64 libexpat1:arm64 libffi8:arm64 \
  python3.11:arm64 python3.11-minimal:arm64 libpython3.11-minimal:arm64 libpython3.11-stdlib:arm64 \
  nodejs:arm64 libnode108:arm64 libuv1:arm64 libicu72:arm64 libbrotli1:arm64 libc-ares2:arm64 libnghttp2-14:arm64 \
  node-acorn node-cjs-module-lexer node-undici
unpack_debs "$ARM/debs" "$ARM/root"
unpack_wheel "$(ls "$OUT"/python/snowmint-*manylinux2014_aarch64*.whl)" "$WORK/run/aarch64"
t_emulated=$(date +%s)
check "manylinux2014 aarch64 wheel: vectors on Debian's arm64 CPython 3.11 (qemu-aarch64)" \
  py_vectors "$WORK/run/aarch64" qemu-aarch64 -L "$ARM/root" "$ARM/root/usr/bin/python3.11"
check "linux-arm64-gnu package: vectors on Debian's arm64 Node (qemu-aarch64)" \
  node_vectors linux-arm64-gnu qemu-aarch64 -L "$ARM/root" "$ARM/root/usr/bin/node"
echo "dist: the emulated runs took $(( $(date +%s) - t_emulated )) s"

# --- the sdist, built by pip with cargo --------------------------------------------------------------
sdist_ok() {
  local venv="$WORK/run/sdist-venv"
  python3 -m venv --clear "$venv"
  CARGO_TARGET_DIR="$ROOT/target" timeout 1200 "$venv/bin/pip" install -q "$(ls "$OUT"/python/snowmint-*.tar.gz)" >&2
  "$venv/bin/python" -c 'import snowmint; g = snowmint.Generator(node_id=7); a, b = g.next_id(), g.next_id(); assert b > a and snowmint.decode(a).node_id == 7; print("sdist: minted", a, b)'
}
check "sdist: pip builds it with cargo, and it mints" sdist_ok

echo "dist: artifacts (target/dist/):"
(cd "$OUT" && for f in python/*.whl python/*.tar.gz npm/*.tgz; do printf '  %-80s %9s bytes\n' "$f" "$(stat -c %s "$f")"; done)
echo "dist: $fails failed"
[ "$fails" -eq 0 ]
