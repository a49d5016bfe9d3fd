#!/usr/bin/env bash
# Runs the "install into your project" commands of READMEs as written: the ```sh block that follows the
# line `<!-- install-from-repo -->` in each README given, in order, in one shell (set -euo pipefail), from
# the repository root (so the artifacts a stage has built are reused, with the same paths and flags, and
# build scripts find them up to date), with HOME a temporary directory (the user's project, ~/.cargo/bin
# and ~/.local live there). The block itself checks what it installed (it runs the package), and the
# commands must leave the checkout as they found it (git status).
#   scripts/test-install.sh core/README.md cli/README.md …
# Rust: the toolchain and the registry cache stay the user's (RUSTUP_HOME, CARGO_HOME), with the
# network off (CARGO_NET_OFFLINE: a stage has fetched every crate already), `cargo install` goes to the
# temporary HOME (CARGO_INSTALL_ROOT), and Rust builds share the workspace's target directory.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ $# -gt 0 ] || { echo "usage: scripts/test-install.sh README.md…" >&2; exit 2; }
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
# What the checkout looks like before: the README's commands may build into target/, nothing else.
git_state() { git -C "$ROOT" status --porcelain --untracked-files=all 2>/dev/null || true; }

passed=0
for readme in "$@"; do
  path="$ROOT/$readme"
  block="$T/$(echo "$readme" | tr '/' '_').sh"
  awk '/<!-- install-from-repo -->/ {m=1; next} m && /^```sh$/ {f=1; next} f && /^```$/ {exit} f' "$path" > "$block"
  [ -s "$block" ] || { echo "test-install: $readme has no sh block after <!-- install-from-repo -->" >&2; exit 1; }
  home="$T/home-$passed"
  mkdir -p "$home"
  echo "== $readme: install into a fresh project, as written (HOME=$home)"
  sed 's/^/   | /' "$block"
  t0=$SECONDS
  before="$(git_state)"
  if ! (cd "$ROOT" && env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH -u VIRTUAL_ENV -u PYTHONPATH -u NODE_PATH \
        HOME="$home" PATH="$home/.cargo/bin:$home/.local/bin:$PATH" \
        RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" \
        CARGO_INSTALL_ROOT="$home/.cargo" CARGO_NET_OFFLINE=true CARGO_TARGET_DIR="$TARGET" \
        npm_config_cache="${npm_config_cache:-$HOME/.npm}" PIP_CACHE_DIR="${PIP_CACHE_DIR:-$HOME/.cache/pip}" \
        bash -euo pipefail "$block") > "$T/out" 2>&1; then
    cat "$T/out"
    echo "test-install: the install commands of $readme failed (above)" >&2
    exit 1
  fi
  tail -n 5 "$T/out" | sed 's/^/   > /'
  if [ "$(git_state)" != "$before" ]; then
    diff <(echo "$before") <(git_state) || true
    echo "test-install: the install commands of $readme changed the checkout (above)" >&2
    exit 1
  fi
  echo "== $readme: ok ($((SECONDS - t0))s)"
  passed=$((passed + 1))
done
echo "test-install: $passed passed, 0 failed"
