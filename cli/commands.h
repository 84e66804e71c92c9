// SPDX-License-Identifier: MIT
#pragma once

// The layoutlab subcommands. Each add* function registers a subcommand with CLI11 and returns the
// exit status through the shared `status` once the command has run.
//
// Exit codes: 0 success, 1 data or I/O error (bad trace, failed server), 2 usage error.

#include "layoutlab/expected.h"

#include <CLI/CLI.hpp>
#include <string>

namespace layoutlab::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitData = 1;
inline constexpr int kExitUsage = 2;

// Prints "layoutlab: error: ..." on stderr and returns the exit code for the error's kind.
int reportError(const Error& error);
// Writes `text` to stdout, or atomically to `path` when it is not empty.
Status writeOutput(const std::string& text, const std::string& path);

void addGenCommand(CLI::App& app, int& status);
void addSimCommands(CLI::App& app, int& status);
void addListCommands(CLI::App& app, int& status);

} // namespace layoutlab::cli
