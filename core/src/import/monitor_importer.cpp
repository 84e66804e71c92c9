// SPDX-License-Identifier: MIT
// Redis/Valkey MONITOR output (replication.c replicationFeedMonitors):
//   <sec>.<usec> [<db> <peer>] "<arg0>" "<arg1>" ...
// Arguments are quoted by sdscatrepr (sds.c): \\ \" \n \r \t \a \b and \xHH escapes. The command name's
// case is the client's. A first line "OK" (the reply to MONITOR) and a "[ proxyNN ] " prefix are accepted.
// String commands become requests, with what the engine would do: the importer follows each key's value
// and TTL (MonitorKeyspace) to give INCR and INCRBYFLOAT their results, MSETNX its all-or-nothing and
// EXPIRE's NX/XX/GT/LT their conditions. Hash and set commands become element requests
// (monitor_collections.h), with the lengths of the values they replace or remove from the importer's own
// copy of each hash and set. Commands the server would refuse are counted and left out; commands that change
// no key are counted as skipped; others as not modelled. The class is in monitor_importer.h; the string
// commands that read the value they change in monitor_strings.cpp; those that move keys (RENAME, MOVE, COPY,
// SWAPDB) in monitor_rename.cpp.

#include "monitor_importer.h"

#include "import_formats.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace layoutlab {

namespace monitor {

bool parseArguments(std::string_view text, std::vector<std::string>& args) {
    args.clear();
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ')
            ++i;
        if (i == text.size())
            break;
        if (text[i] != '"')
            return false;
        ++i;
        std::string arg;
        bool closed = false;
        while (i < text.size()) {
            const char c = text[i++];
            if (c == '"') {
                closed = true;
                break;
            }
            if (c != '\\') {
                arg.push_back(c);
                continue;
            }
            if (i == text.size())
                return false;
            const char e = text[i++];
            switch (e) {
            case '\\':
            case '"':
                arg.push_back(e);
                break;
            case 'n':
                arg.push_back('\n');
                break;
            case 'r':
                arg.push_back('\r');
                break;
            case 't':
                arg.push_back('\t');
                break;
            case 'a':
                arg.push_back('\a');
                break;
            case 'b':
                arg.push_back('\b');
                break;
            case 'x': {
                if (i + 2 > text.size() || hexDigit(text[i]) < 0 || hexDigit(text[i + 1]) < 0)
                    return false;
                arg.push_back(static_cast<char>(hexDigit(text[i]) * 16 + hexDigit(text[i + 1])));
                i += 2;
                break;
            }
            default:
                return false;
            }
        }
        if (!closed)
            return false;
        args.push_back(std::move(arg));
    }
    return true;
}

bool changesNoKey(std::string_view name) {
    static constexpr std::string_view kNames[] = { "STRLEN", "GETRANGE", "SUBSTR", "EXISTS", "TTL", "PTTL",
        "EXPIRETIME", "PEXPIRETIME", "TYPE", "OBJECT", "MEMORY", "DUMP", "SCAN", "KEYS", "RANDOMKEY", "DBSIZE", "TOUCH",
        "LCS", "BITCOUNT", "BITPOS", "GETBIT", "PING", "ECHO", "INFO", "CONFIG", "CLIENT", "AUTH", "HELLO", "COMMAND",
        "MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH", "QUIT", "SLOWLOG", "LATENCY", "TIME", "LASTSAVE", "ROLE",
        "READONLY", "READWRITE", "WAIT", "PUBLISH", "SUBSCRIBE", "UNSUBSCRIBE", "PSUBSCRIBE", "PUNSUBSCRIBE", "SELECT",
        "MONITOR", "RESET", "EVAL", "EVALSHA", "FCALL", "SCRIPT", "FUNCTION" };
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

void MonitorImporter::set() {
    // t_string.c parseExtendedStringArgumentsOrReply: NX|XX, GET, KEEPTTL, EX|PX|EXAT|PXAT n.
    const auto& a = m_args;
    Op op = Op::Set;
    std::uint32_t ttl = kNoTtl;
    std::uint64_t at = 0;
    bool expiry = false, keep = false;
    for (std::size_t i = 3; i < a.size(); ++i) {
        const bool hasNext = i + 1 < a.size();
        if (equalsIgnoreCase(a[i], "NX") && op != Op::Replace)
            op = Op::Add;
        else if (equalsIgnoreCase(a[i], "XX") && op != Op::Add)
            op = Op::Replace;
        else if (equalsIgnoreCase(a[i], "KEEPTTL") && !expiry)
            keep = true;
        else if (equalsIgnoreCase(a[i], "GET")) {
            if (holdsCollection(a[1])) // getGenericCommand's checkType, before anything is set
                return;
        } else if (hasNext && !keep && !expiry
            && (equalsIgnoreCase(a[i], "EX") || equalsIgnoreCase(a[i], "PX") || equalsIgnoreCase(a[i], "EXAT")
                || equalsIgnoreCase(a[i], "PXAT"))) {
            const auto when = expireAt(a[i], a[i + 1]);
            if (!when)
                return;
            expiry = true;
            at = *when;
            ++i;
        } else
            return refuse("syntax error", "option '" + a[i].substr(0, 40) + "'");
    }
    if (expiry)
        ttl = secondsUntil(at);
    else if (keep)
        ttl = kKeepTtl;
    write(a[1], a[2], op, ttl, at);
}

void MonitorImporter::flushAll(bool everyDatabase) {
    // db.c emptyData: every database's keys and expires freed (FLUSHDB: the command's database's), the tables
    // released (dictEmpty; with ASYNC by a background thread, emptyDbAsync, done by the time memory settles). A
    // delete of each key the capture has shown the server holding, TTL passed or not (the replay may hold it
    // still), then for each database it emptied a resize of kEmptiedTables (its last deleted key's, naming the
    // database's tables): the tables freed whole, not left as the deletes leave them.
    std::map<std::uint32_t, std::pair<std::uint64_t, std::uint32_t>> lastByHolder; // (hash, keyBytes)
    const auto flushed = everyDatabase ? std::nullopt : std::optional<std::uint32_t>(m_keys.database());
    m_keys.forEachHeld(
        flushed, [&](std::uint64_t hash, std::uint32_t keyBytes, std::uint32_t holder, monitor::KeyValue& v) {
            v = monitor::KeyValue {};
            Request r;
            r.timeMs = m_now;
            r.keyBytes = keyBytes;
            r.op = Op::Delete;
            pushHashed(r, hash);
            lastByHolder[holder] = { hash, keyBytes };
        });
    // A database with nothing the capture showed held: its tables are the server's own business.
    for (const auto& [holder, last] : lastByHolder) {
        Request tables;
        tables.timeMs = m_now;
        tables.keyBytes = last.second;
        tables.op = Op::Resize;
        tables.valueBytes = kEmptiedTables;
        pushHashed(tables, last.first);
    }
}

void MonitorImporter::collectionCommand() {
    auto effect = monitor::isMultiKeyCollectionCommand(m_name)
        ? monitor::applyMultiKeyCollectionCommand(m_name, m_args, m_keys, m_absoluteMs)
        : monitor::applyCollectionCommand(m_name, m_args, m_keys, m_absoluteMs);
    if (m_name[0] == 'B' && monitor::isMultiKeyCollectionCommand(m_name) && effect.requests.empty()
        && effect.refusal.empty()) {
        std::vector<std::string> args = m_args; // nothing to take: the client waits (monitor_blocking.h)
        args[0] = m_name;
        m_blocked.block(m_client, args, m_absoluteMs);
        return;
    }
    emitEffect(effect);
    if (m_blocked.empty())
        return;
    for (const auto& served :
        m_blocked.serve(monitor::keysGivenElements(effect, m_args[1]), m_keys, m_absoluteMs, m_db))
        emitEffect(served);
}

void MonitorImporter::emitEffect(const monitor::CollectionCommandEffect& effect) {
    if (effect.drawn)
        noteCommand(m_rejects.drawnByImporter, m_name);
    for (std::size_t i = 0; i < effect.requests.size(); ++i) {
        const Request& element = effect.requests[i];
        const std::string& key = effect.keys.empty() ? m_args[1] : effect.keys[i];
        if (element.op == Op::Delete) { // a STORE's destination, its value replaced
            emit(base(key, Op::Delete));
            continue;
        }
        if (element.op == Op::Expire) { // SPOP's rebuilt set: the key's TTL kept
            Request r = base(key, Op::Expire);
            r.ttlSeconds = element.ttlSeconds;
            emit(r);
            continue;
        }
        Request r = base(key, Op::Element);
        r.element = element.element;
        r.elementBytes = element.elementBytes;
        r.valueBytes = element.valueBytes;
        r.ttlSeconds = element.ttlSeconds; // the prior value's length
        emit(r);
    }
    if (!effect.refusal.empty())
        refuse(effect.refusal, effect.detail);
}

void MonitorImporter::command() {
    const auto& a = m_args;
    auto is = [&](std::string_view name) { return m_name == name; };
    if (is("GET")) {
        if (arity(2))
            emit(base(a[1], Op::Get));
    } else if (is("MGET")) {
        if (arity(2, true))
            for (std::size_t i = 1; i < a.size(); ++i)
                emit(base(a[i], Op::Get));
    } else if (is("SET")) {
        if (arity(3, true))
            set();
    } else if (is("SETEX") || is("PSETEX")) {
        if (!arity(4))
            return;
        if (const auto at = expireAt(is("SETEX") ? "EX" : "PX", a[2]))
            write(a[1], a[3], Op::Set, secondsUntil(*at), *at);
    } else if (is("SETNX")) {
        if (arity(3))
            write(a[1], a[2], Op::Add, kNoTtl, 0);
    } else if (is("GETSET")) {
        if (arity(3) && !holdsCollection(a[1]))
            write(a[1], a[2], Op::Set, kNoTtl, 0);
    } else if (is("MSET") || is("MSETNX")) {
        if (a.size() < 3 || a.size() % 2 == 0)
            return refuse("wrong number of arguments", "key/value pairs expected");
        if (is("MSETNX")) { // t_string.c msetGenericCommand: nothing is set if any key exists
            for (std::size_t i = 1; i + 1 < a.size(); i += 2)
                if (const auto* v = m_keys.find(a[i], m_absoluteMs); v && v->present()) {
                    noteSkipped("command MSETNX with a key that exists (no effect)");
                    return;
                }
        }
        for (std::size_t i = 1; i + 1 < a.size(); i += 2)
            write(a[i], a[i + 1], is("MSET") ? Op::Set : Op::Add, kNoTtl, 0);
    } else if (is("APPEND")) {
        if (arity(3))
            append();
    } else if (is("SETRANGE")) {
        if (arity(4))
            setRange();
    } else if (is("SETBIT")) {
        if (arity(4))
            setBit();
    } else if (is("BITOP")) {
        if (arity(4, true))
            bitop();
    } else if (is("INCR") || is("DECR")) {
        if (arity(2))
            increment(is("INCR") ? 1 : -1, false);
    } else if (is("INCRBY") || is("DECRBY")) {
        if (arity(3))
            increment(is("INCRBY") ? 1 : -1, true);
    } else if (is("INCRBYFLOAT")) {
        if (arity(3))
            incrementByFloat();
    } else if (is("DEL") || is("UNLINK")) {
        if (!arity(2, true))
            return;
        for (std::size_t i = 1; i < a.size(); ++i) {
            if (auto* v = m_keys.find(a[i], m_absoluteMs))
                *v = monitor::KeyValue {};
            emit(base(a[i], Op::Delete));
        }
    } else if (is("GETDEL")) {
        if (!arity(2) || holdsCollection(a[1]))
            return;
        if (auto* v = m_keys.find(a[1], m_absoluteMs))
            *v = monitor::KeyValue {};
        emit(base(a[1], Op::Get));
        emit(base(a[1], Op::Delete));
    } else if (is("GETEX")) {
        if (arity(2, true))
            getex();
    } else if (is("EXPIRE") || is("PEXPIRE") || is("EXPIREAT") || is("PEXPIREAT")) {
        if (arity(3, true)) // expire.c: any number of NX|XX|GT|LT options
            expire(is("EXPIRE") ? "EX" : is("PEXPIRE") ? "PX" : is("EXPIREAT") ? "EXAT" : "PXAT");
    } else if (is("PERSIST")) {
        if (!arity(2))
            return;
        if (auto* v = lookup(a[1]))
            v->expireAtMs = 0;
        emit(base(a[1], Op::Persist));
    } else if (is("FLUSHALL") || is("FLUSHDB")) {
        // server.c flushallCommand, db.c flushdbCommand: an optional ASYNC or SYNC (getFlushCommandFlags).
        if (a.size() > 2 || (a.size() == 2 && !equalsIgnoreCase(a[1], "ASYNC") && !equalsIgnoreCase(a[1], "SYNC")))
            return refuse("syntax error", fmt::format("{} arguments", a.size() - 1));
        flushAll(is("FLUSHALL"));
    } else if (is("RENAME") || is("RENAMENX")) {
        if (arity(3))
            rename(is("RENAMENX"));
    } else if (is("MOVE")) {
        if (arity(3))
            move();
    } else if (is("COPY")) {
        if (arity(3, true))
            copy();
    } else if (is("SWAPDB")) {
        if (arity(3))
            swapDatabases();
    } else if (is("PFADD")) {
        if (arity(2, true))
            pfadd();
    } else if (is("PFMERGE")) {
        if (arity(2, true))
            pfmerge();
    } else if (is("PFCOUNT")) {
        if (arity(2, true))
            for (std::size_t i = 1; i < a.size(); ++i)
                emit(base(a[i], Op::Get));
    } else if (monitor::isCollectionCommand(m_name) || monitor::isMultiKeyCollectionCommand(m_name)) {
        collectionCommand();
    } else if (monitor::readsCollectionWhole(m_name)) {
        noteSkipped("command " + m_name + " (reads the collection whole)");
    } else if (changesNoKey(m_name)) {
        noteSkipped("command " + m_name);
    } else {
        noteCommand(m_rejects.notModelled, m_name);
    }
}

} // namespace monitor

bool detectMonitor(std::string_view head) {
    std::string_view line = head.substr(0, head.find('\n'));
    if (line == "OK" || line == "OK\r") {
        head.remove_prefix(std::min(head.size(), line.size() + 1));
        line = head.substr(0, head.find('\n'));
    }
    const auto space = line.find(' ');
    const auto dot = line.find('.');
    return space != std::string_view::npos && dot != std::string_view::npos && dot < space && space - dot == 7
        && line.size() > space + 1 && line[space + 1] == '[' && line.find("] \"") != std::string_view::npos;
}

std::unique_ptr<Importer> makeMonitorImporter(std::unique_ptr<InputStream> input, const ImportOptions& options) {
    return std::make_unique<monitor::MonitorImporter>("monitor", std::move(input), options);
}

} // namespace layoutlab
