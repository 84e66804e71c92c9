// SPDX-License-Identifier: MIT
#include "layout_file_checks.h"

#include "layout_file_reader.h"
#include "layoutlab/alloc/allocator_registry.h"

#include <fmt/format.h>

namespace layoutlab::layout_file {

namespace {

std::string fieldPath(const LayoutDefinition& def, std::size_t a, std::size_t f) {
    return fmt::format("allocation.{}.fields.{}", def.allocations[a].name, def.allocations[a].fields[f].name);
}

void checkIndexing(const LayoutDefinition& def) {
    int keyspace = -1;
    for (std::size_t a = 0; a < def.allocations.size(); ++a) {
        const auto& alloc = def.allocations[a];
        if (alloc.indexedBy == IndexedBy::Keyspace) {
            if (keyspace >= 0)
                fail(static_cast<std::uint64_t>(alloc.line), "allocation." + alloc.name + ".indexed_by",
                    "allocation '" + def.allocations[static_cast<std::size_t>(keyspace)].name
                        + "' is already what the keyspace indexes");
            if (!alloc.when.anyOf.empty())
                fail(static_cast<std::uint64_t>(alloc.line), "allocation." + alloc.name + ".when",
                    "the allocation the keyspace indexes exists for every key");
            keyspace = static_cast<int>(a);
        }
        if (alloc.indexedBy == IndexedBy::Expires && !def.index.expiresTable)
            fail(static_cast<std::uint64_t>(alloc.line), "allocation." + alloc.name + ".indexed_by",
                "indexed by the expires table, but [index] has no expires_table = true");
    }
    if (keyspace < 0)
        fail(static_cast<std::uint64_t>(def.allocations.front().line), "allocation",
            "no allocation has indexed_by = \"keyspace\": what does the index point to?");
}

void checkPointers(const LayoutDefinition& def) {
    const std::size_t n = def.allocations.size();
    // Depth-first search for a cycle; the path is reported field by field.
    enum class Mark { None, Active, Done };
    std::vector<Mark> mark(n, Mark::None);
    std::vector<std::string> trail;
    auto visit = [&](auto&& self, std::size_t a) -> void {
        mark[a] = Mark::Active;
        for (std::size_t f = 0; f < def.allocations[a].fields.size(); ++f) {
            const int target = def.allocations[a].fields[f].pointsTo;
            if (target < 0)
                continue;
            const auto t = static_cast<std::size_t>(target);
            trail.push_back(fmt::format(
                "{}.{} -> {}", def.allocations[a].name, def.allocations[a].fields[f].name, def.allocations[t].name));
            if (mark[t] == Mark::Active) {
                std::string cycle;
                for (const auto& step : trail)
                    cycle += (cycle.empty() ? "" : ", ") + step;
                fail(static_cast<std::uint64_t>(def.allocations[a].fields[f].line), fieldPath(def, a, f) + ".points_to",
                    "cyclic pointer: " + cycle);
            }
            if (mark[t] == Mark::None)
                self(self, t);
            trail.pop_back();
        }
        mark[a] = Mark::Done;
    };
    for (std::size_t a = 0; a < n; ++a)
        if (mark[a] == Mark::None)
            visit(visit, a);
    // Every allocation is found from an index or through a pointer.
    for (std::size_t a = 0; a < n; ++a) {
        if (def.allocations[a].indexedBy != IndexedBy::None)
            continue;
        bool pointedTo = false;
        for (const auto& other : def.allocations)
            for (const auto& f : other.fields)
                pointedTo = pointedTo || f.pointsTo == static_cast<int>(a);
        if (!pointedTo)
            fail(static_cast<std::uint64_t>(def.allocations[a].line), "allocation." + def.allocations[a].name,
                "unreachable: no index holds it (indexed_by) and no field points to it (points_to)");
    }
}

void checkGetPath(const LayoutDefinition& def) {
    std::vector<char> seen(def.allocations.size(), 0);
    for (const int index : def.getPath) {
        const auto a = static_cast<std::size_t>(index);
        const auto& alloc = def.allocations[a];
        if (seen[a])
            fail(static_cast<std::uint64_t>(alloc.line), "get.path", "'" + alloc.name + "' is read twice");
        bool reached = alloc.indexedBy != IndexedBy::None;
        for (std::size_t b = 0; b < def.allocations.size() && !reached; ++b)
            if (seen[b])
                for (const auto& f : def.allocations[b].fields)
                    reached = reached || f.pointsTo == index;
        if (!reached)
            fail(static_cast<std::uint64_t>(alloc.line), "get.path",
                "a GET cannot reach '" + alloc.name
                    + "' here: it is not indexed and no allocation read before it points to it");
        seen[a] = 1;
    }
}

// Evaluates the layout on a few shapes: the embed rule must hold for some key, and every key and value
// byte must be stored in some field whatever the encoding.
void checkEmbedding(const LayoutDefinition& def) {
    const bool usesThreshold
        = def.embedRule == EmbedRule::TotalAtMostThreshold || def.embedRule == EmbedRule::ValueAtMostThreshold;
    const auto embedLine = static_cast<std::uint64_t>(def.embedLine);
    if (usesThreshold && !def.threshold)
        fail(embedLine, "embed.rule", "this rule compares with the threshold, but the file has no [threshold] table");
    if (def.embedRule == EmbedRule::TotalAtMostThreshold && def.embedInto < 0)
        fail(embedLine, "embed.into", "rule total-at-most-threshold needs 'into': the allocation the value joins");
    auto allocator = parseAllocator(def.defaultAllocator);
    if (!allocator)
        fail(1, "layout.allocator", allocator.error().message);
    DeclaredLayout layout(def);
    if (auto ok = layout.checkAllocator(**allocator); !ok)
        fail(1, "layout.allocator", ok.error().message);
    const std::uint32_t highest = def.threshold ? def.threshold->max : 0;
    const std::uint32_t lowest = def.threshold ? def.threshold->min : 0;
    auto payloadOf = [](const KeyLayout& kl) {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < kl.allocationCount; ++i)
            sum += kl.allocations[i].payloadBytes * kl.allocations[i].count;
        return sum;
    };
    auto storesEverything = [&](const KeyShape& shape, std::uint32_t threshold, const char* what) {
        const auto kl = layout.describe(shape, threshold, **allocator);
        if (kl.stored && payloadOf(kl) != std::uint64_t { shape.keyBytes } + shape.valueBytes)
            fail(static_cast<std::uint64_t>(def.allocations.front().line), "allocation",
                fmt::format("a {}-byte key with a {}-byte {} value is stored in fields holding {} bytes of them: "
                            "every encoding needs one field with string = \"key\" and one with string = \"value\" "
                            "(or holds_integer) present",
                    shape.keyBytes, shape.valueBytes, what, payloadOf(kl)));
        return kl;
    };
    if (def.embedRule != EmbedRule::Never) {
        const KeyShape smallest { 1, 0, false, ValueKind::String };
        const auto kl = storesEverything(smallest, highest, "embedded");
        if (kl.encoding != def.embeddedEncoding && kl.encoding != Encoding::ChunkedItem) {
            std::string why = "the embed rule can never hold: even a 1-byte key with an empty value is not embedded";
            if (usesThreshold)
                why += fmt::format(" at the largest threshold ({} bytes, [threshold] max)", highest);
            fail(embedLine, "embed.rule", why);
        }
    }
    if (def.embedRule != EmbedRule::Always)
        storesEverything({ 16, 100000, false, ValueKind::String }, lowest, "raw");
    storesEverything({ 16, 100, true, ValueKind::String }, lowest, "TTL'd");
    if (def.integerMaxChars > 0)
        storesEverything({ 16, 5, false, ValueKind::Integer }, lowest, "integer");
}

} // namespace

void checkDefinition(const LayoutDefinition& def) {
    checkIndexing(def);
    checkPointers(def);
    checkGetPath(def);
    checkEmbedding(def);
}

} // namespace layoutlab::layout_file
