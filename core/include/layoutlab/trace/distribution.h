// SPDX-License-Identifier: MIT
#pragma once

// Size distributions for synthetic traces: "96", "uniform:A:B", "normal:MU:SD",
// "lognormal:MU:SIGMA[:MIN:MAX]", "hist:FILE" (lines "SIZE WEIGHT").

#include "layoutlab/expected.h"
#include "layoutlab/trace/random.h"

#include <string>
#include <vector>

namespace layoutlab {

class SizeDistribution {
public:
    static Expected<SizeDistribution> parse(std::string_view text, std::string_view field);

    std::uint32_t sample(Random& random) const;
    const std::string& text() const { return m_text; }

private:
    enum class Kind { Fixed, Uniform, Normal, LogNormal, Histogram };
    Kind m_kind = Kind::Fixed;
    std::string m_text;
    double m_a = 0;
    double m_b = 0;
    double m_min = 0;
    double m_max = 4294967295.0;
    std::vector<std::uint32_t> m_sizes; // histogram sizes
    std::vector<double> m_cumulative; // histogram cumulative weights, normalised to 1
};

} // namespace layoutlab
