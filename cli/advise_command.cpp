// SPDX-License-Identifier: MIT
// `layoutlab advise TRACE`: sweep the trace, then recommend a threshold by weighing bytes per key
// against cache-model misses per GET (core/include/layoutlab/report/advice.h), and say how far 64 and
// 128 are from it; with --param, a collection limit's value by bytes per key against lines per element lookup
// (core/include/layoutlab/report/limit_advice.h).

#include "commands.h"

#include "interrupts.h"
#include "layoutlab/store/simulation_request.h"
#include "progress_bar.h"
#include "run_store.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/advice.h"
#include "layoutlab/report/limit_advice.h"
#include "layoutlab/report/reporter.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>

namespace layoutlab::cli {

namespace {

struct AdviseOptions {
    std::string trace;
    std::string layout = "valkey-9.1";
    std::string alloc;
    std::string thresholds = "16:512:16";
    double weightMemory = 1.0;
    double weightMisses = 1.0;
    std::string missLevel = "llc";
    bool noCache = false;
    std::string cacheGeometry;
    StallOptions stall;
    bool slabs = false;
    bool noThreadCache = false;
    bool json = false;
    std::string output;
    TraceSourceOptions source;
    DbOptions db;
    CollectionLimits limits;
    std::string limitSweep; // --param: a collection limit's values instead of thresholds
};

const AdvicePoint* at(const Advice& a, std::uint32_t threshold) {
    for (const auto& p : a.points)
        if (p.threshold == threshold)
            return &p;
    return nullptr;
}

// The memory axis in words.
std::string memoryWords(const Advice& a) {
    return a.memoryMetric == "active_bytes_per_key" ? "active bytes per key" : "bytes per key";
}

// When the slab model ran and the leanest threshold by what the allocator keeps is not the leanest by what
// its size classes hand out: one sentence saying so (empty otherwise).
std::string leanestDiffers(const Advice& a) {
    if (a.leanest == a.leanestByUsable)
        return {};
    const auto &active = a.points[a.leanest], &usable = a.points[a.leanestByUsable];
    return fmt::format("the leanest threshold by allocated bytes, {} ({:.2f} B/key allocated, {:.2f} active), is "
                       "not the leanest by active bytes, {} ({:.2f} allocated, {:.2f} active): the pages the "
                       "allocator keeps after deletes and overwrites decide it",
        usable.threshold, usable.usableBytesPerKey, usable.bytesPerKey, active.threshold, active.usableBytesPerKey,
        active.bytesPerKey);
}

// The uncertainty ties are judged by, in words.
std::string uncertaintyText(const Advice& a) {
    const bool lines = a.accessMetric == "lines_touched_per_get";
    return fmt::format("{:g}% of {}, {}", 100 * a.uncertainty.bytesPerKey, memoryWords(a),
        lines ? std::string("and lines per GET exactly")
              : fmt::format("{:g}% of {} or {:g}, the larger", 100 * a.uncertainty.missesPerGet, a.accessMetric,
                  a.uncertainty.missesPerGetFloor));
}

std::vector<std::uint32_t> tiedThresholds(const Advice& a) {
    std::vector<std::uint32_t> out;
    for (const auto& p : a.points)
        if (p.tiesWithAdvised)
            out.push_back(p.threshold);
    return out;
}

// Why the advised point won, in one sentence.
std::string why(const Advice& a) {
    const auto& c = a.points[a.chosen];
    if (a.chosen != a.cheapest)
        return fmt::format("it is the threshold the engine ships with, and the cheapest by the weights, {}, differs "
                           "from it by less than the model can tell ({:+.2f} bytes per key, {:+.4f} {}; uncertainty "
                           "{})",
            a.points[a.cheapest].threshold, a.points[a.cheapest].bytesPerKey - c.bytesPerKey,
            a.points[a.cheapest].missesPerGet - c.missesPerGet, a.accessMetric, uncertaintyText(a));
    const auto& lean = a.points[a.leanest];
    const auto& quick = a.points[a.fewestMisses];
    const bool leanest = c.bytesPerKey == lean.bytesPerKey, quickest = c.missesPerGet == quick.missesPerGet;
    if (leanest && quickest)
        return fmt::format("it has both the fewest bytes per key ({:.2f}) and the fewest {} ({:.4f})", c.bytesPerKey,
            a.accessMetric, c.missesPerGet);
    if (leanest)
        return fmt::format("it has the fewest bytes per key ({:.2f}); threshold {} would save {:.4f} {} for {:.2f} "
                           "more bytes per key, which the weights do not repay",
            c.bytesPerKey, quick.threshold, c.missesPerGet - quick.missesPerGet, a.accessMetric,
            quick.bytesPerKey - c.bytesPerKey);
    if (quickest)
        return fmt::format("it has the fewest {} ({:.4f}); threshold {} would save {:.2f} bytes per key for "
                           "{:.4f} more, which the weights do not repay",
            a.accessMetric, c.missesPerGet, lean.threshold, c.bytesPerKey - lean.bytesPerKey,
            lean.missesPerGet - c.missesPerGet);
    return fmt::format("it trades {:.2f} bytes per key more than threshold {} (the leanest) for {:.4f} {} fewer",
        c.bytesPerKey - lean.bytesPerKey, lean.threshold, lean.missesPerGet - c.missesPerGet, a.accessMetric);
}

nlohmann::json pointJson(const AdvicePoint& p) {
    return { { "threshold", p.threshold }, { "bytes_per_key", p.bytesPerKey },
        { "usable_bytes_per_key", p.usableBytesPerKey }, { "misses_per_get", p.missesPerGet },
        { "memory_cost", p.memoryCost }, { "miss_cost", p.missCost }, { "cost", p.cost },
        { "ties_with_advised", p.tiesWithAdvised } };
}

nlohmann::json distanceJson(const Advice& a, std::uint32_t threshold) {
    const AdvicePoint* p = at(a, threshold);
    if (!p)
        return nullptr;
    const auto& c = a.points[a.chosen];
    return { { "threshold", threshold }, { "bytes_per_key_more", p->bytesPerKey - c.bytesPerKey },
        { "misses_per_get_more", p->missesPerGet - c.missesPerGet }, { "cost_more", p->cost - c.cost } };
}

// Collection keys are the same at every threshold: what the advice weighs of them, and which limit does move
// them (the largest type's), as a note; empty without collections.
std::string collectionNote(const SimulationResult& r) {
    std::map<std::string, std::uint64_t> keysByType;
    std::uint64_t collectionKeys = 0;
    for (const CollectionUsage& c : r.collections) {
        keysByType[c.type] += c.keys;
        collectionKeys += c.keys;
    }
    if (collectionKeys == 0)
        return {};
    const auto largest = std::max_element(
        keysByType.begin(), keysByType.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    const std::string limit = largest->first == "list" ? "list-max-listpack-size=-5,-2,-1,16,128"
        : largest->first == "zset"                     ? "zset-max-listpack-entries=16:1024:16"
                                                       : largest->first + "-max-listpack-entries=16:1024:16";
    const std::uint64_t keys = r.points.empty() ? collectionKeys : r.points.front().keys;
    if (collectionKeys >= keys)
        return fmt::format("  note: every key of this trace is a collection, which the embed threshold does not "
                           "change: the thresholds tie; its collections' limits do (advise --param {})\n",
            limit);
    return fmt::format("  note: {} of the {} keys are collections, the same at every threshold; their limits are "
                       "advised on by advise --param {}\n",
        collectionKeys, keys, limit);
}

std::string renderAdvice(const Advice& a, const SimulationResult& r, const AdviceWeights& w) {
    std::string out = fmt::format("advice for {}\n  layout {} under {}; weights: memory {} ({}), misses {} ({})\n\n",
        r.traceName, r.layoutSpec, r.allocatorSpec, w.memory, a.memoryMetric, w.misses, a.accessMetric);
    out += fmt::format("{:>10} {:>11} {:>16} {:>12} {:>10} {:>8}\n", "threshold",
        a.memoryMetric == "active_bytes_per_key" ? "active/key" : "bytes/key", "misses/GET", "memory cost", "miss cost",
        "cost");
    for (std::size_t i = 0; i < a.points.size(); ++i) {
        const auto& p = a.points[i];
        out += fmt::format("{:>10} {:>11.2f} {:>16.4f} {:>11.1f}% {:>9.1f}% {:>8.4f}{}\n", p.threshold, p.bytesPerKey,
            p.missesPerGet, 100 * p.memoryCost, 100 * p.missCost, p.cost,
            i == a.chosen           ? "  <- advised"
                : p.tiesWithAdvised ? "  ~ ties"
                                    : "");
    }
    const auto& c = a.points[a.chosen];
    out += fmt::format("\nadvised threshold: {} ({:.2f} {}, {:.4f} {})\n  because {}\n", c.threshold, c.bytesPerKey,
        memoryWords(a), c.missesPerGet, a.accessMetric, why(a));
    if (const auto differs = leanestDiffers(a); !differs.empty())
        out += "  note: " + differs + "\n";
    if (a.ties() > 1)
        out += fmt::format("  ties: {} differ from the advice by less than the model's uncertainty ({}): it cannot "
                           "tell them apart\n",
            fmt::join(tiedThresholds(a), ", "), uncertaintyText(a));
    out += collectionNote(r);
    for (const std::uint32_t t : { 64u, 128u }) {
        const AdvicePoint* p = at(a, t);
        if (!p)
            out += fmt::format("  {:>3}: not in the sweep\n", t);
        else if (p == &c)
            out += fmt::format("  {:>3}: the advised threshold\n", t);
        else
            out += fmt::format("  {:>3}: {:+.2f} {} ({:+.1f}%), {:+.4f} {} against the advice\n", t,
                p->bytesPerKey - c.bytesPerKey, memoryWords(a), 100 * (p->bytesPerKey / c.bytesPerKey - 1),
                p->missesPerGet - c.missesPerGet, a.accessMetric);
    }
    return out;
}

// The sweep an advice weighs, run with a progress bar and stored where the options say.
Expected<SimulationJobOutcome> runAdviseJob(const SimulationJob& job, const AdviseOptions& o) {
    auto db = o.db.open();
    if (!db)
        return db.error();
    ProgressBar bar("advise");
    auto outcome = runSimulationJob(job, db->get(), &bar, interruptToken());
    if (outcome && *db)
        fmt::print(stderr, "stored as run {} in {}\n", outcome->runId, o.db.resolvedPath());
    return outcome;
}

// Why the advised value won, in one sentence.
std::string whyLimit(const LimitAdvice& a) {
    const auto& c = a.points[a.chosen];
    const auto& lean = a.points[a.leanest];
    const auto& quick = a.points[a.fewestLines];
    const std::string lines = fmt::format("lines per {}", a.lookup);
    if (a.chosen != a.cheapest)
        return fmt::format("it is the engine's default, and the cheapest by the weights, {}, differs from it by less "
                           "than the model can tell ({:+.2f} bytes per key, the same {})",
            a.points[a.cheapest].value, a.points[a.cheapest].bytesPerKey - c.bytesPerKey, lines);
    if (c.bytesPerKey == lean.bytesPerKey && c.lookupLines == quick.lookupLines)
        return fmt::format("it has both the fewest bytes per key ({:.2f}) and the fewest {} ({:.2f})", c.bytesPerKey,
            lines, c.lookupLines);
    if (c.bytesPerKey == lean.bytesPerKey)
        return fmt::format("it has the fewest bytes per key ({:.2f}); {} would read {:.2f} fewer {} for {:.2f} more "
                           "bytes per key, which the weights do not repay",
            c.bytesPerKey, quick.value, c.lookupLines - quick.lookupLines, lines, quick.bytesPerKey - c.bytesPerKey);
    if (c.lookupLines == quick.lookupLines)
        return fmt::format("it reads the fewest {} ({:.2f}); {} would save {:.2f} bytes per key for {:.2f} more, "
                           "which the weights do not repay",
            lines, c.lookupLines, lean.value, c.bytesPerKey - lean.bytesPerKey, lean.lookupLines - c.lookupLines);
    return fmt::format("it trades {:.2f} bytes per key more than {} (the leanest) for {:.2f} fewer {}",
        c.bytesPerKey - lean.bytesPerKey, lean.value, lean.lookupLines - c.lookupLines, lines);
}

std::string renderLimitAdvice(const LimitAdvice& a, const SimulationResult& r, const AdviceWeights& w) {
    std::string out = fmt::format("advice for {} on {}\n  layout {} under {}; weights: memory {} (bytes per key), "
                                  "lookups {} (lines per {} of a {}'s element)\n\n",
        a.limit, r.traceName, r.layoutSpec, r.allocatorSpec, w.memory, w.misses, a.lookup, a.type);
    out += fmt::format("{:>12} {:>11} {:>12} {:>12} {:>12} {:>8}\n", "value", "bytes/key",
        fmt::format("lines/{}", a.lookup), "memory cost", "lookup cost", "cost");
    for (std::size_t i = 0; i < a.points.size(); ++i) {
        const auto& p = a.points[i];
        out += fmt::format("{:>12} {:>11.2f} {:>12.2f} {:>11.1f}% {:>11.1f}% {:>8.4f}{}{}\n", p.value, p.bytesPerKey,
            p.lookupLines, 100 * p.memoryCost, 100 * p.lookupCost, p.cost,
            i == a.chosen           ? "  <- advised"
                : p.tiesWithAdvised ? "  ~ ties"
                                    : "",
            p.value == a.defaultValue ? "  (default)" : "");
    }
    const auto& c = a.points[a.chosen];
    out += fmt::format("\nadvised {}: {} ({:.2f} bytes per key, {:.2f} lines per {})\n  because {}\n", a.limit, c.value,
        c.bytesPerKey, c.lookupLines, a.lookup, whyLimit(a));
    const auto shipped = std::find_if(
        a.points.begin(), a.points.end(), [&](const LimitAdvicePoint& p) { return p.value == a.defaultValue; });
    if (shipped == a.points.end())
        out += fmt::format("  the default, {}, is not among the values\n", a.defaultValue);
    else if (&*shipped != &c)
        out += fmt::format("  the default, {}: {:+.2f} bytes per key ({:+.1f}%), {:+.2f} lines per {} against the "
                           "advice\n",
            a.defaultValue, shipped->bytesPerKey - c.bytesPerKey, 100 * (shipped->bytesPerKey / c.bytesPerKey - 1),
            shipped->lookupLines - c.lookupLines, a.lookup);
    out += fmt::format("  lines per lookup are predicted from the engines' lookups (not measured); ties: bytes per key "
                       "within {:g}%, lines equal\n",
        100 * a.bytesPerKeyUncertainty);
    return out;
}

nlohmann::json limitAdviceJson(
    const LimitAdvice& a, const SimulationResult& r, const AdviceWeights& w, std::int64_t runId) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : a.points)
        points.push_back({ { "value", p.value }, { "bytes_per_key", p.bytesPerKey },
            { "lookup_lines_per_element", p.lookupLines }, { "memory_cost", p.memoryCost },
            { "lookup_cost", p.lookupCost }, { "cost", p.cost }, { "ties_with_advised", p.tiesWithAdvised } });
    std::vector<std::int64_t> ties;
    for (const auto& p : a.points)
        if (p.tiesWithAdvised)
            ties.push_back(p.value);
    const auto& c = a.points[a.chosen];
    return { { "trace", r.traceName }, { "layout", r.layoutSpec }, { "allocator", r.allocatorSpec },
        { "limit", a.limit }, { "type", a.type }, { "lookup", a.lookup }, { "run_value", a.runValue },
        { "default_value", a.defaultValue }, { "weights", { { "memory", w.memory }, { "lookups", w.misses } } },
        { "points", points },
        { "advised",
            { { "value", c.value }, { "bytes_per_key", c.bytesPerKey }, { "lookup_lines_per_element", c.lookupLines },
                { "why", whyLimit(a) } } },
        { "leanest", a.points[a.leanest].value }, { "fewest_lookup_lines", a.points[a.fewestLines].value },
        { "cheapest", a.points[a.cheapest].value }, { "ties", ties },
        { "uncertainty", { { "bytes_per_key_fraction", a.bytesPerKeyUncertainty } } },
        { "run", runId ? nlohmann::json(runId) : nlohmann::json(nullptr) } };
}

// advise --param: the limit's values in one pass at the layout's threshold, then the advice on them.
int runLimitAdvise(const AdviseOptions& o, const AdviceWeights& weights, const CLI::App& command) {
    for (const char* flag : { "--thresholds", "--miss-level", "--no-cache", "--cache-geometry", "--slabs",
             "--no-thread-cache", "--latency" })
        if (command.count(flag) > 0)
            return reportError(usageError(fmt::format("{} weighs thresholds; --param weighs a collection limit's "
                                                      "values by bytes per key and lines per lookup",
                                              flag),
                flag));
    SimulationRequest request;
    if (auto ok = fillTraceAndModels(request, o); !ok)
        return reportError(ok.error());
    request.collectionLimits = o.limits;
    request.limitSweep = o.limitSweep;
    request.kind = "advise";
    request.toolVersion = LAYOUTLAB_VERSION;
    request.extraParametersJson
        = nlohmann::json { { "weight_memory", o.weightMemory }, { "weight_lookups", o.weightMisses } }.dump();
    if (auto ok = checkWeights(weights); !ok)
        return reportError(ok.error());
    auto job = buildSimulationJob(request);
    if (!job)
        return reportError(job.error());
    auto outcome = runAdviseJob(*job, o);
    if (!outcome)
        return reportError(outcome.error());
    auto advice = adviseLimit(*outcome->result.limitSweep, weights);
    if (!advice)
        return reportError(advice.error());
    return printOutput(o.json ? limitAdviceJson(*advice, outcome->result, weights, outcome->runId).dump(2) + "\n"
                              : renderLimitAdvice(*advice, outcome->result, weights),
        o.output);
}

int runAdvise(const AdviseOptions& o, const CLI::App& command) {
    AdviceWeights weights { o.weightMemory, o.weightMisses, std::nullopt };
    if (!o.limitSweep.empty())
        return runLimitAdvise(o, weights, command);
    if (o.missLevel == "l1")
        weights.missLevel = 0;
    else if (o.missLevel == "l2")
        weights.missLevel = 1;
    else if (o.missLevel != "llc")
        return reportError(usageError("--miss-level must be l1, l2 or llc, got '" + o.missLevel + "'", "--miss-level"));
    if (o.noCache && !o.cacheGeometry.empty())
        return reportError(usageError("--no-cache and --cache-geometry contradict each other", "--no-cache"));
    if (o.noCache && o.stall.latency)
        return reportError(
            usageError("the stall is predicted from the cache model's misses, which --no-cache skips", "--latency"));
    SimulationRequest request;
    if (auto ok = fillTraceAndModels(request, o); !ok)
        return reportError(ok.error());
    request.thresholds = o.thresholds;
    request.cache = !o.noCache;
    request.cacheGeometry = o.cacheGeometry;
    request.slabs = o.slabs;
    request.slabThreadCache = !o.noThreadCache;
    o.stall.fill(request);
    request.kind = "advise";
    request.toolVersion = LAYOUTLAB_VERSION;
    request.extraParametersJson = nlohmann::json {
        { "weight_memory", o.weightMemory }, { "weight_misses", o.weightMisses },
        { "miss_level", o.noCache ? std::string("lines") : o.missLevel }
    }.dump();
    auto job = buildSimulationJob(request);
    if (!job)
        return reportError(job.error());
    if (auto ok = checkWeights(weights); !ok) // before the sweep, not after it
        return reportError(ok.error());
    // Measured before the run, so that the run keeps them (`report` shows the stall from them).
    auto kept = latenciesIfAsked(o.stall.latency, *job);
    if (!kept)
        return reportError(kept.error());
    const std::optional<LoadLatencies> latencies = *kept;
    auto outcome = runAdviseJob(*job, o);
    if (!outcome)
        return reportError(outcome.error());
    auto advice = advise(outcome->result, weights);
    if (!advice)
        return reportError(advice.error());
    std::string text;
    if (o.json) {
        nlohmann::json points = nlohmann::json::array();
        for (const auto& p : advice->points)
            points.push_back(pointJson(p));
        const auto& r = outcome->result;
        const auto& chosen = advice->points[advice->chosen];
        nlohmann::json out { { "trace", r.traceName }, { "layout", r.layoutSpec }, { "allocator", r.allocatorSpec },
            { "weights", { { "memory", weights.memory }, { "misses", weights.misses } } },
            { "access_metric", advice->accessMetric }, { "memory_metric", advice->memoryMetric }, { "points", points },
            { "advised",
                { { "threshold", chosen.threshold }, { "bytes_per_key", chosen.bytesPerKey },
                    { "misses_per_get", chosen.missesPerGet }, { "why", why(*advice) } } },
            { "leanest", advice->points[advice->leanest].threshold },
            { "leanest_by_allocated", advice->points[advice->leanestByUsable].threshold },
            { "leanest_differs",
                leanestDiffers(*advice).empty() ? nlohmann::json(nullptr) : nlohmann::json(leanestDiffers(*advice)) },
            { "cheapest", advice->points[advice->cheapest].threshold }, { "ties", tiedThresholds(*advice) },
            { "shipped_threshold",
                advice->shippedThreshold ? nlohmann::json(*advice->shippedThreshold) : nlohmann::json(nullptr) },
            { "uncertainty",
                { { "bytes_per_key_fraction", advice->uncertainty.bytesPerKey },
                    { "active_bytes_per_key_fraction", advice->uncertainty.activeBytesPerKey },
                    { "misses_per_get_fraction", advice->uncertainty.missesPerGet },
                    { "misses_per_get_floor", advice->uncertainty.missesPerGetFloor },
                    { "lines_per_get_fraction", advice->uncertainty.linesPerGet } } },
            { "fewest_misses", advice->points[advice->fewestMisses].threshold },
            { "from_64", distanceJson(*advice, 64) }, { "from_128", distanceJson(*advice, 128) },
            { "run", outcome->runId ? nlohmann::json(outcome->runId) : nlohmann::json(nullptr) } };
        text = out.dump(2) + "\n";
    } else {
        text = renderAdvice(*advice, outcome->result, weights);
    }
    if (latencies) {
        // The advice's points are the sweep's, in its order: each gets its stall as a sweep's would.
        text = o.json ? withStall(text, outcome->result, *latencies)
                      : text + renderStallTable(outcome->result, *latencies);
    }
    return printOutput(text, o.output);
}

} // namespace

void addAdviseCommand(CLI::App& app, int& status) {
    auto o = std::make_shared<AdviseOptions>();
    auto* cmd = app.add_subcommand(
        "advise", "Recommend an embed threshold for a trace, weighing bytes per key against misses per GET");
    addTraceArgument(*cmd, o->trace);
    addLayoutOptions(*cmd, o->layout, "Layout with an embed threshold (see `layoutlab layouts`)");
    cmd->add_option("--alloc", o->alloc, "Allocator (default: the layout's engine default)");
    cmd->add_option("--thresholds", o->thresholds, "The thresholds to weigh: FIRST:LAST:STEP or a list")
        ->capture_default_str();
    cmd->add_option("--weight-memory", o->weightMemory, "Weight of bytes per key above the leanest threshold's")
        ->capture_default_str();
    cmd->add_option("--weight-misses", o->weightMisses,
           "Weight of misses per GET above the fewest (with --param: of lines per element lookup)")
        ->capture_default_str();
    cmd->add_option("--miss-level", o->missLevel, "The cache level whose misses count: l1, l2 or llc")
        ->capture_default_str();
    cmd->add_flag("--no-cache", o->noCache, "Skip the cache model: lines touched per GET stand in for misses");
    cmd->add_flag("--slabs", o->slabs,
        "Weigh the memory the allocator keeps (the slab model's active bytes per key: what deletes and overwrites "
        "leave behind) instead of what its size classes hand out");
    cmd->add_flag("--no-thread-cache", o->noThreadCache, "With --slabs: no thread cache in front of the arena");
    o->stall.addTo(*cmd,
        "Measure this host's load latencies and predict each threshold's memory stall per GET, with its uncertainty");
    cmd->add_option("--cache-geometry", o->cacheGeometry, "Cache levels, SIZE:WAYS from L1 outward (default: sysfs)");
    addJsonAndOutput(
        *cmd, o->json, o->output, "One JSON object: points with their costs, the advice, 64 and 128 beside it");
    cmd->add_option("--param", o->limitSweep,
        "Weigh a collection limit's values instead of thresholds, NAME=FIRST:LAST:STEP or NAME=V1,V2 (e.g. "
        "hash-max-listpack-entries=64:1024:64): bytes per key against the lines each lookup of the type's elements "
        "reads (--weight-misses weighs those)");
    addCollectionLimitOptions(*cmd, o->limits);
    o->source.addTo(*cmd);
    o->db.addTo(*cmd);
    cmd->callback([o, &status, cmd] { status = runAdvise(*o, *cmd); });
}

} // namespace layoutlab::cli
