// SPDX-License-Identifier: MIT
#include "layoutlab/sim/shape_histogram.h"

#include <algorithm>

namespace layoutlab {

void ShapeHistogram::grow() {
    std::vector<Entry> old;
    old.swap(m_slots);
    m_slots.assign(old.size() * 2, Entry {});
    m_size = 0;
    for (const auto& e : old)
        if (e.shape != kEmpty)
            add(e.shape, e.count);
}

std::vector<ShapeHistogram::Entry> ShapeHistogram::sorted() const {
    std::vector<Entry> out;
    out.reserve(m_size);
    for (const auto& e : m_slots)
        if (e.shape != kEmpty)
            out.push_back(e);
    std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.shape < b.shape; });
    return out;
}

} // namespace layoutlab
