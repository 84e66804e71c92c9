// SPDX-License-Identifier: MIT
// Micro-benchmarks of the simulation core. Run: build/bench/layoutlab_bench
//   BM_DecodeTrace      reading layoutlab's binary trace format (requests/s)
//   BM_DecodeTraceUnchecked  the same trace as format version 2 (no checksums): what verifying costs
//   BM_Replay           replaying an in-memory trace through the valkey layout, one threshold
//   BM_Sweep/N          the same with N thresholds: the cost must stay close to BM_Replay
//   BM_SimLargeKeyspace/K  `sim` of a binary trace over K distinct keys (10M requests), decoding included:
//                       the key-state array outgrows the host's caches (issue 7's 1M and 5M keys)
//   BM_SizeClassLookup  jemalloc size-class rounding

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/memory_trace.h"
#include "layoutlab/trace/trace_file.h"

#include <benchmark/benchmark.h>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace layoutlab;

namespace {

constexpr std::uint64_t kKeys = 200000;
constexpr std::uint64_t kOps = 1800000;

GeneratorConfig mixedConfig() {
    auto c = makeGeneratorConfig(
        kKeys, kOps, "lognormal:3.3:0.45:6:200", "lognormal:4.3:1.2:1:100000", 0.2, 0.05, 0.8, 0.02, "zipf:0.99", 3);
    return *c;
}

const std::vector<Request>& requests() {
    static const std::vector<Request> all = [] {
        SyntheticTrace trace(mixedConfig());
        std::vector<Request> out(trace.totalRequests());
        std::size_t at = 0;
        while (at < out.size()) {
            auto n = trace.read(std::span<Request>(out.data() + at, out.size() - at));
            at += *n;
        }
        return out;
    }();
    return all;
}

std::string traceFile() {
    static const std::string path = [] {
        const auto p = (std::filesystem::temp_directory_path() / "layoutlab-bench.lltrace").string();
        SyntheticTrace trace(mixedConfig());
        (void)writeTrace(trace, p);
        return p;
    }();
    return path;
}

// traceFile() rewritten as format version 2: the same blocks with their checksums zeroed, the version
// field 2 and the trailer's checksum dropped. The reader then decodes the same bytes without verifying.
std::string uncheckedTraceFile() {
    static const std::string path = [] {
        std::ifstream in(traceFile(), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        bytes[8] = 2;
        const std::size_t trailerAt = bytes.size() - 40;
        for (std::size_t at = 32; at < trailerAt;) {
            std::uint32_t payload = 0;
            std::memcpy(&payload, bytes.data() + at + 4, 4);
            std::memset(bytes.data() + at + 28, 0, 4);
            at += 32 + payload;
        }
        bytes.resize(bytes.size() - 8);
        const auto p = (std::filesystem::temp_directory_path() / "layoutlab-bench-v2.lltrace").string();
        std::ofstream(p, std::ios::binary) << bytes;
        return p;
    }();
    return path;
}

void decodeWhole(benchmark::State& state, const std::string& path) {
    std::vector<Request> batch(4096);
    for (auto _ : state) {
        auto reader = TraceFileReader::open(path);
        std::uint64_t total = 0;
        while (true) {
            auto n = (*reader)->read(batch);
            if (!n || *n == 0)
                break;
            total += *n;
        }
        benchmark::DoNotOptimize(total);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * (kKeys + kOps)));
}

void BM_DecodeTrace(benchmark::State& state) {
    decodeWhole(state, traceFile());
}
BENCHMARK(BM_DecodeTrace)->Unit(benchmark::kMillisecond);

void BM_DecodeTraceUnchecked(benchmark::State& state) {
    decodeWhole(state, uncheckedTraceFile());
}
BENCHMARK(BM_DecodeTraceUnchecked)->Unit(benchmark::kMillisecond);

void runSimulation(benchmark::State& state, std::vector<std::uint32_t> thresholds) {
    const auto& all = requests();
    auto layout = parseLayout("valkey-9.1");
    auto alloc = parseAllocator("jemalloc:quantum=8,page=4096");
    MemoryTrace trace(all);
    for (auto _ : state) {
        trace.rewind();
        auto result = simulate({ *layout, *alloc, thresholds }, trace);
        benchmark::DoNotOptimize(result->points.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * all.size()));
}

void BM_Replay(benchmark::State& state) {
    runSimulation(state, { 128 });
}
BENCHMARK(BM_Replay)->Unit(benchmark::kMillisecond);

void BM_Sweep(benchmark::State& state) {
    std::vector<std::uint32_t> thresholds;
    for (std::int64_t i = 0; i < state.range(0); ++i)
        thresholds.push_back(static_cast<std::uint32_t>(16 + 16 * i));
    runSimulation(state, thresholds);
}
BENCHMARK(BM_Sweep)->Arg(2)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond);

// A 10M-request binary trace over `keys` keys in the benchmarks' mixed workload, written once.
std::string largeTraceFile(std::uint64_t keys) {
    const auto path
        = (std::filesystem::temp_directory_path() / ("layoutlab-bench-" + std::to_string(keys) + "-keys.lltrace"))
              .string();
    if (!std::filesystem::exists(path)) {
        auto c = makeGeneratorConfig(keys, 10000000 - keys, "lognormal:3.3:0.45:6:200", "lognormal:4.3:1.2:1:100000",
            0.2, 0.05, 0.8, 0.02, "zipf:0.99", 5);
        SyntheticTrace trace(*c);
        (void)writeTrace(trace, path);
    }
    return path;
}

void BM_SimLargeKeyspace(benchmark::State& state) {
    const auto path = largeTraceFile(static_cast<std::uint64_t>(state.range(0)));
    auto layout = parseLayout("valkey-9.1");
    auto alloc = parseAllocator("jemalloc:quantum=8,page=4096");
    std::uint64_t requests = 0;
    for (auto _ : state) {
        auto reader = TraceFileReader::open(path);
        auto result = simulate({ *layout, *alloc, { 128 } }, **reader);
        requests = result->trace.requests;
        benchmark::DoNotOptimize(result->points.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * requests));
}
BENCHMARK(BM_SimLargeKeyspace)->Arg(1000000)->Arg(5000000)->Unit(benchmark::kMillisecond);

void BM_SizeClassLookup(benchmark::State& state) {
    const JemallocModel model(SizeClassParams { 3, 12 });
    std::uint64_t size = 1;
    for (auto _ : state) {
        benchmark::DoNotOptimize(model.usableSize(size));
        size = (size * 7 + 13) & 0xffff;
    }
}
BENCHMARK(BM_SizeClassLookup);

} // namespace
