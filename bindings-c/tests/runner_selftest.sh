#!/usr/bin/env bash
# The conformance runner must fail on bad corpora: an unknown field, a duplicate case name, a file with
# no cases, an unknown file, a wrong expected ID. Each mutation of a copy of tests/vectors must make it
# exit non-zero; the unmodified copy must pass.
set -euo pipefail
# Runs on broken copies of the corpus are not conformance results: record nothing.
unset SNOWMINT_CONFORMANCE_DIR
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
RUNNER="${CARGO_TARGET_DIR:-$ROOT/target}/bindings-c/static/vectors"
[ -x "$RUNNER" ] || make -s -C "$HERE" "$RUNNER" >&2
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
python3 - "$ROOT/tests/vectors" "$WORK" "$RUNNER" <<'PY'
import json, os, shutil, subprocess, sys
src, work, runner = sys.argv[1:]
def corpus(name, mutate=None):
    d = os.path.join(work, name); os.makedirs(d)
    for f in os.listdir(src):
        if f.endswith(".json"): shutil.copy(os.path.join(src, f), d)
    if mutate: mutate(d)
    return subprocess.run([runner, d], capture_output=True, text=True)
def edit(fn, f):
    def m(d):
        p = os.path.join(d, fn); j = json.load(open(p)); f(j); json.dump(j, open(p, "w"))
    return m
def wrong_id(j):
    for c in j["cases"]:
        for s in c.get("steps", []):
            if "ids" in s:
                s["ids"][0] = str(int(s["ids"][0]) + 1); return
def wrong_decode(j):
    c = next(c for c in j["cases"] if "expect" in c); c["expect"]["node"] = str(int(c["expect"].get("node", "0")) + 1)
mutations = {
    "unknown field": edit("decode.json", lambda j: j["cases"][0].update(bogus=1)),
    "unknown layout field": edit("generate.json", lambda j: j["cases"][0]["layout"].update(bogus=1)),
    "duplicate name": edit("encodings.json", lambda j: j["cases"].append(dict(j["cases"][0]))),
    "no cases": edit("layouts.json", lambda j: j.update(cases=[])),
    "unknown file": lambda d: open(os.path.join(d, "extra.json"), "w").write('{"cases": [{"name": "x"}]}'),
    "wrong generated ID": edit("generate.json", wrong_id),
    "wrong decoded node": edit("decode.json", wrong_decode),
}
passed = failed = 0
r = corpus("pristine")
if r.returncode == 0: passed += 1
else: failed += 1; print("FAIL pristine corpus:", r.stderr[:300])
for name, m in mutations.items():
    r = corpus(name.replace(" ", "_"), m)
    if r.returncode != 0 and "FAIL" in r.stderr: passed += 1
    else: failed += 1; print(f"FAIL runner accepted a corpus with: {name}")
print(f"runner self-test: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
