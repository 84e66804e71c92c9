// SPDX-License-Identifier: MIT
#include "hll_sparse.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace layoutlab::hll {

namespace {
// hyperloglog.c: the sparse opcodes. ZERO 00xxxxxx (1 to 64 zero registers), XZERO 01xxxxxx yyyyyyyy (1 to
// 16,384), VAL 1vvvvvxx (1 to 4 registers of value 1 to 32).
constexpr std::uint32_t kZeroMaxLength = 64;
constexpr std::uint32_t kValMaxLength = 4;

bool isZero(std::uint8_t b) {
    return (b & 0xc0) == 0;
}
bool isXzero(std::uint8_t b) {
    return (b & 0xc0) == 0x40;
}
bool isVal(std::uint8_t b) {
    return (b & 0x80) != 0;
}
std::uint32_t zeroLength(std::uint8_t b) {
    return (b & 0x3fu) + 1;
}
std::uint32_t xzeroLength(std::uint8_t b0, std::uint8_t b1) {
    return ((static_cast<std::uint32_t>(b0 & 0x3f) << 8) | b1) + 1;
}
std::uint8_t valValue(std::uint8_t b) {
    return static_cast<std::uint8_t>(((b >> 2) & 0x1f) + 1);
}
std::uint32_t valLength(std::uint8_t b) {
    return (b & 3u) + 1;
}
std::uint8_t valOp(std::uint32_t value, std::uint32_t length) {
    return static_cast<std::uint8_t>(0x80 | ((value - 1) << 2) | (length - 1));
}

// A run of zero registers as hllSparseSet writes it when it splits one: ZERO up to 64, XZERO past it.
void putZeros(std::vector<std::uint8_t>& seq, std::uint32_t length) {
    if (length > kZeroMaxLength) {
        seq.push_back(static_cast<std::uint8_t>(0x40 | ((length - 1) >> 8)));
        seq.push_back(static_cast<std::uint8_t>((length - 1) & 0xff));
    } else {
        seq.push_back(static_cast<std::uint8_t>(length - 1));
    }
}
} // namespace

std::uint64_t murmurHash64A(std::string_view data, std::uint64_t seed) {
    constexpr std::uint64_t m = 0xc6a4a7935bd1e995ULL;
    constexpr int r = 47;
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t len = data.size();
    std::uint64_t h = seed ^ (len * m);
    const std::size_t words = len / 8;
    for (std::size_t i = 0; i < words; ++i) {
        std::uint64_t k;
        std::memcpy(&k, p + 8 * i, 8); // the engines read little-endian words (endian-neutral on big hosts)
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    const unsigned char* tail = p + 8 * words;
    const std::size_t rest = len & 7;
    if (rest > 0) {
        for (std::size_t i = rest; i-- > 0;)
            h ^= static_cast<std::uint64_t>(tail[i]) << (8 * i);
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

Pattern patternOf(std::string_view element) {
    std::uint64_t hash = murmurHash64A(element, 0xadc83b19ULL);
    Pattern out;
    out.index = static_cast<std::uint32_t>(hash & (kRegisters - 1));
    hash >>= 14;
    hash |= std::uint64_t { 1 } << 50; // so the count is at most 51
    out.count = static_cast<std::uint8_t>(1 + std::countr_zero(hash));
    return out;
}

Sparse::Sparse() {
    // createHLLObject: XZERO opcodes of 16,384 registers each, as many as cover them: one.
    m_ops = { static_cast<std::uint8_t>(0x40 | ((kRegisters - 1) >> 8)),
        static_cast<std::uint8_t>((kRegisters - 1) & 0xff) };
}

void Sparse::promote() {
    m_dense = true;
    m_ops.clear();
    m_ops.shrink_to_fit();
}

Sparse::Change Sparse::set(std::uint32_t index, std::uint8_t count) {
    if (m_dense)
        return {};
    if (count > kSparseMaxValue) { // not representable sparse: promoted (hllSparseSet "goto promote")
        promote();
        return { true, true };
    }
    // Step 1: the opcode that covers the register, and the one before it.
    constexpr std::size_t kNone = SIZE_MAX;
    std::size_t p = 0, prev = kNone;
    std::uint32_t first = 0, span = 0;
    while (p < m_ops.size()) {
        std::size_t opBytes = 1;
        if (isZero(m_ops[p])) {
            span = zeroLength(m_ops[p]);
        } else if (isVal(m_ops[p])) {
            span = valLength(m_ops[p]);
        } else {
            span = xzeroLength(m_ops[p], m_ops[p + 1]);
            opBytes = 2;
        }
        if (index <= first + span - 1)
            break;
        prev = p;
        p += opBytes;
        first += span;
    }
    const std::uint8_t op = m_ops[p];
    const bool zero = isZero(op), xzero = isXzero(op), val = isVal(op);
    const std::uint32_t runLength = val ? valLength(op) : zero ? zeroLength(op) : span;
    bool updated = false;
    if (val) {
        if (valValue(op) >= count) // case A: nothing to do
            return {};
        if (runLength == 1) { // case B
            m_ops[p] = valOp(count, 1);
            updated = true;
        }
    }
    if (!updated && zero && runLength == 1) { // case C
        m_ops[p] = valOp(count, 1);
        updated = true;
    }
    if (!updated) { // case D: the opcode split into up to three
        std::vector<std::uint8_t> seq;
        const std::uint32_t last = first + span - 1;
        if (zero || xzero) {
            if (index != first)
                putZeros(seq, index - first);
            seq.push_back(valOp(count, 1));
            if (index != last)
                putZeros(seq, last - index);
        } else {
            const std::uint32_t current = valValue(op);
            if (index != first)
                seq.push_back(valOp(current, index - first));
            seq.push_back(valOp(count, 1));
            if (index != last)
                seq.push_back(valOp(current, last - index));
        }
        const std::size_t oldBytes = xzero ? 2 : 1;
        const long delta = static_cast<long>(seq.size()) - static_cast<long>(oldBytes);
        if (delta > 0 && length() + static_cast<std::uint32_t>(delta) > kSparseMaxBytes) {
            promote(); // step 3: the sparse form would pass hll-sparse-max-bytes
            return { true, true };
        }
        const auto at = m_ops.begin() + static_cast<std::ptrdiff_t>(p);
        m_ops.erase(at, at + static_cast<std::ptrdiff_t>(oldBytes));
        m_ops.insert(m_ops.begin() + static_cast<std::ptrdiff_t>(p), seq.begin(), seq.end());
    }
    // Step 4: adjacent VAL opcodes of one value merged, scanning five opcodes from the one before the change.
    std::size_t q = prev != kNone ? prev : 0;
    int scan = 5;
    while (q < m_ops.size() && scan-- > 0) {
        if (isXzero(m_ops[q])) {
            q += 2;
            continue;
        }
        if (isZero(m_ops[q])) {
            ++q;
            continue;
        }
        if (q + 1 < m_ops.size() && isVal(m_ops[q + 1]) && valValue(m_ops[q]) == valValue(m_ops[q + 1])) {
            const std::uint32_t merged = valLength(m_ops[q]) + valLength(m_ops[q + 1]);
            if (merged <= kValMaxLength) {
                m_ops[q + 1] = valOp(valValue(m_ops[q]), merged);
                m_ops.erase(m_ops.begin() + static_cast<std::ptrdiff_t>(q));
                continue; // the merged one may merge with the next
            }
        }
        ++q;
    }
    return { true, false };
}

void Sparse::addRegistersTo(Registers& max) const {
    if (m_dense)
        return;
    std::uint32_t index = 0;
    for (std::size_t p = 0; p < m_ops.size();) {
        const std::uint8_t op = m_ops[p];
        if (isZero(op)) {
            index += zeroLength(op);
            ++p;
        } else if (isXzero(op)) {
            index += xzeroLength(op, m_ops[p + 1]);
            p += 2;
        } else {
            for (std::uint32_t i = 0; i < valLength(op) && index < kRegisters; ++i, ++index)
                max[index] = std::max(max[index], valValue(op));
            ++p;
        }
    }
}

} // namespace layoutlab::hll
