#!/usr/bin/env bash
# The stage scheduler's own test (scripts/test-all.sh over a stage table, scripts/stages.sh), in a few
# seconds, on stub stages: a copy of the scheduler in a throw-away repository root whose stages.sh holds
# stubs (each a line of shell that sleeps and writes a file), run for real, then checked:
#   - the plan (--plan) and the run start the stages in the same order, the stage beside the others
#     overlapping the ones after it, the stage needing its file waiting for it;
#   - a stage whose need is made by a stage not in the run, and by no earlier run, does not run: it fails
#     at once, naming the stage that makes it; the same stage runs once that need exists;
#   - a stage whose need's stage ran in this run without making it does not run either, even with the
#     file an earlier run made still there (it is not taken silently);
#   - a table whose stage needs what a later stage makes is refused before anything runs.
# Prints "test-harness: N passed, M failed"; exits non-zero on a failure. Its folder is removed on every
# exit path.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/snowmint-harness.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/scripts" "$WORK/stub"
cp "$HERE/lib.sh" "$HERE/test-all.sh" "$WORK/scripts/"
# stub/run.sh NAME SECONDS [FILE]: notes its start and end (EPOCH.NANOSECONDS) in target/trace, sleeps,
# writes FILE (when given, and when NAME is not listed in $STUB_FAIL_BEFORE_MAKING).
cat >"$WORK/stub/run.sh" <<'EOF'
#!/usr/bin/env bash
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
echo "start $1 $(date +%s.%N)" >>"$ROOT/target/trace"
sleep "$2"
case " ${STUB_FAIL_BEFORE_MAKING:-} " in *" $1 "*) echo "end $1 $(date +%s.%N)" >>"$ROOT/target/trace"; exit 1 ;; esac
[ -n "${3:-}" ] && mkdir -p "$ROOT/$(dirname "$3")" && echo made >"$ROOT/$3"
echo "end $1 $(date +%s.%N)" >>"$ROOT/target/trace"
EOF
table() { # table STAGES-LINES ARTIFACT-LINES: writes the throw-away root's stages.sh
  printf "STAGES='\n%s\n'\nARTIFACTS='\n%s\n'\n" "$1" "$2" >"$WORK/scripts/stages.sh"
}
ARTS='made         slow     target/made/file     a file the slow stage makes
elsewhere    maker    target/elsewhere     a file the maker stage (long only) makes'
table 'first    test,long  -    -     -          stub/run.sh first 0
slow     test       yes  -     -          stub/run.sh slow 2 target/made/file
quick    test       -    -     -          stub/run.sh quick 0.2
user     test       -    -     made       stub/run.sh user 0
orphan   test       -    -     elsewhere  stub/run.sh orphan 0
maker    long       -    -     -          stub/run.sh maker 0 target/elsewhere' "$ARTS"

passed=0; failed=0
check() { # check NAME COMMAND…
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); echo "test-harness: $name: ok"
  else failed=$((failed + 1)); echo "test-harness: $name: FAILED" >&2; fi
}
t() { awk -v e="$1" -v n="$2" '$1 == e && $2 == n { print $3 }' "$WORK/target/trace"; }
before() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

plan="$(bash "$WORK/scripts/test-all.sh" --plan)"
want='start first: stub/run.sh first 0
start slow beside: stub/run.sh slow 2 target/made/file
start quick: stub/run.sh quick 0.2
wait slow
start user: stub/run.sh user 0
start orphan: stub/run.sh orphan 0
end'
check "the plan: the order, the stage beside the others, the wait for a need" \
  test "$(grep -v '^  \|^test-all --plan' <<<"$plan")" = "$want"
out="$(bash "$WORK/scripts/test-all.sh" 2>&1)"; rc=$?
check "a run with a missing need fails" test "$rc" -ne 0
check "the stages ran in the plan's order" \
  test "$(awk '$1 == "start" { print $2 }' "$WORK/target/trace" | tr '\n' ' ')" = "first slow quick user "
check "the stage beside the others overlapped the next" before "$(t start quick)" "$(t end slow)"
check "the stage needing its file started after the stage making it ended" before "$(t end slow)" "$(t start user)"
check "the stage needing its file took it from this run's stage" \
  grep -q "stage user takes made from stage slow of this run" <<<"$out"
check "the stage whose need no stage made did not run, naming the stage that makes it" \
  grep -q "stage orphan needs elsewhere (a file the maker stage (long only) makes: target/elsewhere), made by stage maker, which is not in this run, and no earlier run made it: run make test-maker first" <<<"$out"
check "… and it shows in the summary" grep -q "^orphan  *FAILED .*(not run: what it needs is missing)" <<<"$out"
rm -f "$WORK/target/trace"
bash "$WORK/scripts/test-all.sh" maker >/dev/null 2>&1
out="$(bash "$WORK/scripts/test-all.sh" orphan 2>&1)"; rc=$?
check "once an earlier run made the need, the stage runs, saying where it took it from" \
  test "$rc" -eq 0 -a -n "$(grep "stage orphan takes elsewhere from an earlier run of stage maker (not in this run): target/elsewhere, made " <<<"$out")"
rm -f "$WORK/target/trace"; touch -d '-1 hour' "$WORK/target/made/file"   # made by an earlier run
out="$(STUB_FAIL_BEFORE_MAKING=slow bash "$WORK/scripts/test-all.sh" slow user 2>&1)"
check "a need its stage did not make in this run (it failed first; an earlier run's file is there): the stage does not run" \
  test -n "$(grep "stage user needs made (.*), made by stage slow, which ran in this run and did not make it" <<<"$out")" -a -z "$(t start user)"
table 'first    test  -  -  -     stub/run.sh first 0
user     test  -  -  made  stub/run.sh user 0
slow     test  -  -  -     stub/run.sh slow 0 target/made/file' "$ARTS"
out="$(bash "$WORK/scripts/test-all.sh" --plan 2>&1)"; rc=$?
check "a table whose stage needs what a later stage makes is refused" \
  test "$rc" -eq 2 -a -n "$(grep "stage user: needs made, made by stage slow, which comes after it" <<<"$out")"
echo "test-harness: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
