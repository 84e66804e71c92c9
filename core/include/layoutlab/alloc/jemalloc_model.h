// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/alloc/size_class_table.h"

namespace layoutlab {

// jemalloc, either emulated from SizeClassParams or read from the linked library.
class JemallocModel final : public AllocatorModel {
public:
    // Emulated: "jemalloc:quantum=8|16,page=4096|16384|65536".
    explicit JemallocModel(const SizeClassParams& params);
    // Read at run time from the jemalloc this program links (nallocx, mallctl arenas.*).
    static Expected<std::shared_ptr<const JemallocModel>> linked();
    static bool linkedAvailable();

    std::string spec() const override;
    std::string description() const override;
    std::uint64_t usableSize(std::uint64_t requested) const override { return m_table.usableSize(requested); }
    RegionAlignment alignment(std::uint64_t usable) const override;
    std::vector<AllocatorClass> classes() const override;

    const SizeClassTable& table() const { return m_table; }
    const SizeClassParams& params() const { return m_params; }
    bool isLinked() const { return m_linked; }
    // Whether a large extent gets one page more than its usable size (sz.c sz_boot: sz_large_pad is PAGE
    // when opt_cache_oblivious). Linked: the library's opt.cache_oblivious. Emulated: off at quantum 8,
    // the engines' bundled build (deps/Makefile configures --disable-cache-oblivious), on at quantum 16
    // (jemalloc's default, as Debian's libjemalloc2 is built).
    bool largePad() const { return m_largePad; }

private:
    JemallocModel(SizeClassTable table, SizeClassParams params, bool linked);

    SizeClassTable m_table;
    SizeClassParams m_params;
    bool m_linked = false;
    bool m_largePad = true;
};

// Usable size straight from the linked library's nallocx(), or 0 when jemalloc is not linked.
std::uint64_t linkedNallocx(std::uint64_t requested);

} // namespace layoutlab
