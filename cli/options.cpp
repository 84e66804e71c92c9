// SPDX-License-Identifier: MIT
// The options several commands share, and what they turn into: trace source options, the layout
// options.
#include "commands.h"

#include "layoutlab/layout/layout_file.h"
#include "layoutlab/sim/simulation.h"

#include <fmt/format.h>

namespace layoutlab::cli {

Expected<ImportOptions> TraceSourceOptions::toImportOptions() const {
    return importOptionsFrom(format, onError, keyBytes);
}

void TraceSourceOptions::addTo(CLI::App& command) {
    command
        .add_option("--format", format,
            "Trace format: auto (detect from the content), layoutlab, twitter, cachelib, oracle, monitor, mc-watch, "
            "mc-metadump, rdb-csv, rdb")
        ->capture_default_str();
    command.add_option("--on-error", onError, "Bad input lines: fail (stop at the first) or skip (count and go on)")
        ->capture_default_str();
    command.add_option("--key-size", keyBytes, "oracle traces: bytes of each object's size that are its key")
        ->capture_default_str();
}

void addTraceArgument(CLI::App& command, std::string& trace) {
    command.add_option("trace", trace, "Trace: a layoutlab trace, or any importable format (see `import`)")->required();
}

void addCollectionLimitOptions(CLI::App& command, CollectionLimits& limits) {
    auto limit = [&](const char* name, auto& field) {
        command.add_option(name, field, "the engine's limit (config.c default shown)")
            ->capture_default_str()
            ->group("Collection limits");
    };
    limit("--hash-max-listpack-entries", limits.hashMaxListpackEntries);
    limit("--hash-max-listpack-value", limits.hashMaxListpackValue);
    limit("--set-max-intset-entries", limits.setMaxIntsetEntries);
    limit("--set-max-listpack-entries", limits.setMaxListpackEntries);
    limit("--set-max-listpack-value", limits.setMaxListpackValue);
    limit("--zset-max-listpack-entries", limits.zsetMaxListpackEntries);
    limit("--zset-max-listpack-value", limits.zsetMaxListpackValue);
    limit("--list-max-listpack-size", limits.listMaxListpackSize);
}

void addJsonAndOutput(CLI::App& command, bool& json, std::string& output, const std::string& jsonHelp) {
    command.add_flag("--json", json, jsonHelp);
    command.add_option("-o,--output", output, "Write the output to this file instead of stdout");
}

void addLayoutOptions(
    CLI::App& command, std::string& layout, const std::string& help, std::vector<std::string>* every) {
    auto* byName = command.add_option("--layout", layout, help);
    if (!layout.empty())
        byName->capture_default_str();
    auto* byFile = command
                       .add_option_function<std::string>(
                           "--layout-file",
                           [&layout, every](const std::string& path) {
                               layout = layoutFileSpec(path);
                               if (every)
                                   every->push_back(layout);
                           },
                           "A layout described in a file instead of --layout (TOML: docs/layout-files.md; examples in "
                           "datasets/layouts/)")
                       ->check(CLI::ExistingFile);
    if (every) {
        // Several layouts side by side: the --layout values in order, then the --layout-file ones (CLI11
        // runs the options' callbacks in the order they are defined).
        byName->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->each([every](const std::string& value) {
            every->push_back(value);
        });
        byFile->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        return;
    }
    byName->excludes(byFile);
}

Status requireLayout(const std::string& layout) {
    if (layout.empty())
        return usageError(
            "a layout is required: --layout NAME (see `layoutlab layouts`) or --layout-file FILE", "--layout");
    return Ok {};
}

} // namespace layoutlab::cli
