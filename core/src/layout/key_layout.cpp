// SPDX-License-Identifier: MIT
#include "layoutlab/layout/key_layout.h"
#include "layoutlab/enum_names.h"

namespace layoutlab {

std::string_view encodingName(Encoding encoding) {
    static constexpr std::array<std::string_view, 6> kNames { "embstr", "raw", "int", "shared-int", "item", "chunked" };
    static_assert(static_cast<std::size_t>(Encoding::ChunkedItem) == kNames.size() - 1, "a name for every value");
    return enumName(encoding, kNames);
}

std::string_view purposeName(Purpose purpose) {
    static constexpr std::array<std::string_view, 8> kNames { "object", "key", "value", "dict-entry", "expire-entry",
        "item", "item-header", "item-chunk" };
    static_assert(static_cast<std::size_t>(Purpose::ItemChunk) == kNames.size() - 1, "a name for every value");
    return enumName(purpose, kNames);
}

} // namespace layoutlab
