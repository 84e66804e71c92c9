// SPDX-License-Identifier: MIT
#pragma once

// memcached 1.6 items (memcached.h struct _stritem, items.c do_item_alloc, item_make_header).
//
//   [item header 48: next, prev, h_next, time, exptime, nbytes, refcount, it_flags, slabs_clsid, nkey]
//   [CAS 8, unless -C] [key + NUL] [client flags 4, only if non-zero] [value + "\r\n"]
//   ITEM_ntotal = 48 + 8 + (K + 1) + (F ? 4 : 0) + (V + 2)
//
// Items above slab_chunk_max are chunked: a header item plus chunks of at most slab_chunk_max.

#include "layoutlab/layout/layout_model.h"
#include "layoutlab/layout/value_framing.h"

namespace layoutlab {

struct MemcachedParams {
    bool cas = true; // settings.use_cas (memcached.c): on unless -C
    Framing framing = Framing::Raw;
    std::uint32_t versionBytes = 0; // Rails cache version length, for the rails framings
};

class MemcachedLayout final : public LayoutModel {
public:
    explicit MemcachedLayout(const MemcachedParams& params);

    std::string spec() const override;
    std::string description() const override;
    std::optional<ThresholdParam> threshold() const override { return std::nullopt; }
    std::string defaultAllocator() const override { return "memcached:min=48,factor=1.25"; }
    Status checkAllocator(const AllocatorModel& allocator) const override;
    IndexPolicy indexPolicy() const override { return engineIndexPolicy(IndexKind::MemcachedAssoc, false); }
    KeyLayout describe(const KeyShape& shape, std::uint32_t threshold, const AllocatorModel& allocator) const override;
    StringRules stringRules() const override { return { StringRules::Mode::Memcached }; }

    // ITEM_ntotal for a stored value of `storedBytes` (after framing).
    std::uint64_t itemTotalBytes(std::uint32_t keyBytes, std::uint64_t storedBytes, bool nonZeroFlags) const;

private:
    MemcachedParams m_params;
};

} // namespace layoutlab
