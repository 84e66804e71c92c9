// SPDX-License-Identifier: MIT
#pragma once

// Where every output goes. A command is safe to point anywhere:
//   - "-" is standard output;
//   - an absent path or a regular file (or a symlink to one) is written to a temporary file in the
//     target's own directory and renamed over it by commit(), so the target is replaced whole or not at
//     all, and a symlink keeps pointing at the new file;
//   - a character device or a FIFO (or a symlink to one: /dev/null, /dev/stdout, a named pipe) is written
//     through, never replaced;
//   - a directory, a block device or a socket is refused with a message saying what it is.
// The temporary file is listed in the process's cleanup list (temp_files.h) while it exists, so an
// interrupted command removes it.

#include "layoutlab/expected.h"

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace layoutlab {

class OutputFile {
public:
    // Opens `path` for writing as described above.
    static Expected<std::unique_ptr<OutputFile>> open(const std::string& path);
    ~OutputFile(); // without commit(): the temporary file is removed, the target left as it was
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    std::FILE* stream() const { return m_file; }
    Status write(std::string_view bytes);
    // Flushes, closes and (for a replaced file) renames into place.
    Status commit();
    // The file written to (the temporary file while it is one): for error messages.
    const std::string& writingPath() const { return m_writingPath; }
    const std::string& path() const { return m_path; }
    bool replacesTarget() const { return !m_tempPath.empty(); }

private:
    OutputFile() = default;
    void abandon();

    std::FILE* m_file = nullptr;
    bool m_ownsStream = true;
    std::string m_path; // as given
    std::string m_target; // the regular file to replace (symlinks resolved)
    std::string m_tempPath; // empty when written through
    std::string m_writingPath;
};

// Writes `bytes` to `path` whole (OutputFile::open, write, commit).
Status writeWholeFile(const std::string& path, std::string_view bytes);

// Reads a small input (a layout file, a plan) whole, in bounded pieces: more than `limit` bytes is an
// error naming `what` and the limit, whatever the file is (/dev/zero, a FIFO, a huge file).
Expected<std::string> readSmallFile(const std::string& path, std::size_t limit, std::string_view what);

} // namespace layoutlab
