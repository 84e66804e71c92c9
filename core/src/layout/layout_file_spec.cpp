// SPDX-License-Identifier: MIT
// How a layout file is named in specs and labels (layout_file.h).
#include "layoutlab/layout/layout_file.h"

#include <filesystem>
#include <fmt/format.h>

namespace layoutlab {

std::string layoutFileSpec(const std::string& path) {
    return "file:" + path;
}

std::string layoutFilePath(std::string_view spec) {
    if (spec.substr(0, 5) != "file:")
        return {};
    spec.remove_prefix(5);
    // DeclaredLayout::spec() appends "#" and 16 hex digits of the file's hash.
    const auto hash = spec.rfind('#');
    if (hash != std::string_view::npos && spec.size() - hash == 17
        && spec.substr(hash + 1).find_first_not_of("0123456789abcdef") == std::string_view::npos)
        spec = spec.substr(0, hash);
    return std::string(spec);
}

std::string layoutLabel(std::string_view spec) {
    const auto file = layoutFilePath(spec);
    if (file.empty())
        return std::string(spec);
    const auto name = std::filesystem::path(file).filename().string();
    const auto hash = spec.rfind('#');
    if (hash == std::string_view::npos || spec.size() - hash != 17)
        return name + " (layout file)";
    return fmt::format("{} (layout file, content {})", name, spec.substr(hash + 1));
}

} // namespace layoutlab
