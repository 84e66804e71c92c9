// SPDX-License-Identifier: MIT
#include "reference_collections.h"

#include "layoutlab/sim/slab_index.h"

#include <cstring>

namespace layoutlab {

ReferenceCollections::ReferenceCollections(
    JemallocArena& arena, ReferenceIndex& keys, ReferenceIndex& expires, const Setup& setup)
    : m_arena(arena)
    , m_index(keys)
    , m_expires(expires)
    , m_setup(setup)
    , m_argumentClasses(*setup.layout, *setup.allocator, setup.threshold) { }

ReferenceCollections::~ReferenceCollections() {
    releaseArguments();
    for (auto& [keyId, key] : m_keys)
        freeRegions(key);
}

ReferenceCollections::Region ReferenceCollections::allocate(std::uint32_t classIndex) {
    // The class's own size: the region a request of any size in the class gets.
    const std::uint64_t bytes = m_setup.allocator->table().classes()[classIndex].size;
    void* pointer = m_arena.allocate(bytes);
    m_usableBytes += bytes;
    return { pointer, classIndex };
}

void ReferenceCollections::release(const Region& region) {
    m_usableBytes -= m_setup.allocator->table().classes()[region.classIndex].size;
    m_arena.release(region.pointer);
}

void ReferenceCollections::freeRegions(Key& key) {
    for (const Region& region : key.regions.held)
        release(region);
    key.regions.held.clear();
}

void ReferenceCollections::tag(StandIn& standIn, std::uint32_t keyId) const {
    standIn.tag = keyId;
    const void* behind = &standIn.tag;
    auto place = [&](unsigned char* entry, bool holdsTag) {
        if (holdsTag)
            std::memcpy(entry, &keyId, sizeof keyId);
        else
            std::memcpy(entry, &behind, sizeof behind);
    };
    place(standIn.keyEntry, m_setup.keysHoldTag);
    place(standIn.expireEntry, m_setup.expiresHoldTag);
}

bool ReferenceCollections::store(std::uint32_t keyId, const std::uint32_t* words, bool hasTtl, bool newCommand) {
    if (newCommand)
        releaseArguments();
    const CollectionCensus census(words);
    m_argumentClasses.allocate(census, [this](std::uint32_t c) { m_arguments.push_back(allocate(c)); });
    auto [it, isNew] = m_keys.try_emplace(keyId);
    Key& key = it->second;
    m_freeing.clear();
    changeHeldRegions(key.regions, keyId, census, m_next, m_freeing, [this](std::uint32_t c) { return allocate(c); });
    // The key joins the keyspace once its value is made (db.c dbAdd), its TTL's entry with it; then what the
    // change freed (as the slab model's SlabReplay::storeCollection).
    const std::uint64_t hash = SlabIndex::hashOf(keyId);
    if (isNew) {
        tag(*key.standIn, keyId);
        m_index.insert(hash, key.standIn->keyEntry);
    }
    const bool hasExpire = hasTtl && m_setup.expiresTable;
    if (hasExpire && !key.regions.inExpires)
        m_expires.insert(hash, key.standIn->expireEntry);
    else if (!hasExpire && key.regions.inExpires)
        m_expires.erase(hash, key.standIn->expireEntry);
    key.regions.inExpires = hasExpire;
    for (const Region& freed : m_freeing)
        release(freed);
    return isNew;
}

void ReferenceCollections::releaseArguments() {
    const std::size_t n = m_arguments.size();
    for (std::size_t i = 1; i <= n; ++i)
        release(m_arguments[i % n]);
    m_arguments.clear();
}

void ReferenceCollections::move(std::uint32_t from, std::uint32_t to) {
    auto node = m_keys.extract(from);
    if (!node)
        return;
    // The source's entries go (dbDelete of the name, the value kept), the destination's come (dbAdd).
    Key& key = node.mapped();
    m_index.erase(SlabIndex::hashOf(from), key.standIn->keyEntry);
    if (key.regions.inExpires)
        m_expires.erase(SlabIndex::hashOf(from), key.standIn->expireEntry);
    key.regions.inExpires = false;
    tag(*key.standIn, to);
    m_index.insert(SlabIndex::hashOf(to), key.standIn->keyEntry);
    node.key() = to;
    m_keys.insert(std::move(node));
}

bool ReferenceCollections::remove(std::uint32_t keyId) {
    auto found = m_keys.find(keyId);
    if (found == m_keys.end())
        return false;
    const std::uint64_t hash = SlabIndex::hashOf(keyId);
    m_index.erase(hash, found->second.standIn->keyEntry);
    if (found->second.regions.inExpires)
        m_expires.erase(hash, found->second.standIn->expireEntry);
    freeRegions(found->second);
    m_keys.erase(found);
    return true;
}

std::optional<ReferenceCollections::Entries> ReferenceCollections::entriesOf(std::uint32_t keyId) const {
    const auto found = m_keys.find(keyId);
    if (found == m_keys.end())
        return std::nullopt;
    StandIn& standIn = *found->second.standIn;
    return Entries { standIn.keyEntry, found->second.regions.inExpires ? standIn.expireEntry : nullptr };
}

void ReferenceCollections::drop(std::uint32_t keyId) {
    if (auto found = m_keys.find(keyId); found != m_keys.end()) {
        freeRegions(found->second);
        m_keys.erase(found);
    }
}

} // namespace layoutlab
