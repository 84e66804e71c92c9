// SPDX-License-Identifier: MIT
#pragma once

// Bytes and lines from a source file, transparently decompressing zstd (detected by its magic number,
// whatever the file is called). Lines are limited to 1 MiB: a longer one is reported, not buffered.
//
// A source that is not a regular file (a FIFO, a pipe, process substitution, a device, "-" for standard
// input) can be read only once, yet the format is detected by reading its beginning first: the first
// kReplayBytes read from such a source are kept, and opening the same path again replays them before
// reading on. Opening it again after more than that was read is an error that says so.

#include "layoutlab/expected.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace layoutlab {

class InputStream {
public:
    static Expected<std::unique_ptr<InputStream>> open(const std::string& path);
    ~InputStream();
    static constexpr std::size_t kReplayBytes = 1 << 20;

    // Reads up to `size` bytes; 0 at the end. Fails on an I/O or decompression error.
    Expected<std::size_t> read(void* out, std::size_t size);
    const std::string& path() const { return m_path; }
    bool compressed() const { return m_zstd != nullptr; }
    // Bytes of the source file consumed so far (compressed bytes for .zst), for progress.
    std::uint64_t sourceBytesRead() const { return m_sourceRead; }
    std::uint64_t sourceBytes() const { return m_sourceSize; } // 0 when unknown (a stream)
    bool isStream() const { return m_stream != nullptr; }

    struct StreamSource; // a non-regular source shared by the streams opened on it

private:
    InputStream() = default;
    // Raw (possibly compressed) bytes from the source.
    Expected<std::size_t> readRaw(void* out, std::size_t size);
    std::string m_path;
    std::FILE* m_file = nullptr;
    std::shared_ptr<StreamSource> m_stream;
    std::uint64_t m_streamPos = 0; // raw bytes this stream has taken from m_stream
    void* m_zstd = nullptr; // ZSTD_DStream*
    std::vector<unsigned char> m_compressed;
    std::size_t m_compressedPos = 0;
    std::size_t m_compressedEnd = 0;
    std::uint64_t m_sourceRead = 0;
    std::uint64_t m_sourceSize = 0;
    bool m_eof = false;
    bool m_frameOpen = false; // a zstd frame has started and not ended
};

inline constexpr std::size_t kMaxLineBytes = 1 << 20;
inline constexpr std::size_t kMaxSkippedBytes = std::size_t { 64 } << 20;

class LineReader {
public:
    explicit LineReader(InputStream& input);

    enum class Result { Line, TooLong, End };
    // The next line without its "\n" (and "\r\n"). TooLong: a line over kMaxLineBytes, reported as soon
    // as it is found too long and passed over by the next call (an error after kMaxSkippedBytes with no
    // line break).
    Expected<Result> next(std::string_view& line) {
        // Most lines are short and whole in the buffer: found by an inline scan, not a memchr call.
        const char* const start = m_buffer.data() + m_pos;
        if (const char* newline = findNewline(start, m_buffer.data() + m_end)) [[likely]] {
            const auto length = static_cast<std::size_t>(newline - start);
            if (length <= kMaxLineBytes) [[likely]] {
                startLine();
                line = takeLine(start, length, true);
                return Result::Line;
            }
        }
        return nextSlow(line);
    }
    std::uint64_t lineNumber() const { return m_lineNumber; } // of the line just returned, from 1
    std::uint64_t lineOffset() const { return m_lineOffset; } // its byte offset in the uncompressed stream
    // Whether the line just returned ended with a line break (only the input's last line can lack one).
    bool lineTerminated() const { return m_lineTerminated; }

    // The bytes read ahead and not returned yet, from the next line's start: a format's fast path parses
    // the whole lines among them itself, then skips them. Past them, kReadSlack more bytes (of no
    // meaning) can be read: enough to copy a key from them in whole 64-byte blocks.
    std::string_view buffered() const { return { m_buffer.data() + m_pos, m_end - m_pos }; }
    static constexpr std::size_t kReadSlack = 64;
    // Passes over `lines` whole lines, "\n" included, making up the first `bytes` of buffered(); the
    // last of them, starting at `lastLineStart` in buffered(), becomes the line just returned.
    void skipLines(std::size_t bytes, std::uint64_t lines, std::size_t lastLineStart) {
        m_lineNumber += lines;
        m_lineOffset = m_consumed + m_pos + lastLineStart;
        m_pos += bytes;
    }

    // The first '\n' in [p, end), or nullptr.
    static const char* findNewline(const char* p, const char* end) {
#if defined(__SSE2__)
        const __m128i newline = _mm_set1_epi8('\n');
        for (; p + 16 <= end; p += 16) {
            const auto mask = static_cast<unsigned>(
                _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), newline)));
            if (mask)
                return p + std::countr_zero(mask);
        }
#endif
        return static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    }
    // Room findNewlines() needs in `offsets` past its `limit`.
    static constexpr std::size_t kNewlineSlack = 64;
    // The offsets from `begin` of the '\n's in [begin, end), in order, at least `limit` of them where
    // there are that many (`offsets` holds limit + kNewlineSlack); returns how many. Found 64 bytes at a
    // time without a branch per line: a block's first four newlines are written whether it has them or
    // not (only those it has are counted), and only a block of more takes a loop. Finding each line's
    // end by its own scan instead mispredicts where that scan stops, about once a line.
    static std::size_t findNewlines(const char* begin, const char* end, std::uint32_t* offsets, std::size_t limit) {
        std::size_t n = 0;
        const char* p = begin;
#if defined(__SSE2__)
        const __m128i newline = _mm_set1_epi8('\n');
        const auto maskOf16 = [&](const char* at) {
            return static_cast<std::uint64_t>(static_cast<std::uint32_t>(
                _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)), newline))));
        };
        for (; p + 64 <= end && n < limit; p += 64) {
            std::uint64_t mask = maskOf16(p) | maskOf16(p + 16) << 16 | maskOf16(p + 32) << 32 | maskOf16(p + 48) << 48;
            const auto base = static_cast<std::uint32_t>(p - begin);
            for (int i = 0; i < 4; ++i) {
                offsets[n] = base + static_cast<std::uint32_t>(std::countr_zero(mask));
                n += mask != 0;
                mask &= mask - 1;
            }
            for (; mask; mask &= mask - 1) // a block of five lines or more
                offsets[n++] = base + static_cast<std::uint32_t>(std::countr_zero(mask));
        }
#endif
        for (; p < end && n < limit; ++p)
            if (*p == '\n')
                offsets[n++] = static_cast<std::uint32_t>(p - begin);
        return n;
    }

private:
    Status fill();
    Expected<Result> nextSlow(std::string_view& line);
    // A line begins at m_pos: count it and note where it starts.
    void startLine() {
        ++m_lineNumber;
        m_lineOffset = m_consumed + m_pos;
    }
    // The line of `length` bytes at `start` (= m_pos), read past its "\n" when `terminated`, without a "\r".
    std::string_view takeLine(const char* start, std::size_t length, bool terminated) {
        m_pos += length + (terminated ? 1 : 0);
        m_lineTerminated = terminated;
        if (length > 0 && start[length - 1] == '\r')
            --length;
        return { start, length };
    }
    std::size_t capacity() const {
        return m_buffer.size() - kReadSlack;
    }
    InputStream& m_input;
    std::vector<char> m_buffer; // capacity() bytes to read into, then kReadSlack
    std::size_t m_pos = 0;
    std::size_t m_end = 0;
    std::uint64_t m_consumed = 0; // bytes before m_buffer[0]
    std::uint64_t m_lineNumber = 0;
    std::uint64_t m_lineOffset = 0;
    bool m_lineTerminated = true;
    bool m_eof = false;
    bool m_skipping = false; // passing over the rest of a line reported too long
    std::uint64_t m_skipped = 0;
};

} // namespace layoutlab
