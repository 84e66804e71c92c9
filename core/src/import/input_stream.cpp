// SPDX-License-Identifier: MIT
#include "layoutlab/import/input_stream.h"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/stat.h>
#include <zstd.h>

namespace layoutlab {

namespace {
constexpr unsigned char kZstdMagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
constexpr std::size_t kReadChunk = 128 * 1024; // about ZSTD_DStreamInSize()
constexpr std::size_t kInitialLineBuffer = 64 * 1024; // grows to hold a line of up to kMaxLineBytes
} // namespace

Expected<std::unique_ptr<InputStream>> InputStream::open(const std::string& path) {
    std::unique_ptr<InputStream> s(new InputStream());
    s->m_path = path;
    s->m_file = std::fopen(path.c_str(), "rb");
    if (!s->m_file)
        return ioError(fmt::format("cannot open: {}", std::strerror(errno)), path);
    struct stat st { };
    if (fstat(fileno(s->m_file), &st) != 0 || S_ISDIR(st.st_mode))
        return ioError("not a readable file", path);
    s->m_sourceSize = static_cast<std::uint64_t>(st.st_size);
    s->m_compressed.resize(kReadChunk);
    s->m_compressedEnd = std::fread(s->m_compressed.data(), 1, s->m_compressed.size(), s->m_file);
    s->m_sourceRead = s->m_compressedEnd;
    if (s->m_compressedEnd >= 4 && std::memcmp(s->m_compressed.data(), kZstdMagic, 4) == 0) {
        ZSTD_DStream* z = ZSTD_createDStream();
        if (!z)
            return ioError("out of memory for the zstd decoder", path);
        ZSTD_initDStream(z);
        s->m_zstd = z;
    }
    return s;
}

InputStream::~InputStream() {
    if (m_zstd)
        ZSTD_freeDStream(static_cast<ZSTD_DStream*>(m_zstd));
    if (m_file)
        std::fclose(m_file);
}

Expected<std::size_t> InputStream::read(void* out, std::size_t size) {
    if (!m_zstd) {
        // Serve what the first read buffered, then read straight through.
        if (m_compressedPos < m_compressedEnd) {
            const std::size_t n = std::min(size, m_compressedEnd - m_compressedPos);
            std::memcpy(out, m_compressed.data() + m_compressedPos, n);
            m_compressedPos += n;
            return n;
        }
        const std::size_t n = std::fread(out, 1, size, m_file);
        if (n == 0 && std::ferror(m_file))
            return ioError(fmt::format("read failed: {}", std::strerror(errno)), m_path);
        m_sourceRead += n;
        return n;
    }
    auto* z = static_cast<ZSTD_DStream*>(m_zstd);
    ZSTD_outBuffer output { out, size, 0 };
    while (output.pos == 0) {
        if (m_compressedPos == m_compressedEnd) {
            if (m_eof)
                return std::size_t { 0 };
            m_compressedEnd = std::fread(m_compressed.data(), 1, m_compressed.size(), m_file);
            m_compressedPos = 0;
            m_sourceRead += m_compressedEnd;
            if (m_compressedEnd == 0) {
                m_eof = true;
                // ZSTD_decompressStream returns 0 only at the end of a whole frame.
                if (m_frameOpen)
                    return dataError(
                        "truncated: the zstd stream ends in the middle of a frame", m_path, m_sourceRead, true);
                continue;
            }
        }
        ZSTD_inBuffer input { m_compressed.data(), m_compressedEnd, m_compressedPos };
        const std::size_t rc = ZSTD_decompressStream(z, &output, &input);
        m_compressedPos = input.pos;
        if (ZSTD_isError(rc))
            return dataError(fmt::format("zstd: {}", ZSTD_getErrorName(rc)), m_path, m_sourceRead, true);
        m_frameOpen = rc != 0;
        if (m_eof && output.pos == 0)
            return std::size_t { 0 };
    }
    return output.pos;
}

LineReader::LineReader(InputStream& input)
    : m_input(input) {
    m_buffer.resize(kInitialLineBuffer + kReadSlack);
}

Status LineReader::fill() {
    // Keep the partial line, then top up.
    std::memmove(m_buffer.data(), m_buffer.data() + m_pos, m_end - m_pos);
    m_consumed += m_pos;
    m_end -= m_pos;
    m_pos = 0;
    // A partial line fills the buffer: grow it, up to what a line of kMaxLineBytes needs.
    if (m_end == capacity() && capacity() <= kMaxLineBytes)
        m_buffer.resize(capacity() * 2 + kReadSlack);
    while (!m_eof && m_end < capacity()) {
        auto n = m_input.read(m_buffer.data() + m_end, capacity() - m_end);
        if (!n)
            return n.error();
        if (*n == 0)
            m_eof = true;
        m_end += *n;
    }
    return Ok {};
}

Expected<LineReader::Result> LineReader::nextSlow(std::string_view& line) {
    while (true) {
        const char* start = m_buffer.data() + m_pos;
        const auto* newline = static_cast<const char*>(std::memchr(start, '\n', m_end - m_pos));
        if (!newline && !m_eof && m_end - m_pos <= kMaxLineBytes) {
            if (auto ok = fill(); !ok)
                return ok.error();
            continue;
        }
        if (!newline && m_pos == m_end)
            return Result::End;
        const std::size_t length = newline ? static_cast<std::size_t>(newline - start) : m_end - m_pos;
        startLine();
        if (length > kMaxLineBytes) {
            // Skip to the end of this line without buffering it.
            while (true) {
                const auto* nl = static_cast<const char*>(std::memchr(m_buffer.data() + m_pos, '\n', m_end - m_pos));
                if (nl) {
                    m_pos = static_cast<std::size_t>(nl - m_buffer.data()) + 1;
                    break;
                }
                m_pos = m_end;
                if (m_eof)
                    break;
                if (auto ok = fill(); !ok)
                    return ok.error();
            }
            return Result::TooLong;
        }
        line = takeLine(start, length, newline != nullptr);
        return Result::Line;
    }
}

} // namespace layoutlab
