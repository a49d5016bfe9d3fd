#!/usr/bin/env bash
# The README's liveness curve (coord/tests/liveness.rs, `liveness_curve`): etcd (one member) and
# PostgreSQL from scripts/servers.sh, a TCP proxy holding back 3 s or losing a seeded share of their
# answers (0, 5, 10, 15, 20, 25, 30 %), a generator opened through it as an application opens one;
# prints the table of the share of time minting works. About 5 minutes (each cell a 20 s window, both
# stores at once; SNOWMINT_LIVENESS_WINDOW_S sets it; SNOWMINT_LIVENESS_FRACTIONS, _FAULTS and _STORES
# pick cells). In `make test-long` (stage liveness-curve).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/servers.sh"
cd "$ROOT"
etcd_start
pg_start
cargo test -p snowmint-coord --test liveness -- --ignored --nocapture liveness_curve
