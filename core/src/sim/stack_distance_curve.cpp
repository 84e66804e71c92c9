// SPDX-License-Identifier: MIT
#include "stack_distance_curve.h"

#include "layoutlab/resources.h"

#include <algorithm>
#include <fmt/format.h>
#include <future>
#include <numeric>

namespace layoutlab {

namespace {

constexpr std::size_t kBatchRequests = 65536;
constexpr std::uint32_t kNever = UINT32_MAX;
constexpr std::uint64_t kNoShape = UINT64_MAX;
constexpr std::uint64_t kFirstUse = UINT64_MAX; // the stack distance of a key's first use

// The keys in the order of their last use, and their sizes by the position of that use: the bytes of the
// keys used since any position. Each use takes the next position; when the positions run out, the keys
// still in the stack are numbered again from 0 in their order. The sizes are summed in blocks of 64
// positions, the blocks in a Fenwick tree small enough to stay in the caches. A use costs two reads from
// memory, a key's slot and its old position's block, both fetched ahead by prefetch().
class RecencyStack {
public:
    // What the stack keeps per key id: 16 bytes, one read.
    struct KeySlot {
        std::uint32_t lastUse = kNever; // the position of its last use
        std::uint32_t bytes = 0;
        std::uint64_t shape = kNoShape; // the caller's: the key's one shape
    };

    explicit RecencyStack(std::size_t keyIds)
        : m_keys(keyIds) {
        resizePositions(std::max<std::size_t>(2 * keyIds, 1 << 16));
    }

    KeySlot& slot(std::uint32_t keyId) {
        if (keyId >= m_keys.size())
            m_keys.resize(std::max<std::size_t>(std::size_t { keyId } + 1, 2 * m_keys.size()));
        return m_keys[keyId];
    }
    const KeySlot& slot(std::uint32_t keyId) const { return m_keys[keyId]; }
    // Fetches what a use of `keyId` a few requests ahead reads: its slot, then (once the slot is in)
    // its old position.
    void prefetchSlot(std::uint32_t keyId) const {
        if (keyId < m_keys.size())
            __builtin_prefetch(&m_keys[keyId]);
    }
    void prefetchPosition(std::uint32_t keyId) const {
        if (keyId < m_keys.size())
            if (const std::uint32_t last = m_keys[keyId].lastUse; last != kNever)
                __builtin_prefetch(&m_sizeAt[last], 1);
    }

    // Moves the key of `slot` (`keyId`), of `bytes`, to the front. Returns its stack distance: its own bytes
    // and those of the distinct keys used since it last was (kFirstUse the first time).
    std::uint64_t use(std::uint32_t keyId, KeySlot& key, std::uint32_t bytes) {
        if (m_next == m_keyAt.size())
            renumber();
        std::uint64_t distance = kFirstUse;
        m_previousOfLast = key.lastUse;
        if (const std::uint32_t last = key.lastUse; last != kNever) {
            distance = bytesAfter(last) + bytes; // the keys used after its last use, and itself
            m_sizeAt[last] = 0; // m_keyAt[last] stays: a position is live while its key's lastUse names it
            addToBlock(last / kBlock, -static_cast<std::int64_t>(bytes));
        } else {
            m_total += bytes;
        }
        key.lastUse = static_cast<std::uint32_t>(m_next);
        key.bytes = bytes;
        m_keyAt[m_next] = keyId;
        m_sizeAt[m_next] = bytes;
        addToBlock(m_next / kBlock, bytes);
        ++m_next;
        return distance;
    }

    // The keys, most recently used first.
    std::vector<std::uint32_t> order() const {
        std::vector<std::uint32_t> keys;
        for (std::size_t p = m_next; p-- > 0;)
            if (live(p))
                keys.push_back(m_keyAt[p]);
        return keys;
    }
    // How many keys were used after the last used key's use before, itself not counted (none before: all).
    std::size_t usedSinceLastKeysPrevious() const {
        if (m_previousOfLast == kNever)
            return SIZE_MAX;
        std::size_t used = 0;
        for (std::size_t p = m_previousOfLast + 1; p < m_next; ++p)
            used += live(p) ? 1 : 0;
        return used - 1;
    }

private:
    static constexpr std::size_t kBlock = 64;

    bool live(std::size_t pos) const { return m_keys[m_keyAt[pos]].lastUse == pos; }
    // The bytes at the positions after `pos`: the rest of its block, and the blocks after it.
    std::uint64_t bytesAfter(std::size_t pos) const {
        const std::size_t block = pos / kBlock;
        const std::size_t blockEnd = std::min((block + 1) * kBlock, m_next);
        std::uint64_t sum = 0;
        for (std::size_t p = pos + 1; p < blockEnd; ++p)
            sum += m_sizeAt[p];
        std::uint64_t upTo = 0; // the blocks 0..block
        for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(block); i >= 0; i = (i & (i + 1)) - 1)
            upTo += m_blockTree[static_cast<std::size_t>(i)];
        return sum + (m_total - upTo);
    }
    void addToBlock(std::size_t block, std::int64_t delta) {
        for (; block < m_blockTree.size(); block |= block + 1)
            m_blockTree[block] += static_cast<std::uint64_t>(delta);
    }
    void resizePositions(std::size_t positions) {
        positions = (positions + kBlock - 1) / kBlock * kBlock;
        m_keyAt.resize(positions, 0);
        m_sizeAt.resize(positions, 0);
        m_blockTree.resize(positions / kBlock, 0);
    }
    void renumber() {
        std::size_t held = 0;
        for (std::size_t p = 0; p < m_next; ++p)
            if (live(p)) {
                const std::uint32_t key = m_keyAt[p];
                m_keyAt[held] = key;
                m_keys[key].lastUse = static_cast<std::uint32_t>(held);
                ++held;
            }
        if (2 * held > m_keyAt.size()) // keep at least as many free positions as keys
            resizePositions(2 * m_keyAt.size());
        std::fill(m_sizeAt.begin(), m_sizeAt.end(), 0);
        std::fill(m_blockTree.begin(), m_blockTree.end(), 0);
        for (std::size_t p = 0; p < held; ++p) {
            m_sizeAt[p] = m_keys[m_keyAt[p]].bytes;
            m_blockTree[p / kBlock] += m_sizeAt[p];
        }
        // Build the tree in one pass: each node passes its sum to its parent.
        for (std::size_t b = 0; b < m_blockTree.size(); ++b)
            if (const std::size_t parent = b | (b + 1); parent < m_blockTree.size())
                m_blockTree[parent] += m_blockTree[b];
        m_next = held;
    }

    std::vector<KeySlot> m_keys; // by key id
    std::vector<std::uint32_t> m_keyAt; // by position: the key last used there (if it still is)
    std::vector<std::uint32_t> m_sizeAt; // by position: its key's bytes (0: none)
    std::vector<std::uint64_t> m_blockTree; // Fenwick tree of the bytes by block of kBlock positions
    std::size_t m_next = 0;
    std::uint64_t m_total = 0;
    std::uint32_t m_previousOfLast = kNever; // the position the last used key had before (kNever: none)
};

// One pass over the trace: every use's stack distance, counted by the first budget that holds it.
class StackCurve {
public:
    StackCurve(const SimulationConfig& config, const std::vector<std::uint64_t>& budgets, std::uint64_t keyIds)
        : m_config(config)
        , m_budgets(budgets)
        , m_stack(keyIds)
        , m_usesAt(budgets.size() + 1, 0)
        , m_getUsesAt(budgets.size() + 1, 0)
        , m_hitShapesAt(budgets.size()) {
        for (std::uint64_t b : budgets) // what the keys may take: the budget less the server's own memory
            m_room.push_back(b - config.eviction->baseBytes);
    }

    // False, with declined() saying why, at the first request that breaks the conditions.
    bool apply(std::span<const Request> batch) {
        constexpr std::size_t kSlotAhead = 16;
        constexpr std::size_t kPositionAhead = 8;
        for (std::size_t i = 0; i < batch.size(); ++i) {
            if (i + kSlotAhead < batch.size())
                m_stack.prefetchSlot(batch[i + kSlotAhead].keyId);
            if (i + kPositionAhead < batch.size())
                m_stack.prefetchPosition(batch[i + kPositionAhead].keyId);
            const Request& r = batch[i];
            ++m_requests;
            if (r.ttlSeconds != 0)
                return decline(r, "sets a TTL");
            switch (r.op) {
            case Op::Get:
                if (!get(r))
                    return false;
                break;
            case Op::Set:
                if (!use(r, m_stack.slot(r.keyId), packShape(r.keyBytes, r.valueBytes, false, r.kind), false))
                    return false;
                break;
            case Op::Resize: // a snapshot's tables sized before its keys
            case Op::Other: // a command the keyspace does not see; the server evicts before it all the same
                m_endsOnUse = false;
                break;
            default:
                return decline(r, fmt::format("is {}", opName(r.op)));
            }
        }
        return true;
    }

    const std::string& declined() const { return m_declined; }
    // Where each budget stands at the end: the keys it holds (most recent first) and their bytes.
    struct Held {
        std::size_t keys = 0;
        std::uint64_t bytes = 0;
    };
    std::vector<Held> held(const std::vector<std::uint32_t>& order) const;
    // The budget's usage at index `j`, holding `held`.
    BudgetUsage usageAt(std::size_t j, const Held& held) const;
    const ShapeHistogram& hitShapesAt(std::size_t j) const { return m_hitShapesAt[j]; }
    std::uint64_t shapeOf(std::uint32_t keyId) const { return m_stack.slot(keyId).shape; }
    const RecencyStack& stack() const { return m_stack; }

private:
    bool decline(const Request& r, const std::string& why) {
        m_declined = fmt::format("request {} ({} of key id {}) {}", m_requests, opName(r.op), r.keyId, why);
        return false;
    }
    bool get(const Request& r) {
        ++m_gets;
        RecencyStack::KeySlot& key = m_stack.slot(r.keyId);
        std::uint64_t shape = key.shape;
        if (r.valueBytes != 0) // the fill writes the GET's size (KeyspaceReplay::queueFill)
            shape = packShape(r.keyBytes, r.valueBytes, false, r.kind);
        else if (shape == kNoShape) { // nothing to fill a key never written with: no use, at any budget
            m_endsOnUse = false;
            return true;
        }
        return use(r, key, shape, true);
    }
    bool use(const Request& r, RecencyStack::KeySlot& key, std::uint64_t shape, bool isGet) {
        if (key.shape != kNoShape && key.shape != shape)
            return decline(r, "changes the key's size");
        key.shape = shape;
        const KeyShape unpacked = unpackShape(shape);
        const std::uint64_t distance = m_stack.use(r.keyId, key, unpacked.keyBytes + unpacked.valueBytes);
        // The first budget with room for the key and the keys used since: it is held there and above.
        const auto j = static_cast<std::size_t>(distance == kFirstUse
                ? m_room.size()
                : std::lower_bound(m_room.begin(), m_room.end(), distance) - m_room.begin());
        ++m_usesAt[j];
        if (isGet) {
            ++m_getUsesAt[j];
            if (j < m_room.size())
                m_hitShapesAt[j].add(shape);
        }
        m_lastUseAt = j;
        m_endsOnUse = true;
        return true;
    }

    const SimulationConfig& m_config;
    std::vector<std::uint64_t> m_budgets;
    std::vector<std::uint64_t> m_room; // each budget less the server's base
    RecencyStack m_stack;
    std::vector<std::uint64_t> m_usesAt; // uses by the first budget that held their key (last: none did)
    std::vector<std::uint64_t> m_getUsesAt; // the same, of GETs
    std::vector<ShapeHistogram> m_hitShapesAt; // GETs' shapes by the first budget at which they hit
    std::uint64_t m_requests = 0;
    std::uint64_t m_gets = 0;
    std::size_t m_lastUseAt = 0; // the last use's first budget
    bool m_endsOnUse = false; // whether the trace's last command is a use (no eviction after it)
    std::string m_declined;
};

std::vector<StackCurve::Held> StackCurve::held(const std::vector<std::uint32_t>& order) const {
    // The bytes of the first k keys of the stack.
    std::vector<std::uint64_t> bytes(order.size() + 1, 0);
    for (std::size_t k = 0; k < order.size(); ++k)
        bytes[k + 1] = bytes[k] + m_stack.slot(order[k]).bytes;
    // The keys used after the last command's key was last used before it.
    const std::size_t inFront = m_stack.usedSinceLastKeysPrevious();
    auto fitting = [&](std::uint64_t room) {
        return static_cast<std::size_t>(std::upper_bound(bytes.begin(), bytes.end(), room) - bytes.begin() - 1);
    };
    std::vector<Held> out;
    for (std::size_t j = 0; j < m_room.size(); ++j) {
        // The server evicts before each command: after the last, a budget holds the longest run of recent
        // keys within its room. When the last command brought its key in (the budget did not hold it), it
        // holds that key and what it held before: the longest run within the room of the keys in front of
        // the key's old place (nothing evicts after the last command).
        std::size_t k = fitting(m_room[j]);
        if (m_endsOnUse && m_lastUseAt > j && !order.empty())
            k = 1 + std::min(inFront, fitting(m_room[j] + bytes[1]) - 1);
        out.push_back({ k, bytes[k] });
    }
    return out;
}

BudgetUsage StackCurve::usageAt(std::size_t j, const Held& held) const {
    BudgetUsage usage;
    usage.maxmemoryBytes = m_budgets[j];
    const auto from = static_cast<std::ptrdiff_t>(j + 1);
    usage.getHits = std::accumulate(m_getUsesAt.begin(), m_getUsesAt.begin() + from, std::uint64_t { 0 });
    usage.getMisses = m_gets - usage.getHits;
    usage.fills = std::accumulate(m_getUsesAt.begin() + from, m_getUsesAt.end(), std::uint64_t { 0 });
    // Every use a budget did not hold brought its key in; without deletes, those not held at the end were
    // evicted.
    const std::uint64_t brought = std::accumulate(m_usesAt.begin() + from, m_usesAt.end(), std::uint64_t { 0 });
    usage.evictedKeys = brought - held.keys;
    usage.usedBytes = m_config.eviction->baseBytes + held.bytes;
    return usage;
}

// The smallest budget replayed as simulateWithBudget() would, beside the pass: the run's trace summary,
// and a check of the pass's figures there.
struct CheckReplay {
    std::unique_ptr<KeyspaceReplay> replay;
    std::unique_ptr<KeyspaceBudget> budget;
};

// Each budget's points at every threshold (by budget): its keyspace is the first keys of the stack,
// `held[j].keys` of them. The smallest budget's describes the index tables and shapes in `result`.
Expected<std::vector<std::vector<ThresholdPoint>>> budgetPoints(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const StackCurve& curve, const std::vector<std::uint32_t>& order,
    const std::vector<StackCurve::Held>& held, SimulationResult& result, std::stop_token stop) {
    // Walk the stack once, in the order of the budgets' key counts, taking each budget's shapes and index
    // table on the way.
    std::vector<std::size_t> byKeys(held.size());
    std::iota(byKeys.begin(), byKeys.end(), 0);
    std::stable_sort(
        byKeys.begin(), byKeys.end(), [&](std::size_t a, std::size_t b) { return held[a].keys < held[b].keys; });
    // The GETs that hit at a budget: those that hit at every smaller one, and its own.
    std::vector<std::vector<ShapeHistogram::Entry>> hitsAt;
    ShapeHistogram hits;
    for (std::size_t j = 0; j < held.size(); ++j) {
        for (const auto& e : curve.hitShapesAt(j).sorted())
            hits.add(e.shape, e.count);
        hitsAt.push_back(hits.sorted());
    }
    const IndexPolicy policy = config.layout->indexPolicy();
    IndexTableModel table(policy.kind, policy.params);
    ShapeHistogram keyspace;
    std::size_t walked = 0;
    std::vector<std::vector<ThresholdPoint>> pointsAt(held.size());
    for (const std::size_t j : byKeys) {
        for (; walked < held[j].keys; ++walked) {
            keyspace.add(curve.shapeOf(order[walked]));
            table.insert();
        }
        IndexTableModel settled = table;
        settled.settle();
        KeyspaceShapes shapes;
        shapes.keyspace = keyspace.sorted();
        shapes.gets = hitsAt[j];
        SimulationResult scratch;
        SimulationResult& described = j == 0 ? result : scratch;
        auto points
            = evaluateKeyspace(config, thresholds, shapes, { settled.footprint(*config.allocator) }, described, stop);
        if (!points)
            return points.error();
        for (ThresholdPoint& p : *points)
            p.budget = curve.usageAt(j, held[j]);
        pointsAt[j] = std::move(*points);
    }
    return pointsAt;
}

} // namespace

bool stackDistancesApply(const SimulationConfig& config) {
    return config.eviction && config.eviction->policy == EvictionPolicy::ExactLru && config.eviction->rawSizes
        && config.fillOnMiss == 1 && config.budgetSampleRate >= 1.0;
}

Expected<std::optional<SimulationResult>> simulateByStackDistance(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const std::vector<std::uint64_t>& budgets, TraceReader& trace,
    ProgressSink* progress, std::stop_token stop, std::string& declined) {
    const std::uint64_t keyIds = std::min(trace.keyIdLimit(), KeyspaceReplay::kMaxKeyIds) + 1;
    // Per key id: the pass's slot, and two positions of a key id and its bytes; the check's replay, with
    // exact-lru's 24 bytes of budget.
    if (auto ok = checkMemory(keyIds * (sizeof(RecencyStack::KeySlot) + 2 * 8 + sizeof(KeyState) + 24),
            fmt::format("stack distances of {} key ids and a replay of the smallest budget", keyIds));
        !ok) {
        Error e = ok.error();
        e.file = trace.name();
        return e;
    }
    StackCurve curve(config, budgets, keyIds);
    EvictionOptions smallest = *config.eviction;
    smallest.maxmemoryBytes = budgets.front();
    CheckReplay check { budgetReplayAt(config, thresholds.front(), keyIds), nullptr };
    check.budget = makeBudget(config, smallest, thresholds.front(), *check.replay);
    check.replay->setBudget(check.budget.get());
    check.replay->setFillOnMiss(1);

    const std::uint64_t total = trace.totalRequests();
    std::uint64_t done = 0;
    bool applies = true;
    auto passed = forEachBatch(trace, kBatchRequests, stop, [&](std::span<const Request> batch) -> Status {
        auto replayed = std::async(std::launch::async, [&] { return check.replay->apply(batch, done); });
        applies = curve.apply(batch);
        Status ok = replayed.get();
        if (!ok) {
            Error e = ok.error();
            e.file = trace.name();
            return e;
        }
        done += batch.size();
        if (!applies)
            return cancelledError(); // ends the pass; told apart from a stop below
        if (progress)
            progress->progress(total ? static_cast<double>(done) / static_cast<double>(total) : -1.0, done);
        return Ok {};
    });
    if (!applies) {
        declined = curve.declined();
        return std::optional<SimulationResult> {};
    }
    if (!passed)
        return passed.error();
    if (progress)
        progress->progress(1.0, done);
    check.replay->finish();

    const std::vector<std::uint32_t> order = curve.stack().order();
    const auto held = curve.held(order);
    SimulationResult result = resultHeader(config, trace);
    result.budgetPolicy = budgetPolicyText(config);
    result.budgetBaseBytes = config.eviction->baseBytes;
    result.budgetMethod = "stack distances";
    result.trace = check.replay->summary();
    // The pass and the replay of the smallest budget must agree to the key.
    const BudgetUsage first = curve.usageAt(0, held.front());
    const TraceSummary& t = result.trace;
    if (first.getHits != t.getHits || first.getMisses != t.getMisses || first.fills != t.fills
        || first.evictedKeys != t.evictedKeys || held.front().keys != t.liveKeys
        || first.usedBytes != check.budget->usedBytes())
        return dataError(
            fmt::format("stack distances disagree with the replay of the smallest budget: hits {} and {}, fills {} "
                        "and {}, evictions {} and {}, keys held {} and {}, bytes {} and {}",
                first.getHits, t.getHits, first.fills, t.fills, first.evictedKeys, t.evictedKeys, held.front().keys,
                t.liveKeys, first.usedBytes, check.budget->usedBytes()),
            trace.name());

    auto pointsAt = budgetPoints(config, thresholds, curve, order, held, result, stop);
    if (!pointsAt)
        return pointsAt.error();
    for (std::size_t at = 0; at < thresholds.size(); ++at) // by threshold, then budget
        for (std::size_t j = 0; j < budgets.size(); ++j)
            result.points.push_back((*pointsAt)[j][at]);
    return std::optional<SimulationResult> { std::move(result) };
}

} // namespace layoutlab
