// SPDX-License-Identifier: MIT
#include "layoutlab/trace/trace_file.h"

#include "block_encoder.h"
#include "trace_block.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/stat.h>
#include <xxhash.h>

namespace layoutlab {

namespace {
constexpr char kHeaderMagic[8] = { 'L', 'L', 'T', 'R', 'A', 'C', 'E', '\0' };
constexpr char kTrailerMagic[8] = { 'L', 'L', 'T', 'R', 'E', 'N', 'D', '\0' };
constexpr std::size_t kHeaderBytes = 32;
// Version 3's trailer adds a checksum of its first 32 bytes (and 4 reserved zero bytes).
constexpr std::size_t kTrailerBytesV2 = 32;
constexpr std::size_t kTrailerBytes = 40;
constexpr std::size_t trailerBytesOf(std::uint32_t version) {
    return version >= 3 ? kTrailerBytes : kTrailerBytesV2;
}
std::uint32_t trailerChecksum(const unsigned char* trailer) {
    return static_cast<std::uint32_t>(XXH3_64bits(trailer, kTrailerBytesV2));
}
constexpr std::size_t kBufferBytes = 1 << 20;

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
} // namespace

TraceFileReader::~TraceFileReader() {
    if (m_file)
        std::fclose(m_file);
}

Expected<std::unique_ptr<TraceFileReader>> TraceFileReader::open(const std::string& path) {
    std::unique_ptr<TraceFileReader> r(new TraceFileReader());
    r->m_path = path;
    if (path == "-")
        return ioError(
            "a layoutlab trace is read from its end (its trailer), not from standard input: give its path", path);
    r->m_file = std::fopen(path.c_str(), "rb");
    if (!r->m_file)
        return ioError(fmt::format("cannot open trace: {}", std::strerror(errno)), path);
    struct stat st { };
    if (fstat(fileno(r->m_file), &st) != 0 || !S_ISREG(st.st_mode))
        return ioError("a layoutlab trace is read from its end (its trailer) and this is not a regular file: save it "
                       "to a file first",
            path);
    const auto size = static_cast<std::uint64_t>(st.st_size);
    unsigned char header[kHeaderBytes];
    if (size < kHeaderBytes || std::fread(header, 1, kHeaderBytes, r->m_file) != kHeaderBytes)
        return dataError("too short to be a layoutlab trace (no 32-byte header)", path, 0, true);
    if (std::memcmp(header, kHeaderMagic, sizeof kHeaderMagic) != 0)
        return dataError(
            "not a layoutlab trace (bad magic; import other formats with `layoutlab import`)", path, 0, true);
    r->m_version = getU32(header + 8);
    if (r->m_version < 1 || r->m_version > kTraceFormatVersion)
        return dataError(fmt::format("trace format version {} is not supported (this build reads versions 1 to {})",
                             r->m_version, kTraceFormatVersion),
            path, 8, true);
    if (r->m_version >= 3)
        for (std::size_t i = 12; i < kHeaderBytes; ++i)
            if (header[i] != 0)
                return dataError("damaged header (reserved bytes are not zero)", path, i, true);
    const std::size_t trailerBytes = trailerBytesOf(r->m_version);
    if (size < kHeaderBytes + trailerBytes)
        return dataError("truncated: the file ends before the trailer", path, size, true);
    unsigned char trailer[kTrailerBytes] = {};
    if (std::fseek(r->m_file, static_cast<long>(size - trailerBytes), SEEK_SET) != 0
        || std::fread(trailer, 1, trailerBytes, r->m_file) != trailerBytes)
        return ioError("cannot read the trailer", path);
    if (std::memcmp(trailer, kTrailerMagic, sizeof kTrailerMagic) != 0)
        return dataError("truncated or damaged: no trailer at the end of the file", path, size - trailerBytes, true);
    if (r->m_version >= 3
        && (getU32(trailer + 32) != trailerChecksum(trailer) || trailer[36] || trailer[37] || trailer[38]
            || trailer[39]))
        return dataError("damaged trailer (its checksum does not match)", path, size - trailerBytes, true);
    r->m_recordCount = getU64(trailer + 8);
    r->m_keyIdLimit = getU64(trailer + 16);
    r->m_recordBytes = getU64(trailer + 24);
    if (r->m_recordBytes != size - kHeaderBytes - trailerBytes)
        return dataError(fmt::format("truncated or damaged: trailer promises {} record bytes, the file holds {}",
                             r->m_recordBytes, size - kHeaderBytes - trailerBytes),
            path, size - trailerBytes, true);
    if (std::fseek(r->m_file, static_cast<long>(kHeaderBytes), SEEK_SET) != 0)
        return ioError("cannot seek", path);
    std::setvbuf(r->m_file, nullptr, _IOFBF, kBufferBytes); // blocks are read a few KiB at a time
    return r;
}

Expected<std::size_t> TraceFileReader::read(std::span<Request> out) {
    return m_version == 1 ? readVarintRecords(out) : readBlocks(out);
}

Expected<std::size_t> TraceFileReader::readBlocks(std::span<Request> out) {
    std::size_t n = 0;
    while (n < out.size()) {
        if (m_stagedPos < m_staged.size()) {
            const std::size_t take = std::min(out.size() - n, m_staged.size() - m_stagedPos);
            std::copy_n(m_staged.begin() + static_cast<std::ptrdiff_t>(m_stagedPos), take, out.begin() + n);
            m_stagedPos += take;
            n += take;
            continue;
        }
        auto decoded = decodeNextBlock(out.data() + n, out.size() - n);
        if (!decoded)
            return decoded.error();
        if (*decoded == 0 && m_stagedPos == m_staged.size())
            break; // the end of the trace
        n += *decoded;
    }
    return n;
}

Expected<bool> TraceFileReader::readNextBlock(trace_block::Header& header, std::vector<unsigned char>& payload) {
    namespace tb = trace_block;
    if (m_recordsRead == m_recordCount) {
        if (m_consumedBytes != m_recordBytes)
            return dataError(fmt::format("damaged: {} bytes follow the last of the trailer's {} records",
                                 m_recordBytes - m_consumedBytes, m_recordCount),
                m_path, kHeaderBytes + m_consumedBytes, true);
        return false;
    }
    const std::uint64_t blockOffset = kHeaderBytes + m_consumedBytes;
    unsigned char headerBytes[tb::kHeaderBytes];
    if (m_recordBytes - m_consumedBytes < tb::kHeaderBytes
        || std::fread(headerBytes, 1, tb::kHeaderBytes, m_file) != tb::kHeaderBytes)
        return dataError(fmt::format("truncated: records {} to {} are missing", m_recordsRead + 1, m_recordCount),
            m_path, blockOffset, true);
    if (const char* wrong = tb::parseHeader(headerBytes, header, m_version))
        return dataError(wrong, m_path, blockOffset, true);
    if (header.records > m_recordCount - m_recordsRead)
        return dataError(fmt::format("damaged block header (more records than the trailer's {})", m_recordCount),
            m_path, blockOffset, true);
    if (header.payloadBytes > m_recordBytes - m_consumedBytes - tb::kHeaderBytes)
        return dataError("damaged block header (the block runs past the record section)", m_path, blockOffset, true);
    if (header.baseTimeMs != m_timeMs)
        return dataError(
            "damaged block header (its time does not continue the previous block's)", m_path, blockOffset, true);
    payload.resize(header.payloadBytes + tb::kPaddingBytes);
    if (std::fread(payload.data(), 1, header.payloadBytes, m_file) != header.payloadBytes)
        return ioError(fmt::format("cannot read the block at offset {}", blockOffset), m_path);
    if (m_version >= 3 && tb::checksumOf(headerBytes, payload.data(), header.payloadBytes) != header.checksum)
        return dataError("damaged block (its checksum does not match its bytes)", m_path, blockOffset, true);
    return true;
}

Error TraceFileReader::damagedRecord(const trace_block::DecodeFailure& failure) const {
    const std::uint64_t blockOffset = kHeaderBytes + m_consumedBytes;
    return dataError(fmt::format("{}: record {}", failure.reason, m_recordsRead + failure.record + 1), m_path,
        blockOffset + trace_block::kHeaderBytes + failure.record, true);
}

void TraceFileReader::consumeBlock(const trace_block::Header& header, std::uint64_t lastTimeMs) {
    m_timeMs = lastTimeMs;
    m_consumedBytes += trace_block::kHeaderBytes + header.payloadBytes;
    m_recordsRead += header.records;
}

Expected<std::size_t> TraceFileReader::decodeNextBlock(Request* out, std::size_t room) {
    trace_block::Header header;
    auto read = readNextBlock(header, m_buffer);
    if (!read || !*read)
        return read ? Expected<std::size_t>(std::size_t { 0 }) : Expected<std::size_t>(read.error());
    Request* target = out;
    if (header.records > room) {
        m_staged.resize(header.records);
        m_stagedPos = 0;
        target = m_staged.data();
    }
    const auto failure = trace_block::decode(header, m_buffer.data(), m_keyIdLimit, target);
    if (failure.reason) {
        m_staged.clear();
        return damagedRecord(failure);
    }
    consumeBlock(header, target[header.records - 1].timeMs);
    return target == out ? std::size_t { header.records } : std::size_t { 0 };
}

Expected<std::optional<RequestColumns>> TraceFileReader::readColumns(std::vector<unsigned char>& storage) {
    if (m_version == 1)
        return usageError("a version-1 trace has no columns: read its requests", m_path);
    trace_block::Header header;
    auto read = readNextBlock(header, storage);
    if (!read)
        return read.error();
    if (!*read)
        return std::optional<RequestColumns>();
    RequestColumns columns;
    std::uint64_t lastTimeMs = 0;
    if (const auto failure = trace_block::columns(header, storage.data(), m_keyIdLimit, columns, lastTimeMs);
        failure.reason)
        return damagedRecord(failure);
    consumeBlock(header, lastTimeMs);
    return std::optional<RequestColumns>(columns);
}

TraceFileWriter::TraceFileWriter() = default;
TraceFileWriter::~TraceFileWriter() = default; // an unfinished output removes its temporary file

Expected<std::unique_ptr<TraceFileWriter>> TraceFileWriter::create(const std::string& path) {
    std::unique_ptr<TraceFileWriter> w(new TraceFileWriter());
    auto output = OutputFile::open(path);
    if (!output)
        return output.error();
    w->m_output = std::move(*output);
    w->m_file = w->m_output->stream();
    unsigned char header[kHeaderBytes] = {};
    std::memcpy(header, kHeaderMagic, sizeof kHeaderMagic);
    putU32(header + 8, kTraceFormatVersion);
    if (std::fwrite(header, 1, kHeaderBytes, w->m_file) != kHeaderBytes)
        return ioError("cannot write the header", w->m_output->writingPath());
    w->m_pending.reserve(trace_block::kBlockRecords);
    w->m_encoder = std::make_unique<BlockEncoder>(w->m_file, w->m_output->writingPath());
    return w;
}

Status TraceFileWriter::write(std::span<const Request> requests) {
    while (!requests.empty()) {
        const std::size_t take = std::min(trace_block::kBlockRecords - m_pending.size(), requests.size());
        m_pending.insert(m_pending.end(), requests.begin(), requests.begin() + static_cast<std::ptrdiff_t>(take));
        requests = requests.subspan(take);
        m_recordCount += take;
        if (m_pending.size() == trace_block::kBlockRecords)
            if (auto ok = m_encoder->hand(m_pending); !ok)
                return ok;
    }
    return Ok {};
}

Status TraceFileWriter::finish() {
    if (!m_pending.empty())
        if (auto ok = m_encoder->hand(m_pending); !ok)
            return ok;
    auto totals = m_encoder->finish();
    if (!totals)
        return totals.error();
    unsigned char trailer[kTrailerBytes] = {};
    std::memcpy(trailer, kTrailerMagic, sizeof kTrailerMagic);
    putU64(trailer + 8, m_recordCount);
    putU64(trailer + 16, totals->keyIdLimit);
    putU64(trailer + 24, totals->recordBytes);
    putU32(trailer + 32, trailerChecksum(trailer));
    if (std::fwrite(trailer, 1, kTrailerBytes, m_file) != kTrailerBytes)
        return ioError(fmt::format("write failed: {}", std::strerror(errno)), m_output->writingPath());
    m_file = nullptr;
    return m_output->commit();
}

Status writeTrace(TraceReader& reader, const std::string& path) {
    auto writer = TraceFileWriter::create(path);
    if (!writer)
        return writer.error();
    // Borrowed batches: a reader that holds its requests (a pipeline's batch) hands them over uncopied.
    if (auto ok = forEachBatch(reader, trace_block::kBlockRecords, {},
            [&](std::span<const Request> batch) { return (*writer)->write(batch); });
        !ok)
        return ok;
    return (*writer)->finish();
}

} // namespace layoutlab
