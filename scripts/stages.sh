# The test stages of `make test` and `make test-long` as data: which stages run, in which order, which
# run beside the ones after them, what each waits for and what each takes from another. Read (sourced)
# by scripts/test-all.sh, which runs them, and by scripts/lib.sh's `stage_needs` (a stage script run by
# itself checks its needs with it). `scripts/test-all.sh --plan` (`--plan --long`, `--plan NAME…`) prints
# the schedule made from it without running anything.
#
# STAGES: one line per stage, in the order the stages start (full-line comments allowed).
#   NAME     the stage's name: `make test-NAME` runs it alone, `scripts/test-all.sh NAME…` several in turn
#   IN       test (`make test`), long (`make test-long`), or test,long
#   BESIDE   yes: in its suite it runs beside the stages after it (its output in target/stage-logs/NAME.log,
#            printed once a later stage waits for it, or at the end); -: the next stage starts when it ends
#   AFTER    a stage running beside the others that it starts after (all: every one of them), besides the
#            stages that make its NEEDS, which it always starts after; -: none
#   NEEDS    what it takes from other stages: names of ARTIFACTS below, comma-separated; -: nothing. The
#            stage does not run (it fails at once, naming the stage that makes the missing need) if a
#            need's stage ran in this run without making it, or is not in this run and no earlier run made it
#   COMMAND  its script and arguments, from the repository's root (a .py runs with python3, the rest bash)
# Adding a stage is adding its line (and its artifacts' lines, if another stage takes something from it).
#
# Why these overlap (2 cores): Miri interprets on one core while the server stages mostly wait on leases,
# TTLs and servers; the fuzzing (its sanitizer build in fuzz/target, then 5 s per target) takes the CPU
# the cross builds would otherwise have; the service stage (its own servers, mostly waiting on
# connections, deadlines and a browser: about a fifth of a core) beside the C stage's builds; the
# PostgreSQL extension's stage (after the C stage built libsnowmint, which it links: a throw-away server,
# mostly waiting on backends and restarts) beside the stages after it; the Node
# stage (mostly waiting on servers, child processes and timers: about half a core) and the cross stage's
# builds and emulated runs beside the Python stage (about one core: the three together about two); the
# chaos run (real processes paused, killed and resumed on a schedule: mostly waiting) beside the WASM
# stage's builds and browser; and from the start, the portable artifacts' four cross builds (dist-build,
# at nice 19: only the CPU the other stages leave idle), which the dist stage packs and checks after
# them (AFTER dist-build: the same target folder, target/dist/cargo). The conformance check starts after
# every stage beside the others has ended (AFTER all).
# shellcheck disable=SC2034  # read by scripts/lib.sh's stages_load
STAGES='
# NAME           IN          BESIDE  AFTER       NEEDS                                   COMMAND
setup            test,long   -       -           -                                       scripts/setup.sh
dist-build       test        yes     -           -                                       scripts/dist.sh --modules
harness          test        -       -           -                                       scripts/test-harness.sh
core             test        -       -           -                                       scripts/test-core.sh
miri             test        yes     -           -                                       scripts/test-miri.sh
fuzz             test        yes     -           -                                       scripts/test-fuzz.sh
coord            test        -       -           -                                       coord/test.sh
service          test        yes     -           -                                       service/test.sh
c                test        -       -           -                                       bindings-c/test.sh
pg               test        yes     -           -                                       pg/test.sh
cross            test        yes     -           -                                       scripts/cross.sh
node             test        yes     -           -                                       bindings-node/test.sh
python           test        -       -           -                                       bindings-python/test.sh
chaos            test        yes     -           python-venv,node-package                scripts/chaos.sh
wasm             test        -       -           -                                       bindings-wasm/test.sh
dist             test        -       dist-build  -                                       scripts/test-dist.sh
conformance      test        -       all         records-rust,records-c,records-postgres,records-python,records-node,records-wasm-node,records-wasm-browser scripts/check-conformance.py
msrv             long        -       -           -                                       scripts/test-msrv.sh
miri-full        long        -       -           -                                       scripts/test-miri.sh --full
fuzz-long        long        -       -           -                                       scripts/test-fuzz.sh --long
python-versions  long        -       -           -                                       bindings-python/test-versions.sh
chaos-long       long        -       -           python-venv,node-package                scripts/chaos.sh --long
recipes-python   long        -       -           -                                       bindings-python/test.sh --recipes-long
recipes-node     long        -       -           -                                       bindings-node/test.sh --recipes-long
liveness-curve   long        -       -           -                                       scripts/liveness-curve.sh
'

# ARTIFACTS: what a stage makes that another takes. FILE exists once it is made and is written anew each
# time its stage makes it (so a file older than the stage's start in this run was not made by it); a
# relative FILE is from the repository's root, $TARGET is the cargo target folder (target/ unless
# CARGO_TARGET_DIR is set), a * matches as in the shell.
# shellcheck disable=SC2016  # $TARGET is expanded by scripts/lib.sh's artifact_path, not here
ARTIFACTS='
# NAME                  MADE BY  FILE                                                              WHAT
python-venv             python   $TARGET/python/test-venv/lib/python3*/site-packages/snowmint/__init__.py   the wheel installed with pip into a fresh venv
node-package            node     target/node-test/project/node_modules/snowmint/index.js           the npm tarballs installed into a fresh project
records-rust            core     target/conformance/rust.txt                                       the cases the Rust conformance runner ran
records-c               c        target/conformance/c.txt                                          the cases the C conformance runner ran
records-postgres        pg       target/conformance/postgres.txt                                   the cases the PostgreSQL extension ran (pg/conformance.py)
records-python          python   target/conformance/python.txt                                     the cases the Python conformance runner ran
records-node            node     target/conformance/node.txt                                       the cases the Node conformance runner ran
records-wasm-node       wasm     target/conformance/wasm-node.txt                                  the cases the WASM package ran in Node
records-wasm-browser    wasm     target/conformance/wasm-browser.txt                               the cases the WASM package ran in Chromium
'
