// SPDX-License-Identifier: MIT
#pragma once

// RDB files written byte by byte from rdb.c's grammar for the rdb importer's tests (rdb_importer_test.cpp,
// rdb_collections_test.cpp), and a fixture that imports them.

#include "layoutlab/import/importer.h"
#include "rdb_crc64.h"
#include "scratch_dir.h"

#include <fstream>
#include <gtest/gtest.h>
#include <variant>

namespace layoutlab::test {

// Writes an RDB file from its pieces (rdb.c rdbSaveLen, rdbSaveRawString, rdbSaveType ...).
class RdbWriter {
public:
    explicit RdbWriter(std::string magic = "REDIS0011")
        : m_bytes(std::move(magic)) { }
    RdbWriter& u8(unsigned b) {
        m_bytes.push_back(static_cast<char>(b));
        return *this;
    }
    RdbWriter& le(std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            u8((v >> (8 * i)) & 0xff);
        return *this;
    }
    RdbWriter& len(std::uint64_t n) {
        if (n < 64)
            return u8(static_cast<unsigned>(n));
        if (n < 16384)
            return u8(0x40 | static_cast<unsigned>(n >> 8)).u8(n & 0xff);
        const int bytes = n <= UINT32_MAX ? 4 : 8;
        u8(bytes == 4 ? 0x80 : 0x81);
        for (int i = bytes - 1; i >= 0; --i)
            u8((n >> (8 * i)) & 0xff);
        return *this;
    }
    RdbWriter& raw(std::string_view s) {
        m_bytes += s;
        return *this;
    }
    RdbWriter& str(std::string_view s) {
        len(s.size());
        m_bytes += s;
        return *this;
    }
    // RDB_ENC_INT8/16/32 (bytes 1, 2, 4).
    RdbWriter& intStr(int bytes, std::int64_t v) {
        u8(0xc0 | (bytes == 1 ? 0 : bytes == 2 ? 1 : 2));
        return le(static_cast<std::uint64_t>(v), bytes);
    }
    // RDB_ENC_LZF: the compressed bytes are not looked into.
    RdbWriter& lzf(std::uint64_t compressed, std::uint64_t plain, char fill = 'z') {
        u8(0xc3).len(compressed).len(plain);
        m_bytes += std::string(compressed, fill);
        return *this;
    }
    RdbWriter& aux(std::string_view name, std::string_view value) { return u8(250).str(name).str(value); }
    RdbWriter& expireMs(std::int64_t ms) { return u8(252).le(static_cast<std::uint64_t>(ms), 8); }
    RdbWriter& setString(std::string_view key, std::string_view value) { return u8(0).str(key).str(value); }
    // EOF and the checksum (0: saved without one).
    std::string finish(bool checksum = true) {
        u8(255);
        RdbCrc64 crc;
        crc.update(reinterpret_cast<const unsigned char*>(m_bytes.data()), m_bytes.size());
        return le(checksum ? crc.value() : 0, 8).m_bytes;
    }
    const std::string& bytes() const { return m_bytes; }

private:
    std::string m_bytes;
};

// A listpack of these entries, as listpack.c lpAppend writes them: an integer in the smallest of its
// encodings, a string by its length's.
inline std::string listpack(const std::vector<std::variant<std::string, std::int64_t>>& entries) {
    std::string body;
    for (const auto& entry : entries) {
        std::string e;
        if (const auto* text = std::get_if<std::string>(&entry)) {
            if (text->size() < 64)
                e.push_back(static_cast<char>(0x80 | text->size()));
            else
                e += { static_cast<char>(0xE0 | (text->size() >> 8)), static_cast<char>(text->size() & 0xff) };
            e += *text;
        } else {
            const std::int64_t v = std::get<std::int64_t>(entry);
            auto le = [&](unsigned char tag, int bytes) {
                e.push_back(static_cast<char>(tag));
                for (int i = 0; i < bytes; ++i)
                    e.push_back(static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff));
            };
            if (v >= 0 && v <= 127)
                e.push_back(static_cast<char>(v));
            else if (v >= -4096 && v <= 4095)
                e += { static_cast<char>(0xC0 | ((static_cast<std::uint64_t>(v) >> 8) & 0x1f)),
                    static_cast<char>(v & 0xff) };
            else if (v >= INT16_MIN && v <= INT16_MAX)
                le(0xF1, 2);
            else if (v >= -(1 << 23) && v < (1 << 23))
                le(0xF2, 3);
            else if (v >= INT32_MIN && v <= INT32_MAX)
                le(0xF3, 4);
            else
                le(0xF4, 8);
        }
        const std::size_t n = e.size(); // lpEncodeBacklen, for entries below 16384 bytes
        if (n <= 127)
            e.push_back(static_cast<char>(n));
        else
            e += { static_cast<char>(n & 127), static_cast<char>((n >> 7) | 128) };
        body += e;
    }
    std::string out;
    const std::size_t total = 6 + body.size() + 1;
    for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<char>((total >> (8 * i)) & 0xff));
    out += { static_cast<char>(entries.size() & 0xff), static_cast<char>(entries.size() >> 8) };
    return out + body + '\xff';
}

// intset.h: encoding, length, the members (little-endian, `width` bytes each).
inline std::string intset(int width, const std::vector<std::int64_t>& members) {
    std::string out;
    auto le = [&](std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    };
    le(static_cast<std::uint64_t>(width), 4);
    le(members.size(), 4);
    for (const std::int64_t m : members)
        le(static_cast<std::uint64_t>(m), width);
    return out;
}

// LZF's literal runs (lzf_d.c: a control byte below 32 is a run of that many plus one bytes): `plain`,
// "compressed" as an LZF reader takes it.
inline std::string lzfLiterals(const std::string& plain) {
    std::string out;
    for (std::size_t i = 0; i < plain.size(); i += 32) {
        const std::size_t n = std::min<std::size_t>(32, plain.size() - i);
        out.push_back(static_cast<char>(n - 1));
        out += plain.substr(i, n);
    }
    return out;
}

struct Imported {
    std::optional<Error> error;
    std::vector<Request> requests;
    RejectReport rejects;
};

class RdbImporterTest : public ScratchDirTest {
protected:
    std::string write(const std::string& content, const std::string& name = "dump.rdb") {
        const auto p = (m_dir / name).string();
        std::ofstream(p, std::ios::binary) << content;
        return p;
    }
    // `twoThreads`: ImportOptions::decodeAhead (a second thread takes part where the host has two).
    Imported import(const std::string& content, OnError onError = OnError::Fail, const std::string& format = "",
        bool twoThreads = true) {
        Imported out;
        ImportOptions options { format, onError, 16 };
        options.decodeAhead = twoThreads;
        auto importer = openImporter(write(content), options);
        if (!importer) {
            out.error = importer.error();
            return out;
        }
        std::vector<Request> batch(7);
        for (int guard = 0; guard < 100000; ++guard) {
            auto n = (*importer)->read(batch);
            if (!n) {
                out.error = n.error();
                break;
            }
            if (*n == 0)
                break;
            out.requests.insert(out.requests.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*n));
        }
        out.rejects = (*importer)->rejects();
        return out;
    }
};

} // namespace layoutlab::test
