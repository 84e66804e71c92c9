// SPDX-License-Identifier: MIT
#include "commands.h"
#include "interrupts.h"
#include "progress_bar.h"
#include "run_store.h"

#include "layoutlab/import/import_stats.h"
#include "layoutlab/trace/trace_export.h"
#include "layoutlab/trace/trace_file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab::cli {

namespace {

struct ImportCommandOptions {
    std::string file;
    std::string output;
    TraceSourceOptions source;
    bool stats = false;
    bool json = false;
    DbOptions db;
};

int runImport(const ImportCommandOptions& o) {
    if (o.output.empty() && !o.stats)
        return reportError(usageError("say where the trace goes (-o OUT) or ask for --stats", "-o"));
    auto options = o.source.toImportOptions();
    if (!options)
        return reportError(options.error());
    auto db = o.db.open();
    if (!db)
        return reportError(db.error());
    ProgressBar bar("import");
    auto stats = runImportJob(ImportJob { o.file, *options, o.output }, db->get(), &bar, interruptToken());
    if (!stats)
        return reportError(stats.error());
    const TraceStats& s = *stats;
    if (o.stats) {
        const std::string text = o.json ? toJson(s).dump(2) + "\n" : renderStats(s);
        if (auto ok = writeOutput(text, ""); !ok)
            return reportError(ok.error());
    }
    if (!o.output.empty())
        fmt::print(stderr, "imported {} requests over {} keys from {} ({}) into {}\n", s.requests, s.distinctKeys,
            o.file, s.format, o.output);
    if (s.rejects.total) {
        fmt::print(stderr, "rejected {} lines:", s.rejects.total);
        for (const auto& [reason, n] : s.rejects.byReason)
            fmt::print(stderr, " {} {};", n, reason);
        fmt::print(stderr, "\nfirst ones:\n");
        for (const auto& e : s.rejects.examples)
            fmt::print(stderr, "  {}\n", e);
    }
    return kExitOk;
}

} // namespace

void addImportCommands(CLI::App& app, int& status) {
    auto o = std::make_shared<ImportCommandOptions>();
    auto* cmd = app.add_subcommand("import", "Import a captured trace into layoutlab's binary format, with statistics");
    cmd->add_option("file", o->file, "Source trace (.zst files are read directly)")->required();
    cmd->add_option("-o,--output", o->output, "layoutlab trace to write");
    cmd->add_flag("--stats", o->stats, "Print the trace's statistics (ops, keys, size histograms, rejects)");
    cmd->add_flag("--json", o->json, "Statistics as one JSON object");
    o->source.addTo(*cmd);
    o->db.addTo(*cmd);
    cmd->callback([o, &status] { status = runImport(*o); });

    auto e = std::make_shared<std::tuple<std::string, std::string, std::string, TraceSourceOptions>>();
    auto* exp = app.add_subcommand("export", "Write a trace in another tool's format (twitter, cachelib, oracle)");
    exp->add_option("trace", std::get<0>(*e), "Trace to export (any importable format)")->required();
    exp->add_option("--to", std::get<1>(*e), "Target format: twitter, cachelib or oracle")->required();
    exp->add_option("-o,--output", std::get<2>(*e), "File to write")->required();
    std::get<3>(*e).addTo(*exp);
    exp->callback([e, &status] {
        auto options = std::get<3>(*e).toImportOptions();
        if (!options) {
            status = reportError(options.error());
            return;
        }
        auto trace = openTrace(std::get<0>(*e), *options);
        if (!trace) {
            status = reportError(trace.error());
            return;
        }
        if (auto ok = exportTrace(**trace, std::get<1>(*e), std::get<2>(*e)); !ok) {
            Error error = ok.error();
            if (error.field == field::kFormat)
                error.field = "--to"; // export names the output's format with --to
            status = reportError(error);
            return;
        }
        status = kExitOk;
    });
}

} // namespace layoutlab::cli
