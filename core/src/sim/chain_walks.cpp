// SPDX-License-Identifier: MIT
#include "chain_walks.h"

#include <unordered_map>

namespace layoutlab {

namespace {
std::uint64_t chainOrder(std::uint64_t id) {
    return mix(id ^ 0x5851f42d4c957f2dULL);
}
} // namespace

ChainWalks chainWalks(const std::vector<KeyState>& keys, const std::vector<std::uint32_t>& shapeOf,
    std::vector<std::uint32_t>& sampledSlot, std::vector<std::uint32_t>& sampledIds, const BucketIndex& buckets,
    const BucketIndex& expiresBuckets, bool walkExpires) {
    const std::size_t getSlots = sampledIds.size();
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> bucketMembers, expiresMembers;
    for (const auto id : sampledIds) {
        bucketMembers.try_emplace(buckets.of(mix(id)));
        if (walkExpires)
            expiresMembers.try_emplace(expiresBuckets.of(mix(mix(id))));
    }
    for (std::uint32_t id = 0; id < keys.size(); ++id) {
        if (shapeOf[id] == UINT32_MAX)
            continue; // not live
        if (const auto it = bucketMembers.find(buckets.of(mix(id))); it != bucketMembers.end())
            it->second.push_back(id);
        if (walkExpires && keys[id].hasTtl())
            if (const auto it = expiresMembers.find(expiresBuckets.of(mix(mix(id)))); it != expiresMembers.end())
                it->second.push_back(id);
    }
    auto slotOf = [&](std::uint32_t id) {
        if (sampledSlot[id] == UINT32_MAX) {
            sampledSlot[id] = static_cast<std::uint32_t>(sampledIds.size());
            sampledIds.push_back(id);
        }
        return sampledSlot[id];
    };
    ChainWalks walks;
    walks.start.reserve(getSlots + 1);
    for (std::size_t slot = 0; slot < getSlots; ++slot) {
        walks.start.push_back(static_cast<std::uint32_t>(walks.visits.size()));
        const std::uint32_t id = sampledIds[slot];
        const std::uint64_t order = chainOrder(id);
        for (const auto member : bucketMembers[buckets.of(mix(id))])
            if (member != id && chainOrder(member) < order)
                walks.visits.push_back({ slotOf(member), false });
        if (!walkExpires)
            continue;
        const bool hasTtl = keys[id].hasTtl();
        for (const auto member : expiresMembers[expiresBuckets.of(mix(mix(id)))])
            if (member != id && (!hasTtl || chainOrder(member) < order))
                walks.visits.push_back({ slotOf(member), true });
    }
    walks.start.push_back(static_cast<std::uint32_t>(walks.visits.size()));
    return walks;
}

} // namespace layoutlab
