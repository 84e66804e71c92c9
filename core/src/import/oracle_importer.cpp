// SPDX-License-Identifier: MIT
// libCacheSim oracleGeneral (traceReader/customizedReader/oracle/oracleGeneralBin.h): packed little-endian
// 24-byte records {u32 clock_time (s), u64 obj_id, u32 obj_size, i64 next_access_vtime}, no header,
// often zstd-compressed as a whole. There is one size per object and no operation:
//   - the size is split into --key-size bytes of key (default 16) and the rest as value;
//   - every record is a GET; a GET of an object not seen before, or whose size changed, is preceded by
//     a SET of it (the cache fill), so the keyspace holds every object the trace requested, unless
//     ImportOptions::oracleFills is off (a simulation that fills on its own misses: its default here);
//   - records of size 0 are skipped, as libCacheSim does by default (counted as rejects).

#include "import_formats.h"
#include "layoutlab/import/input_stream.h"

#include <cstring>
#include <deque>
#include <fmt/format.h>

namespace layoutlab {

namespace {

constexpr std::size_t kRecordBytes = 24;

std::uint32_t le32(const unsigned char* p) {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8)
        | (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
std::uint64_t le64(const unsigned char* p) {
    return le32(p) | (static_cast<std::uint64_t>(le32(p + 4)) << 32);
}

class OracleImporter final : public Importer {
public:
    OracleImporter(std::unique_ptr<InputStream> input, const ImportOptions& options)
        : m_input(std::move(input)) {
        m_options = options;
        m_path = m_input->path();
        m_buffer.resize(kRecordBytes * 4096);
    }

    std::string formatName() const override { return "oracle"; }
    std::uint64_t totalRequests() const override { return 0; }
    std::uint64_t keyIdLimit() const override { return 0; }
    std::string name() const override { return m_path; }
    double progress() const override {
        return m_input->sourceBytes() ? static_cast<double>(m_input->sourceBytesRead()) / m_input->sourceBytes() : 1.0;
    }

    Expected<std::size_t> read(std::span<Request> out) override {
        std::size_t n = 0;
        while (n < out.size()) {
            if (!m_pending.empty()) {
                out[n++] = m_pending.front();
                m_pending.pop_front();
                continue;
            }
            if (m_pos + kRecordBytes > m_end) {
                auto ok = refill();
                if (!ok)
                    return ok.error();
                if (m_pos + kRecordBytes > m_end) {
                    if (m_end > m_pos && !m_reportedTail) {
                        m_reportedTail = true;
                        if (auto error = reject("truncated record", m_offset, false,
                                fmt::format(
                                    "truncated: the last {} bytes are not a whole 24-byte record", m_end - m_pos)))
                            return *error;
                    }
                    break;
                }
            }
            const unsigned char* rec = m_buffer.data() + m_pos;
            m_pos += kRecordBytes;
            m_offset += kRecordBytes;
            const std::uint32_t seconds = le32(rec);
            const std::uint64_t objectId = le64(rec + 4);
            const std::uint32_t size = le32(rec + 12);
            if (size == 0) {
                noteSkipped("zero-size record"); // libCacheSim skips these by default too
                continue;
            }
            const std::uint32_t id = m_keys.idForHash(objectId);
            if (id >= m_lastSize.size())
                m_lastSize.resize(std::max<std::size_t>(std::size_t { id } + 1, m_lastSize.size() * 2));
            if (!m_haveFirst) {
                m_haveFirst = true;
                m_firstSeconds = seconds;
            }
            Request r;
            r.timeMs = seconds >= m_firstSeconds ? std::uint64_t { seconds - m_firstSeconds } * 1000 : 0;
            r.keyId = id;
            r.keyBytes = std::min(size, m_options.oracleKeyBytes);
            r.valueBytes = size - r.keyBytes;
            if (m_lastSize[id] != size) {
                m_lastSize[id] = size;
                if (m_options.oracleFills) {
                    Request fill = r;
                    fill.op = Op::Set;
                    m_pending.push_back(fill);
                }
            }
            r.op = Op::Get;
            m_pending.push_back(r);
        }
        return n;
    }

private:
    Status refill() {
        std::memmove(m_buffer.data(), m_buffer.data() + m_pos, m_end - m_pos);
        m_end -= m_pos;
        m_pos = 0;
        while (m_end < m_buffer.size()) {
            auto got = m_input->read(m_buffer.data() + m_end, m_buffer.size() - m_end);
            if (!got)
                return got.error();
            if (*got == 0)
                break;
            m_end += *got;
        }
        return Ok {};
    }

    std::unique_ptr<InputStream> m_input;
    std::vector<unsigned char> m_buffer;
    std::size_t m_pos = 0;
    std::size_t m_end = 0;
    std::uint64_t m_offset = 0;
    bool m_reportedTail = false;
    KeyInterner m_keys;
    std::vector<std::uint32_t> m_lastSize;
    std::deque<Request> m_pending;
    bool m_haveFirst = false;
    std::uint32_t m_firstSeconds = 0;
};

} // namespace

bool detectOracle(std::string_view head) {
    // Binary, and the first records look sane: next_access_vtime is -1 or a positive index.
    if (head.size() < kRecordBytes)
        return false;
    const std::size_t records = std::min<std::size_t>(head.size() / kRecordBytes, 64);
    for (std::size_t i = 0; i < records; ++i) {
        const auto* rec = reinterpret_cast<const unsigned char*>(head.data() + i * kRecordBytes);
        const auto next = static_cast<std::int64_t>(le64(rec + 16));
        if (next < -1 || next == 0)
            return false;
    }
    return true;
}

std::unique_ptr<Importer> makeOracleImporter(std::unique_ptr<InputStream> input, const ImportOptions& options) {
    return std::make_unique<OracleImporter>(std::move(input), options);
}

} // namespace layoutlab
