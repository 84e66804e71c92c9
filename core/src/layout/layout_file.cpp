// SPDX-License-Identifier: MIT
#include "layoutlab/layout/layout_file.h"

#include "layoutlab/output_file.h"

#include "layout_file_checks.h"
#include "layout_file_reader.h"

#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace layoutlab {

using layout_file::fail;
using layout_file::lineOf;
using layout_file::TableReader;

namespace {

// KeyLayout holds at most this many allocations; chunked items add a header and two kinds of chunk.
constexpr std::size_t kMaxAllocations = KeyLayout::kMaxAllocations;

std::string hashHex(std::string_view text) {
    std::uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a, 64-bit
    for (const unsigned char c : text) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return fmt::format("{:016x}", h);
}

// "ttl or key >= 128", "not embedded", "raw and not ttl".
Condition parseCondition(const std::string& text, std::uint64_t line, const std::string& field) {
    Condition c;
    c.text = text;
    auto words = [](const std::string& s) {
        std::vector<std::string> out;
        std::istringstream in(s);
        for (std::string w; in >> w;)
            out.push_back(w);
        return out;
    };
    const auto tokens = words(text);
    if (tokens.empty() || (tokens.size() == 1 && tokens[0] == "always"))
        return c;
    static const std::map<std::string, ConditionAtom> kAtoms { { "ttl", ConditionAtom::Ttl },
        { "embedded", ConditionAtom::Embedded }, { "raw", ConditionAtom::Raw }, { "integer", ConditionAtom::Integer },
        { "shared-integer", ConditionAtom::SharedInteger }, { "flags", ConditionAtom::Flags },
        { "stale-expire", ConditionAtom::StaleExpire } };
    auto bad = [&](const std::string& why) {
        fail(line, field,
            "condition '" + text + "': " + why
                + " (atoms: ttl, stale-expire, embedded, raw, integer, shared-integer, flags, key >= N, value >= N; "
                  "joined by "
                  "'and', 'or', negated by 'not')");
    };
    std::vector<Condition::Term> terms;
    for (std::size_t i = 0; i < tokens.size();) {
        Condition::Term t;
        if (tokens[i] == "not") {
            t.negated = true;
            if (++i == tokens.size())
                bad("'not' of nothing");
        }
        if (tokens[i] == "key" || tokens[i] == "value") {
            if (i + 2 >= tokens.size() || tokens[i + 1] != ">=")
                bad("write '" + tokens[i] + " >= N'");
            t.atom = tokens[i] == "key" ? ConditionAtom::KeyAtLeast : ConditionAtom::ValueAtLeast;
            const auto& n = tokens[i + 2];
            if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 12)
                bad("'" + n + "' is not a byte count");
            t.number = std::stoull(n);
            i += 3;
        } else {
            const auto it = kAtoms.find(tokens[i]);
            if (it == kAtoms.end())
                bad("unknown atom '" + tokens[i] + "'");
            t.atom = it->second;
            i += 1;
        }
        terms.push_back(t);
        if (i == tokens.size() || tokens[i] == "or") {
            c.anyOf.push_back(std::move(terms));
            terms.clear();
            if (i < tokens.size() && ++i == tokens.size())
                bad("'or' of nothing");
        } else if (tokens[i] == "and") {
            if (++i == tokens.size())
                bad("'and' of nothing");
        } else {
            bad("expected 'and' or 'or' before '" + tokens[i] + "'");
        }
    }
    return c;
}

Condition conditionField(TableReader& t, const std::string& key) {
    const auto text = t.text(key);
    if (!text)
        return {};
    return parseCondition(*text, lineOf(*t.find(key)), t.fieldName(key));
}

void readLayoutSection(TableReader& t, LayoutDefinition& def) {
    def.name = t.requiredText("name");
    def.description = t.text("description").value_or("");
    def.defaultAllocator = t.text("allocator").value_or(def.defaultAllocator);
    const auto allocators = t.choice("allocators", { "malloc", "slabs", "any" }).value_or("malloc");
    def.allocators = allocators == "slabs" ? LayoutDefinition::Allocators::Slabs
        : allocators == "any"              ? LayoutDefinition::Allocators::Any
                                           : LayoutDefinition::Allocators::Malloc;
    t.rejectUnknown("name, description, allocator, allocators");
}

void readThreshold(TableReader& t, LayoutDefinition& def) {
    ThresholdParam p;
    p.name = t.text("parameter").value_or("threshold");
    p.min = static_cast<std::uint32_t>(t.size("min", 0, 1u << 20));
    p.max = static_cast<std::uint32_t>(t.size("max", 1024, 1u << 20));
    const auto value = t.size("default", 1u << 20);
    if (!value)
        fail(t.line(), t.fieldName("default"), "is missing");
    p.value = static_cast<std::uint32_t>(*value);
    p.meaning = t.text("meaning").value_or("the layout's embed threshold in bytes");
    if (p.min > p.max)
        fail(t.line(), t.fieldName("min"), fmt::format("min {} is above max {}", p.min, p.max));
    if (p.value < p.min || p.value > p.max)
        fail(lineOf(*t.find("default")), t.fieldName("default"),
            fmt::format("{} is outside [min, max] = [{}, {}]", p.value, p.min, p.max));
    t.rejectUnknown("parameter, default, min, max, meaning");
    def.threshold = p;
}

void readIndex(TableReader& t, LayoutDefinition& def) {
    std::vector<std::string> names;
    for (const auto k : kIndexKinds)
        names.emplace_back(indexKindName(k));
    const auto structure = t.choice("structure", names);
    if (!structure)
        fail(t.line(), t.fieldName("structure"), "is missing");
    IndexKind kind = IndexKind::ValkeyHashtable;
    for (const auto k : kIndexKinds)
        if (indexKindName(k) == *structure)
            kind = k;
    IndexParams p = engineIndexParams(kind);
    p.bucketBytes = static_cast<std::uint32_t>(t.size("bucket_bytes", p.bucketBytes, 1u << 16));
    p.entriesPerBucket = static_cast<std::uint32_t>(t.size("entries_per_bucket", p.entriesPerBucket, 1024));
    if (const auto* sizing = t.array("sizing")) {
        if (sizing->size() != 2)
            fail(lineOf(*sizing), t.fieldName("sizing"), "must be [factor, divisor]");
        p.sizingFactor
            = static_cast<std::uint32_t>(TableReader::sizeValue(*sizing->get(0), t.fieldName("sizing"), 1024));
        p.sizingDivisor
            = static_cast<std::uint32_t>(TableReader::sizeValue(*sizing->get(1), t.fieldName("sizing"), 1024));
    }
    p.maxFillPercent = static_cast<std::uint32_t>(t.size("max_fill_percent", p.maxFillPercent, 10000));
    p.minFillPermille = static_cast<std::uint32_t>(t.tenths("min_fill_percent", p.minFillPermille, 1000));
    p.initialBuckets = t.size("initial_buckets", p.initialBuckets, std::uint64_t { 1 } << 40);
    p.slotPointerBytes = static_cast<std::uint32_t>(t.size("slot_pointer_bytes", p.slotPointerBytes, 64));
    p.shrinkStepSkipsEmpty = t.flag("shrink_step_skips_empty", false);
    def.index = { kind, t.flag("expires_table", false), p };
    if (p.bucketBytes == 0)
        fail(t.line(), t.fieldName("bucket_bytes"), "a bucket or slot of 0 bytes");
    if (kind == IndexKind::ValkeyHashtable && p.entriesPerBucket < 2)
        fail(t.line(), t.fieldName("entries_per_bucket"),
            "a valkey-hashtable bucket needs at least 2 entries (a full bucket's last one becomes its child pointer)");
    if (p.sizingFactor == 0 || p.sizingDivisor == 0)
        fail(t.line(), t.fieldName("sizing"), "factor and divisor must be at least 1");
    if (p.maxFillPercent == 0)
        fail(t.line(), t.fieldName("max_fill_percent"), "a table that grows before its first entry");
    if (p.minFillPermille >= std::uint64_t { p.maxFillPercent } * 10)
        fail(t.line(), t.fieldName("min_fill_percent"),
            fmt::format("{}% is not below max_fill_percent {}%: the table would shrink and grow forever",
                p.minFillPermille / 10.0, p.maxFillPercent));
    if (kind != IndexKind::ValkeyHashtable && p.initialBuckets == 0)
        fail(t.line(), t.fieldName("initial_buckets"), "the first table needs at least one bucket");
    t.rejectUnknown("structure, bucket_bytes, entries_per_bucket, sizing, max_fill_percent, min_fill_percent, "
                    "initial_buckets, slot_pointer_bytes, expires_table, shrink_step_skips_empty");
}

void readLengthHeaders(TableReader& t, LayoutDefinition& def) {
    for (auto&& [key, node] : t.raw()) {
        const std::string name(key.str());
        t.find(name);
        if (!node.is_table())
            fail(lineOf(node), t.fieldName(name), "must be a table");
        TableReader h(*node.as_table(), t.fieldName(name));
        LengthHeader header;
        header.name = name;
        if (const auto* steps = h.array("steps")) {
            for (const auto& step : *steps) {
                const auto* pair = step.as_array();
                if (!pair || pair->size() != 2)
                    fail(lineOf(step), h.fieldName("steps"), "each step must be [largest length, header bytes]");
                const auto largest = TableReader::sizeValue(*pair->get(0), h.fieldName("steps"), UINT64_MAX >> 1);
                const auto bytes = TableReader::sizeValue(*pair->get(1), h.fieldName("steps"), 64);
                if (!header.steps.empty() && largest <= header.steps.back().first)
                    fail(lineOf(step), h.fieldName("steps"), "steps must grow: each largest length above the last");
                header.steps.emplace_back(largest, static_cast<std::uint32_t>(bytes));
            }
        }
        const auto otherwise = h.size("otherwise", 64);
        if (!otherwise)
            fail(h.line(), h.fieldName("otherwise"), "is missing (the header of a string longer than every step)");
        header.otherwiseBytes = static_cast<std::uint32_t>(*otherwise);
        if (const auto empty = h.size("empty", 64))
            header.emptyBytes = static_cast<std::int64_t>(*empty);
        h.rejectUnknown("steps, otherwise, empty");
        def.lengthHeaders.push_back(std::move(header));
    }
}

int lengthHeaderIndex(
    const LayoutDefinition& def, const std::string& name, std::uint64_t line, const std::string& field) {
    for (std::size_t i = 0; i < def.lengthHeaders.size(); ++i)
        if (def.lengthHeaders[i].name == name)
            return static_cast<int>(i);
    fail(line, field, "no [length_headers." + name + "] table defines '" + name + "'");
}

Purpose parsePurpose(TableReader& t) {
    static const std::map<std::string, Purpose> kPurposes { { "object", Purpose::Object }, { "key", Purpose::Key },
        { "value", Purpose::Value }, { "entry", Purpose::Entry }, { "expire-entry", Purpose::ExpireEntry },
        { "item", Purpose::Item } };
    const auto name = t.choice("purpose", { "object", "key", "value", "entry", "expire-entry", "item" });
    return name ? kPurposes.at(*name) : Purpose::Object;
}

// Pointer targets are names until every allocation is known.
struct PendingPointer {
    std::size_t allocation;
    std::size_t field;
    std::string target;
    std::uint64_t line;
    std::string fieldName;
};

FieldDefinition readField(TableReader& t, const LayoutDefinition& def, std::vector<PendingPointer>& pointers,
    std::size_t allocationIndex, std::size_t fieldIndex) {
    FieldDefinition f;
    f.line = static_cast<int>(t.line());
    f.name = t.requiredText("name");
    const auto bytes = t.size("bytes");
    const auto content = t.choice("string", { "key", "value" });
    if (bytes && content)
        fail(t.line(), t.fieldName("bytes"),
            "a field has either 'bytes' (fixed) or 'string' (the key or value), not both");
    if (!bytes && !content)
        fail(t.line(), t.name(), "needs 'bytes' (a fixed size) or 'string' (\"key\" or \"value\")");
    if (bytes) {
        f.bytes = *bytes;
        for (const char* only : { "prefix_bytes", "length_header", "header_bytes", "terminator_bytes", "min_bytes",
                 "decision_header_bytes" })
            if (t.has(only))
                fail(lineOf(*t.find(only)), t.fieldName(only),
                    "applies to string fields only (string = \"key\" or \"value\"), not to a fixed 'bytes' field");
    } else {
        f.content = *content == "key" ? FieldContent::Key : FieldContent::Value;
        f.prefixBytes = static_cast<std::uint32_t>(t.size("prefix_bytes", 0, 64));
        if (const auto header = t.text("length_header")) {
            if (t.has("header_bytes"))
                fail(t.line(), t.fieldName("header_bytes"), "give 'length_header' or 'header_bytes', not both");
            f.lengthHeader
                = lengthHeaderIndex(def, *header, lineOf(*t.find("length_header")), t.fieldName("length_header"));
        }
        f.headerBytes = static_cast<std::uint32_t>(t.size("header_bytes", 0, 64));
        f.terminatorBytes = static_cast<std::uint32_t>(t.size("terminator_bytes", 0, 64));
        f.minBytes = t.size("min_bytes", 0, 1u << 20);
        if (const auto d = t.size("decision_header_bytes", 64))
            f.decisionHeaderBytes = static_cast<std::int64_t>(*d);
    }
    f.pointer = t.flag("pointer", false);
    if (const auto target = t.text("points_to")) {
        if (!f.pointer)
            fail(lineOf(*t.find("points_to")), t.fieldName("points_to"), "only a field with pointer = true points");
        pointers.push_back(
            { allocationIndex, fieldIndex, *target, lineOf(*t.find("points_to")), t.fieldName("points_to") });
    }
    f.holdsInteger = t.flag("holds_integer", false);
    if (f.holdsInteger && f.content != FieldContent::Fixed)
        fail(t.line(), t.fieldName("holds_integer"), "only a fixed-size field can hold an integer value");
    f.when = conditionField(t, "when");
    f.whenSlack = t.flag("when_slack", false);
    if (t.has("added_when")) {
        f.hasAddedWhen = true;
        f.addedWhen = conditionField(t, "added_when");
    }
    t.rejectUnknown("name, bytes, string, prefix_bytes, length_header, header_bytes, terminator_bytes, min_bytes, "
                    "decision_header_bytes, pointer, points_to, holds_integer, when, when_slack, added_when");
    return f;
}

void readAllocations(const toml::array& list, LayoutDefinition& def) {
    std::vector<PendingPointer> pointers;
    if (list.size() > kMaxLayoutAllocations)
        fail(lineOf(*list.get(kMaxLayoutAllocations)), "allocation",
            fmt::format("more than {} allocations (an engine's object is a handful)", kMaxLayoutAllocations));
    // Names are checked through sets: validation stays linear in the number of fields.
    std::unordered_map<std::string, int> allocationByName;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto* table = list.get(i)->as_table();
        if (!table)
            fail(lineOf(*list.get(i)), "allocation", "each [[allocation]] must be a table");
        AllocationDefinition a;
        a.name = TableReader(*table, fmt::format("allocation[{}]", i)).requiredText("name");
        TableReader t(*table, "allocation." + a.name);
        t.find("name");
        a.line = static_cast<int>(t.line());
        if (!allocationByName.emplace(a.name, static_cast<int>(i)).second)
            fail(t.line(), t.fieldName("name"), "a second allocation named '" + a.name + "'");
        a.purpose = parsePurpose(t);
        a.when = conditionField(t, "when");
        const auto indexed = t.choice("indexed_by", { "keyspace", "expires" });
        a.indexedBy = !indexed ? IndexedBy::None : *indexed == "keyspace" ? IndexedBy::Keyspace : IndexedBy::Expires;
        const auto* fields = t.array("fields");
        if (!fields || fields->empty())
            fail(t.line(), t.fieldName("fields"), "an allocation needs at least one field");
        if (fields->size() > kMaxLayoutFields)
            fail(lineOf(*fields->get(kMaxLayoutFields)), t.fieldName("fields"),
                fmt::format("more than {} fields in one allocation", kMaxLayoutFields));
        std::unordered_set<std::string> fieldNames;
        for (std::size_t j = 0; j < fields->size(); ++j) {
            const auto* ft = fields->get(j)->as_table();
            if (!ft)
                fail(lineOf(*fields->get(j)), t.fieldName("fields"), "each field must be a table { name = ..., ... }");
            const auto* nameNode = ft->get("name");
            const std::string fieldName
                = nameNode && nameNode->is_string() ? std::string(nameNode->as_string()->get()) : fmt::format("{}", j);
            TableReader fr(*ft, t.fieldName("fields." + fieldName));
            auto f = readField(fr, def, pointers, def.allocations.size(), j);
            if (!fieldNames.insert(f.name).second)
                fail(fr.line(), fr.fieldName("name"), "a second field named '" + f.name + "' in this allocation");
            a.fields.push_back(std::move(f));
        }
        t.rejectUnknown("name, purpose, when, indexed_by, fields");
        def.allocations.push_back(std::move(a));
    }
    for (const auto& p : pointers) {
        const auto found = allocationByName.find(p.target);
        const int target = found == allocationByName.end() ? -1 : found->second;
        if (target < 0)
            fail(p.line, p.fieldName, "no allocation is named '" + p.target + "'");
        def.allocations[p.allocation].fields[p.field].pointsTo = target;
    }
}

int allocationIndex(
    const LayoutDefinition& def, const std::string& name, std::uint64_t line, const std::string& field) {
    for (std::size_t i = 0; i < def.allocations.size(); ++i)
        if (def.allocations[i].name == name)
            return static_cast<int>(i);
    fail(line, field, "no allocation is named '" + name + "'");
}

void readEmbed(TableReader& t, LayoutDefinition& def) {
    const auto rule = t.choice(
        "rule", { "total-at-most-threshold", "value-at-most-threshold", "value-at-most", "always", "never" });
    if (!rule)
        fail(t.line(), t.fieldName("rule"), "is missing");
    def.embedRule = *rule == "total-at-most-threshold" ? EmbedRule::TotalAtMostThreshold
        : *rule == "value-at-most-threshold"           ? EmbedRule::ValueAtMostThreshold
        : *rule == "value-at-most"                     ? EmbedRule::ValueAtMost
        : *rule == "always"                            ? EmbedRule::Always
                                                       : EmbedRule::Never;
    if (const auto into = t.text("into"))
        def.embedInto = allocationIndex(def, *into, lineOf(*t.find("into")), t.fieldName("into"));
    if (def.embedRule == EmbedRule::ValueAtMost) {
        const auto limit = t.size("limit");
        if (!limit)
            fail(t.line(), t.fieldName("limit"), "rule value-at-most needs a limit (bytes)");
        def.embedValueLimit = *limit;
    }
    def.maxEmbeddedValueBytes = t.size("max_value_bytes", UINT64_MAX >> 1, UINT64_MAX >> 1);
    if (const auto* node = t.find("client_value_limit")) {
        if (node->is_string() && node->as_string()->get() == "auto")
            def.clientValueLimit = -2;
        else if (node->is_string())
            fail(lineOf(*node), t.fieldName("client_value_limit"), "must be a byte count or \"auto\"");
        else
            def.clientValueLimit = static_cast<std::int64_t>(
                TableReader::sizeValue(*node, t.fieldName("client_value_limit"), std::uint64_t { 1 } << 32));
    }
    const auto encoding = t.choice("encoding", { "embstr", "item" }).value_or("embstr");
    def.embeddedEncoding = encoding == "item" ? Encoding::Item : Encoding::Embedded;
    t.rejectUnknown("rule, into, limit, max_value_bytes, client_value_limit, encoding");
}

// The allocation names an array field of `t` lists ([get] path, [write] order), as indexes.
std::vector<int> allocationList(TableReader& t, const char* key, const LayoutDefinition& def) {
    std::vector<int> out;
    const std::string field = t.fieldName(key);
    if (const auto* names = t.array(key))
        for (const auto& name : *names) {
            if (!name.is_string())
                fail(lineOf(name), field, "must list allocation names");
            out.push_back(allocationIndex(def, std::string(name.as_string()->get()), lineOf(name), field));
        }
    return out;
}

LayoutDefinition readDefinition(const toml::table& root, const std::string& path, std::string_view text) {
    LayoutDefinition def;
    def.path = path;
    def.contentHash = hashHex(text);
    def.sourceText = std::string(text);
    TableReader top(root, "");
    const auto* layout = top.table("layout");
    if (!layout)
        fail(1, "layout", "the file needs a [layout] table with at least a name");
    TableReader lt(*layout, "layout");
    readLayoutSection(lt, def);
    if (const auto* threshold = top.table("threshold")) {
        TableReader t(*threshold, "threshold");
        readThreshold(t, def);
    }
    const auto* index = top.table("index");
    if (!index)
        fail(1, "index", "the file needs an [index] table (structure = \"valkey-hashtable\", ...)");
    TableReader it(*index, "index");
    readIndex(it, def);
    if (const auto* headers = top.table("length_headers")) {
        TableReader t(*headers, "length_headers");
        readLengthHeaders(t, def);
    }
    if (const auto* integers = top.table("integers")) {
        TableReader t(*integers, "integers");
        def.integerMaxChars = static_cast<std::uint32_t>(t.size("max_chars", 0, 20));
        def.sharedSmallIntegers = t.choice("shared", { "none", "small" }).value_or("none") == "small";
        t.rejectUnknown("max_chars, shared");
    }
    if (const auto* ttl = top.table("ttl")) {
        TableReader t(*ttl, "ttl");
        def.keepsStaleExpire = t.choice("stale_expire", { "kept", "dropped" }).value_or("dropped") == "kept";
        t.rejectUnknown("stale_expire");
    }
    if (const auto* value = top.table("value")) {
        TableReader t(*value, "value");
        if (const auto name = t.text("framing")) {
            auto framing = parseFraming(*name);
            if (!framing)
                fail(lineOf(*t.find("framing")), t.fieldName("framing"), framing.error().message);
            def.framing = *framing;
        }
        def.framingVersionBytes = static_cast<std::uint32_t>(t.size("version_bytes", 0, 1024));
        t.rejectUnknown("framing, version_bytes");
    }
    const auto* allocations = top.array("allocation");
    if (!allocations || allocations->empty())
        fail(1, "allocation", "the file needs at least one [[allocation]]");
    if (allocations->size() > kMaxAllocations)
        fail(lineOf(*allocations->get(kMaxAllocations)), "allocation",
            fmt::format("at most {} allocations per key", kMaxAllocations));
    readAllocations(*allocations, def);
    if (const auto* embed = top.table("embed")) {
        TableReader t(*embed, "embed");
        def.embedLine = static_cast<int>(t.line());
        readEmbed(t, def);
    }
    if (const auto* chunking = top.table("chunking")) {
        TableReader t(*chunking, "chunking");
        t.choice("style", { "memcached" });
        def.chunked = true;
        if (def.allocators != LayoutDefinition::Allocators::Slabs)
            fail(t.line(), "chunking",
                "chunked items need memcached's slab classes: set [layout] allocators = \"slabs\"");
        def.chunkHeaderBytes = static_cast<std::uint32_t>(t.size("chunk_header_bytes", 48, 4096));
        def.chunkPointerBytes = static_cast<std::uint32_t>(t.size("chunk_pointer_bytes", 16, 4096));
        // A chunked item becomes a header, full chunks and a last chunk: room for two more per key.
        if (def.allocations.size() + 2 > kMaxAllocations)
            fail(t.line(), "chunking",
                fmt::format("a chunked layout has at most {} allocations per key", kMaxAllocations - 2));
        t.rejectUnknown("style, chunk_header_bytes, chunk_pointer_bytes");
    }
    if (const auto* get = top.table("get")) {
        TableReader t(*get, "get");
        def.getPath = allocationList(t, "path", def);
        t.rejectUnknown("path");
    } else {
        for (std::size_t i = 0; i < def.allocations.size(); ++i)
            def.getPath.push_back(static_cast<int>(i)); // every allocation, as declared
    }
    if (const auto* write = top.table("write")) {
        TableReader t(*write, "write");
        def.madeOrder = allocationList(t, "order", def);
        const auto arguments = t.choice("arguments", { "none", "valkey", "dict" });
        def.arguments = arguments == "valkey" ? LayoutDefinition::Arguments::Valkey
            : arguments == "dict"             ? LayoutDefinition::Arguments::Dict
                                              : LayoutDefinition::Arguments::None; // also when absent
        def.argumentHeaderBytes = static_cast<std::uint32_t>(t.size("argument_header_bytes", 16, 4096));
        def.argumentMinValueBytes = static_cast<std::uint32_t>(t.size("argument_min_value_bytes", 0, 4096));
        t.rejectUnknown("order, arguments, argument_header_bytes, argument_min_value_bytes");
    }
    top.rejectUnknown(
        "layout, threshold, index, length_headers, integers, ttl, value, embed, chunking, allocation, get, write");
    layout_file::checkDefinition(def);
    return def;
}

} // namespace

Expected<LayoutDefinition> parseLayoutDefinition(std::string_view text, const std::string& path) {
    try {
        const toml::table root = toml::parse(text, path);
        return readDefinition(root, path, text);
    } catch (const toml::parse_error& e) {
        return dataErrorAtLine(
            fmt::format("not a valid TOML layout file: {}", e.description()), path, e.source().begin.line);
    } catch (const layout_file::LayoutFileError& e) {
        Error error = dataErrorAtLine(fmt::format("field {}: {}", e.field, e.why), path, e.line);
        error.field = e.field;
        return error;
    }
}

Expected<LayoutPtr> loadLayoutFile(const std::string& path) {
    auto text = readSmallFile(path, kMaxLayoutFileBytes, "layout file");
    if (!text)
        return text.error();
    auto def = parseLayoutDefinition(*text, path);
    if (!def)
        return def.error();
    return LayoutPtr(std::make_shared<DeclaredLayout>(std::move(*def)));
}

} // namespace layoutlab
