// SPDX-License-Identifier: MIT
#include "rdb_crc64.h"

#include <cstring>

namespace layoutlab {

namespace {
// crc64.c's POLY, bit-reflected for the table-driven reflected algorithm.
constexpr std::uint64_t kReflectedPoly = 0x95ac9329ac4bc9b5ULL;

using Tables = std::array<std::array<std::uint64_t, 256>, 8>;

constexpr Tables makeTables() {
    Tables t {};
    for (std::uint64_t n = 0; n < 256; ++n) {
        std::uint64_t crc = n;
        for (int k = 0; k < 8; ++k)
            crc = (crc & 1) ? (crc >> 1) ^ kReflectedPoly : crc >> 1;
        t[0][n] = crc;
    }
    for (std::size_t n = 0; n < 256; ++n)
        for (std::size_t k = 1; k < 8; ++k)
            t[k][n] = t[0][t[k - 1][n] & 0xff] ^ (t[k - 1][n] >> 8);
    return t;
}
constexpr Tables kTables = makeTables();
} // namespace

void RdbCrc64::update(const unsigned char* data, std::size_t size) {
    std::uint64_t crc = m_crc;
    while (size >= 8) { // little-endian hosts only, as the project builds for
        std::uint64_t word;
        std::memcpy(&word, data, 8);
        crc ^= word;
        crc = kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^ kTables[5][(crc >> 16) & 0xff]
            ^ kTables[4][(crc >> 24) & 0xff] ^ kTables[3][(crc >> 32) & 0xff] ^ kTables[2][(crc >> 40) & 0xff]
            ^ kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
        data += 8;
        size -= 8;
    }
    while (size-- > 0)
        crc = kTables[0][(crc ^ *data++) & 0xff] ^ (crc >> 8);
    m_crc = crc;
}

} // namespace layoutlab
