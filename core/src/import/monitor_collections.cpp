// SPDX-License-Identifier: MIT
#include "monitor_collections.h"

#include <algorithm>

namespace layoutlab::monitor {

std::string_view typeName(KeyValue::Content content) {
    switch (content) {
    case KeyValue::Content::Hash:
        return "a hash";
    case KeyValue::Content::Set:
        return "a set";
    case KeyValue::Content::SortedSet:
        return "a sorted set";
    case KeyValue::Content::List:
        return "a list";
    default:
        return "a string";
    }
}

namespace {
bool contains(std::span<const std::string_view> names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}
// The type whose commands include `name`, or nullptr.
const CollectionCommands* typeModelling(std::string_view name) {
    for (const CollectionCommands* type : { &kHashCommands, &kSetCommands, &kSortedSetCommands, &kListCommands })
        if (contains(type->modelled, name))
            return type;
    return nullptr;
}
} // namespace

bool isCollectionCommand(std::string_view name) {
    return typeModelling(name) != nullptr;
}
bool readsCollectionWhole(std::string_view name) {
    for (const CollectionCommands* type : { &kHashCommands, &kSetCommands, &kSortedSetCommands, &kListCommands })
        if (contains(type->wholeReads, name))
            return true;
    return false;
}

CollectionCommandEffect applyCollectionCommand(
    std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs) {
    const CollectionCommands* type = typeModelling(name);
    return type ? type->apply(name, args, keys, nowMs) : CollectionCommandEffect {};
}

ScoredMembers scoredMembers(const std::unordered_map<std::string, double>& zset) {
    ScoredMembers out;
    out.reserve(zset.size());
    for (const auto& [member, score] : zset)
        out.emplace_back(score, &member);
    return out;
}

bool CollectionCommand::lookUpKey(KeyValue::Content content) {
    m_key = m_keys.find(m_args[1], m_nowMs);
    if (m_key && m_key->present() && m_key->content != content) {
        refuse(std::string(kWrongType), "the key holds " + std::string(typeName(m_key->content)));
        return false;
    }
    return true;
}

KeyValue& CollectionCommand::keyMade(KeyValue::Content content) {
    if (!present()) {
        KeyValue& k = m_key ? *m_key : m_keys.at(m_args[1], m_nowMs);
        k = KeyValue {};
        k.content = content;
        if (content == KeyValue::Content::Hash)
            k.hash = std::make_unique<HashFields>();
        else if (content == KeyValue::Content::Set)
            k.set = std::make_unique<SetMembers>();
        else if (content == KeyValue::Content::SortedSet)
            k.zset = std::make_unique<std::unordered_map<std::string, double>>();
        else
            k.list = std::make_unique<std::deque<std::string>>();
        m_key = &k;
    }
    return *m_key;
}

void CollectionCommand::refuse(std::string reason, std::string detail) {
    m_effect.requests.clear();
    m_effect.refusal = std::move(reason);
    m_effect.detail = std::move(detail);
}

Request CollectionCommand::element(ElementAction action, std::string_view text) {
    Request r;
    r.op = Op::Element;
    r.keyBytes = static_cast<std::uint32_t>(m_args[1].size());
    r.elementBytes = static_cast<std::uint32_t>(text.size());
    m_op = ElementOp { m_kind, action, integerClassOf(text) };
    return r;
}

void CollectionCommand::push(Request r) {
    r.element = m_op.packed();
    m_effect.requests.push_back(r);
}

void CollectionCommand::markRemovalsOfOneCommand(std::size_t first) {
    auto isRemoval = [](const Request& r) {
        return r.op == Op::Element && ElementOp::unpack(r.element).action == ElementAction::Remove;
    };
    auto& requests = m_effect.requests;
    std::size_t last = requests.size();
    for (std::size_t i = first; i < requests.size(); ++i)
        if (isRemoval(requests[i]))
            last = i;
    for (std::size_t i = first; i < last && last < requests.size(); ++i)
        if (isRemoval(requests[i])) {
            ElementOp op = ElementOp::unpack(requests[i].element);
            op.atHead = true;
            requests[i].element = op.packed();
        }
}

void CollectionCommand::command(std::uint64_t elements, std::size_t firstArg, IntegerClass first) {
    std::size_t longest = 0;
    for (std::size_t i = firstArg; i < m_args.size(); ++i)
        longest = std::max(longest, m_args[i].size());
    Request r = element(ElementAction::Command, "");
    r.valueBytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(elements, UINT32_MAX));
    r.elementBytes = static_cast<std::uint32_t>(std::min<std::size_t>(longest, UINT32_MAX));
    m_op.element = first;
    push(r);
}

} // namespace layoutlab::monitor
