// SPDX-License-Identifier: MIT
#pragma once

// Finding the server a `layoutlab drive` started: its child process.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/types.h>

namespace layoutlab::test {

// The first child process of `parent` that is not named `skip` (by default the shell that removes a
// drive's temporary directory when drive ends: its janitor), from /proc/*/stat; 0 when there is none yet.
inline pid_t childOf(pid_t parent, const std::string& skip = "sh") {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line))
            continue;
        const auto close = line.rfind(')'); // the command name may hold spaces
        if (close == std::string::npos)
            continue;
        std::istringstream rest(line.substr(close + 2));
        char state = 0;
        pid_t ppid = 0;
        rest >> state >> ppid;
        const std::string name = line.substr(line.find('(') + 1, close - line.find('(') - 1);
        if (ppid == parent && name != skip)
            return static_cast<pid_t>(std::stol(entry.path().filename().string()));
    }
    return 0;
}

} // namespace layoutlab::test
