// SPDX-License-Identifier: MIT
// Fuzz target for one importer, chosen at compile time (LAYOUTLAB_FUZZ_FORMAT): any bytes must give
// requests or a clean Error, never a crash, a hang or an out-of-bounds access. Under --on-error=skip the
// importer reads to the end, so every line of the input is exercised.

#include "fuzz_input_file.h"
#include "layoutlab/import/importer.h"

#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const FuzzInputFile input(LAYOUTLAB_FUZZ_FORMAT);
    layoutlab::ImportOptions options;
    options.format = LAYOUTLAB_FUZZ_FORMAT;
    options.onError = layoutlab::OnError::Skip;
    auto importer = layoutlab::openImporter(input.write(data, size), options);
    if (importer) {
        std::vector<layoutlab::Request> batch(61);
        for (int rounds = 0; rounds < 1000000; ++rounds) {
            auto n = (*importer)->read(batch);
            if (!n || *n == 0)
                break;
        }
    }
    return 0;
}
