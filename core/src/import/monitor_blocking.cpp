// SPDX-License-Identifier: MIT
#include "monitor_blocking.h"

#include <algorithm>
#include <cmath>

namespace layoutlab::monitor {

namespace {
// The keys a blocking command waits on, and its timeout's text (t_list.c blockingPopGenericCommand,
// blmpopCommand, blmoveCommand, brpoplpushCommand; t_zset.c bzpopMinMaxCommand, bzmpopCommand).
std::pair<std::vector<std::string>, std::string> waitsOn(const std::vector<std::string>& args) {
    const std::string& name = args[0];
    if (name == "BLMPOP" || name == "BZMPOP") {
        const auto numkeys = parseLongLong(args[2]);
        const auto n = static_cast<std::size_t>(numkeys ? std::max<std::int64_t>(*numkeys, 0) : 0);
        return { std::vector<std::string>(args.begin() + 3, args.begin() + 3 + static_cast<std::ptrdiff_t>(n)),
            args[1] };
    }
    if (name == "BLMOVE" || name == "BRPOPLPUSH")
        return { { args[1] }, args.back() };
    return { std::vector<std::string>(args.begin() + 1, args.end() - 1), args.back() };
}
} // namespace

void BlockedClients::block(const std::string& client, const std::vector<std::string>& args, std::uint64_t nowMs) {
    drop(client);
    auto [keys, timeout] = waitsOn(args);
    const auto seconds = parseLongDouble(timeout);
    for (std::string& key : keys)
        key = waitedOn(databaseOf(client), key);
    Waiting w { args, keys, 0 };
    if (seconds && *seconds > 0)
        w.deadlineMs = nowMs + static_cast<std::uint64_t>(std::llround(*seconds * 1000));
    for (const std::string& key : w.keys)
        m_byKey[key].push_back(client);
    m_clients.emplace(client, std::move(w));
}

void BlockedClients::sent(const std::string& client) {
    if (!m_clients.empty())
        drop(client);
}

void BlockedClients::drop(const std::string& client) {
    const auto found = m_clients.find(client);
    if (found == m_clients.end())
        return;
    for (const std::string& key : found->second.keys) {
        auto& queue = m_byKey[key];
        queue.erase(std::remove(queue.begin(), queue.end(), client), queue.end());
        if (queue.empty())
            m_byKey.erase(key);
    }
    m_clients.erase(found);
}

std::vector<CollectionCommandEffect> BlockedClients::serve(
    std::vector<std::string> ready, MonitorKeyspace& keys, std::uint64_t nowMs, std::uint32_t db) {
    std::vector<CollectionCommandEffect> out;
    for (std::size_t next = 0; next < ready.size() && !m_clients.empty(); ++next) {
        const std::string key = waitedOn(db, ready[next]);
        while (true) {
            const auto queue = m_byKey.find(key);
            if (queue == m_byKey.end() || queue->second.empty())
                break;
            const std::string client = queue->second.front();
            const Waiting& w = m_clients.at(client);
            if (w.deadlineMs != 0 && nowMs > w.deadlineMs) { // timed out before the elements came
                drop(client);
                continue;
            }
            // The command run again, as the server runs it for the client it serves (its keys in its order).
            CollectionCommandEffect effect = applyMultiKeyCollectionCommand(w.args[0], w.args, keys, nowMs);
            if (effect.requests.empty() && effect.refusal.empty())
                break; // nothing to take after all: it waits on
            const auto given = keysGivenElements(effect, w.args[1]);
            ready.insert(ready.end(), given.begin(), given.end());
            drop(client); // served, or answered with an error
            out.push_back(std::move(effect));
        }
    }
    return out;
}

std::vector<std::string> BlockedClients::keysWaitedIn(std::uint32_t db) const {
    const std::string prefix = waitedOn(db, "");
    std::vector<std::string> out;
    for (auto it = m_byKey.lower_bound(prefix); it != m_byKey.end() && it->first.starts_with(prefix); ++it)
        out.push_back(it->first.substr(prefix.size()));
    return out;
}

std::size_t BlockedClients::waiting(std::uint64_t nowMs) const {
    return static_cast<std::size_t>(std::count_if(m_clients.begin(), m_clients.end(),
        [nowMs](const auto& c) { return c.second.deadlineMs == 0 || c.second.deadlineMs >= nowMs; }));
}

std::vector<std::string> keysGivenElements(const CollectionCommandEffect& effect, const std::string& firstKey) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < effect.requests.size(); ++i)
        if (effect.requests[i].elementOp().action == ElementAction::Add) {
            const std::string& key = effect.keys.empty() ? firstKey : effect.keys[i];
            if (std::find(out.begin(), out.end(), key) == out.end())
                out.push_back(key);
        }
    return out;
}

} // namespace layoutlab::monitor
