// SPDX-License-Identifier: MIT
// RENAME and RENAMENX in the MONITOR importer's keyspace (db.c renameGenericCommand): the source looked up
// ("no such key" when absent), nothing when it is the destination itself (the reply only), RENAMENX nothing
// when the destination exists; else the destination's value replaced by the source's, whatever either
// holds, the source's TTL with it, and the source gone. The importer then makes the two requests of an
// Op::Rename (request.h).

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

} // namespace layoutlab::monitor
