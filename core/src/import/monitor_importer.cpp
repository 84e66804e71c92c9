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
// no key are counted as skipped; others (sorted sets' and lists' among them) as not modelled.

#include "import_formats.h"
#include "line_importer.h"
#include "monitor_blocking.h"
#include "monitor_collections.h"
#include "monitor_keyspace.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

namespace layoutlab {

namespace {

constexpr std::uint32_t kNoTtl = 0;

// Parses the quoted, escaped arguments; false on a malformed quote or escape.
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

// Commands that change no key's memory: reads, and the connection's and server's own. Counted apart from
// the commands the simulator does not model.
bool changesNoKey(std::string_view name) {
    static constexpr std::string_view kNames[] = { "STRLEN", "GETRANGE", "SUBSTR", "EXISTS", "TTL", "PTTL",
        "EXPIRETIME", "PEXPIRETIME", "TYPE", "OBJECT", "MEMORY", "DUMP", "SCAN", "KEYS", "RANDOMKEY", "DBSIZE", "TOUCH",
        "LCS", "BITCOUNT", "BITPOS", "GETBIT", "PING", "ECHO", "INFO", "CONFIG", "CLIENT", "AUTH", "HELLO", "COMMAND",
        "MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH", "QUIT", "SLOWLOG", "LATENCY", "TIME", "LASTSAVE", "ROLE",
        "READONLY", "READWRITE", "WAIT", "PUBLISH", "SUBSCRIBE", "UNSUBSCRIBE", "PSUBSCRIBE", "PUNSUBSCRIBE", "SELECT",
        "MONITOR", "RESET", "EVAL", "EVALSHA", "FCALL", "SCRIPT", "FUNCTION" };
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

// t_string.c checkStringLength / proto-max-bulk-len: 512 MB.
constexpr std::int64_t kMaxStringBytes = 512ll * 1024 * 1024;

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
    void emit(const Request& r) { pushKeyed(r, m_baseKey, 0, false, false); }
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
    // Seconds from now to an absolute expiry, at least 1 (an expiry in the past still removes the key
    // at the next check).
    std::uint32_t secondsUntil(std::uint64_t atMs) const {
        const std::uint64_t s = atMs > m_absoluteMs ? (atMs - m_absoluteMs + 999) / 1000 : 0;
        return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(s, 1, kKeepTtl - 1));
    }

    void set();
    void increment(std::int64_t sign, bool byArgument);
    void incrementByFloat();
    void append();
    void setRange();
    void setBit();
    // The bytes from `offset` written with `piece` (t_string.c setrangeCommand, bitops.c setbitCommand): the
    // value made RAW and grown zero-filled to the range's end, or created so.
    // `v`: the key as lookup() found it.
    void writeRange(monitor::KeyValue* v, std::uint64_t offset, const std::string& piece);
    void expire(const std::string& unit);
    void getex();
    void collectionCommand();
    // RENAME, RENAMENX (monitor_rename.cpp): the two requests of an Op::Rename where the server renamed; a
    // list moved onto a key clients wait on serves them.
    void rename(bool nx);
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
    monitor::BlockedClients m_blocked;
    std::string m_name; // the command, upper case
    std::string_view m_baseKey; // the key of the request base() made last
    std::uint64_t m_now = 0;
    std::uint64_t m_absoluteMs = 0;
    monitor::MonitorKeyspace m_keys;
};

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
    for (const auto& served : m_blocked.serve(monitor::keysGivenElements(effect, m_args[1]), m_keys, m_absoluteMs))
        emitEffect(served);
}

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
    Request source = base(m_args[1], Op::Rename);
    source.valueBytes = kRenameSource;
    emit(source);
    Request destination = base(m_args[2], Op::Rename);
    destination.valueBytes = kRenameDestination;
    emit(destination);
    const monitor::KeyValue* moved = m_keys.find(m_args[2], m_absoluteMs);
    if (!m_blocked.empty() && moved && moved->content == monitor::KeyValue::Content::List)
        for (const auto& served : m_blocked.serve({ m_args[2] }, m_keys, m_absoluteMs)) // dbAdd: signalKeyAsReady
            emitEffect(served);
}

void MonitorImporter::emitEffect(const monitor::CollectionCommandEffect& effect) {
    for (std::size_t i = 0; i < effect.requests.size(); ++i) {
        const Request& element = effect.requests[i];
        Request r = base(effect.keys.empty() ? m_args[1] : effect.keys[i], Op::Element);
        r.element = element.element;
        r.elementBytes = element.elementBytes;
        r.valueBytes = element.valueBytes;
        r.ttlSeconds = element.ttlSeconds; // the prior value's length
        emit(r);
    }
    if (!effect.refusal.empty())
        refuse(effect.refusal, effect.detail);
}

void MonitorImporter::increment(std::int64_t sign, bool byArgument) {
    // t_string.c incrDecrCommand.
    std::int64_t by = sign;
    if (byArgument) {
        const auto v = monitor::parseLongLong(m_args[2]);
        if (!v)
            return refuse("value is not an integer or out of range", "'" + m_args[2].substr(0, 40) + "'");
        if (sign < 0 && *v == INT64_MIN)
            return refuse("decrement would overflow", m_args[2]);
        by = sign * *v;
    }
    if (holdsCollection(m_args[1]))
        return;
    monitor::KeyValue* v = lookup(m_args[1]);
    std::int64_t old = 0;
    if (v && v->present()) {
        if (v->content != monitor::KeyValue::Content::Integer)
            return refuse("value is not an integer or out of range", "the key holds a string");
        old = v->integer;
    }
    if ((by < 0 && old < 0 && by < INT64_MIN - old) || (by > 0 && old > 0 && by > INT64_MAX - old))
        return refuse("increment or decrement would overflow", fmt::format("{} {:+}", old, by));
    const std::int64_t result = old + by;
    const std::string text = std::to_string(result);
    monitor::KeyValue& kept = entry(v, m_args[1]);
    kept.assign(text); // the TTL stays
    Request r = base(m_args[1], sign < 0 ? Op::Decr : Op::Incr);
    r.valueBytes = static_cast<std::uint32_t>(text.size());
    r.kind = valueKindOf(text); // createStringObjectFromLongLongForValue: shared for 0..9999, else INT
    emit(r);
}

void MonitorImporter::incrementByFloat() {
    // t_string.c incrbyfloatCommand: the result is stored as a string (createStringObjectFromLongDouble).
    const auto by = monitor::parseLongDouble(m_args[2]);
    if (!by)
        return refuse("value is not a valid float", "'" + m_args[2].substr(0, 40) + "'");
    if (holdsCollection(m_args[1]))
        return;
    monitor::KeyValue* v = lookup(m_args[1]);
    long double old = 0;
    if (v && v->present()) {
        if (v->content == monitor::KeyValue::Content::Other)
            return refuse("value is not a valid float", "the key holds a string");
        old = v->number;
    }
    const long double result = old + *by;
    if (std::isnan(result) || std::isinf(result))
        return refuse("increment would produce NaN or Infinity", m_args[2].substr(0, 40));
    const std::string text = monitor::formatLongDouble(result);
    entry(v, m_args[1]).assign(text); // the TTL stays
    Request r = base(m_args[1], Op::Incr);
    r.valueBytes = static_cast<std::uint32_t>(text.size());
    r.kind = ValueKind::String;
    emit(r);
}

void MonitorImporter::append() {
    // t_string.c appendCommand: a missing key is created with the argument as its value.
    if (holdsCollection(m_args[1]))
        return;
    monitor::KeyValue* v = lookup(m_args[1]);
    const std::string& tail = m_args[2];
    if (v && v->present() && v->length + tail.size() > static_cast<std::uint64_t>(kMaxStringBytes))
        return refuse("string exceeds maximum allowed size", fmt::format("{} + {} bytes", v->length, tail.size()));
    if (v && v->present()) {
        if (const auto text = v->knownText())
            v->assign(*text + tail);
        else
            v->length += tail.size();
    } else {
        monitor::KeyValue& created = entry(v, m_args[1]);
        created.assign(tail);
        created.expireAtMs = 0;
    }
    Request r = base(m_args[1], Op::Append);
    r.valueBytes = static_cast<std::uint32_t>(tail.size());
    r.kind = valueKindOf(tail); // tryObjectEncoding of the argument, for a key it creates
    emit(r);
}

void MonitorImporter::setRange() {
    // t_string.c setrangeCommand.
    const auto offset = monitor::parseLongLong(m_args[2]);
    if (!offset)
        return refuse("value is not an integer or out of range", "'" + m_args[2].substr(0, 40) + "'");
    if (*offset < 0)
        return refuse("offset is out of range", m_args[2]);
    const std::string& piece = m_args[3];
    if (holdsCollection(m_args[1]))
        return;
    if (*offset > kMaxStringBytes - static_cast<std::int64_t>(piece.size()))
        return refuse(
            "string exceeds maximum allowed size", fmt::format("offset {} + {} bytes", *offset, piece.size()));
    monitor::KeyValue* v = lookup(m_args[1]);
    if (piece.empty()) {
        noteSkipped("command SETRANGE of nothing (no effect)"); // the reply is the length; nothing changes
        return;
    }
    writeRange(v, static_cast<std::uint64_t>(*offset), piece);
}

void MonitorImporter::setBit() {
    // bitops.c setbitCommand: the bit offset (getBitOffsetFromArgument: below 2^32, 512 MB of bytes), then the
    // bit (0 or 1), then the key (lookupStringForBitCommand: a string grown zero-filled to the offset's byte,
    // made RAW, or created so): SETRANGE of that one byte.
    const auto offset = monitor::parseLongLong(m_args[2]);
    if (!offset || *offset < 0 || (*offset >> 3) >= kMaxStringBytes)
        return refuse("bit offset is not an integer or out of range", "'" + m_args[2].substr(0, 40) + "'");
    const auto bit = monitor::parseLongLong(m_args[3]);
    if (!bit || (*bit & ~1LL) != 0)
        return refuse("bit is not an integer or out of range", "'" + m_args[3].substr(0, 40) + "'");
    if (holdsCollection(m_args[1]))
        return;
    const auto byte = static_cast<std::uint64_t>(*offset >> 3);
    std::string piece(1, '\0');
    monitor::KeyValue* v = lookup(m_args[1]);
    if (v && v->present())
        if (auto text = v->knownText(); text && byte < text->size())
            piece[0] = (*text)[byte];
    const auto mask = static_cast<char>(1 << (7 - (*offset & 7)));
    piece[0] = static_cast<char>(*bit ? piece[0] | mask : piece[0] & ~mask);
    writeRange(v, byte, piece);
}

void MonitorImporter::writeRange(monitor::KeyValue* v, std::uint64_t offset, const std::string& piece) {
    const std::uint64_t end = offset + piece.size();
    if (v && v->present()) {
        if (auto text = v->knownText()) {
            if (text->size() < end)
                text->resize(end, '\0');
            text->replace(static_cast<std::size_t>(offset), piece.size(), piece);
            v->assign(*text);
        } else {
            v->length = std::max(v->length, end);
        }
    } else {
        monitor::KeyValue& created = entry(v, m_args[1]);
        created.content = monitor::KeyValue::Content::Other; // zero bytes, then the piece
        created.length = end;
        created.expireAtMs = 0;
    }
    Request r = base(m_args[1], Op::SetRange);
    r.valueBytes = static_cast<std::uint32_t>(end);
    emit(r);
}

void MonitorImporter::expire(const std::string& unit) {
    // expire.c expireGenericCommand, with Redis 7.0's NX|XX|GT|LT.
    const auto& a = m_args;
    const auto v = monitor::parseLongLong(a[2]);
    if (!v)
        return refuse("value is not an integer or out of range", "'" + a[2].substr(0, 40) + "'");
    bool nx = false, xx = false, gt = false, lt = false;
    for (std::size_t i = 3; i < a.size(); ++i) {
        if (equalsIgnoreCase(a[i], "NX"))
            nx = true;
        else if (equalsIgnoreCase(a[i], "XX"))
            xx = true;
        else if (equalsIgnoreCase(a[i], "GT"))
            gt = true;
        else if (equalsIgnoreCase(a[i], "LT"))
            lt = true;
        else
            return refuse("unsupported option", "'" + a[i].substr(0, 40) + "'");
    }
    if ((nx && (xx || gt || lt)) || (gt && lt))
        return refuse("incompatible options", "NX with XX, GT or LT, or GT with LT");
    const bool seconds = unit == "EX" || unit == "EXAT";
    const bool relative = unit == "EX" || unit == "PX";
    const long double when = static_cast<long double>(*v) * (seconds ? 1000 : 1) + (relative ? m_absoluteMs : 0);
    if (when > static_cast<long double>(INT64_MAX))
        return refuse("invalid expire time", a[2]);
    monitor::KeyValue* key = lookup(a[1]);
    if (key && !key->present())
        return; // no such key: the reply is 0
    if (key) {
        const bool hasTtl = key->expireAtMs != 0;
        const long double current = static_cast<long double>(key->expireAtMs);
        if ((nx && hasTtl) || (xx && !hasTtl) || (gt && (!hasTtl || when <= current))
            || (lt && hasTtl && when >= current))
            return; // the condition is not met: the reply is 0
    }
    if (when <= static_cast<long double>(m_absoluteMs)) { // checkAlreadyExpired: the key is deleted
        if (key)
            *key = monitor::KeyValue {};
        emit(base(a[1], Op::Delete));
        return;
    }
    const auto atMs = static_cast<std::uint64_t>(when);
    if (key)
        key->expireAtMs = atMs;
    Request r = base(a[1], Op::Expire);
    r.ttlSeconds = secondsUntil(atMs);
    emit(r);
}

void MonitorImporter::getex() {
    // t_string.c getexCommand: EX|PX|EXAT|PXAT n, or PERSIST.
    const auto& a = m_args;
    std::optional<std::uint64_t> at;
    bool persist = false;
    if (a.size() == 3 && equalsIgnoreCase(a[2], "PERSIST"))
        persist = true;
    else if (a.size() == 4
        && (equalsIgnoreCase(a[2], "EX") || equalsIgnoreCase(a[2], "PX") || equalsIgnoreCase(a[2], "EXAT")
            || equalsIgnoreCase(a[2], "PXAT"))) {
        at = expireAt(a[2], a[3]);
        if (!at)
            return;
    } else if (a.size() != 2)
        return refuse("syntax error", "options");
    monitor::KeyValue* key = m_keys.find(a[1], m_absoluteMs);
    emit(base(a[1], Op::Get));
    if (persist) {
        if (key)
            key->expireAtMs = 0;
        emit(base(a[1], Op::Persist));
    } else if (at) {
        if (*at <= m_absoluteMs) { // checkAlreadyExpired: deleted
            if (key)
                *key = monitor::KeyValue {};
            emit(base(a[1], Op::Delete));
            return;
        }
        if (key && key->present())
            key->expireAtMs = *at;
        Request r = base(a[1], Op::Expire);
        r.ttlSeconds = secondsUntil(*at);
        emit(r);
    }
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
    } else if (is("RENAME") || is("RENAMENX")) {
        if (arity(3))
            rename(is("RENAMENX"));
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

} // namespace

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
    return std::make_unique<MonitorImporter>("monitor", std::move(input), options);
}

} // namespace layoutlab
