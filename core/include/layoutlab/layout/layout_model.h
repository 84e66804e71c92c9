// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/expected.h"
#include "layoutlab/layout/key_layout.h"
#include "layoutlab/layout/sds_buffer.h"
#include "layoutlab/trace/request.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace layoutlab {

// The embed limit a sweep varies (Valkey's threshold, Redis's EMBSTR limit).
struct ThresholdParam {
    std::string name; // the layout parameter it sets, e.g. "threshold"
    std::uint32_t value = 0; // the layout's configured value
    std::uint32_t min = 0;
    std::uint32_t max = 0;
    std::string meaning; // one line for --help and `layouts`
};

// How the store indexes its keys; the simulator keeps these tables' sizes as the engine would.
enum class IndexKind : std::uint8_t {
    ValkeyHashtable, // hashtable.c: 64-byte buckets of 7 entries, child buckets, 5/32 growth
    RedisDict, // dict.c: 8-byte bucket slots, chained dictEntry, power-of-two growth at fill 1
    MemcachedAssoc, // assoc.c: 8-byte buckets, grows at 1.5 items per bucket, never shrinks
    // Valkey 8.0 dict.c: as RedisDict, but a delete shrinks the table at once when its fill falls to 1/8
    // (dictShrinkIfNeeded, HASHTABLE_MIN_FILL 8), where Redis 7.0 waits for the cron below 1/10.
    ValkeyDict,
};

// The name layout files and `layouts` give each kind: valkey-hashtable, redis-dict, memcached-assoc,
// valkey-dict.
std::string_view indexKindName(IndexKind kind);
inline constexpr IndexKind kIndexKinds[]
    = { IndexKind::ValkeyHashtable, IndexKind::RedisDict, IndexKind::MemcachedAssoc, IndexKind::ValkeyDict };
// dict.c's tables: an array of slots, each the head of a chain of entries.
constexpr bool isChainedDict(IndexKind kind) {
    return kind == IndexKind::RedisDict || kind == IndexKind::ValkeyDict;
}

// The geometry of the index: the engine's own by default, or a layout file's variant (bucket size,
// entries per bucket, sizing and fill limits). Which fields a kind reads is documented per field.
struct IndexParams {
    std::uint32_t bucketBytes = 0; // one bucket (ValkeyHashtable) or one slot (RedisDict, MemcachedAssoc)
    std::uint32_t entriesPerBucket = 1; // ValkeyHashtable: entry slots per bucket (one line of a chain)
    // ValkeyHashtable: a table for N entries has ceil(N * factor / divisor) buckets, rounded up to a
    // power of two (hashtable.c nextBucketExp: BUCKET_FACTOR / BUCKET_DIVISOR).
    std::uint32_t sizingFactor = 1;
    std::uint32_t sizingDivisor = 1;
    // Grow when entries exceed this share of the slots (buckets * entriesPerBucket), shrink when they fall
    // to minFillPermille or below (0: never shrinks). The shrink limit is in tenths of a percent because
    // Valkey 8.0's dict shrinks at exactly 1/8 (12.5%).
    std::uint32_t maxFillPercent = 100;
    std::uint32_t minFillPermille = 0;
    std::uint64_t initialBuckets = 0; // RedisDict: the first table's size; MemcachedAssoc: allocated at start
    std::uint32_t slotPointerBytes = 8; // the pointer each entry costs in its bucket or slot
    // ValkeyHashtable: a shrinking table's rehash step skips empty buckets (Valkey 9.1 hashtable.c
    // rehashStepShrink), as dict.c's steps do.
    bool shrinkStepSkipsEmpty = false;

    bool operator==(const IndexParams&) const = default;
};
// The engines' own index geometry (hashtable.c, dict.c, assoc.c).
IndexParams engineIndexParams(IndexKind kind);

struct IndexPolicy {
    IndexKind kind = IndexKind::ValkeyHashtable;
    bool expiresTable = false; // TTL keys also live in a second table of the same kind
    IndexParams params = engineIndexParams(IndexKind::ValkeyHashtable);
};
// The engine's own index of this kind.
inline IndexPolicy engineIndexPolicy(IndexKind kind, bool expiresTable) {
    return { kind, expiresTable, engineIndexParams(kind) };
}

// How the engine changes a stored string when a command rewrites part of it (APPEND, SETRANGE, INCR):
// what the replay does to the key's value, per LayoutModel::stringRules().
struct StringRules {
    enum class Mode : std::uint8_t {
        // Redis and Valkey (t_string.c): APPEND and SETRANGE turn the value into a RAW sds
        // (dbUnshareStringValue) and grow it greedily (sdsMakeRoomFor); APPEND and INCR create a missing
        // key; an INCR result is an integer object like a SET of it.
        Sds,
        // memcached 1.6 (memcached.c do_store_item, do_add_delta): append and prepend make a new item of
        // the joined length and never create a key; incr/decr rewrite in place when the result fits the
        // old value (padded with spaces), else make a new item, and never create a key.
        Memcached,
        // Layouts that declare no growth rule: the value is made again at its new length.
        Recreate,
    };
    Mode mode = Mode::Recreate;
    sds::Flavor flavor = sds::Flavor::Valkey;
    // Redis 7.0 tryObjectEncoding -> trimStringObjectIfNeeded: a RAW value set by a client records no
    // free space when it has more than 10%, so a first APPEND to it may allocate where an unshared
    // EMBSTR's copy would not.
    bool trimsRawValues = false;
    // How hyperloglog.c hllSparseSet makes room for a sparse HyperLogLog's change of up to three bytes.
    enum class HllRoom : std::uint8_t {
        // Redis 7.0.15: sdsMakeRoomFor(o->ptr, 3), sds.c's own greedy growth.
        MakeRoomForThree,
        // Redis 7.2 and Valkey 8.0 on: where sdsalloc is below hll-sparse-max-bytes and sdsavail below 3,
        // sdsResize to the length + 3, doubled below 300 bytes and 300 more above, at most hll-sparse-max-bytes.
        Greedy,
    };
    HllRoom hllRoom = HllRoom::Greedy;
};

// The allocations a rewrite keeps (LayoutModel::keptOnRewrite): from[i] is the index in the old layout of
// the region the new layout's allocation i keeps, kMade when it is made anew.
struct KeptAllocations {
    static constexpr std::uint8_t kMade = 0xff;
    std::array<std::uint8_t, KeyLayout::kMaxAllocations> from;
    KeptAllocations() { from.fill(kMade); }
    bool any() const {
        for (auto f : from)
            if (f != kMade)
                return true;
        return false;
    }
};

class LayoutModel {
public:
    virtual ~LayoutModel() = default;

    // Canonical specification with every parameter, e.g. "valkey:threshold=128,header=8,embstr-limit=auto".
    virtual std::string spec() const = 0;
    virtual std::string description() const = 0;
    virtual std::optional<ThresholdParam> threshold() const = 0;
    // The allocator this layout's engine uses by default, as an --alloc spec.
    virtual std::string defaultAllocator() const = 0;
    // Fails when the allocator cannot serve this layout (e.g. memcached items need slab classes).
    virtual Status checkAllocator(const AllocatorModel& allocator) const = 0;
    virtual IndexPolicy indexPolicy() const = 0;

    // The allocations and GET path of one key under the given embed threshold (ignored by layouts
    // without one). Contract the sweep relies on: as the threshold grows, a shape's layout changes at
    // most once (from not embedded to embedded), so equal layouts at the lowest and highest threshold
    // of a sweep mean equal layouts at every threshold in between.
    virtual KeyLayout describe(
        const KeyShape& shape, std::uint32_t threshold, const AllocatorModel& allocator) const = 0;

    // Whether a key's object keeps its expire field after the TTL is removed (KeyShape::staleExpire):
    // the replay then tracks it per key. Valkey 8.1 and later do; engines that keep expires apart do not.
    virtual bool tracksStaleExpire() const { return false; }
    // A key without a TTL whose object keeps a stale expire field (`before`) is written again as `after`
    // (without a TTL) by `op`. Returns the threshold from which the engine makes a new object, without
    // the field: below it the old object, and its field, stay. The old object stays where neither it
    // nor the new value is embedded; both grow with the threshold, so one bound describes every
    // threshold: 0 when the field never stays, kNoThresholdBound when it always does. It is the smaller
    // of firstEmbeddingThreshold(before) and staleExpireNewValueBound(after, op).
    static constexpr std::uint32_t kNoThresholdBound = UINT32_MAX;
    std::uint32_t staleExpireKeptBelow(
        const KeyShape& before, const KeyShape& after, Op op, const AllocatorModel& allocator) const;
    // The threshold from which the new value `op` brings arrives embedded or shared, so that the engine
    // makes a new object whatever the old one was.
    virtual std::uint32_t staleExpireNewValueBound(const KeyShape& /*after*/, Op /*op*/) const { return 0; }

    // How the engine rewrites strings in place (APPEND, SETRANGE, INCR).
    virtual StringRules stringRules() const { return {}; }

    // The most keys of a client's pipelined commands the engine looks up together before running them (its
    // prefetch-batch-max-size default), 0 for an engine that runs each command's lookup alone. Not a byte
    // rule: the GET-stall prediction's, and no part of spec().
    virtual std::uint32_t queuedKeyPrefetchBatch() const { return 0; }

    // Which allocations of a live key stay where they are when `op` rewrites it from `before` to `after`
    // (a TTL change comes as Op::Expire or Op::Persist): the slab model keeps those regions and makes only
    // the others. An allocation can stay only where `after` has one of the same purpose and size class; the
    // engine's rules say which purposes do (keptPurposes).
    KeptAllocations keptOnRewrite(const KeyLayout& before, const KeyLayout& after, const KeyShape& afterShape, Op op,
        std::uint32_t threshold, const AllocatorModel& allocator) const {
        return keepMatching(before, after,
            keptPurposes(before.encoding, after.encoding, op, newValueArrivesUnembedded(afterShape, op, threshold)),
            allocator);
    }
    // The purposes (bit per Purpose, purposeBit) of a key's allocations the engine keeps in place when `op`
    // rewrites a key of `before`'s encoding into `after`'s; `newValueUnembedded` is
    // newValueArrivesUnembedded. The default is the dict engines' (Redis 7.0, Valkey 8.0: db.c dbSetValue,
    // setExpire):
    //  - a TTL change touches no allocation of the key's own (the expires dict gains or loses an entry);
    //  - a SET keeps the keyspace entry, its key and its expires entry; the object and value are the
    //    client's (the old ones freed);
    //  - APPEND and SETRANGE on a RAW value change it in place (sdsMakeRoomFor: the region stays when its
    //    size class does); on another encoding dbUnshareStringValue makes a new object;
    //  - INCR on an INT changes the pointer field in place; otherwise the result is a new object.
    virtual std::uint32_t keptPurposes(Encoding before, Encoding after, Op op, bool newValueUnembedded) const;
    // Whether the value `op` brings for `after` arrives unembedded and unshared at `threshold` (below
    // staleExpireNewValueBound): the condition of Valkey's swap into the old object.
    bool newValueArrivesUnembedded(const KeyShape& after, Op op, std::uint32_t threshold) const {
        return threshold < staleExpireNewValueBound(after, op);
    }
    static constexpr std::uint32_t purposeBit(Purpose p) { return 1u << static_cast<unsigned>(p); }

    // An allocation as the matching rule sees it: its purpose and its size class (any number that is equal
    // for equal classes; kUnmatchable for one that never stays, a memcached chunk run).
    struct AllocationIdentity {
        Purpose purpose = Purpose::Object;
        std::uint64_t sizeClass = 0;
    };
    static constexpr std::uint64_t kUnmatchable = ~std::uint64_t { 0 };
    // `after`'s allocations of the purposes in `purposes` (bit per Purpose) that find one in `before` of
    // the same purpose and size class, each of `before`'s used once.
    static KeptAllocations keepMatching(
        std::span<const AllocationIdentity> before, std::span<const AllocationIdentity> after, std::uint32_t purposes);

protected:
    static KeptAllocations keepMatching(
        const KeyLayout& before, const KeyLayout& after, std::uint32_t purposes, const AllocatorModel& allocator);
    // The rules where the key's object is its keyspace entry (Valkey 8.1 and later): a SET keeps the old
    // object where it does not embed its value and the new value arrives unembedded; a TTL change keeps what
    // keeps its size class; APPEND and INCR as the dict engines, swapping.
    static std::uint32_t objectEntryKeptPurposes(Encoding before, Encoding after, Op op, bool newValueUnembedded);
};

using LayoutPtr = std::shared_ptr<const LayoutModel>;

// The smallest threshold in the layout's range at which `shape` is embedded: 0 when it is at every
// threshold, LayoutModel::kNoThresholdBound when at none.
std::uint32_t firstEmbeddingThreshold(
    const LayoutModel& layout, const KeyShape& shape, const AllocatorModel& allocator);

} // namespace layoutlab
