// SPDX-License-Identifier: MIT
#pragma once

// The process's cleanup list: temporary files and directories to remove if the process is stopped
// before it can remove them itself (an interrupt handler that gives up waiting, a second Ctrl-C).
// A fixed table of fixed-size paths, so removeAllTempPaths() only reads atomics and calls unlink/rmdir
// and can run from a signal handler or a thread that is about to _exit.

#include <string>

namespace layoutlab {

// Adds `path` to the list; false when the table is full (the path is then simply not cleaned up).
bool registerTempPath(const std::string& path, bool isDirectory = false);
void unregisterTempPath(const std::string& path);
// Removes every listed file (and every listed directory with the files directly in it).
void removeAllTempPaths();

// The process is stopping (a signal arrived): set by the CLI's signal thread, read by what blocks where no
// stop_token reaches, such as a read from a quiet pipe (InputStream), which then ends with Cancelled.
void requestProcessStop();
bool processStopRequested();

} // namespace layoutlab
