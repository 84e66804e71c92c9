// SPDX-License-Identifier: MIT
#pragma once

// Clients a blocking pop left waiting (BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH, BZPOPMIN, BZPOPMAX, BZMPOP
// that found nothing). A capture shows such a command once, when it is sent; when a later command gives one
// of its keys elements, the server serves the client at once (blocked.c handleClientsBlockedOnKeys, after
// that command) and the capture shows nothing of it. So the importer keeps the waiting clients and serves
// them as the server does: clients waiting on a key in the order they blocked, each while the key has
// elements, before their timeout; a client the capture shows sending anything else has stopped waiting (it
// timed out, or CLIENT UNBLOCK freed it).

#include "monitor_collections.h"

#include <deque>
#include <map>
#include <string>
#include <vector>

namespace layoutlab::monitor {

class BlockedClients {
public:
    // `client` (the capture's "<db> <peer>") waits with its blocking command `args` (upper-case name first),
    // sent at `nowMs`.
    void block(const std::string& client, const std::vector<std::string>& args, std::uint64_t nowMs);
    // `client` sent a command: it waits no more.
    void sent(const std::string& client);
    // The keys `ready` of database `db` got elements at `nowMs`: the clients of that database waiting on them
    // served, in order, each a command's effect (its requests naming their keys); a served client's push
    // (BLMOVE) makes its destination ready.
    std::vector<CollectionCommandEffect> serve(
        std::vector<std::string> ready, MonitorKeyspace& keys, std::uint64_t nowMs, std::uint32_t db);
    bool empty() const { return m_clients.empty(); }
    // The keys of database `db` clients wait on (a SWAPDB makes each of them ready: db.c swapdbCommand,
    // scanDatabaseForReadyKeys).
    std::vector<std::string> keysWaitedIn(std::uint32_t db) const;
    // Clients still waiting at `nowMs` (their timeout not passed).
    std::size_t waiting(std::uint64_t nowMs) const;

private:
    struct Waiting {
        std::vector<std::string> args;
        std::vector<std::string> keys; // as waitedOn lists them
        std::uint64_t deadlineMs = 0; // 0: no timeout
    };
    void drop(const std::string& client);
    // A key as the clients waiting on it are listed: its database's number, then its name.
    static std::string waitedOn(std::uint32_t db, const std::string& key) { return std::to_string(db) + ' ' + key; }

    std::map<std::string, Waiting> m_clients;
    std::map<std::string, std::deque<std::string>> m_byKey; // each key's waiting clients, first blocked first
};

// The keys a command's effect gave elements to (its adds), in the order they did.
std::vector<std::string> keysGivenElements(const CollectionCommandEffect& effect, const std::string& firstKey);

} // namespace layoutlab::monitor
