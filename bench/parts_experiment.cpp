// SPDX-License-Identifier: MIT
// An experiment behind a conclusion in docs/performance.md ("what bounds the re-read"): the statistics
// a binary trace's re-read counts, computed with each block decoded and counted on the thread that read
// it, so that decoded requests never pass between cores. Threads take 8 blocks at a time, count ops and
// value sizes, and note each block's ids that are a new maximum within it; the blocks' new keys are then
// merged in file order (with ids in first-appearance order, a block's new keys are its ids at or past
// the key count so far). Ops are counted, not checked against `import --stats`: the figure is the time.
// Usage: layoutlab_parts_experiment TRACE [THREADS]   (2 by default)

#include "trace_block.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace tb = layoutlab::trace_block;
using layoutlab::Request;

namespace {
constexpr std::size_t kTrailerBytes = 32, kFileHeaderBytes = 32, kBlocksATurn = 8;

struct Block {
    std::uint64_t offset;
    std::uint32_t payloadBytes;
};
// An id that is the largest so far within its block, with its key size.
using NewMaximum = std::pair<std::uint32_t, std::uint32_t>;

double msSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s TRACE [THREADS]\n", argv[0]);
        return 1;
    }
    const unsigned threads = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 2;
    const auto start = std::chrono::steady_clock::now();
    const int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        std::perror(argv[1]);
        return 1;
    }
    const auto size = static_cast<std::uint64_t>(lseek(fd, 0, SEEK_END));
    unsigned char trailer[kTrailerBytes];
    if (size < kFileHeaderBytes + kTrailerBytes
        || pread(fd, trailer, kTrailerBytes, static_cast<off_t>(size - kTrailerBytes)) != kTrailerBytes) {
        std::fprintf(stderr, "%s: not a version 2 layoutlab trace\n", argv[1]);
        return 1;
    }
    std::uint64_t keyIdLimit;
    std::memcpy(&keyIdLimit, trailer + 16, 8);
    // Where each block starts: the block headers, read one after another.
    std::vector<Block> blocks;
    for (std::uint64_t at = kFileHeaderBytes; at < size - kTrailerBytes;) {
        unsigned char bytes[tb::kHeaderBytes];
        tb::Header header;
        if (pread(fd, bytes, tb::kHeaderBytes, static_cast<off_t>(at)) != tb::kHeaderBytes
            || tb::parseHeader(bytes, header)) {
            std::fprintf(stderr, "%s: damaged block at offset %llu\n", argv[1], static_cast<unsigned long long>(at));
            return 1;
        }
        blocks.push_back({ at, header.payloadBytes });
        at += tb::kHeaderBytes + header.payloadBytes;
    }
    const double indexMs = msSince(start);

    const auto counting = std::chrono::steady_clock::now();
    std::vector<std::vector<NewMaximum>> newMaxima(blocks.size());
    std::vector<std::array<std::uint64_t, 2 * layoutlab::kOpCount>> opCounts(threads);
    std::vector<std::vector<std::uint64_t>> valueSizes(threads, std::vector<std::uint64_t>(4096));
    std::atomic<std::size_t> next { 0 };
    auto work = [&](unsigned t) {
        std::vector<unsigned char> bytes;
        std::vector<Request> requests(tb::kMaxBlockRecords);
        for (std::size_t first; (first = next.fetch_add(kBlocksATurn)) < blocks.size();) {
            const std::size_t last = std::min(blocks.size(), first + kBlocksATurn);
            const std::uint64_t from = blocks[first].offset;
            const std::uint64_t to = blocks[last - 1].offset + tb::kHeaderBytes + blocks[last - 1].payloadBytes;
            bytes.resize(to - from + tb::kPaddingBytes);
            if (pread(fd, bytes.data(), to - from, static_cast<off_t>(from)) != static_cast<ssize_t>(to - from))
                std::abort();
            for (std::size_t b = first; b < last; ++b) {
                const unsigned char* block = bytes.data() + (blocks[b].offset - from);
                tb::Header header;
                tb::parseHeader(block, header);
                if (tb::decode(header, block + tb::kHeaderBytes, keyIdLimit, requests.data()).reason)
                    std::abort();
                std::uint64_t largest = 0;
                for (std::uint32_t i = 0; i < header.records; ++i) {
                    const Request& r = requests[i];
                    ++opCounts[t][2 * static_cast<unsigned>(r.op) + (r.ttlSeconds != 0)];
                    if (r.valueBytes < 4096)
                        ++valueSizes[t][r.valueBytes];
                    if (i == 0 || r.keyId > largest) {
                        largest = r.keyId;
                        newMaxima[b].emplace_back(r.keyId, r.keyBytes);
                    }
                }
            }
        }
    };
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < threads; ++t)
        helpers.emplace_back(work, t);
    work(0);
    for (auto& helper : helpers)
        helper.join();
    const double countMs = msSince(counting);

    const auto merging = std::chrono::steady_clock::now();
    std::uint64_t distinctKeys = 0;
    bool firstAppearanceOrder = true;
    for (const auto& maxima : newMaxima) {
        auto it
            = std::lower_bound(maxima.begin(), maxima.end(), NewMaximum(static_cast<std::uint32_t>(distinctKeys), 0));
        for (; it != maxima.end() && firstAppearanceOrder; ++it, ++distinctKeys)
            firstAppearanceOrder = it->first == distinctKeys;
    }
    std::printf("%zu blocks, %u threads: index %.1f ms, decode and count %.1f ms, merge %.1f ms, total %.1f ms; "
                "%llu distinct keys%s\n",
        blocks.size(), threads, indexMs, countMs, msSince(merging), msSince(start),
        static_cast<unsigned long long>(distinctKeys),
        firstAppearanceOrder ? "" : " (ids not in first-appearance order)");
    close(fd);
    return 0;
}
