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

std::uint32_t LayoutModel::keptPurposes(Encoding before, Encoding after, Op op, bool) const {
    const std::uint32_t all = ~0u;
    const std::uint32_t entries
        = purposeBit(Purpose::Entry) | purposeBit(Purpose::Key) | purposeBit(Purpose::ExpireEntry);
    switch (op) {
    case Op::Expire:
    case Op::Persist:
        return all;
    case Op::Append:
    case Op::Prepend:
    case Op::SetRange:
        return before == Encoding::Raw ? all : entries;
    case Op::Incr:
    case Op::Decr:
        return before == Encoding::Integer && after == Encoding::Integer ? all : entries;
    default:
        return entries;
    }
}

std::uint32_t LayoutModel::objectEntryKeptPurposes(Encoding before, Encoding after, Op op, bool newValueUnembedded) {
    const std::uint32_t all = ~0u;
    // db.c dbSetValue keeps the old object, the new value swapped in, where the old object does not embed
    // its value and the new value arrives unembedded and unshared.
    const std::uint32_t swapped = before != Encoding::Embedded && newValueUnembedded ? purposeBit(Purpose::Object) : 0;
    switch (op) {
    case Op::Expire:
    case Op::Persist:
        // object.c objectSetExpire: a field already there is written in place; without one,
        // objectSetKeyAndExpire makes a new object around the same value (a RAW value's sds is reused).
        return all;
    case Op::Append:
    case Op::Prepend:
    case Op::SetRange:
        // A RAW value grows in place (sdsMakeRoomFor); an INT is unshared into a new RAW value that
        // dbReplaceValue swaps into the object; an embedded one gets a new object (objectSetKeyAndExpire).
        return before == Encoding::Raw ? all : swapped;
    case Op::Incr:
    case Op::Decr:
        // t_string.c incrDecrCommand: an unshared INT changes in place; otherwise a new INT value is swapped in.
        return before == Encoding::Integer && after == Encoding::Integer ? all : swapped;
    default:
        return swapped;
    }
}

} // namespace layoutlab
