// SPDX-License-Identifier: MIT
#include "engine_build.h"

#include "collectors_config.h"
#include "layoutlab/collect/server_process.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace layoutlab {

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The share compiled so far: the script says how many files it will compile and where make logs; make's
// log has one "CC name.o" line per file.
double compiledFraction(const std::string& scriptLog) {
    static const std::regex announced(R"(about (\d+) files to compile; log: (.*)\))");
    std::smatch m;
    if (!std::regex_search(scriptLog, m, announced))
        return 0;
    const double total = std::stod(m[1].str());
    const std::string makeLog = readFile(m[2].str());
    std::size_t compiled = 0;
    for (std::size_t at = makeLog.find("CC"); at != std::string::npos; at = makeLog.find("CC", at + 2)) {
        const auto end = makeLog.find('\n', at);
        if (makeLog.substr(at, end == std::string::npos ? std::string::npos : end - at).find(".o") != std::string::npos)
            ++compiled;
    }
    return total > 0 ? std::min(0.97, static_cast<double>(compiled) / total) : 0;
}

// The script's last line (on success, the binary's path) and its own message ("build-engine: ...").
struct ScriptOutput {
    std::string lastLine;
    std::string message;
};
ScriptOutput scriptOutput(const std::string& scriptLog) {
    std::istringstream lines(scriptLog);
    ScriptOutput out;
    for (std::string line; std::getline(lines, line);) {
        if (line.empty())
            continue;
        out.lastLine = line;
        if (line.starts_with("build-engine: "))
            out.message = line.substr(14);
    }
    return out;
}

} // namespace

std::string engineBuildScript(const std::string& requested) {
    if (!requested.empty())
        return requested;
    if (const char* env = std::getenv("LAYOUTLAB_BUILD_ENGINE"); env && *env)
        return env;
    return LAYOUTLAB_BUILD_ENGINE_SCRIPT;
}

Expected<std::string> buildEngine(
    const EngineBuildRequest& r, const std::function<void(double)>& progress, std::stop_token stop) {
    const std::string script = engineBuildScript(r.script);
    if (::access(script.c_str(), X_OK) != 0)
        return ioError("the engine build script is not here or not executable (set LAYOUTLAB_BUILD_ENGINE to "
                       "scripts/build-engine of a layoutlab checkout)",
            script);
    // The script runs in a directory of its own: paths are made absolute where they were meant.
    std::vector<std::string> argv { script, std::filesystem::absolute(r.archive).lexically_normal().string() };
    for (const auto& s : r.settings) {
        argv.push_back("--set");
        argv.push_back(s);
    }
    if (r.speed == EngineBuildSpeed::Quick)
        argv.push_back("--quick");
    else if (r.speed == EngineBuildSpeed::Unoptimized)
        argv.push_back("--unoptimized");
    auto dir = makeTempDir("layoutlab-build-");
    if (!dir)
        return dir.error();
    const std::string log = *dir + "/build-engine.log";
    struct RemoveDir {
        std::string path;
        ~RemoveDir() { removeTree(path); }
    } removeDir { *dir };
    auto process = ServerProcess::start(argv, *dir, log, /*ownGroup=*/true);
    if (!process)
        return process.error();
    while ((*process)->running()) {
        if (stop.stop_requested()) {
            (*process)->stop();
            return cancelledError();
        }
        if (progress)
            progress(compiledFraction(readFile(log)));
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    auto status = (*process)->waitForExit(stop);
    const auto output = scriptOutput(readFile(log));
    const std::string what
        = fmt::format("{}{}", std::filesystem::path(r.archive).filename().string(), r.settings.empty() ? "" : " with ");
    std::string settings;
    for (const auto& s : r.settings)
        settings += (settings.empty() ? "" : ",") + s;
    if (!status)
        return status.error().code == ErrorCode::Cancelled
            ? status.error()
            : ioError(fmt::format("building {}{}: {}", what, settings, status.error().message), r.archive);
    if (*status != 0)
        return ioError(fmt::format("building {}{} failed: {}", what, settings,
                           output.message.empty() ? output.lastLine : output.message),
            r.archive);
    const std::string& binary = output.lastLine;
    if (::access(binary.c_str(), X_OK) != 0)
        return ioError(
            fmt::format("the engine build script finished without a server binary (it said: {})", binary), script);
    if (progress)
        progress(1.0);
    return binary;
}

} // namespace layoutlab
