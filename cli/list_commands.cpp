// SPDX-License-Identifier: MIT
#include "commands.h"
#include "layoutlab/layout/layout_file.h"

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/registry.h"
#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/point_metrics.h"
#include "layoutlab/sim/simulation.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab::cli {

namespace {
struct LayoutsOptions {
    std::string layout;
    std::string alloc;
    std::optional<std::uint32_t> threshold;
    std::uint32_t keyBytes = 16;
    std::optional<std::uint32_t> valueBytes;
    bool ttl = false;
    bool integer = false;
    bool json = false;
    // --type hash, set, zset or list: one collection key (layout/collection_layout.h).
    std::string type = "string";
    std::uint64_t entries = 1;
    std::uint32_t elementBytes = 8;
    bool integerElements = false;
    std::uint32_t scoreBytes = 10;
    bool oneByOne = false;
    CollectionLimits limits;
};

int listLayoutsText(bool json) {
    const auto layouts = listLayouts();
    if (json) {
        auto j = nlohmann::json::array();
        for (const auto& l : layouts)
            j.push_back({ { "name", l.name }, { "spec", l.spec }, { "description", l.description },
                { "validation",
                    { { "status", l.validation.measured ? "measured" : "predicted" },
                        { "detail", l.validation.detail } } } });
        fmt::print("{}\n", j.dump(2));
        return kExitOk;
    }
    for (const auto& l : layouts)
        fmt::print("{:<15} {}\n{:<15} {}\n{:<15} {} {}\n\n", l.name, l.description, "", l.spec, "",
            l.validation.measured ? "measured on" : "predicted from source only, not measured:", l.validation.detail);
    fmt::print("Parameters override a preset: --layout valkey-9.1:threshold=96. Explain one key's layout with\n"
               "`layoutlab layouts LAYOUT --value-bytes V [--key-bytes K] [--ttl] [--int]`. How each model was\n"
               "checked, and the commands that check it again: docs/validation.md.\n");
    return kExitOk;
}

int explainShape(const LayoutsOptions& o) {
    auto models = parseLayoutAndAllocator(o.layout, o.alloc);
    if (!models)
        return reportError(models.error());
    const auto& layout = models->layout;
    const auto& alloc = models->allocator;
    const auto param = layout->threshold();
    const std::uint32_t threshold = o.threshold.value_or(param ? param->value : 0);
    const KeyShape shape { o.keyBytes, *o.valueBytes, o.ttl,
        o.integer ? (*o.valueBytes <= 4 ? ValueKind::SmallInteger : ValueKind::Integer) : ValueKind::String };
    const auto cost = costOf(*layout, *alloc, shape, threshold);
    fmt::print("layout     {}\nallocator  {}\nkey        {} bytes, value {} bytes{}{}\n", layout->spec(), alloc->spec(),
        shape.keyBytes, shape.valueBytes, shape.hasTtl ? ", TTL" : "", o.integer ? ", integer" : "");
    if (param)
        fmt::print("{:<10} {}\n", param->name, threshold);
    if (!cost.layout.stored) {
        fmt::print("not storable: the engine refuses an object this large\n");
        return kExitOk;
    }
    fmt::print("encoding   {}\n\n{:<14} {:>6} {:>10} {:>8} {:>8} {:>10}\n", encodingName(cost.layout.encoding),
        "allocation", "count", "requested", "class", "waste", "GET lines");
    for (std::size_t i = 0; i < cost.layout.allocationCount; ++i) {
        const auto& a = cost.layout.allocations[i];
        const auto usable = alloc->usableSize(a.requestedBytes);
        fmt::print("{:<14} {:>6} {:>10} {:>8} {:>8} {:>10.3f}\n", purposeName(a.purpose), a.count, a.requestedBytes,
            usable, usable - a.requestedBytes,
            a.readBytes ? expectedLinesTouched(a.readBytes, alloc->alignment(usable)) : 0.0);
    }
    fmt::print("\nper key: {} bytes requested, {} usable (index tables not included), {} pointer bytes\n"
               "per GET: {:.3f} distinct lines ({} index), {} dependent loads\n",
        cost.requestedBytes, cost.usableBytes, cost.layout.pointerBytes, cost.linesTouched,
        cost.layout.indexLinesPerGet, cost.layout.dependentLoads);
    return kExitOk;
}

// The collection key the options describe: its shape, in words, and the limits of its type.
struct CollectionRequest {
    CollectionShape shape;
    std::string what;
    std::vector<std::pair<std::string, std::int64_t>> limits;
};

Expected<CollectionRequest> collectionRequest(const LayoutsOptions& o) {
    CollectionRequest r;
    CollectionShape& shape = r.shape;
    shape.keyBytes = o.keyBytes;
    shape.entries = o.entries;
    shape.elementBytes = o.elementBytes;
    shape.integerElements = o.integerElements;
    shape.hasTtl = o.ttl;
    shape.oneCommand = !o.oneByOne;
    const char* ints = shape.integerElements ? " (integers)" : "";
    if (o.type == "hash") {
        if (!o.valueBytes)
            return usageError("a hash key needs --value-bytes", "--value-bytes");
        shape.type = CollectionType::Hash;
        shape.valueBytes = *o.valueBytes;
        shape.integerValues = o.integer;
        r.what = fmt::format("a hash of {} fields of {} bytes{}, values of {} bytes{}, set by {}", shape.entries,
            shape.elementBytes, ints, shape.valueBytes, shape.integerValues ? " (integers)" : "",
            shape.oneCommand ? "one HSET" : "one HSET per field");
    } else if (o.type == "set") {
        shape.type = CollectionType::Set;
        r.what = fmt::format("a set of {} members of {} bytes{}, added by {}", shape.entries, shape.elementBytes, ints,
            shape.oneCommand ? "one SADD" : "one SADD per member");
    } else if (o.type == "zset") {
        shape.type = CollectionType::SortedSet;
        shape.valueBytes = o.scoreBytes;
        shape.integerValues = o.integer;
        r.what = fmt::format("a sorted set of {} members of {} bytes{}, scores of {} characters{}, added by {}",
            shape.entries, shape.elementBytes, ints, shape.valueBytes, shape.integerValues ? " (integral)" : "",
            shape.oneCommand ? "one ZADD" : "one ZADD per member");
    } else {
        shape.type = CollectionType::List;
        r.what = fmt::format("a list of {} elements of {} bytes{}, pushed by {}", shape.entries, shape.elementBytes,
            ints, shape.oneCommand ? "one RPUSH" : "one RPUSH per element");
    }
    for (std::string_view name : collectionLimitNames(shape.type))
        r.limits.emplace_back(name, collectionLimit(o.limits, name));
    return r;
}

// A part's count: whole, or an expectation (a skiplist level's nodes, a set dict's entries).
std::string countText(double count) {
    return count == std::floor(count) ? fmt::format("{:.0f}", count) : fmt::format("{:.2f}", count);
}

// The key in the encoding its limits did not give it: a listpack or intset for a table (the limits raised to
// hold it), a table for a listpack or intset (its entries limit one below its entries). Lists have none here:
// their limit is a node's bytes, not a choice between two encodings of one key.
struct Alternative {
    std::vector<std::pair<std::string, std::int64_t>> limits; // the ones changed
    std::string encoding;
    double usableBytes = 0;
};

std::optional<Alternative> alternativeEncoding(const LayoutAndAllocator& models, const CollectionShape& shape,
    const CollectionLimits& limits, const std::string& encoding) {
    if (shape.type == CollectionType::List)
        return std::nullopt;
    CollectionLimits other = limits;
    Alternative alt;
    const auto change = [&](std::string_view name, std::int64_t value) {
        setCollectionLimit(other, name, value);
        alt.limits.emplace_back(name, value);
    };
    const std::string_view entriesLimit = entriesLimitName(shape.type, shape.integerElements);
    const auto entries = static_cast<std::int64_t>(shape.entries);
    if (encoding == "listpack" || encoding == "intset") {
        change(entriesLimit, entries - 1);
    } else {
        const std::string_view valueLimit = collectionLimitNames(shape.type).back();
        const std::int64_t longest
            = shape.type == CollectionType::Hash ? std::max(shape.elementBytes, shape.valueBytes) : shape.elementBytes;
        if (collectionLimit(limits, entriesLimit) < entries)
            change(entriesLimit, entries);
        if (!shape.integerElements && collectionLimit(limits, valueLimit) < longest)
            change(valueLimit, longest);
    }
    auto key = describeCollection(*models.layout, shape, *models.allocator, other);
    if (!key || key->encoding == encoding || alt.limits.empty())
        return std::nullopt; // Redis 7.0's sets of strings have no listpack to be
    alt.encoding = key->encoding;
    alt.usableBytes = key->usableBytes(*models.allocator);
    return alt;
}

std::string limitsText(const std::vector<std::pair<std::string, std::int64_t>>& limits) {
    std::string text;
    for (const auto& [name, value] : limits)
        text += fmt::format("{}{} {}", text.empty() ? "" : ", ", name, value);
    return text;
}

void printCollectionJson(const CollectionRequest& r, const std::string& type, const CollectionKeyLayout& key,
    const std::optional<Alternative>& alternative, const LayoutModel& layout, const AllocatorModel& alloc) {
    const CollectionShape& shape = r.shape;
    auto parts = nlohmann::json::array();
    for (const CollectionPart& part : key.parts)
        parts.push_back({ { "what", part.what }, { "count", part.count }, { "requested_bytes", part.requestedBytes },
            { "usable_bytes", alloc.usableSize(part.requestedBytes) } });
    auto limits = nlohmann::json::object();
    for (const auto& [name, value] : r.limits)
        limits[name] = value;
    const bool valued = shape.type == CollectionType::Hash || shape.type == CollectionType::SortedSet;
    const nlohmann::json j { { "layout", layout.spec() }, { "allocator", alloc.spec() }, { "type", type },
        { "key_bytes", shape.keyBytes }, { "entries", shape.entries }, { "element_bytes", shape.elementBytes },
        { "integer_elements", shape.integerElements },
        { "value_bytes", valued ? nlohmann::json(shape.valueBytes) : nlohmann::json(nullptr) },
        { "integer_values", shape.integerValues }, { "ttl", shape.hasTtl }, { "one_command", shape.oneCommand },
        { "limits", limits }, { "encoding", key.encoding }, { "why", key.why }, { "parts", parts },
        { "usable_bytes", key.usableBytes(alloc) }, { "alternative", nullptr } };
    nlohmann::json out = j;
    if (alternative) {
        auto changed = nlohmann::json::object();
        for (const auto& [name, value] : alternative->limits)
            changed[name] = value;
        out["alternative"] = { { "encoding", alternative->encoding }, { "limits", changed },
            { "usable_bytes", alternative->usableBytes } };
    }
    fmt::print("{}\n", out.dump(2));
}

// One collection key: its encoding, why, and each allocation.
int explainCollection(const LayoutsOptions& o) {
    auto models = parseLayoutAndAllocator(o.layout, o.alloc);
    if (!models)
        return reportError(models.error());
    auto request = collectionRequest(o);
    if (!request)
        return reportError(request.error());
    const CollectionShape& shape = request->shape;
    auto key = describeCollection(*models->layout, shape, *models->allocator, o.limits);
    if (!key)
        return reportError(key.error());
    const auto& alloc = *models->allocator;
    const auto alternative = alternativeEncoding(*models, shape, o.limits, key->encoding);
    if (o.json) {
        printCollectionJson(*request, o.type, *key, alternative, *models->layout, alloc);
        return kExitOk;
    }
    const std::string limits = limitsText(request->limits);
    fmt::print("layout     {}\nallocator  {}\nkey        {} bytes{}: {}\nlimits     {}\nencoding   {} ({})\n\n"
               "{:<44} {:>10} {:>10} {:>8} {:>8}\n",
        models->layout->spec(), alloc.spec(), shape.keyBytes, shape.hasTtl ? ", TTL" : "", request->what, limits,
        key->encoding, key->why, "allocation", "count", "requested", "class", "waste");
    double requested = 0;
    for (const CollectionPart& part : key->parts) {
        const auto usable = alloc.usableSize(part.requestedBytes);
        fmt::print("{:<44} {:>10} {:>10} {:>8} {:>8}\n", part.what, countText(part.count), part.requestedBytes, usable,
            usable - part.requestedBytes);
        requested += static_cast<double>(part.requestedBytes) * part.count;
    }
    const double usable = key->usableBytes(alloc);
    fmt::print("\nper key: {:.0f} bytes requested, {:.0f} usable (index tables not included), {:.1f} usable per "
               "entry\n",
        requested, usable, usable / static_cast<double>(shape.entries));
    if (alternative)
        fmt::print("as a {} instead ({}): {:.0f} usable ({:+.1f}%)\n", alternative->encoding,
            limitsText(alternative->limits), alternative->usableBytes, 100 * (alternative->usableBytes / usable - 1));
    return kExitOk;
}

// A layout file is read and checked whole; what it describes is printed.
int checkLayoutFile(const std::string& spec) {
    auto layout = parseLayout(spec);
    if (!layout)
        return reportError(layout.error());
    const auto& l = **layout;
    const auto threshold = l.threshold();
    const auto policy = l.indexPolicy();
    fmt::print("{}\n{}\n", l.spec(), l.description());
    if (threshold)
        fmt::print("threshold  {} = {} (sweeps from {} to {}): {}\n", threshold->name, threshold->value, threshold->min,
            threshold->max, threshold->meaning);
    else
        fmt::print("threshold  none (sim only)\n");
    const auto structure = indexKindName(policy.kind);
    fmt::print("allocator  {} by default\nindex      {}: {}-byte buckets of {} entries{}{}\n", l.defaultAllocator(),
        structure, policy.params.bucketBytes, policy.params.entriesPerBucket,
        policy.params == engineIndexParams(policy.kind) ? "" : " (changed from the engine's)",
        policy.expiresTable ? ", and an expires table" : "");
    fmt::print("the file is valid; explain a key with --value-bytes N\n");
    return kExitOk;
}
} // namespace

void addListCommands(CLI::App& app, int& status) {
    auto lo = std::make_shared<LayoutsOptions>();
    auto* layouts = app.add_subcommand("layouts", "List the layout models, or explain one key's layout");
    layouts->add_option("layout", lo->layout, "Layout to explain a key shape for");
    layouts->add_option("--alloc", lo->alloc, "Allocator (default: the layout's engine default)");
    layouts->add_option("--threshold", lo->threshold, "Embed threshold (default: the layout's own)");
    layouts->add_option("--key-bytes", lo->keyBytes, "Key length")->capture_default_str();
    layouts->add_option("--value-bytes", lo->valueBytes, "Value length (explains this shape)");
    layouts->add_flag("--ttl", lo->ttl, "The key has a TTL");
    layouts->add_flag("--int", lo->integer, "The value is a decimal integer");
    layouts->add_option("--type", lo->type, "What the key holds: string, hash, set, zset or list (--entries)")
        ->check(CLI::IsMember({ "string", "hash", "set", "zset", "list" }))
        ->capture_default_str();
    layouts->add_option("--entries", lo->entries, "hash, set, zset, list: its fields, members or elements")
        ->capture_default_str();
    layouts
        ->add_option("--element-bytes,--field-bytes,--member-bytes", lo->elementBytes,
            "hash, set, zset, list: each field's, member's or element's length")
        ->capture_default_str();
    layouts->add_flag("--int-elements", lo->integerElements,
        "the fields, members or elements are decimal integers of --element-bytes digits");
    layouts->add_option("--score-bytes", lo->scoreBytes, "zset: each score's length as text (--int: integral)")
        ->capture_default_str();
    layouts->add_flag("--one-by-one,--fields-one-by-one", lo->oneByOne,
        "the entries arrived one per command (a table grew) rather than in one HSET, SADD, ZADD or RPUSH");
    addCollectionLimitOptions(*layouts, lo->limits);
    layouts->add_flag("--json", lo->json, "JSON output (the list, or a collection key's parts)");
    layouts
        ->add_option_function<std::string>(
            "--layout-file", [lo](const std::string& path) { lo->layout = layoutFileSpec(path); },
            "A layout file to check (without --value-bytes) or explain (docs/layout-files.md)")
        ->check(CLI::ExistingFile);
    layouts->callback([lo, &status] {
        if (lo->layout.empty()) {
            status = listLayoutsText(lo->json);
        } else if (lo->type != "string") {
            status = explainCollection(*lo);
        } else if (!lo->valueBytes && !layoutFilePath(lo->layout).empty()) {
            status = checkLayoutFile(lo->layout);
        } else if (!lo->valueBytes) {
            status = reportError(usageError("explaining a layout needs --value-bytes", "--value-bytes"));
        } else {
            status = explainShape(*lo);
        }
    });

    auto allocSpec = std::make_shared<std::string>();
    auto* allocators = app.add_subcommand("allocators", "List the allocator models, or the classes of one");
    allocators->add_option("allocator", *allocSpec, "Allocator whose classes to print, e.g. jemalloc:quantum=8");
    allocators->callback([allocSpec, &status] {
        if (allocSpec->empty()) {
            for (const auto& a : listAllocators())
                fmt::print("{:<10} {:<42} {}{}\n", a.name, a.parameters.empty() ? "-" : a.parameters, a.description,
                    a.available ? "" : " (not available in this build)");
            status = kExitOk;
            return;
        }
        auto alloc = parseAllocator(*allocSpec);
        if (!alloc) {
            status = reportError(alloc.error());
            return;
        }
        fmt::print("{}\n{}\n\n{:>10} {:>14} {:>12}\n", (*alloc)->spec(), (*alloc)->description(), "class",
            "regions/slab", "slab bytes");
        for (const auto& c : (*alloc)->classes())
            fmt::print("{:>10} {:>14} {:>12}\n", c.size, c.regionsPerSlab ? std::to_string(c.regionsPerSlab) : "-",
                c.slabBytes ? std::to_string(c.slabBytes) : "-");
        status = kExitOk;
    });

    auto* collectors = app.add_subcommand("collectors", "List the collectors this build and machine support");
    collectors->callback([&status] {
        for (const auto& c : listCollectors())
            fmt::print("{:<20} {:<4} {}\n", c.name, c.available ? "yes" : "no", c.detail);
        status = kExitOk;
    });

    auto format = std::make_shared<std::string>("table");
    auto* metrics = app.add_subcommand("metrics", "List the metrics of a simulated point: name, unit, meaning");
    metrics->add_option("--format", *format, "table, json or markdown (the user guide's list)")
        ->check(CLI::IsMember({ "table", "json", "markdown" }));
    metrics->callback([&status, format] {
        if (*format == "markdown") {
            fmt::print("{}", metricsMarkdown());
        } else if (*format == "json") {
            auto j = nlohmann::json::array();
            for (const auto& m : pointMetricTable())
                j.push_back(
                    { { "name", m.name }, { "heading", m.heading }, { "unit", m.unit }, { "decimals", m.decimals },
                        { "integral", m.integral }, { "in_output", bool(m.uses & kMetricOutput) },
                        { "stored", bool(m.uses & kMetricStored) }, { "description", m.description } });
            fmt::print("{}\n", j.dump(2));
        } else {
            for (const auto& m : pointMetricTable())
                if (m.uses & kMetricOutput)
                    fmt::print("{:<30} {:<16} {}\n", m.name, m.unit, m.description);
        }
        status = kExitOk;
    });
}

} // namespace layoutlab::cli
