// SPDX-License-Identifier: MIT
#include "layoutlab/import/captured_commands.h"

#include "layoutlab/import/input_stream.h"
#include "monitor_importer.h"

#include <algorithm>
#include <cctype>

namespace layoutlab {

namespace {
// Why a command is not sent, or nullptr: it is.
const char* skipReason(const std::string& upper) {
    static constexpr std::string_view kConnection[] = { "SELECT", "MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH",
        "AUTH", "CLIENT", "HELLO", "MONITOR", "QUIT", "RESET", "READONLY", "READWRITE", "SUBSCRIBE", "UNSUBSCRIBE",
        "PSUBSCRIBE", "PUNSUBSCRIBE", "SSUBSCRIBE", "SUNSUBSCRIBE", "SHUTDOWN", "WAIT", "WAITAOF" };
    static constexpr std::string_view kBlocking[] = { "BLPOP", "BRPOP", "BLMOVE", "BRPOPLPUSH", "BLMPOP", "BZPOPMIN",
        "BZPOPMAX", "BZMPOP", "XREAD", "XREADGROUP" };
    static constexpr std::string_view kScripts[] = { "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO" };
    auto among = [&upper](const auto& names) {
        return std::find(std::begin(names), std::end(names), upper) != std::end(names);
    };
    if (among(kConnection))
        return "the connection's own command";
    if (among(kBlocking))
        return "a blocking command (when the server served it is not in the capture)";
    if (among(kScripts))
        return "a script's call (its commands follow it in the capture, and are sent)";
    if (monitor::changesNoKey(upper)) // reads and the server's own (CONFIG, COMMAND, INFO), as the import takes them
        return "a command that changes no key";
    return nullptr;
}
} // namespace

Status forEachCapturedCommand(
    const std::string& path, CapturedCommandSkips& skips, const std::function<Status(const CapturedCommand&)>& send) {
    auto input = InputStream::open(path);
    if (!input)
        return input.error();
    LineReader lines(**input);
    CapturedCommand command;
    for (;;) {
        std::string_view line;
        auto got = lines.next(line);
        if (!got)
            return got.error();
        if (*got == LineReader::Result::End)
            return Ok {};
        auto fail = [&](const std::string& what) {
            return dataErrorAtLine(what + " (monitor input)", path, lines.lineNumber());
        };
        if (*got == LineReader::Result::TooLong)
            return fail("a line over 1 MiB");
        if (line == "OK")
            continue;
        if (line.rfind("[ proxy", 0) == 0) // a proxy's prefix (as the importer takes it)
            line.remove_prefix(std::min(line.size(), line.find("] ") + 2));
        const auto open = line.find(" [");
        const auto close = line.find("] ", open == std::string_view::npos ? 0 : open);
        if (open == std::string_view::npos || close == std::string_view::npos)
            return fail("expected '<sec>.<usec> [<db> <client>] \"command\" ...'");
        if (!monitor::parseArguments(line.substr(close + 2), command.args) || command.args.empty())
            return fail("arguments are not sdscatrepr-quoted strings");
        command.db = monitor::databaseOf(line.substr(open + 2, close - open - 2));
        std::string upper = command.args[0].substr(0, 32);
        for (auto& c : upper)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (const char* reason = skipReason(upper)) {
            ++skips.byReason[std::string(reason) + ": " + upper];
            ++skips.total;
            continue;
        }
        if (auto ok = send(command); !ok)
            return ok;
    }
}

} // namespace layoutlab
