# The commands of the README: `make demo` (mint in every runtime and show they agree, then a fleet on the
# embedded store), `make test` (every test of every runtime; what CI runs) and `make test-long` (the
# evidence too slow for `make test`: the MSRV builds, the full Miri sweep, long fuzzing, CPython 3.10 and
# 3.12); `make dist` builds the portable wheels and npm packages into target/dist/ (`make test` builds and
# checks them too: its dist-build and dist stages). Each installs what a fresh machine lacks, and only that.
.PHONY: demo test test-long bench bench-servers dist FORCE

demo:
	bash scripts/demo.sh

test:
	bash scripts/test-all.sh

test-long:
	bash scripts/test-all.sh --long

dist:
	bash scripts/dist.sh

bench:
	bash scripts/bench-all.sh; rc=$$?; bash service/bench.sh || rc=1; bash pg/bench.sh || rc=1; exit $$rc

# Claim latency and 64 attaching processes on the embedded store, etcd and PostgreSQL (starts the servers).
bench-servers:
	bash coord/bench-servers.sh

# `make test-NAME`: the stage NAME of scripts/stages.sh alone (core, miri, fuzz, coord, service, c, cross,
# node, python, chaos, wasm, dist, conformance, msrv, …; `bash scripts/test-all.sh --plan NAME` shows what
# it takes from other stages, e.g. chaos the python and node stages' installs). A new stage is a target
# with no line here. (FORCE, not .PHONY: make skips pattern rules for phony targets.)
test-%: FORCE
	bash scripts/test-all.sh $*
FORCE:
