// SPDX-License-Identifier: MIT
#include "jemalloc_arena.h"

#include <fmt/format.h>
#include <jemalloc/jemalloc.h>

namespace layoutlab {

namespace {

template <class T> Expected<T> readControl(const std::string& name) {
    T value {};
    std::size_t size = sizeof(value);
    if (const int rc = mallctl(name.c_str(), &value, &size, nullptr, 0); rc != 0)
        return ioError(fmt::format("jemalloc mallctl(\"{}\") failed (error {})", name, rc));
    return value;
}

} // namespace

Expected<std::unique_ptr<JemallocArena>> JemallocArena::create() {
    auto arena = readControl<unsigned>("arenas.create");
    if (!arena)
        return arena.error();
    return std::unique_ptr<JemallocArena>(new JemallocArena(*arena));
}

JemallocArena::~JemallocArena() {
    // arena.<i>.destroy frees every extent the arena still holds (the caller released its regions).
    mallctl(fmt::format("arena.{}.destroy", m_arena).c_str(), nullptr, nullptr, nullptr, 0);
}

void* JemallocArena::allocate(std::size_t bytes, bool zeroed) {
    const int flags = MALLOCX_ARENA(m_arena) | MALLOCX_TCACHE_NONE | (zeroed ? MALLOCX_ZERO : 0);
    return mallocx(bytes == 0 ? 1 : bytes, flags);
}

void JemallocArena::release(void* pointer) {
    if (pointer)
        dallocx(pointer, MALLOCX_TCACHE_NONE);
}

std::size_t JemallocArena::usableSize(void* pointer) const {
    return sallocx(pointer, 0);
}

std::size_t JemallocArena::usableSizeFor(std::size_t bytes) {
    return nallocx(bytes, 0);
}

std::string JemallocArena::version() {
    // "5.3.0-0-g54eaed1d...": the release, without the git description.
    auto text = readControl<const char*>("version");
    if (!text || !*text)
        return "unknown";
    const std::string full(*text);
    return full.substr(0, full.find('-'));
}

Expected<ArenaStats> JemallocArena::stats() const {
    // Statistics are a snapshot taken when "epoch" is written.
    std::uint64_t epoch = 1;
    std::size_t epochSize = sizeof(epoch);
    if (mallctl("epoch", &epoch, &epochSize, &epoch, epochSize) != 0)
        return ioError("jemalloc mallctl(\"epoch\") failed");
    const std::string prefix = fmt::format("stats.arenas.{}.", m_arena);
    auto small = readControl<std::size_t>(prefix + "small.allocated");
    auto large = readControl<std::size_t>(prefix + "large.allocated");
    auto pactive = readControl<std::size_t>(prefix + "pactive");
    auto resident = readControl<std::size_t>(prefix + "resident");
    auto page = readControl<std::size_t>("arenas.page");
    auto bins = readControl<unsigned>("arenas.nbins");
    for (const Error* e :
        { small ? nullptr : &small.error(), large ? nullptr : &large.error(), pactive ? nullptr : &pactive.error(),
            resident ? nullptr : &resident.error(), page ? nullptr : &page.error(), bins ? nullptr : &bins.error() })
        if (e)
            return *e;
    ArenaStats out;
    out.allocatedBytes = *small + *large;
    out.activeBytes = *pactive * *page;
    out.residentBytes = *resident;
    for (unsigned bin = 0; bin < *bins; ++bin) {
        auto slabs = readControl<std::size_t>(fmt::format("{}bins.{}.curslabs", prefix, bin));
        if (!slabs)
            return slabs.error();
        if (*slabs == 0)
            continue;
        auto regions = readControl<std::size_t>(fmt::format("{}bins.{}.curregs", prefix, bin));
        auto size = readControl<std::size_t>(fmt::format("arenas.bin.{}.size", bin));
        auto nregs = readControl<std::uint32_t>(fmt::format("arenas.bin.{}.nregs", bin));
        auto slabSize = readControl<std::size_t>(fmt::format("arenas.bin.{}.slab_size", bin));
        if (!regions || !size || !nregs || !slabSize)
            return ioError(fmt::format("jemalloc bin {} statistics could not be read", bin));
        ArenaBinStats row;
        row.regionBytes = *size;
        row.regionsPerSlab = *nregs;
        row.slabBytes = *slabSize;
        row.currentRegions = *regions;
        row.currentSlabs = *slabs;
        row.utilisation = static_cast<double>(*regions) / static_cast<double>(*slabs * *nregs);
        out.bins.push_back(row);
    }
    return out;
}

} // namespace layoutlab
