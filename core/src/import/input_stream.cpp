// SPDX-License-Identifier: MIT
#include "layoutlab/import/input_stream.h"

#include "layoutlab/temp_files.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

namespace layoutlab {

namespace {
constexpr unsigned char kZstdMagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
constexpr std::size_t kReadChunk = 128 * 1024; // about ZSTD_DStreamInSize()
constexpr std::size_t kInitialLineBuffer = 64 * 1024; // grows to hold a line of up to kMaxLineBytes
} // namespace

struct InputStream::StreamSource {
    std::mutex mutex;
    int fd = -1;
    bool ownsFile = true;
    std::string kept; // the first bytes read, while they are at most kReplayBytes
    std::uint64_t taken = 0; // bytes read from the file so far
    bool replayable = true; // false once more than kReplayBytes were read
    ~StreamSource() {
        if (fd >= 0 && ownsFile)
            ::close(fd);
    }
    // Up to `size` bytes, as soon as some are there (a pipe gives what it has); 0 at the end. Waits in
    // slices of 100 ms, so that a process asked to stop is not held by a quiet pipe.
    Expected<std::size_t> read(void* out, std::size_t size, const std::string& path) {
        while (true) {
            pollfd p { fd, POLLIN, 0 };
            const int ready = ::poll(&p, 1, 100);
            if (processStopRequested()) {
                Error e = cancelledError();
                e.file = path;
                return e;
            }
            if (ready < 0 && errno != EINTR)
                return ioError(fmt::format("poll failed: {}", std::strerror(errno)), path);
            if (ready <= 0)
                continue;
            const ssize_t n = ::read(fd, out, size);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n < 0)
                return ioError(fmt::format("read failed: {}", std::strerror(errno)), path);
            return static_cast<std::size_t>(n);
        }
    }
};

namespace {
// The streams opened so far, by path: a second open of the same path replays what the first read. Kept
// for the life of the process (a command opens a handful; each keeps at most kReplayBytes).
std::mutex g_streamsMutex;
std::map<std::string, std::shared_ptr<InputStream::StreamSource>> g_keptStreams;
} // namespace

Expected<std::unique_ptr<InputStream>> InputStream::open(const std::string& path) {
    std::unique_ptr<InputStream> s(new InputStream());
    s->m_path = path;
    struct stat st { };
    const bool standardInput = path == "-";
    if (!standardInput && ::stat(path.c_str(), &st) != 0)
        return ioError(fmt::format("cannot open: {}", std::strerror(errno)), path);
    if (!standardInput && S_ISDIR(st.st_mode))
        return ioError("not a readable file (a directory)", path);
    if (standardInput || !S_ISREG(st.st_mode)) {
        std::lock_guard lock(g_streamsMutex);
        std::shared_ptr<StreamSource> source = g_keptStreams[path];
        if (!source) {
            source = std::make_shared<StreamSource>();
            source->fd = standardInput ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            source->ownsFile = !standardInput;
            if (source->fd < 0)
                return ioError(fmt::format("cannot open: {}", std::strerror(errno)), path);
            g_keptStreams[path] = source;
        } else if (!source->replayable) {
            Error e = ioError(fmt::format("this input is a stream (not a regular file) and more than {} KiB of it were "
                                          "read already; save it to a file, or name its format so that it is read once",
                                  kReplayBytes >> 10),
                path);
            e.field = field::kFormat;
            return e;
        }
        s->m_stream = source;
    } else {
        s->m_file = std::fopen(path.c_str(), "rb");
        if (!s->m_file)
            return ioError(fmt::format("cannot open: {}", std::strerror(errno)), path);
        s->m_sourceSize = static_cast<std::uint64_t>(st.st_size);
    }
    s->m_compressed.resize(kReadChunk);
    // At least the 4 bytes of a zstd magic number, unless the input is shorter (a pipe may give less).
    while (s->m_compressedEnd < 4) {
        auto got = s->readRaw(s->m_compressed.data() + s->m_compressedEnd, s->m_compressed.size() - s->m_compressedEnd);
        if (!got)
            return got.error();
        if (*got == 0)
            break;
        s->m_compressedEnd += *got;
    }
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

Expected<std::size_t> InputStream::readRaw(void* out, std::size_t size) {
    if (!m_stream) {
        // fread loops until `size` bytes or the end: a short count means the end or an error.
        const std::size_t n = std::fread(out, 1, size, m_file);
        if (n < size && std::ferror(m_file))
            return ioError(fmt::format("read failed: {}", std::strerror(errno)), m_path);
        return n;
    }
    StreamSource& source = *m_stream;
    std::lock_guard lock(source.mutex);
    if (m_streamPos < source.taken) {
        // Replay the kept bytes another stream of this source read first.
        if (!source.replayable || m_streamPos >= source.kept.size())
            return ioError("this input is a stream and was read by another reader; save it to a file", m_path);
        const std::size_t n = std::min<std::size_t>(size, source.kept.size() - m_streamPos);
        std::memcpy(out, source.kept.data() + m_streamPos, n);
        m_streamPos += n;
        return n;
    }
    auto read = source.read(out, size, m_path);
    if (!read)
        return read.error();
    const std::size_t n = *read;
    source.taken += n;
    m_streamPos += n;
    if (source.replayable) {
        if (source.kept.size() + n <= kReplayBytes)
            source.kept.append(static_cast<const char*>(out), n);
        else {
            source.replayable = false;
            source.kept.clear();
            source.kept.shrink_to_fit();
        }
    }
    return n;
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
        auto n = readRaw(out, size);
        if (!n)
            return n.error();
        m_sourceRead += *n;
        return *n;
    }
    auto* z = static_cast<ZSTD_DStream*>(m_zstd);
    ZSTD_outBuffer output { out, size, 0 };
    while (output.pos == 0) {
        if (m_compressedPos == m_compressedEnd) {
            if (m_eof)
                return std::size_t { 0 };
            auto n = readRaw(m_compressed.data(), m_compressed.size());
            if (!n)
                return n.error();
            m_compressedEnd = *n;
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
    if (m_skipping) {
        // The rest of a line reported too long: passed over without buffering it, but not forever (an
        // input with no line breaks, like /dev/zero, is not a text trace).
        while (true) {
            const auto* nl = static_cast<const char*>(std::memchr(m_buffer.data() + m_pos, '\n', m_end - m_pos));
            const std::size_t upTo = nl ? static_cast<std::size_t>(nl - m_buffer.data()) + 1 : m_end;
            m_skipped += upTo - m_pos;
            m_pos = upTo;
            if (nl || m_eof)
                break;
            if (m_skipped > kMaxSkippedBytes + kMaxLineBytes)
                return dataError(
                    fmt::format("no line break in {} MiB: this is not a line-based text trace", kMaxSkippedBytes >> 20),
                    m_input.path(), m_lineNumber, false);
            if (auto ok = fill(); !ok)
                return ok.error();
        }
        m_skipping = false;
    }
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
            // Reported now, with the line's number; the next call passes over the rest of it. The buffer
            // is left empty meanwhile, so that no fast path finds the rest of the line in it.
            if (newline) {
                m_pos = static_cast<std::size_t>(newline - m_buffer.data()) + 1;
            } else {
                m_skipped = m_end - m_pos;
                m_pos = m_end;
                m_skipping = !m_eof;
            }
            return Result::TooLong;
        }
        line = takeLine(start, length, newline != nullptr);
        return Result::Line;
    }
}

} // namespace layoutlab
