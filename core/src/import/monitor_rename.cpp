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

#include "monitor_keyspace.h"

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
