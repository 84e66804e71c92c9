// SPDX-License-Identifier: MIT
#include "layoutlab/collect/element_commands.h"

#include "layoutlab/layout/collection_layout.h"

#include "layoutlab/trace/random.h"

#include <string>
#include <utility>

namespace layoutlab {

ElementCommandWriter::Key& ElementCommandWriter::keyOf(std::uint32_t keyId) {
    auto [at, made] = m_keys.try_emplace(keyId);
    if (made) {
        std::uint64_t seed = keyId;
        at->second.firstName = Random::splitmix64(seed);
    }
    return at->second;
}

std::string ElementCommandWriter::newName(Key& key, std::uint32_t bytes, IntegerClass cls) {
    std::string name;
    auto& made = key.made[shapeKey(bytes, cls)];
    if (!elementText(bytes, cls, made++, name, key.firstName))
        ++m_approximated;
    return name;
}

std::string ElementCommandWriter::take(Key& key, const Shape& shape) {
    const auto found = key.held.find(shape);
    if (found == key.held.end() || found->second.empty()) {
        ++m_unmatched;
        return {};
    }
    std::string name = std::move(found->second.back());
    found->second.pop_back();
    if (found->second.empty())
        key.held.erase(found);
    return name;
}

std::string ElementCommandWriter::absentName(Key& key, std::uint32_t bytes, IntegerClass cls) {
    std::string name;
    if (!elementText(bytes, cls, key.made[shapeKey(bytes, cls)], name, key.firstName))
        ++m_approximated;
    return name;
}

std::string ElementCommandWriter::value(std::uint32_t bytes, IntegerClass cls) {
    std::string text;
    if (!elementText(bytes, cls, 0, text))
        ++m_approximated;
    return text;
}

std::string ElementCommandWriter::score(std::uint32_t bytes, IntegerClass cls) {
    std::string text;
    if (!scoreText(bytes, cls, text))
        ++m_approximated;
    return text;
}

void ElementCommandWriter::add(
    std::uint32_t keyId, std::vector<std::string> words, Command whole, std::vector<Command>& out) {
    if (!m_pending || m_pending->keyId != keyId) {
        flush(out);
        out.push_back(std::move(whole));
        return;
    }
    Command& held = m_pending->command;
    if (held.empty())
        held = { whole[0], whole[1] }; // the verb and the key
    for (auto& w : words)
        held.push_back(std::move(w));
    if (--m_pending->remaining == 0)
        flush(out);
}

void ElementCommandWriter::removed(std::uint32_t keyId, Key& key) {
    if (key.elements > 0 && --key.elements == 0)
        m_keys.erase(keyId); // the server deletes a collection with its last element
}

void ElementCommandWriter::flush(std::vector<Command>& out) {
    sendUnion(out);
    if (m_pending && m_pending->intersection && !m_pending->command.empty())
        intersectionRebuilt(std::move(m_pending->command), out);
    else if (m_pending && !m_pending->command.empty()) {
        if (m_pending->onlyExisting)
            m_pending->command.insert(m_pending->command.begin() + 2, "XX");
        out.push_back(std::move(m_pending->command));
    }
    m_pending.reset();
    sendRemovals(out);
}

void ElementCommandWriter::intersectionRebuilt(Command members, std::vector<Command>& out) {
    const std::string key = members[1];
    members.insert(members.begin() + 2, "~");
    out.push_back(std::move(members));
    out.push_back({ "SREM", key, "~" });
    out.push_back({ "SINTERSTORE", key, key });
}

void ElementCommandWriter::sendRemovals(std::vector<Command>& out) {
    if (!m_removals)
        return;
    Removals held = std::move(*m_removals);
    m_removals.reset();
    if (held.byRange) {
        Command mark { "ZADD", held.key, "XX" };
        for (auto& name : held.names) {
            mark.push_back("-inf");
            mark.push_back(std::move(name));
        }
        out.push_back(std::move(mark));
        out.push_back({ "ZREMRANGEBYSCORE", held.key, "-inf", "-inf" });
        return;
    }
    const char* verb = held.collection == CollectionKind::Hash ? "HDEL"
        : held.collection == CollectionKind::Set               ? "SREM"
                                                               : "ZREM";
    Command command { verb, std::move(held.key) };
    for (auto& name : held.names)
        command.push_back(std::move(name));
    out.push_back(std::move(command));
}

void ElementCommandWriter::before(const Request& r, std::vector<Command>& out) {
    flush(out);
    if (r.op == Op::Set || r.op == Op::Replace || r.op == Op::Delete)
        m_keys.erase(r.keyId);
}

void ElementCommandWriter::insertBesidePlace(
    const Request& r, const std::string& key, std::string element, std::vector<Command>& out) {
    // The pivot's text is made up, so it is marked first: LSET puts there a string of '~' whose listpack entry
    // is as long as the pivot's (listpack.c: a string of up to 63 bytes takes its length and two), in place;
    // LINSERT finds it from the head, the only one; LSET then gives the place a made-up text of the pivot's
    // length and class, the same entry again.
    const ElementOp op = r.elementOp();
    const std::uint64_t entry = listpack::entryBytes(r.valueBytes, op.value);
    const std::string mark = op.value == IntegerClass::None ? std::string(r.valueBytes, '~')
                                                            : std::string(entry - 2, '~'); // an integer's: 2 to 10
    const std::uint64_t pivot = r.priorBytes() - 1;
    out.push_back({ "LSET", key, std::to_string(pivot), mark });
    out.push_back({ "LINSERT", key, op.atHead ? "BEFORE" : "AFTER", mark, std::move(element) });
    out.push_back({ "LSET", key, std::to_string(op.atHead ? pivot + 1 : pivot), value(r.valueBytes, op.value) });
}

Status ElementCommandWriter::listCommand(const Request& r, const std::string& key, std::vector<Command>& out) {
    const ElementOp op = r.elementOp();
    Key& state = keyOf(r.keyId);
    switch (op.action) {
    case ElementAction::Add: {
        std::string text = value(r.elementBytes, op.element);
        ++state.elements;
        if (r.priorBytes() > 0) { // LINSERT beside the pivot priorBytes - 1 places from the head (request.h)
            m_pending.reset();
            insertBesidePlace(r, key, std::move(text), out);
            break;
        }
        add(r.keyId, { text }, { op.atHead ? "LPUSH" : "RPUSH", key, text }, out);
        break;
    }
    case ElementAction::Remove:
        flush(out);
        if (r.valueBytes > 0) {
            // request.h: the element valueBytes - 1 places from the head (LREM). Its text is made up, so it is
            // marked first: a one-byte string LSET puts there in place (lpReplace, a node no larger), which LREM
            // then finds from the head, the only one (no made-up element is "~").
            out.push_back({ "LSET", key, std::to_string(r.valueBytes - 1), "~" });
            out.push_back({ "LREM", key, "1", "~" });
        } else {
            out.push_back({ op.atHead ? "LPOP" : "RPOP", key });
        }
        removed(r.keyId, state);
        break;
    case ElementAction::Update: // request.h: the place from the head in valueBytes
        flush(out);
        out.push_back({ "LSET", key, std::to_string(r.valueBytes), value(r.elementBytes, op.element) });
        break;
    default:
        break;
    }
    return Ok {};
}

bool ElementCommandWriter::namedAgain(const Request& r, const std::string& key, std::vector<Command>& out) {
    const ElementOp op = r.elementOp();
    Key& state = keyOf(r.keyId);
    // Any held name of the member's length and class: its score, the one it was sent with, is kept, so the
    // server finds it unchanged, as the capture's did (t_zset.c zsetAdd; t_set.c setTypeAdd returns 0).
    for (auto at = state.held.lower_bound(Shape { r.elementBytes, 0, IntegerClass::None, IntegerClass::None });
         at != state.held.end() && at->first.bytes == r.elementBytes; ++at) {
        if (at->first.cls != op.element || at->second.empty())
            continue;
        const std::string name = at->second.back();
        if (op.collection == CollectionKind::Set)
            add(r.keyId, { name }, { "SADD", key, name }, out);
        else {
            std::string text = score(at->first.valueBytes, at->first.valueClass);
            add(r.keyId, { text, name }, { "ZADD", key, text, name }, out);
        }
        return true;
    }
    return false;
}

Status ElementCommandWriter::write(const Request& r, const std::string& key, std::vector<Command>& out) {
    const ElementOp op = r.elementOp();
    if (m_union) {
        const bool continues = r.keyId == m_union->keyId() && op.collection == CollectionKind::SortedSet
            && (op.action == ElementAction::Size || op.action == ElementAction::Add
                || (op.action == ElementAction::Read && r.valueBytes == kFoundForInsert));
        if (continues)
            return unionWrite(r, out);
        sendUnion(out);
    }
    if (op.action == ElementAction::Size)
        return Ok {}; // what the replay knows of an element (request.h): nothing for the server to do
    if (op.action == ElementAction::Load)
        return usageError("the trace holds keys loaded from a snapshot: drive the RDB file itself, which the server "
                          "loads as it would its own");
    if (op.action == ElementAction::Read) {
        // A lookup moves a rehashing table on by a step (dict.c _dictRehashStep, hashtable.c
        // rehashStepOnReadIfNeeded), and a table that is still rehashing is not resized: the lookups are sent
        // for that. Which element is looked up changes nothing; a list's read changes nothing at all.
        if (op.collection == CollectionKind::List)
            return Ok {};
        if (op.collection == CollectionKind::Set && r.valueBytes == kRandomDraw) {
            // A member drawn at random (SPOP's): SRANDMEMBER draws one as the server does, with its steps.
            flush(out);
            out.push_back({ "SRANDMEMBER", key });
            return Ok {};
        }
        if (m_removals && m_removals->keyId == r.keyId && !m_removals->byRange) {
            // A field or member a removal command names and the key does not hold (HDEL h a x b): looked up
            // within that command, by a name the key has not had (the next one of its shape).
            m_removals->names.push_back(absentName(keyOf(r.keyId), r.elementBytes, op.element));
            return Ok {};
        }
        const bool withinCommand = m_pending && m_pending->keyId == r.keyId;
        if (withinCommand && op.collection != CollectionKind::Hash && namedAgain(r, key, out))
            return Ok {};
        if (withinCommand && op.collection == CollectionKind::SortedSet) {
            // A member the ZADD names and the key does not hold, left out: only ZADD XX leaves one out (any
            // other adds it), so the command is sent with XX, this member among its own by a name the key has
            // not had. The server decides the listpack's conversion on all of them (t_zset.c
            // zsetTypeMaybeConvert: a member longer than zset-max-listpack-value converts it, added or not) and
            // looks this one up, as the capture's did.
            m_pending->onlyExisting = true;
            std::string absent = absentName(keyOf(r.keyId), r.elementBytes, op.element);
            add(r.keyId, { "0", absent }, { "ZADD", key, "0", absent }, out);
            return Ok {};
        }
        if (!withinCommand)
            flush(out);
        std::string text;
        elementText(r.elementBytes, op.element, 0, text);
        const char* verb = op.collection == CollectionKind::Hash ? "HEXISTS"
            : op.collection == CollectionKind::Set               ? "SISMEMBER"
                                                                 : "ZSCORE";
        out.push_back({ verb, key, std::move(text) });
        if (withinCommand && --m_pending->remaining == 0)
            flush(out); // its last member was this one
        return Ok {};
    }
    if (op.action == ElementAction::Command) {
        flush(out);
        if (op.collection == CollectionKind::SortedSet && op.atHead) { // a ZUNIONSTORE's result (request.h)
            m_union.emplace(r.keyId, key,
                r.valueBytes > m_limits.zsetMaxListpackEntries || r.elementBytes > m_limits.zsetMaxListpackValue);
            return Ok {};
        }
        if (op.collection == CollectionKind::List && r.priorBytes() == kNoPivot) {
            // A LINSERT that found no pivot: its conversion for the element, nothing inserted. No element of
            // the server's is the pivot sent (made-up texts start with a letter or are integers).
            out.push_back({ "LINSERT", key, "AFTER", "~no pivot~", value(r.elementBytes, IntegerClass::None) });
            return Ok {};
        }
        if (r.valueBytes > 0) {
            // A SINTERSTORE's result (request.h): its smallest source an intset when it held integers only, within
            // the server's limit; then the SADD makes what the command made.
            const std::uint32_t source = op.collection == CollectionKind::Set ? r.priorBytes() : 0;
            m_pending = Pending { r.keyId, r.valueBytes, {},
                source != 0 && !intersectionOfIntset(source, m_limits.setMaxIntsetEntries) };
        }
        return Ok {};
    }
    if (op.collection == CollectionKind::List)
        return listCommand(r, key, out);
    Key& state = keyOf(r.keyId);
    const bool hash = op.collection == CollectionKind::Hash, set = op.collection == CollectionKind::Set;
    // A set's member has no value; a hash's value and a sorted set's score go with their field's shape.
    const Shape now { r.elementBytes, set ? 0 : r.valueBytes, op.element, set ? IntegerClass::None : op.value };
    const Shape prior { r.elementBytes, set ? 0 : r.priorBytes(), op.element, set ? IntegerClass::None : op.prior };
    std::string name;
    if (op.action == ElementAction::Add) {
        name = newName(state, r.elementBytes, op.element);
        ++state.elements;
    } else {
        name = take(state, prior);
        if (name.empty() && r.elementBytes != 0)
            return Ok {}; // nothing of that shape held: unmatched, counted
    }
    if (op.action == ElementAction::Remove) {
        const bool byRange = op.collection == CollectionKind::SortedSet && r.valueBytes == kRemovedByRange;
        if (!m_removals || m_removals->keyId != r.keyId || m_removals->byRange != byRange) {
            flush(out);
            m_removals = Removals { r.keyId, key, op.collection, byRange, {} };
        }
        m_removals->names.push_back(std::move(name));
        removed(r.keyId, state);
        if (!op.atHead) // the command's last (request.h)
            sendRemovals(out);
        return Ok {};
    }
    state.held[now].push_back(name);
    if (hash) {
        std::string text = value(r.valueBytes, op.value);
        add(r.keyId, { name, text }, { "HSET", key, name, text }, out);
    } else if (set) {
        add(r.keyId, { name }, { "SADD", key, name }, out);
    } else {
        std::string text = score(r.valueBytes, op.value);
        add(r.keyId, { text, name }, { "ZADD", key, text, name }, out);
    }
    return Ok {};
}

} // namespace layoutlab
