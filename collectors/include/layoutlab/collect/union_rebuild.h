// SPDX-License-Identifier: MIT
#pragma once

// A ZUNIONSTORE result rebuilt by the server's own ZUNIONSTORE (ElementCommandWriter): the trace holds the
// result's sources in the order the command read them, each a count and its members as the union met them
// (request.h: a new member's Add, a Read of one the result already held). The writer gives the new members
// their made-up names; this scores each member by its place in its source (so that the server meets them in the
// trace's order; a skiplist's scores take no byte more or less), puts each source back together, the members
// met again named as one of the earlier sources' of their shape, and sends:
//   ZADD of each source but the last into a key of its own (named with a byte no trace key holds), the last
//   into the destination itself, then ZUNIONSTORE key n sources... key AGGREGATE MIN, then DEL of the others.
// The server then expands the result's table for its largest source and adds the members in the trace's
// order, with the trace's lookups, as the captured command did (t_zset.c zunionInterDiffGenericCommand). The
// other sources' keys live in the destination's database for the length of the command; the keyspace's table
// grows for them only if they take it past its fill limit, which `send` cannot know.
// A result that ends a listpack (the server converts it when it fits: zsetConvertToListpackIfNeeded) has no
// table left to show how it was built: it is sent as one ZADD of its members, which makes that listpack as
// the model does, with no other keys.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace layoutlab {

class UnionRebuild {
public:
    using Command = std::vector<std::string>;

    // `endsSkiplist`: the result is past the server's listpack limits.
    UnionRebuild(std::uint32_t keyId, std::string key, bool endsSkiplist)
        : m_keyId(keyId)
        , m_key(std::move(key))
        , m_endsSkiplist(endsSkiplist) { }

    std::uint32_t keyId() const { return m_keyId; }
    bool endsSkiplist() const { return m_endsSkiplist; }
    // A source begins (a Size); the first one's `total` is the members of every source (request.h).
    void source(std::uint64_t total);
    // A member new to the result, of name shape `shape` (a length and class), with the trace's score (sent
    // only when the result ends a listpack).
    void added(std::string score, std::string name, std::uint64_t shape);
    // A member the result held already, of `shape`: named as an earlier source's member not yet in this one;
    // false when there is none (the trace's sources do not add up).
    bool found(std::uint64_t shape);
    // Every member of every source has come.
    bool complete() const { return m_started && m_left == 0; }
    // The commands that rebuild it (the members so far when not complete).
    void send(std::vector<Command>& out);

private:
    // The member's score in its source (endsSkiplist: its place there), and one more member met.
    std::string met(std::string score);

    std::uint32_t m_keyId;
    std::string m_key;
    bool m_endsSkiplist;
    bool m_started = false;
    std::uint64_t m_left = 0;
    std::uint64_t m_place = 0; // members met in the current source
    std::vector<Command> m_sources; // each one's score and name pairs
    // The earlier sources' names by shape, and how many of each this source has named again.
    std::map<std::uint64_t, std::vector<std::string>> m_earlier;
    std::map<std::uint64_t, std::vector<std::string>> m_current;
    std::map<std::uint64_t, std::size_t> m_reused;
};

} // namespace layoutlab
