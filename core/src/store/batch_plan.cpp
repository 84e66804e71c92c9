// SPDX-License-Identifier: MIT
// A batch plan read from its file (JSON or TOML), and the shard of it a run takes.

#include "layoutlab/layout/layout_file.h"
#include "layoutlab/output_file.h"
#include "layoutlab/store/batch_job.h"
#include "layoutlab/toml_json.h"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

namespace layoutlab {

namespace {

Error planError(const std::string& path, const std::string& what) {
    Error e = usageError(what, field::kPlan);
    e.file = path;
    return e;
}

std::vector<std::string> stringList(
    const nlohmann::json& j, const char* name, bool required, const std::string& path, std::optional<Error>& error) {
    std::vector<std::string> out;
    if (!j.contains(name)) {
        if (required)
            error = planError(path, fmt::format("field {} is missing (a list of strings)", name));
        return out;
    }
    const auto& v = j[name];
    if (!v.is_array() || v.empty()) {
        error = planError(path, fmt::format("field {} must be a non-empty list of strings", name));
        return out;
    }
    for (const auto& item : v) {
        if (!item.is_string()) {
            error = planError(path, fmt::format("field {}: every entry must be a string", name));
            return {};
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

// A plan in JSON, or in TOML (a .toml file) with the same fields.
Expected<nlohmann::json> readPlanDocument(const std::string& path) {
    // A plan names a few hundred cells at most: 4 MiB is far beyond any, and /dev/zero is refused quickly.
    auto text = readSmallFile(path, std::size_t { 4 } << 20, "plan");
    if (!text)
        return text.error();
    if (std::filesystem::path(path).extension() == ".toml")
        return parseTomlAsJson(*text, path);
    try {
        return nlohmann::json::parse(*text, nullptr, true, true); // comments allowed
    } catch (const nlohmann::json::parse_error& e) {
        Error err = dataError(fmt::format("not a JSON plan: {}", e.what()));
        err.file = path;
        err.offset = e.byte;
        err.hasOffset = true;
        return err;
    }
}

} // namespace

Expected<BatchPlan> readBatchPlan(const std::string& path) {
    auto document = readPlanDocument(path);
    if (!document)
        return document.error();
    const nlohmann::json& j = *document;
    if (!j.is_object())
        return planError(path, "a plan is a JSON object or a TOML document (see datasets/plans/)");
    static const std::set<std::string> known { "traces", "layouts", "layout_files", "allocators", "thresholds", "cache",
        "cache_geometry", "slabs", "format", "on_error", "key_size", "comment" };
    for (const auto& [name, value] : j.items())
        if (!known.contains(name))
            return planError(path, fmt::format("unknown field '{}'", name));
    std::optional<Error> error;
    const auto traces = stringList(j, "traces", true, path, error);
    auto layouts = stringList(j, "layouts", !j.contains("layout_files"), path, error);
    const auto layoutFiles = stringList(j, "layout_files", false, path, error);
    auto allocators = stringList(j, "allocators", false, path, error);
    if (error)
        return *error;
    if (allocators.empty())
        allocators.push_back(""); // each layout's engine default
    BatchPlan plan;
    plan.path = path;
    try {
        plan.thresholds = j.value("thresholds", std::string("16:512:16"));
        plan.cache = j.value("cache", false);
        plan.cacheGeometry = j.value("cache_geometry", std::string());
        plan.slabs = j.value("slabs", false);
        auto importOptions = importOptionsFrom(
            j.value("format", std::string("auto")), j.value("on_error", std::string("fail")), j.value("key_size", 16u));
        if (!importOptions)
            return planError(path, importOptions.error().message);
        plan.importOptions = *importOptions;
    } catch (const nlohmann::json::exception& e) {
        return planError(path, fmt::format("a field holds a value of the wrong type: {}", e.what()));
    }
    const auto base = std::filesystem::path(path).parent_path();
    auto relative = [&base](const std::string& p) {
        return std::filesystem::path(p).is_absolute() ? p : (base / p).lexically_normal().string();
    };
    for (const auto& file : layoutFiles)
        layouts.push_back(layoutFileSpec(relative(file))); // relative to the plan, as traces are
    for (const auto& trace : traces)
        for (const auto& layout : layouts)
            for (const auto& allocator : allocators) {
                BatchCell c;
                c.index = plan.cells.size();
                c.trace = relative(trace);
                c.layout = layout;
                c.allocator = allocator;
                plan.cells.push_back(std::move(c));
            }
    return plan;
}

Expected<BatchShard> parseBatchShard(const std::string& text) {
    unsigned long i = 0, n = 0;
    char slash = 0;
    if (std::sscanf(text.c_str(), "%lu%c%lu", &i, &slash, &n) != 3 || slash != '/' || n == 0 || i >= n)
        return usageError(
            fmt::format("a shard is I/N with 0 <= I < N (e.g. 0/4 .. 3/4), got '{}'", text), field::kShard);
    return BatchShard { static_cast<std::size_t>(i), static_cast<std::size_t>(n) };
}

} // namespace layoutlab
