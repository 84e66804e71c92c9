// SPDX-License-Identifier: MIT
// Redis/Valkey MONITOR output (replication.c replicationFeedMonitors):
//   <sec>.<usec> [<db> <peer>] "<arg0>" "<arg1>" ...
// Arguments are quoted by sdscatrepr (sds.c): \\ \" \n \r \t \a \b and \xHH escapes. The command name's
// case is the client's. A first line "OK" (the reply to MONITOR) and a "[ proxyNN ] " prefix are accepted.
// String commands become requests; other commands are counted as skipped.

#include "import_formats.h"
#include "line_importer.h"

#include <algorithm>
#include <cctype>

namespace layoutlab {

namespace {

constexpr std::uint32_t kNoTtl = 0;

int hexValue(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

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
                if (i + 2 > text.size() || hexValue(text[i]) < 0 || hexValue(text[i + 1]) < 0)
                    return false;
                arg.push_back(static_cast<char>(hexValue(text[i]) * 16 + hexValue(text[i + 1])));
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

// util.c string2ll rules: optional '-', no leading zero (except "0"), at most 20 chars, fits a long long.
ValueKind kindOf(std::string_view value) {
    if (value.empty() || value.size() > 20)
        return ValueKind::String;
    std::size_t i = value[0] == '-' ? 1 : 0;
    if (i == value.size() || (value[i] == '0' && value.size() > i + 1))
        return ValueKind::String;
    for (std::size_t j = i; j < value.size(); ++j)
        if (value[j] < '0' || value[j] > '9')
            return ValueKind::String;
    if (value.size() - i == 19 && i == 0 && value > "9223372036854775807")
        return ValueKind::String;
    if (value.size() - i > 19)
        return ValueKind::String;
    return (i == 0 && value.size() <= 4) ? ValueKind::SmallInteger : ValueKind::Integer;
}

class MonitorImporter final : public LineImporter {
public:
    using LineImporter::LineImporter;
    std::string formatName() const override { return "monitor"; }

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
        return command();
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
    void write(const std::string& key, const std::string& value, Op op, std::uint32_t ttl) {
        Request r = base(key, op);
        r.valueBytes = static_cast<std::uint32_t>(value.size());
        r.kind = kindOf(value);
        r.ttlSeconds = ttl;
        emit(r);
    }
    // EX/PX/EXAT/PXAT arguments -> seconds from now (at least 1: an expiry in the past still removes the key
    // at the next check).
    std::optional<LineError> ttlOf(const std::string& unit, const std::string& amount, std::uint32_t& ttl) {
        std::uint64_t v = 0;
        if (auto e = parseField(amount, unit, v))
            return e;
        std::uint64_t seconds = 0;
        if (equalsIgnoreCase(unit, "EX"))
            seconds = v;
        else if (equalsIgnoreCase(unit, "PX"))
            seconds = (v + 999) / 1000;
        else if (equalsIgnoreCase(unit, "EXAT"))
            seconds = v * 1000 > m_absoluteMs ? (v * 1000 - m_absoluteMs) / 1000 : 0;
        else if (equalsIgnoreCase(unit, "PXAT"))
            seconds = v > m_absoluteMs ? (v - m_absoluteMs) / 1000 : 0;
        ttl = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(seconds, 1, kKeepTtl - 1));
        return std::nullopt;
    }

    std::optional<LineError> command() {
        const auto& a = m_args;
        const std::string& cmd = a[0];
        auto is = [&](std::string_view name) { return equalsIgnoreCase(cmd, name); };
        auto need = [&](std::size_t n) -> std::optional<LineError> {
            if (a.size() < n)
                return LineError { "missing argument",
                    cmd + " needs at least " + std::to_string(n - 1) + " arguments" };
            return std::nullopt;
        };
        if (is("GET")) {
            if (auto e = need(2))
                return e;
            emit(base(a[1], Op::Get));
        } else if (is("MGET")) {
            if (auto e = need(2))
                return e;
            for (std::size_t i = 1; i < a.size(); ++i)
                emit(base(a[i], Op::Get));
        } else if (is("SET")) {
            if (auto e = need(3))
                return e;
            Op op = Op::Set;
            std::uint32_t ttl = kNoTtl;
            for (std::size_t i = 3; i < a.size(); ++i) {
                if (equalsIgnoreCase(a[i], "NX"))
                    op = Op::Add;
                else if (equalsIgnoreCase(a[i], "XX"))
                    op = Op::Replace;
                else if (equalsIgnoreCase(a[i], "KEEPTTL"))
                    ttl = kKeepTtl;
                else if (equalsIgnoreCase(a[i], "GET"))
                    continue;
                else if (i + 1 < a.size()
                    && (equalsIgnoreCase(a[i], "EX") || equalsIgnoreCase(a[i], "PX") || equalsIgnoreCase(a[i], "EXAT")
                        || equalsIgnoreCase(a[i], "PXAT"))) {
                    if (auto e = ttlOf(a[i], a[i + 1], ttl))
                        return e;
                    ++i;
                } else
                    return LineError { "bad option", "SET: unknown option '" + a[i].substr(0, 40) + "'" };
            }
            write(a[1], a[2], op, ttl);
        } else if (is("SETEX") || is("PSETEX")) {
            if (auto e = need(4))
                return e;
            std::uint32_t ttl = 0;
            if (auto e = ttlOf(is("SETEX") ? "EX" : "PX", a[2], ttl))
                return e;
            write(a[1], a[3], Op::Set, ttl);
        } else if (is("SETNX")) {
            if (auto e = need(3))
                return e;
            write(a[1], a[2], Op::Add, kNoTtl);
        } else if (is("GETSET")) {
            if (auto e = need(3))
                return e;
            write(a[1], a[2], Op::Set, kNoTtl);
        } else if (is("MSET") || is("MSETNX")) {
            if (a.size() < 3 || a.size() % 2 == 0)
                return LineError { "missing argument", cmd + " needs key/value pairs" };
            for (std::size_t i = 1; i + 1 < a.size(); i += 2)
                write(a[i], a[i + 1], is("MSET") ? Op::Set : Op::Add, kNoTtl);
        } else if (is("APPEND")) {
            if (auto e = need(3))
                return e;
            Request r = base(a[1], Op::Append);
            r.valueBytes = static_cast<std::uint32_t>(a[2].size());
            emit(r);
        } else if (is("INCR") || is("DECR") || is("INCRBY") || is("DECRBY") || is("INCRBYFLOAT")) {
            if (auto e = need(2))
                return e;
            // The new value's length is not in the stream; the simulator keeps the old length (or 1).
            Request r = base(a[1], is("DECR") || is("DECRBY") ? Op::Decr : Op::Incr);
            r.kind = is("INCRBYFLOAT") ? ValueKind::String : ValueKind::Integer;
            emit(r);
        } else if (is("DEL") || is("UNLINK")) {
            if (auto e = need(2))
                return e;
            for (std::size_t i = 1; i < a.size(); ++i)
                emit(base(a[i], Op::Delete));
        } else if (is("GETDEL")) {
            if (auto e = need(2))
                return e;
            emit(base(a[1], Op::Get));
            emit(base(a[1], Op::Delete));
        } else if (is("GETEX")) {
            if (auto e = need(2))
                return e;
            emit(base(a[1], Op::Get));
            if (a.size() >= 3 && equalsIgnoreCase(a[2], "PERSIST")) {
                emit(base(a[1], Op::Persist));
            } else if (a.size() >= 4) {
                Request r = base(a[1], Op::Expire);
                if (auto e = ttlOf(a[2], a[3], r.ttlSeconds))
                    return e;
                emit(r);
            }
        } else if (is("EXPIRE") || is("PEXPIRE") || is("EXPIREAT") || is("PEXPIREAT")) {
            if (auto e = need(3))
                return e;
            Request r = base(a[1], Op::Expire);
            const std::string unit = is("EXPIRE") ? "EX" : is("PEXPIRE") ? "PX" : is("EXPIREAT") ? "EXAT" : "PXAT";
            if (auto e = ttlOf(unit, a[2], r.ttlSeconds))
                return e;
            emit(r);
        } else if (is("PERSIST")) {
            if (auto e = need(2))
                return e;
            emit(base(a[1], Op::Persist));
        } else {
            std::string name = cmd.substr(0, 32);
            for (auto& c : name)
                c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            noteSkipped("command " + name);
        }
        return std::nullopt;
    }

    std::vector<std::string> m_args;
    std::string_view m_baseKey; // the key of the request base() made last
    std::uint64_t m_now = 0;
    std::uint64_t m_absoluteMs = 0;
};

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
    return std::make_unique<MonitorImporter>(std::move(input), options);
}

} // namespace layoutlab
