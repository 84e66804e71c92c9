// SPDX-License-Identifier: MIT
#pragma once

// What the dict-based layouts share (Redis 7.0, Valkey 8.0): the value is an object of its own, and a
// TTL is an entry of the expires dict.
//
//   robj {type:4 encoding:4 lru:24, int refcount, void *ptr} (16)
//   EMBSTR: robj + sdshdr8 + value + NUL in one allocation   RAW: robj -> value sds
//   INT: the long in ptr (a shared object for 0..9999)

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/layout/layout_model.h"

namespace layoutlab::value_object {

// object.c createStringObject / tryObjectEncoding: a shared integer (nothing allocated), an INT robj, an
// EMBSTR (V <= embstrLimit) or a RAW robj and an sds of `sdsBytes(V)` (the engine's sdsnewlen).
void add(KeyLayout& out, const KeyShape& shape, std::uint32_t embstrLimit, bool sharedIntegers,
    std::uint64_t (*sdsBytes)(std::uint64_t));
// A RAW robj and the sds buffer KeyShape::sdsBytes (ValueKind::RawString; 0: `sdsBytes(V)`).
void addRawSds(KeyLayout& out, const KeyShape& shape, std::uint64_t (*sdsBytes)(std::uint64_t));
// db.c setExpire: a dictEntry {key, v.s64, next} in db->expires, its key shared with the keyspace's.
void addExpireEntry(KeyLayout& out);

// What SET key value [EX seconds] allocates for the command alone (KeyLayout::transients): the argv array,
// "SET", the key (copied into the keyspace), and "EX" and the seconds. Each argument is an EMBSTR up to
// `embstrLimit` (the layout's configured limit, so that the transients do not change with a swept one),
// else a RAW robj and its sds. The value's argument is the stored value object itself.
void addWriteTransients(
    KeyLayout& out, const KeyShape& shape, std::uint32_t embstrLimit, std::uint64_t (*sdsBytes)(std::uint64_t));

// The order SET makes a dict layout's allocations in: the value's (the parsed argument: its sds before its
// robj), then the key's copy (sdsdup) and the entry (dictAddRaw), then the expires entry. `out` lists the
// entry (with the key in it, or the key next), the value's and the expires entry, in a GET's order.
void madeInWriteOrder(KeyLayout& out);

// The threshold both sweep: OBJ_ENCODING_EMBSTR_SIZE_LIMIT.
ThresholdParam embstrLimitParam(std::uint32_t value);
// Refuses memcached's slabs for a layout named `layout`.
Status requireMalloc(const AllocatorModel& allocator, std::string_view layout);

} // namespace layoutlab::value_object
