// SPDX-License-Identifier: MIT
#pragma once

// The checksum that ends an RDB file (RDB version 5 and later): CRC-64/Jones as Redis and Valkey compute
// it (src/crc64.c: polynomial 0xad93d23594c935a9, reflected, initial value 0, no final xor; its check
// value, crc64(0, "123456789", 9), is 0xe9c6d914c4b8d9ca). rdbLoadRioWithLoadingCtx compares it with the
// eight little-endian bytes after the EOF opcode; 0 there means the file was saved without one
// (rdbchecksum no). Computed by ISA-L's crc64_jones_refl (carry-less multiplication where the host has it:
// tens of GB/s, against 2 GB/s for crcspeed.c's slice-by-8 tables), so the sum costs a hundredth of a read.

#include <cstddef>
#include <cstdint>

namespace layoutlab {

class RdbCrc64 {
public:
    void update(const unsigned char* data, std::size_t size);
    std::uint64_t value() const { return m_crc; }

private:
    std::uint64_t m_crc = 0;
};

} // namespace layoutlab
