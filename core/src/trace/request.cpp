// SPDX-License-Identifier: MIT
#include "layoutlab/trace/request.h"
#include "layoutlab/enum_names.h"

#include <charconv>

namespace layoutlab {

std::string_view opName(Op op) {
    static constexpr std::array<std::string_view, kOpCount> kNames { "get", "set", "add", "replace", "append",
        "prepend", "incr", "decr", "delete", "expire", "persist", "other", "setrange", "element", "resize", "rename" };
    static_assert(static_cast<std::size_t>(Op::Rename) == kNames.size() - 1, "a name for every value");
    return enumName(op, kNames);
}

std::string_view collectionKindName(CollectionKind kind) {
    static constexpr std::array<std::string_view, 4> kNames { "hash", "set", "zset", "list" };
    static_assert(static_cast<std::size_t>(CollectionKind::List) == kNames.size() - 1, "a name for every value");
    return enumName(kind, kNames);
}

std::string_view elementActionName(ElementAction action) {
    static constexpr std::array<std::string_view, kElementActionCount> kNames { "add", "update", "remove", "read",
        "command", "load", "size" };
    static_assert(static_cast<std::size_t>(ElementAction::Size) == kNames.size() - 1, "a name for every value");
    return enumName(action, kNames);
}

IntegerClass integerClassOf(std::string_view value) {
    if (!isIntegerKind(valueKindOf(value)))
        return IntegerClass::None;
    std::int64_t v = 0;
    std::from_chars(value.data(), value.data() + value.size(), v);
    return integerClassOf(v);
}

} // namespace layoutlab
