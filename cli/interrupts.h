// SPDX-License-Identifier: MIT
#pragma once

// SIGINT, SIGTERM and SIGHUP, handled the same way by every command:
//   - installInterruptHandling() (first thing in main, before any thread starts) blocks them in every
//     thread and waits for them on one of its own;
//   - the first one requests a stop through interruptToken(): the running job stops at its next check,
//     removes its partial output, marks its run 'interrupted', and reportError() prints one line and
//     returns 128 + the signal (130 for SIGINT, 143 for SIGTERM);
//   - a second signal, or a job that has not stopped within kGraceSeconds, ends the process at once:
//     servers it started are killed, files on the cleanup list (temp_files.h) removed.

#include <stop_token>

namespace layoutlab::cli {

inline constexpr int kGraceSeconds = 10;

void installInterruptHandling();
// Stopped once a signal has arrived; a default token (never stopped) when handling is not installed.
std::stop_token interruptToken();
// The signal that stopped the command, or 0.
int interruptSignal();
// "SIGINT", "SIGTERM", ...
const char* interruptSignalName();

} // namespace layoutlab::cli
