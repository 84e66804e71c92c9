// SPDX-License-Identifier: MIT
// The readers under fuzz work on files, so each input goes through one temporary file per process. It is
// removed when the process exits normally (libFuzzer and the corpus runner both do), so repeated test runs
// leave nothing behind in the temporary directory.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <unistd.h>

class FuzzInputFile {
public:
    explicit FuzzInputFile(std::string_view stem)
        : m_path((std::filesystem::temp_directory_path()
            / ("layoutlab-fuzz-" + std::string(stem) + "-" + std::to_string(::getpid())))
                     .string()) { }
    ~FuzzInputFile() {
        std::error_code ignored;
        std::filesystem::remove(m_path, ignored);
    }
    FuzzInputFile(const FuzzInputFile&) = delete;
    FuzzInputFile& operator=(const FuzzInputFile&) = delete;

    // Replaces the file's content with these bytes; returns its path.
    const std::string& write(const void* data, std::size_t size) const {
        if (std::FILE* f = std::fopen(m_path.c_str(), "wb")) {
            std::fwrite(data, 1, size, f);
            std::fclose(f);
        }
        return m_path;
    }

private:
    std::string m_path;
};
