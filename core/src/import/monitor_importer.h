// SPDX-License-Identifier: MIT
#pragma once

// The MONITOR importer's class (monitor_importer.cpp: the lines, the command dispatch, SET and the commands
// on several keys; monitor_strings.cpp: the other string commands), shared by the files that implement it.

#include "line_importer.h"
#include "monitor_blocking.h"
#include "monitor_collections.h"
#include "monitor_keyspace.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace layoutlab::monitor {

constexpr std::uint32_t kNoTtl = 0;
// t_string.c checkStringLength / proto-max-bulk-len: 512 MB.
constexpr std::int64_t kMaxStringBytes = 512ll * 1024 * 1024;

// Parses the quoted, escaped arguments; false on a malformed quote or escape.
bool parseArguments(std::string_view text, std::vector<std::string>& args);
// Commands that change no key's memory: reads, and the connection's and server's own. Counted apart from
// the commands the simulator does not model.
bool changesNoKey(std::string_view name);

class MonitorImporter final : public LineImporter {
public:
    using LineImporter::LineImporter;

protected:
    std::optional<LineError> parseLine(std::string_view line) override {
        if (line == "OK")
            return std::nullopt;
        if (line.rfind("[ proxy", 0) == 0) {
            const auto close = line.find("] ");
            if (close == std::string_view::npos)
                return LineError { "malformed line", "unterminated proxy prefix" };
            line.remove_prefix(close + 2);
        }
        const auto space = line.find(' ');
        const auto dot = line.find('.');
        if (space == std::string_view::npos || dot == std::string_view::npos || dot > space)
            return LineError { "malformed line", "expected '<sec>.<usec> [<db> <client>] \"command\" ...'" };
        std::uint64_t seconds = 0, micros = 0;
        if (auto e = parseField(line.substr(0, dot), "timestamp", seconds))
            return e;
        if (auto e = parseField(line.substr(dot + 1, space - dot - 1), "timestamp", micros))
            return e;
        const auto open = line.find('[', space);
        const auto close = line.find("] ", space);
        if (open != space + 1 || close == std::string_view::npos)
            return LineError { "malformed line", "expected '[<db> <client>]' after the timestamp" };
        if (!parseArguments(line.substr(close + 2), m_args) || m_args.empty())
            return LineError { "bad quoting", "arguments are not sdscatrepr-quoted strings" };
        m_absoluteMs = seconds * 1000 + micros / 1000;
        m_now = relativeMs(m_absoluteMs);
        m_client.assign(line.substr(open + 1, close - open - 1));
        m_db = monitor::databaseOf(m_client);
        m_keys.setDatabase(m_db);
        m_databases = std::max(m_databases, m_db + 1);
        m_blocked.sent(m_client); // a client that sends a command waits no more
        m_name = m_args[0].substr(0, 32);
        for (auto& c : m_name)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        command();
        return std::nullopt;
    }

    // The capture ends with clients waiting in blocking pops: said once each, since what the server hands them
    // after the capture is not in it.
    void inputEnded() override {
        for (std::size_t n = m_blocked.waiting(m_absoluteMs); n > 0; --n)
            noteSkipped("a blocking pop still waiting when the capture ends (nothing popped)");
    }

private:
    // A request for `key`; its key id is resolved when it is pushed (emit), so base() is always
    // followed by emit() of that request before the next base().
    Request base(const std::string& key, Op op) {
        Request r;
        r.timeMs = m_now;
        r.keyBytes = static_cast<std::uint32_t>(key.size());
        r.op = op;
        m_baseKey = key;
        return r;
    }
    // Database 0's keys by their names, the others' by the hash of the name and the database (keyHashIn) that
    // holds them (MonitorKeyspace::holderOf: a SWAPDB changes the holder, not the keys).
    void emit(const Request& r) { emitIn(r, m_keys.database()); }
    // A key of another database is placed in its tables before its first request (Op::Resize of kKeyDatabase).
    void emitIn(const Request& r, std::uint32_t holder) {
        if (holder == 0) [[likely]] {
            pushKeyed(r, m_baseKey, 0, false, false);
            return;
        }
        const std::uint64_t hash = monitor::keyHashIn(m_baseKey, holder);
        if (m_placed.insert(hash).second) {
            Request place;
            place.timeMs = r.timeMs;
            place.keyBytes = r.keyBytes;
            place.op = Op::Resize;
            place.valueBytes = kKeyDatabase;
            place.ttlSeconds = holder;
            pushHashed(place, hash);
        }
        pushHashed(r, hash);
    }

    // A write of `value` (SET and its variants); the importer's own keyspace follows it.
    void write(const std::string& key, const std::string& value, Op op, std::uint32_t ttl, std::uint64_t expireAtMs) {
        monitor::KeyValue& v = m_keys.at(key, m_absoluteMs);
        // NX/XX: the replay decides with its own keyspace, which agrees with this one.
        if (!((op == Op::Add && v.present()) || (op == Op::Replace && !v.present()))) {
            v.assign(value);
            if (ttl != kKeepTtl)
                v.expireAtMs = ttl == kNoTtl ? 0 : expireAtMs;
        }
        Request r = base(key, op);
        r.valueBytes = static_cast<std::uint32_t>(value.size());
        r.kind = valueKindOf(value);
        r.ttlSeconds = ttl;
        emit(r);
    }
    // The server answered with an error: the command changed nothing.
    void refuse(const std::string& reason, const std::string& detail) {
        noteRefused(reason, lineNumber(), m_name + ": " + detail);
    }
    bool arity(std::size_t n, bool atLeast = false) {
        if (atLeast ? m_args.size() >= n : m_args.size() == n)
            return true;
        refuse("wrong number of arguments", fmt::format("{} arguments", m_args.size() - 1));
        return false;
    }
    // A key the capture has not shown before, read or changed by a command whose effect depends on it.
    monitor::KeyValue* lookup(const std::string& key) {
        monitor::KeyValue* v = m_keys.find(key, m_absoluteMs);
        if (!v)
            noteCommand(m_rejects.unseenKeys, m_name);
        return v;
    }
    // The entry lookup() found, or a new one for a key the capture had not shown.
    monitor::KeyValue& entry(monitor::KeyValue* found, const std::string& key) {
        return found ? *found : m_keys.at(key, m_absoluteMs);
    }
    // An expiry in `amount` of `unit` (EX, PX, EXAT, PXAT) -> absolute milliseconds; nullopt (refused)
    // when the server would refuse it (object.c getExpireMillisecondsOrReply: not an integer, <= 0, or
    // overflowing).
    std::optional<std::uint64_t> expireAt(const std::string& unit, const std::string& amount) {
        const auto v = monitor::parseLongLong(amount);
        if (!v) {
            refuse("value is not an integer or out of range", "'" + amount.substr(0, 40) + "'");
            return std::nullopt;
        }
        const bool seconds = equalsIgnoreCase(unit, "EX") || equalsIgnoreCase(unit, "EXAT");
        const bool relative = equalsIgnoreCase(unit, "EX") || equalsIgnoreCase(unit, "PX");
        if (*v <= 0 || (seconds && *v > INT64_MAX / 1000)) {
            refuse("invalid expire time", fmt::format("{} {}", unit, *v));
            return std::nullopt;
        }
        const std::uint64_t ms = static_cast<std::uint64_t>(*v) * (seconds ? 1000 : 1);
        return relative ? m_absoluteMs + ms : ms;
    }
    std::uint32_t secondsUntil(std::uint64_t atMs) const { return monitor::secondsUntil(atMs, m_absoluteMs); }

    void set();
    void increment(std::int64_t sign, bool byArgument);
    void incrementByFloat();
    void append();
    void setRange();
    void setBit();
    // BITOP (bitops.c bitopCommand): the destination replaced by a RAW string as long as the longest source.
    void bitop();
    // FLUSHALL (`everyDatabase`), FLUSHDB: every key of every database, or of the command's, deleted.
    void flushAll(bool everyDatabase);
    // The bytes from `offset` written with `piece` (t_string.c setrangeCommand, bitops.c setbitCommand): the
    // value made RAW and grown zero-filled to the range's end, or created so.
    // `v`: the key as lookup() found it.
    void writeRange(monitor::KeyValue* v, std::uint64_t offset, const std::string& piece);
    void expire(const std::string& unit);
    void getex();
    void collectionCommand();
    // HyperLogLogs (monitor_hll.cpp): PFADD, PFMERGE (PFDEBUG, an admin command, is not in captures: MONITOR
    // leaves admin commands out).
    void pfadd();
    void pfmerge();
    // The HLL `key` holds, made where absent when `create` (its creation emitted); nullptr where the command
    // cannot take it (refused: a collection or a number; a string the capture wrote, counted as not modelled),
    // or where it is absent and not made.
    monitor::KeyValue* hyperLogLogOf(const std::string& key, bool create);
    // hllSparseSet of a register, and the request its change of length needs.
    void setRegister(const std::string& key, monitor::KeyValue& v, std::uint32_t index, std::uint8_t count);
    void emitHyperLogLog(const std::string& key, std::uint32_t length);
    // RENAME, RENAMENX (monitor_rename.cpp): the two requests of an Op::Rename where the server renamed; a
    // list moved onto a key clients wait on serves them.
    void rename(bool nx);
    // The two requests of an Op::Rename (request.h): `from`'s in the command's database, then `to`'s in the
    // database whose keys `toHolder` holds.
    void emitRename(const std::string& from, const std::string& to, std::uint32_t toHolder);
    // MOVE (db.c moveCommand): the two requests of an Op::Rename, the destination's in the other database.
    void move();
    // COPY (db.c copyCommand) of a string: the destination (REPLACE: deleted first) made a duplicate of the
    // source's value (object.c dupStringObject: an integer an object of its own, a RAW value RAW at its length,
    // an embedded one as SET makes it), with its TTL; of a collection: the two requests of an Op::Rename, the
    // destination's marked kCopyDestination (the replay makes the type's dup), clients waiting on it served.
    void copy();
    // SWAPDB (db.c swapdbCommand): the two databases' keys exchanged; clients waiting in either served.
    void swapDatabases();
    // A database's number as MOVE and SWAPDB take it (getIntFromObjectOrReply, then selectDb), or nullopt
    // where the server refuses it.
    std::optional<std::uint32_t> databaseArgument(const std::string& text, const char* invalid);
    // Clients waiting on `key` of database `db` served (signalKeyAsReady: a list moved or renamed onto it).
    void serveMoved(const std::string& key, std::uint32_t db);
    // Clients of database `db` waiting on the keys `ready` served, their effects emitted.
    void serveWaitingIn(std::uint32_t db, std::vector<std::string> ready);
    // A collection command's requests emitted, each on its key; its refusal counted.
    void emitEffect(const monitor::CollectionCommandEffect& effect);
    // A string command on a collection key: the server answers WRONGTYPE and nothing changes (checkType).
    bool holdsCollection(const std::string& key) {
        const monitor::KeyValue* v = m_keys.find(key, m_absoluteMs);
        if (!v || !v->isCollection())
            return false;
        refuse(std::string(monitor::kWrongType), "the key holds " + std::string(monitor::typeName(v->content)));
        return true;
    }
    void command();

    std::vector<std::string> m_args;
    std::string m_client; // "<db> <peer>": who sent the command
    std::uint32_t m_db = 0; // the database it names keys in
    std::unordered_set<std::uint64_t> m_placed; // the keys of databases other than 0 placed there (emitIn)
    // The databases the server has (server.h CONFIG_DEFAULT_DBNUM 16), or as many as the capture shows used.
    std::uint32_t m_databases = 16;
    monitor::BlockedClients m_blocked;
    std::string m_name; // the command, upper case
    std::string_view m_baseKey; // the key of the request base() made last
    std::uint64_t m_now = 0;
    std::uint64_t m_absoluteMs = 0;
    monitor::MonitorKeyspace m_keys;
};

} // namespace layoutlab::monitor
