// SPDX-License-Identifier: MIT
#pragma once

// An enum value's name from the names listed in the enum's order (its values 0, 1, 2, ...): one table per
// enum instead of a switch per name function. `kNames.size()` must be the enum's value count, which each
// table's static_assert checks against the enum's last value.

#include <array>
#include <cstddef>
#include <string_view>

namespace layoutlab {

template <class Enum, std::size_t N>
constexpr std::string_view enumName(Enum value, const std::array<std::string_view, N>& names,
    std::string_view unknown = "?") {
    const auto index = static_cast<std::size_t>(value);
    return index < N ? names[index] : unknown;
}

} // namespace layoutlab
