// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/jemalloc_model.h"

#include <algorithm>
#include <fmt/format.h>

#if LAYOUTLAB_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace layoutlab {

JemallocModel::JemallocModel(const SizeClassParams& params)
    : m_table(SizeClassTable::fromParams(params))
    , m_params(params)
    , m_largePad(params.lgQuantum != 3) { }

JemallocModel::JemallocModel(SizeClassTable table, SizeClassParams params, bool linked)
    : m_table(std::move(table))
    , m_params(params)
    , m_linked(linked)
    , m_largePad(m_params.lgQuantum != 3) { }

std::string JemallocModel::spec() const {
    if (m_linked)
        return "jemalloc";
    return fmt::format("jemalloc:quantum={},page={}", 1u << m_params.lgQuantum, 1u << m_params.lgPage);
}

std::string JemallocModel::description() const {
    return fmt::format("jemalloc size classes{} (quantum {}, page {}, {} small classes up to {})",
        m_linked ? " read from the linked library" : " emulated from sc.c", 1u << m_params.lgQuantum,
        1u << m_params.lgPage,
        std::count_if(m_table.classes().begin(), m_table.classes().end(), [](const SizeClass& c) { return c.isSlab; }),
        m_table.largestSmallClass());
}

RegionAlignment JemallocModel::alignment(std::uint64_t usable) const {
    const auto index = m_table.classIndex(usable);
    if (index >= m_table.classes().size())
        return {};
    const auto& c = m_table.classes()[index];
    if (!c.isSlab)
        return { 0, 0, 1 }; // large extents are page-aligned
    // Regions sit back to back from a page-aligned slab start (arena_slab_reg_alloc).
    return { 0, c.size, c.regionsPerSlab };
}

std::vector<AllocatorClass> JemallocModel::classes() const {
    std::vector<AllocatorClass> out;
    for (const auto& c : m_table.classes()) {
        if (c.size > (std::uint64_t { 64 } << 20))
            break;
        out.push_back({ c.size, c.regionsPerSlab, std::uint64_t { c.slabPages } << m_table.lgPage() });
    }
    return out;
}

#if LAYOUTLAB_HAVE_JEMALLOC

namespace {
template <class T> bool readMallctl(const std::string& name, T& out) {
    std::size_t len = sizeof(T);
    return mallctl(name.c_str(), &out, &len, nullptr, 0) == 0 && len == sizeof(T);
}

int log2Exact(std::uint64_t v) {
    int lg = 0;
    while ((std::uint64_t { 1 } << lg) < v)
        ++lg;
    return lg;
}
} // namespace

bool JemallocModel::linkedAvailable() {
    return true;
}

std::uint64_t linkedNallocx(std::uint64_t requested) {
    return nallocx(requested == 0 ? 1 : requested, 0);
}

Expected<std::shared_ptr<const JemallocModel>> JemallocModel::linked() {
    std::size_t quantum = 0;
    std::size_t page = 0;
    unsigned nbins = 0;
    unsigned nlextents = 0;
    if (!readMallctl("arenas.quantum", quantum) || !readMallctl("arenas.page", page)
        || !readMallctl("arenas.nbins", nbins) || !readMallctl("arenas.nlextents", nlextents))
        return usageError("the linked jemalloc does not answer mallctl(\"arenas.*\")", "jemalloc");
    SizeClassParams params;
    params.lgQuantum = log2Exact(quantum);
    params.lgPage = log2Exact(page);
    std::vector<SizeClass> classes;
    for (unsigned i = 0; i < nbins; ++i) {
        std::size_t size = 0;
        std::uint32_t nregs = 0;
        std::size_t slabSize = 0;
        const auto prefix = fmt::format("arenas.bin.{}.", i);
        if (!readMallctl(prefix + "size", size) || !readMallctl(prefix + "nregs", nregs)
            || !readMallctl(prefix + "slab_size", slabSize))
            return usageError(fmt::format("mallctl(\"{}*\") failed", prefix), "jemalloc");
        SizeClass c;
        c.size = size;
        c.isSlab = true;
        c.regionsPerSlab = nregs;
        c.slabPages = static_cast<std::uint32_t>(slabSize / page);
        classes.push_back(c);
    }
    for (unsigned i = 0; i < nlextents; ++i) {
        std::size_t size = 0;
        if (!readMallctl(fmt::format("arenas.lextent.{}.size", i), size))
            return usageError(fmt::format("mallctl(\"arenas.lextent.{}.size\") failed", i), "jemalloc");
        SizeClass c;
        c.size = size;
        classes.push_back(c);
    }
    auto table = SizeClassTable::fromClasses(std::move(classes), params.lgPage);
    auto model = std::shared_ptr<JemallocModel>(new JemallocModel(std::move(table), params, true));
    bool cacheOblivious = true;
    if (readMallctl("opt.cache_oblivious", cacheOblivious))
        model->m_largePad = cacheOblivious;
    return std::shared_ptr<const JemallocModel>(std::move(model));
}

#else

bool JemallocModel::linkedAvailable() {
    return false;
}

std::uint64_t linkedNallocx(std::uint64_t) {
    return 0;
}

Expected<std::shared_ptr<const JemallocModel>> JemallocModel::linked() {
    return usageError("this build does not link jemalloc; use an emulated model such as "
                      "'jemalloc:quantum=16,page=4096'",
        "jemalloc");
}

#endif

} // namespace layoutlab
