// SPDX-License-Identifier: MIT
#pragma once

// Valkey 8.0 string keys: the key lives in the keyspace dict's entry, the value in its own object
// (src/dict.c createEmbeddedEntry, src/server.c kvstoreKeysDictType, src/db.c dbAddInternal/setExpire,
// src/object.c createStringObject/tryObjectEncoding).
//
//   slot (8) -> dictEntryEmbedded {v.val (8), next (8), key_header_size (1), key sds as sent}
//                 -> robj {type|enc|lru, refcount, ptr} (16)
//   EMBSTR (V <= 44): robj and a type-8 value sds in one allocation (16 + 3 + V + 1)
//   RAW: robj (16) -> value sds;  INT: robj holds the long (shared objects for 0..9999)
//   TTL: a dictEntry {key, v.s64, next} (24) in db->expires pointing at the entry's embedded key
//
// The embedded key is a copy of the client's argument sds with its header (sdscopytobuffer copies
// sdsminlen): a key of up to 44 bytes arrives as an EMBSTR, whose sds is type 8, so a 16-byte key takes
// 3 + 16 + 1 bytes, not the 18 of the smallest header.

#include "layoutlab/layout/layout_model.h"

namespace layoutlab {

struct ValkeyDictParams {
    std::uint32_t embstrLimit = 44; // object.c OBJ_ENCODING_EMBSTR_SIZE_LIMIT
    bool sharedIntegers = true; // object.c tryObjectEncodingEx: shared.integers[] when canUseSharedObject()
    // The embedded key's sds header, copied from the key the server was given (dict.c createEmbeddedEntry ->
    // sdscopytobuffer): "as-sent", a client's argument (type 8 up to the EMBSTR limit, sds::valkeyArgvBytes);
    // "smallest", a key read from an RDB file (rdb.c rdbGenericLoadStringObject(RDB_LOAD_SDS) -> sdsnewlen:
    // sdsReqType's header, type 5 below 32 bytes), as a server that loaded its keyspace holds it.
    bool keyAsSent = true;
};

class ValkeyDictLayout final : public LayoutModel {
public:
    explicit ValkeyDictLayout(const ValkeyDictParams& params);

    std::string spec() const override;
    std::string description() const override;
    std::optional<ThresholdParam> threshold() const override;
    std::string defaultAllocator() const override { return "jemalloc:quantum=8,page=4096"; }
    Status checkAllocator(const AllocatorModel& allocator) const override;
    IndexPolicy indexPolicy() const override { return engineIndexPolicy(IndexKind::ValkeyDict, true); }
    KeyLayout describe(const KeyShape& shape, std::uint32_t threshold, const AllocatorModel& allocator) const override;
    // Valkey 8.0.1 sds.c (adjustTypeIfNeeded); object.c trimStringObjectIfNeeded trims only arguments of
    // 32 KiB or more.
    StringRules stringRules() const override { return { StringRules::Mode::Sds, sds::Flavor::Valkey, false }; }

private:
    ValkeyDictParams m_params;

public:
    const ValkeyDictParams& params() const { return m_params; }
};

} // namespace layoutlab
