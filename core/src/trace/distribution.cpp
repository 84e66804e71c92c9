// SPDX-License-Identifier: MIT
#include "layoutlab/trace/distribution.h"

#include "layoutlab/spec.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <span>
#include <sstream>

namespace layoutlab {

namespace {
constexpr double kMaxSize = 4294967295.0;

Error malformed(std::string_view text, std::string_view field, std::string_view why) {
    return usageError(fmt::format("malformed distribution '{}': {} (forms: 96, uniform:A:B, normal:MU:SD, "
                                  "lognormal:MU:SIGMA[:MIN:MAX], hist:FILE)",
                          text, why),
        std::string(field));
}

Expected<std::vector<double>> numbers(
    std::span<const std::string_view> parts, std::string_view text, std::string_view field) {
    std::vector<double> out;
    for (auto part : parts) {
        auto value = parseReal(part, field);
        if (!value)
            return malformed(text, field, fmt::format("'{}' is not a number", part));
        out.push_back(*value);
    }
    return out;
}
} // namespace

Expected<SizeDistribution> SizeDistribution::parse(std::string_view text, std::string_view field) {
    SizeDistribution d;
    d.m_text = std::string(text);
    const auto parts = splitString(text, ':');
    const auto kind = parts[0];
    const std::span<const std::string_view> args(parts.data() + 1, parts.size() - 1);
    if (parts.size() == 1) {
        auto value = parseUnsigned(text, field);
        if (!value || *value > UINT32_MAX)
            return malformed(text, field, "a fixed size is a non-negative integer below 2^32");
        d.m_kind = Kind::Fixed;
        d.m_a = static_cast<double>(*value);
        return d;
    }
    if (kind == "hist") {
        const std::string path(text.substr(5));
        std::ifstream in(path);
        if (!in)
            return ioError("cannot open histogram file", path);
        std::string line;
        std::uint64_t lineNo = 0;
        double total = 0;
        while (std::getline(in, line)) {
            ++lineNo;
            if (line.empty() || line[0] == '#')
                continue;
            std::replace(line.begin(), line.end(), ',', ' ');
            std::istringstream fields(line);
            double size = -1, weight = -1;
            if (!(fields >> size >> weight) || size < 0 || size > kMaxSize || weight < 0 || size != std::floor(size))
                return dataErrorAtLine(
                    "expected 'SIZE WEIGHT' with a whole non-negative size and a weight >= 0", path, lineNo);
            total += weight;
            d.m_sizes.push_back(static_cast<std::uint32_t>(size));
            d.m_cumulative.push_back(total);
        }
        if (d.m_sizes.empty() || total <= 0)
            return dataError("histogram has no positive weight", path);
        for (auto& c : d.m_cumulative)
            c /= total;
        d.m_kind = Kind::Histogram;
        return d;
    }
    auto values = numbers(args, text, field);
    if (!values)
        return values.error();
    const auto& v = *values;
    if (kind == "uniform") {
        if (v.size() != 2 || v[0] < 0 || v[1] < v[0] || v[1] > kMaxSize || v[0] != std::floor(v[0])
            || v[1] != std::floor(v[1]))
            return malformed(text, field, "uniform takes two whole sizes A <= B");
        d.m_kind = Kind::Uniform;
        d.m_a = v[0];
        d.m_b = v[1];
        return d;
    }
    if (kind == "normal") {
        if (v.size() != 2 || v[1] < 0 || v[0] < 0)
            return malformed(text, field, "normal takes MU >= 0 and SD >= 0");
        d.m_kind = Kind::Normal;
        d.m_a = v[0];
        d.m_b = v[1];
        return d;
    }
    if (kind == "lognormal") {
        if ((v.size() != 2 && v.size() != 4) || v[1] < 0)
            return malformed(text, field, "lognormal takes MU:SIGMA (of the logarithm) and optionally MIN:MAX");
        d.m_kind = Kind::LogNormal;
        d.m_a = v[0];
        d.m_b = v[1];
        if (v.size() == 4) {
            if (v[2] < 0 || v[3] < v[2] || v[3] > kMaxSize)
                return malformed(text, field, "lognormal bounds need 0 <= MIN <= MAX");
            d.m_min = v[2];
            d.m_max = v[3];
        }
        return d;
    }
    return malformed(text, field, fmt::format("unknown kind '{}'", kind));
}

std::uint32_t SizeDistribution::sample(Random& random) const {
    switch (m_kind) {
    case Kind::Fixed:
        return static_cast<std::uint32_t>(m_a);
    case Kind::Uniform:
        return static_cast<std::uint32_t>(
            m_a + static_cast<double>(random.below(static_cast<std::uint64_t>(m_b - m_a) + 1)));
    case Kind::Normal: {
        const double x = std::round(m_a + m_b * random.normal());
        return static_cast<std::uint32_t>(std::clamp(x, 0.0, kMaxSize));
    }
    case Kind::LogNormal: {
        const double x = std::round(std::exp(m_a + m_b * random.normal()));
        return static_cast<std::uint32_t>(std::clamp(x, m_min, m_max));
    }
    case Kind::Histogram: {
        const double u = random.uniform();
        const auto it = std::upper_bound(m_cumulative.begin(), m_cumulative.end(), u);
        const auto index
            = std::min<std::size_t>(static_cast<std::size_t>(it - m_cumulative.begin()), m_sizes.size() - 1);
        return m_sizes[index];
    }
    }
    return 0;
}

} // namespace layoutlab
