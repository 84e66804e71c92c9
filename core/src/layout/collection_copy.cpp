// SPDX-License-Identifier: MIT
// A key's state copied as it is (copyOf: a sweep's variants parting), and a collection key's copy (COPY: db.c
// copyCommand), as each type's dup makes it, the same on every engine line (t_list.c listTypeDup, t_set.c setTypeDup,
// t_zset.c zsetDup, t_hash.c hashTypeDup; Redis 7.x's object.c dup*Object):
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

CollectionKeyState copyOf(const CollectionKeyState& key) {
    CollectionKeyState out;
    out.kind = key.kind;
    out.made = key.made;
    out.table = key.table;
    out.intsetWidth = key.intsetWidth;
    out.entries = key.entries;
    out.payloadBytes = key.payloadBytes;
    out.listpackBytes = key.listpackBytes;
    out.compactEntries = key.compactEntries;
    if (key.index)
        out.index = std::make_unique<IndexTableModel>(*key.index);
    out.entryAllocations = key.entryAllocations;
    out.entryRequestedBytes = key.entryRequestedBytes;
    out.entryUsableBytes = key.entryUsableBytes;
    out.entryUsableVariance = key.entryUsableVariance;
    out.entrySizes = key.entrySizes;
    out.argvEntries = key.argvEntries;
    out.strandedEntries = key.strandedEntries;
    out.strandedUnmoved = key.strandedUnmoved;
    out.strandedTable = key.strandedTable;
    out.adds = key.adds;
    out.unionAddsLeft = key.unionAddsLeft;
    out.orderBase = key.orderBase;
    out.orderBuckets = key.orderBuckets;
    out.nodes = key.nodes;
    out.listSizesKept = key.listSizesKept;
    out.loadRemaining = key.loadRemaining;
    out.loadForm = key.loadForm;
    out.loadLongest = key.loadLongest;
    out.reallocatedBytes = key.reallocatedBytes;
    return out;
}

CollectionKeyState CollectionKeyModel::duplicated(const CollectionKeyState& source) const {
    CollectionKeyState copy = copyOf(source); // a live key's: no load under way
    copy.reallocatedBytes = 0; // a new key's own count
    if (!source.index)
        return copy;
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    copy.index = collection::newTable(c, source.entries);
    for (std::uint64_t i = 0; i < source.entries; ++i)
        copy.index->insert();
    // A set's members come in the source table's order, not the order they were added in: the new table
    // holds no stranded entry, and which member a removal takes is not known.
    copy.strandedEntries = 0;
    copy.strandedUnmoved = 1;
    copy.strandedTable = 0;
    copy.adds = source.entries;
    copy.orderBase = -1;
    copy.orderBuckets = 0;
    return copy;
}

} // namespace layoutlab
