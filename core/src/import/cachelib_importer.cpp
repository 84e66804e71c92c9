// SPDX-License-Identifier: MIT
// Meta CacheLib kvcache CSV (cachelib/cachebench/workload/KVReplayGenerator.h): a header row names the
// columns, in any order. key, op and size are required; op_count (default 1) repeats the request,
// key_size (default: the key's length), ttl (default 0) and op_time (seconds) are optional; other
// columns are ignored. GET_LEASE and SET_LEASE map to GET and SET, as the replayer does.

#include "import_formats.h"
#include "line_importer.h"

#include <fmt/format.h>

#include "layoutlab/spec.h"

namespace layoutlab {

namespace {

constexpr std::uint32_t kMaxOpCount = 1u << 20; // a bound on one line's expansion

class CachelibImporter final : public LineImporter {
public:
    using LineImporter::LineImporter;

protected:
    std::optional<LineError> parseLine(std::string_view line) override {
        if (!m_haveHeader)
            return parseHeader(line);
        const auto fields = splitString(line, ',');
        if (fields.size() != m_columns)
            return LineError { "wrong field count",
                "expected " + std::to_string(m_columns) + " fields as in the header, got "
                    + std::to_string(fields.size()) };
        const std::string_view key = fields[m_key];
        const std::string_view opText = fields[m_op];
        std::uint32_t size = 0, opCount = 1, keySize = 0, ttl = 0;
        std::uint64_t time = 0;
        if (auto e = parseField(fields[m_size], "size", size))
            return e;
        if (m_opCount >= 0)
            if (auto e = parseField(fields[static_cast<std::size_t>(m_opCount)], "op_count", opCount))
                return e;
        if (m_keySize >= 0)
            if (auto e = parseField(fields[static_cast<std::size_t>(m_keySize)], "key_size", keySize))
                return e;
        if (m_ttl >= 0)
            if (auto e = parseField(fields[static_cast<std::size_t>(m_ttl)], "ttl", ttl))
                return e;
        if (m_time >= 0)
            if (auto e = parseField(fields[static_cast<std::size_t>(m_time)], "op_time", time))
                return e;
        if (key.empty())
            return LineError { "empty key", "field key is empty" };
        if (keySize > kMaxKeyBytes)
            return LineError { "impossible size",
                fmt::format("field key_size is {}, over the {}-byte limit on keys", keySize, kMaxKeyBytes) };
        if (opCount > kMaxOpCount)
            return LineError { "impossible size", "field op_count is over 2^20: " + std::to_string(opCount) };
        Op op;
        bool isRead = false;
        if (opText == "GET" || opText == "GET_LEASE") {
            op = Op::Get;
            isRead = true;
        } else if (opText == "SET" || opText == "SET_LEASE") {
            op = Op::Set;
        } else if (opText == "DELETE") {
            op = Op::Delete;
        } else {
            return LineError { "unknown op",
                "field op: unknown operation '" + std::string(opText.substr(0, 40)) + "'" };
        }
        Request r;
        r.timeMs = relativeMs(time * 1000);
        // cachebench pads the key to max(key_size, len(key)).
        r.keyBytes = std::max<std::uint32_t>(keySize, static_cast<std::uint32_t>(key.size()));
        r.op = op;
        r.ttlSeconds = op == Op::Set ? ttl : 0;
        for (std::uint32_t i = 0; i < opCount; ++i)
            pushKeyed(r, key, size, isRead, op != Op::Delete);
        return std::nullopt;
    }

private:
    std::optional<LineError> parseHeader(std::string_view line) {
        const auto names = splitString(line, ',');
        // Every column index comes from this header alone: a refused header before it (--on-error=skip)
        // leaves nothing behind that could point past this one's columns.
        m_columns = names.size();
        m_opCount = m_keySize = m_ttl = m_time = -1;
        int key = -1, op = -1, size = -1;
        for (std::size_t i = 0; i < names.size(); ++i) {
            const auto name = names[i];
            const int index = static_cast<int>(i);
            if (name == "key")
                key = index;
            else if (name == "op")
                op = index;
            else if (name == "size")
                size = index;
            else if (name == "op_count")
                m_opCount = index;
            else if (name == "key_size")
                m_keySize = index;
            else if (name == "ttl")
                m_ttl = index;
            else if (name == "op_time")
                m_time = index;
        }
        if (key < 0 || op < 0 || size < 0)
            return LineError { "bad header",
                "the header must name the columns key, op and size (got '" + std::string(line.substr(0, 120)) + "')" };
        m_key = static_cast<std::size_t>(key);
        m_op = static_cast<std::size_t>(op);
        m_size = static_cast<std::size_t>(size);
        m_haveHeader = true;
        return std::nullopt;
    }

    bool m_haveHeader = false;
    std::size_t m_columns = 0;
    std::size_t m_key = 0, m_op = 0, m_size = 0;
    int m_opCount = -1, m_keySize = -1, m_ttl = -1, m_time = -1;
};

} // namespace

bool detectCachelib(std::string_view firstLine) {
    bool key = false, op = false, size = false;
    for (auto name : splitString(firstLine, ',')) {
        key = key || name == "key";
        op = op || name == "op";
        size = size || name == "size";
    }
    return key && op && size;
}

std::unique_ptr<Importer> makeCachelibImporter(std::unique_ptr<InputStream> input, const ImportOptions& options) {
    return std::make_unique<CachelibImporter>("cachelib", std::move(input), options);
}

} // namespace layoutlab
