// SPDX-License-Identifier: MIT
#pragma once

// What the MONITOR importer's commands that name several collection keys share (monitor_moves.cpp,
// monitor_set_store.cpp): each is applied as the single-key commands whose effect it has, its requests naming
// their keys.

#include "monitor_collections.h"

#include <fmt/format.h>
#include <optional>
#include <span>

namespace layoutlab::monitor {

class MultiKeyCommand {
public:
    MultiKeyCommand(
        std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs)
        : m_name(name)
        , m_args(args)
        , m_keys(keys)
        , m_nowMs(nowMs) { }

protected:
    void refuse(std::string reason, std::string detail) {
        m_effect = {};
        m_effect.refusal = std::move(reason);
        m_effect.detail = std::move(detail);
    }
    bool arity(std::size_t least, std::size_t most = SIZE_MAX) {
        if (m_args.size() >= least && m_args.size() <= most)
            return true;
        refuse("wrong number of arguments", fmt::format("{} arguments", m_args.size() - 1));
        return false;
    }
    // What `key` holds when it is present and of `content`; nullptr when absent; nullopt after a WRONGTYPE.
    std::optional<KeyValue*> typed(const std::string& key, KeyValue::Content content) {
        KeyValue* v = m_keys.find(key, m_nowMs);
        if (!v || !v->present())
            return nullptr;
        if (v->content != content) {
            refuse(std::string(kWrongType), "the key holds " + std::string(typeName(v->content)));
            return std::nullopt;
        }
        return v;
    }
    // A timeout as getTimeoutFromObjectOrReply takes it: a non-negative number of seconds.
    bool timeout(const std::string& text) {
        const auto t = parseLongDouble(text);
        if (!t || *t < 0) {
            refuse("timeout is not a float or out of range", "'" + text.substr(0, 40) + "'");
            return false;
        }
        return true;
    }
    // A single-key command's effect appended, its requests naming `key`.
    void append(CollectionCommandEffect part, const std::string& key) {
        if (!part.refusal.empty())
            return refuse(std::move(part.refusal), std::move(part.detail));
        for (Request& r : part.requests) {
            m_effect.requests.push_back(r);
            m_effect.keys.push_back(part.keys.empty() ? key : part.keys[&r - part.requests.data()]);
        }
    }
    void apply(std::vector<std::string> args) {
        const std::string key = args[1];
        append(applyCollectionCommand(args[0], args, m_keys, m_nowMs), key);
    }
    // A STORE's destination emptied for its result (setKey replaces the value, its TTL gone; an empty result
    // deletes it): a delete of the key, when the capture showed it held.
    void emptyDestination(const std::string& key) {
        if (KeyValue* held = m_keys.find(key, m_nowMs); held && held->present()) {
            Request r;
            r.op = Op::Delete;
            m_effect.requests.push_back(r);
            m_effect.keys.push_back(key);
            *held = KeyValue {};
        }
    }
    // The first of `names` holding a non-empty collection of `content`, or nullptr (none, or a WRONGTYPE).
    const std::string* firstHolding(std::span<const std::string> names, KeyValue::Content content) {
        for (const std::string& key : names) {
            const auto v = typed(key, content);
            if (!v)
                return nullptr;
            if (*v)
                return &key;
        }
        return nullptr;
    }

    std::string_view m_name;
    const std::vector<std::string>& m_args;
    MonitorKeyspace& m_keys;
    std::uint64_t m_nowMs;
    CollectionCommandEffect m_effect;
};

} // namespace layoutlab::monitor
