# Convenience front end over CMake presets. `make run` and `make test` work on a fresh
# Debian/Ubuntu machine (as root they install the missing packages).
PRESET ?= host
NP ?= 4
ARGS ?=
JOBS ?= $(shell nproc)
BUILD := build/$(PRESET)

.PHONY: deps configure build run test sanitize bench cuda clean

deps:
	@scripts/install-deps.sh
	@scripts/install-test-python.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

# The default problem (rocket rig, low order) on $(NP) ranks. Extra options: make run ARGS="-n 256".
run: build
	scripts/mpirun.sh $(NP) $(BUILD)/beatnik $(ARGS)

test: build
	ctest --preset $(PRESET) -j $(JOBS) $(CTEST_ARGS)

# The unit and MPI tests under AddressSanitizer + UndefinedBehaviorSanitizer (.ci/run runs it;
# leaks inside the MPI library are suppressed by .ci/lsan.supp, nothing else is).
sanitize: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS) $(CTEST_ARGS)

bench: build
	bench/low_order_bench.py --beatnik $(BUILD)/beatnik $(BENCH_ARGS)

cuda:
	@$(MAKE) build PRESET=cuda

clean:
	rm -rf build
