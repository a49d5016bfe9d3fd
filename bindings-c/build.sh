#!/usr/bin/env bash
# Installs what a fresh machine lacks for the C binding, then builds libsnowmint.a, libsnowmint.so and
# include/snowmint.h (cargo, release; quick when up to date). Honours CARGO_TARGET_DIR (default:
# the workspace's target/). Build output goes to stderr.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../scripts/lib.sh
source "$HERE/../scripts/lib.sh"
need_cargo
# Debian packages the build and its programs need: compilers, pkg-config, cJSON (the demo's and the test
# runner's JSON reader). What only the tests (valgrind; python3 for the runner self-test) or the bench
# (libuuid) use is installed by test.sh and bench.sh.
apt_install gcc g++ make pkg-config libcjson-dev >&2

make -s -C "$HERE" lib >&2
