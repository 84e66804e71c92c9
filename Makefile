# layoutlab quick start. `make demo` and `make test` work on a fresh Debian 12 machine:
# they install what is missing (scripts/install-deps), configure, build, then run.
PRESET ?= dev
BUILD_DIR := build
JOBS ?= $(shell nproc)

.PHONY: all deps configure build demo test bench clean

all: build

deps:
	@scripts/install-deps

configure: deps
	@cmake --preset $(PRESET) >/dev/null || cmake --preset $(PRESET)

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

# The main job: threshold sweeps on the bundled datasets, trade-off tables on stdout, reports in build/demo/.
demo: build
	@scripts/demo $(BUILD_DIR)

test: build
	@ctest --preset $(PRESET) -j $(JOBS)

bench: build
	@bench/run-benchmarks.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
