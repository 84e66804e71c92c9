// SPDX-License-Identifier: MIT
#include "layoutlab/collect/union_rebuild.h"

#include "layoutlab/collect/element_commands.h"

#include <fmt/format.h>
#include <iterator>

namespace layoutlab {

namespace {
// No trace key's name holds byte 0x7f (trace_keys.cpp: printable characters, or "key:" and digits).
std::string sourceKey(std::size_t i) {
    return fmt::format("\x7funion-source-{}", i);
}
} // namespace

void UnionRebuild::source(std::uint64_t total) {
    if (!m_started) {
        m_started = true;
        m_left = total;
    }
    for (auto& [shape, names] : m_current)
        for (auto& name : names)
            m_earlier[shape].push_back(std::move(name));
    m_current.clear();
    m_reused.clear();
    m_place = 0;
    m_sources.emplace_back();
}

std::string UnionRebuild::met(std::string score) {
    if (m_left > 0)
        --m_left;
    const std::uint64_t place = m_place++;
    return m_endsSkiplist ? std::to_string(place) : std::move(score);
}

void UnionRebuild::added(std::string score, std::string name, std::uint64_t shape) {
    if (m_sources.empty())
        m_sources.emplace_back();
    if (m_endsSkiplist) // named again by later sources (found)
        m_current[shape].push_back(name);
    m_sources.back().push_back(met(std::move(score)));
    m_sources.back().push_back(std::move(name));
}

bool UnionRebuild::found(std::uint64_t shape) {
    std::string score = met({});
    if (!m_endsSkiplist)
        return true; // one ZADD of the new members: nothing to name
    const auto earlier = m_earlier.find(shape);
    std::size_t& reused = m_reused[shape];
    if (m_sources.empty() || earlier == m_earlier.end() || reused == earlier->second.size())
        return false;
    m_sources.back().push_back(std::move(score));
    m_sources.back().push_back(earlier->second[reused++]);
    return true;
}

void UnionRebuild::send(std::vector<Command>& out) {
    std::erase_if(m_sources, [](const Command& pairs) { return pairs.empty(); });
    if (m_sources.empty())
        return;
    if (!m_endsSkiplist) {
        Command add { "ZADD", m_key };
        for (Command& pairs : m_sources)
            add.insert(add.end(), std::make_move_iterator(pairs.begin()), std::make_move_iterator(pairs.end()));
        out.push_back(std::move(add));
        m_sources.clear();
        return;
    }
    Command command { "ZUNIONSTORE", m_key, std::to_string(m_sources.size()) };
    Command removal { "DEL" };
    for (std::size_t i = 0; i < m_sources.size(); ++i) {
        const std::string key = i + 1 == m_sources.size() ? m_key : sourceKey(i);
        Command add { "ZADD", key };
        add.insert(
            add.end(), std::make_move_iterator(m_sources[i].begin()), std::make_move_iterator(m_sources[i].end()));
        out.push_back(std::move(add));
        command.push_back(key);
        if (key != m_key)
            removal.push_back(key);
    }
    command.push_back("AGGREGATE");
    command.push_back("MIN");
    out.push_back(std::move(command));
    if (removal.size() > 1)
        out.push_back(std::move(removal));
    m_sources.clear();
}

// The writer's side: a union's requests, each one's member named and scored (element_commands.h).
void ElementCommandWriter::sendUnion(std::vector<Command>& out) {
    if (m_union)
        m_union->send(out);
    m_union.reset();
}

Status ElementCommandWriter::unionWrite(const Request& r, std::vector<Command>& out) {
    const ElementOp op = r.elementOp();
    if (op.action == ElementAction::Size) {
        m_union->source(r.priorBytes());
        return Ok {};
    }
    const std::uint64_t shape = shapeKey(r.elementBytes, op.element);
    if (op.action == ElementAction::Read) {
        if (!m_union->found(shape))
            ++m_approximated;
    } else {
        Key& state = keyOf(r.keyId);
        std::string name = newName(state, r.elementBytes, op.element);
        ++state.elements;
        state.held[Shape { r.elementBytes, r.valueBytes, op.element, op.value }].push_back(name);
        m_union->added(
            m_union->endsSkiplist() ? std::string {} : score(r.valueBytes, op.value), std::move(name), shape);
    }
    if (m_union->complete())
        sendUnion(out);
    return Ok {};
}

} // namespace layoutlab
