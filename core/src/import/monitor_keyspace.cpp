// SPDX-License-Identifier: MIT
#include "monitor_keyspace.h"

#include "layoutlab/import/importer.h"
#include "layoutlab/trace/random.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace layoutlab::monitor {

namespace {
// util.h MAX_LONG_DOUBLE_CHARS: string2ld refuses longer input.
constexpr std::size_t kMaxLongDoubleChars = 5 * 1024;
} // namespace

std::optional<std::int64_t> parseLongLong(std::string_view text) {
    if (text.empty() || text.size() > 20)
        return std::nullopt;
    std::size_t i = 0;
    bool negative = false;
    if (text[0] == '-') {
        negative = true;
        if (++i == text.size())
            return std::nullopt;
    }
    if (text[i] == '0' && text.size() > i + 1)
        return std::nullopt; // leading zeros (and "-0...") are strings
    if (text.size() == 1 && text[0] == '0')
        return 0;
    std::uint64_t v = 0;
    for (; i < text.size(); ++i) {
        const auto d = static_cast<unsigned>(text[i] - '0');
        if (d > 9)
            return std::nullopt;
        if (v > (UINT64_MAX - d) / 10)
            return std::nullopt;
        v = v * 10 + d;
    }
    if (negative) {
        if (v == 0 || v > std::uint64_t { INT64_MAX } + 1)
            return std::nullopt; // "-0" is not accepted by string2ll
        return v == std::uint64_t { INT64_MAX } + 1 ? INT64_MIN : -static_cast<std::int64_t>(v);
    }
    if (v > static_cast<std::uint64_t>(INT64_MAX))
        return std::nullopt;
    return static_cast<std::int64_t>(v);
}

std::optional<long double> parseLongDouble(std::string_view text) {
    if (text.empty() || text.size() >= kMaxLongDoubleChars)
        return std::nullopt;
    const std::string buffer(text);
    errno = 0;
    char* end = nullptr;
    const long double value = std::strtold(buffer.c_str(), &end);
    if (std::isspace(static_cast<unsigned char>(buffer[0])) || *end != '\0'
        || (errno == ERANGE && (value == HUGE_VALL || value == -HUGE_VALL || std::fpclassify(value) == FP_ZERO))
        || std::isnan(value))
        return std::nullopt;
    return value;
}

std::string formatLongDouble(long double value) {
    char buffer[kMaxLongDoubleChars];
    int length = std::snprintf(buffer, sizeof buffer, "%.17Lf", value);
    if (length < 0 || static_cast<std::size_t>(length) + 1 > sizeof buffer)
        return {};
    if (std::strchr(buffer, '.') != nullptr) {
        char* p = buffer + length - 1;
        while (*p == '0') {
            --p;
            --length;
        }
        if (*p == '.')
            --length;
    }
    if (length == 2 && buffer[0] == '-' && buffer[1] == '0')
        return "0";
    return std::string(buffer, static_cast<std::size_t>(length));
}

const std::string& SetMembers::draw(std::uint64_t seed) {
    std::uint64_t state = seed ^ draws++;
    const std::uint64_t k = Random::splitmix64(state) % places.size();
    return *byPlace.at(*places.find_by_order(k));
}

KeyValue KeyValue::copy() const {
    KeyValue out;
    out.content = content;
    out.integer = integer;
    out.number = number;
    out.expireAtMs = expireAtMs;
    out.length = length;
    out.text = text;
    out.raw = raw;
    out.listSizesGiven = listSizesGiven;
    if (hash)
        out.hash = std::make_unique<HashFields>(*hash);
    if (zset)
        out.zset = std::make_unique<std::unordered_map<std::string, double>>(*zset);
    if (list)
        out.list = std::make_unique<std::deque<std::string>>(*list);
    if (hll)
        out.hll = std::make_unique<HyperLogLogState>(*hll);
    if (set) { // its places point into its own map: made again
        out.set = std::make_unique<SetMembers>();
        SetMembers& members = *out.set;
        for (const std::uint32_t place : set->places)
            members.add(*set->byPlace.at(place));
    }
    return out;
}

void KeyValue::assign(std::string_view value) {
    length = value.size();
    raw = false;
    text.clear();
    hash.reset();
    hll.reset();
    if (const auto i = parseLongLong(value)) {
        content = Content::Integer;
        integer = *i;
        number = static_cast<long double>(*i);
    } else if (const auto d = parseLongDouble(value)) {
        content = Content::Float;
        number = *d;
        text = value;
    } else {
        content = Content::Other;
    }
}

std::uint32_t databaseOf(std::string_view client) {
    std::uint32_t db = 0;
    for (const char c : client.substr(0, client.find(' '))) {
        if (c < '0' || c > '9' || db > 1000000)
            return 0;
        db = db * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return db;
}

std::uint64_t keyHashIn(std::string_view key, std::uint32_t db) {
    std::uint64_t hash = KeyInterner::hashKey(key);
    if (db == 0)
        return hash;
    std::uint64_t state = hash ^ (std::uint64_t { db } << 40);
    return Random::splitmix64(state);
}

std::uint32_t MonitorKeyspace::holderOf(std::uint32_t db) const {
    if (m_holders.empty()) [[likely]] // asked on every line: most captures never SWAPDB
        return db;
    const auto it = m_holders.find(db);
    return it == m_holders.end() ? db : it->second;
}

void MonitorKeyspace::swapDatabases(std::uint32_t a, std::uint32_t b) {
    const std::uint32_t holderOfA = holderOf(a);
    m_holders[a] = holderOf(b);
    m_holders[b] = holderOfA;
}

KeyValue* MonitorKeyspace::findIn(std::string_view key, std::uint32_t holder, std::uint64_t nowMs) {
    const auto it = m_keys.find(keyHashIn(key, holder));
    if (it == m_keys.end())
        return nullptr;
    KeyValue& v = it->second.value;
    // Expired once the clock is past its time (db.c keyIsExpired: `now > when`, as the replay takes it):
    // db.c expireIfNeeded deletes it on access.
    if (v.present() && v.expireAtMs != 0 && nowMs > v.expireAtMs)
        v = KeyValue {};
    return &v;
}

KeyValue& MonitorKeyspace::atIn(std::string_view key, std::uint32_t holder, std::uint64_t nowMs) {
    if (KeyValue* v = findIn(key, holder, nowMs))
        return *v;
    Entry& made = m_keys[keyHashIn(key, holder)];
    made.keyBytes = static_cast<std::uint32_t>(key.size());
    made.db = holder;
    return made.value;
}

} // namespace layoutlab::monitor
