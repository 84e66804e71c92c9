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
} // namespace

void listCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t elements, std::uint64_t totalBytes) {
    if (!key.made) {
        key.made = true;
        key.table = !c.rules.listpackLists; // Redis 7.0: always a quicklist
        if (!key.table)
            key.nodes.push_back({ 0, kEmptyListpack });
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
    const std::uint64_t entry = listpack::entryBytes(element.bytes, element.integer);
    if (!key.table) {
        key.nodes.front().count += 1;
        key.nodes.front().bytes += entry;
        return;
    }
    if (key.nodes.empty() || !nodeAllowsInsert(c, atHead ? key.nodes.front() : key.nodes.back(), element.bytes))
        key.nodes.insert(atHead ? key.nodes.begin() : key.nodes.end(), ListNode { 0, kEmptyListpack });
    ListNode& node = atHead ? key.nodes.front() : key.nodes.back();
    node.count += 1;
    node.bytes += entry;
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
        if (key.table && node->count == 0)
            key.nodes.erase(node); // quicklistDelIndex: an emptied node freed, its neighbours left as they are
        listpackIfOneSmallNode(c, key, true);
        return;
    }
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
    key.nodes.push_back({ 0, kEmptyListpack });
}

void listLoadAdd(const KeyContext& c, CollectionKeyState& key, ElementValue element) {
    ++key.entries;
    key.payloadBytes += element.bytes;
    ListNode& node = key.nodes.back();
    node.count += 1;
    node.bytes += listpack::entryBytes(element.bytes, element.integer);
    if (key.loadRemaining == 0 && key.loadForm.nodesAfter == 0) // after the last node
        listpackIfOneSmallNode(c, key, false);
}

} // namespace layoutlab::collection
