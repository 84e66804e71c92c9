// SPDX-License-Identifier: MIT
#pragma once

// The replay half of simulate(): applies requests to the live keyspace and the index tables.
// Per key id it keeps 16 bytes; expiring keys also have a 16-byte entry in a min-heap. The reference
// engine (collectors/) drives the same replay with an observer, so both apply a trace's semantics
// (ADD/REPLACE, APPEND, INCR, TTLs, expiry) identically.

#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/index_table_model.h"
#include "layoutlab/sim/results.h"
#include "layoutlab/sim/shape_histogram.h"
#include "layoutlab/trace/trace_reader.h"

#include <array>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

namespace layoutlab {

struct KeyState {
    std::uint32_t valueBytes = 0;
    std::uint32_t keyAndFlags = 0; // key bytes (low 24 bits) | flags (high 8 bits)
    // With a TTL: when it expires. With a stale expire field: the threshold from which the field is gone
    // (LayoutModel::staleExpireKeptBelow; UINT32_MAX: kept at every threshold).
    std::uint32_t expireAtSeconds = 0;
    // GET hits since the key's shape last changed; flushed into the GET-shape histogram when the shape
    // changes, so a GET costs one increment instead of a hash-map update.
    std::uint32_t pendingGets = 0;

    static constexpr std::uint32_t kKeyMask = (1u << 24) - 1;
    static constexpr std::uint32_t kLive = 1u << 24;
    static constexpr std::uint32_t kHasTtl = 1u << 25;
    static constexpr std::uint32_t kWritten = 1u << 26; // ever written (distinct keys)
    static constexpr unsigned kKindShift = 27; // two bits
    static constexpr std::uint32_t kStaleExpire = 1u << 29; // KeyShape::staleExpire
    // Not live, and a write of it was refused (out of memory): its value's size is known all the same, as
    // a look-aside client knows it, which fills the key's next miss with it (KeyspaceReplay::queueFill).
    static constexpr std::uint32_t kSizeKnown = 1u << 30;
    static constexpr std::uint32_t kKindMask = 3u << kKindShift;
    // The key holds a collection (its elements are in the replay's CollectionReplay), not a string.
    static constexpr std::uint32_t kCollection = 1u << 31;

    bool live() const { return keyAndFlags & kLive; }
    bool hasTtl() const { return keyAndFlags & kHasTtl; }
    bool written() const { return keyAndFlags & kWritten; }
    bool sizeKnown() const { return keyAndFlags & (kWritten | kSizeKnown); }
    bool staleExpire() const { return keyAndFlags & kStaleExpire; }
    bool collection() const { return keyAndFlags & kCollection; }
    std::uint32_t keyBytes() const { return keyAndFlags & kKeyMask; }
    ValueKind kind() const { return static_cast<ValueKind>((keyAndFlags >> kKindShift) & 3u); }
    void set(std::uint32_t flag) { keyAndFlags |= flag; }
    void clear(std::uint32_t flag) { keyAndFlags &= ~flag; }
    void setKeyBytes(std::uint32_t bytes) { keyAndFlags = (keyAndFlags & ~kKeyMask) | bytes; }
    void setKind(ValueKind kind) {
        keyAndFlags = (keyAndFlags & ~(3u << kKindShift)) | (static_cast<std::uint32_t>(kind) << kKindShift);
    }
    // The key's shape where it does not depend on the threshold (thresholdFree()): a stale expire field
    // counts only when it is kept at every threshold.
    std::uint64_t shape() const {
        return packShape(keyBytes(), valueBytes, hasTtl(), kind(), staleExpire() && expireAtSeconds == UINT32_MAX);
    }
    // The key's shape at one threshold.
    std::uint64_t shapeAt(std::uint32_t threshold) const {
        return packShape(keyBytes(), valueBytes, hasTtl(), kind(), staleExpire() && threshold < expireAtSeconds);
    }
    // Whether the shape is the same at every threshold.
    bool thresholdFree() const { return !staleExpire() || expireAtSeconds == UINT32_MAX; }
    // Whether the packed shape says all there is: threshold-free, and no sds buffer of its own
    // (ValueKind::RawString keys keep theirs in the replay's side table).
    bool plainShape() const { return thresholdFree() && (keyAndFlags & kKindMask) != kRawStringKind; }
    // The bound a ShapeBound of this key carries: KeyState::expireAtSeconds for a stale expire field
    // (UINT32_MAX: kept at every threshold), 0 (gone at every one) without.
    std::uint32_t staleBound() const { return staleExpire() ? expireAtSeconds : 0; }
    static constexpr std::uint32_t kRawStringKind = static_cast<std::uint32_t>(ValueKind::RawString) << kKindShift;
};
static_assert(sizeof(KeyState) == 16, "per-key state stays at 16 bytes");

// Told of every change to the live keyspace, after it happened.
class KeyspaceObserver {
public:
    virtual ~KeyspaceObserver() = default;
    // The key was created, or its shape (lengths, TTL, kind) or content changed: `key` is its new state, `op`
    // what changed it (a TTL set or cleared, whatever the command: Op::Expire or Op::Persist).
    virtual void stored(std::uint32_t keyId, const KeyState& key, Op op) = 0;
    // The key was deleted, or evicted.
    virtual void removed(std::uint32_t keyId) = 0;
    // The key's TTL ran out (told in the order of the keys' times, `dueMs` the first millisecond it is expired
    // at, before any request at or after it): the replay has dropped it. By default, as removed().
    virtual void expired(std::uint32_t keyId, std::uint64_t /*dueMs*/) { removed(keyId); }
    // The trace's clock reached `nowMs`, before the request at that time (after the keys expired by then):
    // told after each expiry and whenever the clock reaches the time this last returned (UINT64_MAX: not
    // until a key expires).
    virtual std::uint64_t clockAtMs(std::uint64_t /*nowMs*/) { return UINT64_MAX; }
    // The trace's clock reached `nowSeconds` since its start, before the request of that second is
    // applied (told once per second the trace's requests pass through).
    virtual void clockAt(std::uint64_t /*nowSeconds*/) { }
    // Whether it follows collection keys: told elementStored() after each element request that leaves one
    // with elements, stored() when its TTL changes or it is renamed. Observers that do not are refused a
    // trace that holds them.
    virtual bool modelsCollections() const { return false; }
    // `startsCommand`: the request is its command's first (KeyspaceReplay::startsElementCommand).
    virtual void elementStored(std::uint32_t keyId, const KeyState& key, const Request& /*r*/, bool /*startsCommand*/) {
        stored(keyId, key, Op::Element);
    }
    // A key's value moves from `from` to `to` (RENAME), whatever its type: told before removed(from) and
    // stored(to), which then need not free and make a collection's again, and may keep what the object
    // carries (its LRU/LFU field).
    virtual void renamed(std::uint32_t /*from*/, std::uint32_t /*to*/) { }
    // A write a few requests ahead: fetch what it will read (a hint; the default: none).
    virtual void prefetch(const Request& /*ahead*/) { }
    // The key, not live, is kept in `database`'s tables from now on (Op::Resize of kKeyDatabase).
    virtual void placed(std::uint32_t /*keyId*/, std::uint32_t /*database*/) { }
};

class KeyspaceReplay;
class CollectionReplay;

// One database's key table and expires table (server.h serverDb: keys, expires).
struct DatabaseTables {
    IndexTableModel keys;
    IndexTableModel expires;
};

// A memory budget the replay keeps to (sim/eviction.h): told of every change as an observer is, of every
// GET hit, and asked before every request to make room, as a server with maxmemory asks before every
// command (server.c processCommand -> evict.c performEvictions).
class KeyspaceBudget : public KeyspaceObserver, public IndexGrowthGate {
public:
    // A GET found `keyId` (db.c lookupKey: the key's LRU/LFU field is touched).
    virtual void read(std::uint32_t keyId) = 0;
    // Before each command (at `timeMs` on the trace's clock): evicts keys through KeyspaceReplay::evict until
    // the keyspace is within the budget. False when it is not and cannot be: the replay then refuses the
    // write commands (EVICT_FAIL: OOM for commands flagged denyoom).
    virtual bool makeRoom(KeyspaceReplay& replay, std::uint64_t timeMs) = 0;
    // The memory the budget counts now, as the server reports it (Valkey, Redis: used_memory; memcached:
    // total_malloced).
    virtual std::uint64_t usedBytes() = 0;
    // The slabs per class the budget's own allocator model holds (memcached's pages); none for the others.
    virtual std::vector<HeldSlabs> heldSlabs() const { return {}; }
};

// For layouts whose objects keep a removed TTL's expire field (LayoutModel::tracksStaleExpire): up to
// which threshold a key's stale field survives an overwrite (LayoutModel::staleExpireKeptBelow), as the
// run's thresholds see it. A bound between two of them acts as the higher one, so the bound is kept as
// the first threshold of the run at which the field is gone: 0 when gone at all of them, UINT32_MAX when
// kept at all. A single-threshold run then has no key whose shape depends on the threshold.
class StaleExpireRule {
public:
    StaleExpireRule(const LayoutModel& layout, const AllocatorModel& allocator, std::vector<std::uint32_t> thresholds);
    std::uint32_t keptBelow(const KeyShape& before, const KeyShape& after, Op op);

private:
    const LayoutModel* m_layout;
    const AllocatorModel* m_allocator;
    std::vector<std::uint32_t> m_thresholds; // sorted
    // firstEmbeddingThreshold + 1 by packed shape (a binary search over describe() each), for runs of
    // several thresholds; a single-threshold run describes the old object at its threshold instead.
    ShapeHistogram m_firstEmbedding;
};

// How string commands change a key's value (LayoutModel::stringRules), and for sds engines the RAW
// buffer APPEND and SETRANGE leave. Where the buffer a value is first unshared into depends on how the
// value is encoded (Redis 7.0 trims a client's RAW value, not an EMBSTR's copy), it is decided at one
// threshold: the run's only one, or the layout's own in a sweep.
class StringRewriteRule {
public:
    StringRewriteRule(const LayoutModel& layout, const AllocatorModel& allocator, std::uint32_t decisionThreshold);
    StringRules::Mode mode() const { return m_rules.mode; }
    // The RAW sds a value of `shape` (not yet RawString) is in when a command first changes it in place:
    // the one dbUnshareStringValue makes (sdsnewlen of its length), or, for a client's RAW value on an
    // engine that trims those, its trimmed buffer.
    sds::Buffer unshared(const KeyShape& shape) const;
    // sdsMakeRoomFor: the buffer after a string of `len` bytes grows by `addlen`.
    sds::Buffer grown(const sds::Buffer& buffer, std::uint64_t len, std::uint64_t addlen) const {
        return sds::makeRoomFor(m_rules.flavor, buffer, len, addlen, *m_allocator);
    }
    // sdsnewlen(NULL, len): SETRANGE on a missing key.
    sds::Buffer created(std::uint64_t len) const { return sds::newLen(m_rules.flavor, len, *m_allocator); }
    // hyperloglog.c hllSparseSet's room for a change of up to three bytes (StringRules::HllRoom), on a sparse
    // HyperLogLog of `len` bytes.
    sds::Buffer hyperLogLogRoom(const sds::Buffer& buffer, std::uint64_t len) const;

private:
    const LayoutModel* m_layout;
    const AllocatorModel* m_allocator;
    StringRules m_rules;
    std::uint32_t m_decisionThreshold;
};

class KeyspaceReplay {
public:
    // Key ids are 32-bit: at most this many distinct keys.
    static constexpr std::uint64_t kMaxKeyIds = std::uint64_t { 1 } << 32;
    // The highest database a key may be placed in (Op::Resize of kKeyDatabase).
    static constexpr std::uint32_t kMaxDatabase = UINT16_MAX;
    // getSampleSize: how many of the most recent GET hits to remember (for the cache model; 0: none).
    // staleExpire: given, keys whose TTL is removed keep a stale expire field while the rule says so;
    // without, no key ever has one.
    // strings: how APPEND, SETRANGE and INCR change values; without, the value is made again at its new
    // length (StringRules::Mode::Recreate).
    KeyspaceReplay(IndexPolicy policy, std::uint64_t keyIdHint, std::uint32_t getSampleSize = 0,
        std::optional<StaleExpireRule> staleExpire = std::nullopt,
        std::optional<StringRewriteRule> strings = std::nullopt);

    // Applies one batch; fails on an impossible request (key id or size out of range).
    Status apply(std::span<const Request> batch, std::uint64_t firstRequestNumber);
    void finish();
    // The clock reached `nowMs` with no request at that time: the keys expired by then go (a drive's wait
    // after its load, before the server is measured).
    void advanceClock(std::uint64_t nowMs);

    const TraceSummary& summary() const { return m_summary; }
    // Call after finish(): every pending GET count has been flushed.
    const ShapeHistogram& getShapes() const { return m_getShapes; }
    const ShapeHistogram& keyspaceShapes() const { return m_keyspaceShapes; } // after finish()
    // Keys (and GET hits on keys) whose shape depends on the threshold, or that have an sds buffer of their
    // own (ValueKind::RawString); not in the histograms above. They are counted by (shape with any stale
    // field, its sds buffer, the threshold from which the field is gone).
    const ThresholdShapeHistogram& thresholdGetShapes() const { return m_thresholdGetShapes; }
    const ThresholdShapeHistogram& thresholdKeyspaceShapes() const { return m_thresholdKeyspaceShapes; }
    // Database 0's tables: every key's, unless the trace places keys in others (kKeyDatabase).
    const IndexTableModel& keyspaceTable() const { return m_databases[0].keys; }
    const IndexTableModel* expiresTable() const { return m_hasExpiresTable ? &m_databases[0].expires : nullptr; }
    // Every database's tables, database 0's first: one each the trace placed a key in, and those below it
    // (the engines keep a key table and an expires table per database: server.h serverDb).
    const std::vector<DatabaseTables>& databaseTables() const { return m_databases; }
    bool hasExpiresTables() const { return m_hasExpiresTable; }
    // The database the trace placed a key in (0 unless placed elsewhere).
    std::uint32_t databaseOf(std::uint32_t keyId) const {
        return keyId < m_keyDatabases.size() ? m_keyDatabases[keyId] : 0;
    }
    const std::vector<KeyState>& keys() const { return m_keys; }
    // The sds buffer of a ValueKind::RawString key (0: none).
    std::uint32_t sdsBytesOf(std::uint32_t keyId) const;
    // The remembered GET hits' key ids, oldest first.
    std::vector<std::uint32_t> getSample() const;
    // Receives every change from now on (nullptr: none). The observer must outlive the replay.
    void setObserver(KeyspaceObserver* observer) { m_observer = observer; }
    // Keeps the keyspace within `budget` from now on; the budget is also the observer (it replaces one),
    // and is asked before the index tables grow.
    void setBudget(KeyspaceBudget* budget) {
        m_budget = budget;
        m_observer = budget;
        for (auto& db : m_databases) {
            db.keys.setGrowthGate(budget);
            db.expires.setGrowthGate(budget);
        }
    }
    // Replays element requests (Op::Element) into `collections` from now on: without, a trace that holds one
    // is refused. Not with an observer or a budget, which model strings only (their request is refused).
    void setCollections(CollectionReplay* collections) { m_collections = collections; }
    const CollectionReplay* collections() const { return m_collections; }
    // Look-aside filling: a GET that misses is followed by a SET of the key, as a cache's client does
    // (the GET's value size when the trace gives one, else the key's last). With `batch` above 1 the
    // misses of each `batch` requests are filled after them, as a client that pipelines its GETs does.
    // 0: no filling.
    void setFillOnMiss(std::uint32_t batch) { m_fillBatch = batch; }
    // Whether the cron grows tables on the trace's clock (cronCheck; on by default, where the engine's cron
    // grows any); off, only settle() does, at the end.
    void setCronOnClock(bool on) {
        if (!on)
            m_nextCronCheckMs = UINT64_MAX;
    }
    // Removes a live key for the budget: an eviction, counted in evictedKeys unless `counted` is false (an item
    // memcached's page mover had no chunk for).
    void evict(std::uint32_t keyId, bool counted = true);
    // Removes a key whose last write the budget could not hold (memcached: SERVER_ERROR out of memory, and
    // the old item unlinked), counted as a refused write.
    void dropRefusedWrite(std::uint32_t keyId);

private:
    // The simulator's replay is compiled without observer calls (Observed = false): the reference
    // engine's observer costs the hot loop nothing when absent.
    template <bool Observed> Status applyBatch(std::span<const Request> batch, std::uint64_t firstRequestNumber);
    // One request, after the clock and the budget have been seen to.
    template <bool Observed> void applyOne(KeyState& key, const Request& r);
    // Whether element request `r` starts a command: a write's Command request, or the first request of
    // another key than the open command's (a command's element requests name its key; HDEL, SREM, LPOP...
    // have no Command request, and two such commands on one key in a row are taken as one). Any other
    // request closes the open command.
    bool startsElementCommand(const Request& r) {
        const bool starts
            = r.elementOp().action == ElementAction::Command || !m_elementCommandKey || *m_elementCommandKey != r.keyId;
        m_elementCommandKey = r.keyId;
        return starts;
    }
    // The element requests a server refuses when out of memory: its write commands' (HSET, SADD, ZADD, RPUSH,
    // LSET: flagged denyoom), not HDEL, SREM, LPOP or the lookups.
    static bool deniedOnOom(const ElementOp& op) {
        return op.action == ElementAction::Add || op.action == ElementAction::Update
            || op.action == ElementAction::Command;
    }
    // The requests a server refuses when out of memory (the commands it flags denyoom).
    static bool deniedOnOom(Op op) {
        return op != Op::Get && op != Op::Delete && op != Op::Expire && op != Op::Persist && op != Op::Other
            && op != Op::Resize && op != Op::Rename;
    }
    void queueFill(const KeyState& key, const Request& r);
    // An element request (collection_replay.h): creates the key with its first element, deletes it with its
    // last; a string key's element is refused as the server refuses it (WRONGTYPE).
    // `startsCommand`: the request is its command's first (startsElementCommand).
    template <bool Observed> Status applyElement(KeyState& key, const Request& r, bool startsCommand);
    // A string command on a collection key: WRONGTYPE, nothing changes.
    bool wrongType(const KeyState& key) {
        if (!key.collection()) [[likely]]
            return false;
        tableOf(key).lookup();
        ++m_summary.wrongTypeRequests;
        return true;
    }
    template <bool Observed> void applyFills();
    template <bool Observed> void write(KeyState& key, const Request& r, std::uint32_t valueBytes, ValueKind kind);
    template <bool Observed>
    void setTtl(KeyState& key, std::uint32_t keyId, std::uint64_t nowMs, std::uint32_t ttlSeconds);
    template <bool Observed> void clearTtl(KeyState& key);
    // A TTL carried over to a renamed key: it runs out in second `expireAtSeconds`, at its end (the
    // millisecond it was set to is the heap's, not the key's).
    template <bool Observed> void keepTtl(KeyState& key, std::uint32_t keyId, std::uint32_t expireAtSeconds);
    // Op::Rename: the source half remembered, the destination half applied.
    template <bool Observed> void rename(KeyState& key, const Request& r);
    // Its COPY destination half: `source` (a collection) copied onto `key`.
    template <bool Observed> void copy(KeyState& key, const KeyState& source, const Request& r);
    // Before `r` rewrites a live key without a TTL: drops a stale expire field the rewrite replaces.
    void rewriteStaleExpire(KeyState& key, const Request& r, std::uint32_t valueBytes, ValueKind kind);
    // `expiredDueMs`: the key's TTL ran out then (the observer is told expired()); 0: deleted or evicted.
    template <bool Observed> void remove(KeyState& key, std::uint64_t expiredDueMs = 0);
    template <bool Observed> void expireDue(std::uint64_t nowMs);
    // Tells the observer the clock, when it asked to be (KeyspaceObserver::clockAtMs).
    template <bool Observed> void tellClock(std::uint64_t nowMs) {
        if constexpr (Observed)
            if (nowMs >= m_observerWakeMs) [[unlikely]]
                m_observerWakeMs = m_observer->clockAtMs(nowMs);
    }
    void flushGets(KeyState& key);
    ShapeBound extendedShape(const KeyState& key) const;
    // APPEND/PREPEND, SETRANGE and INCR/DECR by the string rules.
    template <bool Observed> void append(KeyState& key, const Request& r);
    template <bool Observed> void setRange(KeyState& key, const Request& r);
    // A HyperLogLog's change in place (Op::SetRange of kHyperLogLogKind).
    template <bool Observed> void hyperLogLog(KeyState& key, const Request& r);
    template <bool Observed> void increment(KeyState& key, const Request& r);
    // Makes a live key's value a string of `len` bytes (a layout without sds rules: made again at that length).
    template <bool Observed> void storeString(KeyState& key, const Request& r, std::uint64_t len);
    // A missing key made a string of `len` bytes by a command that writes it in place (SETRANGE, PFADD): a RAW
    // sds of exactly that length (sdsnewlen), or a plain string where the layout has no sds rules.
    template <bool Observed> void createInPlace(KeyState& key, const Request& r, std::uint32_t len);
    // The RAW sds a live string key's value is in (Mode::Sds), or the one dbUnshareStringValue makes of it.
    sds::Buffer rawBuffer(const KeyState& key) {
        return key.kind() == ValueKind::RawString ? m_buffers[idOf(key)]
                                                  : m_strings->unshared(unpackShape(key.shapeAt(0)));
    }
    // Makes a live key's value a RAW sds of `len` bytes in `buffer`.
    template <bool Observed> void storeRaw(KeyState& key, const Request& r, std::uint64_t len, sds::Buffer buffer);
    std::uint32_t idOf(const KeyState& key) const { return static_cast<std::uint32_t>(&key - m_keys.data()); }
    // The tables of the key's database.
    IndexTableModel& tableOf(const KeyState& key) {
        if (m_keyDatabases.empty()) [[likely]]
            return m_databases[0].keys;
        return m_databases[databaseOf(idOf(key))].keys;
    }
    IndexTableModel& expiresOf(const KeyState& key) {
        if (m_keyDatabases.empty()) [[likely]]
            return m_databases[0].expires;
        return m_databases[databaseOf(idOf(key))].expires;
    }
    // Op::Resize of kKeyDatabase: the key (not live) kept in `database`'s tables from now on.
    Status placeKey(const KeyState& key, std::uint32_t database);
    // Valkey's cron (server.c databasesCron, every 100 ms at hz 10) grows a keyspace table its inserts left at
    // its limit (IndexTableModel::atCronLimit). When a tick lands is the server's, so the replay grows a table
    // only where the trace's clock shows it at the limit, with the same entries, at two checks a period apart
    // or more, or through a period without requests (since `lastRequestMs`): a tick met it then for certain. A
    // shorter stay is left to settle() at the end (a table that has left the limit by then is taken as no tick
    // having met it).
    void cronCheck(std::uint64_t nowMs, std::uint64_t lastRequestMs);
    void compactExpiryHeap();
    // The second a heap entry's key expires in (KeyState::expireAtSeconds when the entry is the key's own).
    std::uint64_t secondOfDue(std::uint64_t dueMs) const { return (m_millisecondTtls ? dueMs - 1 : dueMs) / 1000; }
    template <bool Observed> void notifyStored(const KeyState& key, Op op) {
        if constexpr (Observed)
            m_observer->stored(static_cast<std::uint32_t>(&key - m_keys.data()), key, op);
    }

    // (the first millisecond the key is expired at, key id)
    using Expiry = std::pair<std::uint64_t, std::uint32_t>;
    std::vector<KeyState> m_keys;
    std::priority_queue<Expiry, std::vector<Expiry>, std::greater<>> m_expiryHeap;
    std::uint64_t m_nextExpiryMs = UINT64_MAX; // the heap top: one compare per request
    std::uint64_t m_nextCronCheckMs = 0; // cronCheck's next time on the trace's clock (UINT64_MAX: never)
    std::uint64_t m_lastRequestMs = 0; // the time of the last request of the batches applied
    // Per database, its key table's and expires table's entries at the last check where it was at its limit
    // (UINT64_MAX: it was not).
    std::vector<std::array<std::uint64_t, 2>> m_cronSeen;
    // Redis and Valkey keep a TTL in milliseconds and expire a key once the clock is past it (db.c
    // keyIsExpired: `now > when`); memcached in its seconds, from the second it names on (items.c
    // do_item_get: `exptime <= current_time`).
    bool m_millisecondTtls = true;
    std::uint64_t m_observerWakeMs = UINT64_MAX;
    std::optional<std::uint32_t> m_renameSource; // a RENAME's source half, until its destination's
    IndexPolicy m_policy;
    std::vector<DatabaseTables> m_databases; // [0]: database 0's, always there
    // Each key id's database, from the first placed elsewhere on (before: none, every key in database 0).
    std::vector<std::uint16_t> m_keyDatabases;
    bool m_hasExpiresTable;
    ShapeHistogram m_getShapes;
    ShapeHistogram m_keyspaceShapes;
    ThresholdShapeHistogram m_thresholdGetShapes;
    ThresholdShapeHistogram m_thresholdKeyspaceShapes;
    std::vector<std::uint32_t> m_getRing;
    std::uint32_t m_getRingSize = 0;
    std::uint64_t m_getRingNext = 0;
    TraceSummary m_summary;
    KeyspaceObserver* m_observer = nullptr;
    KeyspaceBudget* m_budget = nullptr;
    bool m_writesRefused = false; // the budget's answer before the current request (an element command's first)
    std::optional<std::uint32_t> m_elementCommandKey; // the key of the element command open, if any
    std::uint32_t m_fillBatch = 0;
    std::vector<Request> m_pendingFills;
    std::uint64_t m_observedSecond = 0; // the last second the observer was told of
    std::optional<StaleExpireRule> m_staleExpire;
    std::optional<StringRewriteRule> m_strings;
    std::unordered_map<std::uint32_t, sds::Buffer> m_buffers; // RawString keys' sds buffers by key id
    CollectionReplay* m_collections = nullptr;
};

} // namespace layoutlab
