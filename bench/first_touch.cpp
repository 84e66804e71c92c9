// SPDX-License-Identifier: MIT
// How much memory costs the first time it is touched, on this host: fills a fresh anonymous mapping,
// advised as huge pages like the importer's key table (GrowableMemory), twice and prints both times. On
// a VM whose host backs guest memory lazily, the first fill is many times slower than the second
// (docs/performance.md, "a key table that grows in place").
// Usage: layoutlab_first_touch [MIB]   (128 by default)

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

int main(int argc, char** argv) {
    const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 128;
    const std::size_t bytes = mib << 20;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        return 1;
    }
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    auto fillMs = [&](int value) {
        const auto start = std::chrono::steady_clock::now();
        std::memset(p, value, bytes);
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    const double first = fillMs(1), second = fillMs(2);
    std::printf("%zu MiB: first fill %.1f ms (%.2f ms per MiB), second fill %.1f ms\n", mib, first,
        first / static_cast<double>(mib), second);
    munmap(p, bytes);
    return 0;
}
