// SPDX-License-Identifier: MIT
// How a layout file is named in specs and labels (layout_file.h).
#include "layoutlab/layout/layout_file.h"

#include <filesystem>
#include <fmt/format.h>

namespace layoutlab {

std::string layoutFileSpec(const std::string& path) {
    return "file:" + path;
}

namespace {
// A layout file's spec split into its path and the content hash DeclaredLayout::spec() appends ("#" and 16
// hex digits; empty when absent). Not a layout file's spec: both empty.
std::pair<std::string_view, std::string_view> splitFileSpec(std::string_view spec) {
    if (spec.substr(0, 5) != "file:")
        return {};
    spec.remove_prefix(5);
    const auto hash = spec.rfind('#');
    if (hash != std::string_view::npos && spec.size() - hash == 17
        && spec.substr(hash + 1).find_first_not_of("0123456789abcdef") == std::string_view::npos)
        return { spec.substr(0, hash), spec.substr(hash + 1) };
    return { spec, {} };
}
} // namespace

std::string layoutFilePath(std::string_view spec) {
    return std::string(splitFileSpec(spec).first);
}

std::string layoutLabel(std::string_view spec) {
    const auto [file, hash] = splitFileSpec(spec);
    if (file.empty())
        return std::string(spec);
    const auto name = std::filesystem::path(file).filename().string();
    return hash.empty() ? name + " (layout file)" : fmt::format("{} (layout file, content {})", name, hash);
}

} // namespace layoutlab
