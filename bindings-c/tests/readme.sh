#!/usr/bin/env bash
# The C README's commands, literally: every ```sh block of bindings-c/README.md, in order, in one shell
# (set -eu), from a directory that stands for the repository root (a temporary directory whose entries
# link to the real root's, so the commands' outputs land in it), with HOME a temporary directory. Then
# the build line of examples/quickstart.c's header comment, from a directory holding a copy of that file,
# against a copy installed into a temporary prefix. Fails on the first command that fails.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
# The user's Rust toolchain stays where it is when HOME points elsewhere.
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/root" "$T/home" "$T/header"
for e in "$ROOT"/*; do
  [ "$(basename "$e")" = target ] || ln -s "$e" "$T/root/"
done
ln -s "$TARGET" "$T/root/target"   # the README's target/ is the workspace's CARGO_TARGET_DIR

# Every ```sh block, in order.
awk '/^```sh$/ {f=1; next} f && /^```$/ {f=0; print ""; next} f' "$HERE/README.md" > "$T/readme-blocks.sh"
n=$(grep -c '^```sh$' "$HERE/README.md")
[ "$n" -ge 5 ] || { echo "readme.sh: expected the README's install blocks, found $n sh blocks"; exit 1; }
echo "== $n sh blocks of bindings-c/README.md, from the repository root, HOME=$T/home"
(cd "$T/root" && env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH HOME="$T/home" bash -euo pipefail -x "$T/readme-blocks.sh") \
  > "$T/readme.out" 2>&1 || { cat "$T/readme.out"; echo "readme.sh: a README command failed (above)"; exit 1; }
# What the blocks must have produced: the quickstarts (the ID-only one too) that printed IDs, the installed tree removed.
for exe in quickstart quickstart-nopath quickstart-static quickstart-tree quickstart-core quickstart-core-static; do
  [ -x "$T/root/$exe" ] || { cat "$T/readme.out"; echo "readme.sh: $exe was not built"; exit 1; }
done
readelf -d "$T/root/quickstart" | grep -q 'NEEDED.*\[libsnowmint.so.0\]' \
  || { echo "readme.sh: the quickstart does not record libsnowmint.so.0"; exit 1; }
if readelf -d "$T/root/quickstart-static" | grep -q 'NEEDED.*libsnowmint'; then
  echo "readme.sh: the static quickstart needs libsnowmint.so"; exit 1
fi
# `cc -static` with snowmint-core.pc: no program interpreter, no shared library at all.
if readelf -l "$T/root/quickstart-core-static" | grep -q INTERP || readelf -d "$T/root/quickstart-core-static" | grep -q NEEDED; then
  echo "readme.sh: quickstart-core-static is not fully static"; exit 1
fi
[ "$(grep -c ' minted at ' "$T/readme.out")" -ge 6 ] || { cat "$T/readme.out"; echo "readme.sh: quickstart output"; exit 1; }
[ -z "$(find "$T/home/.local" -type f -o -type l 2>/dev/null)" ] \
  || { find "$T/home/.local"; echo "readme.sh: uninstall left files behind"; exit 1; }

# The quickstart's header comment: the line after "from this file's directory:".
line=$(awk '/from this file.s directory:/ {getline; sub(/^ \*  */, ""); print; exit}' "$HERE/examples/quickstart.c")
case "$line" in cc\ quickstart.c*) ;; *) echo "readme.sh: no build line in quickstart.c's comment: $line"; exit 1 ;; esac
make -s -C "$HERE" install PREFIX="$T/prefix" >/dev/null
cp "$HERE/examples/quickstart.c" "$T/header/"
echo "== quickstart.c's header comment: $line"
(cd "$T/header" && env -u LD_LIBRARY_PATH PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" bash -euo pipefail -c "$line") \
  > "$T/header.out" 2>&1 || { cat "$T/header.out"; echo "readme.sh: the header comment's line failed"; exit 1; }
grep -q ' minted at ' "$T/header.out" || { cat "$T/header.out"; exit 1; }
echo "readme.sh: the README's $n sh blocks and quickstart.c's build line ran as written"
