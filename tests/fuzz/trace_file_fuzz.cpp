// SPDX-License-Identifier: MIT
// Fuzz target for the binary trace reader: any bytes must give either requests or a clean Error,
// never a crash, a hang or an out-of-bounds read. Statistics counted from the columns of a version-2
// trace must equal those counted from its requests, or fail with the same error. Built as a libFuzzer target with clang
// (-DLAYOUTLAB_BUILD_FUZZERS=ON); otherwise run over the corpus by fuzz_corpus_main.cpp as a test.

#include "fuzz_input_file.h"
#include "layoutlab/import/import_stats.h"
#include "layoutlab/trace/trace_file.h"

#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const FuzzInputFile input("trace-file"); // the reader seeks to the trailer, so it needs a file
    // Inputs that start like a trace are used as they are (header and trailer checks). Anything else
    // becomes the record section of an otherwise well-formed file, so the record decoders are reached:
    // the first byte's low bit picks the format version (1 varint records, 2 blocks), the rest the
    // record count.
    std::string bytes(reinterpret_cast<const char*>(data), size);
    if (bytes.rfind("LLTRACE", 0) != 0 && size > 0) {
        const std::uint64_t records = data[0] >> 1;
        const char version = (data[0] & 1) ? '\x02' : '\x01';
        std::string file("LLTRACE\0", 8);
        file += std::string(1, version) + std::string("\0\0\0", 3) + std::string(20, '\0');
        file += bytes.substr(1);
        std::string trailer("LLTREND\0", 8);
        auto u64 = [&trailer](std::uint64_t v) {
            for (int i = 0; i < 8; ++i)
                trailer.push_back(static_cast<char>(v >> (8 * i)));
        };
        u64(records);
        u64(1000);
        u64(size - 1);
        bytes = file + trailer;
    }
    const std::string path = input.write(bytes.data(), bytes.size());
    auto reader = layoutlab::TraceFileReader::open(path);
    if (!reader)
        return 0;
    // The statistics of its requests, or the error that ended them. A trailer may promise key ids up to
    // 2^32, whose seen-key bitmap takes 512 MiB: one collector at a time.
    const std::string byRequests = [&reader] {
        layoutlab::StatsCollector stats(**reader);
        std::vector<layoutlab::Request> batch(97);
        for (int rounds = 0; rounds < 100000; ++rounds) {
            auto n = stats.read(batch);
            if (!n)
                return n.error().describe();
            if (*n == 0)
                break;
        }
        return layoutlab::toJson(stats.stats()).dump();
    }();
    if ((*reader)->version() < 2)
        return 0; // version 1 has no columns
    auto again = layoutlab::TraceFileReader::open(path);
    auto fromColumns = layoutlab::countTraceColumns(**again, false, nullptr);
    const std::string byColumns = fromColumns ? layoutlab::toJson(*fromColumns).dump() : fromColumns.error().describe();
    if (byColumns != byRequests)
        std::abort(); // counted from the columns, the trace told something else
    return 0;
}
