// SPDX-License-Identifier: MIT
// RDB memory reports, read as a snapshot of the string keys (every row becomes one SET at time 0):
//   redis-rdb-tools `rdb -c memory` (rdbtools/memprofiler.py):
//       database,type,key,size_in_bytes,encoding,num_elements,len_largest_element[,expiry]
//     for strings num_elements is the value length in bytes; keys are not CSV-quoted.
//   HDT3213/rdb `rdb -c memory`: database,key,type,size,size_readable,element_count[,encoding,expiration]
//     with CSV quoting; its size is the RDB-encoded size of the entry, so the value length is estimated
//     as size minus the key length (RDB length prefixes and LZF compression make it inexact).
// Other types (lists, hashes, sets, ...) are counted as skipped. Rows with an expiry keep a TTL for the
// whole replay (a snapshot has no clock).

#include "import_formats.h"
#include "line_importer.h"

#include "layoutlab/spec.h"

namespace layoutlab {

namespace {

// Splits one CSV line with optional double quotes ("" is a quote inside a quoted field).
bool splitCsv(std::string_view line, std::vector<std::string>& out) {
    out.clear();
    std::string field;
    bool quoted = false;
    bool wasQuoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < line.size() && line[i + 1] == '"') {
                    field.push_back('"');
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                field.push_back(c);
            }
        } else if (c == ',') {
            out.push_back(std::move(field));
            field.clear();
            wasQuoted = false;
        } else if (c == '"' && field.empty() && !wasQuoted) {
            quoted = true;
            wasQuoted = true;
        } else {
            field.push_back(c);
        }
    }
    if (quoted)
        return false;
    out.push_back(std::move(field));
    return true;
}

class RdbCsvImporter final : public LineImporter {
public:
    using LineImporter::LineImporter;

protected:
    std::optional<LineError> parseLine(std::string_view line) override {
        if (!m_haveHeader)
            return parseHeader(line);
        if (!splitCsv(line, m_fields))
            return LineError { "bad quoting", "unterminated quoted field" };
        if (m_hdt) {
            if (m_fields.size() < 6)
                return LineError { "wrong field count", "expected at least 6 fields as in the header" };
        } else if (m_fields.size() < m_columns) {
            // redis-rdb-tools does not quote keys: a key with commas gives extra fields, fewer is malformed.
            return LineError { "wrong field count",
                "expected " + std::to_string(m_columns) + " fields as in the header" };
        }
        // redis-rdb-tools: keys may contain commas; the fields after the key are counted from the right.
        const std::size_t extra = m_hdt ? 0 : m_fields.size() - m_columns;
        if (!m_hdt && 5 + extra >= m_fields.size())
            return LineError { "wrong field count", "too few fields for the num_elements column" };
        const std::string& type = m_hdt ? m_fields[2] : m_fields[1];
        if (type != "string") {
            noteSkipped("type " + type.substr(0, 32));
            return std::nullopt;
        }
        std::string key;
        std::uint32_t valueBytes = 0;
        std::string expiry;
        if (m_hdt) {
            key = m_fields[1];
            std::uint64_t size = 0;
            if (auto e = parseField(m_fields[3], "size", size))
                return e;
            valueBytes = static_cast<std::uint32_t>(
                std::min<std::uint64_t>(size > key.size() ? size - key.size() : 0, UINT32_MAX));
            if (m_fields.size() > 7)
                expiry = m_fields[7];
        } else {
            for (std::size_t i = 2; i <= 2 + extra; ++i)
                key += (i > 2 ? "," : "") + m_fields[i];
            if (auto e = parseField(m_fields[5 + extra], "num_elements", valueBytes))
                return e;
            if (m_columns > 7 && m_fields.size() > 7 + extra)
                expiry = m_fields[7 + extra];
        }
        if (key.empty())
            return LineError { "empty key", "field key is empty" };
        Request r;
        r.op = Op::Set;
        r.keyBytes = static_cast<std::uint32_t>(key.size());
        r.valueBytes = valueBytes;
        r.ttlSeconds = expiry.empty() ? 0 : kSnapshotTtlSeconds;
        pushKeyed(r, key, 0, false, false);
        return std::nullopt;
    }

private:
    std::optional<LineError> parseHeader(std::string_view line) {
        if (line.rfind("database,type,key,size_in_bytes", 0) == 0) {
            m_hdt = false;
        } else if (line.rfind("database,key,type,size", 0) == 0) {
            m_hdt = true;
        } else {
            return LineError { "bad header",
                "expected a redis-rdb-tools (database,type,key,size_in_bytes,...) or HDT3213/rdb "
                "(database,key,type,size,...) memory CSV header" };
        }
        m_columns = splitString(line, ',').size();
        // The fields this importer reads must be in the header: num_elements (6th) for redis-rdb-tools,
        // element_count (6th) for HDT3213/rdb.
        constexpr std::size_t kMinColumns = 6;
        if (m_columns < kMinColumns)
            return LineError { "bad header",
                "the header has " + std::to_string(m_columns) + " columns; a memory CSV has at least "
                    + std::to_string(kMinColumns) };
        m_haveHeader = true;
        return std::nullopt;
    }

    bool m_haveHeader = false;
    bool m_hdt = false;
    std::size_t m_columns = 0;
    std::vector<std::string> m_fields;
};

} // namespace

bool detectRdbCsv(std::string_view firstLine) {
    return firstLine.rfind("database,type,key,size_in_bytes", 0) == 0
        || firstLine.rfind("database,key,type,size", 0) == 0;
}

std::unique_ptr<Importer> makeRdbCsvImporter(std::unique_ptr<InputStream> input, const ImportOptions& options) {
    return std::make_unique<RdbCsvImporter>("rdb-csv", std::move(input), options);
}

} // namespace layoutlab
