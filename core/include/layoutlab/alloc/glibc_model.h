// SPDX-License-Identifier: MIT
#pragma once

// glibc malloc as a baseline (malloc/malloc.c): every chunk carries an 8-byte size header, chunks are
// 16-byte aligned with a 32-byte minimum; requests at or above the mmap threshold get their own
// page-rounded mapping.

#include "layoutlab/alloc/allocator_model.h"

namespace layoutlab {

class GlibcModel final : public AllocatorModel {
public:
    std::string spec() const override { return "glibc"; }
    std::string description() const override;
    std::uint64_t usableSize(std::uint64_t requested) const override;
    std::uint64_t footprintBytes(std::uint64_t requested) const override;
    RegionAlignment alignment(std::uint64_t usable) const override;
    std::vector<AllocatorClass> classes() const override;
};

} // namespace layoutlab
