// SPDX-License-Identifier: MIT
// The cache lines a lookup of a collection key's element reads (CollectionKeyModel::lookupLines): the cost the
// collections' compact encodings pay for their bytes. Each encoding is walked as the engine's lookup walks it:
//   - a listpack from its first entry (listpack.c lpFind, which t_hash.c hashTypeGetFromListpack, t_set.c
//     setTypeIsMember and t_zset.c zzlFind call): each entry before the element read as far as its encoding
//     bytes (lpGetWithSize for a compared one, lpSkip for a hash's or sorted set's value it steps over), the
//     element and its value in full;
//   - an intset by intset.c intsetSearch: its header, its last and first members, then the binary search's
//     probes;
//   - a table (dict.c dictFind; hashtable.c findBucket): the bucket, then each allocation of the element's
//     entry (a dictEntry, a field's and a value's sds, a skiplist node), and on the dict lines the entries
//     chained ahead of it, a dictEntry and a key's sds each;
//   - a list (t_list.c lindexCommand at an index drawn evenly): quicklist.c quicklistGetIteratorAtIdx walks
//     the node structs from the nearer end, then listpack.c lpSeek the node's entries from its nearer end.
// Where an allocation starts within a line follows jemalloc: the regions of a slab lie at the size class's
// stride from the slab's page-aligned start (arena.c arena_slab_reg_alloc: slab address + reg_size × regind),
// so an allocation starts at each multiple of gcd(class, 64) within its line alike. Simplified, and said so:
// a table mid-rehash is looked up as if it were done; a list node's entries are taken at their mean size.

#include "collection_key_ops.h"
#include "collection_rules.h"

#include "layoutlab/layout/collection_key_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace layoutlab::collection {

namespace {

constexpr std::uint64_t kLineBytes = 64;

// Where in a line an allocation of `usable` bytes starts, each place as likely (see above).
std::vector<std::uint64_t> lineOffsets(std::uint64_t usable) {
    const std::uint64_t step = std::gcd(std::max<std::uint64_t>(usable, 1), kLineBytes);
    std::vector<std::uint64_t> out;
    for (std::uint64_t o = 0; o < kLineBytes; o += step)
        out.push_back(o);
    return out;
}

// Lines of `bytes` read from the start of an allocation of `usable` bytes, over the places it may start at.
double expectedSpanLines(double bytes, std::uint64_t usable) {
    if (bytes <= 0)
        return 0;
    const auto offsets = lineOffsets(usable);
    double sum = 0;
    for (const std::uint64_t o : offsets)
        sum += std::ceil((static_cast<double>(o) + bytes) / kLineBytes);
    return sum / static_cast<double>(offsets.size());
}

// Reads moving forward through one allocation starting `offset` bytes into a line: the lines touched so far.
class ForwardReads {
public:
    explicit ForwardReads(std::uint64_t offset)
        : m_offset(offset) { }
    void read(std::uint64_t from, std::uint64_t bytes) {
        if (bytes == 0)
            return;
        const std::int64_t first = static_cast<std::int64_t>((m_offset + from) / kLineBytes);
        const std::int64_t last = static_cast<std::int64_t>((m_offset + from + bytes - 1) / kLineBytes);
        if (last > m_last)
            m_lines += static_cast<std::uint64_t>(last - std::max(first - 1, m_last));
        m_last = std::max(m_last, last);
    }
    std::uint64_t lines() const { return m_lines; }

private:
    std::uint64_t m_offset;
    std::int64_t m_last = -1;
    std::uint64_t m_lines = 0;
};

// A listpack entry's bytes before its backlen, and how many of them an entry walked past is read for: an
// integer's whole encoding, a string's encoding bytes (lpEncodeString: one under 64 bytes, two under 4,096,
// else five).
struct EntryReads {
    std::uint64_t encoded = 0;
    std::uint64_t total = 0;
    std::uint64_t header = 0;
};
EntryReads entryReads(ElementValue e) {
    EntryReads r;
    r.total = listpack::entryBytes(e.bytes, e.integer);
    if (e.integer != IntegerClass::None) {
        r.header = r.total - 1; // an integer's encoding is at most 9 bytes: a one-byte backlen
        r.encoded = r.header;
    } else {
        r.header = e.bytes < 64 ? 1 : e.bytes < 4096 ? 2 : 5;
        r.encoded = r.header + e.bytes;
    }
    return r;
}

// lpFind from the first entry for each element of a listpack, `pairs` when every element has a value after it
// (a hash's, a sorted set's score) which lpFind skips and the lookup then reads.
double listpackLookupLines(const CollectionKeyState& key, std::uint64_t usable, bool pairs) {
    const auto offsets = lineOffsets(usable);
    double sum = 0;
    for (const std::uint64_t o : offsets) {
        ForwardReads walked(o);
        walked.read(0, listpack::kHeaderBytes); // lpBytes, lpFirst
        std::uint64_t at = listpack::kHeaderBytes;
        for (const std::uint64_t packed : key.compactEntries) {
            const auto [element, value] = unpackEntry(packed);
            const EntryReads e = entryReads(element);
            const EntryReads v = pairs ? entryReads(value) : EntryReads {};
            ForwardReads found = walked;
            found.read(at, e.encoded); // compared in full (memcmp, or the integer)
            found.read(at + e.total, v.encoded); // the value read (lpGetValue)
            sum += static_cast<double>(found.lines());
            walked.read(at, e.header); // walked past: lpGetWithSize reads the length, lpSkip the value's
            walked.read(at + e.total, v.header);
            at += e.total + v.total;
        }
    }
    return sum / static_cast<double>(offsets.size());
}

// intsetSearch for each member of an intset of `n` members `width` bytes wide.
double intsetLookupLines(std::uint64_t n, std::uint64_t width, std::uint64_t usable) {
    if (n == 0)
        return 0;
    const auto offsets = lineOffsets(usable);
    double sum = 0;
    std::vector<std::uint64_t> lines;
    for (const std::uint64_t o : offsets) {
        auto touch = [&](std::uint64_t from, std::uint64_t bytes) {
            for (std::uint64_t l = (o + from) / kLineBytes; l <= (o + from + bytes - 1) / kLineBytes; ++l)
                if (std::find(lines.begin(), lines.end(), l) == lines.end())
                    lines.push_back(l);
        };
        auto member = [&](std::uint64_t i) { touch(kIntsetHeaderBytes + i * width, width); };
        for (std::uint64_t target = 0; target < n; ++target) {
            lines.clear();
            touch(0, kIntsetHeaderBytes); // is->length, is->encoding
            member(n - 1); // the range checks before the search
            member(0);
            std::int64_t min = 0, max = static_cast<std::int64_t>(n) - 1;
            while (max >= min) {
                const auto mid = static_cast<std::uint64_t>(min + max) >> 1;
                member(mid);
                if (mid == target)
                    break;
                if (target > mid)
                    min = static_cast<std::int64_t>(mid) + 1;
                else
                    max = static_cast<std::int64_t>(mid) - 1;
            }
            sum += static_cast<double>(lines.size());
        }
    }
    return sum / static_cast<double>(offsets.size());
}

// Lines of the bytes [a0, a1) and [b0, b1) of an allocation starting `offset` bytes into a line (a0 <= b0).
std::uint64_t linesOfTwo(std::uint64_t offset, std::uint64_t a0, std::uint64_t a1, std::uint64_t b0, std::uint64_t b1) {
    ForwardReads reads(offset);
    reads.read(a0, a1 - a0);
    reads.read(b0, b1 - b0);
    return reads.lines();
}

// lpSeek to each entry of a list's listpack (a quicklist node's) of `count` entries of `entry` bytes each:
// forward from the first to an entry in its first half (listpack.c lpSeek: index <= numele / 2), reading every
// entry walked past (lpNext); else back from the last (lpLast, then lpPrev), reading the listpack's header for
// its size first. An entry longer than a line is read for its length alone when walked past: a line per entry.
double listpackSeekLines(std::uint64_t count, double entry, std::uint64_t bytes, std::uint64_t usable) {
    const auto offsets = lineOffsets(usable);
    const auto e = static_cast<std::uint64_t>(std::llround(entry));
    double sum = 0;
    for (std::uint64_t k = 0; k < count; ++k) {
        const bool forward = k <= count / 2;
        const std::uint64_t steps = forward ? k : count - 1 - k;
        if (entry >= kLineBytes) { // the header's line, one per entry passed, the entry's own
            sum += 1 + static_cast<double>(steps) + expectedSpanLines(entry, usable);
            continue;
        }
        double lines = 0;
        for (const std::uint64_t o : offsets) {
            if (forward)
                lines += static_cast<double>(linesOfTwo(
                    o, 0, listpack::kHeaderBytes, listpack::kHeaderBytes, listpack::kHeaderBytes + (steps + 1) * e));
            else
                lines += static_cast<double>(
                    linesOfTwo(o, 0, listpack::kHeaderBytes, bytes - listpack::kEndBytes - (steps + 1) * e, bytes));
        }
        sum += lines / static_cast<double>(offsets.size());
    }
    return sum;
}

// LINDEX at each index of a list.
double listLookupLines(const KeyContext& c, const CollectionKeyState& key) {
    std::uint64_t length = 0;
    for (const ListNode& node : key.nodes)
        length += node.count;
    if (length == 0)
        return 0;
    const bool quicklist = key.table;
    const auto nodes = static_cast<double>(key.nodes.size());
    // quicklistGetIteratorAtIdx walks from the tail to an index past (count - 1) / 2.
    const auto headSideLast = static_cast<double>((length - 1) / 2);
    double sum = 0, start = 0;
    for (std::size_t j = 0; j < key.nodes.size(); ++j) {
        const ListNode& node = key.nodes[j];
        if (node.count == 0)
            continue;
        const double count = static_cast<double>(node.count);
        const double entry = static_cast<double>(node.bytes - listpack::kHeaderBytes - listpack::kEndBytes) / count;
        sum += listpackSeekLines(node.count, entry, node.bytes, c.allocator.usableSize(node.bytes));
        if (quicklist) {
            // The node structs walked from the nearer end of the list, one line each.
            const double headSide = std::clamp(headSideLast - start + 1, 0.0, count);
            sum += headSide * static_cast<double>(j + 1) + (count - headSide) * (nodes - static_cast<double>(j));
        }
        start += count;
    }
    return sum;
}

} // namespace

double lookupLines(const KeyContext& c, const CollectionKeyState& key, CollectionKind kind,
    const CollectionFootprint& whole, const CollectionFootprint& table) {
    if (kind == CollectionKind::List)
        return listLookupLines(c, key);
    if (key.entries == 0)
        return 0;
    if (!key.table) {
        if (key.intsetWidth != 0) {
            const std::uint64_t bytes = kIntsetHeaderBytes + key.entries * key.intsetWidth;
            return intsetLookupLines(key.entries, key.intsetWidth, c.allocator.usableSize(bytes));
        }
        return listpackLookupLines(key, c.allocator.usableSize(key.listpackBytes), kind != CollectionKind::Set);
    }
    // A table: its bucket, then the entry's allocations (each at the mean size of the key's entries'), and on
    // the dict lines the entries chained ahead of it in its bucket (dictAdd puts new ones first: half the
    // others in the bucket, in expectation), a dictEntry and the key's sds each. hashtable.c compares an
    // element only when its hash's high byte matches (one time in 256): none ahead.
    const auto entries = static_cast<double>(key.entries);
    const double objects = std::max(0.0, whole.allocations - table.allocations) / entries;
    const double objectBytes = objects > 0 ? (whole.requestedBytes - table.requestedBytes) / (objects * entries) : 0;
    const double perObject
        = expectedSpanLines(objectBytes, c.allocator.usableSize(static_cast<std::uint64_t>(std::llround(objectBytes))));
    double lines = 1 + objects * perObject;
    if (c.rules.dictTables() && key.index && key.index->buckets() > 0)
        lines += 2 * ((entries - 1) / static_cast<double>(key.index->buckets()) / 2);
    return lines * entries;
}

} // namespace layoutlab::collection
