// SPDX-License-Identifier: MIT
#pragma once

// TOML read as the JSON value it stands for (tables are objects, arrays arrays), so that a file format
// defined over JSON (batch plans) accepts TOML with the same fields and checks.

#include "layoutlab/expected.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace layoutlab {

// A TOML document as JSON; a syntax error names the file and line.
Expected<nlohmann::json> parseTomlAsJson(std::string_view text, const std::string& path);

} // namespace layoutlab
