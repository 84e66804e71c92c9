// SPDX-License-Identifier: MIT
#include "layoutlab/collect/layout_calibration.h"

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/memory_trace.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace layoutlab {

namespace {

constexpr std::uint32_t kTtlSeconds = 1000000; // far beyond the calibration's few seconds

std::string shapeText(const KeyShape& s) {
    const char* kind = s.kind == ValueKind::SmallInteger ? " small-int" : s.kind == ValueKind::Integer ? " int" : "";
    return fmt::format("K={} V={}{}{}", s.keyBytes, s.valueBytes, kind, s.hasTtl ? " ttl" : "");
}

// OBJECT ENCODING of a layout's encoding: a shared integer is an "int" object to the server.
std::string serverEncoding(Encoding e) {
    return e == Encoding::SharedInteger ? "int" : std::string(encodingName(e));
}

MemoryTrace shapeTrace(const CalibrationShape& c) {
    std::vector<Request> requests;
    requests.reserve(c.keys);
    for (std::uint32_t id = 0; id < c.keys; ++id) {
        Request r;
        r.op = Op::Set;
        r.keyId = id;
        r.keyBytes = c.shape.keyBytes;
        r.valueBytes = c.shape.valueBytes;
        r.kind = c.shape.kind;
        r.ttlSeconds = c.shape.hasTtl ? kTtlSeconds : 0;
        requests.push_back(r);
    }
    return MemoryTrace(std::move(requests), "calibration " + shapeText(c.shape));
}

Expected<std::uint64_t> settledUsedMemory(RespClient& client) {
    // A few thousand keys settle at once: poll fast.
    SettleOptions options;
    options.pollInterval = std::chrono::milliseconds(20);
    options.limit = std::chrono::seconds(10);
    auto settled = waitUntilSettled(client, options);
    if (!settled)
        return settled.error();
    return settled->usedMemory;
}

Expected<CalibrationRow> measureOnce(RespClient& client, const CalibrationShape& c) {
    if (auto flushed = client.command({ "FLUSHALL", "SYNC" }); !flushed)
        return flushed.error();
    auto before = settledUsedMemory(client);
    if (!before)
        return before.error();
    auto trace = shapeTrace(c);
    auto loaded = loadTrace(client, trace, 64, 0);
    if (!loaded)
        return loaded.error();
    auto after = settledUsedMemory(client);
    if (!after)
        return after.error();
    CalibrationRow row;
    row.shape = c;
    row.measuredBytesPerKey
        = (static_cast<double>(*after) - static_cast<double>(*before)) / static_cast<double>(c.keys);
    auto encoding = client.command({ "OBJECT", "ENCODING", traceKeyName(0, c.shape.keyBytes) });
    if (!encoding)
        return encoding.error();
    row.encoding = *encoding;
    return row;
}

// A server frees or grows a buffer of its own now and then (its cron resizes client buffers), which a
// measurement of a few thousand keys feels: a shape is measured twice, and a third time when the two
// disagree, and the median kept.
Expected<CalibrationRow> measure(RespClient& client, const CalibrationShape& c) {
    constexpr double kAgreeBytes = 0.5;
    std::vector<CalibrationRow> rows;
    for (int i = 0; i < 3; ++i) {
        auto row = measureOnce(client, c);
        if (!row)
            return row.error();
        rows.push_back(*row);
        if (i == 1 && std::abs(rows[0].measuredBytesPerKey - rows[1].measuredBytesPerKey) <= kAgreeBytes)
            break;
    }
    std::sort(rows.begin(), rows.end(),
        [](const auto& a, const auto& b) { return a.measuredBytesPerKey < b.measuredBytesPerKey; });
    return rows[rows.size() / 2];
}

// What `layout` predicts for one shape: bytes per key (index included, as used_memory counts it) and
// the encoding of its keys.
struct Prediction {
    double bytesPerKey = 0;
    std::string encoding;
};

Expected<Prediction> predict(const LayoutAndAllocator& models, const CalibrationShape& c) {
    auto trace = shapeTrace(c);
    SimulationConfig predictionConfig;
    predictionConfig.layout = models.layout;
    predictionConfig.allocator = models.allocator;
    auto result = simulate(predictionConfig, trace);
    if (!result)
        return result.error();
    const auto threshold = models.layout->threshold();
    const auto layout = models.layout->describe(c.shape, threshold ? threshold->value : 0, *models.allocator);
    return Prediction { result->points.at(0).usableBytesPerKey, serverEncoding(layout.encoding) };
}

} // namespace

std::vector<CalibrationShape> calibrationShapes() {
    auto shape = [](std::uint32_t k, std::uint32_t v, bool ttl = false, ValueKind kind = ValueKind::String) {
        return CalibrationShape { KeyShape { k, v, ttl, kind } };
    };
    return {
        shape(16, 16), // the key's sds header (as sent or smallest), the object header (16 or 8), dict or hashtable
        shape(16, 16, true), // the expire: in the object, or an entry of the expires dict
        shape(16, 32), // threshold 64 (raw) or 128 (embedded)
        shape(16, 64), // the client EMBSTR limit: 44 (raw) or 108 and derived (embedded at 128)
        shape(16, 96), // the 8-byte header of 9.1 (embedded at 128) or the 16-byte one (raw)
        shape(32, 9), // the decision's key sizing: K + 3 embeds at 64, the exact header does not
        shape(40, 100), // a longer key beside a raw value
        shape(16, 4, false, ValueKind::SmallInteger), // shared integers (Redis, Valkey 8.0) or not
        shape(16, 12, false, ValueKind::Integer),
    };
}

std::vector<std::string> candidateLayouts(const std::string& engine) {
    if (engine == "redis")
        return { "redis-7.0", "redis-7.0:shared-integers=no" };
    std::vector<std::string> out { "valkey-8.1", "valkey-8.1:key-header=as-sent", "valkey-9.0", "valkey-9.1",
        "valkey-8.0" };
    // What-if builds of the 8.1 layout: the threshold and the client EMBSTR limit changed in object.c.
    for (const char* preset : { "valkey-8.1", "valkey-9.0" })
        for (const char* threshold : { "64", "128" })
            for (const char* limit : { "44", "108", "auto" })
                for (const char* header : { "smallest", "as-sent" })
                    out.push_back(
                        fmt::format("{}:threshold={},embstr-limit={},key-header={}", preset, threshold, limit, header));
    out.push_back("valkey-9.1:threshold=64");
    out.push_back("valkey-8.0:embstr-limit=108");
    return out;
}

std::string Calibration::summary() const {
    if (chosen) {
        std::size_t others = 0;
        for (const auto& f : fits)
            others += f.matches && f.layout != *chosen ? 1 : 0;
        return fmt::format(
            "{} reproduces all {} calibration shapes within {:.2f} B/key{}", *chosen, rows.size(),
            [&] {
                for (const auto& f : fits)
                    if (f.layout == *chosen)
                        return f.worstErrorBytesPerKey;
                return 0.0;
            }(),
            others ? fmt::format(" ({} other candidates agree on these shapes)", others) : std::string());
    }
    const CandidateFit* best = nullptr;
    for (const auto& f : fits)
        if (!best || f.worstErrorBytesPerKey < best->worstErrorBytesPerKey)
            best = &f;
    return best ? fmt::format("no candidate layout reproduces the calibration keys; closest: {} ({})", best->layout,
               best->firstMismatch)
                : std::string("no candidate layouts");
}

std::string Calibration::table() const {
    std::string out = fmt::format("{:<24}{:>10}  {:<8}\n", "calibration shape", "B/key", "encoding");
    for (const auto& r : rows)
        out += fmt::format("{:<24}{:>10.2f}  {:<8}\n", shapeText(r.shape.shape), r.measuredBytesPerKey, r.encoding);
    return out;
}

Expected<Calibration> calibrateLayout(
    RespClient& client, const std::vector<std::string>& candidates, const std::string& allocatorSpec) {
    Calibration out;
    auto failed = [](Error e) {
        e.message = "calibration: " + e.message;
        return e;
    };
    // Every step says it was the calibration's, the first command included (a server that dies at once).
    if (auto warm = warmUpCommands(client); !warm)
        return failed(warm.error());
    // A server's first keys also allocate what stays whatever the keys (the keyspace's tables, the
    // client's buffers): a first load, flushed, takes that out of the measurements.
    if (auto warm = measureOnce(client, calibrationShapes().front()); !warm)
        return failed(warm.error());
    for (const auto& shape : calibrationShapes()) {
        auto row = measure(client, shape);
        if (!row) {
            Error e = row.error();
            e.message = fmt::format("calibration ({}): {}", shapeText(shape.shape), e.message);
            return e;
        }
        out.rows.push_back(*row);
    }
    if (auto flushed = client.command({ "FLUSHALL", "SYNC" }); !flushed)
        return failed(flushed.error());
    std::vector<std::string> specs; // what was tried: a candidate equal to an earlier one is skipped
    for (const auto& candidate : candidates) {
        auto models = parseLayoutAndAllocator(candidate, allocatorSpec);
        if (!models)
            return models.error();
        const auto spec = models->layout->spec();
        if (std::find(specs.begin(), specs.end(), spec) != specs.end())
            continue;
        specs.push_back(spec);
        CandidateFit fit;
        fit.layout = candidate;
        fit.matches = true;
        for (const auto& row : out.rows) {
            auto p = predict(*models, row.shape);
            if (!p)
                return p.error();
            const double error = std::abs(p->bytesPerKey - row.measuredBytesPerKey);
            fit.worstErrorBytesPerKey = std::max(fit.worstErrorBytesPerKey, error);
            const bool ok = error <= kCalibrationToleranceBytes && p->encoding == row.encoding;
            if (!ok && fit.matches) {
                fit.matches = false;
                fit.firstMismatch = fmt::format("{}: predicts {:.2f} B/key {}, measured {:.2f} {}",
                    shapeText(row.shape.shape), p->bytesPerKey, p->encoding, row.measuredBytesPerKey, row.encoding);
            }
        }
        if (fit.matches && !out.chosen)
            out.chosen = candidate;
        out.fits.push_back(std::move(fit));
    }
    return out;
}

} // namespace layoutlab
