#!/usr/bin/env bash
# Installs what a fresh machine lacks for the C binding, then builds libsnowmint.a, libsnowmint.so and
# include/snowmint.h (cargo, release; quick when up to date). Honours CARGO_TARGET_DIR (default:
# the workspace's target/). Build output goes to stderr.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

command -v cargo >/dev/null || { echo "build.sh: cargo not found (install Rust with rustup)" >&2; exit 1; }

# Debian packages: compilers, valgrind, pkg-config, cJSON (the test runner's JSON reader), libuuid (bench
# peer), python3 (the runner self-test mutates a copy of the corpus).
need=()
for p in gcc g++ make valgrind pkg-config libcjson-dev uuid-dev python3; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "build.sh: installing ${need[*]}" >&2
  if [ -z "${SNOWMINT_APT_UPDATED:-}" ]; then apt-get update -qq >&2; export SNOWMINT_APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

make -s -C "$HERE" lib >&2
