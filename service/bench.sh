#!/usr/bin/env bash
# The ID service's throughput (`make bench` runs it after scripts/bench-all.sh): POST /v1/ids?count=1000
# to 2, 3 and 4 keep-alive connections on 127.0.0.1, IDs per second (service/benches/serve.rs).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
cd "$ROOT"
bash scripts/setup-rust.sh
cargo bench -p snowmint-service --bench serve
