// SPDX-License-Identifier: MIT
// The keyspace replay's string commands that change a value in place (APPEND, SETRANGE, INCR) and a HyperLogLog's
// changes: the value's sds by the engine's rules (StringRewriteRule), or made again at its new length.

#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/sim/keyspace_replay.h"

#include <algorithm>

namespace layoutlab {

namespace {
constexpr std::uint32_t kMaxIntegerChars = 20; // longest decimal long, sign included
} // namespace

template <bool Observed>
void KeyspaceReplay::storeRaw(KeyState& key, const Request& r, std::uint64_t len, sds::Buffer buffer) {
    const auto bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(len, UINT32_MAX));
    if (key.staleExpire()) [[unlikely]]
        rewriteStaleExpire(key, r, bytes, ValueKind::RawString);
    key.valueBytes = bytes;
    key.setKind(ValueKind::RawString);
    m_buffers[idOf(key)] = buffer;
    notifyStored<Observed>(key, r.op);
}

template <bool Observed> void KeyspaceReplay::createInPlace(KeyState& key, const Request& r, std::uint32_t len) {
    if (!m_strings || m_strings->mode() != StringRules::Mode::Sds) {
        write<Observed>(key, r, len, ValueKind::String);
        return;
    }
    // createObject(OBJ_STRING, sdsnewlen(NULL, len)): RAW, exact.
    m_buffers[idOf(key)] = m_strings->created(len);
    write<Observed>(key, r, len, ValueKind::RawString);
}

template <bool Observed> void KeyspaceReplay::storeString(KeyState& key, const Request& r, std::uint64_t len) {
    const auto bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(len, UINT32_MAX));
    if (key.staleExpire()) [[unlikely]]
        rewriteStaleExpire(key, r, bytes, ValueKind::String);
    key.valueBytes = bytes;
    key.setKind(ValueKind::String);
    notifyStored<Observed>(key, r.op);
}

template <bool Observed> void KeyspaceReplay::append(KeyState& key, const Request& r) {
    if (wrongType(key))
        return;
    const StringRules::Mode mode = m_strings ? m_strings->mode() : StringRules::Mode::Recreate;
    if (!key.live()) {
        if (mode == StringRules::Mode::Memcached) { // do_store_item: NOT_STORED
            tableOf(key).lookup();
            return;
        }
        if (!key.written())
            ++m_summary.unseenKeyRewrites;
        // t_string.c appendCommand creates it, as a SET without a TTL would.
        write<Observed>(key, r, r.valueBytes, r.kind);
        return;
    }
    tableOf(key).lookup();
    flushGets(key);
    const std::uint64_t grown = std::uint64_t { key.valueBytes } + r.valueBytes;
    if (mode != StringRules::Mode::Sds) {
        // A new value of the joined length (memcached do_store_item: a new item for append/prepend).
        storeString<Observed>(key, r, grown);
        return;
    }
    // t_string.c appendCommand: dbUnshareStringValue, then sdscatlen -> sdsMakeRoomFor (greedy).
    const sds::Buffer before = rawBuffer(key);
    storeRaw<Observed>(key, r, grown, m_strings->grown(before, key.valueBytes, r.valueBytes));
}

template <bool Observed> void KeyspaceReplay::setRange(KeyState& key, const Request& r) {
    if (r.kind == kHyperLogLogKind) [[unlikely]]
        return hyperLogLog<Observed>(key, r);
    if (wrongType(key))
        return;
    const StringRules::Mode mode = m_strings ? m_strings->mode() : StringRules::Mode::Recreate;
    const std::uint64_t end = r.valueBytes;
    if (!key.live()) {
        if (!key.written())
            ++m_summary.unseenKeyRewrites;
        createInPlace<Observed>(key, r, r.valueBytes); // t_string.c setrangeCommand: sdsnewlen(NULL, offset + len)
        return;
    }
    tableOf(key).lookup();
    flushGets(key);
    const std::uint64_t len = std::max<std::uint64_t>(key.valueBytes, end);
    if (mode != StringRules::Mode::Sds) {
        storeString<Observed>(key, r, len);
        return;
    }
    // dbUnshareStringValue, then sdsgrowzero(end) -> sdsMakeRoomFor(end - len) when it lengthens.
    sds::Buffer buffer = rawBuffer(key);
    if (end > key.valueBytes)
        buffer = m_strings->grown(buffer, key.valueBytes, end - key.valueBytes);
    storeRaw<Observed>(key, r, len, buffer);
}

template <bool Observed> void KeyspaceReplay::hyperLogLog(KeyState& key, const Request& r) {
    if (wrongType(key))
        return;
    const StringRules::Mode mode = m_strings ? m_strings->mode() : StringRules::Mode::Recreate;
    const std::uint32_t length = r.valueBytes;
    if (!key.live()) {
        createInPlace<Observed>(key, r, length); // hyperloglog.c createHLLObject: sdsnewlen(NULL, sparselen)
        return;
    }
    tableOf(key).lookup(); // pfaddCommand, pfmergeCommand: lookupKeyWrite
    flushGets(key);
    if (mode != StringRules::Mode::Sds) {
        storeString<Observed>(key, r, length);
        return;
    }
    const sds::Buffer before = rawBuffer(key);
    sds::Buffer after = before;
    if (length == kHyperLogLogDenseBytes) {
        if (key.valueBytes == kHyperLogLogDenseBytes)
            return; // dense already: hllDenseSet changes registers in place
        after = m_strings->created(length); // hllSparseToDense: sdsnewlen(NULL, HLL_DENSE_SIZE), the sparse freed
    } else {
        after = m_strings->hyperLogLogRoom(before, key.valueBytes);
    }
    if (after == before && length == key.valueBytes && key.kind() == ValueKind::RawString)
        return; // a register set without a change of length, in the room it had
    storeRaw<Observed>(key, r, length, after);
}

template <bool Observed> void KeyspaceReplay::increment(KeyState& key, const Request& r) {
    if (wrongType(key))
        return;
    const StringRules::Mode mode = m_strings ? m_strings->mode() : StringRules::Mode::Recreate;
    std::uint32_t chars = r.valueBytes ? r.valueBytes : (key.live() ? key.valueBytes : 1);
    ValueKind kind = r.kind == ValueKind::String || chars > kMaxIntegerChars ? ValueKind::String
        : r.kind == ValueKind::SmallInteger                                  ? ValueKind::SmallInteger
                                                                             : ValueKind::Integer;
    if (mode == StringRules::Mode::Memcached) {
        // memcached.c do_add_delta: NOT_FOUND for a missing key; the result is written over the old value
        // (padded with spaces) when it fits, else into a new item of its length.
        if (!key.live()) {
            tableOf(key).lookup();
            return;
        }
        chars = std::max(chars, key.valueBytes);
        kind = ValueKind::String;
    } else if (!key.written()) {
        ++m_summary.unseenKeyRewrites; // INCR on a missing key starts from 0 and creates it
    }
    // Redis/Valkey t_string.c incrDecrCommand: an INT changes in place, otherwise the result is a new
    // value as createStringObjectFromLongLongForValue makes it (shared for 0..9999, else INT): the same
    // memory as a SET of the result. INCRBYFLOAT's result is a string (createStringObjectFromLongDouble).
    write<Observed>(key, r, chars, kind); // the TTL stays
}

template void KeyspaceReplay::append<true>(KeyState& key, const Request& r);
template void KeyspaceReplay::append<false>(KeyState& key, const Request& r);
template void KeyspaceReplay::setRange<true>(KeyState& key, const Request& r);
template void KeyspaceReplay::setRange<false>(KeyState& key, const Request& r);
template void KeyspaceReplay::increment<true>(KeyState& key, const Request& r);
template void KeyspaceReplay::increment<false>(KeyState& key, const Request& r);

} // namespace layoutlab
