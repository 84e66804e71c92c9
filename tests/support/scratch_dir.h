// SPDX-License-Identifier: MIT
#pragma once

// A test fixture with a scratch directory of its own: made empty before each test, removed after it.

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

class ScratchDirTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        // The suite and test name tell tests apart; the process id, two runs of the suite at once. A
        // parameterized test's names hold '/'.
        std::string name = std::string("layoutlab-") + test->test_suite_name() + "-" + test->name() + "-"
            + std::to_string(::getpid());
        std::replace(name.begin(), name.end(), '/', '_');
        m_dir = std::filesystem::temp_directory_path() / name;
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }
    std::string path(const std::string& name) const { return (m_dir / name).string(); }
    // The name of a writer's temporary file left in the directory (".NAME.partial-XXXXXX"), or "".
    std::string partialFileLeft() const {
        for (const auto& entry : std::filesystem::directory_iterator(m_dir))
            if (entry.path().filename().string().find(".partial") != std::string::npos)
                return entry.path().filename().string();
        return {};
    }

    std::filesystem::path m_dir;
};
