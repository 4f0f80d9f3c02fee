# SPDX-License-Identifier: BSD-3-Clause
# Thin wrapper over meson. The two commands:
#   make test   install dependencies, build, run every test suite
#   make demo   install dependencies, build, run two hosts in network namespaces
# Other targets: deps, build, bench (full benchmark sweeps), test-asan, fuzz, flaky, clean.
BUILD ?= build
MESON_OPTS ?=
SUITES ?= style unit fuzz-smoke sim bench-smoke integration

.PHONY: all deps build test demo bench soak long test-asan fuzz flaky clean

all: build

deps:
	@usertools/sluice-deps

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

test: build
	usertools/sluice-test $(BUILD) $(SUITES)

demo: build
	usertools/sluice-demo $(BUILD)

bench: build
	usertools/sluice-bench $(BUILD)

# Not in CI: SOAK_MINUTES (30) of two daemons through faults and peer restarts.
soak: build
	usertools/sluice-soak $(BUILD)

# Not in CI: the queue-pair matrix between two daemons with LONG_MSGS (100000) per cell.
long: build
	usertools/sluice-long $(BUILD)

# AddressSanitizer and UBSan slow the simulator and the benchmarks about fourfold.
test-asan:
	SLUICE_TEST_TIMEOUT_MULTIPLIER=4 $(MAKE) test BUILD=build-asan \
		MESON_OPTS="-Db_sanitize=address,undefined -Db_lundef=false -Db_lto=false"

# Every libFuzzer target with ASan + UBSan, FUZZ_SECONDS each, from tests/fuzz/corpus.
FUZZ_SECONDS ?= 30
fuzz: deps
	usertools/sluice-fuzz $(FUZZ_SECONDS)

# Flakiness: the integration suite (or only the meson tests in TESTS) REPEAT (5) times, each run's
# log kept, then per test passed/REPEAT as a table and JSON lines. LOAD runs a stress-ng CPU hog
# meanwhile (none by default): PCT of every core, or PCT@CPUS, e.g. LOAD=25@0: a quarter of core 0.
#   make flaky REPEAT=10 LOAD=25@0 TESTS="capture goodput-stall"   (usertools/sluice-test --help)
REPEAT ?= 5
LOAD ?=
TESTS ?=
flaky: build
	usertools/sluice-test $(BUILD) --repeat $(REPEAT) $(if $(LOAD),--load $(LOAD)) \
		$(if $(TESTS),$(addprefix --test ,$(TESTS)),integration)

clean:
	rm -rf $(BUILD) build-asan build-fuzz
