// SPDX-License-Identifier: MIT
#pragma once

// Bytes and lines from a source file, transparently decompressing zstd (detected by its magic number,
// whatever the file is called). Lines are limited to 1 MiB: a longer one is reported, not buffered.

#include "layoutlab/expected.h"

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

class InputStream {
public:
    static Expected<std::unique_ptr<InputStream>> open(const std::string& path);
    ~InputStream();

    // Reads up to `size` bytes; 0 at the end. Fails on an I/O or decompression error.
    Expected<std::size_t> read(void* out, std::size_t size);
    const std::string& path() const { return m_path; }
    bool compressed() const { return m_zstd != nullptr; }
    // Bytes of the source file consumed so far (compressed bytes for .zst), for progress.
    std::uint64_t sourceBytesRead() const { return m_sourceRead; }
    std::uint64_t sourceBytes() const { return m_sourceSize; }

private:
    InputStream() = default;
    std::string m_path;
    std::FILE* m_file = nullptr;
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

class LineReader {
public:
    explicit LineReader(InputStream& input);

    enum class Result { Line, TooLong, End };
    // The next line without its "\n" (and "\r\n"). TooLong: a line over kMaxLineBytes was skipped.
    Expected<Result> next(std::string_view& line);
    std::uint64_t lineNumber() const { return m_lineNumber; } // of the line just returned, from 1
    std::uint64_t lineOffset() const { return m_lineOffset; } // its byte offset in the uncompressed stream

private:
    Status fill();

    InputStream& m_input;
    std::vector<char> m_buffer;
    std::size_t m_pos = 0;
    std::size_t m_end = 0;
    std::uint64_t m_consumed = 0; // bytes before m_buffer[0]
    std::uint64_t m_lineNumber = 0;
    std::uint64_t m_lineOffset = 0;
    bool m_eof = false;
};

} // namespace layoutlab
