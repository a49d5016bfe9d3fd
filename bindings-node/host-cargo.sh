#!/usr/bin/env bash
# The cargo that build.sh gives `napi build` (CARGO=this script). napi-rs's CLI always passes
# `--target <triple>`; for the host's own triple cargo then builds the whole dependency graph a second
# time, into target/<triple>/. Without the flag the addon builds into target/release/ beside the CLI,
# libsnowmint and the wheels, with the dependencies they already compiled (one feature set:
# workspace-hack/). The built addon is then hard-linked to target/<triple>/<profile>/, where napi
# copies the addon from (and generates binding.js and index.d.ts, as before). A --target for another
# triple (cross builds) is passed through untouched.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
host="$(rustc -vV | sed -n 's/^host: //p')"
args=() triple="" profile=debug target_dir="${CARGO_TARGET_DIR:-$ROOT/target}"
while [ $# -gt 0 ]; do
  case "$1" in
    --target) if [ "${2:-}" = "$host" ]; then triple="$2"; shift 2; continue; fi ;;
    --release) profile=release ;;
    --profile) profile="${2:-}"; [ "$profile" = dev ] && profile=debug ;;
    --target-dir) target_dir="${2:-}" ;;
  esac
  args+=("$1"); shift
done
# Not this script again: the cargo on PATH (rustup's proxy).
env -u CARGO cargo "${args[@]}"
[ -n "$triple" ] || exit 0
[ "${args[0]:-}" = build ] || exit 0
from="$target_dir/$profile" to="$target_dir/$triple/$profile"
mkdir -p "$to"
# This folder's crate (snowmint-node): its cdylib, libsnowmint_node.so.
lib="lib$(sed -n 's/^name = "\(.*\)"$/\1/p' "$ROOT/bindings-node/Cargo.toml" | head -n1 | tr - _).so"
ln -f "$from/$lib" "$to/$lib"
