// SPDX-License-Identifier: MIT
#include "layoutlab/layout/layout_registry.h"

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/declared_layout.h"
#include "layoutlab/layout/layout_file.h"
#include "layoutlab/layout/memcached_layout.h"
#include "layoutlab/layout/redis_layout.h"
#include "layoutlab/layout/valkey_dict_layout.h"
#include "layoutlab/layout/valkey_layout.h"
#include "layoutlab/spec.h"

#include <fmt/format.h>
#include <limits>
#include <map>

namespace layoutlab {

namespace {
struct ValkeyPreset {
    std::string_view name;
    ValkeyParams params;
    std::string_view note;
};

// Presets for the releases in LAYOUTS-valkey-redis.md §3-4.
const ValkeyPreset kValkeyPresets[] = {
    // 8.1.x: threshold 64 (object.c `size <= 64`), 16-byte robj, OBJ_ENCODING_EMBSTR_SIZE_LIMIT 44,
    // embed decision counting K + 3 (before PR #2087).
    // Its hashtable.c shrinks on a delete even while auto shrink is paused (ValkeyParams::shrinkPauseHonoured).
    { "valkey-8.1", { 64, 16, 44, false, false, true, 0, 72, 0, false, false, false, false, false }, "Valkey 8.1" },
    // 9.0.x: as 8.1 but with PR #2087's exact key-header sizing.
    // Both 9.x lines prefetch a pipelined client's queued keys in batches of 16 (ValkeyParams::queuedKeyPrefetch).
    { "valkey-9.0", { 64, 16, 44, true, false, true, 16, 72, 8, true, false }, "Valkey 9.0" },
    // 9.1.0: PR #3397 (threshold 128) and PR #2516 (8-byte header when embedded, limit derived).
    { "valkey-9.1", { 128, 8, 0, true, false, true, 16, 80, 8, true, true, true, true }, "Valkey 9.1" },
};

Expected<LayoutPtr> parseValkey(Spec& spec, ValkeyParams params, std::string presetName, std::string line) {
    auto threshold = spec.integer("threshold", params.threshold, 16, 1024);
    if (!threshold)
        return threshold.error();
    auto header = spec.integer("header", params.headerBytes, 8, 16);
    if (!header)
        return header.error();
    if (*header != 8 && *header != 16)
        return usageError(fmt::format("layout valkey parameter header={} must be 16 (8.1/9.0) or 8 (9.1)", *header),
            "layout valkey:header");
    const auto limitText
        = spec.text("embstr-limit", params.embstrLimit == 0 ? "auto" : std::to_string(params.embstrLimit));
    std::uint32_t limit = 0;
    if (limitText != "auto") {
        auto parsed = parseUnsigned(limitText, "layout valkey:embstr-limit");
        if (!parsed)
            return usageError(
                "layout valkey parameter embstr-limit must be 'auto' or a byte count, got '" + limitText + "'",
                "layout valkey:embstr-limit");
        if (*parsed == 0 || *parsed > 1024)
            return usageError(fmt::format("layout valkey parameter embstr-limit={} is out of range [1, 1024]", *parsed),
                "layout valkey:embstr-limit");
        limit = static_cast<std::uint32_t>(*parsed);
    }
    const auto sizing = spec.text("key-sizing", params.exactKeySizing ? "exact" : "legacy");
    if (sizing != "exact" && sizing != "legacy")
        return usageError("layout valkey parameter key-sizing must be 'exact' or 'legacy', got '" + sizing + "'",
            "layout valkey:key-sizing");
    const auto keyHeader = spec.text("key-header", params.keyAsSent ? "as-sent" : "smallest");
    if (keyHeader != "smallest" && keyHeader != "as-sent")
        return usageError("layout valkey parameter key-header must be 'smallest' or 'as-sent', got '" + keyHeader + "'",
            "layout valkey:key-header");
    const auto expireField = spec.text("expire-field", params.keepsExpireField ? "kept" : "dropped");
    if (expireField != "kept" && expireField != "dropped")
        return usageError("layout valkey parameter expire-field must be 'kept' or 'dropped', got '" + expireField + "'",
            "layout valkey:expire-field");
    if (auto ok = spec.rejectUnused("threshold, header, embstr-limit, key-sizing, key-header, expire-field"); !ok)
        return ok.error();
    params.threshold = static_cast<std::uint32_t>(*threshold);
    params.headerBytes = static_cast<std::uint32_t>(*header);
    params.embstrLimit = limit;
    params.exactKeySizing = sizing == "exact";
    params.keyAsSent = keyHeader == "as-sent";
    params.keepsExpireField = expireField == "kept";
    return LayoutPtr(std::make_shared<ValkeyLayout>(std::move(presetName), params, std::move(line)));
}

// The parameters both dict-based layouts (Redis 7.0, Valkey 8.0) have: the EMBSTR limit and shared integers.
template <class Params> Status parseDictParams(Spec& spec, Params& params) {
    auto limit = spec.integer("embstr-limit", params.embstrLimit, 0, 1024);
    if (!limit)
        return limit.error();
    auto shared = spec.yesNo("shared-integers", params.sharedIntegers);
    if (!shared)
        return shared.error();
    params.embstrLimit = static_cast<std::uint32_t>(*limit);
    params.sharedIntegers = *shared;
    return Ok {};
}

// valkey-8.0: the dict layout's parameters and how its embedded keys arrived (ValkeyDictParams::keyAsSent).
Expected<LayoutPtr> parseValkeyDict(Spec& spec) {
    ValkeyDictParams params;
    if (auto ok = parseDictParams(spec, params); !ok)
        return ok.error();
    const auto keyHeader = spec.text("key-header", "as-sent");
    if (keyHeader != "smallest" && keyHeader != "as-sent")
        return usageError(
            "layout valkey-8.0 parameter key-header must be 'smallest' or 'as-sent', got '" + keyHeader + "'",
            "layout valkey-8.0:key-header");
    if (auto ok = spec.rejectUnused("embstr-limit, shared-integers, key-header"); !ok)
        return ok.error();
    params.keyAsSent = keyHeader == "as-sent";
    return LayoutPtr(std::make_shared<ValkeyDictLayout>(params));
}

// redis-7.0 and redis-7.2: the dict layout's parameters; the release decides the collections' rules.
Expected<LayoutPtr> parseRedis(Spec& spec, RedisRelease release) {
    RedisParams params;
    params.release = release;
    if (auto ok = parseDictParams(spec, params); !ok)
        return ok.error();
    if (auto ok = spec.rejectUnused("embstr-limit, shared-integers"); !ok)
        return ok.error();
    return LayoutPtr(std::make_shared<RedisLayout>(params));
}

} // namespace

std::string layoutSpecForLoadedKeys(const std::string& canonicalSpec) {
    std::string spec = canonicalSpec;
    constexpr std::string_view kAsSent = "key-header=as-sent";
    if (const auto at = spec.find(kAsSent); at != std::string::npos)
        return spec.replace(at, kAsSent.size(), "key-header=smallest");
    if (spec.starts_with("valkey-8.0") && spec.find("key-header=") == std::string::npos)
        return spec + (spec.find(':') == std::string::npos ? ":" : ",") + "key-header=smallest";
    return spec;
}

namespace {

Expected<LayoutPtr> parseMemcached(Spec& spec) {
    MemcachedParams params;
    auto framing = parseFraming(spec.text("framing", "raw"));
    if (!framing)
        return framing.error();
    auto cas = spec.yesNo("cas", params.cas);
    if (!cas)
        return cas.error();
    auto version = spec.integer("version-bytes", 0, 0, 1024);
    if (!version)
        return version.error();
    if (auto ok = spec.rejectUnused("framing, cas, version-bytes"); !ok)
        return ok.error();
    params.framing = *framing;
    params.cas = *cas;
    params.versionBytes = static_cast<std::uint32_t>(*version);
    return LayoutPtr(std::make_shared<MemcachedLayout>(params));
}
} // namespace

Expected<LayoutPtr> parseLayout(std::string_view text) {
    if (const auto path = layoutFilePath(text); !path.empty())
        return loadLayoutFile(path);
    auto spec = Spec::parse(text, "layout");
    if (!spec)
        return spec.error();
    const auto& name = spec->name();
    if (name == "valkey-8.0")
        return parseValkeyDict(*spec);
    if (name == "valkey")
        return parseValkey(*spec, kValkeyPresets[2].params, "valkey (9.1 rules unless overridden)", "valkey");
    // The 9.1 preset's rules are plain "valkey"'s: its spec keeps that name.
    for (const auto& preset : kValkeyPresets)
        if (name == preset.name)
            return parseValkey(*spec, preset.params, std::string(preset.note),
                preset.name == kValkeyPresets[2].name ? "valkey" : std::string(preset.name));
    if (name == "redis-7.0" || name == "redis")
        return parseRedis(*spec, RedisRelease::V7_0);
    if (name == "redis-7.2")
        return parseRedis(*spec, RedisRelease::V7_2);
    if (name == "memcached-1.6" || name == "memcached")
        return parseMemcached(*spec);
    return usageError(
        fmt::format("unknown layout '{}' (known: valkey, valkey-8.0, valkey-8.1, valkey-9.0, valkey-9.1, "
                    "redis-7.0, redis-7.2, memcached-1.6, or file:PATH for a layout file; see `layoutlab layouts`)",
            name),
        "layout");
}

Expected<LayoutAndAllocator> parseLayoutAndAllocator(std::string_view layoutSpec, std::string_view allocatorSpec) {
    auto layout = parseLayout(layoutSpec);
    if (!layout)
        return layout.error();
    auto allocator = parseAllocator(allocatorSpec.empty() ? (*layout)->defaultAllocator() : allocatorSpec);
    if (!allocator)
        return allocator.error();
    if (auto ok = (*layout)->checkAllocator(**allocator); !ok)
        return ok.error();
    return LayoutAndAllocator { *layout, *allocator };
}

std::vector<LayoutInfo> listLayouts() {
    // The measurements behind "measured" are the integration tests' (tests/cli/drive_valkey_test.cpp,
    // drive_test.cpp, tests/collectors/*_validation_test.cpp); docs/validation.md gives the table and the
    // command that reproduces it. Keep the three in step.
    struct Entry {
        std::string_view name;
        LayoutValidation validation;
    };
    const Entry entries[] = {
        { "valkey", { true, "as valkey-9.1: Valkey 9.1.0 and the 2026-04-07 development tree built from source" } },
        { "valkey-8.0",
            { true, "Valkey 8.0.1 built from source; 9 traces driven, worst error 0.01% of bytes per key" } },
        { "valkey-8.1",
            { true,
                "the Valkey development tree of 2025-02-06 (the 8.1 layout as released) built from source, "
                "its what-if build with threshold 128 and EMBSTR limit 108 (as threshold=128,embstr-limit=108) "
                "and the tree of 2025-01-27 (as key-header=as-sent); 9 traces driven into each, worst error "
                "0.21% of bytes per key; and the 66 measured 8.1 rows of the reference data" } },
        { "valkey-9.0",
            { true,
                "Valkey 9.0.4 built from source; 8 traces driven, worst error 0.80% of bytes per key (3,100 "
                "keys of 1 to 3 bytes; 0.07% on the rest)" } },
        { "valkey-9.1",
            { true,
                "Valkey 9.1.0 and the 2026-04-07 development tree (the threshold change) built from source, and "
                "the 2026-04-06 tree before it (as threshold=64); 8 traces driven into each, worst error 0.62% "
                "of bytes per key (3,100 keys of 1 to 3 bytes; 0.09% on the rest)" } },
        { "redis-7.0",
            { true,
                "Debian 12's redis-server 7.0.15; 9 traces driven and 10 key shapes loaded, worst error "
                "0.001% of bytes per key; and the 22 measured rows of the reference data" } },
        { "redis-7.2",
            { true,
                "Redis 7.2.6 built from source; 8 traces driven, worst error 0.35% of bytes per key (its "
                "strings are 7.0's: object.c, db.c and dict.c keep the entry, key sds and EMBSTR limit; its "
                "collections differ)" } },
        { "memcached-1.6",
            { true,
                "Debian 12's memcached 1.6.18; chunks per slab class equal for raw, Marshal and Rails "
                "framings, and the slab classes of five -n/-f settings" } },
    };
    std::vector<LayoutInfo> out;
    for (const auto& e : entries) {
        auto layout = parseLayout(e.name);
        out.push_back({ std::string(e.name), (*layout)->spec(), (*layout)->description(), e.validation });
    }
    return out;
}

LayoutValidation layoutValidation(const std::string& name) {
    // The variants the integration tests drive besides the presets (docs/validation.md).
    const std::pair<std::string_view, std::string_view> driven[] {
        { "memcached-1.6:framing=raw", "memcached-1.6" },
        { "memcached-1.6:framing=marshal-utf8", "memcached-1.6" },
        { "memcached-1.6:framing=rails-7.1", "memcached-1.6" },
        { "valkey-8.1:threshold=128,embstr-limit=108", "valkey-8.1" },
        { "valkey-8.1:key-header=as-sent", "valkey-8.1" },
        { "valkey-9.1:threshold=64", "valkey-9.1" },
    };
    std::string preset = name;
    for (const auto& [variant, of] : driven)
        if (name == variant)
            preset = std::string(of);
    for (const auto& info : listLayouts())
        if (info.name == preset)
            return info.validation;
    return { false, "parameters or a layout file of its own: no build of it was measured" };
}

std::string presetName(std::string_view spec) {
    if (spec.starts_with("file:"))
        return layoutLabel(spec);
    const auto given = Spec::parse(spec, "layout");
    if (!given)
        return std::string(spec);
    // The presets parsed once: views list runs, and repaint, often.
    static const std::vector<std::pair<std::string, Spec>> presets = [] {
        std::vector<std::pair<std::string, Spec>> out;
        for (const auto& info : listLayouts())
            if (auto parsed = Spec::parse(info.spec, "layout"))
                out.emplace_back(info.name, std::move(*parsed));
        return out;
    }();
    std::string best;
    std::size_t fewest = std::numeric_limits<std::size_t>::max();
    std::string differing;
    for (const auto& [name, preset] : presets) {
        if (preset.name() != given->name())
            continue;
        std::string diff;
        std::size_t count = 0;
        for (const auto& [key, value] : given->parameters())
            if (auto it = preset.parameters().find(key); it == preset.parameters().end() || it->second != value) {
                diff += fmt::format("{}{}={}", diff.empty() ? "" : ",", key, value);
                ++count;
            }
        // Ties go to a versioned preset (valkey-9.1 before valkey, which stands for the newest).
        const bool versioned = name.find('-') != std::string::npos;
        if (count < fewest || (count == fewest && versioned && best.find('-') == std::string::npos)) {
            fewest = count;
            best = name;
            differing = diff;
        }
    }
    if (best.empty())
        return std::string(spec);
    return differing.empty() ? best : best + ":" + differing;
}

std::string layoutName(const LayoutModel& layout) {
    if (const auto* declared = dynamic_cast<const DeclaredLayout*>(&layout))
        return declared->definition().name;
    return presetName(layout.spec());
}

} // namespace layoutlab
