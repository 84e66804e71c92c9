// SPDX-License-Identifier: MIT
#include "rdb_parser.h"

#include "layoutlab/import/importer.h"
#include "layoutlab/printable.h"

#include <charconv>
#include <cstring>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// Bytes read at a time; a key or a short value is looked at in place when it fits (all but keys over this).
constexpr std::size_t kBufferBytes = std::size_t { 1 } << 20;

// rdb.h: the opcodes, from 255 down.
constexpr std::uint8_t kOpSlotImport = 243; // Valkey 9.0 (RDB 80)
constexpr std::uint8_t kOpSlotInfo = 244;
constexpr std::uint8_t kOpFunction2 = 245;
constexpr std::uint8_t kOpFunctionPreGa = 246;
constexpr std::uint8_t kOpModuleAux = 247;
constexpr std::uint8_t kOpIdle = 248;
constexpr std::uint8_t kOpFreq = 249;
constexpr std::uint8_t kOpAux = 250;
constexpr std::uint8_t kOpResizeDb = 251;
constexpr std::uint8_t kOpExpireTimeMs = 252;
constexpr std::uint8_t kOpExpireTime = 253;
constexpr std::uint8_t kOpSelectDb = 254;
constexpr std::uint8_t kOpEof = 255;
// rdb.h: types and opcodes a Redis-magic file may not use (RDB_FOREIGN_TYPE_MIN..MAX: Redis 7.4+ gave
// them other meanings than Valkey 9 did).
constexpr std::uint8_t kForeignTypeMin = 22;
constexpr std::uint8_t kForeignTypeMax = 243;
// rdb.h: the newest versions written (Redis 7.2 and Valkey 8: 11; Valkey 9: 80) and Redis's own range
// after 7.2 (RDB_FOREIGN_VERSION_MIN..MAX).
constexpr int kNewestRedisMagicVersion = 11;
constexpr int kForeignVersionMax = 79;
constexpr int kNewestValkeyMagicVersion = 80;
std::uint64_t decimalDigits(std::int64_t v) {
    char text[24];
    return static_cast<std::uint64_t>(std::to_chars(text, text + sizeof text, v).ptr - text);
}

} // namespace

RdbParser::RdbParser(InputStream& input, std::string path)
    : m_input(input)
    , m_path(std::move(path))
    , m_buffer(kBufferBytes) { }

Error RdbParser::corrupt(const std::string& message) const {
    return dataError(message + " (rdb input)", m_path, offset(), true);
}

Status RdbParser::fill(std::size_t need, const char* what) {
    if (m_end - m_pos >= need)
        return Ok {};
    // What is consumed leaves the buffer, summed; what is left moves to its start.
    m_crc.update(m_buffer.data() + m_summed, m_pos - m_summed);
    std::memmove(m_buffer.data(), m_buffer.data() + m_pos, m_end - m_pos);
    m_base += m_pos;
    m_end -= m_pos;
    m_pos = 0;
    m_summed = 0;
    while (m_end - m_pos < need && !m_inputEnded) {
        auto got = m_input.read(m_buffer.data() + m_end, m_buffer.size() - m_end);
        if (!got)
            return got.error();
        if (*got == 0)
            m_inputEnded = true;
        m_end += *got;
    }
    if (m_end - m_pos < need)
        return corrupt(fmt::format("truncated: the file ends {} bytes into {}, which needs {} more", m_end - m_pos,
            what, need - (m_end - m_pos)));
    return Ok {};
}

Expected<std::uint8_t> RdbParser::byteAfterFill(const char* what) {
    if (auto ok = fill(1, what); !ok)
        return ok.error();
    return m_buffer[m_pos++];
}

Expected<const unsigned char*> RdbParser::take(std::size_t n, const char* what) {
    if (auto ok = fill(n, what); !ok)
        return ok.error();
    const unsigned char* p = m_buffer.data() + m_pos;
    m_pos += n;
    return p;
}

Status RdbParser::skip(std::uint64_t n, const char* what) {
    while (n > 0) {
        if (m_pos == m_end)
            if (auto ok = fill(1, what); !ok)
                return ok.error();
        const std::size_t step = static_cast<std::size_t>(std::min<std::uint64_t>(n, m_end - m_pos));
        m_pos += step;
        n -= step;
    }
    return Ok {};
}

Status RdbParser::readHeader() {
    auto magic = take(9, "the file's signature (REDIS0nnn or VALKEYnnn)");
    if (!magic)
        return dataError("not an RDB file: shorter than its 9-byte signature", m_path);
    const std::string_view text(reinterpret_cast<const char*>(*magic), 9);
    const bool redis = text.starts_with("REDIS0");
    m_valkeyMagic = text.starts_with("VALKEY");
    int version = -1;
    const std::string_view digits = text.substr(6);
    if ((redis || m_valkeyMagic) && digits.find_first_not_of("0123456789") == std::string_view::npos)
        std::from_chars(digits.data(), digits.data() + digits.size(), version);
    if (version < 1)
        return dataError(fmt::format("not an RDB file: it begins '{}', not REDIS0nnn or VALKEYnnn", printable(text)),
            m_path, 0, true);
    m_version = version;
    // rdb.c rdbIsVersionAccepted, as a server in its strict default mode applies it.
    if (redis && version > kNewestRedisMagicVersion && version <= kForeignVersionMax)
        return dataError(fmt::format("RDB version {} is Redis's own format after 7.2 (Redis 7.4 and later); "
                                     "layoutlab reads RDB 1-11 (Redis to 7.2, Valkey 7.2-8.x) and 80 (Valkey 9)",
                             version),
            m_path, 6, true);
    if ((redis && version > kForeignVersionMax) || (m_valkeyMagic && version <= kForeignVersionMax))
        return dataError(
            fmt::format("'{}': RDB version {} does not go with that signature", text, version), m_path, 6, true);
    if (m_valkeyMagic && version > kNewestValkeyMagicVersion)
        return dataError(
            fmt::format("RDB version {} is newer than the newest this reader knows (80, Valkey 9.x)", version), m_path,
            6, true);
    return Ok {};
}

Expected<std::uint64_t> RdbParser::length(bool* encoded, const char* what) {
    auto first = byte(what);
    if (!first)
        return first.error();
    const unsigned b = *first;
    *encoded = false;
    switch (b >> 6) {
    case 0:
        return std::uint64_t { b & 0x3f };
    case 1: {
        auto next = byte(what);
        if (!next)
            return next.error();
        return (std::uint64_t { b & 0x3f } << 8) | *next;
    }
    case rdb_detail::kEncVal:
        *encoded = true;
        return std::uint64_t { b & 0x3f };
    default:
        break;
    }
    if (b != 0x80 && b != 0x81)
        return corrupt(fmt::format("unknown length encoding 0x{:02x} in {}", b, what));
    const std::size_t bytes = b == 0x80 ? 4 : 8;
    auto p = take(bytes, what);
    if (!p)
        return p.error();
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i)
        v = (v << 8) | (*p)[i];
    return v;
}

Expected<std::uint64_t> RdbParser::plainLength(const char* what) {
    bool encoded = false;
    auto n = length(&encoded, what);
    if (n && encoded)
        return corrupt(fmt::format("a string encoding where {} should be a length", what));
    return n;
}

Expected<std::uint64_t> RdbParser::hashInPieces(std::uint64_t seed, std::uint64_t bytes, const char* what) {
    std::uint64_t h = seed;
    for (std::uint64_t left = bytes; left > 0;) {
        const std::size_t step = static_cast<std::size_t>(std::min<std::uint64_t>(left, kBufferBytes));
        auto p = take(step, what);
        if (!p)
            return p.error();
        h = KeyInterner::finalize(h ^ KeyInterner::hashKey(std::string_view(reinterpret_cast<const char*>(*p), step)));
        left -= step;
    }
    return h;
}

bool RdbParser::plainStringInBuffer(bool classify, bool hash, StringInfo& out) {
    // The common case, without the Expected<> of each step: a plain string of a 6- or 14-bit length,
    // whole in the buffer.
    const std::size_t left = m_end - m_pos;
    if (left < 2)
        return false;
    const unsigned char* p = m_buffer.data() + m_pos;
    std::size_t header = 1;
    std::size_t n = p[0] & 0x3f;
    if ((p[0] >> 6) == 1) {
        header = 2;
        n = (n << 8) | p[1];
    } else if ((p[0] >> 6) != 0) {
        return false;
    }
    if (header + n > left)
        return false;
    const std::string_view text(reinterpret_cast<const char*>(p + header), n);
    out.bytes = n;
    if (hash)
        out.hash = KeyInterner::hashKey(text);
    if (classify && n <= 20)
        out.kind = valueKindOf(text);
    m_pos += header + n;
    return true;
}

Expected<RdbParser::StringInfo> RdbParser::string(const char* what, bool classify, bool hash) {
    if (StringInfo fast; plainStringInBuffer(classify, hash, fast))
        return fast;
    bool encoded = false;
    auto n = length(&encoded, what);
    if (!n)
        return n.error();
    StringInfo out;
    if (encoded) {
        if (*n == rdb_detail::kEncInt8 || *n == rdb_detail::kEncInt16 || *n == rdb_detail::kEncInt32) {
            // rdbLoadIntegerObject: a little-endian signed integer the server turns into its decimal text.
            const std::size_t bytes = std::size_t { 1 } << *n;
            auto p = take(bytes, what);
            if (!p)
                return p.error();
            const std::int64_t v = rdb_detail::signedLittleEndian(*p, bytes);
            out.bytes = decimalDigits(v);
            out.kind = v >= 0 && v <= 9999 ? ValueKind::SmallInteger : ValueKind::Integer;
            if (hash) {
                char text[24];
                const auto end = std::to_chars(text, text + sizeof text, v).ptr;
                out.hash = KeyInterner::hashKey(std::string_view(text, static_cast<std::size_t>(end - text)));
            }
            return out;
        }
        if (*n != rdb_detail::kEncLzf)
            return corrupt(fmt::format("unknown string encoding {} in {}", *n, what));
        // Only strings of more than 20 bytes are compressed (rdbSaveRawString), so never an integer.
        auto lzf = lzfLengths(what);
        if (!lzf)
            return lzf.error();
        out.bytes = lzf->plain;
        if (!hash) {
            if (auto ok = skip(lzf->compressed, what); !ok)
                return ok.error();
            return out;
        }
        // The compressed bytes stand for the key: the same key compresses alike, and a plain key's hash
        // never meets them (the marker).
        auto h = hashInPieces(0x4c5a46ULL ^ lzf->compressed, lzf->compressed, what);
        if (!h)
            return h.error();
        out.hash = *h;
        return out;
    }
    out.bytes = *n;
    if (hash && *n <= kBufferBytes) {
        auto p = take(static_cast<std::size_t>(*n), what);
        if (!p)
            return p.error();
        const std::string_view text(reinterpret_cast<const char*>(*p), static_cast<std::size_t>(*n));
        out.hash = KeyInterner::hashKey(text);
        if (classify)
            out.kind = valueKindOf(text);
        return out;
    }
    if (hash) { // a key longer than the buffer
        auto h = hashInPieces(*n, *n, what);
        if (!h)
            return h.error();
        out.hash = *h;
        return out;
    }
    if (classify && *n <= 20) {
        auto p = take(static_cast<std::size_t>(*n), what);
        if (!p)
            return p.error();
        out.kind = valueKindOf(std::string_view(reinterpret_cast<const char*>(*p), static_cast<std::size_t>(*n)));
        return out;
    }
    if (auto ok = skip(*n, what); !ok)
        return ok.error();
    return out;
}

Expected<RdbParser::LzfLengths> RdbParser::lzfLengths(const char* what) {
    auto compressed = plainLength(what);
    if (!compressed)
        return compressed.error();
    auto plain = plainLength(what);
    if (!plain)
        return plain.error();
    // rdbSaveLzfStringObject writes LZF only for a value it shrank, so neither length is ever 0; and
    // liblzf's lzf_decompress reads its first byte before looking at the input's length.
    if (*compressed == 0 || *plain == 0)
        return corrupt(fmt::format("an LZF string of {} bytes compressed to {} in {}", *plain, *compressed, what));
    return LzfLengths { *compressed, *plain };
}

Status RdbParser::skipStrings(std::uint64_t count, const char* what) {
    for (std::uint64_t i = 0; i < count; ++i)
        if (auto s = string(what, false, false); !s)
            return s.error();
    return Ok {};
}

Status RdbParser::finish() {
    m_ended = true;
    if (m_version < 5)
        return Ok {};
    m_crc.update(m_buffer.data() + m_summed, m_pos - m_summed);
    m_summed = m_pos;
    const std::uint64_t expected = m_crc.value();
    auto p = take(8, "the checksum after the EOF opcode");
    if (!p)
        return p.error();
    m_summed = m_pos;
    const std::uint64_t saved = rdb_detail::littleEndian(*p, 8);
    if (saved != 0 && saved != expected)
        return dataError(fmt::format("the checksum does not match: the file says {:016x}, its bytes give {:016x} "
                                     "(rdb input: corrupt or cut)",
                             saved, expected),
            m_path, offset() - 8, true);
    return Ok {};
}

Expected<std::optional<RdbEntry>> RdbParser::next() {
    if (m_version == 0)
        if (auto ok = readHeader(); !ok)
            return ok.error();
    while (m_inCollection) { // the rest of the collection before
        auto element = nextElement();
        if (!element)
            return element.error();
    }
    if (m_ended)
        return std::optional<RdbEntry> {};
    for (;;) {
        const std::uint64_t at = offset();
        auto type = byte("the next opcode or key type (the file has no EOF opcode)");
        if (!type)
            return type.error();
        if (!m_valkeyMagic && *type >= kForeignTypeMin && *type <= kForeignTypeMax)
            return dataError(fmt::format("type or opcode {} is not in the format up to Redis 7.2 (a newer Redis's?) "
                                         "(rdb input)",
                                 *type),
                m_path, at, true);
        switch (*type) {
        case kOpEof: {
            if (auto ok = finish(); !ok)
                return ok.error();
            return std::optional<RdbEntry> {};
        }
        case kOpSelectDb: {
            auto db = plainLength("SELECTDB");
            if (!db)
                return db.error();
            if (*db > UINT32_MAX)
                return corrupt(fmt::format("SELECTDB {}: no server has that many databases", *db));
            m_db = static_cast<std::uint32_t>(*db);
            continue;
        }
        case kOpResizeDb:
        case kOpSlotInfo: {
            const bool resize = *type == kOpResizeDb;
            const bool first = resize && m_keysHint == 0;
            std::uint64_t hints[2] = {};
            for (int i = 0; i < (resize ? 2 : 3); ++i) {
                auto n = plainLength(resize ? "RESIZEDB" : "SLOT_INFO");
                if (!n)
                    return n.error();
                if (first)
                    (i == 0 ? m_keysHint : m_expiresHint) = *n;
                if (resize)
                    hints[i] = *n;
            }
            if (resize)
                m_hintsByDb[m_db] = { hints[0], hints[1] };
            continue;
        }
        case kOpExpireTime:
        case kOpExpireTimeMs: {
            const bool ms = *type == kOpExpireTimeMs;
            auto p = take(ms ? 8 : 4, "an expire time");
            if (!p)
                return p.error();
            // rdbLoadTime (seconds, int32) and rdbLoadMillisecondTime (int64): little-endian on every
            // host the files come from (RDB 9 made it so everywhere).
            m_expireMs = ms ? static_cast<std::int64_t>(rdb_detail::littleEndian(*p, 8))
                            : std::int64_t { static_cast<std::int32_t>(rdb_detail::littleEndian(*p, 4)) } * 1000;
            continue;
        }
        case kOpFreq:
            if (auto b = byte("FREQ"); !b)
                return b.error();
            continue;
        case kOpIdle:
            if (auto n = plainLength("IDLE"); !n)
                return n.error();
            continue;
        case kOpAux:
            if (auto ok = readAux(); !ok)
                return ok.error();
            continue;
        case kOpModuleAux: {
            // rdb.c: module id, when-opcode (RDB_MODULE_OPCODE_UINT), when; then the module's value.
            for (int i = 0; i < 3; ++i)
                if (auto n = plainLength("MODULE_AUX"); !n)
                    return n.error();
            if (auto ok = skipModuleValue(); !ok)
                return ok.error();
            continue;
        }
        case kOpFunctionPreGa:
            return dataError("functions in the format of Redis 7.0's release candidates: not readable (rdb input)",
                m_path, at, true);
        case kOpFunction2:
            if (auto ok = skipStrings(1, "FUNCTION2"); !ok)
                return ok.error();
            continue;
        case kOpSlotImport: { // Valkey 9 (cluster_migrateslots.c clusterRDBLoadSlotImport)
            if (auto ok = skipStrings(1, "SLOT_IMPORT"); !ok)
                return ok.error();
            auto ranges = plainLength("SLOT_IMPORT");
            if (!ranges)
                return ranges.error();
            for (std::uint64_t i = 0; i < *ranges * 2; ++i)
                if (auto n = plainLength("SLOT_IMPORT"); !n)
                    return n.error();
            continue;
        }
        default:
            break;
        }
        RdbEntry entry;
        entry.offset = at;
        entry.db = m_db;
        entry.type = *type;
        entry.expireMs = m_expireMs;
        m_expireMs = -1;
        auto key = string("a key", false, true);
        if (!key)
            return key.error();
        entry.keyBytes = key->bytes;
        entry.keyHash = m_db == 0 ? key->hash : KeyInterner::finalize(key->hash ^ (0x9e3779b97f4a7c15ULL * m_db));
        if (*type == rdb_type::kString) {
            auto value = string("a string value", true, false);
            if (!value)
                return value.error();
            entry.valueBytes = value->bytes;
            entry.kind = value->kind;
        } else if (rdbTypeIsModelled(*type)) {
            if (auto ok = beginCollection(entry); !ok)
                return ok.error();
        } else if (auto ok = skipValue(*type, at); !ok) {
            return ok.error();
        }
        return std::optional<RdbEntry>(entry);
    }
}

} // namespace layoutlab
