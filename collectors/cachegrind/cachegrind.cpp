// SPDX-License-Identifier: MIT
#include "layoutlab/collect/cachegrind.h"

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/collect/server_process.h"

#include <bit>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace layoutlab {

std::optional<std::string> findValgrind() {
    return findExecutable("valgrind");
}

std::string cachegrindAvailability(bool* available) {
    const auto valgrind = findValgrind();
    if (available)
        *available = valgrind.has_value();
    return valgrind ? "valgrind at " + *valgrind + ": `profile --counters cachegrind` simulates D1 and LL misses"
                    : std::string("no 'valgrind' on PATH (Debian package valgrind)");
}

CacheGeometry cachegrindCompatible(const CacheGeometry& geometry) {
    CacheGeometry out = geometry;
    for (auto& level : out.levels) {
        const std::uint64_t lines = level.sizeBytes / kCacheLineBytes;
        if (lines == 0 || level.ways == 0)
            continue;
        const std::uint64_t sets = lines / level.ways;
        if (sets != 0 && std::has_single_bit(sets) && sets * level.ways == lines)
            continue;
        // The largest power of two that divides the line count, no larger than the original set count.
        std::uint64_t compatible = std::uint64_t { 1 } << std::countr_zero(lines);
        while (compatible > 1 && compatible > std::max<std::uint64_t>(sets, 1))
            compatible >>= 1;
        level.ways = static_cast<std::uint32_t>(lines / compatible);
    }
    return out;
}

Expected<std::vector<std::string>> cachegrindCacheOptions(const CacheGeometry& geometry) {
    if (geometry.levels.size() < 2)
        return usageError("cachegrind needs at least two cache levels (D1 and LL)", field::kCacheGeometry);
    auto option = [](const char* name, const CacheLevelGeometry& level) -> Expected<std::string> {
        const std::uint64_t lineBytes = kCacheLineBytes;
        const std::uint64_t sets = level.sizeBytes / (lineBytes * level.ways);
        if (sets == 0 || !std::has_single_bit(sets) || sets * lineBytes * level.ways != level.sizeBytes)
            return usageError(fmt::format("cachegrind simulates only caches with a power-of-two number of sets; "
                                          "{} of {} bytes and {} ways has {} (choose another cache geometry)",
                                  name, level.sizeBytes, level.ways, sets),
                field::kCacheGeometry);
        return fmt::format("--{}={},{},{}", name, level.sizeBytes, level.ways, lineBytes);
    };
    std::vector<std::string> out;
    for (const auto& [name, level] :
        { std::pair<const char*, const CacheLevelGeometry&> { "I1", geometry.levels.front() },
            { "D1", geometry.levels.front() }, { "LL", geometry.levels.back() } }) {
        auto text = option(name, level);
        if (!text)
            return text.error();
        out.push_back(*text);
    }
    return out;
}

Expected<CachegrindCounts> parseCachegrindOutput(const std::string& text, const std::string& file) {
    std::istringstream in(text);
    std::string line;
    std::vector<std::string> events;
    std::vector<std::uint64_t> summary;
    std::uint64_t lineNumber = 0;
    while (std::getline(in, line)) {
        ++lineNumber;
        auto words = [&line](std::size_t from) {
            std::istringstream rest(line.substr(from));
            std::vector<std::string> out;
            for (std::string w; rest >> w;)
                out.push_back(w);
            return out;
        };
        if (line.rfind("events:", 0) == 0) {
            events = words(7);
        } else if (line.rfind("summary:", 0) == 0) {
            for (const auto& w : words(8)) {
                try {
                    summary.push_back(std::stoull(w));
                } catch (const std::exception&) {
                    return dataErrorAtLine("cachegrind summary value '" + w + "' is not a count", file, lineNumber);
                }
            }
        }
    }
    if (events.empty() || summary.empty())
        return dataError("not a cachegrind output file (no events: or summary: line)", file);
    if (summary.size() != events.size())
        return dataError(
            fmt::format("cachegrind summary has {} values for {} events", summary.size(), events.size()), file);
    CachegrindCounts counts;
    bool haveMisses = false;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (events[i] == "Ir")
            counts.instructions = summary[i];
        else if (events[i] == "Dr")
            counts.dataReads = summary[i];
        else if (events[i] == "D1mr")
            counts.l1ReadMisses = summary[i], haveMisses = true;
        else if (events[i] == "DLmr")
            counts.llReadMisses = summary[i];
    }
    if (!haveMisses)
        return dataError("cachegrind output has no D1mr event: was it run with --cache-sim=yes?", file);
    return counts;
}

Expected<CachegrindCounts> runUnderCacheSimulator(const std::vector<std::string>& program,
    const CacheGeometry& geometry, const std::string& workDir, std::stop_token stop, std::string* programLog) {
    const auto valgrind = findValgrind();
    if (!valgrind)
        return usageError(
            "cachegrind needs valgrind, and there is no 'valgrind' on PATH (apt install valgrind)", field::kCounters);
    auto cacheOptions = cachegrindCacheOptions(geometry);
    if (!cacheOptions)
        return cacheOptions.error();
    const auto outBase = std::filesystem::path(workDir) / "callgrind.out";
    const std::string logFile = (std::filesystem::path(workDir) / "program.log").string();
    std::vector<std::string> argv { *valgrind, "--tool=callgrind", "--cache-sim=yes", "--instr-atstart=no",
        "--callgrind-out-file=" + outBase.string() };
    argv.insert(argv.end(), cacheOptions->begin(), cacheOptions->end());
    argv.insert(argv.end(), program.begin(), program.end());
    auto process = ServerProcess::start(argv, workDir, logFile);
    if (!process)
        return process.error();
    auto status = (*process)->waitForExit(stop);
    const std::string log = (*process)->log();
    if (programLog)
        *programLog = log;
    if (!status)
        return status.error();
    if (*status != 0)
        return ioError(fmt::format("the program under valgrind exited with status {}: {}", *status,
            log.substr(log.size() > 2000 ? log.size() - 2000 : 0)));
    // Callgrind writes each dump as callgrind.out.N beside the final callgrind.out: the measured one says
    // what triggered it.
    const std::string trigger = std::string("desc: Trigger: Client Request: ") + kMeasuredDump;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(workDir, ec)) {
        if (entry.path().filename().string().rfind("callgrind.out", 0) != 0)
            continue;
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        if (text.str().find(trigger) != std::string::npos)
            return parseCachegrindOutput(text.str(), entry.path().string());
    }
    return ioError(fmt::format("valgrind wrote no '{}' dump: the program did not ask for one", kMeasuredDump), workDir);
}

} // namespace layoutlab
