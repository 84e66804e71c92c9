// SPDX-License-Identifier: MIT
#pragma once

// The replay half of simulate(): applies requests to the live keyspace and the index tables.
// Per key id it keeps 16 bytes; expiring keys also have an 8-byte entry in a min-heap.

#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/index_table_model.h"
#include "layoutlab/sim/results.h"
#include "layoutlab/sim/shape_histogram.h"
#include "layoutlab/trace/trace_reader.h"

#include <queue>
#include <vector>

namespace layoutlab {

struct KeyState {
    std::uint32_t valueBytes = 0;
    std::uint32_t keyBytes = 0;
    std::uint32_t expireAtSeconds = 0; // valid when hasTtl
    std::uint8_t flags = 0;

    static constexpr std::uint8_t kLive = 1;
    static constexpr std::uint8_t kHasTtl = 2;
    static constexpr std::uint8_t kWritten = 4; // ever written (distinct keys)
    static constexpr unsigned kKindShift = 3;

    bool live() const { return flags & kLive; }
    bool hasTtl() const { return flags & kHasTtl; }
    ValueKind kind() const { return static_cast<ValueKind>((flags >> kKindShift) & 3u); }
    void setKind(ValueKind kind) {
        flags = static_cast<std::uint8_t>((flags & ~(3u << kKindShift)) | (static_cast<unsigned>(kind) << kKindShift));
    }
    std::uint64_t shape() const { return packShape(keyBytes, valueBytes, hasTtl(), kind()); }
};
static_assert(sizeof(KeyState) == 16, "per-key state stays at 16 bytes");

class KeyspaceReplay {
public:
    KeyspaceReplay(IndexPolicy policy, std::uint64_t keyIdHint);

    // Applies one batch; fails on an impossible request (key id or size out of range).
    Status apply(std::span<const Request> batch, std::uint64_t firstRequestNumber);
    void finish();

    const TraceSummary& summary() const { return m_summary; }
    const ShapeHistogram& getShapes() const { return m_getShapes; }
    ShapeHistogram keyspaceShapes() const;
    const IndexTableModel& keyspaceTable() const { return m_table; }
    const IndexTableModel* expiresTable() const { return m_hasExpiresTable ? &m_expires : nullptr; }

private:
    void write(KeyState& key, const Request& r, std::uint32_t valueBytes, ValueKind kind);
    void setTtl(KeyState& key, std::uint32_t keyId, std::uint64_t nowSeconds, std::uint32_t ttlSeconds);
    void clearTtl(KeyState& key);
    void remove(KeyState& key);
    void expireDue(std::uint64_t nowSeconds);
    void compactExpiryHeap();

    using Expiry = std::pair<std::uint32_t, std::uint32_t>; // (expire-at seconds, key id)
    std::vector<KeyState> m_keys;
    std::priority_queue<Expiry, std::vector<Expiry>, std::greater<>> m_expiryHeap;
    IndexTableModel m_table;
    IndexTableModel m_expires;
    bool m_hasExpiresTable;
    ShapeHistogram m_getShapes;
    TraceSummary m_summary;
};

} // namespace layoutlab
