# The commands of the README: `make demo` (mint in every runtime and show they agree, then a fleet on the
# embedded store), `make test` (every test of every runtime; what CI runs) and `make test-long` (the
# evidence too slow for `make test`: the MSRV builds, the full Miri sweep, long fuzzing, CPython 3.10 and
# 3.12); `make dist` builds the portable wheels and npm packages into target/dist/ (`make test` builds and
# checks them too: its dist-build and dist stages). Each installs what a fresh machine lacks, and only that.
.PHONY: demo test test-long bench bench-servers test-core test-msrv test-miri test-fuzz test-coord test-service test-c test-python test-node test-wasm test-chaos test-cross test-pg dist test-dist

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

test-core:
	bash scripts/test-all.sh core:scripts/test-core.sh
test-miri:
	bash scripts/test-all.sh miri:scripts/test-miri.sh
test-service:
	bash scripts/test-all.sh service:service/test.sh
test-coord:
	bash scripts/test-all.sh coord:coord/test.sh
test-c:
	bash scripts/test-all.sh c:bindings-c/test.sh
# The PostgreSQL extension (pg/) on a throw-away server: install, conformance, 64 backends, kills, restarts.
test-pg:
	bash scripts/test-all.sh pg:pg/test.sh
test-python:
	bash scripts/test-all.sh python:bindings-python/test.sh
test-node:
	bash scripts/test-all.sh node:bindings-node/test.sh
test-wasm:
	bash scripts/test-all.sh wasm:bindings-wasm/test.sh
test-msrv:
	bash scripts/test-all.sh msrv:scripts/test-msrv.sh
test-fuzz:
	bash scripts/test-all.sh fuzz:scripts/test-fuzz.sh
# Real servers, real faults (scripts/chaos.sh; reuses the python and node stages' builds: run them first).
test-chaos:
	bash scripts/test-all.sh chaos:scripts/chaos.sh
test-cross:
	bash scripts/test-all.sh cross:scripts/cross.sh
test-dist:
	bash scripts/test-all.sh dist:scripts/test-dist.sh
