// SPDX-License-Identifier: MIT
#include "layoutlab/printable.h"

#include <fmt/format.h>

namespace layoutlab {

std::string printable(std::string_view text, bool keepNewlines) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if ((c < 0x20 && c != '\t' && !(keepNewlines && c == '\n')) || c == 0x7f) {
            out += fmt::format("\\x{:02x}", c);
        } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80
            && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
            out += fmt::format("\\xc2\\x{:02x}", static_cast<unsigned char>(text[i + 1])); // a C1 control
            ++i;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

} // namespace layoutlab
