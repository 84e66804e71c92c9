// SPDX-License-Identifier: MIT
#include "layoutlab/toml_json.h"

#include <fmt/format.h>
#include <sstream>
#include <toml++/toml.h>

namespace layoutlab {

Expected<nlohmann::json> parseTomlAsJson(std::string_view text, const std::string& path) {
    try {
        const toml::table root = toml::parse(text, path);
        std::ostringstream json;
        json << toml::json_formatter { root };
        return nlohmann::json::parse(json.str());
    } catch (const toml::parse_error& e) {
        return dataErrorAtLine(fmt::format("not valid TOML: {}", e.description()), path, e.source().begin.line);
    } catch (const nlohmann::json::exception& e) {
        return dataError(fmt::format("TOML that has no JSON form: {}", e.what()), path);
    }
}

} // namespace layoutlab
