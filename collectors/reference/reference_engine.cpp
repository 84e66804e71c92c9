// SPDX-License-Identifier: MIT
#include "layoutlab/collect/reference_engine.h"

#include "layoutlab/resources.h"

#include "reference_store.h"

#include <chrono>

namespace layoutlab {

ReferenceEngine::ReferenceEngine(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl)) { }
ReferenceEngine::~ReferenceEngine() = default;

bool ReferenceEngine::available(std::string* whyNot) {
    if (!JemallocModel::linkedAvailable()) {
        if (whyNot)
            *whyNot = "this build does not link jemalloc (libjemalloc-dev was not found at configure time)";
        return false;
    }
    return true;
}

std::string ReferenceEngine::allocatorVersion() {
    return "jemalloc " + JemallocArena::version();
}

Expected<std::unique_ptr<ReferenceEngine>> ReferenceEngine::create(const ReferenceEngineConfig& config) {
    std::string whyNot;
    if (!available(&whyNot))
        return usageError("the reference engine is not available: " + whyNot);
    if (!config.layout || !config.allocator)
        return usageError("the reference engine needs a layout and an allocator");
    const auto* jemalloc = dynamic_cast<const JemallocModel*>(config.allocator.get());
    if (!jemalloc || !jemalloc->isLinked())
        return usageError(fmt::format("the reference engine allocates from the linked jemalloc, so the model must "
                                      "be the linked 'jemalloc' (got '{}')",
                              config.allocator->spec()),
            field::kAllocator);
    if (auto ok = config.layout->checkAllocator(*config.allocator); !ok)
        return ok.error();
    auto impl = std::make_unique<Impl>();
    impl->config = config;
    impl->policy = config.layout->indexPolicy();
    if (impl->policy.kind == IndexKind::MemcachedAssoc)
        return usageError("the reference engine builds malloc-based stores (Valkey, Redis); memcached items live in "
                          "its own slab allocator: measure memcached with `layoutlab drive`",
            "layout");
    const auto param = config.layout->threshold();
    impl->threshold = config.threshold ? config.threshold : (param ? param->value : 0);
    auto arena = JemallocArena::create();
    if (!arena)
        return arena.error();
    impl->arena = std::move(*arena);
    // Whether the layout's keyspace entries hold their keys, from one key's layout (every key's agrees:
    // build() checks).
    if (impl->dictIndex()) {
        const KeyLayout sample = config.layout->describe(KeyShape { 16, 16 }, impl->threshold, *config.allocator);
        const std::size_t k = sample.keyAllocation();
        impl->keyInEntry = k < sample.allocationCount && sample.allocations[k].purpose == Purpose::Entry;
    }
    // Valkey's tables hold objects and Redis's dictEntries pointing at the key; an entry holding its key
    // carries the tag itself, and the expires entries always point at the key's holder.
    const auto hashOfKeys = !impl->dictIndex() || impl->keyInEntry ? &hashOfObject : &hashOfEntry;
    const auto hashOfExpires = impl->dictIndex() ? &hashOfEntry : &hashOfObject;
    impl->keys = std::make_unique<ReferenceIndex>(impl->policy.kind, *impl->arena, hashOfKeys);
    impl->expires = std::make_unique<ReferenceIndex>(impl->policy.kind, *impl->arena, hashOfExpires);
    ReferenceCollections::Setup collections;
    collections.layout = config.layout.get();
    collections.allocator = jemalloc;
    collections.threshold = impl->threshold;
    collections.expiresTable = impl->policy.expiresTable;
    collections.keysHoldTag = hashOfKeys == &hashOfObject;
    collections.expiresHoldTag = hashOfExpires == &hashOfObject;
    impl->collections = std::make_unique<ReferenceCollections>(*impl->arena, *impl->keys, *impl->expires, collections);
    auto before = impl->arena->stats();
    if (!before)
        return before.error();
    impl->before = *before;
    return std::unique_ptr<ReferenceEngine>(new ReferenceEngine(std::move(impl)));
}

Expected<ReferenceLoadReport> ReferenceEngine::load(TraceReader& trace, ProgressSink* progress, std::stop_token stop) {
    Impl& s = *m_impl;
    if (s.loaded)
        return usageError("the reference engine was loaded already");
    s.loaded = true;
    const auto started = std::chrono::steady_clock::now();
    const std::uint64_t keyIds = std::min(trace.keyIdLimit(), KeyspaceReplay::kMaxKeyIds);
    if (auto ok = checkMemory(keyIds * (sizeof(KeyState) + sizeof(s.records[0])),
            fmt::format("the reference engine's state for {} key ids", keyIds));
        !ok)
        return ok.error();
    KeyspaceReplay replay(s.policy, trace.keyIdLimit(), s.config.getSampleSize,
        staleExpireRule(*s.config.layout, *s.config.allocator, { s.threshold }),
        StringRewriteRule(*s.config.layout, *s.config.allocator, s.threshold));
    CollectionReplay collections(*s.config.layout, *s.config.allocator, s.config.collectionLimits);
    replay.setCollections(&collections);
    replay.setObserver(&s);
    s.replay = &replay;
    s.records.resize(static_cast<std::size_t>(std::min<std::uint64_t>(trace.keyIdLimit(), UINT32_MAX)));
    std::vector<Request> batch(kBatchRequests);
    std::uint64_t done = 0;
    const std::uint64_t total = trace.totalRequests();
    for (;;) {
        if (stop.stop_requested()) {
            s.replay = nullptr;
            return cancelledError();
        }
        auto n = trace.read(batch);
        if (!n) {
            s.replay = nullptr;
            return n.error();
        }
        if (*n == 0)
            break;
        auto applied = replay.apply(std::span<const Request>(batch.data(), *n), done);
        if (!applied) {
            s.replay = nullptr;
            return applied.error();
        }
        if (s.failure) {
            s.replay = nullptr;
            return *s.failure;
        }
        done += *n;
        if (progress)
            progress->progress(total ? static_cast<double>(done) / static_cast<double>(total) : -1.0, done);
    }
    replay.finish();
    s.collections->releaseArguments(); // the last command has ended
    s.syncIndexSizes(); // the engine's cron finished rehashing and resizing (IndexTableModel::settle)
    s.replay = nullptr;
    // The GETs of string keys (the cache model's sample: a key the trace has made a collection since is left
    // out, as its GET would be WRONGTYPE).
    s.sample = replay.getSample();
    std::erase_if(s.sample, [&s](std::uint32_t id) { return s.collections->holds(id); });
    if (s.sample.empty())
        for (std::uint32_t id = 0; id < s.records.size() && s.sample.size() < s.config.getSampleSize; ++id)
            if (s.records[id].count != 0)
                s.sample.push_back(id);
    auto after = s.arena->stats();
    if (!after)
        return after.error();
    ReferenceLoadReport report;
    report.trace = replay.summary();
    report.after = *after;
    report.allocatedBytes = after->allocatedBytes - s.before.allocatedBytes;
    report.activeBytes = after->activeBytes - s.before.activeBytes;
    report.keyBytes = s.keyBytes + s.collections->usableBytes();
    report.indexBytes = s.keys->usableBytes() + s.expires->usableBytes();
    report.indexChildBuckets = s.keys->childBuckets() + s.expires->childBuckets();
    report.liveKeys = s.liveKeys;
    report.loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

const std::vector<std::uint32_t>& ReferenceEngine::getSample() const {
    return m_impl->sample;
}

std::vector<std::uint32_t> ReferenceEngine::lastLiveKeys(std::uint64_t count) const {
    std::vector<std::uint32_t> ids;
    for (std::size_t id = m_impl->records.size(); id > 0 && ids.size() < count;)
        if (m_impl->records[--id].count != 0)
            ids.push_back(static_cast<std::uint32_t>(id));
    std::reverse(ids.begin(), ids.end());
    return ids;
}

GetReplayReport ReferenceEngine::replayGets(std::span<const std::uint32_t> keyIds) {
    GetReplayReport report;
    const auto started = std::chrono::steady_clock::now();
    for (const std::uint32_t id : keyIds)
        report.hits += m_impl->get(id, report.checksum) ? 1 : 0;
    const auto elapsed = std::chrono::steady_clock::now() - started;
    report.gets = keyIds.size();
    if (report.gets)
        report.nanosecondsPerGet
            = std::chrono::duration<double, std::nano>(elapsed).count() / static_cast<double>(report.gets);
    return report;
}

std::uint64_t ReferenceEngine::deleteEveryOtherKey() {
    std::uint64_t live = 0, deleted = 0;
    for (std::uint32_t id = 0; id < m_impl->records.size(); ++id)
        if (m_impl->records[id].count != 0 && (live++ % 2) == 1) { // string keys: collections stay
            m_impl->release(id);
            ++deleted;
        }
    return deleted;
}

Expected<ArenaStats> ReferenceEngine::arenaStats() const {
    return m_impl->arena->stats();
}

std::string ReferenceEngine::layoutSpec() const {
    const auto param = m_impl->config.layout->threshold();
    return param ? fmt::format("{} at {}={}", m_impl->config.layout->spec(), param->name, m_impl->threshold)
                 : m_impl->config.layout->spec();
}

} // namespace layoutlab
