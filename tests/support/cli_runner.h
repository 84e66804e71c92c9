// SPDX-License-Identifier: MIT
#pragma once

// Runs the layoutlab command as a user would: its own process, stdout and stderr captured, the exit
// code kept; results go to a private database in a per-test directory.

#include "scratch_dir.h"

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace layoutlab::test {

struct CliRun {
    int exitCode = -1;
    std::string out;
    std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Starts the CLI with these arguments; returns its pid, or -1 when it could not be started.
inline pid_t spawnCli(std::vector<std::string> args, const posix_spawn_file_actions_t* actions = nullptr) {
    args.insert(args.begin(), LAYOUTLAB_CLI);
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    return posix_spawn(&pid, argv[0], actions, nullptr, argv.data(), environ) == 0 ? pid : -1;
}

class CliTestBase : public ScratchDirTest {
protected:
    void SetUp() override {
        ScratchDirTest::SetUp();
        ::setenv("LAYOUTLAB_DB", (m_dir / "results.db").c_str(), 1); // runs are stored here, not in the cwd
    }

    CliRun run(std::vector<std::string> args) const {
        const auto outPath = m_dir / "stdout";
        const auto errPath = m_dir / "stderr";
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&actions, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CliRun r;
        if (const auto pid = spawnCli(std::move(args), &actions); pid > 0) {
            int status = 0;
            waitpid(pid, &status, 0);
            r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        posix_spawn_file_actions_destroy(&actions);
        r.out = slurp(outPath);
        r.err = slurp(errPath);
        return r;
    }
    static std::string seedTrace() { return LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace"; }
    // `layoutlab gen -o NAME --seed SEED ARGS...` in the test's directory; returns the trace's path.
    std::string gen(const std::string& name, std::vector<std::string> args, const std::string& seed = "5") const {
        const auto trace = path(name);
        args.insert(args.begin(), { "gen", "-o", trace, "--seed", seed });
        const auto r = run(args);
        EXPECT_EQ(r.exitCode, 0) << r.err;
        return trace;
    }
};

} // namespace layoutlab::test
