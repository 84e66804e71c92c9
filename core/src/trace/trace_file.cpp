// SPDX-License-Identifier: MIT
#include "layoutlab/trace/trace_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/stat.h>

namespace layoutlab {

namespace {
constexpr char kHeaderMagic[8] = { 'L', 'L', 'T', 'R', 'A', 'C', 'E', '\0' };
constexpr char kTrailerMagic[8] = { 'L', 'L', 'T', 'R', 'E', 'N', 'D', '\0' };
constexpr std::size_t kHeaderBytes = 32;
constexpr std::size_t kTrailerBytes = 32;
constexpr std::size_t kBufferBytes = 1 << 20;
constexpr std::size_t kMaxRecordBytes = 1 + 5 * 4 + 10; // tag, four u32 varints, one u64 varint

constexpr unsigned kTagOpMask = 0x0f;
constexpr unsigned kTagKindShift = 4;
constexpr unsigned kTagKindMask = 0x3;
constexpr unsigned kTagHasTtl = 0x40;
constexpr unsigned kTagHasTime = 0x80;

void putU32(unsigned char* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void putU64(unsigned char* p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
        p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t getU32(const unsigned char* p) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}
std::uint64_t getU64(const unsigned char* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}
std::uint64_t zigzag(std::int64_t v) {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) {
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

} // namespace

TraceFileReader::~TraceFileReader() {
    if (m_file)
        std::fclose(m_file);
}

Expected<std::unique_ptr<TraceFileReader>> TraceFileReader::open(const std::string& path) {
    std::unique_ptr<TraceFileReader> r(new TraceFileReader());
    r->m_path = path;
    r->m_file = std::fopen(path.c_str(), "rb");
    if (!r->m_file)
        return ioError(fmt::format("cannot open trace: {}", std::strerror(errno)), path);
    struct stat st { };
    if (fstat(fileno(r->m_file), &st) != 0 || !S_ISREG(st.st_mode))
        return ioError("not a regular file", path);
    const auto size = static_cast<std::uint64_t>(st.st_size);
    unsigned char header[kHeaderBytes];
    if (size < kHeaderBytes || std::fread(header, 1, kHeaderBytes, r->m_file) != kHeaderBytes)
        return dataError("too short to be a layoutlab trace (no 32-byte header)", path, 0, true);
    if (std::memcmp(header, kHeaderMagic, sizeof kHeaderMagic) != 0)
        return dataError(
            "not a layoutlab trace (bad magic; import other formats with `layoutlab import`)", path, 0, true);
    const auto version = getU32(header + 8);
    if (version != kTraceFormatVersion)
        return dataError(fmt::format("trace format version {} is not supported (this build reads version {})", version,
                             kTraceFormatVersion),
            path, 8, true);
    if (size < kHeaderBytes + kTrailerBytes)
        return dataError("truncated: the file ends before the trailer", path, size, true);
    unsigned char trailer[kTrailerBytes];
    if (std::fseek(r->m_file, static_cast<long>(size - kTrailerBytes), SEEK_SET) != 0
        || std::fread(trailer, 1, kTrailerBytes, r->m_file) != kTrailerBytes)
        return ioError("cannot read the trailer", path);
    if (std::memcmp(trailer, kTrailerMagic, sizeof kTrailerMagic) != 0)
        return dataError("truncated or damaged: no trailer at the end of the file", path, size - kTrailerBytes, true);
    r->m_recordCount = getU64(trailer + 8);
    r->m_keyIdLimit = getU64(trailer + 16);
    r->m_recordBytes = getU64(trailer + 24);
    if (r->m_recordBytes != size - kHeaderBytes - kTrailerBytes)
        return dataError(fmt::format("truncated or damaged: trailer promises {} record bytes, the file holds {}",
                             r->m_recordBytes, size - kHeaderBytes - kTrailerBytes),
            path, size - kTrailerBytes, true);
    if (std::fseek(r->m_file, static_cast<long>(kHeaderBytes), SEEK_SET) != 0)
        return ioError("cannot seek", path);
    r->m_buffer.resize(kBufferBytes);
    return r;
}

bool TraceFileReader::refill() {
    // Keep the unconsumed tail, then top up from the file without reading into the trailer.
    const std::size_t tail = m_end - m_pos;
    std::memmove(m_buffer.data(), m_buffer.data() + m_pos, tail);
    m_pos = 0;
    m_end = tail;
    const std::uint64_t fileRemaining = m_recordBytes - (m_consumedBytes + tail);
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kBufferBytes - tail, fileRemaining));
    if (want == 0)
        return tail > 0;
    const std::size_t got = std::fread(m_buffer.data() + tail, 1, want, m_file);
    m_end += got;
    return m_end > 0;
}

namespace {
// Decodes one record starting at p. Callers guarantee kMaxRecordBytes readable bytes, so the varints
// need no bounds checks, only a length limit. Returns nullptr on a malformed record.
inline const unsigned char* decodeRecord(
    const unsigned char* p, Request& r, std::uint32_t& lastKeyId, std::uint64_t& timeMs) {
    auto varint = [&p](int maxBytes, std::uint64_t& v) {
        std::uint64_t byte = *p++;
        v = byte;
        if (byte < 0x80) [[likely]]
            return true;
        v &= 0x7f;
        byte = *p++;
        v |= (byte & 0x7f) << 7;
        if (byte < 0x80) [[likely]]
            return true;
        for (int shift = 14, i = 2; i < maxBytes; ++i, shift += 7) {
            byte = *p++;
            v |= (byte & 0x7f) << shift;
            if (byte < 0x80)
                return true;
        }
        return false;
    };
    const unsigned tag = *p++;
    std::uint64_t keyDelta = 0, keyBytes = 0, valueBytes = 0, ttl = 0, delta = 0;
    bool ok = varint(5, keyDelta) && varint(5, keyBytes) && varint(5, valueBytes);
    if (ok && (tag & kTagHasTtl))
        ok = varint(5, ttl);
    if (ok && (tag & kTagHasTime))
        ok = varint(10, delta);
    const unsigned opCode = tag & kTagOpMask;
    const unsigned kind = (tag >> kTagKindShift) & kTagKindMask;
    const auto keyId = static_cast<std::uint64_t>(static_cast<std::int64_t>(lastKeyId) + unzigzag(keyDelta));
    // One test for every range: a negative key id wraps to a huge one; 32-bit fields must fit.
    const bool fieldsFit = ((keyId | keyBytes | valueBytes | ttl) >> 32) == 0;
    if (!ok || !fieldsFit || opCode >= static_cast<unsigned>(kOpCount) || kind > 2) [[unlikely]]
        return nullptr;
    timeMs += delta;
    r.timeMs = timeMs;
    r.keyId = static_cast<std::uint32_t>(keyId);
    r.keyBytes = static_cast<std::uint32_t>(keyBytes);
    r.valueBytes = static_cast<std::uint32_t>(valueBytes);
    r.ttlSeconds = static_cast<std::uint32_t>(ttl);
    r.op = static_cast<Op>(opCode);
    r.kind = static_cast<ValueKind>(kind);
    lastKeyId = r.keyId;
    return p;
}
} // namespace

Expected<std::size_t> TraceFileReader::read(std::span<Request> out) {
    std::size_t n = 0;
    while (n < out.size() && m_recordsRead < m_recordCount) {
        if (m_end - m_pos < kMaxRecordBytes && m_consumedBytes + (m_end - m_pos) < m_recordBytes) {
            refill();
            // The last records of the file may be shorter than kMaxRecordBytes: pad the buffer so the
            // unchecked decoder can run over them; a record running into the padding is damaged.
            std::fill(m_buffer.begin() + static_cast<std::ptrdiff_t>(m_end),
                m_buffer.begin() + static_cast<std::ptrdiff_t>(std::min(m_buffer.size(), m_end + kMaxRecordBytes)),
                0xff);
        }
        if (m_pos >= m_end)
            return dataError(fmt::format("truncated: record {} of {} is missing", m_recordsRead + 1, m_recordCount),
                m_path, 32 + m_consumedBytes, true);
        // Decode as many records as the buffered bytes safely allow, without per-byte bounds checks.
        // The running key id and time live in locals: as members they could alias the Request stores.
        const unsigned char* const base = m_buffer.data();
        const unsigned char* p = base + m_pos;
        const unsigned char* const end = base + m_end;
        const unsigned char* const safeEnd = end - std::min<std::ptrdiff_t>(end - p, kMaxRecordBytes);
        const std::uint64_t remaining = m_recordCount - m_recordsRead;
        Request* const first = out.data() + n;
        Request* const last = first + std::min<std::uint64_t>(out.size() - n, remaining);
        Request* r = first;
        std::uint32_t lastKeyId = m_lastKeyId;
        std::uint64_t timeMs = m_timeMs;
        do {
            const unsigned char* next = decodeRecord(p, *r, lastKeyId, timeMs);
            if (!next || next > end) [[unlikely]]
                return dataError(fmt::format("damaged record {} (tag 0x{:02x})", m_recordsRead + (r - first) + 1, *p),
                    m_path, 32 + m_consumedBytes + static_cast<std::uint64_t>(p - (base + m_pos)), true);
            p = next;
            ++r;
        } while (r < last && p < safeEnd);
        m_lastKeyId = lastKeyId;
        m_timeMs = timeMs;
        const auto decoded = static_cast<std::size_t>(r - first);
        const auto used = static_cast<std::size_t>(p - (base + m_pos));
        m_pos += used;
        m_consumedBytes += used;
        m_recordsRead += decoded;
        n += decoded;
    }
    return n;
}

TraceFileWriter::~TraceFileWriter() {
    if (m_file) {
        std::fclose(m_file);
        if (!m_finished)
            std::remove(m_partialPath.c_str());
    }
}

Expected<std::unique_ptr<TraceFileWriter>> TraceFileWriter::create(const std::string& path) {
    std::unique_ptr<TraceFileWriter> w(new TraceFileWriter());
    w->m_path = path;
    w->m_partialPath = path + ".partial";
    w->m_file = std::fopen(w->m_partialPath.c_str(), "wb");
    if (!w->m_file)
        return ioError(fmt::format("cannot create: {}", std::strerror(errno)), w->m_partialPath);
    unsigned char header[kHeaderBytes] = {};
    std::memcpy(header, kHeaderMagic, sizeof kHeaderMagic);
    putU32(header + 8, kTraceFormatVersion);
    if (std::fwrite(header, 1, kHeaderBytes, w->m_file) != kHeaderBytes)
        return ioError("cannot write the header", w->m_partialPath);
    w->m_buffer.reserve(kBufferBytes + kMaxRecordBytes);
    return w;
}

Status TraceFileWriter::flush() {
    if (!m_buffer.empty() && std::fwrite(m_buffer.data(), 1, m_buffer.size(), m_file) != m_buffer.size())
        return ioError(fmt::format("write failed: {}", std::strerror(errno)), m_partialPath);
    m_recordBytes += m_buffer.size();
    m_buffer.clear();
    return Ok {};
}

Status TraceFileWriter::write(std::span<const Request> requests) {
    // Encode each record into a small array, then append it whole: one bounds check per record.
    unsigned char record[kMaxRecordBytes];
    auto varint = [](unsigned char*& p, std::uint64_t v) {
        while (v >= 0x80) {
            *p++ = static_cast<unsigned char>(v | 0x80);
            v >>= 7;
        }
        *p++ = static_cast<unsigned char>(v);
    };
    for (const auto& r : requests) {
        const std::uint64_t delta = r.timeMs >= m_lastTimeMs ? r.timeMs - m_lastTimeMs : 0;
        unsigned tag = static_cast<unsigned>(r.op) | (static_cast<unsigned>(r.kind) << kTagKindShift);
        if (r.ttlSeconds)
            tag |= kTagHasTtl;
        if (delta)
            tag |= kTagHasTime;
        unsigned char* p = record;
        *p++ = static_cast<unsigned char>(tag);
        varint(p, zigzag(static_cast<std::int64_t>(r.keyId) - static_cast<std::int64_t>(m_lastKeyId)));
        m_lastKeyId = r.keyId;
        varint(p, r.keyBytes);
        varint(p, r.valueBytes);
        if (r.ttlSeconds)
            varint(p, r.ttlSeconds);
        if (delta)
            varint(p, delta);
        m_buffer.insert(m_buffer.end(), record, p);
        m_lastTimeMs += delta;
        m_keyIdLimit = std::max<std::uint64_t>(m_keyIdLimit, std::uint64_t { r.keyId } + 1);
        ++m_recordCount;
        if (m_buffer.size() >= kBufferBytes)
            if (auto ok = flush(); !ok)
                return ok;
    }
    return Ok {};
}

Status TraceFileWriter::finish() {
    if (auto ok = flush(); !ok)
        return ok;
    unsigned char trailer[kTrailerBytes] = {};
    std::memcpy(trailer, kTrailerMagic, sizeof kTrailerMagic);
    putU64(trailer + 8, m_recordCount);
    putU64(trailer + 16, m_keyIdLimit);
    putU64(trailer + 24, m_recordBytes);
    if (std::fwrite(trailer, 1, kTrailerBytes, m_file) != kTrailerBytes || std::fclose(m_file) != 0) {
        m_file = nullptr;
        std::remove(m_partialPath.c_str());
        return ioError(fmt::format("write failed: {}", std::strerror(errno)), m_partialPath);
    }
    m_file = nullptr;
    if (std::rename(m_partialPath.c_str(), m_path.c_str()) != 0) {
        std::remove(m_partialPath.c_str());
        return ioError(fmt::format("cannot rename into place: {}", std::strerror(errno)), m_path);
    }
    m_finished = true;
    return Ok {};
}

Status writeTrace(TraceReader& reader, const std::string& path) {
    auto writer = TraceFileWriter::create(path);
    if (!writer)
        return writer.error();
    std::vector<Request> batch(4096);
    while (true) {
        auto n = reader.read(batch);
        if (!n)
            return n.error();
        if (*n == 0)
            break;
        if (auto ok = (*writer)->write(std::span<const Request>(batch.data(), *n)); !ok)
            return ok;
    }
    return (*writer)->finish();
}

} // namespace layoutlab
