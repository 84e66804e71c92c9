// SPDX-License-Identifier: MIT
// RdbParser's collections, read element by element as rdb.c rdbLoadObject reads them: a table's elements one
// string at a time (RDB_TYPE_HASH, _SET, _ZSET_2), a compact one's blob whole (RDB_TYPE_HASH_LISTPACK,
// _ZSET_LISTPACK, _SET_LISTPACK, _SET_INTSET: rdbGenericLoadStringObject, LZF decompressed), a list's
// quicklist node by node (RDB_TYPE_LIST_QUICKLIST_2: each node's container, then its listpack or, for a plain
// node, its one element).

#include "import_formats.h"
#include "layoutlab/resources.h"
#include "rdb_blobs.h"
#include "rdb_parser.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <lzf.h>

namespace layoutlab {

namespace {
// listpack.c LISTPACK_MAX_SAFETY_SIZE: no server writes a listpack larger (lpSafeToAdd).
constexpr std::uint64_t kMaxBlobBytes = std::uint64_t { 1 } << 30;
// A blob past this much is checked against the memory left before it is read.
constexpr std::uint64_t kCheckedBlobBytes = std::uint64_t { 64 } << 20;
// quicklist.h QUICKLIST_NODE_CONTAINER_PLAIN / PACKED.
constexpr std::uint64_t kContainerPlain = 1;
constexpr std::uint64_t kContainerPacked = 2;
// The longest plain string whose integer class is looked at: string2ll takes no longer (util.c).
constexpr std::uint64_t kLongestInteger = 20;

bool isPairs(std::uint8_t type) {
    return type == rdb_type::kHash || type == rdb_type::kHashListpack || type == rdb_type::kZset
        || type == rdb_type::kZset2 || type == rdb_type::kZsetListpack;
}

// The types whose elements are strings in the file, one after another (the others: a blob, or nodes).
bool isTable(std::uint8_t type) {
    return type == rdb_type::kHash || type == rdb_type::kSet || type == rdb_type::kZset || type == rdb_type::kZset2;
}

bool isSortedSet(std::uint8_t type) {
    return type == rdb_type::kZset || type == rdb_type::kZset2 || type == rdb_type::kZsetListpack;
}

RdbItem textItem(std::string_view text) {
    return { text.size(), integerClassOf(text) };
}
} // namespace

bool rdbTypeIsModelled(std::uint8_t type) {
    switch (type) {
    case rdb_type::kHash:
    case rdb_type::kSet:
    case rdb_type::kZset:
    case rdb_type::kZset2:
    case rdb_type::kHashListpack:
    case rdb_type::kZsetListpack:
    case rdb_type::kSetListpack:
    case rdb_type::kSetIntset:
    case rdb_type::kListQuicklist2:
        return true;
    default:
        return false;
    }
}

Status RdbParser::readInto(unsigned char* out, std::uint64_t bytes, const char* what) {
    for (std::uint64_t done = 0; done < bytes;) {
        const std::size_t step = static_cast<std::size_t>(std::min<std::uint64_t>(bytes - done, m_buffer.size()));
        auto p = take(step, what);
        if (!p)
            return p.error();
        std::memcpy(out + done, *p, step);
        done += step;
    }
    return Ok {};
}

Status RdbParser::readBlob(const char* what) {
    bool encoded = false;
    auto n = length(&encoded, what);
    if (!n)
        return n.error();
    if (encoded && *n != rdb_detail::kEncLzf)
        return corrupt(fmt::format("an integer where {} should be its bytes", what));
    std::uint64_t stored = *n, plain = *n;
    if (encoded) {
        auto lzf = lzfLengths(what);
        if (!lzf)
            return lzf.error();
        stored = lzf->compressed;
        plain = lzf->plain;
    }
    if (plain > kMaxBlobBytes || stored > kMaxBlobBytes)
        return corrupt(fmt::format("{} of {} bytes: larger than any server writes (1 GiB)", what, plain));
    if (const std::uint64_t held = plain + (encoded ? stored : 0); held > kCheckedBlobBytes)
        if (auto ok = checkMemory(held, what); !ok)
            return ok.error();
    m_blob.resize(static_cast<std::size_t>(plain));
    if (!encoded)
        return readInto(m_blob.data(), plain, what);
    m_compressed.resize(static_cast<std::size_t>(stored));
    if (auto ok = readInto(m_compressed.data(), stored, what); !ok)
        return ok;
    const unsigned got = lzf_decompress(
        m_compressed.data(), static_cast<unsigned>(stored), m_blob.data(), static_cast<unsigned>(plain));
    if (got != plain)
        return corrupt(fmt::format("{}: its LZF data does not decompress to the {} bytes it says", what, plain));
    return Ok {};
}

Expected<RdbItem> RdbParser::item(const char* what) {
    bool encoded = false;
    auto n = length(&encoded, what);
    if (!n)
        return n.error();
    if (encoded) {
        if (*n <= rdb_detail::kEncInt32) { // rdbLoadIntegerObject: the server holds its decimal text
            const std::size_t bytes = std::size_t { 1 } << *n;
            auto p = take(bytes, what);
            if (!p)
                return p.error();
            const std::string digits = std::to_string(rdb_detail::signedLittleEndian(*p, bytes));
            return textItem(digits);
        }
        if (*n != rdb_detail::kEncLzf)
            return corrupt(fmt::format("unknown string encoding {} in {}", *n, what));
        auto lzf = lzfLengths(what); // more than 20 bytes: never an integer (rdbSaveRawString)
        if (!lzf)
            return lzf.error();
        if (auto ok = skip(lzf->compressed, what); !ok)
            return ok.error();
        return RdbItem { lzf->plain, IntegerClass::None };
    }
    if (*n > kLongestInteger) {
        if (auto ok = skip(*n, what); !ok)
            return ok.error();
        return RdbItem { *n, IntegerClass::None };
    }
    auto p = take(static_cast<std::size_t>(*n), what);
    if (!p)
        return p.error();
    return textItem(std::string_view(reinterpret_cast<const char*>(*p), static_cast<std::size_t>(*n)));
}

Expected<RdbItem> RdbParser::score(std::uint8_t type, const char* what) {
    double v = 0;
    if (type == rdb_type::kZset2) { // rdbLoadBinaryDoubleValue: 8 bytes, little-endian
        auto p = take(8, what);
        if (!p)
            return p.error();
        const std::uint64_t bits = rdb_detail::littleEndian(*p, 8);
        std::memcpy(&v, &bits, sizeof v);
    } else { // rdbLoadDoubleValue: 253 NaN, 254 +inf, 255 -inf, else its text's length and text
        auto len = byte(what);
        if (!len)
            return len.error();
        if (*len >= 253) {
            v = *len == 253 ? std::nan("") : *len == 254 ? HUGE_VAL : -HUGE_VAL;
        } else {
            auto p = take(*len, what);
            if (!p)
                return p.error();
            const std::string text(reinterpret_cast<const char*>(*p), *len);
            v = std::strtod(text.c_str(), nullptr);
        }
    }
    if (std::isnan(v)) // rdbLoadObject: "Zset with NAN score detected"
        return corrupt(fmt::format("a NaN score in {}", what));
    RdbItem out = textItem(zsetScoreText(v));
    out.bytes = packedScoreBytes(v, out.bytes); // Redis 7.0 writes it in 17 digits where it makes a listpack of it
    return out;
}

Status RdbParser::beginCollection(RdbEntry& entry) {
    const std::uint8_t type = entry.type;
    const char* what = rdbTypeName(type).c_str();
    entry.collection = true;
    entry.collectionKind = type == rdb_type::kListQuicklist2 ? CollectionKind::List
        : isSortedSet(type)                                  ? CollectionKind::SortedSet
        : isPairs(type)                                      ? CollectionKind::Hash
                                                             : CollectionKind::Set;
    m_inCollection = true;
    m_collectionType = type;
    m_collectionWhat = what;
    m_items.clear();
    m_nextItem = 0;
    m_remaining = 0;
    if (isTable(type) || type == rdb_type::kListQuicklist2) {
        auto n = plainLength(what);
        if (!n)
            return n.error();
        m_remaining = *n;
        entry.elements = type == rdb_type::kListQuicklist2 ? 0 : *n;
        return Ok {};
    }
    if (auto ok = readBlob(what); !ok)
        return ok;
    std::string problem;
    entry.compact = true;
    const bool decoded = type == rdb_type::kSetIntset ? decodeIntset(m_blob, m_items, entry.intsetWidth, problem)
                                                      : decodeListpack(m_blob, m_items, problem);
    if (!decoded)
        return corrupt(fmt::format("{}: {}", what, problem));
    if (isPairs(type) && m_items.size() % 2 != 0)
        return corrupt(fmt::format("{} of {} entries: not in pairs", what, m_items.size()));
    entry.elements = isPairs(type) ? m_items.size() / 2 : m_items.size();
    return Ok {};
}

Status RdbParser::nextNode() {
    // rdbLoadObject, RDB_TYPE_LIST_QUICKLIST_2: an empty node is passed over ("Silently skip empty ziplists").
    const char* what = "a quicklist node";
    m_items.clear();
    m_nextItem = 0;
    while (m_items.empty() && m_remaining > 0) {
        --m_remaining;
        auto container = plainLength(what);
        if (!container)
            return container.error();
        if (*container == kContainerPlain) { // one element, its bytes as they are (never a listpack's integer)
            auto element = item(what);
            if (!element)
                return element.error();
            m_items.push_back({ element->bytes, IntegerClass::None });
            continue;
        }
        if (*container != kContainerPacked)
            return corrupt(
                fmt::format("a quicklist node's container is {}, neither plain (1) nor packed (2)", *container));
        if (auto ok = readBlob(what); !ok)
            return ok;
        std::string problem;
        if (!decodeListpack(m_blob, m_items, problem))
            return corrupt(fmt::format("{}: {}", what, problem));
    }
    return Ok {};
}

Expected<std::optional<RdbElement>> RdbParser::nextElement() {
    if (!m_inCollection)
        return std::optional<RdbElement> {};
    const std::uint8_t type = m_collectionType;
    const char* what = m_collectionWhat;
    RdbElement out;
    if (type == rdb_type::kListQuicklist2) {
        if (m_nextItem == m_items.size()) {
            if (auto ok = nextNode(); !ok)
                return ok.error();
            out.nodeElements = m_items.size();
            out.nodesAfter = m_remaining;
        }
    } else if (isTable(type)) {
        if (m_remaining > 0) {
            --m_remaining;
            auto element = item(what);
            if (!element)
                return element.error();
            out.element = *element;
            if (isPairs(type)) {
                auto value = isSortedSet(type) ? score(type, what) : item(what);
                if (!value)
                    return value.error();
                out.value = *value;
            }
            return std::optional<RdbElement>(out);
        }
        m_inCollection = false;
        return std::optional<RdbElement> {};
    }
    if (m_nextItem == m_items.size()) {
        m_inCollection = false;
        return std::optional<RdbElement> {};
    }
    out.element = m_items[m_nextItem++];
    if (isPairs(type))
        out.value = m_items[m_nextItem++];
    return std::optional<RdbElement>(out);
}

} // namespace layoutlab
