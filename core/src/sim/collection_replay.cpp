// SPDX-License-Identifier: MIT
#include "layoutlab/sim/collection_replay.h"

#include "layoutlab/sim/limit_sweep.h"
#include "layoutlab/trace/random.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

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
    // The limit the variants differ by; sharing keys needs one, and one whose values order.
    std::vector<std::string_view> differing;
    for (const std::string_view name : allCollectionLimitNames())
        for (const Variant& v : m_variants)
            if (collectionLimit(v.limits, name) != collectionLimit(m_variants.front().limits, name)) {
                differing.push_back(name);
                break;
            }
    if (m_variants.size() < 2 || differing.size() != 1 || differing.front() == "list-max-listpack-size")
        return;
    const std::string_view name = differing.front();
    Swept swept;
    swept.kind = name.starts_with("hash") ? CollectionKind::Hash
        : name.starts_with("zset")        ? CollectionKind::SortedSet
                                          : CollectionKind::Set;
    swept.entries = name.ends_with("-entries");
    swept.smallest = collectionLimit(m_variants.front().limits, name);
    for (std::size_t i = 1; i < m_variants.size(); ++i)
        if (const auto v = collectionLimit(m_variants[i].limits, name); v < swept.smallest) {
            swept.smallest = v;
            swept.smallestVariant = i;
        }
    m_swept = swept;
    m_sweptName = std::string(name);
}

std::int64_t CollectionReplay::sweptValue(std::size_t variant) const {
    return collectionLimit(m_variants[variant].limits, m_sweptName);
}

namespace {
// Whether two states of a key are the same in every respect the models follow. Not the reallocations made in
// place so far: only the first variant's feed the slab model, and two states alike from here on are alike to it.
bool sameState(const CollectionKeyState& a, const CollectionKeyState& b) {
    if (a.made != b.made || a.table != b.table || a.intsetWidth != b.intsetWidth || a.entries != b.entries
        || a.payloadBytes != b.payloadBytes || a.listpackBytes != b.listpackBytes
        || a.entryAllocations != b.entryAllocations || a.entryRequestedBytes != b.entryRequestedBytes
        || a.entryUsableBytes != b.entryUsableBytes || a.entryUsableVariance != b.entryUsableVariance
        || a.entrySizes != b.entrySizes || a.argvEntries != b.argvEntries || a.strandedEntries != b.strandedEntries
        || a.strandedUnmoved != b.strandedUnmoved || a.strandedTable != b.strandedTable || a.adds != b.adds
        || a.orderBase != b.orderBase || a.orderBuckets != b.orderBuckets || a.loadRemaining != b.loadRemaining
        || a.loadLongest != b.loadLongest || a.unionAddsLeft != b.unionAddsLeft || a.compactEntries != b.compactEntries
        || bool(a.index) != bool(b.index))
        return false;
    return !a.index || a.index->sameAs(*b.index);
}
} // namespace

bool CollectionReplay::mightConvert(const Group& group, const Request& r, const ElementOp& op) const {
    if (op.collection != m_swept->kind || op.action == ElementAction::Remove || op.action == ElementAction::Read)
        return false; // another type's keys, and removals and lookups, convert alike under every value
    if (op.action == ElementAction::Size) // SINTERSTORE's result of integers: an intset within the limit (request.h)
        return op.collection == CollectionKind::Set && r.valueBytes != 0;
    const CollectionKeyState& key = group.state;
    if (key.table)
        return false; // a table stays one
    if (!key.made)
        return true; // the first command chooses the encoding, by the limits
    const auto smallest = static_cast<std::uint64_t>(std::max<std::int64_t>(group.smallest, 0));
    if (m_swept->entries) {
        const bool hinted = op.action == ElementAction::Command || op.action == ElementAction::Load;
        return key.entries + (hinted ? std::uint64_t { r.valueBytes } : 1) > smallest;
    }
    // A key loaded from a snapshot converts after its last element by the longest of them all (rdb.c), and an
    // intset joined by a string by the longest member it holds (t_set.c maxelelen).
    const bool scores = op.collection == CollectionKind::SortedSet; // a score's lengths packed (request.h)
    const std::uint32_t value = scores ? shortestScoreBytes(r.valueBytes) : r.valueBytes;
    const std::uint32_t prior = scores ? shortestScoreBytes(r.priorBytes()) : r.priorBytes();
    if (std::max({ r.elementBytes, value, prior, key.loadLongest }) > smallest)
        return true;
    const auto& model = m_variants[group.smallestVariant].models[static_cast<std::size_t>(op.collection)];
    return model && model->longestCompactElement(key) > smallest;
}

Status CollectionReplay::part(const Group& group, const CollectionKeyState& before, CollectionKeyState&& applied,
    const Request& r, const ElementOp& op, std::vector<Group>& out) {
    const std::size_t first = out.size();
    auto place = [&](std::size_t variant, CollectionKeyState&& state) {
        for (std::size_t g = first; g < out.size(); ++g)
            if (sameState(out[g].state, state)) {
                out[g].variants.set(variant);
                if (sweptValue(variant) < out[g].smallest) {
                    out[g].smallest = sweptValue(variant);
                    out[g].smallestVariant = variant;
                }
                return;
            }
        Group g { std::move(state), {}, sweptValue(variant), variant };
        g.variants.set(variant);
        out.push_back(std::move(g));
    };
    place(group.smallestVariant, std::move(applied));
    for (std::size_t i = 0; i < m_variants.size(); ++i) {
        if (!group.variants.test(i) || i == group.smallestVariant)
            continue;
        auto own = modelFor(m_variants[i], op.collection);
        if (!own)
            return own.error();
        CollectionKeyState mine = copyOf(before);
        applyTo(**own, mine, r, op);
        place(i, std::move(mine));
    }
    return Ok {};
}

Expected<bool> CollectionReplay::applyGrouped(
    std::uint32_t keyId, const Request& r, const ElementOp& op, bool created, bool startsCommand) {
    std::vector<Group>& groups = m_grouped[keyId];
    if (created) {
        groups.clear();
        Group all;
        for (std::size_t i = 0; i < m_variants.size(); ++i)
            all.variants.set(i);
        all.smallest = m_swept->smallest;
        all.smallestVariant = m_swept->smallestVariant;
        groups.push_back(std::move(all));
    }
    std::optional<bool> emptied;
    std::vector<Group> parted;
    for (Group& group : groups) {
        auto model = modelFor(m_variants[group.smallestVariant], op.collection);
        if (!model)
            return model.error();
        if (created)
            group.state = (*model)->created();
        const bool check = mightConvert(group, r, op);
        CollectionKeyState before = check ? copyOf(group.state) : CollectionKeyState {};
        const std::string_view encoding = check && before.made ? (*model)->encoding(before) : std::string_view();
        const bool left = applyTo(**model, group.state, r, op, startsCommand);
        if (!emptied)
            emptied = left;
        // The smallest value keeps the encoding: every value does; but a larger limit may make a set compact
        // where the smallest leaves it a table (SINTERSTORE's end: a Size), so that one is parted.
        const bool keeps = (*model)->encoding(group.state) == encoding && op.action != ElementAction::Size;
        if (!check || (before.made && !left && keeps)) {
            parted.push_back(std::move(group));
            continue;
        }
        if (auto ok = part(group, before, std::move(group.state), r, op, parted); !ok)
            return ok.error();
    }
    groups = std::move(parted);
    return emptied.value_or(false);
}

CollectionReplay::FirstState CollectionReplay::firstState(std::uint32_t keyId) const {
    const Variant& first = m_variants.front();
    if (m_applied && m_appliedKey == keyId)
        return { m_applied, &first };
    if (auto found = first.keys.find(keyId); found != first.keys.end())
        return { &found->second, &first };
    if (auto groups = m_grouped.find(keyId); groups != m_grouped.end())
        for (const Group& g : groups->second)
            if (g.variants.test(0))
                return { &g.state, &m_variants[g.smallestVariant] };
    return {};
}

bool CollectionReplay::holds(std::uint32_t keyId, CollectionKind kind) const {
    const CollectionKeyState* state = firstState(keyId).state;
    return state && state->kind == kind;
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

void CollectionReplay::copy(std::uint32_t from, std::uint32_t to) {
    m_applied = nullptr;
    erase(to);
    // A state is held only where its kind's model was made (apply), so each copy has its model at hand.
    const auto modelOf = [](const Variant& v, CollectionKind kind) -> const CollectionKeyModel& {
        return *v.models[static_cast<std::size_t>(kind)];
    };
    // A copy does not convert, so a group's variants hold it alike: each group's copy is made under the
    // model of its smallest value.
    if (const auto groups = m_grouped.find(from); groups != m_grouped.end()) {
        std::vector<Group> copies;
        copies.reserve(groups->second.size());
        for (const Group& g : groups->second)
            copies.push_back({ modelOf(m_variants[g.smallestVariant], g.state.kind).duplicated(g.state), g.variants,
                g.smallest, g.smallestVariant });
        m_grouped.emplace(to, std::move(copies));
    }
    for (Variant& variant : m_variants)
        if (const auto source = variant.keys.find(from); source != variant.keys.end())
            variant.keys.emplace(to, modelOf(variant, source->second.kind).duplicated(source->second));
}

void CollectionReplay::setLost(std::uint32_t keyId, std::uint64_t lost) {
    if (keyId >= m_lost.size()) {
        if (lost == 0)
            return;
        m_lost.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_lost.size() * 2));
    }
    std::uint32_t& held = m_lost[keyId];
    m_keysWithLost += (lost != 0) - (held != 0);
    held = static_cast<std::uint32_t>(std::min<std::uint64_t>(lost, UINT32_MAX));
}

void CollectionReplay::evicted(std::uint32_t keyId, std::uint64_t lostElements) {
    if (m_elementsMayBeGone)
        setLost(keyId, lostElements);
}

std::uint64_t CollectionReplay::namedByTrace(std::uint32_t keyId) const {
    const CollectionKeyState* state = firstState(keyId).state;
    if (state && state->kind == CollectionKind::List)
        return 0; // a list's pops take what it holds at its ends: nothing it lost is named
    return (state ? state->entries : 0) + lostOf(keyId);
}

void CollectionReplay::lostElementRemoved(std::uint32_t keyId) {
    if (const std::uint64_t lost = lostOf(keyId))
        setLost(keyId, lost - 1);
}

std::uint64_t CollectionReplay::entries(std::uint32_t keyId) const {
    const CollectionKeyState* state = firstState(keyId).state;
    return state ? state->entries : 0;
}

bool CollectionReplay::namesLostElement(std::uint32_t keyId, const ElementOp& op, std::uint64_t held) {
    if (op.collection == CollectionKind::List
        || (op.action != ElementAction::Update && op.action != ElementAction::Remove))
        return false;
    const std::uint64_t lost = lostOf(keyId);
    if (lost == 0)
        return false;
    std::uint64_t draw = std::uint64_t { keyId } << 32 ^ m_lostDraws++;
    if (Random::splitmix64(draw) % (lost + held) >= lost)
        return false;
    setLost(keyId, lost - 1);
    return true;
}

Expected<bool> CollectionReplay::apply(std::uint32_t keyId, const Request& r, bool created, bool startsCommand) {
    ElementOp op = r.elementOp();
    if (m_keysWithLost != 0 && namesLostElement(keyId, op, created ? 0 : entries(keyId))) [[unlikely]] {
        if (op.action == ElementAction::Remove)
            return false; // HDEL, SREM, ZREM of what the key lost with its eviction: nothing
        // An HSET or ZADD of it: a new element (the key made again with it when it was gone).
        Request added = r;
        op.action = ElementAction::Add;
        op.prior = IntegerClass::None;
        added.element = op.packed();
        added.ttlSeconds = 0;
        return apply(keyId, added, created, startsCommand);
    }
    if (m_swept)
        return applyGrouped(keyId, r, op, created, startsCommand);
    bool emptied = false;
    for (std::size_t i = 0; i < m_variants.size(); ++i) {
        Variant& variant = m_variants[i];
        auto model = modelFor(variant, op.collection);
        if (!model)
            return model.error();
        CollectionKeyState& key = created ? (variant.keys[keyId] = (*model)->created()) : variant.keys.at(keyId);
        const bool left = applyTo(**model, key, r, op, startsCommand);
        if (i == 0) {
            emptied = left;
            m_appliedKey = keyId;
            m_applied = &key;
        }
    }
    return emptied;
}

bool CollectionReplay::applyTo(const CollectionKeyModel& m, CollectionKeyState& key, const Request& r,
    const ElementOp& op, bool startsCommand) const {
    const ElementValue element { r.elementBytes, op.element };
    if (m_elementsMayBeGone && (op.action == ElementAction::Update || op.action == ElementAction::Remove)) {
        const bool list = op.collection == CollectionKind::List;
        const ElementValue held
            = op.collection == CollectionKind::Set ? ElementValue {} : ElementValue { r.priorBytes(), op.prior };
        // A list's element by its place (request.h): LSET's from the head, LREM's one after it, a pop's any.
        const std::uint64_t place = op.action == ElementAction::Update ? r.valueBytes + 1 : r.valueBytes;
        if (list ? key.entries == 0 || place > key.entries : !m.holds(key, element, held)) {
            if (op.action == ElementAction::Update && !list)
                m.add(key, element, { r.valueBytes, op.value });
            return key.entries == 0 && op.action == ElementAction::Remove;
        }
    }
    switch (op.action) {
    case ElementAction::Add:
        if (op.collection == CollectionKind::List && r.priorBytes() > 0) { // LINSERT beside a pivot (request.h)
            m.insertAt(key, r.priorBytes() - 1, op.atHead, element);
            return key.entries == 0; // a pivot the budget's replay no longer holds: nothing made
        }
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
            m.remove(key, element, {}, { r.valueBytes, r.priorBytes() }, op.atHead);
        else if (op.collection == CollectionKind::List && r.valueBytes > 0) // LREM: at its place (request.h)
            m.removeAt(key, r.valueBytes - 1, element);
        else if (op.collection == CollectionKind::List) // a pop, at the head or the tail
            m.remove(key, element, {}, {}, op.atHead, false, !startsCommand);
        else // atHead: more removals of the same command follow; a sorted set's range in valueBytes (request.h)
            m.remove(key, element, { r.priorBytes(), op.prior }, {}, op.atHead,
                op.collection == CollectionKind::SortedSet && r.valueBytes == kRemovedByRange);
        break;
    case ElementAction::Read:
        m.read(key, r.valueBytes == kRandomDraw,
            op.collection != CollectionKind::Hash && op.collection != CollectionKind::List
                && r.valueBytes == kFoundForInsert);
        break;
    case ElementAction::Command:
        if (op.collection == CollectionKind::SortedSet && op.atHead) // ZUNIONSTORE's result (request.h)
            m.unionCommand(key, r.valueBytes, r.elementBytes, r.priorBytes());
        else
            m.command(key, r.valueBytes, r.elementBytes, op.element, r.priorBytes());
        break;
    case ElementAction::Load:
        m.load(key, r.valueBytes, { op.atHead, op.element, r.priorBytes() });
        break;
    case ElementAction::Size:
        m.knownSize(key, r.valueBytes, element);
        break;
    }
    return key.entries == 0 && op.action == ElementAction::Remove;
}

std::vector<SizedAllocations> CollectionReplay::allocations(
    std::uint32_t keyId, std::uint32_t keyBytes, bool hasTtl, std::uint64_t* reallocatedBytes) const {
    const auto [state, of] = firstState(keyId);
    if (!state)
        return {};
    if (reallocatedBytes)
        *reallocatedBytes = state->reallocatedBytes;
    const CollectionKeyModel& model = *of->models[static_cast<std::size_t>(state->kind)];
    std::vector<SizedAllocations> out;
    for (const CollectionPart& part : keyParts(model, keyBytes, hasTtl))
        out.push_back({ part.requestedBytes, part.count });
    for (const SizedAllocations& a : model.allocations(*state))
        out.push_back(a);
    return out;
}

const std::vector<CollectionPart>& CollectionReplay::keyParts(
    const CollectionKeyModel& model, std::uint32_t keyBytes, bool hasTtl) const {
    auto [own, isNew] = m_keyParts.try_emplace(std::uint64_t { keyBytes } << 1 | (hasTtl ? 1 : 0));
    if (isNew)
        own->second = model.keyParts(keyBytes, hasTtl);
    return own->second;
}

std::uint64_t CollectionReplay::usableBytes(std::uint32_t keyId, std::uint32_t keyBytes, bool hasTtl) const {
    double bytes = 0;
    for (const SizedAllocations& a : allocations(keyId, keyBytes, hasTtl))
        bytes += static_cast<double>(m_allocator->usableSize(a.bytes)) * a.count;
    return static_cast<std::uint64_t>(std::llround(bytes));
}

std::vector<CollectionUsage> CollectionReplay::usage(const std::vector<KeyState>& keys, std::size_t variant) const {
    const Variant& v = m_variants.at(variant);
    // The key's own parts' sums, by its length and TTL (keyParts' key), each pair's once.
    std::map<std::uint64_t, CollectionFootprint> keyOwn;
    std::map<std::pair<CollectionKind, std::string_view>, CollectionUsage> rows;
    auto add = [&](const Variant& of, std::uint32_t id, const CollectionKeyState& state) {
        const CollectionKeyModel& model = *of.models[static_cast<std::size_t>(state.kind)];
        const KeyState& k = keys[id];
        auto [found, isNew] = keyOwn.try_emplace(std::uint64_t { k.keyBytes() } << 1 | (k.hasTtl() ? 1 : 0));
        if (isNew)
            for (const CollectionPart& part : keyParts(model, k.keyBytes(), k.hasTtl())) {
                CollectionFootprint& f = found->second;
                f.allocations += part.count;
                f.requestedBytes += static_cast<double>(part.requestedBytes) * part.count;
                f.usableBytes += static_cast<double>(m_allocator->usableSize(part.requestedBytes)) * part.count;
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
        row.bucketArrayBytes += collection.bucketArrayBytes;
        row.usableBytesVariance += collection.usableBytesVariance;
        row.lookupLines += model.lookupLines(state);
    };
    // In key order, so that the sums are the same bits whichever keys a variant shares (a run of one value
    // gives exactly what the sweep gives for it). A group's state is described by the model of the variant it
    // was applied under: encodings and footprints do not depend on the limits, only the decisions do.
    std::vector<std::tuple<std::uint32_t, const Variant*, const CollectionKeyState*>> ordered;
    ordered.reserve(v.keys.size() + m_grouped.size());
    for (const auto& [id, state] : v.keys)
        ordered.emplace_back(id, &v, &state);
    for (const auto& [id, groups] : m_grouped)
        for (const Group& g : groups)
            if (g.variants.test(variant))
                ordered.emplace_back(id, &m_variants[g.smallestVariant], &g.state);
    std::sort(
        ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    for (const auto& [id, of, state] : ordered)
        add(*of, id, *state);
    std::vector<CollectionUsage> out;
    for (auto& [kindAndEncoding, row] : rows)
        out.push_back(std::move(row));
    return out;
}

} // namespace layoutlab
