#!/usr/bin/env bash
# Installs what a fresh machine lacks for the C binding, then builds libsnowmint.a, libsnowmint.so and
# include/snowmint.h (cargo, release; quick when up to date). Honours CARGO_TARGET_DIR (default:
# the workspace's target/). Build output goes to stderr.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../scripts/lib.sh
source "$HERE/../scripts/lib.sh"
need_cargo
# Debian packages: compilers, valgrind, pkg-config, cJSON (the test runner's JSON reader), libuuid (bench
# peer), python3 (the runner self-test mutates a copy of the corpus).
apt_install gcc g++ make valgrind pkg-config libcjson-dev uuid-dev python3 >&2

make -s -C "$HERE" lib >&2
