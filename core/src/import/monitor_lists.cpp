// SPDX-License-Identifier: MIT
// List commands as t_list.c runs them (Redis 7.0-7.2, Valkey 8-9 alike for these):
//   pushGenericCommand (LPUSH, RPUSH), pushxGenericCommand (LPUSHX, RPUSHX: only to a list that exists): the
//     command's start (its element count and their lengths summed: listTypeTryConvertListpack), then each
//     element pushed at the head (LPUSH: the first given ends up deepest) or the tail.
//   popGenericCommand (LPOP, RPOP [count]): one element, or up to count, from the head or the tail, each
//     with its length from the importer's copy; the key goes with its last element.
//   ltrimCommand: the elements before start and after stop, popped from each end (quicklistDelRange).
//   lsetCommand: the element at an index (from the head; negative from the tail) replaced, its place from the
//     head given in the update, with the element it replaces; an error for a missing key or an index out of
//     range.
// The importer keeps each list's elements in order. Commands that move elements
// between lists or pop from the first of several (LMOVE, BLPOP, LMPOP, ...) are rewritten into these
// (monitor_moves.cpp). lremCommand: each element equal to the argument removed where it is, from the head or
// the tail as the count says.
//   linsertCommand: BEFORE or AFTER checked first (a syntax error), then the key; the list's conversion for the
//     element (listTypeTryConversionAppend, as a push of it: made whether or not the pivot is found), then the
//     element inserted beside the first element from the head equal to the pivot (listTypeEqual: the same
//     text), the pivot's place from the head in the request; nothing where no element is the pivot.

#include "line_importer.h"
#include "monitor_collections.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <optional>

namespace layoutlab::monitor {

namespace {
constexpr std::array<std::string_view, 10> kElementCommands { "LPUSH", "RPUSH", "LPUSHX", "RPUSHX", "LPOP", "RPOP",
    "LTRIM", "LSET", "LREM", "LINSERT" };
constexpr std::array<std::string_view, 4> kWholeReads { "LRANGE", "LLEN", "LINDEX", "LPOS" };

class ListCommand : CollectionCommand {
public:
    ListCommand(std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs)
        : CollectionCommand(CollectionKind::List, name, args, keys, nowMs) { }

    CollectionCommandEffect run() {
        const std::size_t n = m_args.size();
        const bool push = m_name.find("PUSH") != std::string_view::npos;
        const bool ok = push                                            ? n >= 3
            : m_name == "LTRIM" || m_name == "LSET" || m_name == "LREM" ? n == 4
            : m_name == "LINSERT"                                       ? n == 5
                                                                        : n == 2 || n == 3;
        if (!ok) {
            refuse("wrong number of arguments", fmt::format("{} arguments", n - 1));
            return std::move(m_effect);
        }
        const bool before = m_name == "LINSERT" && equalsIgnoreCase(m_args[2], "BEFORE");
        if (m_name == "LINSERT" && !before && !equalsIgnoreCase(m_args[2], "AFTER")) {
            refuse("syntax error", "'" + m_args[2].substr(0, 40) + "'");
            return std::move(m_effect);
        }
        if (!lookUpKey(KeyValue::Content::List))
            return std::move(m_effect);
        if (push)
            pushAll(m_name[0] == 'L');
        else if (m_name == "LTRIM")
            trim();
        else if (m_name == "LSET")
            set();
        else if (m_name == "LREM")
            removeEqual();
        else if (m_name == "LINSERT")
            insert(before);
        else
            pop(m_name[0] == 'L');
        return std::move(m_effect);
    }

private:
    void pushAll(bool atHead) {
        if (!present() && m_name.back() == 'X')
            return; // LPUSHX, RPUSHX: no list, nothing pushed
        auto& list = *keyMade(KeyValue::Content::List).list;
        std::uint64_t total = 0;
        for (std::size_t i = 2; i < m_args.size(); ++i)
            total += m_args[i].size();
        Request start = element(ElementAction::Command, "");
        start.valueBytes = static_cast<std::uint32_t>(m_args.size() - 2);
        start.elementBytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(total, UINT32_MAX));
        m_op.element = IntegerClass::None;
        push(start);
        for (std::size_t i = 2; i < m_args.size(); ++i) {
            Request r = element(ElementAction::Add, m_args[i]);
            m_op.atHead = atHead;
            push(r);
            if (atHead)
                list.push_front(m_args[i]);
            else
                list.push_back(m_args[i]);
        }
    }
    // One element off the head or the tail, the key deleted with the last.
    void popOne(bool atHead) {
        auto& list = *m_key->list;
        Request r = element(ElementAction::Remove, atHead ? list.front() : list.back());
        m_op.atHead = atHead;
        push(r);
        if (atHead)
            list.pop_front();
        else
            list.pop_back();
        if (list.empty())
            *m_key = KeyValue {}; // the server deletes an empty list
    }
    void pop(bool atHead) {
        std::uint64_t count = 1;
        if (m_args.size() == 3) {
            const auto given = parseLongLong(m_args[2]);
            if (!given || *given < 0)
                return refuse("value is out of range, must be positive", "'" + m_args[2].substr(0, 40) + "'");
            count = static_cast<std::uint64_t>(*given);
        }
        for (std::uint64_t i = 0; i < count && present(); ++i)
            popOne(atHead);
    }
    void set() {
        const auto index = parseLongLong(m_args[2]);
        if (!index)
            return refuse("value is not an integer or out of range", "index");
        if (!present())
            return refuse("no such key", "'" + m_args[1].substr(0, 40) + "'");
        auto& list = *m_key->list;
        const auto length = static_cast<std::int64_t>(list.size());
        const std::int64_t at = *index < 0 ? length + *index : *index;
        if (at < 0 || at >= length)
            return refuse("index out of range", std::to_string(*index));
        std::string& before = list[static_cast<std::size_t>(at)];
        Request r = element(ElementAction::Update, m_args[3]);
        r.valueBytes = static_cast<std::uint32_t>(at); // request.h: a list's update names its place from the head
        r.ttlSeconds = static_cast<std::uint32_t>(before.size());
        m_op.prior = integerClassOf(before);
        push(r);
        before = m_args[3];
    }
    // lremCommand: the elements equal to args[3], from the head (a count of 0 or more: that many, 0 all) or
    // from the tail (below 0), each removed where it is (quicklistDelIndex), the key deleted when emptied.
    void removeEqual() {
        const auto count = parseLongLong(m_args[2]);
        if (!count)
            return refuse("value is not an integer or out of range", "count");
        if (!present())
            return;
        auto& list = *m_key->list;
        const bool fromTail = *count < 0;
        const std::uint64_t most = *count == 0 ? UINT64_MAX
            : fromTail                         ? static_cast<std::uint64_t>(-(*count + 1)) + 1
                                               : static_cast<std::uint64_t>(*count);
        std::uint64_t removed = 0;
        for (std::size_t k = 0; k < list.size() && removed < most;) {
            const std::size_t at = fromTail ? list.size() - 1 - k : k;
            if (list[at] != m_args[3]) {
                ++k;
                continue;
            }
            Request r = element(ElementAction::Remove, list[at]);
            r.valueBytes = static_cast<std::uint32_t>(at + 1); // request.h: a list's removal at a place
            push(r);
            list.erase(list.begin() + static_cast<std::ptrdiff_t>(at));
            ++removed; // the next element to look at is k places from the walk's end still
        }
        if (list.empty())
            *m_key = KeyValue {}; // the server deletes an empty list
    }
    void insert(bool before) {
        if (!present())
            return;
        command(1, 4, IntegerClass::None); // listTypeTryConversionAppend(argv 4..4): the element's length
        auto& list = *m_key->list;
        const auto pivot = std::find(list.begin(), list.end(), m_args[3]);
        if (pivot == list.end()) {
            m_effect.requests.back().ttlSeconds = kNoPivot; // request.h: the conversion all it did
            return;
        }
        const auto at = static_cast<std::uint64_t>(pivot - list.begin());
        if (!m_key->listSizesGiven) // request.h: the sizes a node's split needs, once for the list
            for (std::size_t i = 0; i < list.size(); ++i) {
                Request size = element(ElementAction::Size, list[i]);
                size.valueBytes = static_cast<std::uint32_t>(std::min<std::size_t>(i, UINT32_MAX));
                push(size);
            }
        m_key->listSizesGiven = true;
        Request r = element(ElementAction::Add, m_args[4]);
        r.ttlSeconds = static_cast<std::uint32_t>(std::min<std::uint64_t>(at + 1, UINT32_MAX)); // request.h
        r.valueBytes = static_cast<std::uint32_t>(std::min<std::size_t>(m_args[3].size(), UINT32_MAX));
        m_op.value = integerClassOf(m_args[3]);
        m_op.atHead = before;
        push(r);
        list.insert(before ? pivot : pivot + 1, m_args[4]);
    }
    void trim() {
        const auto start = parseLongLong(m_args[2]), stop = parseLongLong(m_args[3]);
        if (!start || !stop)
            return refuse("value is not an integer or out of range", "start or stop");
        if (!present())
            return;
        const auto length = static_cast<std::int64_t>(m_key->list->size());
        std::int64_t first = *start < 0 ? length + *start : *start;
        std::int64_t last = *stop < 0 ? length + *stop : *stop;
        first = std::max<std::int64_t>(first, 0);
        std::int64_t fromHead = length, fromTail = 0; // start past stop or past the end: all of it
        if (first <= last && first < length) {
            last = std::min(last, length - 1);
            fromHead = first;
            fromTail = length - last - 1;
        }
        for (std::int64_t i = 0; i < fromHead && present(); ++i)
            popOne(true);
        for (std::int64_t i = 0; i < fromTail && present(); ++i)
            popOne(false);
    }
};
} // namespace

const CollectionCommands kListCommands { kElementCommands, kWholeReads,
    [](std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs) {
        return ListCommand(name, args, keys, nowMs).run();
    } };

} // namespace layoutlab::monitor
