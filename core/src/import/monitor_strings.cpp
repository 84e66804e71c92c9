// SPDX-License-Identifier: MIT
// The MONITOR importer's string commands that read the value they change (monitor_importer.h): INCR and
// INCRBYFLOAT (their results), APPEND, SETRANGE and SETBIT (the value made RAW and grown), EXPIRE and its
// variants (their conditions and times), GETEX.

#include "monitor_importer.h"

#include <algorithm>
#include <cmath>

namespace layoutlab::monitor {

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
        if (v->content == monitor::KeyValue::Content::Other || v->content == monitor::KeyValue::Content::HyperLogLog)
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
        v->raw = true;
        v->forgetHyperLogLog();
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

void MonitorImporter::bitop() {
    // bitops.c bitopCommand: the operation's name (AND, OR, XOR, NOT: a syntax error else), NOT of one source
    // only, then each source looked up for reading (a key of another type: WRONGTYPE, nothing changed; an
    // absent one: empty) and decoded (an integer's digits). The result, `maxlen` bytes (the longest source's,
    // shorter ones read as zero-filled), is an sdsnewlen made an object with createObject (RAW whatever its
    // length, never embedded) and set on the destination whatever it held, its TTL removed (setKey); with
    // every source empty the destination is deleted (dbDelete).
    const auto& a = m_args;
    std::string op = a[1];
    for (auto& c : op)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (op != "AND" && op != "OR" && op != "XOR" && op != "NOT")
        return refuse("syntax error", "operation '" + a[1].substr(0, 40) + "'");
    if (op == "NOT" && a.size() != 4)
        return refuse("BITOP NOT must be called with a single source key.", fmt::format("{} sources", a.size() - 3));
    for (std::size_t i = 3; i < a.size(); ++i)
        if (holdsCollection(a[i]))
            return;
    std::uint64_t longest = 0;
    std::vector<std::optional<std::string>> texts; // each source's text where it is known
    for (std::size_t i = 3; i < a.size(); ++i) {
        const monitor::KeyValue* v = lookup(a[i]);
        const bool present = v && v->present();
        longest = std::max<std::uint64_t>(longest, present ? v->length : 0);
        texts.push_back(present ? v->knownText() : std::optional<std::string>(std::string()));
    }
    monitor::KeyValue* destination = m_keys.find(a[2], m_absoluteMs);
    const bool held = destination && destination->present();
    if (held) // setKey replaces it (the replay frees what it held first), or dbDelete removes it
        emit(base(a[2], Op::Delete));
    if (longest == 0) {
        if (destination)
            *destination = monitor::KeyValue {};
        return;
    }
    monitor::KeyValue& result = entry(destination, a[2]);
    result = monitor::KeyValue {};
    if (std::all_of(texts.begin(), texts.end(), [](const auto& t) { return t.has_value(); })) {
        std::string bytes(longest, op == "AND" ? '\xff' : '\0');
        for (std::size_t j = 0; j < texts.size(); ++j) {
            std::string source = *texts[j];
            source.resize(longest, '\0');
            for (std::size_t k = 0; k < longest; ++k) {
                const auto s = static_cast<unsigned char>(source[k]);
                auto& d = reinterpret_cast<unsigned char&>(bytes[k]);
                d = op == "AND"   ? (d & s)
                    : op == "OR"  ? (d | s)
                    : op == "XOR" ? (d ^ s)
                                  : static_cast<unsigned char>(~s);
            }
        }
        result.assign(bytes); // an INCR of it reads it as the server does
    } else {
        result.content = monitor::KeyValue::Content::Other;
        result.length = longest;
    }
    result.raw = true;
    // SETRANGE of an absent key makes the same object: an sds of exactly that length (setrangeCommand).
    Request r = base(a[2], Op::SetRange);
    r.valueBytes = static_cast<std::uint32_t>(longest);
    emit(r);
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
        v->raw = true;
        v->forgetHyperLogLog();
    } else {
        monitor::KeyValue& created = entry(v, m_args[1]);
        created.content = monitor::KeyValue::Content::Other; // zero bytes, then the piece
        created.length = end;
        created.expireAtMs = 0;
        created.raw = true;
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

} // namespace layoutlab::monitor
