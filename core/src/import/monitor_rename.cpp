// SPDX-License-Identifier: MIT
// RENAME and RENAMENX in the MONITOR importer's keyspace (db.c renameGenericCommand): the source looked up
// ("no such key" when absent), nothing when it is the destination itself (the reply only), RENAMENX nothing
// when the destination exists; else the destination's value replaced by the source's, whatever either
// holds, the source's TTL with it, and the source gone. The importer then makes the two requests of an
// Op::Rename (request.h).
// MOVE (db.c moveCommand) is a RENAMENX onto the same name in another database: nothing when the source is
// absent or the destination exists, else the value and its TTL moved, in the order a rename moves them on
// every engine line (Redis 7.0-7.2 and Valkey 8.0: dbAdd to the destination, then dbDelete of the source;
// Valkey 8.1+: dbDelete, then dbAdd, in both commands).
// Below, the MonitorImporter's commands that move keys (RENAME, MOVE, COPY, SWAPDB), made of these.

#include "monitor_importer.h"
#include "monitor_keyspace.h"

#include <fmt/format.h>

namespace layoutlab::monitor {

RenameOutcome renameKey(
    MonitorKeyspace& keys, const std::string& from, const std::string& to, bool nx, std::uint64_t nowMs) {
    KeyValue* source = keys.find(from, nowMs);
    if (!source)
        return RenameOutcome::Unseen;
    if (!source->present())
        return RenameOutcome::NoSuchKey;
    if (from == to)
        return RenameOutcome::Unchanged;
    KeyValue& destination = keys.at(to, nowMs);
    if ((nx && destination.present()) || &destination == source) // a name whose hash is the source's too
        return RenameOutcome::Unchanged;
    destination = std::move(*source);
    *source = KeyValue {};
    return RenameOutcome::Renamed;
}

RenameOutcome moveKey(MonitorKeyspace& keys, const std::string& key, std::uint32_t toHolder, std::uint64_t nowMs) {
    KeyValue* source = keys.find(key, nowMs);
    if (!source)
        return RenameOutcome::Unseen;
    if (!source->present())
        return RenameOutcome::NoSuchKey;
    KeyValue& destination = keys.atIn(key, toHolder, nowMs);
    if (destination.present() || &destination == source)
        return RenameOutcome::Unchanged;
    destination = std::move(*source);
    *source = KeyValue {};
    return RenameOutcome::Renamed;
}

} // namespace layoutlab::monitor

namespace layoutlab::monitor {

void MonitorImporter::rename(bool nx) {
    switch (monitor::renameKey(m_keys, m_args[1], m_args[2], nx, m_absoluteMs)) {
    case monitor::RenameOutcome::Unseen:
        return noteCommand(m_rejects.unseenKeys, m_name);
    case monitor::RenameOutcome::NoSuchKey:
        return refuse("no such key", m_args[1]);
    case monitor::RenameOutcome::Unchanged:
        return;
    case monitor::RenameOutcome::Renamed:
        break;
    }
    emitRename(m_args[1], m_args[2], m_keys.database());
    serveMoved(m_args[2], m_db);
}

void MonitorImporter::emitRename(const std::string& from, const std::string& to, std::uint32_t toHolder) {
    Request source = base(from, Op::Rename);
    source.valueBytes = kRenameSource;
    emit(source);
    Request destination = base(to, Op::Rename);
    destination.valueBytes = kRenameDestination;
    emitIn(destination, toHolder);
}

void MonitorImporter::serveMoved(const std::string& key, std::uint32_t db) {
    if (m_blocked.empty())
        return;
    const monitor::KeyValue* moved = m_keys.findIn(key, m_keys.holderOf(db), m_absoluteMs);
    if (moved && moved->content == monitor::KeyValue::Content::List)
        serveWaitingIn(db, { key }); // signalKeyAsReady
}

void MonitorImporter::serveWaitingIn(std::uint32_t db, std::vector<std::string> ready) {
    m_keys.setDatabase(db); // the served commands name keys of the clients' database
    for (const auto& served : m_blocked.serve(std::move(ready), m_keys, m_absoluteMs, db))
        emitEffect(served);
    m_keys.setDatabase(m_db);
}

std::optional<std::uint32_t> MonitorImporter::databaseArgument(const std::string& text, const char* invalid) {
    const auto n = monitor::parseLongLong(text);
    if (!n || *n < INT32_MIN || *n > INT32_MAX) {
        refuse(invalid, "'" + text.substr(0, 40) + "'");
        return std::nullopt;
    }
    if (*n < 0 || *n >= m_databases) {
        refuse("DB index is out of range", fmt::format("{}", *n));
        return std::nullopt;
    }
    return static_cast<std::uint32_t>(*n);
}

void MonitorImporter::move() {
    const auto to = databaseArgument(m_args[2], "value is not an integer or out of range");
    if (!to)
        return;
    if (*to == m_db)
        return refuse("source and destination objects are the same", m_args[2]);
    const std::uint32_t toHolder = m_keys.holderOf(*to);
    switch (monitor::moveKey(m_keys, m_args[1], toHolder, m_absoluteMs)) {
    case monitor::RenameOutcome::Unseen:
        return noteCommand(m_rejects.unseenKeys, m_name);
    case monitor::RenameOutcome::NoSuchKey:
    case monitor::RenameOutcome::Unchanged:
        return; // the reply 0: nothing moved
    case monitor::RenameOutcome::Renamed:
        break;
    }
    emitRename(m_args[1], m_args[1], toHolder);
    serveMoved(m_args[1], *to);
}

void MonitorImporter::copy() {
    const auto& a = m_args;
    std::uint32_t to = m_db;
    bool replace = false;
    for (std::size_t i = 3; i < a.size(); ++i) {
        if (equalsIgnoreCase(a[i], "REPLACE")) {
            replace = true;
        } else if (equalsIgnoreCase(a[i], "DB") && i + 1 < a.size()) {
            const auto db = databaseArgument(a[++i], "value is not an integer or out of range");
            if (!db)
                return;
            to = *db;
        } else {
            return refuse("syntax error", "option '" + a[i].substr(0, 40) + "'");
        }
    }
    if (to == m_db && a[1] == a[2])
        return refuse("source and destination objects are the same", a[1]);
    const monitor::KeyValue* source = lookup(a[1]);
    if (!source || !source->present())
        return; // the reply 0
    const std::uint32_t toHolder = m_keys.holderOf(to);
    monitor::KeyValue& destination = m_keys.atIn(a[2], toHolder, m_absoluteMs);
    if (&destination == source || (destination.present() && !replace))
        return;
    if (source->isCollection()) { // the pair of an Op::Rename, its destination's a copy (request.h)
        destination = source->copy();
        emit(base(a[1], Op::Rename)); // valueBytes kRenameSource
        Request r = base(a[2], Op::Rename);
        r.valueBytes = kCopyDestination;
        emitIn(r, toHolder);
        serveMoved(a[2], to);
        return;
    }
    if (destination.present())
        emitIn(base(a[2], Op::Delete), toHolder);
    destination = source->copy();
    const std::uint32_t ttl = destination.expireAtMs != 0 ? secondsUntil(destination.expireAtMs) : 0;
    if (destination.raw) { // an sds of exactly its length, as SETRANGE makes one (setrangeCommand), then its TTL
        Request r = base(a[2], Op::SetRange);
        r.valueBytes = static_cast<std::uint32_t>(destination.length);
        emitIn(r, toHolder);
        if (ttl != 0) {
            Request e = base(a[2], Op::Expire);
            e.ttlSeconds = ttl;
            emitIn(e, toHolder);
        }
        return;
    }
    Request r = base(a[2], Op::Set);
    r.valueBytes = static_cast<std::uint32_t>(destination.length);
    // An integer's copy is an object of its own, never a shared one.
    r.kind = destination.content == monitor::KeyValue::Content::Integer ? ValueKind::Integer : ValueKind::String;
    r.ttlSeconds = ttl;
    emitIn(r, toHolder);
}

void MonitorImporter::swapDatabases() {
    const auto first = databaseArgument(m_args[1], "invalid first DB index");
    const auto second = first ? databaseArgument(m_args[2], "invalid second DB index") : std::nullopt;
    if (!second)
        return;
    m_keys.swapDatabases(*first, *second);
    // Nothing in memory changes (the server exchanges the two databases' tables); clients waiting in either
    // find the keys the other held.
    for (const std::uint32_t db : { *first, *second })
        if (!m_blocked.empty())
            serveWaitingIn(db, m_blocked.keysWaitedIn(db));
}

} // namespace layoutlab::monitor
