// SPDX-License-Identifier: MIT
#include "layoutlab/resources.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

namespace layoutlab {

namespace {

constexpr std::uint64_t kUnknown = ~std::uint64_t { 0 };

std::uint64_t memAvailable() {
    std::ifstream in("/proc/meminfo");
    std::string name;
    std::uint64_t kib = 0;
    std::string unit;
    while (in >> name >> kib) {
        std::getline(in, unit);
        if (name == "MemAvailable:")
            return kib * 1024;
    }
    return kUnknown;
}

// cgroup v2: memory.max less memory.current of this process's cgroup ("max": no limit).
std::uint64_t cgroupRoom() {
    std::ifstream self("/proc/self/cgroup");
    std::string line;
    while (std::getline(self, line)) {
        if (line.rfind("0::", 0) != 0)
            continue;
        const std::string dir = "/sys/fs/cgroup" + line.substr(3);
        std::ifstream maxFile(dir + "/memory.max");
        std::ifstream currentFile(dir + "/memory.current");
        std::string max;
        std::uint64_t current = 0;
        if (!(maxFile >> max) || max == "max" || !(currentFile >> current))
            return kUnknown;
        const std::uint64_t limit = std::stoull(max);
        return limit > current ? limit - current : 0;
    }
    return kUnknown;
}

std::string gib(std::uint64_t bytes) {
    return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / static_cast<double>(1u << 30));
}

} // namespace

std::uint64_t availableMemoryBytes() {
    std::uint64_t room = std::min(memAvailable(), cgroupRoom());
    rlimit as {};
    if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
        room = std::min<std::uint64_t>(room, as.rlim_cur);
    return room;
}

Status checkMemory(std::uint64_t bytes, std::string_view what) {
    const std::uint64_t room = availableMemoryBytes();
    if (room == kUnknown || bytes <= room)
        return Ok {};
    return ioError(fmt::format("{} needs about {} bytes ({}) of memory, more than the {} bytes ({}) this machine has "
                               "available",
        what, bytes, gib(bytes), room, gib(room)));
}

Status checkFreeSpace(const std::string& path, std::uint64_t bytes, std::string_view what) {
    if (path == "-")
        return Ok {}; // standard output: a pipe or a terminal, whose room is not ours to judge
    std::filesystem::path at(path);
    struct stat st { };
    if (::stat(at.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return Ok {}; // a device or a pipe: its room is not ours to judge
    if (::stat(at.c_str(), &st) != 0)
        at = at.has_parent_path() ? at.parent_path() : std::filesystem::path(".");
    struct statvfs fs { };
    if (::statvfs(at.c_str(), &fs) != 0)
        return Ok {}; // nothing to check against; the write itself reports a full disk
    const std::uint64_t unit = fs.f_frsize ? fs.f_frsize : fs.f_bsize;
    const std::uint64_t available = static_cast<std::uint64_t>(fs.f_bavail) * unit;
    const std::uint64_t total = static_cast<std::uint64_t>(fs.f_blocks) * unit;
    // Leave a little room for everything else on the file system: 1% of it, at most 64 MiB.
    const std::uint64_t reserve = std::min<std::uint64_t>(total / 100, std::uint64_t { 64 } << 20);
    if (bytes > available || available - bytes < reserve) {
        return ioError(fmt::format("{} needs about {} bytes ({:.2f} GiB) but the file system has {} bytes ({:.2f} "
                                   "GiB) free, less {} kept in reserve",
                           what, bytes, static_cast<double>(bytes) / (1u << 30), available,
                           static_cast<double>(available) / (1u << 30), reserve),
            path);
    }
    return Ok {};
}

bool multiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
    return !__builtin_mul_overflow(a, b, &out);
}

bool addChecked(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
    return !__builtin_add_overflow(a, b, &out);
}

} // namespace layoutlab
