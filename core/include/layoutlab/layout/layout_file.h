// SPDX-License-Identifier: MIT
#pragma once

// Layout files: a layout described in TOML (docs/layout-files.md), read into a LayoutDefinition and
// checked whole before anything runs. A malformed file is refused with its line, the field and why:
// unknown fields, negative sizes, an embed rule that can never hold, cyclic pointers, names that refer
// to nothing.

#include "layoutlab/expected.h"
#include "layoutlab/layout/declared_layout.h"

#include <string>
#include <string_view>

namespace layoutlab {

// Limits on a layout file, far above any engine's object (a handful of allocations of a dozen fields):
// a file beyond them is refused at once rather than validated at length.
inline constexpr std::size_t kMaxLayoutFileBytes = std::size_t { 1 } << 20;
inline constexpr std::size_t kMaxLayoutAllocations = 64;
inline constexpr std::size_t kMaxLayoutFields = 256;

// Parses a layout file's text; `path` names it in errors and in the layout's spec.
Expected<LayoutDefinition> parseLayoutDefinition(std::string_view text, const std::string& path);

// Reads and parses a layout file.
Expected<LayoutPtr> loadLayoutFile(const std::string& path);

// The spec --layout takes for a layout file ("file:PATH"), and the path of such a spec (empty if it is not
// one). A spec may carry "#HASH" after the path (DeclaredLayout::spec()); it is ignored when reading.
std::string layoutFileSpec(const std::string& path);
std::string layoutFilePath(std::string_view spec);
// A layout as shown where room is short: a layout file by its file name and content hash
// ("what-if.toml (layout file, content 1a2b...)"), any other spec as it is.
std::string layoutLabel(std::string_view spec);

} // namespace layoutlab
