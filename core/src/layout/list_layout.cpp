// SPDX-License-Identifier: MIT
// List keys (layout/collection_layout.h), from the engines' t_list.c and quicklist.c.
//   listpack (Redis 7.2, Valkey): one listpack of every element, while it keeps within a quicklist node's
//     limit (listTypeTryConvertListpack).
//   quicklist: struct quicklist (40 bytes: quicklistCreate), and per node a struct quicklistNode (40 bytes:
//     quicklistCreateNode) and its listpack, each grown by realloc to its exact size (lpInsert).
// The node limit is list-max-listpack-size (quicklistNodeLimit): below 0 a byte limit (optimization_level:
// -1 4 KiB, -2 8 KiB, ... -5 64 KiB), above 0 an element count within SIZE_SAFETY_LIMIT (8 KiB).
//   A push joins the node at its end while the node's bytes, the element's length and SIZE_ESTIMATE_OVERHEAD
//     (8) keep within it (_quicklistNodeAllowInsert); else it starts a node.
//   A listpack list converts before a push whose elements' lengths would take its bytes past it
//     (quicklistNodeExceedsLimit(fill, lpBytes + the lengths, lpLength + the count)): RPUSH of many elements
//     at once converts before the first, its listpack freed; one element at a time, the listpack becomes the
//     first node.
//   Redis 7.0 lists are always quicklists (t_list.c pushGenericCommand: createQuicklistObject).
// Elements of 1 GiB or more are plain nodes (packed_threshold), not modelled.

#include "collection_rules.h"

#include <fmt/format.h>

namespace layoutlab::collection {

namespace {
constexpr std::uint64_t kSizeEstimateOverhead = 8; // quicklist.c SIZE_ESTIMATE_OVERHEAD
constexpr std::uint64_t kSizeSafetyLimit = 8192; // quicklist.c SIZE_SAFETY_LIMIT
constexpr std::uint64_t kOptimizationLevel[] = { 4096, 8192, 16384, 32768, 65536 }; // quicklist.c
constexpr std::uint64_t kPackedThreshold = 1ull << 30; // quicklist.c packed_threshold
constexpr std::uint64_t kEmptyListpackBytes = listpack::kHeaderBytes + listpack::kEndBytes;

bool exceedsLimit(std::int64_t fill, std::uint64_t bytes, std::uint64_t count) {
    return listNodeExceedsLimit(fill, bytes, count);
}

// The most entries of `entryBytes` (elements of `length` bytes) a listpack takes one push at a time, each
// push allowed while its bytes so far plus `slack` and the element's length keep within the limit.
std::uint64_t entriesPerListpack(
    std::int64_t fill, std::uint64_t entryBytes, std::uint64_t length, std::uint64_t slack, std::uint64_t cap) {
    // Pushes allowed are monotone in the count: the first refused ends the listpack. A bisection over
    // [1, cap] keeps it exact for any limit.
    const auto allowed = [&](std::uint64_t held) {
        return !exceedsLimit(fill, kEmptyListpackBytes + held * entryBytes + length + slack, held + 1);
    };
    std::uint64_t lo = 0, hi = cap; // lo entries are reachable
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo + 1) / 2;
        if (allowed(mid - 1))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}
} // namespace

// quicklistNodeExceedsLimit: whether a listpack of `bytes` and `count` entries is past the node limit.
bool listNodeExceedsLimit(std::int64_t fill, std::uint64_t bytes, std::uint64_t count) {
    const auto [sizeLimit, countLimit] = listNodeLimits(fill);
    return bytes > sizeLimit || count > countLimit;
}

std::pair<std::uint64_t, std::uint64_t> listNodeLimits(std::int64_t fill) {
    if (fill < 0) {
        const auto level = std::min<std::uint64_t>(static_cast<std::uint64_t>(-fill) - 1, 4);
        return { kOptimizationLevel[level], UINT32_MAX };
    }
    return { kSizeSafetyLimit, static_cast<std::uint64_t>(std::max<std::int64_t>(fill, 1)) };
}

Status describeList(const Rules& rules, const CollectionShape& shape, const CollectionLimits& limits,
    const AllocatorModel& allocator, CollectionKeyLayout& out) {
    (void)allocator;
    if (shape.elementBytes >= kPackedThreshold)
        return usageError("list elements of 1 GiB or more are plain quicklist nodes, not modelled", "element bytes");
    if (limits.listMaxListpackSize == 0)
        return usageError("list-max-listpack-size 0 holds one element per node; give -5 to -1 or a count", "limits");
    const std::int64_t fill = limits.listMaxListpackSize;
    const std::uint64_t n = shape.entries;
    const std::uint64_t e = listpack::entryBytes(shape.elementBytes, shape.integerElements);
    const std::uint64_t length = shape.elementBytes;
    const char* limitName = "list-max-listpack-size";

    // A listpack list: the elements it takes before a push converts it.
    std::uint64_t firstNode = 0; // elements of the listpack that became the first node
    if (rules.listpackLists) {
        if (shape.oneCommand) {
            // One RPUSH: the lengths of all its elements against the limit, before the first is pushed.
            if (!exceedsLimit(fill, kEmptyListpackBytes + n * length, n)) {
                out.encoding = "listpack";
                out.why
                    = fmt::format("{} elements of {} bytes in one push keep within {} {}", n, length, limitName, fill);
                out.parts.push_back({ "listpack", listpackBytes(n, e), 1 });
                return Ok {};
            }
        } else {
            const std::uint64_t held = entriesPerListpack(fill, e, length, 0, n);
            if (held >= n) {
                out.encoding = "listpack";
                out.why = fmt::format("{} elements of {} bytes keep within {} {}", n, length, limitName, fill);
                out.parts.push_back({ "listpack", listpackBytes(n, e), 1 });
                return Ok {};
            }
            firstNode = held;
        }
    }
    out.encoding = "quicklist";
    out.why = rules.listpackLists ? fmt::format("{} elements of {} bytes pass {} {}", n, length, limitName, fill)
                                  : std::string("every Redis 7.0 list is a quicklist");
    // Nodes after the first fill to the limit less the estimate's overhead; a node takes one element at least.
    const std::uint64_t perNode
        = std::max<std::uint64_t>(1, entriesPerListpack(fill, e, length, kSizeEstimateOverhead, n));
    const std::uint64_t rest = n - firstNode;
    const std::uint64_t fullNodes = rest / perNode;
    const std::uint64_t lastNode = rest % perNode;
    const std::uint64_t nodes = (firstNode ? 1 : 0) + fullNodes + (lastNode ? 1 : 0);
    out.parts.push_back({ "quicklist", kQuicklistBytes, 1 });
    out.parts.push_back({ "quicklist nodes", kQuicklistNodeBytes, static_cast<double>(nodes) });
    if (firstNode)
        out.parts.push_back({ "listpack (first node, the list's listpack)", listpackBytes(firstNode, e), 1 });
    if (fullNodes)
        out.parts.push_back({ fmt::format("listpacks ({} elements)", perNode), listpackBytes(perNode, e),
            static_cast<double>(fullNodes) });
    if (lastNode)
        out.parts.push_back(
            { fmt::format("listpack (last node, {} elements)", lastNode), listpackBytes(lastNode, e), 1 });
    return Ok {};
}

} // namespace layoutlab::collection
