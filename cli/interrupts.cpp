// SPDX-License-Identifier: MIT
#include "interrupts.h"

#include "layoutlab/collect/server_process.h"
#include "layoutlab/temp_files.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <thread>
#include <unistd.h>

namespace layoutlab::cli {

namespace {

std::stop_source g_stop;
std::atomic<int> g_signal { 0 };
std::atomic<bool> g_installed { false };

sigset_t handledSignals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    return set;
}

void writeStderr(const char* text) {
    const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;
}

// No allocation, no locks: the other threads may hold any of them when this runs.
[[noreturn]] void endNow(int signal, const char* why) {
    killStartedProcesses();
    removeAllTempPaths();
    writeStderr("\nlayoutlab: ");
    writeStderr(why);
    writeStderr("; partial output removed\n");
    ::_exit(128 + signal);
}

void watch(sigset_t set) {
    int signal = 0;
    while (sigwait(&set, &signal) != 0) { }
    g_signal.store(signal);
    requestProcessStop(); // for reads blocked on a pipe
    g_stop.request_stop();
    // The job now stops at its next check. If it does not within the grace period, or the user insists
    // with a second signal, stop without it.
    timespec grace { kGraceSeconds, 0 };
    const int again = sigtimedwait(&set, nullptr, &grace);
    endNow(signal, again > 0 ? "interrupted again: stopped at once" : "did not stop in time: stopped at once");
}

} // namespace

void installInterruptHandling() {
    if (g_installed.exchange(true))
        return;
    const sigset_t set = handledSignals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(watch, set).detach();
}

std::stop_token interruptToken() {
    return g_installed.load() ? g_stop.get_token() : std::stop_token {};
}

int interruptSignal() {
    return g_signal.load();
}

const char* interruptSignalName() {
    switch (g_signal.load()) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    default:
        return "a signal";
    }
}

} // namespace layoutlab::cli
