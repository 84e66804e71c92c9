// SPDX-License-Identifier: MIT
// Hash commands as t_hash.c runs them (Redis 7.0-7.2, Valkey 8-9 alike for these):
//   hsetCommand (HSET, HMSET): hashTypeTryConversion over all the pairs, then hashTypeSet for each, a
//     field given twice set twice.
//   hsetnxCommand: hashTypeExists (a lookup); for a new field, hashTypeTryConversion and hashTypeSet.
//   hdelCommand: hashTypeDelete for each field, a lookup for one that is not there; the key goes with its
//     last field.
//   hincrbyCommand, hincrbyfloatCommand: hashTypeGetValue (a lookup), then hashTypeSet of the result
//     (sdsfromlonglong; ld2string LD_STR_HUMAN), no hashTypeTryConversion; an error leaves the hash alone.
//   hgetCommand, hmgetCommand, hexistsCommand, hstrlenCommand: a lookup per field.
// A key of another type answers WRONGTYPE (checkType) and nothing changes.

#include "monitor_collections.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>

namespace layoutlab::monitor {

namespace {
constexpr std::array<std::string_view, 10> kElementCommands { "HSET", "HMSET", "HSETNX", "HDEL", "HINCRBY",
    "HINCRBYFLOAT", "HGET", "HMGET", "HEXISTS", "HSTRLEN" };
constexpr std::array<std::string_view, 6> kWholeReads { "HGETALL", "HKEYS", "HVALS", "HLEN", "HSCAN", "HRANDFIELD" };

bool numeric(std::string_view value) {
    return parseLongLong(value).has_value() || parseLongDouble(value).has_value();
}
FieldValue fieldValueOf(std::string_view value) {
    return { static_cast<std::uint32_t>(value.size()), numeric(value) ? std::string(value) : std::string() };
}
IntegerClass classOf(const FieldValue& v) {
    return v.numeric.empty() ? IntegerClass::None : integerClassOf(v.numeric);
}

class HashCommand : CollectionCommand {
public:
    HashCommand(std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs)
        : CollectionCommand(CollectionKind::Hash, name, args, keys, nowMs) { }

    CollectionCommandEffect run() {
        if (!checkArity() || !lookUpKey(KeyValue::Content::Hash))
            return std::move(m_effect);
        if (m_name == "HSET" || m_name == "HMSET")
            set();
        else if (m_name == "HSETNX")
            setIfAbsent();
        else if (m_name == "HDEL")
            remove();
        else if (m_name == "HINCRBY")
            incrementBy();
        else if (m_name == "HINCRBYFLOAT")
            incrementByFloat();
        else
            read();
        return std::move(m_effect);
    }

private:
    bool checkArity() {
        const std::size_t n = m_args.size();
        const bool ok = (m_name == "HSET" || m_name == "HMSET")                       ? n >= 4 && n % 2 == 0
            : (m_name == "HDEL" || m_name == "HMGET")                                 ? n >= 3
            : (m_name == "HSETNX" || m_name == "HINCRBY" || m_name == "HINCRBYFLOAT") ? n == 4
                                                                                      : n == 3;
        if (!ok)
            refuse("wrong number of arguments", fmt::format("{} arguments", n - 1));
        return ok;
    }
    // The key's fields, the key made a hash when absent (hashTypeLookupWriteOrCreate).
    HashFields& fields() { return *keyMade(KeyValue::Content::Hash).hash; }
    void pairs(std::size_t firstArg) { command((m_args.size() - firstArg) / 2, firstArg); }
    // hashTypeSet: the field's value replaced, or the pair added.
    void store(HashFields& hash, const std::string& field, std::string_view value) {
        const FieldValue after = fieldValueOf(value);
        const auto found = hash.find(field);
        Request r = element(found == hash.end() ? ElementAction::Add : ElementAction::Update, field);
        r.valueBytes = after.length;
        m_op.value = classOf(after);
        if (found != hash.end()) {
            r.ttlSeconds = found->second.length; // the prior value's length
            m_op.prior = classOf(found->second);
            found->second = after;
        } else {
            hash.emplace(field, after);
        }
        push(r);
    }
    void set() {
        HashFields& hash = fields();
        pairs(2);
        for (std::size_t i = 2; i + 1 < m_args.size(); i += 2)
            store(hash, m_args[i], m_args[i + 1]);
    }
    void setIfAbsent() {
        HashFields& hash = fields();
        lookup(m_args[2]); // hashTypeExists
        if (hash.count(m_args[2]))
            return;
        pairs(2);
        store(hash, m_args[2], m_args[3]);
    }
    void remove() {
        if (!present())
            return; // a missing key: nothing to delete
        HashFields& hash = *m_key->hash;
        const std::size_t first = requestsSoFar();
        for (std::size_t i = 2; i < m_args.size(); ++i) {
            const auto found = hash.find(m_args[i]);
            if (found == hash.end()) { // looked up all the same (a table's delete takes a rehash step first)
                lookup(m_args[i]);
                continue;
            }
            Request r = element(ElementAction::Remove, m_args[i]);
            r.ttlSeconds = found->second.length;
            m_op.prior = classOf(found->second);
            push(r);
            hash.erase(found);
        }
        markRemovalsOfOneCommand(first);
        if (hash.empty())
            *m_key = KeyValue {}; // the server deletes an empty hash
    }
    void incrementBy() {
        const auto by = parseLongLong(m_args[3]);
        if (!by)
            return refuse("value is not an integer or out of range", "'" + m_args[3].substr(0, 40) + "'");
        HashFields& hash = fields();
        lookup(m_args[2]); // hashTypeGetValue
        std::int64_t old = 0;
        if (const auto found = hash.find(m_args[2]); found != hash.end()) {
            const auto v = parseLongLong(found->second.numeric);
            if (!v)
                return keepLookupOnly("hash value is not an integer");
            old = *v;
        }
        if ((*by < 0 && old < 0 && *by < INT64_MIN - old) || (*by > 0 && old > 0 && *by > INT64_MAX - old))
            return keepLookupOnly("increment or decrement would overflow");
        store(hash, m_args[2], std::to_string(old + *by));
    }
    void incrementByFloat() {
        const auto by = parseLongDouble(m_args[3]);
        if (!by)
            return refuse("value is not a valid float", "'" + m_args[3].substr(0, 40) + "'");
        HashFields& hash = fields();
        lookup(m_args[2]);
        long double old = 0;
        if (const auto found = hash.find(m_args[2]); found != hash.end()) {
            const auto v = parseLongDouble(found->second.numeric);
            if (!v)
                return keepLookupOnly("hash value is not a float");
            old = *v;
        }
        const long double result = old + *by;
        if (std::isnan(result) || std::isinf(result))
            return keepLookupOnly("increment would produce NaN or Infinity");
        store(hash, m_args[2], formatLongDouble(result));
    }
    // The command failed after its lookup: the lookup stays (it advanced a table's rehashing), nothing else
    // changes; a key the command made for itself is not left empty in the importer's keyspace.
    void keepLookupOnly(const char* reason) {
        m_effect.refusal = reason;
        m_effect.detail = "field '" + m_args[2].substr(0, 40) + "'";
        if (m_key->hash->empty())
            *m_key = KeyValue {};
    }
    void read() {
        if (!present())
            return;
        const std::size_t first = 2, last = m_name == "HMGET" ? m_args.size() : 3;
        for (std::size_t i = first; i < last; ++i)
            lookup(m_args[i]);
    }
};
} // namespace

const CollectionCommands kHashCommands { kElementCommands, kWholeReads,
    [](std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs) {
        return HashCommand(name, args, keys, nowMs).run();
    } };

} // namespace layoutlab::monitor
