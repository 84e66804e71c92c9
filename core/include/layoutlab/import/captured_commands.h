// SPDX-License-Identifier: MIT
#pragma once

// A MONITOR capture's commands as the server ran them, for `drive --as-captured`, which sends them to a server
// as they are instead of the requests their import makes: the commands whose effect the import follows by
// its own model of the engine (a HyperLogLog's registers, SPOP's draw) then reach the server as they were.

#include "layoutlab/expected.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace layoutlab {

struct CapturedCommand {
    std::uint32_t db = 0; // the database the line names keys in ("[<db> <client>]")
    std::vector<std::string> args; // the command and its arguments, unquoted
};

// What forEachCapturedCommand left out, by reason ("a blocking command", "a script's own: its commands
// follow it") and command.
struct CapturedCommandSkips {
    std::map<std::string, std::uint64_t> byReason;
    std::uint64_t total = 0;
};

// Calls `send` with each command of the capture at `path` (any file `import` reads as monitor, zstd too) that
// changes what a server holds, in order. Left out, and counted in `skips`: the connection's own commands
// (SELECT: each command carries its database; MULTI, EXEC, WATCH, AUTH, CLIENT, HELLO, MONITOR, QUIT, RESET),
// the commands the import takes as changing no key (reads such as STRLEN, and the server's own: CONFIG, INFO),
// the pub/sub ones, blocking pops (a single connection would wait: the capture does not say when they were
// served), and EVAL, EVALSHA and FCALL (MONITOR shows the commands a script runs after it, as "lua" lines,
// which are sent). A line that does not parse is an error with its line number.
Status forEachCapturedCommand(
    const std::string& path, CapturedCommandSkips& skips, const std::function<Status(const CapturedCommand&)>& send);

} // namespace layoutlab
