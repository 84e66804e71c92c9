// SPDX-License-Identifier: MIT
// Fuzz target for layout files: any text must give either a checked layout or a clean Error, and a
// layout that passed the checks must describe any key shape under its allocators without crashing.
// Built as a libFuzzer target with clang (-DLAYOUTLAB_BUILD_FUZZERS=ON); otherwise run over the corpus
// by fuzz_corpus_main.cpp as a test.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_file.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto definition = layoutlab::parseLayoutDefinition(text, "fuzz.toml");
    if (!definition)
        return 0;
    const layoutlab::DeclaredLayout layout(*definition);
    for (const char* spec : { "jemalloc:quantum=8,page=4096", "glibc", "memcached:min=48,factor=1.25",
             "memcached:chunk-max=16384,item-max=1048576" }) {
        auto allocator = layoutlab::parseAllocator(spec);
        if (!allocator || !layout.checkAllocator(**allocator))
            continue;
        for (const std::uint32_t k : { 1u, 16u, 200u, 70000u })
            for (const std::uint32_t v : { 0u, 5u, 100u, 300u, 20000u, 600000u, 5000000u })
                for (const bool ttl : { false, true })
                    for (const std::uint32_t threshold : { 0u, 64u, 128u, 1024u })
                        layout.describe(
                            { k, v, ttl, v < 20 ? layoutlab::ValueKind::Integer : layoutlab::ValueKind::String },
                            threshold, **allocator);
    }
    return 0;
}
