// SPDX-License-Identifier: MIT
#pragma once

// A small, fully specified PRNG (xoshiro256**, seeded by splitmix64) and the samplers built on it,
// so that a seed gives the same trace on every platform and standard library.

#include <cmath>
#include <cstdint>

namespace layoutlab {

class Random {
public:
    explicit Random(std::uint64_t seed) {
        for (auto& word : m_state)
            word = splitmix64(seed);
    }

    std::uint64_t next() {
        const std::uint64_t result = rotl(m_state[1] * 5, 7) * 9;
        const std::uint64_t t = m_state[1] << 17;
        m_state[2] ^= m_state[0];
        m_state[3] ^= m_state[1];
        m_state[1] ^= m_state[2];
        m_state[0] ^= m_state[3];
        m_state[2] ^= t;
        m_state[3] = rotl(m_state[3], 45);
        return result;
    }
    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Uniform integer in [0, bound).
    std::uint64_t below(std::uint64_t bound) {
        __extension__ using Wide = unsigned __int128; // Lemire's multiply-shift, no modulo bias worth noting
        return static_cast<std::uint64_t>((static_cast<Wide>(next()) * bound) >> 64);
    }
    // Standard normal (Box-Muller; one value per call for simplicity and determinism).
    double normal() {
        double u1 = uniform();
        while (u1 <= 0.0)
            u1 = uniform();
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }

    static std::uint64_t splitmix64(std::uint64_t& x) {
        std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t m_state[4] {};
};

// Zipf ranks in [1, n] with exponent s, by rejection-inversion (W. Hormann, G. Derflinger, "Rejection-
// inversion to generate variates from monotone discrete distributions", 1996): O(1) memory.
class ZipfSampler {
public:
    ZipfSampler(std::uint64_t n, double exponent);
    std::uint64_t sample(Random& random) const;

private:
    double h(double x) const { return std::exp(-m_s * std::log(x)); }
    double hIntegral(double x) const;
    double hIntegralInverse(double x) const;

    std::uint64_t m_n;
    double m_s;
    double m_hIntegralX1;
    double m_hIntegralN;
    double m_sCut;
};

} // namespace layoutlab
