// SPDX-License-Identifier: MIT
#pragma once

// An RDB file (Redis 2.x to 7.2: RDB versions 1-11, "REDIS0011"; Valkey 7.2 and 8.x: RDB 11; Valkey 9.x:
// RDB 80, "VALKEY080"), read key by key in bounded pieces: a value's bytes are passed over as they
// stream by, never held, so a gigabyte string costs a buffer's worth of memory.
//
// The grammar, from Valkey 9.1's rdb.c (rdbLoadRioWithLoadingCtx, rdbLoadObject, rdbGenericLoadStringObject,
// rdbLoadLenByRef) and Redis 7.2's, which it extends:
//   file     := magic[9] (opcode | entry)* EOF [crc64: 8 bytes LE, RDB >= 5]
//   opcode   := SELECTDB len | RESIZEDB len len | AUX string string | EXPIRETIME i32 | EXPIRETIME_MS i64
//             | IDLE len | FREQ u8 | MODULE_AUX len len len module-value | FUNCTION2 string
//             | SLOT_INFO len len len | SLOT_IMPORT string len (len len)*        (Valkey 9: RDB 80)
//   entry    := type key:string value       (the EXPIRETIME/IDLE/FREQ before it belong to it)
//   len      := 00xxxxxx | 01xxxxxx u8 | 0x80 u32-BE | 0x81 u64-BE
//   string   := len bytes | 11000000 i8 | 11000001 i16 | 11000010 i32 | 11000011 clen:len len bytes[clen] (LZF)
// Every value type is parsed to its end, so that the keys after it are found; what the caller does with a
// type it does not model is its own affair (RdbEntry::type).

#include "layoutlab/expected.h"
#include "layoutlab/import/input_stream.h"
#include "layoutlab/trace/request.h"
#include "layoutlab/trace/value_kind.h"
#include "rdb_crc64.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace layoutlab {

// rdb.h RdbType: the value types an entry can have.
namespace rdb_type {
inline constexpr std::uint8_t kString = 0;
inline constexpr std::uint8_t kList = 1;
inline constexpr std::uint8_t kSet = 2;
inline constexpr std::uint8_t kZset = 3;
inline constexpr std::uint8_t kHash = 4;
inline constexpr std::uint8_t kZset2 = 5;
inline constexpr std::uint8_t kModulePreGa = 6;
inline constexpr std::uint8_t kModule2 = 7;
inline constexpr std::uint8_t kHashZipmap = 9;
inline constexpr std::uint8_t kListZiplist = 10;
inline constexpr std::uint8_t kSetIntset = 11;
inline constexpr std::uint8_t kZsetZiplist = 12;
inline constexpr std::uint8_t kHashZiplist = 13;
inline constexpr std::uint8_t kListQuicklist = 14;
inline constexpr std::uint8_t kStreamListpacks = 15;
inline constexpr std::uint8_t kHashListpack = 16;
inline constexpr std::uint8_t kZsetListpack = 17;
inline constexpr std::uint8_t kListQuicklist2 = 18;
inline constexpr std::uint8_t kStreamListpacks2 = 19;
inline constexpr std::uint8_t kSetListpack = 20;
inline constexpr std::uint8_t kStreamListpacks3 = 21;
inline constexpr std::uint8_t kHash2 = 22; // Valkey 9.0 (RDB 80): a hash with field expiries
} // namespace rdb_type

namespace rdb_detail {
// rdb.h: RDB_ENCVAL (a length byte's top bits 11: a string encoding follows) and the string encodings.
inline constexpr unsigned kEncVal = 3;
inline constexpr unsigned kEncInt8 = 0;
inline constexpr unsigned kEncInt16 = 1;
inline constexpr unsigned kEncInt32 = 2;
inline constexpr unsigned kEncLzf = 3;
// An integer of `bytes` little-endian bytes (the encoded integers, expire times, the checksum).
inline std::uint64_t littleEndian(const unsigned char* p, std::size_t bytes) {
    std::uint64_t v = 0;
    for (std::size_t i = bytes; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}
// The same, signed (rdbLoadIntegerObject's RDB_ENC_INT8/16/32).
inline std::int64_t signedLittleEndian(const unsigned char* p, std::size_t bytes) {
    const unsigned shift = 64 - 8 * static_cast<unsigned>(bytes);
    return static_cast<std::int64_t>(littleEndian(p, bytes) << shift) >> shift;
}
} // namespace rdb_detail

// "hash (listpack)", "string": the type and its encoding in the file, for counts and messages.
const std::string& rdbTypeName(std::uint8_t type);

// A collection's field, member, element, value or score as the loading server holds it: its length (an
// integer's digits, a score's d2string text) and, where a listpack or intset would store it as an integer,
// its integer class.
struct RdbItem {
    std::uint64_t bytes = 0;
    IntegerClass integer = IntegerClass::None;
};

// One element of a collection key (RdbParser::nextElement).
struct RdbElement {
    RdbItem element; // a hash's field, a set's or sorted set's member, a list's element
    RdbItem value; // a hash's value, a sorted set's score
    // A list's: at the first element of each quicklist node, the node's elements and the nodes after it.
    std::uint64_t nodeElements = 0;
    std::uint64_t nodesAfter = 0;
};

struct RdbEntry {
    std::uint64_t offset = 0; // of the entry's type byte
    std::uint32_t db = 0;
    std::uint8_t type = rdb_type::kString;
    // A hash of the key's bytes and its database (KeyInterner::hashKey of the key as the file holds it:
    // an integer-encoded key as its digits, an LZF-compressed one as its compressed bytes, which the same
    // key always compresses to), and its length as the server holds it.
    std::uint64_t keyHash = 0;
    std::uint64_t keyBytes = 0;
    // A string's value: its length as the server holds it (an integer's decimal digits) and its kind
    // (object.c tryObjectEncodingEx: a value of at most 20 bytes that string2l takes is an integer).
    std::uint64_t valueBytes = 0;
    ValueKind kind = ValueKind::String;
    std::int64_t expireMs = -1; // unix milliseconds; -1: none
    // A hash, set, sorted set or list in an encoding Redis 7.0 to Valkey 9 write (rdbTypeIsModelled), whose
    // elements nextElement() gives: compact when the file holds a listpack or an intset (of width
    // intsetWidth, as an integer class), and its element count (a list's come node by node: 0).
    bool collection = false;
    CollectionKind collectionKind = CollectionKind::Hash;
    bool compact = false;
    IntegerClass intsetWidth = IntegerClass::None;
    std::uint64_t elements = 0;
};

// Whether the reader gives a key of this type element by element (RdbEntry::collection).
bool rdbTypeIsModelled(std::uint8_t type);

class RdbParser {
public:
    RdbParser(InputStream& input, std::string path);
    RdbParser(const RdbParser&) = delete;
    RdbParser& operator=(const RdbParser&) = delete;

    // The next key, or nullopt after the last, once the checksum matched. An error names the offset. The
    // elements of a collection not read through are passed over.
    Expected<std::optional<RdbEntry>> next();
    // The next element of the collection next() gave last, or nullopt after its last.
    Expected<std::optional<RdbElement>> nextElement();
    // The elements of the compact collection's blob, or of the list's node, read last that nextElement has not
    // given yet, as they lie (a hash's and a sorted set's in pairs: element, value); passHeldItems(n) passes
    // the first n. Taken this way, a blob's elements cost a copy each rather than a call (most of a file's
    // elements are in blobs). Empty where the next element is still in the file.
    std::span<const RdbItem> heldItems() const { return { m_items.data() + m_nextItem, m_items.size() - m_nextItem }; }
    void passHeldItems(std::size_t n) { m_nextItem += n; }

    // What the file says it was saved at (AUX ctime, seconds), if it says.
    std::optional<std::int64_t> savedAtSeconds() const { return m_savedAtSeconds; }
    std::uint64_t offset() const { return m_base + m_pos; }
    std::uint64_t fileBytes() const { return m_input.sourceBytes(); }
    std::uint64_t bytesRead() const { return m_input.sourceBytesRead(); }
    // The keys the file's first RESIZEDB says its database holds, and of them with an expire (0: none said so
    // yet).
    std::uint64_t keysHint() const { return m_keysHint; }
    std::uint64_t expiresHint() const { return m_expiresHint; }
    // What database `db`'s RESIZEDB says it holds: (keys, of them with an expire); (0, 0) where none said so (yet:
    // a database's comes after its SELECTDB, before its keys).
    std::pair<std::uint64_t, std::uint64_t> hintsOf(std::uint32_t db) const {
        const auto it = m_hintsByDb.find(db);
        return it == m_hintsByDb.end() ? std::pair<std::uint64_t, std::uint64_t> {} : it->second;
    }

private:
    // Bytes.
    Status fill(std::size_t need, const char* what);
    Expected<std::uint8_t> byte(const char* what) {
        if (m_pos == m_end) [[unlikely]]
            return byteAfterFill(what);
        return m_buffer[m_pos++];
    }
    Expected<std::uint8_t> byteAfterFill(const char* what);
    Expected<const unsigned char*> take(std::size_t n, const char* what); // n <= kBufferBytes
    Status skip(std::uint64_t n, const char* what);
    Error corrupt(const std::string& message) const;

    // The grammar's pieces.
    Status readHeader();
    Expected<std::uint64_t> length(bool* encoded, const char* what);
    Expected<std::uint64_t> plainLength(const char* what); // a length that may not be a string encoding
    struct StringInfo {
        std::uint64_t bytes = 0; // as the server holds it
        ValueKind kind = ValueKind::String;
        std::uint64_t hash = 0; // when asked for
    };
    // A string: its length, its kind (`classify`: read a short plain one), its hash (`hash`).
    Expected<StringInfo> string(const char* what, bool classify, bool hash);
    // A string's text when it is at most `maxBytes` (an integer-encoded one as its digits); nullopt, and
    // passed over, when it is longer or LZF-compressed.
    Expected<std::optional<std::string>> shortText(const char* what, std::size_t maxBytes);
    bool plainStringInBuffer(bool classify, bool hash, StringInfo& out); // string()'s fast path
    // The next `bytes` bytes' hashes chained from `seed`, a buffer at a time (keys longer than a buffer).
    Expected<std::uint64_t> hashInPieces(std::uint64_t seed, std::uint64_t bytes, const char* what);
    Status skipStrings(std::uint64_t count, const char* what);
    // rdbLoadLzfStringObject's lengths, after the LZF marker: the compressed bytes', then the plain string's.
    struct LzfLengths {
        std::uint64_t compressed = 0;
        std::uint64_t plain = 0;
    };
    Expected<LzfLengths> lzfLengths(const char* what);
    Status skipValue(std::uint8_t type, std::uint64_t entryOffset);
    Status skipStream(std::uint8_t type);
    Status skipModuleValue(); // rdbLoadCheckModuleValue's opcodes, up to RDB_MODULE_OPCODE_EOF
    Status readAux();
    // Collections (rdb_collections.cpp): the count, or the compact blob decoded into m_items.
    Status beginCollection(RdbEntry& entry);
    Expected<RdbItem> item(const char* what); // a string element: its length and integer class
    Expected<RdbItem> score(std::uint8_t type, const char* what); // a sorted set's, as d2string writes it
    Status readBlob(const char* what); // a string whole into m_blob, LZF decompressed
    Status readInto(unsigned char* out, std::uint64_t bytes, const char* what);
    Status nextNode(); // a list's next quicklist node with elements into m_items
    Status finish(); // after EOF: the checksum

    InputStream& m_input;
    std::string m_path;
    std::vector<unsigned char> m_buffer;
    std::size_t m_pos = 0;
    std::size_t m_end = 0;
    std::uint64_t m_base = 0; // file offset of m_buffer[0]
    std::size_t m_summed = 0; // m_buffer[0, m_summed) is in m_crc
    RdbCrc64 m_crc;
    bool m_inputEnded = false;

    int m_version = 0;
    bool m_valkeyMagic = false;
    bool m_ended = false;
    std::uint32_t m_db = 0;
    std::int64_t m_expireMs = -1;
    std::optional<std::int64_t> m_savedAtSeconds;
    std::uint64_t m_keysHint = 0;
    std::uint64_t m_expiresHint = 0;
    std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> m_hintsByDb;

    // The collection being read: its type, the elements (a list's nodes) still to read from the file, or
    // those of its blob in m_items from m_nextItem.
    bool m_inCollection = false;
    std::uint8_t m_collectionType = 0;
    const char* m_collectionWhat = ""; // its type's name (rdbTypeName), for errors: looked up once a key
    std::uint64_t m_remaining = 0;
    std::vector<RdbItem> m_items;
    std::size_t m_nextItem = 0;
    std::vector<unsigned char> m_blob;
    std::vector<unsigned char> m_compressed;
};

} // namespace layoutlab
