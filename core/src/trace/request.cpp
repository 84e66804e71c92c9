// SPDX-License-Identifier: MIT
#include "layoutlab/trace/request.h"
#include "layoutlab/enum_names.h"

namespace layoutlab {

std::string_view opName(Op op) {
    static constexpr std::array<std::string_view, 13> kNames { "get", "set", "add", "replace", "append", "prepend",
        "incr", "decr", "delete", "expire", "persist", "other", "setrange" };
    static_assert(static_cast<std::size_t>(Op::SetRange) == kNames.size() - 1, "a name for every value");
    return enumName(op, kNames);
}

} // namespace layoutlab
