// SPDX-License-Identifier: MIT
#include "layoutlab/output_file.h"

#include "layoutlab/temp_files.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace layoutlab {

namespace {

const char* kindOf(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

// Where a symlink chain ends (a dangling link: where it points, so the file is created there), or `path`
// itself when it cannot be resolved.
std::string resolveLinks(const std::string& path) {
    std::error_code ec;
    auto resolved = std::filesystem::weakly_canonical(path, ec);
    return ec ? path : resolved.string();
}

} // namespace

Expected<std::unique_ptr<OutputFile>> OutputFile::open(const std::string& path) {
    std::unique_ptr<OutputFile> out(new OutputFile());
    out->m_path = path;
    if (path == "-") {
        out->m_file = stdout;
        out->m_ownsStream = false;
        out->m_writingPath = "standard output";
        return out;
    }
    if (path.empty())
        return usageError("no output path given");
    struct stat st { };
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            // A device or a pipe: written through, never replaced (O_NONBLOCK off: a FIFO waits for its
            // reader like any writer would).
            out->m_file = std::fopen(path.c_str(), "wb");
            if (!out->m_file)
                return ioError(fmt::format("cannot open for writing: {}", std::strerror(errno)), path);
            out->m_writingPath = path;
            return out;
        }
        if (!S_ISREG(st.st_mode))
            return ioError(
                fmt::format("the output is {}; give a file path (or - for standard output)", kindOf(st.st_mode)), path);
    } else if (errno != ENOENT) {
        return ioError(fmt::format("cannot use as output: {}", std::strerror(errno)), path);
    }
    out->m_target = resolveLinks(path);
    const std::filesystem::path target(out->m_target);
    std::string pattern = (target.parent_path() / ("." + target.filename().string() + ".partial-XXXXXX")).string();
    const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0)
        return ioError(
            fmt::format("cannot create a temporary file beside the output: {}", std::strerror(errno)), pattern);
    registerTempPath(pattern);
    out->m_tempPath = pattern;
    out->m_writingPath = pattern;
    // mkstemp makes the file 0600; an output is made as a new file would be (0666 less the umask), or
    // keeps the permissions of the file it replaces.
    mode_t mode = st.st_mode & 07777;
    if (!S_ISREG(st.st_mode)) {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    ::fchmod(fd, mode);
    out->m_file = ::fdopen(fd, "wb");
    if (!out->m_file) {
        ::close(fd);
        out->abandon();
        return ioError(fmt::format("cannot open: {}", std::strerror(errno)), pattern);
    }
    return out;
}

OutputFile::~OutputFile() {
    abandon();
}

void OutputFile::abandon() {
    if (m_file && m_ownsStream)
        std::fclose(m_file);
    m_file = nullptr;
    if (!m_tempPath.empty()) {
        ::unlink(m_tempPath.c_str());
        unregisterTempPath(m_tempPath);
        m_tempPath.clear();
    }
}

Status OutputFile::write(std::string_view bytes) {
    if (!m_file)
        return ioError("the output is closed", m_writingPath);
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), m_file) != bytes.size())
        return ioError(fmt::format("write failed: {}", std::strerror(errno)), m_writingPath);
    return Ok {};
}

Status OutputFile::commit() {
    if (!m_file)
        return ioError("the output is closed", m_writingPath);
    if (!m_ownsStream) {
        const bool ok = std::fflush(m_file) == 0 && !std::ferror(m_file);
        m_file = nullptr;
        return ok ? Status { Ok {} } : ioError(fmt::format("write failed: {}", std::strerror(errno)), m_writingPath);
    }
    errno = 0;
    const bool flushed = std::fflush(m_file) == 0 && !std::ferror(m_file);
    const int flushErrno = errno;
    const bool closed = std::fclose(m_file) == 0;
    m_file = nullptr;
    if (!flushed || !closed) {
        const int e = flushErrno ? flushErrno : errno;
        abandon();
        return ioError(fmt::format("write failed: {}", std::strerror(e)), m_path);
    }
    if (m_tempPath.empty())
        return Ok {};
    // The target may have been replaced by something else since open(): look again.
    struct stat st { };
    if (::lstat(m_target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        abandon();
        return ioError(
            fmt::format("the output became {} while it was written; left as it is", kindOf(st.st_mode)), m_path);
    }
    if (std::rename(m_tempPath.c_str(), m_target.c_str()) != 0) {
        const int e = errno;
        abandon();
        return ioError(fmt::format("cannot rename into place: {}", std::strerror(e)), m_path);
    }
    unregisterTempPath(m_tempPath);
    m_tempPath.clear();
    return Ok {};
}

Status writeWholeFile(const std::string& path, std::string_view bytes) {
    auto out = OutputFile::open(path);
    if (!out)
        return out.error();
    if (auto ok = (*out)->write(bytes); !ok)
        return ok;
    return (*out)->commit();
}

Expected<std::string> readSmallFile(const std::string& path, std::size_t limit, std::string_view what) {
    std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (!f)
        return ioError(fmt::format("cannot open the {}: {}", what, std::strerror(errno)), path);
    std::string text;
    char buffer[64 * 1024];
    bool failed = false;
    while (true) {
        const std::size_t n = std::fread(buffer, 1, sizeof buffer, f);
        text.append(buffer, n);
        if (text.size() > limit)
            break;
        if (n < sizeof buffer) {
            failed = std::ferror(f) != 0;
            break;
        }
    }
    if (f != stdin)
        std::fclose(f);
    if (failed)
        return ioError(fmt::format("cannot read the {}", what), path);
    if (text.size() > limit)
        return dataError(fmt::format("the {} is larger than {} KiB: not a {}", what, limit >> 10, what), path);
    return text;
}

} // namespace layoutlab
