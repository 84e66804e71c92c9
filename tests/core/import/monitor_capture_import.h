// SPDX-License-Identifier: MIT
#pragma once

// The MONITOR importer's tests' fixture: a capture written from argument vectors and imported, its requests
// and what it counted (monitor_commands_test.cpp, monitor_collection_commands_test.cpp).

#include "layoutlab/import/importer.h"
#include "scratch_dir.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace layoutlab::test {

class MonitorCommandsTest : public ScratchDirTest {
protected:
    // Imports a capture of these commands (one argument vector per line, one second apart).
    std::vector<Request> import(const std::vector<std::vector<std::string>>& commands) {
        std::string text = "OK\n";
        std::uint32_t second = 0;
        for (const auto& args : commands) {
            text += fmt::format("{}.000000 [0 127.0.0.1:5000]", 1700000000 + second++);
            for (const auto& a : args)
                text += " \"" + a + "\"";
            text += "\n";
        }
        auto all = importText(text);
        EXPECT_TRUE(all) << all.error().describe();
        return all ? *all : std::vector<Request> {};
    }
    // Imports a capture's text as it is (under --on-error fail).
    Expected<std::vector<Request>> importText(const std::string& text) {
        const auto path = (m_dir / "capture.monitor").string();
        std::ofstream(path, std::ios::binary) << text;
        auto importer = openImporter(path, { "monitor", OnError::Fail, 16 });
        if (!importer)
            return importer.error();
        std::vector<Request> all, batch(64);
        for (;;) {
            auto n = (*importer)->read(batch);
            if (!n)
                return n.error();
            if (*n == 0)
                break;
            all.insert(all.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*n));
        }
        m_rejects = (*importer)->rejects();
        return all;
    }
    RejectReport m_rejects;
};

} // namespace layoutlab::test
