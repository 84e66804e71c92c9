// SPDX-License-Identifier: MIT
#pragma once

// Valkey string keys (src/object.c, src/server.h struct serverObject, src/hashtable.c).
//
// One allocation holds the object, the optional expire, the key and, when it fits, the value:
//
//   [header: type|encoding|lru|flags|refcount (8)] [val ptr (8), absent when embedded in 9.1]
//   [expire int64, if hasexpire] [key sds header size (1)] [key sds: hdr + K + NUL]
//   [EMBSTR only: value sds type 8: 3 + V + NUL]
//
// The keyspace is a hashtable of 64-byte buckets with 7 entry slots; entries are the object pointers.

#include "layoutlab/layout/layout_model.h"

namespace layoutlab {

struct ValkeyParams {
    std::uint32_t threshold = 128; // createStringObjectWithKeyAndExpire / shouldEmbedStringObject limit
    std::uint32_t headerBytes = 8; // object header in front of an embedded value: 16 in 8.1/9.0, 8 in 9.1
    // Largest client value created EMBSTR (OBJ_ENCODING_EMBSTR_SIZE_LIMIT = 44 before 9.1); 0 = "auto":
    // derive it from the threshold as 9.1's shouldEmbedStringObject(len, NULL, EXPIRY_NONE) does.
    std::uint32_t embstrLimit = 0;
    // Key sizing in the embed decision: "legacy" counts K + 3 (8.1, before PR #2087), "exact" counts
    // sdsReqSize(K) + 1 (9.0 and later).
    bool exactKeySizing = true;
    // The embedded key's sds header: "smallest" re-encodes the key with sdsReqType's header (object.c
    // sdswrite; the 8.1 layout as released, from the development tree of 2025-02-06 on); "as-sent" copies
    // the client's argument sds with the header it arrived with (sdscopytobuffer; the tree of 2025-01-27),
    // which is type 8 for every key of up to 252 bytes.
    bool keyAsSent = false;
    // "kept": removing a TTL leaves the expire field in the object (db.c removeExpire ->
    // objectSetExpire(val, -1)), until an overwrite makes a new object (every 8.1 tree here);
    // "dropped": the object is sized as if it never had one (as a TTL-less key is in the tables).
    bool keepsExpireField = true;
    // Keys of a client's queued commands looked up together: networking.c prefetchCommandQueueKeys (9.0 and
    // later; the 2025 development trees have no command queue) batches up to prefetch-batch-max-size of
    // them, 16 by default (config.c). 0: no such batch. An execution trait, not printed in spec().
    std::uint32_t queuedKeyPrefetch = 0;
    // Collections (layout/collection_layout.h). Execution traits, not printed in spec(), as the one above.
    // hashtable.c's struct hashtable, a hash's, set's or sorted set's table: 72 bytes in 8.1 and 9.0, 80 in
    // 9.1 (a safe-iterator list added). 0: this layout's collections are not modelled.
    std::uint32_t hashtableBytes = 0;
    // The hash type's metadata after it (server.c hashHashtableTypeMetadataSize): 8 bytes from 9.0.
    std::uint32_t hashMetadataBytes = 0;
    // A hash field's entry: entry.c's (9.0 and later), the value embedded after the field when the two fit
    // 128 bytes; or 8.1's t_hash.c hashTypeEntry, a value pointer, an offset byte and the field, the value
    // always an sds of its own.
    bool hashEntriesEmbedValues = true;
    // A sorted set's skiplist node holds its member (t_zset.c zslCreateNode, 9.1); before, the member is an
    // sds of its own.
    bool zsetNodesEmbedMembers = false;
    // hashtable.c rehashStepShrink (9.1): a shrinking table's rehash step skips up to 10 empty buckets to the
    // next non-empty one, as dict.c's does; 8.1 and 9.0 move one bucket per step, empty or not.
    bool shrinkStepSkipsEmpty = false;
    // t_hash.c hdelCommand, t_set.c sremCommand, t_zset.c zremCommand (9.1): the table's auto shrink waits
    // for the command's last field or member (hashtablePauseAutoShrink, then hashtableResumeAutoShrink);
    // 8.1 and 9.0 shrink at the removal that crosses the fill limit.
    bool removalsPauseShrink = false;
    // hashtable.c hashtableShrinkIfNeeded does nothing while the table's auto shrink is paused (9.0 and later),
    // so a ZREMRANGEBY* (t_zset.c zremrangeGenericCommand: hashtablePauseAutoShrink) shrinks once, at its end;
    // the 8.1 trees' checks only that it is not rehashing, and shrink at every removal all the same.
    bool shrinkPauseHonoured = true;

    bool operator==(const ValkeyParams&) const = default;
};

class ValkeyLayout final : public LayoutModel {
public:
    // `line`: the spec's name, which brings the parameters spec() does not list (the engine line's collections and
    // index tables): "valkey-8.1", "valkey-9.0", or "valkey" for the 9.1 rules.
    ValkeyLayout(std::string presetName, const ValkeyParams& params, std::string line = "valkey");

    std::string spec() const override;
    std::string description() const override;
    std::optional<ThresholdParam> threshold() const override;
    std::string defaultAllocator() const override { return "jemalloc:quantum=8,page=4096"; }
    Status checkAllocator(const AllocatorModel& allocator) const override;
    IndexPolicy indexPolicy() const override {
        IndexPolicy policy = engineIndexPolicy(IndexKind::ValkeyHashtable, true);
        policy.params.shrinkStepSkipsEmpty = m_params.shrinkStepSkipsEmpty;
        return policy;
    }
    KeyLayout describe(const KeyShape& shape, std::uint32_t threshold, const AllocatorModel& allocator) const override;
    bool tracksStaleExpire() const override { return m_params.keepsExpireField; }
    std::uint32_t staleExpireNewValueBound(const KeyShape& after, Op op) const override;
    // The object is the keyspace entry (objectEntryKeptPurposes).
    std::uint32_t keptPurposes(Encoding before, Encoding after, Op op, bool newValueUnembedded) const override {
        return objectEntryKeptPurposes(before, after, op, newValueUnembedded);
    }
    // Valkey sds.c; object.c trimStringObjectIfNeeded trims only arguments of 32 KiB or more.
    StringRules stringRules() const override { return { StringRules::Mode::Sds, sds::Flavor::Valkey, false }; }
    std::uint32_t queuedKeyPrefetchBatch() const override { return m_params.queuedKeyPrefetch; }

    const ValkeyParams& params() const { return m_params; }
    std::uint32_t effectiveEmbstrLimit(std::uint32_t threshold) const;

private:
    std::string m_presetName;
    ValkeyParams m_params;
    std::string m_line;
};

} // namespace layoutlab
