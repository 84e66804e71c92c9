// SPDX-License-Identifier: MIT
// A collection key's copy (COPY: db.c copyCommand), as each type's dup makes it, the same on every engine line
// (t_list.c listTypeDup, t_set.c setTypeDup, t_zset.c zsetDup, t_hash.c hashTypeDup; Redis 7.x's object.c
// dup*Object):
//  - a listpack or an intset: a new allocation of its bytes, copied (zmalloc(lpBytes), zmalloc(intsetBlobLen));
//  - a list's quicklist: each node copied with its listpack at its bytes (quicklist.c quicklistDup), the
//    nodes as they were;
//  - a table (a hash's, a set's, a sorted set's with its skiplist): a new table expanded for the source's
//    count (dictExpand, hashtableExpand), then every element added once: its entry made as the type's
//    iterator gives it (a set's member sdsdup'ed, a hash's field and value; a sorted set's node drawn again,
//    in expectation the same).
// A hash's entry made from a command's argument (Rules::hashFieldsAsSent, the 8.1 trees) is copied with its
// field's own header (hashTypeCreateEntry of the entry's field), which the model keeps: the replay knows the
// entries' sums, not each one's length.

#include "layoutlab/layout/collection_key_model.h"

#include "collection_key_ops.h"

namespace layoutlab {

CollectionKeyState CollectionKeyModel::duplicated(const CollectionKeyState& source) const {
    CollectionKeyState copy;
    copy.kind = source.kind;
    copy.made = source.made;
    copy.table = source.table;
    copy.intsetWidth = source.intsetWidth;
    copy.entries = source.entries;
    copy.payloadBytes = source.payloadBytes;
    copy.listpackBytes = source.listpackBytes;
    copy.compactEntries = source.compactEntries;
    copy.entryAllocations = source.entryAllocations;
    copy.entryRequestedBytes = source.entryRequestedBytes;
    copy.entryUsableBytes = source.entryUsableBytes;
    copy.entryUsableVariance = source.entryUsableVariance;
    copy.entrySizes = source.entrySizes;
    copy.argvEntries = source.argvEntries;
    copy.nodes = source.nodes;
    copy.listSizesKept = source.listSizesKept;
    if (!source.index)
        return copy;
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    copy.index = collection::newTable(c, source.entries);
    for (std::uint64_t i = 0; i < source.entries; ++i)
        copy.index->insert();
    // A set's members come in the source table's order, not the order they were added in: the new table
    // holds no stranded entry, and which member a removal takes is not known.
    copy.adds = source.entries;
    return copy;
}

} // namespace layoutlab
