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
    const KeyLayout& before, const KeyLayout& after, std::uint32_t purposes, const AllocatorModel& allocator) {
    KeptAllocations kept;
    std::uint32_t taken = 0; // bit i: before's allocation i is kept already
    for (std::size_t i = 0; i < after.allocationCount; ++i) {
        const Allocation& a = after.allocations[i];
        if (!(purposes & purposeBit(a.purpose)) || a.count != 1)
            continue;
        for (std::size_t j = 0; j < before.allocationCount; ++j) {
            const Allocation& b = before.allocations[j];
            if (!(taken & (1u << j)) && b.purpose == a.purpose && b.count == 1
                && allocator.usableSize(b.requestedBytes) == allocator.usableSize(a.requestedBytes)) {
                kept.from[i] = static_cast<std::uint8_t>(j);
                taken |= 1u << j;
                break;
            }
        }
    }
    return kept;
}

KeptAllocations LayoutModel::keptOnRewrite(const KeyLayout& before, const KeyLayout& after, const KeyShape&, Op op,
    std::uint32_t, const AllocatorModel& allocator) const {
    const std::uint32_t all = ~0u;
    const std::uint32_t entries
        = purposeBit(Purpose::Entry) | purposeBit(Purpose::Key) | purposeBit(Purpose::ExpireEntry);
    switch (op) {
    case Op::Expire:
    case Op::Persist:
        return keepMatching(before, after, all, allocator);
    case Op::Append:
    case Op::Prepend:
    case Op::SetRange:
        return keepMatching(before, after, before.encoding == Encoding::Raw ? all : entries, allocator);
    case Op::Incr:
    case Op::Decr:
        return keepMatching(before, after,
            before.encoding == Encoding::Integer && after.encoding == Encoding::Integer ? all : entries, allocator);
    default:
        return keepMatching(before, after, entries, allocator);
    }
}

KeptAllocations LayoutModel::keptWhereTheObjectIsTheEntry(
    const KeyLayout& before, const KeyLayout& after, Op op, bool newValueUnembedded, const AllocatorModel& allocator) {
    const std::uint32_t all = ~0u;
    // db.c dbSetValue keeps the old object, the new value swapped in, where the old object does not embed
    // its value and the new value arrives unembedded and unshared.
    auto swapped = [&] {
        return before.encoding != Encoding::Embedded && newValueUnembedded
            ? keepMatching(before, after, purposeBit(Purpose::Object), allocator)
            : KeptAllocations {};
    };
    switch (op) {
    case Op::Expire:
    case Op::Persist:
        // object.c objectSetExpire: a field already there is written in place; without one,
        // objectSetKeyAndExpire makes a new object around the same value (a RAW value's sds is reused).
        return keepMatching(before, after, all, allocator);
    case Op::Append:
    case Op::Prepend:
    case Op::SetRange:
        // A RAW value grows in place (sdsMakeRoomFor); an INT is unshared into a new RAW value that
        // dbReplaceValue swaps into the object; an embedded one gets a new object (objectSetKeyAndExpire).
        return before.encoding == Encoding::Raw ? keepMatching(before, after, all, allocator) : swapped();
    case Op::Incr:
    case Op::Decr:
        // t_string.c incrDecrCommand: an unshared INT changes in place; otherwise a new INT value is swapped in.
        return before.encoding == Encoding::Integer && after.encoding == Encoding::Integer
            ? keepMatching(before, after, all, allocator)
            : swapped();
    default:
        return swapped();
    }
}

} // namespace layoutlab
