// SPDX-License-Identifier: MIT
#include "layoutlab/temp_files.h"

#include <array>
#include <atomic>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace layoutlab {

namespace {

constexpr std::size_t kSlots = 64;
constexpr std::size_t kPathBytes = 4096;

// A slot is free (0), being written (1), a file (2) or a directory (3). Only the thread that moved a slot
// from 0 to 1 writes its path; readers look at slots in states 2 and 3 only.
struct Slot {
    std::atomic<int> state { 0 };
    char path[kPathBytes] {};
};
std::array<Slot, kSlots> g_slots;

// Removes the entries of `dir` (one level: the files a server or a tool leaves there) with system calls
// that neither allocate nor lock, so that it is safe whatever the other threads hold.
void removeDirectoryEntries(const char* dir) {
    const int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    alignas(8) char buffer[8192];
    for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
        if (n <= 0)
            break;
        for (long at = 0; at < n;) {
            struct Entry {
                ino64_t ino;
                off64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[1];
            };
            const auto* e = reinterpret_cast<const Entry*>(buffer + at);
            at += e->reclen;
            if (std::strcmp(e->name, ".") == 0 || std::strcmp(e->name, "..") == 0)
                continue;
            if (::unlinkat(fd, e->name, 0) != 0)
                ::unlinkat(fd, e->name, AT_REMOVEDIR);
        }
    }
    ::close(fd);
}

} // namespace

bool registerTempPath(const std::string& path, bool isDirectory) {
    if (path.size() >= kPathBytes)
        return false;
    for (auto& slot : g_slots) {
        int expected = 0;
        if (!slot.state.compare_exchange_strong(expected, 1))
            continue;
        std::memcpy(slot.path, path.c_str(), path.size() + 1);
        slot.state.store(isDirectory ? 3 : 2);
        return true;
    }
    return false;
}

void unregisterTempPath(const std::string& path) {
    for (auto& slot : g_slots) {
        const int state = slot.state.load();
        if ((state == 2 || state == 3) && path == slot.path) {
            int expected = state;
            if (slot.state.compare_exchange_strong(expected, 1)) {
                slot.path[0] = '\0';
                slot.state.store(0);
                return;
            }
        }
    }
}

namespace {
std::atomic<bool> g_stopping { false };
} // namespace

void requestProcessStop() {
    g_stopping.store(true);
}

bool processStopRequested() {
    return g_stopping.load(std::memory_order_relaxed);
}

void removeAllTempPaths() {
    for (auto& slot : g_slots) {
        const int state = slot.state.load();
        if (state == 2) {
            ::unlink(slot.path);
        } else if (state == 3) {
            removeDirectoryEntries(slot.path);
            ::rmdir(slot.path);
        }
    }
}

} // namespace layoutlab
