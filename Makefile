# layoutlab quick start. `make demo` and `make test` work on a fresh Debian 12 machine:
# they install what is missing (scripts/install-deps), configure, build, then run.
PRESET ?= dev
BUILD_DIR := build
JOBS ?= $(shell nproc)
# Tests at a time: twice the cores. The integration tests spend most of their time waiting for servers
# to load and settle; the CPU-bound ones (engine builds, valgrind) count their cores (PROCESSORS).
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))

.PHONY: all deps configure build demo test bench fuzz fuzz-ci clean

all: build

deps:
	@scripts/install-deps

configure: deps
	@cmake --preset $(PRESET) >/dev/null || cmake --preset $(PRESET)

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

SHELL := /bin/bash

# The main job: threshold sweeps on the bundled datasets, trade-off tables on stdout, reports in build/demo/.
demo: build
	@scripts/demo $(BUILD_DIR)

test: build
	@ctest --preset $(PRESET) -j $(TEST_JOBS)

bench: build
	@bench/run-benchmarks.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)

# Fuzz every importer, the trace reader and layout files with libFuzzer (clang, ASan + UBSan; the core
# library instrumented too), FUZZ_SECONDS each, starting from the corpora in datasets/fuzz/. `make fuzz-ci`
# is the short run CI does (.ci/run).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := trace_file layout_file twitter cachelib oracle monitor mc-watch mc-metadump rdb-csv rdb
fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLAYOUTLAB_BUILD_FUZZERS=ON -DLAYOUTLAB_BUILD_GUI=OFF -DLAYOUTLAB_WITH_JEMALLOC=OFF \
	  -DLAYOUTLAB_BUILD_BENCH=OFF >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@set -o pipefail; for t in $(FUZZ_TARGETS); do \
	  corpus=datasets/fuzz/$$(echo $$t | tr _ -); \
	  work=build-fuzz/corpus/$$t; mkdir -p $$work; cp $$corpus/* $$work/; \
	  echo "== fuzz_$$t ($(FUZZ_SECONDS) s)"; \
	  log=build-fuzz/fuzz_$$t.log; \
	  if build-fuzz/tests/fuzz/fuzz_$$t $$work -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=4096 \
	    -artifact_prefix=build-fuzz/crash-$$t- >$$log 2>&1; then tail -1 $$log; \
	  else grep -A14 -E '^==[0-9]+==ERROR|runtime error' $$log | head -40; tail -4 $$log; exit 1; fi; \
	done

fuzz-ci:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-10}
