# Entry points for people and CI. `make demo` sets a fresh Debian 12 machine up and runs the local
# demo; `make test` runs every test (unit tests under ASan+UBSan, integration tests against the
# real service stack, which the tests bring up and down themselves).
SHELL := /bin/bash
RELEASE_DIR := build/release
SANITIZE_DIR := build/sanitize
CMAKE_FLAGS := -G Ninja -DBUILD_TESTING=ON
CTEST_FLAGS := --output-on-failure --no-tests=error

.PHONY: bench demo drills setup build build-sanitize test unit-test simulation-test integration-test services-up services-down format clean fuzz simulate

demo: setup build
	./scripts/services up
	$(RELEASE_DIR)/src/cli/binberg smoke
	./scripts/demo
	$(RELEASE_DIR)/src/cli/binberg drill run all --quick
	$(RELEASE_DIR)/src/cli/binberg report --out report

# Every drill at full size (100,000 row events each) on the drill stack; records in runs/.
drills: build
	$(RELEASE_DIR)/src/cli/binberg drill run all

setup:
	./scripts/setup

$(RELEASE_DIR)/build.ninja:
	cmake -S . -B $(RELEASE_DIR) $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=RelWithDebInfo

$(SANITIZE_DIR)/build.ninja:
	cmake -S . -B $(SANITIZE_DIR) $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=Sanitize

build: $(RELEASE_DIR)/build.ninja
	cmake --build $(RELEASE_DIR)

# Only the unit tests run under the sanitizers, so only they are built there.
build-sanitize: $(SANITIZE_DIR)/build.ninja
	cmake --build $(SANITIZE_DIR) --target unit_tests

test: unit-test simulation-test integration-test

unit-test: build-sanitize
	ctest --test-dir $(SANITIZE_DIR) -L unit $(CTEST_FLAGS) -j2

# The replicator's simulation in the release build, where a seed costs a seventh of what it does
# under ASan (unit-test runs its first 300 there).
simulation-test: build
	ctest --test-dir $(RELEASE_DIR) -R '^ReplicatorSimulation\.' $(CTEST_FLAGS)

integration-test: build
	ctest --test-dir $(RELEASE_DIR) -L integration $(CTEST_FLAGS)

services-up:
	./scripts/services up

services-down:
	./scripts/services down

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf build

# `make bench` needs the demo stack up (make services-up).
bench: build
	$(RELEASE_DIR)/bench/decode_bench --dir $${BINBERG_SERVICES_DIR:-.services}
	$(RELEASE_DIR)/bench/snapshot_bench --dir $${BINBERG_SERVICES_DIR:-.services}
	$(RELEASE_DIR)/bench/avro_bench
	$(RELEASE_DIR)/bench/table_bench
	.venv/bin/python bench/path_a_bench.py
	.venv/bin/python bench/path_b_bench.py --events 300000 --repeat 3

# The deterministic simulations of the sink and of path A's replicator at length
# (tests/support/simulation.h); `make test` runs the first 1,000 seeds of each (the sink's under
# ASan, the replicator's in the release build and its first 300 under ASan too).
SIMULATION_SEEDS ?= 100000
simulate: $(RELEASE_DIR)/build.ninja
	cmake --build $(RELEASE_DIR) --target sink_unit_tests replicate_unit_tests
	BINBERG_SIMULATION_SEEDS=$(SIMULATION_SEEDS) $(RELEASE_DIR)/tests/sink/sink_unit_tests --gtest_filter='SinkSimulation.*'
	BINBERG_SIMULATION_SEEDS=$(SIMULATION_SEEDS) $(RELEASE_DIR)/tests/replicate/replicate_unit_tests \
	  --gtest_filter='ReplicatorSimulation.Every*'

# libFuzzer targets (clang) built in build/fuzz and run for FUZZ_SECONDS each; see docs/fuzzing.md.
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run
