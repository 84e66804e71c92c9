// SPDX-License-Identifier: MIT
// Fuzz target for one importer, chosen at compile time (LAYOUTLAB_FUZZ_FORMAT): any bytes must give
// requests or a clean Error, never a crash, a hang or an out-of-bounds access. Under --on-error=skip the
// importer reads to the end, so every line of the input is exercised.
//
// The Twitter importer parses most lines on a fast path and leaves the rest to its general parser, and
// a line ended by "\r\n" always goes to the general one: there, the same input with its "\n"s made
// "\r\n"s must import exactly alike (the process aborts if not, which libFuzzer reports).

#include "fuzz_input_file.h"
#include "layoutlab/import/importer.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Imported {
    std::vector<layoutlab::Request> requests;
    std::optional<std::string> error;
    layoutlab::RejectReport rejects;
};

Imported importAll(const std::string& path) {
    layoutlab::ImportOptions options;
    options.format = LAYOUTLAB_FUZZ_FORMAT;
    options.onError = layoutlab::OnError::Skip;
    Imported out;
    auto importer = layoutlab::openImporter(path, options);
    if (!importer) {
        out.error = importer.error().describe();
        return out;
    }
    std::vector<layoutlab::Request> batch(61);
    for (int rounds = 0; rounds < 1000000; ++rounds) {
        auto n = (*importer)->read(batch);
        if (!n)
            out.error = n.error().describe();
        if (!n || *n == 0)
            break;
        out.requests.insert(out.requests.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*n));
    }
    out.rejects = (*importer)->rejects();
    return out;
}

bool sameImport(const Imported& a, const Imported& b) {
    return a.requests == b.requests && a.error == b.error && a.rejects.total == b.rejects.total
        && a.rejects.byReason == b.rejects.byReason && a.rejects.examples == b.rejects.examples;
}

// Inputs whose "\r\n" copy must import alike: text without "\r" (which the two endings would treat
// differently), not zstd (whose bytes would change meaning), and far below the 1 MiB line limit (which
// the "\r" counts towards).
bool comparableWithCrlf(std::string_view text) {
    constexpr std::string_view kZstdMagic("\x28\xb5\x2f\xfd", 4);
    return text.find('\r') == std::string_view::npos && text.substr(0, 4) != kZstdMagic && text.size() < (1 << 19);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const FuzzInputFile input(LAYOUTLAB_FUZZ_FORMAT);
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const Imported imported = importAll(input.write(data, size));
    if (std::string_view(LAYOUTLAB_FUZZ_FORMAT) == "twitter" && comparableWithCrlf(text)) {
        std::string crlf;
        for (const char c : text) {
            if (c == '\n')
                crlf += '\r';
            crlf += c;
        }
        if (!sameImport(imported, importAll(input.write(crlf.data(), crlf.size()))))
            std::abort();
    }
    return 0;
}
