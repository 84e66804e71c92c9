// SPDX-License-Identifier: MIT
#include "layoutlab/sim/collection_replay.h"

#include <map>

namespace layoutlab {

CollectionReplay::CollectionReplay(
    const LayoutModel& layout, const AllocatorModel& allocator, const CollectionLimits& limits)
    : CollectionReplay(layout, allocator, std::vector<CollectionLimits> { limits }) { }

CollectionReplay::CollectionReplay(
    const LayoutModel& layout, const AllocatorModel& allocator, std::vector<CollectionLimits> variants)
    : m_layout(&layout)
    , m_allocator(&allocator) {
    if (variants.empty())
        variants.emplace_back();
    for (const CollectionLimits& limits : variants)
        m_variants.push_back(Variant { limits, {}, {} });
}

bool CollectionReplay::holds(std::uint32_t keyId, CollectionKind kind) const {
    const auto& keys = m_variants.front().keys;
    const auto it = keys.find(keyId);
    return it != keys.end() && it->second.kind == kind;
}

Expected<const CollectionKeyModel*> CollectionReplay::modelFor(Variant& variant, CollectionKind kind) {
    auto& model = variant.models[static_cast<std::size_t>(kind)];
    if (!model) {
        auto made = CollectionKeyModel::create(*m_layout, *m_allocator, variant.limits, kind);
        if (!made)
            return made.error();
        model.emplace(std::move(*made));
    }
    return &*model;
}

Expected<bool> CollectionReplay::apply(std::uint32_t keyId, const Request& r, bool created) {
    const ElementOp op = r.elementOp();
    bool emptied = false;
    for (std::size_t i = 0; i < m_variants.size(); ++i) {
        Variant& variant = m_variants[i];
        auto model = modelFor(variant, op.collection);
        if (!model)
            return model.error();
        CollectionKeyState& key = created ? (variant.keys[keyId] = (*model)->created()) : variant.keys.at(keyId);
        const bool left = applyTo(**model, key, r, op);
        if (i == 0)
            emptied = left;
    }
    return emptied;
}

bool CollectionReplay::applyTo(
    const CollectionKeyModel& m, CollectionKeyState& key, const Request& r, const ElementOp& op) {
    const ElementValue element { r.elementBytes, op.element };
    switch (op.action) {
    case ElementAction::Add:
        m.add(key, element, { r.valueBytes, op.value }, op.atHead);
        break;
    case ElementAction::Update:
        if (op.collection == CollectionKind::List) // LSET: its place, the element it replaces, the new one
            m.replaceAt(key, r.valueBytes, { r.priorBytes(), op.prior }, element);
        else
            m.update(key, element, { r.priorBytes(), op.prior }, { r.valueBytes, op.value });
        break;
    case ElementAction::Remove:
        if (op.collection == CollectionKind::Set) // a member has no value: its order instead (request.h)
            m.remove(key, element, {}, { r.valueBytes, r.priorBytes() });
        else if (op.collection == CollectionKind::List && r.valueBytes > 0) // LREM: at its place (request.h)
            m.removeAt(key, r.valueBytes - 1, element);
        else if (op.collection == CollectionKind::List) // a pop, at the head or the tail
            m.remove(key, element, {}, {}, op.atHead);
        else
            m.remove(key, element, { r.priorBytes(), op.prior });
        break;
    case ElementAction::Read:
        m.read(key);
        break;
    case ElementAction::Command:
        m.command(key, r.valueBytes, r.elementBytes, op.element, r.priorBytes()); // request.h
        break;
    case ElementAction::Load:
        m.load(key, r.valueBytes, { op.atHead, op.element, r.priorBytes() });
        break;
    }
    return key.entries == 0 && op.action == ElementAction::Remove;
}

std::vector<CollectionUsage> CollectionReplay::usage(const std::vector<KeyState>& keys, std::size_t variant) const {
    const Variant& v = m_variants.at(variant);
    // The key's own parts depend only on its length and TTL: described once per pair.
    std::map<std::pair<std::uint32_t, bool>, CollectionFootprint> keyOwn;
    std::map<std::pair<CollectionKind, std::string_view>, CollectionUsage> rows;
    for (const auto& [id, state] : v.keys) {
        const CollectionKeyModel& model = *v.models[static_cast<std::size_t>(state.kind)];
        const KeyState& k = keys[id];
        const auto own = std::make_pair(k.keyBytes(), k.hasTtl());
        auto found = keyOwn.find(own);
        if (found == keyOwn.end()) {
            CollectionFootprint f;
            for (const CollectionPart& part : model.keyParts(own.first, own.second)) {
                f.allocations += part.count;
                f.requestedBytes += static_cast<double>(part.requestedBytes) * part.count;
                f.usableBytes += static_cast<double>(m_allocator->usableSize(part.requestedBytes)) * part.count;
            }
            found = keyOwn.emplace(own, f).first;
        }
        const std::string_view encoding = model.encoding(state);
        CollectionUsage& row = rows[{ state.kind, encoding }];
        row.type = collectionKindName(state.kind);
        row.encoding = encoding;
        const CollectionFootprint collection = model.footprint(state);
        ++row.keys;
        row.entries += state.entries;
        row.payloadBytes += k.keyBytes() + state.payloadBytes;
        row.allocations += found->second.allocations + collection.allocations;
        row.requestedBytes += found->second.requestedBytes + collection.requestedBytes;
        row.usableBytes += found->second.usableBytes + collection.usableBytes;
        row.lookupLines += model.lookupLines(state);
    }
    std::vector<CollectionUsage> out;
    for (auto& [kindAndEncoding, row] : rows)
        out.push_back(std::move(row));
    return out;
}

} // namespace layoutlab
