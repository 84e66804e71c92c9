// SPDX-License-Identifier: MIT
// A list key element by element (collection_key_ops.h), pushed and popped at its ends as t_list.c and
// quicklist.c do it:
//   pushGenericCommand (listCommand, listPush): a new list is a listpack (Redis 7.2 and Valkey:
//     createListListpackObject; Redis 7.0: a quicklist, createQuicklistObject). Before a push's elements a
//     listpack whose bytes and elements with theirs would pass the node limit becomes a quicklist, the
//     listpack its first node (listTypeTryConvertListpack: the elements' lengths summed). Each element joins
//     the listpack, or the quicklist's head or tail node while the node's bytes, the element's length and an
//     estimate of its overhead keep within the limit (_quicklistNodeAllowInsert: SIZE_ESTIMATE_OVERHEAD 8),
//     else a new node (quicklistPushHead, quicklistPushTail). A listpack
//     takes an integer string as an integer (lpPrepend, lpAppend).
//   popGenericCommand, ltrimCommand (listPop): the element leaves its node's listpack (lpDelete: realloc to
//     its size), an emptied node is freed (__quicklistDelNode), and a quicklist of one node within half the
//     limits becomes a listpack again (listTypeTryConvertQuicklist, shrinking; Redis 7.2 and Valkey).
//   lremCommand (listRemoveAt): the element leaves its node's listpack where it is (quicklistDelIndex:
//     lpDelete), an emptied node is freed, nothing merged; then the shrinking conversion, as after a pop.
//   lsetCommand (listReplace): a listpack the new element would take past the node limit becomes a quicklist
//     first (listTypeTryConversionAppend, as a push of it); the element is replaced in its node's listpack
//     (quicklistReplaceEntry: lpReplace, in place for an element below the large-element size: 1 GiB on
//     Redis 7.x, the node size limit on Valkey, past which the node is split around a node of its own, not
//     modelled); then the shrinking conversion, as after a pop.

#include "collection_key_ops.h"

#include <algorithm>

namespace layoutlab::collection {

namespace {
constexpr std::uint64_t kEmptyListpack = listpack::kHeaderBytes + listpack::kEndBytes; // lpNew
constexpr std::uint64_t kSizeEstimateOverhead = 8; // quicklist.c SIZE_ESTIMATE_OVERHEAD

// _quicklistNodeAllowInsert: the node's bytes, the element's length and SIZE_ESTIMATE_OVERHEAD within the
// limit (Redis 7.0's listpack nodes estimate so too).
bool nodeAllowsInsert(const KeyContext& c, const ListNode& node, std::uint64_t length) {
    return !listNodeExceedsLimit(
        c.limits.listMaxListpackSize, node.bytes + length + kSizeEstimateOverhead, node.count + 1);
}

std::uint32_t entryOf(ElementValue element) {
    return static_cast<std::uint32_t>(
        std::min<std::uint64_t>(listpack::entryBytes(element.bytes, element.integer), UINT32_MAX));
}

// An entry joins a node's listpack `at` places from its head (lpInsertString, lpPrepend, lpAppend).
void addEntry(const CollectionKeyState& key, ListNode& node, std::size_t at, std::uint32_t entry) {
    node.count += 1;
    node.bytes += entry;
    if (key.listSizesKept)
        node.entries.insert(std::min(at, node.entries.size()), entry);
}
} // namespace

void listCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t elements, std::uint64_t totalBytes) {
    if (!key.made) {
        key.made = true;
        key.table = !c.rules.listpackLists; // Redis 7.0: always a quicklist
        if (!key.table)
            key.nodes.push_back({ 0, kEmptyListpack, {} });
    }
    if (key.table)
        return;
    const ListNode& listpack = key.nodes.front();
    if (!listNodeExceedsLimit(c.limits.listMaxListpackSize, listpack.bytes + totalBytes, listpack.count + elements))
        return;
    key.table = true; // quicklistAppendListpack, or the empty listpack freed
    if (listpack.count == 0)
        key.nodes.clear();
}

void listPush(const KeyContext& c, CollectionKeyState& key, ElementValue element, bool atHead) {
    if (!key.made)
        listCommand(c, key, 1, element.bytes);
    ++key.entries;
    key.payloadBytes += element.bytes;
    if (key.table
        && (key.nodes.empty() || !nodeAllowsInsert(c, atHead ? key.nodes.front() : key.nodes.back(), element.bytes)))
        key.nodes.insert(atHead ? key.nodes.begin() : key.nodes.end(), ListNode { 0, kEmptyListpack, {} });
    ListNode& node = atHead ? key.nodes.front() : key.nodes.back(); // a listpack's only node, or the end's
    addEntry(key, node, atHead ? 0 : node.count, entryOf(element));
}

namespace {
// listTypeTryConvertQuicklist: a quicklist of one node within the limits (half of them when `shrinking`)
// becomes a listpack, the node's (Redis 7.2 and Valkey).
void listpackIfOneSmallNode(const KeyContext& c, CollectionKeyState& key, bool shrinking) {
    if (!key.table || !c.rules.listpackLists || key.nodes.size() != 1)
        return;
    auto [sizeLimit, countLimit] = listNodeLimits(c.limits.listMaxListpackSize);
    if (shrinking) {
        sizeLimit /= 2;
        countLimit /= 2;
    }
    if (key.nodes.front().bytes <= sizeLimit && key.nodes.front().count <= countLimit)
        key.table = false;
}
} // namespace

void listReplace(
    const KeyContext& c, CollectionKeyState& key, std::uint64_t index, ElementValue before, ElementValue after) {
    if (index >= key.entries)
        return;
    listCommand(c, key, 1, after.bytes);
    key.payloadBytes += after.bytes;
    key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, before.bytes);
    for (ListNode& node : key.nodes) {
        if (index >= node.count) {
            index -= node.count;
            continue;
        }
        node.bytes += listpack::entryBytes(after.bytes, after.integer);
        node.bytes -= std::min(node.bytes - kEmptyListpack, listpack::entryBytes(before.bytes, before.integer));
        if (key.listSizesKept && index < node.entries.size())
            node.entries.set(index, entryOf(after));
        break;
    }
    listpackIfOneSmallNode(c, key, true);
}

void listPop(const KeyContext& c, CollectionKeyState& key, ElementValue element, bool atHead) {
    if (key.nodes.empty())
        return;
    --key.entries;
    key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, element.bytes);
    ListNode& node = atHead ? key.nodes.front() : key.nodes.back();
    node.count -= std::min<std::uint32_t>(node.count, 1);
    node.bytes -= std::min(node.bytes - kEmptyListpack, listpack::entryBytes(element.bytes, element.integer));
    if (key.listSizesKept && node.entries.size() > 0 && atHead)
        node.entries.popFront();
    else if (key.listSizesKept && node.entries.size() > 0)
        node.entries.popBack();
    if (!key.table)
        return;
    if (node.count == 0)
        key.nodes.erase(atHead ? key.nodes.begin() : key.nodes.end() - 1);
    listpackIfOneSmallNode(c, key, true);
}

void listRemoveAt(const KeyContext& c, CollectionKeyState& key, std::uint64_t index, ElementValue element) {
    for (auto node = key.nodes.begin(); node != key.nodes.end(); ++node) {
        if (index >= node->count) {
            index -= node->count;
            continue;
        }
        --key.entries;
        key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, element.bytes);
        node->count -= 1;
        node->bytes -= std::min(node->bytes - kEmptyListpack, listpack::entryBytes(element.bytes, element.integer));
        if (key.listSizesKept && index < node->entries.size())
            node->entries.erase(index);
        if (key.table && node->count == 0)
            key.nodes.erase(node); // quicklistDelIndex: an emptied node freed, its neighbours left as they are
        listpackIfOneSmallNode(c, key, true);
        return;
    }
}

namespace {
// A node of the entries [first, last) of `node`, as lpDeleteRange leaves a copy of it (_quicklistSplitNode).
ListNode nodeOf(const ListNode& node, std::size_t first, std::size_t last) {
    ListNode part { 0, kEmptyListpack, node.entries.slice(first, last) };
    part.count = static_cast<std::uint32_t>(part.entries.size());
    part.bytes += part.entries.sum();
    return part;
}

// A list's entry sizes are followed from its first LINSERT on (a split needs them; following them for every
// list cost a queue's replay half as much again, and twice its memory: performance.md). The importer gives the
// sizes of what the list held then (request.h ElementAction::Size); until they come, and for a trace that
// does not give them, each node's elements are taken at its mean entry size, its bytes whole (the first
// entries one byte larger where the mean leaves a remainder).
void keepEntrySizes(CollectionKeyState& key) {
    if (key.listSizesKept)
        return;
    key.listSizesKept = true;
    for (ListNode& node : key.nodes) {
        node.entries = {};
        const std::uint64_t held = node.bytes - kEmptyListpack;
        for (std::uint32_t i = 0; i < node.count; ++i)
            node.entries.insert(i, static_cast<std::uint32_t>(held / node.count + (i < held % node.count ? 1 : 0)));
    }
}

// _quicklistNodeAllowMerge: the two listpacks with one header and end marker between them within the limit.
bool mergeAllowed(const KeyContext& c, const ListNode& a, const ListNode& b) {
    return !listNodeExceedsLimit(c.limits.listMaxListpackSize, a.bytes + b.bytes - kEmptyListpack, a.count + b.count);
}

// _quicklistListpackMerge (lpMerge): node `at + 1` joins node `at`, one listpack of both.
void mergeWithNext(CollectionKeyState& key, std::size_t at) {
    ListNode& a = key.nodes[at];
    ListNode& b = key.nodes[at + 1];
    a.count += b.count;
    a.bytes += b.bytes - kEmptyListpack;
    a.entries.append(b.entries);
    key.nodes.erase(key.nodes.begin() + static_cast<std::ptrdiff_t>(at + 1));
}

// _quicklistMergeNodes around node `center`: the two before it, the two after it, then it with the one before
// and the result with the one after, each pair while the merged listpack keeps within the limit.
void mergeAround(const KeyContext& c, CollectionKeyState& key, std::size_t center) {
    if (center >= 2 && mergeAllowed(c, key.nodes[center - 1], key.nodes[center - 2])) {
        mergeWithNext(key, center - 2);
        --center;
    }
    if (center + 2 < key.nodes.size() && mergeAllowed(c, key.nodes[center + 1], key.nodes[center + 2]))
        mergeWithNext(key, center + 1);
    std::size_t target = center;
    if (center >= 1 && mergeAllowed(c, key.nodes[center], key.nodes[center - 1])) {
        mergeWithNext(key, center - 1);
        target = center - 1;
    }
    if (target + 1 < key.nodes.size() && mergeAllowed(c, key.nodes[target], key.nodes[target + 1]))
        mergeWithNext(key, target);
}
} // namespace

void listKnownSize(CollectionKeyState& key, std::uint64_t index, ElementValue element) {
    keepEntrySizes(key);
    for (ListNode& node : key.nodes) {
        if (index < node.count)
            return node.entries.set(static_cast<std::size_t>(index), entryOf(element));
        index -= node.count;
    }
}

// linsertCommand (listTypeInsert): after the command's conversion (listTypeTryConversionAppend, a Command
// request), the element joins a listpack beside its pivot (lpInsertString); in a quicklist, _quicklistInsert
// decides by the pivot's node: into it while it has room (_quicklistNodeAllowInsert); else, beside a pivot at
// the node's end, into the neighbour on that side while it has room, or a node of its own; else the node is
// split at the pivot (_quicklistSplitNode), the element joins the part on its side, and the nodes around are
// merged where they fit (_quicklistMergeNodes). No conversion follows. An element past the large-element size
// (a node of its own, QUICKLIST_NODE_CONTAINER_PLAIN) is not modelled, as for LSET.
void listInsert(const KeyContext& c, CollectionKeyState& key, std::uint64_t pivot, bool before, ElementValue element) {
    std::size_t n = 0;
    while (n < key.nodes.size() && pivot >= key.nodes[n].count)
        pivot -= key.nodes[n++].count;
    if (n == key.nodes.size())
        return;
    keepEntrySizes(key);
    ++key.entries;
    key.payloadBytes += element.bytes;
    const std::uint32_t entry = entryOf(element);
    const auto offset = static_cast<std::size_t>(pivot);
    ListNode& node = key.nodes[n];
    if (!key.table || nodeAllowsInsert(c, node, element.bytes))
        return addEntry(key, node, before ? offset : offset + 1, entry);
    const bool atTail = !before && offset + 1 == node.count;
    const bool atHead = before && offset == 0;
    if (atTail && n + 1 < key.nodes.size() && nodeAllowsInsert(c, key.nodes[n + 1], element.bytes))
        return addEntry(key, key.nodes[n + 1], 0, entry);
    if (atHead && n > 0 && nodeAllowsInsert(c, key.nodes[n - 1], element.bytes))
        return addEntry(key, key.nodes[n - 1], key.nodes[n - 1].count, entry);
    if (atTail || atHead) {
        ListNode own { 0, kEmptyListpack, {} };
        addEntry(key, own, 0, entry);
        key.nodes.insert(key.nodes.begin() + static_cast<std::ptrdiff_t>(before ? n : n + 1), std::move(own));
        return;
    }
    // The node keeps the pivot and the side away from the element; the new node the rest, with the element.
    const std::size_t cut = before ? offset : offset + 1;
    ListNode kept = before ? nodeOf(node, cut, node.entries.size()) : nodeOf(node, 0, cut);
    ListNode split = before ? nodeOf(node, 0, cut) : nodeOf(node, cut, node.entries.size());
    addEntry(key, split, before ? split.count : 0, entry);
    node = std::move(kept);
    key.nodes.insert(key.nodes.begin() + static_cast<std::ptrdiff_t>(before ? n : n + 1), std::move(split));
    mergeAround(c, key, before ? n + 1 : n);
}

CollectionFootprint listFootprint(const KeyContext& c, const CollectionKeyState& key) {
    CollectionFootprint out;
    for (const ListNode& node : key.nodes) {
        out.allocations += 1;
        out.requestedBytes += static_cast<double>(node.bytes);
        out.usableBytes += static_cast<double>(c.allocator.usableSize(node.bytes));
    }
    if (key.table) {
        const auto nodes = static_cast<double>(key.nodes.size());
        out.allocations += 1 + nodes;
        out.requestedBytes += static_cast<double>(kQuicklistBytes) + nodes * static_cast<double>(kQuicklistNodeBytes);
        out.usableBytes += static_cast<double>(c.allocator.usableSize(kQuicklistBytes))
            + nodes * static_cast<double>(c.allocator.usableSize(kQuicklistNodeBytes));
    }
    return out;
}

} // namespace layoutlab::collection

// rdb.c rdbLoadObject of a list (RDB_TYPE_LIST_QUICKLIST_2): a quicklist of the file's nodes, each listpack
// as saved (quicklistAppendListpack), whatever the loading server's node limit; after the last, a list of
// one node within the limits becomes a listpack (listTypeTryConversion, LIST_CONV_AUTO:
// listTypeTryConvertQuicklist, not shrinking; Redis 7.2 and Valkey).
namespace layoutlab::collection {

void listLoad(const KeyContext& c, CollectionKeyState& key) {
    (void)c;
    key.table = true;
    key.nodes.push_back({ 0, kEmptyListpack, {} });
}

void listLoadAdd(const KeyContext& c, CollectionKeyState& key, ElementValue element) {
    ++key.entries;
    key.payloadBytes += element.bytes;
    ListNode& node = key.nodes.back();
    addEntry(key, node, node.count, entryOf(element));
    if (key.loadRemaining == 0 && key.loadForm.nodesAfter == 0) // after the last node
        listpackIfOneSmallNode(c, key, false);
}

} // namespace layoutlab::collection
