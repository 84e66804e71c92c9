// SPDX-License-Identifier: MIT
// RdbParser's records other than a string key: the value types other than strings, each parsed to its end
// (rdb.c rdbLoadObject) so that the keys after it are found, module data and AUX fields.
#include "rdb_parser.h"

#include "layoutlab/printable.h"

#include <array>
#include <charconv>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// rdb.h RDB_MODULE_OPCODE_*.
constexpr std::uint64_t kModuleEof = 0;
constexpr std::uint64_t kModuleSint = 1;
constexpr std::uint64_t kModuleUint = 2;
constexpr std::uint64_t kModuleFloat = 3;
constexpr std::uint64_t kModuleDouble = 4;
constexpr std::uint64_t kModuleString = 5;
// quicklist.h QUICKLIST_NODE_CONTAINER_PLAIN / PACKED (RDB_TYPE_LIST_QUICKLIST_2's per-node container).
constexpr std::uint64_t kContainerPlain = 1;
constexpr std::uint64_t kContainerPacked = 2;
// An AUX name or value read when at most this long (a version, a time, a size; not a Lua script).
constexpr std::size_t kMaxAuxValueBytes = 256;

// module.c moduleTypeNameByID: nine characters of 6 bits each, from the id's top bits.
std::string moduleName(std::uint64_t moduleId) {
    static constexpr char kCharset[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string name;
    const std::uint64_t id = moduleId >> 10;
    for (int j = 0; j < 9; ++j)
        name.push_back(kCharset[(id >> (6 * (8 - j))) & 63]);
    return name;
}
} // namespace

namespace {
std::string typeName(std::uint8_t type) {
    switch (type) {
    case rdb_type::kString:
        return "string";
    case rdb_type::kList:
        return "list (linked list)";
    case rdb_type::kSet:
        return "set (hashtable)";
    case rdb_type::kZset:
        return "sorted set (skiplist)";
    case rdb_type::kZset2:
        return "sorted set (skiplist)";
    case rdb_type::kHash:
        return "hash (hashtable)";
    case rdb_type::kHash2:
        return "hash (hashtable, field expiries)";
    case rdb_type::kModulePreGa:
    case rdb_type::kModule2:
        return "module";
    case rdb_type::kHashZipmap:
        return "hash (zipmap)";
    case rdb_type::kListZiplist:
        return "list (ziplist)";
    case rdb_type::kSetIntset:
        return "set (intset)";
    case rdb_type::kZsetZiplist:
        return "sorted set (ziplist)";
    case rdb_type::kHashZiplist:
        return "hash (ziplist)";
    case rdb_type::kListQuicklist:
        return "list (quicklist of ziplists)";
    case rdb_type::kListQuicklist2:
        return "list (quicklist)";
    case rdb_type::kStreamListpacks:
    case rdb_type::kStreamListpacks2:
    case rdb_type::kStreamListpacks3:
        return "stream";
    case rdb_type::kHashListpack:
        return "hash (listpack)";
    case rdb_type::kZsetListpack:
        return "sorted set (listpack)";
    case rdb_type::kSetListpack:
        return "set (listpack)";
    default:
        return fmt::format("type {}", type);
    }
}
} // namespace

const std::string& rdbTypeName(std::uint8_t type) {
    // Named once: a file of a million hashes asks for their name a million times.
    static const std::array<std::string, 256> kNames = [] {
        std::array<std::string, 256> names;
        for (std::size_t t = 0; t < names.size(); ++t)
            names[t] = typeName(static_cast<std::uint8_t>(t));
        return names;
    }();
    return kNames[type];
}

Status RdbParser::skipModuleValue() {
    // rdb.c rdbLoadCheckModuleValue.
    for (;;) {
        auto opcode = plainLength("a module value");
        if (!opcode)
            return opcode.error();
        switch (*opcode) {
        case kModuleEof:
            return Ok {};
        case kModuleSint:
        case kModuleUint:
            if (auto n = plainLength("a module value"); !n)
                return n.error();
            break;
        case kModuleFloat:
            if (auto ok = skip(4, "a module value"); !ok)
                return ok;
            break;
        case kModuleDouble:
            if (auto ok = skip(8, "a module value"); !ok)
                return ok;
            break;
        case kModuleString:
            if (auto ok = skipStrings(1, "a module value"); !ok)
                return ok;
            break;
        default:
            return corrupt(fmt::format("unknown module value opcode {}", *opcode));
        }
    }
}

Status RdbParser::skipStream(std::uint8_t type) {
    // rdb.c rdbLoadObject, RDB_TYPE_STREAM_LISTPACKS{,_2,_3}.
    constexpr const char* kWhat = "a stream";
    auto nodes = plainLength(kWhat);
    if (!nodes)
        return nodes.error();
    if (auto ok = skipStrings(*nodes * 2, kWhat); !ok) // each node: its master ID, its listpack
        return ok;
    // length, last ID (ms, seq); from _2: first ID, max deleted ID, entries added.
    const int lengths = type >= rdb_type::kStreamListpacks2 ? 8 : 3;
    for (int i = 0; i < lengths; ++i)
        if (auto n = plainLength(kWhat); !n)
            return n.error();
    auto groups = plainLength(kWhat);
    if (!groups)
        return groups.error();
    for (std::uint64_t g = 0; g < *groups; ++g) {
        if (auto ok = skipStrings(1, kWhat); !ok) // the group's name
            return ok;
        const int groupLengths = type >= rdb_type::kStreamListpacks2 ? 3 : 2; // last ID; from _2 its offset
        for (int i = 0; i < groupLengths; ++i)
            if (auto n = plainLength(kWhat); !n)
                return n.error();
        auto pending = plainLength(kWhat);
        if (!pending)
            return pending.error();
        for (std::uint64_t p = 0; p < *pending; ++p) { // a raw 16-byte ID, delivery time, delivery count
            if (auto ok = skip(16 + 8, kWhat); !ok)
                return ok;
            if (auto n = plainLength(kWhat); !n)
                return n.error();
        }
        auto consumers = plainLength(kWhat);
        if (!consumers)
            return consumers.error();
        for (std::uint64_t c = 0; c < *consumers; ++c) {
            if (auto ok = skipStrings(1, kWhat); !ok) // its name
                return ok;
            // Seen time; from _3 the active time too.
            if (auto ok = skip(type >= rdb_type::kStreamListpacks3 ? 16 : 8, kWhat); !ok)
                return ok;
            auto owned = plainLength(kWhat);
            if (!owned)
                return owned.error();
            if (*owned > UINT64_MAX / 16)
                return corrupt("a stream consumer's pending count is beyond any file");
            if (auto ok = skip(*owned * 16, kWhat); !ok)
                return ok;
        }
    }
    return Ok {};
}

Status RdbParser::skipValue(std::uint8_t type, std::uint64_t entryOffset) {
    // rdb.c rdbLoadObject, type by type.
    const std::string& what = rdbTypeName(type);
    const char* w = what.c_str();
    switch (type) {
    case rdb_type::kList:
    case rdb_type::kSet:
    case rdb_type::kListQuicklist: {
        auto n = plainLength(w);
        return n ? skipStrings(*n, w) : n.error();
    }
    case rdb_type::kHash: {
        auto n = plainLength(w);
        if (!n)
            return n.error();
        if (*n > UINT64_MAX / 2)
            return corrupt(fmt::format("{} of {} fields is beyond any file", what, *n));
        return skipStrings(*n * 2, w);
    }
    case rdb_type::kHash2: { // field, value, expiry (ms, 8 bytes)
        auto n = plainLength(w);
        if (!n)
            return n.error();
        for (std::uint64_t i = 0; i < *n; ++i) {
            if (auto ok = skipStrings(2, w); !ok)
                return ok;
            if (auto ok = skip(8, w); !ok)
                return ok;
        }
        return Ok {};
    }
    case rdb_type::kZset:
    case rdb_type::kZset2: {
        auto n = plainLength(w);
        if (!n)
            return n.error();
        for (std::uint64_t i = 0; i < *n; ++i) {
            if (auto ok = skipStrings(1, w); !ok)
                return ok;
            if (type == rdb_type::kZset2) { // rdbLoadBinaryDoubleValue
                if (auto ok = skip(8, w); !ok)
                    return ok;
                continue;
            }
            auto len = byte(w); // rdbLoadDoubleValue: 253, 254, 255 are NaN, +inf, -inf; else its text's length
            if (!len)
                return len.error();
            if (*len < 253)
                if (auto ok = skip(*len, w); !ok)
                    return ok;
        }
        return Ok {};
    }
    case rdb_type::kListQuicklist2: {
        auto n = plainLength(w);
        if (!n)
            return n.error();
        for (std::uint64_t i = 0; i < *n; ++i) {
            auto container = plainLength(w);
            if (!container)
                return container.error();
            if (*container != kContainerPlain && *container != kContainerPacked)
                return corrupt(
                    fmt::format("a quicklist node's container is {}, neither plain (1) nor packed (2)", *container));
            if (auto ok = skipStrings(1, w); !ok)
                return ok;
        }
        return Ok {};
    }
    case rdb_type::kHashZipmap:
    case rdb_type::kListZiplist:
    case rdb_type::kSetIntset:
    case rdb_type::kZsetZiplist:
    case rdb_type::kHashZiplist:
    case rdb_type::kHashListpack:
    case rdb_type::kZsetListpack:
    case rdb_type::kSetListpack:
        return skipStrings(1, w); // one blob
    case rdb_type::kStreamListpacks:
    case rdb_type::kStreamListpacks2:
    case rdb_type::kStreamListpacks3:
        return skipStream(type);
    case rdb_type::kModulePreGa:
        return dataError(
            "a module value in the format of Redis 4.0's release candidates: not readable", m_path, entryOffset, true);
    case rdb_type::kModule2: {
        auto id = plainLength("a module value");
        if (!id)
            return id.error();
        return dataError(fmt::format("a value of module type '{}' (version {}): layoutlab models no module's "
                                     "memory, so it cannot predict this server's (rdb input)",
                             printable(moduleName(*id)), *id & 1023),
            m_path, entryOffset, true);
    }
    default:
        return dataError(fmt::format("unknown value type {} (rdb input)", type), m_path, entryOffset, true);
    }
}

Expected<std::optional<std::string>> RdbParser::shortText(const char* what, std::size_t maxBytes) {
    bool encoded = false;
    auto n = length(&encoded, what);
    if (!n)
        return n.error();
    if (encoded && *n <= rdb_detail::kEncInt32) {
        const std::size_t bytes = std::size_t { 1 } << *n;
        auto p = take(bytes, what);
        if (!p)
            return p.error();
        return std::optional<std::string>(std::to_string(rdb_detail::signedLittleEndian(*p, bytes)));
    }
    if (encoded && *n != rdb_detail::kEncLzf)
        return corrupt(fmt::format("unknown string encoding {} in {}", *n, what));
    std::uint64_t skipped = *n;
    if (encoded) { // LZF: not looked into
        auto lzf = lzfLengths(what);
        if (!lzf)
            return lzf.error();
        skipped = lzf->compressed;
    } else if (*n <= maxBytes) {
        auto p = take(static_cast<std::size_t>(*n), what);
        if (!p)
            return p.error();
        return std::optional<std::string>(
            std::in_place, reinterpret_cast<const char*>(*p), static_cast<std::size_t>(*n));
    }
    if (auto ok = skip(skipped, what); !ok)
        return ok.error();
    return std::optional<std::string> {};
}

Status RdbParser::readAux() {
    // AUX: a name and a value, both strings. Only `ctime`, when the file was saved, is kept
    // (savedAtSeconds); a long value (a Lua script) is passed over.
    auto name = shortText("an AUX field", kMaxAuxValueBytes);
    if (!name)
        return name.error();
    auto value = shortText("an AUX field", kMaxAuxValueBytes);
    if (!value)
        return value.error();
    if (std::int64_t seconds = 0; *name == "ctime" && *value
        && std::from_chars((*value)->data(), (*value)->data() + (*value)->size(), seconds).ec == std::errc())
        m_savedAtSeconds = seconds;
    return Ok {};
}

} // namespace layoutlab
