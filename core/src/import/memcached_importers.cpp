// SPDX-License-Identifier: MIT
// memcached's `watch` logger stream and `lru_crawler metadump` snapshots (doc/protocol.txt, logger.c,
// crawler.c). Both are lines of key=value pairs; keys are URI-encoded (util.c uriencode: bytes outside
// [A-Za-z0-9-._~] become %HH).

#include "import_formats.h"
#include "line_importer.h"

#include <queue>

namespace layoutlab {

namespace {

// memcached.h ITEM_ntotal: 48-byte item header, 8-byte CAS (unless -C), key + NUL, 4 bytes of client
// flags when non-zero, value + "\r\n".
constexpr std::uint64_t kItemHeaderBytes = 48;
constexpr std::uint64_t kCasBytes = 8;
constexpr std::uint64_t kFlagsBytes = 4;
constexpr std::uint64_t kKeyTerminator = 1;
constexpr std::uint64_t kValueTerminator = 2;
// A snapshot has no clock: keys with an expiry keep it for the whole replay.

// Splits "k=v k=v" into (key, value) views.
bool splitPairs(std::string_view line, std::vector<std::pair<std::string_view, std::string_view>>& out) {
    out.clear();
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ')
            ++i;
        if (i == line.size())
            break;
        const auto end = std::min(line.find(' ', i), line.size());
        const auto token = line.substr(i, end - i);
        const auto eq = token.find('=');
        if (eq == std::string_view::npos || eq == 0)
            return false;
        out.emplace_back(token.substr(0, eq), token.substr(eq + 1));
        i = end;
    }
    return true;
}

std::string_view valueOf(
    const std::vector<std::pair<std::string_view, std::string_view>>& pairs, std::string_view name) {
    for (const auto& [k, v] : pairs)
        if (k == name)
            return v;
    return {};
}

// The decoded key; false on a malformed %HH escape.
bool uriDecode(std::string_view text, std::string& out) {
    out.clear();
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size() || hexDigit(text[i + 1]) < 0 || hexDigit(text[i + 2]) < 0)
            return false;
        out.push_back(static_cast<char>(hexDigit(text[i + 1]) * 16 + hexDigit(text[i + 2])));
        i += 2;
    }
    return true;
}

// "1466120156.99667": the microseconds are printed with %d, not zero-padded (logger.c).
std::optional<LineError> parseWatchTime(std::string_view text, std::uint64_t& ms) {
    const auto dot = text.find('.');
    std::uint64_t seconds = 0, micros = 0;
    if (auto e = parseField(text.substr(0, dot), "ts", seconds))
        return e;
    if (dot != std::string_view::npos)
        if (auto e = parseField(text.substr(dot + 1), "ts", micros))
            return e;
    ms = seconds * 1000 + micros / 1000;
    return std::nullopt;
}

class WatchImporter final : public LineImporter {
public:
    using LineImporter::LineImporter;

protected:
    std::optional<LineError> parseLine(std::string_view line) override {
        if (line == "OK")
            return std::nullopt;
        if (!splitPairs(line, m_pairs))
            return LineError { "malformed line", "expected space-separated key=value pairs" };
        std::uint64_t ms = 0, gid = 0;
        if (auto e = parseWatchTime(valueOf(m_pairs, "ts"), ms))
            return e;
        if (auto e = parseField(valueOf(m_pairs, "gid"), "gid", gid))
            return e;
        const auto type = valueOf(m_pairs, "type");
        Op op;
        bool isRead = false;
        if (type == "item_get") {
            op = Op::Get;
            isRead = true;
        } else if (type == "item_store") {
            if (valueOf(m_pairs, "status") != "stored") {
                noteSkipped("item_store not stored");
                return std::nullopt;
            }
            op = Op::Set; // size is the stored item's whole value, also after append/prepend
        } else if (type == "deleted" || type == "eviction") {
            op = Op::Delete;
        } else {
            noteSkipped("type " + std::string(type.substr(0, 32)));
            return std::nullopt;
        }
        if (!uriDecode(valueOf(m_pairs, "key"), m_key) || m_key.empty())
            return LineError { "bad key", "field key is missing or has a malformed %HH escape" };
        std::uint32_t size = 0, ttl = 0;
        if (auto e = parseField(valueOf(m_pairs, "size").empty() ? "0" : valueOf(m_pairs, "size"), "size", size))
            return e;
        if (op == Op::Set && !valueOf(m_pairs, "ttl").empty())
            if (auto e = parseField(valueOf(m_pairs, "ttl"), "ttl", ttl))
                return e;
        Held held;
        held.gid = gid;
        held.request.timeMs = relativeMs(ms);
        held.request.keyBytes = static_cast<std::uint32_t>(m_key.size());
        held.request.op = op;
        held.request.ttlSeconds = ttl;
        held.key = m_key;
        held.reportedValue = size;
        held.isRead = isRead;
        m_window.push(std::move(held));
        // Lines can arrive out of order: a window of them is held and released in gid order.
        while (m_window.size() > kReorderWindow)
            release();
        return std::nullopt;
    }
    void inputEnded() override {
        while (!m_window.empty())
            release();
    }

private:
    static constexpr std::size_t kReorderWindow = 4096;
    struct Held {
        std::uint64_t gid = 0;
        Request request;
        std::string key;
        std::uint32_t reportedValue = 0;
        bool isRead = false;
        bool operator>(const Held& o) const { return gid > o.gid; }
    };
    void release() {
        const Held& top = m_window.top();
        pushKeyed(top.request, top.key, top.reportedValue, top.isRead, top.request.op != Op::Delete);
        m_window.pop();
    }
    std::priority_queue<Held, std::vector<Held>, std::greater<>> m_window;
    std::vector<std::pair<std::string_view, std::string_view>> m_pairs;
    std::string m_key;
};

class MetadumpImporter final : public LineImporter {
public:
    using LineImporter::LineImporter;

protected:
    std::optional<LineError> parseLine(std::string_view line) override {
        if (line == "END")
            return std::nullopt;
        if (!splitPairs(line, m_pairs))
            return LineError { "malformed line", "expected space-separated key=value pairs" };
        if (!uriDecode(valueOf(m_pairs, "key"), m_key) || m_key.empty())
            return LineError { "bad key", "field key is missing or has a malformed %HH escape" };
        std::uint64_t total = 0, cas = 0, flags = 0;
        if (auto e = parseField(valueOf(m_pairs, "size"), "size", total))
            return e;
        if (!valueOf(m_pairs, "cas").empty())
            if (auto e = parseField(valueOf(m_pairs, "cas"), "cas", cas))
                return e;
        if (!valueOf(m_pairs, "flags").empty())
            if (auto e = parseField(valueOf(m_pairs, "flags"), "flags", flags))
                return e;
        // size is ITEM_ntotal: take the header, CAS (when the server has it: cas != 0), key + NUL, flags
        // and CRLF back out to get the value length.
        const std::uint64_t fixed = kItemHeaderBytes + (cas != 0 ? kCasBytes : 0) + m_key.size() + kKeyTerminator
            + (flags != 0 ? kFlagsBytes : 0) + kValueTerminator;
        if (total < fixed)
            return LineError { "impossible size",
                "field size " + std::to_string(total) + " is smaller than the item's fixed part "
                    + std::to_string(fixed) };
        if (total - fixed > UINT32_MAX)
            return LineError { "size over 4 GiB", "field size is over 4 GiB" };
        const auto exp = valueOf(m_pairs, "exp");
        Request r;
        r.keyBytes = static_cast<std::uint32_t>(m_key.size());
        r.valueBytes = static_cast<std::uint32_t>(total - fixed);
        r.op = Op::Set;
        r.ttlSeconds = (exp.empty() || exp == "-1" || exp == "0") ? 0 : kSnapshotTtlSeconds;
        pushKeyed(r, m_key, 0, false, false);
        return std::nullopt;
    }

private:
    std::vector<std::pair<std::string_view, std::string_view>> m_pairs;
    std::string m_key;
};

} // namespace

bool detectWatch(std::string_view firstLine) {
    if (firstLine == "OK")
        return false;
    return firstLine.rfind("ts=", 0) == 0 && firstLine.find(" gid=") != std::string_view::npos;
}

bool detectMetadump(std::string_view firstLine) {
    return firstLine.rfind("key=", 0) == 0 && firstLine.find(" exp=") != std::string_view::npos
        && firstLine.find(" size=") != std::string_view::npos;
}

std::unique_ptr<Importer> makeWatchImporter(std::unique_ptr<InputStream> input, const ImportOptions& options) {
    return std::make_unique<WatchImporter>("mc-watch", std::move(input), options);
}

std::unique_ptr<Importer> makeMetadumpImporter(std::unique_ptr<InputStream> input, const ImportOptions& options) {
    return std::make_unique<MetadumpImporter>("mc-metadump", std::move(input), options);
}

} // namespace layoutlab
