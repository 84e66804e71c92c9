// SPDX-License-Identifier: MIT
#include "layoutlab/layout/layout_model.h"

#include <algorithm>

namespace layoutlab {

std::uint32_t firstEmbeddingThreshold(
    const LayoutModel& layout, const KeyShape& shape, const AllocatorModel& allocator) {
    const auto param = layout.threshold();
    if (!param)
        return layout.describe(shape, 0, allocator).embedded() ? 0 : LayoutModel::kNoThresholdBound;
    auto embedded = [&](std::uint32_t t) { return layout.describe(shape, t, allocator).embedded(); };
    if (!embedded(param->max))
        return LayoutModel::kNoThresholdBound;
    if (embedded(param->min))
        return 0; // embedded wherever a threshold may be asked
    // The LayoutModel contract: a shape's layout changes at most once as the threshold grows.
    std::uint32_t lo = param->min, hi = param->max; // !embedded(lo), embedded(hi)
    while (hi - lo > 1) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        (embedded(mid) ? hi : lo) = mid;
    }
    return hi;
}

std::uint32_t LayoutModel::staleExpireKeptBelow(
    const KeyShape& before, const KeyShape& after, Op op, const AllocatorModel& allocator) const {
    return std::min(firstEmbeddingThreshold(*this, before, allocator), staleExpireNewValueBound(after, op));
}

KeptAllocations LayoutModel::keepMatching(
    std::span<const AllocationIdentity> before, std::span<const AllocationIdentity> after, std::uint32_t purposes) {
    KeptAllocations kept;
    std::uint32_t taken = 0; // bit j: before's allocation j is kept already
    for (std::size_t i = 0; i < after.size(); ++i) {
        const AllocationIdentity& a = after[i];
        if (!(purposes & purposeBit(a.purpose)) || a.sizeClass == kUnmatchable)
            continue;
        for (std::size_t j = 0; j < before.size(); ++j)
            if (!(taken & (1u << j)) && before[j].purpose == a.purpose && before[j].sizeClass == a.sizeClass) {
                kept.from[i] = static_cast<std::uint8_t>(j);
                taken |= 1u << j;
                break;
            }
    }
    return kept;
}

KeptAllocations LayoutModel::keepMatching(
    const KeyLayout& before, const KeyLayout& after, std::uint32_t purposes, const AllocatorModel& allocator) {
    auto identities = [&allocator](const KeyLayout& layout) {
        std::array<AllocationIdentity, KeyLayout::kMaxAllocations> out {};
        for (std::size_t i = 0; i < layout.allocationCount; ++i) {
            const Allocation& a = layout.allocations[i];
            out[i] = { a.purpose, a.count == 1 ? allocator.usableSize(a.requestedBytes) : kUnmatchable };
        }
        return out;
    };
    const auto b = identities(before), a = identities(after);
    return keepMatching(
        std::span(b.data(), before.allocationCount), std::span(a.data(), after.allocationCount), purposes);
}

namespace {
// What a rewrite keeps, where `replaced` is what stays when the value is replaced outright (a SET, or an
// APPEND or INCR that cannot work in place):
//  - a TTL change: everything that keeps its size class (the dict engines touch none of the key's own
//    allocations; object.c objectSetExpire writes a field in place, or objectSetKeyAndExpire makes a new
//    object around the same value, a RAW value's sds reused);
//  - APPEND, SETRANGE on a RAW value: in place (sdsMakeRoomFor: the region stays while its class does);
//  - INCR on an unshared INT: the pointer field changes in place (t_string.c incrDecrCommand).
std::uint32_t rewritePurposes(Encoding before, Encoding after, Op op, std::uint32_t replaced) {
    const std::uint32_t all = ~0u;
    switch (op) {
    case Op::Expire:
    case Op::Persist:
        return all;
    case Op::Append:
    case Op::Prepend:
    case Op::SetRange:
        return before == Encoding::Raw ? all : replaced;
    case Op::Incr:
    case Op::Decr:
        return before == Encoding::Integer && after == Encoding::Integer ? all : replaced;
    default:
        return replaced;
    }
}
} // namespace

std::uint32_t LayoutModel::keptPurposes(Encoding before, Encoding after, Op op, bool) const {
    // db.c dbSetValue: the keyspace entry, its key and its expires entry stay; the object is the client's.
    return rewritePurposes(
        before, after, op, purposeBit(Purpose::Entry) | purposeBit(Purpose::Key) | purposeBit(Purpose::ExpireEntry));
}

std::uint32_t LayoutModel::objectEntryKeptPurposes(Encoding before, Encoding after, Op op, bool newValueUnembedded) {
    // db.c dbSetValue keeps the old object, the new value swapped in, where the old object does not embed
    // its value and the new value arrives unembedded and unshared (an INT unshared into a RAW by APPEND,
    // a new INT of INCR, included); else objectSetKeyAndExpire makes a new object.
    return rewritePurposes(
        before, after, op, before != Encoding::Embedded && newValueUnembedded ? purposeBit(Purpose::Object) : 0u);
}

} // namespace layoutlab
