// SPDX-License-Identifier: MIT
#include "rdb_blobs.h"

#include <charconv>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// listpack.c LP_HDR_SIZE, LP_EOF.
constexpr std::size_t kListpackHeaderBytes = 6;
constexpr unsigned char kListpackEnd = 0xFF;
// intset.h: its header (encoding, length).
constexpr std::size_t kIntsetHeaderBytes = 8;

RdbItem integerItem(std::int64_t v) {
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, v).ptr;
    return { static_cast<std::uint64_t>(end - text), integerClassOf(v) };
}

// A two's-complement integer of `bits` bits in the low bits of `u` (listpack.c lpGetWithSize: negstart,
// negmax).
std::int64_t signedOf(std::uint64_t u, unsigned bits) {
    if (bits == 64)
        return static_cast<std::int64_t>(u);
    const std::uint64_t negStart = std::uint64_t { 1 } << (bits - 1);
    return u >= negStart ? static_cast<std::int64_t>(u) - static_cast<std::int64_t>(negStart << 1)
                         : static_cast<std::int64_t>(u);
}

// listpack.c lpEncodeBacklen: the bytes of an entry's back length.
std::size_t backlenBytes(std::uint64_t entryBytes) {
    return entryBytes <= 127      ? 1
        : entryBytes <= 16383     ? 2
        : entryBytes <= 2097151   ? 3
        : entryBytes <= 268435455 ? 4
                                  : 5;
}
} // namespace

bool decodeListpack(std::span<const unsigned char> bytes, std::vector<RdbItem>& out, std::string& problem) {
    if (bytes.size() < kListpackHeaderBytes + 1) {
        problem = fmt::format("a listpack of {} bytes, shorter than its header and end", bytes.size());
        return false;
    }
    const std::uint64_t total = rdb_detail::littleEndian(bytes.data(), 4);
    if (total != bytes.size()) {
        problem = fmt::format("a listpack whose header says {} bytes in a string of {}", total, bytes.size());
        return false;
    }
    // Its header's entry count, 65535 when it has more (listpack.c LP_HDR_NUMELE_UNKNOWN): room made once.
    out.reserve(out.size() + rdb_detail::littleEndian(bytes.data() + 4, 2));
    std::size_t p = kListpackHeaderBytes;
    while (p < bytes.size() && bytes[p] != kListpackEnd) {
        const unsigned char b = bytes[p];
        const std::size_t left = bytes.size() - p;
        std::size_t header = 1; // the encoding's bytes
        std::uint64_t data = 0; // a string's bytes, after the header
        std::optional<std::int64_t> integer;
        auto need = [&](std::size_t n) { return left >= n; };
        if ((b & 0x80) == 0) { // LP_ENCODING_7BIT_UINT
            integer = b & 0x7f;
        } else if ((b & 0xC0) == 0x80) { // LP_ENCODING_6BIT_STR
            data = b & 0x3f;
        } else if ((b & 0xE0) == 0xC0) { // LP_ENCODING_13BIT_INT
            header = 2;
            if (need(2))
                integer = signedOf((std::uint64_t { b & 0x1fu } << 8) | bytes[p + 1], 13);
        } else if ((b & 0xF0) == 0xE0) { // LP_ENCODING_12BIT_STR
            header = 2;
            if (need(2))
                data = (std::uint64_t { b & 0xfu } << 8) | bytes[p + 1];
        } else if (b == 0xF0) { // LP_ENCODING_32BIT_STR
            header = 5;
            if (need(5))
                data = rdb_detail::littleEndian(bytes.data() + p + 1, 4);
        } else if (b >= 0xF1 && b <= 0xF4) { // LP_ENCODING_16/24/32/64BIT_INT
            static constexpr unsigned kBytes[] = { 2, 3, 4, 8 };
            const unsigned n = kBytes[b - 0xF1];
            header = 1 + n;
            if (need(header))
                integer = signedOf(rdb_detail::littleEndian(bytes.data() + p + 1, n), 8 * n);
        } else {
            problem = fmt::format("a listpack entry of unknown encoding 0x{:02x} at its byte {}", b, p);
            return false;
        }
        const std::uint64_t entry = header + data;
        if (entry > left || backlenBytes(entry) > left - entry) {
            problem = fmt::format("a listpack entry at its byte {} runs past its end", p);
            return false;
        }
        out.push_back(integer ? integerItem(*integer) : RdbItem { data, IntegerClass::None });
        p += entry + backlenBytes(entry);
    }
    if (p + 1 != bytes.size()) {
        problem = p == bytes.size() ? "a listpack without its end byte"
                                    : fmt::format("a listpack that ends at its byte {} of {}", p, bytes.size());
        return false;
    }
    return true;
}

bool decodeIntset(
    std::span<const unsigned char> bytes, std::vector<RdbItem>& out, IntegerClass& width, std::string& problem) {
    if (bytes.size() < kIntsetHeaderBytes) {
        problem = fmt::format("an intset of {} bytes, shorter than its header", bytes.size());
        return false;
    }
    const std::uint64_t encoding = rdb_detail::littleEndian(bytes.data(), 4);
    const std::uint64_t length = rdb_detail::littleEndian(bytes.data() + 4, 4);
    if (encoding != 2 && encoding != 4 && encoding != 8) {
        problem = fmt::format("an intset of {}-byte members (2, 4 or 8)", encoding);
        return false;
    }
    if (kIntsetHeaderBytes + length * encoding != bytes.size()) {
        problem = fmt::format("an intset of {} {}-byte members in {} bytes", length, encoding, bytes.size());
        return false;
    }
    width = encoding == 2 ? IntegerClass::Int16 : encoding == 4 ? IntegerClass::Int32 : IntegerClass::Int64;
    for (std::uint64_t i = 0; i < length; ++i)
        out.push_back(integerItem(signedOf(
            rdb_detail::littleEndian(bytes.data() + kIntsetHeaderBytes + i * encoding, encoding), 8 * encoding)));
    return true;
}

} // namespace layoutlab
