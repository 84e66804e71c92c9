// SPDX-License-Identifier: MIT
#include "layoutlab/trace/random.h"

#include <algorithm>

namespace layoutlab {

namespace {
// log1p(x)/x and expm1(x)/x, continuous at 0 (Apache Commons RNG RejectionInversionZipfSampler).
double helper1(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
double helper2(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}
} // namespace

ZipfSampler::ZipfSampler(std::uint64_t n, double exponent)
    : m_n(n)
    , m_s(exponent) {
    m_hIntegralX1 = hIntegral(1.5) - 1.0;
    m_hIntegralN = hIntegral(static_cast<double>(n) + 0.5);
    m_sCut = 2.0 - hIntegralInverse(hIntegral(2.5) - h(2.0));
}

double ZipfSampler::hIntegral(double x) const {
    const double logX = std::log(x);
    return helper2((1.0 - m_s) * logX) * logX;
}

double ZipfSampler::hIntegralInverse(double x) const {
    double t = x * (1.0 - m_s);
    t = std::max(t, -1.0);
    return std::exp(helper1(t) * x);
}

std::uint64_t ZipfSampler::sample(Random& random) const {
    while (true) {
        const double u = m_hIntegralN + random.uniform() * (m_hIntegralX1 - m_hIntegralN);
        const double x = hIntegralInverse(u);
        auto k = static_cast<std::uint64_t>(x + 0.5);
        k = std::clamp<std::uint64_t>(k, 1, m_n);
        const double kd = static_cast<double>(k);
        if (kd - x <= m_sCut || u >= hIntegral(kd + 0.5) - h(kd))
            return k;
    }
}

} // namespace layoutlab
