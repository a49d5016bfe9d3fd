#!/usr/bin/env bash
# Benchmark (≤ 2 minutes): snowmint_next_id from C (plain and shared generator, and batches of 4096),
# the Rust core's single ID from a Rust binary (examples/core_bench.rs), clock_gettime(CLOCK_REALTIME)
# alone, and libuuid's uuid_generate_time. The C and Rust programs run alternately for ROUNDS rounds
# (default 6); each figure is the best over rounds (each round: best of 9). Prints a table with ratios.
# Then the state-file bench (bench/state_file.c).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
ROUNDS="${ROUNDS:-6}"
source "$ROOT/scripts/lib.sh"
apt_install uuid-dev >&2   # the libuuid peer
bash "$HERE/build.sh"
make -s -C "$HERE" "$TARGET/bindings-c/bench" >&2
cargo build -q --release -p snowmint-c --example core_bench --manifest-path "$ROOT/Cargo.toml" >&2
OUTF="$(mktemp)"; trap 'rm -f "$OUTF"' EXIT
for r in $(seq "$ROUNDS"); do
  echo "round $r/$ROUNDS" >&2
  "$TARGET/release/examples/core_bench" >>"$OUTF"
  "$TARGET/bindings-c/bench" >>"$OUTF"
done
python3 - "$OUTF" <<'PY'
import json, os, sys
best = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 3 and parts[0] == "RESULT":
        best[parts[1]] = min(best.get(parts[1], float("inf")), float(parts[2]))
clock = best["clock_gettime_realtime"]
rows = [
    ("clock_gettime(CLOCK_REALTIME) alone", "clock_gettime_realtime", None),
    ("Rust core: Generator::next_id", "rust_next_id_plain", None),
    ("C: snowmint_next_id (plain)", "c_next_id_plain", "rust_next_id_plain"),
    ("Rust core: SharedGenerator::next_id", "rust_next_id_shared", None),
    ("C: snowmint_shared_next_id", "c_next_id_shared", "rust_next_id_shared"),
    ("Rust core: next_ids, 4096/batch, per ID", "rust_next_ids_4096_per_id", None),
    ("C: snowmint_shared_next_ids 4096, per ID", "c_next_ids_4096_per_id", "rust_next_ids_4096_per_id"),
    ("libuuid uuid_generate_time", "libuuid_generate_time", "c_next_id_shared"),
    ("Rust core: Generator::next_id, 2^19 IDs/tick", "rust_next_id_plain_capacity", None),
    ("C: snowmint_next_id (plain), 2^19 IDs/tick", "c_next_id_plain_capacity", "rust_next_id_plain_capacity"),
    ("Rust core: SharedGenerator::next_id, 2^19 IDs/tick", "rust_next_id_shared_capacity", None),
    ("C: snowmint_shared_next_id, 2^19 IDs/tick", "c_next_id_shared_capacity", "rust_next_id_shared_capacity"),
]
print(f"{'benchmark (twitter layout, node 7, system clock)':<50} {'ns/ID':>10} {'vs peer':>18} {'vs clock read':>14}")
for label, key, peer in rows:
    v = best[key]
    ratio = ""
    if peer:
        name = "Rust core" if peer.startswith("rust") else "C snowmint"
        ratio = f"{v / best[peer]:.2f}x {name}"
    print(f"{label:<50} {v:>10.2f} {ratio:>18} {v / clock:>13.2f}x")
out = os.environ.get("SNOWMINT_BENCH_JSON")
if out:
    # Machine-readable summary for scripts/bench-all.sh: the figures of the table above. The first
    # snowmint single, snowmint batch and floor rows are the headline figures.
    spec = [
        ("C: snowmint_shared_next_id", "snowmint", "single", "c_next_id_shared"),
        ("C: snowmint_next_id (plain)", "snowmint", "single", "c_next_id_plain"),
        ("Rust core: SharedGenerator::next_id", "snowmint", "single", "rust_next_id_shared"),
        ("Rust core: Generator::next_id", "snowmint", "single", "rust_next_id_plain"),
        ("C: snowmint_shared_next_ids 4096, per ID", "snowmint", "batch", "c_next_ids_4096_per_id"),
        ("Rust core: next_ids, 4096/batch, per ID", "snowmint", "batch", "rust_next_ids_4096_per_id"),
        ("clock_gettime(CLOCK_REALTIME) alone", "floor", "clock", "clock_gettime_realtime"),
        ("libuuid uuid_generate_time", "peer", "single", "libuuid_generate_time"),
        ("C: snowmint_shared_next_id, 2^19 IDs/tick", "snowmint", "single", "c_next_id_shared_capacity"),
        ("C: snowmint_next_id (plain), 2^19 IDs/tick", "snowmint", "single", "c_next_id_plain_capacity"),
        ("Rust core: SharedGenerator::next_id, 2^19 IDs/tick", "snowmint", "single", "rust_next_id_shared_capacity"),
        ("Rust core: Generator::next_id, 2^19 IDs/tick", "snowmint", "single", "rust_next_id_plain_capacity"),
    ]
    rows = [{"name": n, "kind": k, "what": w, "ns_per_id": best[key]} for n, k, w, key in spec]
    with open(out, "w") as f:
        json.dump({"runtime": "c", "rows": rows}, f, indent=1)
        f.write("\n")
ratio = lambda key: best[f"c_{key}"] / best[f"rust_{key}"]
print(f"target C <= 1.1x Rust core per ID: twitter (past its capacity: borrowed ticks) shared "
      f"{ratio('next_id_shared'):.2f}x, plain {ratio('next_id_plain'):.2f}x; 2^19 IDs a tick (windows) "
      f"shared {ratio('next_id_shared_capacity'):.2f}x, plain {ratio('next_id_plain_capacity'):.2f}x; "
      f"batch <= 1 ns/ID: {best['c_next_ids_4096_per_id']:.2f} ns")
PY

# The state file (SPEC §4a): single ID on a file vs in process, 2 processes on one file vs 2 threads.
make -s -C "$HERE" "$TARGET/bindings-c/bench-state-file" >&2
SF="$(mktemp)"; trap 'rm -f "$OUTF" "$SF"' EXIT
"$TARGET/bindings-c/bench-state-file" | tee "$SF"
python3 "$ROOT/scripts/bench_statefile.py" c "$SF" ${SNOWMINT_BENCH_JSON:+"$SNOWMINT_BENCH_JSON"}
# Opaque IDs through the C API (rows in their own "opaque" group of the report).
make -s -C "$HERE" "$TARGET/bindings-c/bench-opaque" >&2
OPQ="$(mktemp)"; ROWS="$(mktemp)"; trap 'rm -f "$OUTF" "$SF" "$OPQ" "$ROWS"' EXIT
for r in 1 2 3; do "$TARGET/bindings-c/bench-opaque" >>"$OPQ"; done
python3 - "$OPQ" "$ROWS" <<'PY'
import json, sys
best = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 3 and p[0] == "RESULT":
        best[p[1]] = min(best.get(p[1], float("inf")), float(p[2]))
spec = [("C: snowmint_opaque_encode (twitter, 63 bits)", "single", "c_opaque_encode"),
        ("C: snowmint_opaque_decode", "single", "c_opaque_decode"),
        ("C: snowmint_opaque_encode_many + decode_many 4096, per ID and way", "batch", "c_opaque_many_per_id")]
print("\nopaque IDs (ns per call, fastest sample)")
for name, _, key in spec:
    print(f"{name:<70} {best[key]:>8.2f}")
json.dump([{"name": n, "kind": "snowmint", "what": w, "ns_per_id": best[k], "group": "opaque"} for n, w, k in spec],
          open(sys.argv[2], "w"))
PY
if [ -n "${SNOWMINT_BENCH_JSON:-}" ]; then python3 "$ROOT/scripts/bench_merge.py" "$SNOWMINT_BENCH_JSON" "$ROWS"; fi
