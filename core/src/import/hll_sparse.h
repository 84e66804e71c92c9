// SPDX-License-Identifier: MIT
#pragma once

// A HyperLogLog as Redis and Valkey keep it in a string (hyperloglog.c), followed byte for byte where its
// length depends on it: the sparse representation's opcodes, changed register by register as hllSparseSet
// changes them (an opcode split, then adjacent values merged within five opcodes of the change, so the bytes
// depend on the order the registers were set in, not only on the registers), and its promotion to the dense
// representation. The same in Redis 7.0 to Valkey 9.1: only how the string's buffer grows differs, which the
// replay models (StringRules::hllRoom).

#include "layoutlab/trace/request.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace layoutlab::hll {

// hyperloglog.c: HLL_P (14: 16,384 registers), the header (magic, encoding, cached cardinality: 16 bytes), the
// dense representation's length (16 + 16384 * 6 / 8), the largest value a sparse VAL opcode holds.
inline constexpr std::uint32_t kRegisters = 1u << 14;
inline constexpr std::uint32_t kHeaderBytes = 16;
inline constexpr std::uint32_t kDenseBytes = kHyperLogLogDenseBytes;
inline constexpr std::uint8_t kSparseMaxValue = 32;
inline constexpr std::uint32_t kSparseMaxBytes = kHyperLogLogSparseMaxBytes;

// hyperloglog.c hllPatLen: the register an element sets (the low 14 bits of its MurmurHash64A) and the value
// it offers (1 + the trailing zeros of the hash's other 50 bits).
struct Pattern {
    std::uint32_t index = 0;
    std::uint8_t count = 0;
};
Pattern patternOf(std::string_view element);
// hyperloglog.c MurmurHash64A (MurmurHash2, 64-bit, little-endian reads), seed 0xadc83b19.
std::uint64_t murmurHash64A(std::string_view data, std::uint64_t seed);

using Registers = std::array<std::uint8_t, kRegisters>;

class Sparse {
public:
    // createHLLObject: every register 0, as one XZERO opcode (two bytes after the header).
    Sparse();

    // The string's length: the header and the opcodes, or kDenseBytes once dense.
    std::uint32_t length() const {
        return m_dense ? kDenseBytes : kHeaderBytes + static_cast<std::uint32_t>(m_ops.size());
    }
    bool dense() const { return m_dense; }

    // hllSparseSet(index, count) on a sparse HLL (hllDenseSet once dense: its length does not change). The
    // result: whether a register changed; promoted when the change made it dense (a count above 32, or a
    // sparse length past kSparseMaxBytes).
    struct Change {
        bool changed = false;
        bool promoted = false;
    };
    Change set(std::uint32_t index, std::uint8_t count);
    // hllSparseToDense, as PFMERGE of a dense HLL into a sparse one and PFDEBUG TODENSE do.
    void promote();
    // The registers' values (the dense form's), for PFMERGE's maximum (hllMerge). Zero once dense: a dense
    // HLL's registers are not followed, only its length, and a merge with one is dense whatever the rest.
    void addRegistersTo(Registers& max) const;

private:
    std::vector<std::uint8_t> m_ops; // the sparse opcodes after the header
    bool m_dense = false;
};

} // namespace layoutlab::hll
