// SPDX-License-Identifier: MIT
// layoutlab: the headless command. It parses arguments, calls the core, and prints through reporters.

#include "collectors_config.h"
#include "commands.h"
#include "interrupts.h"

#include <fmt/format.h>

int main(int argc, char** argv) {
    using namespace layoutlab::cli;
    installInterruptHandling(); // before any thread starts: they all inherit its signal mask
    CLI::App app { "layoutlab: allocator-aware memory-layout simulator for key/value stores.\n"
                   "Exit codes: 0 success, 1 data or I/O error, 2 usage error.",
        "layoutlab" };
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("layoutlab ") + LAYOUTLAB_VERSION);
    int status = kExitOk;
    addGenCommand(app, status);
    addImportCommands(app, status);
    addSimCommands(app, status);
    addListCommands(app, status);
#if LAYOUTLAB_HAVE_JEMALLOC
    addProfileCommands(app, status);
#else
    // Listed, so that users learn why it is missing rather than that it does not exist.
    auto* profile = app.add_subcommand("profile", "Simulator beside the reference engine (not in this build)");
    profile->allow_extras();
    profile->callback([&status] {
        status = reportError(
            layoutlab::usageError("profile runs the reference engine, which allocates from jemalloc, and this "
                                  "build does not link it (install libjemalloc-dev and build with "
                                  "LAYOUTLAB_WITH_JEMALLOC=ON)"));
    });
#endif
#if LAYOUTLAB_HAVE_HIREDIS
    addDriveCommand(app, status);
#else
    auto* drive
        = app.add_subcommand("drive", "A real Valkey or Redis server beside the prediction (not in this build)");
    drive->allow_extras();
    drive->callback([&status] {
        status = reportError(layoutlab::usageError(
            "drive talks RESP through hiredis, and this build does not link it (install libhiredis-dev)"));
    });
#endif
    addDbCommands(app, status);
    addCompareCommand(app, status);
    addAdviseCommand(app, status);
    addReportCommand(app, status);
    addBatchCommand(app, status);
    addLatencyCommand(app, status);
    if (argc > 1 && argv[1][0] != '-') {
        const std::string command = argv[1];
        bool known = false;
        std::string names;
        for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
            known = known || sub->get_name() == command;
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
        if (!known) {
            fmt::print(stderr, "layoutlab: error: unknown command '{}' (commands: {})\n", command, names);
            return kExitUsage;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "layoutlab: error: {}\n", e.what());
        fmt::print(stderr, "Run with --help for usage.\n");
        return kExitUsage;
    }
    if (interruptSignal() != 0 && status == kExitOk) {
        // The command finished its work before it saw the signal: it is still an interrupted run of the tool.
        fmt::print(stderr, "layoutlab: interrupted by {} as it finished\n", interruptSignalName());
        return 128 + interruptSignal();
    }
    return status;
}
