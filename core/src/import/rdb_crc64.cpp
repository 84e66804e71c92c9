// SPDX-License-Identifier: MIT
#include "rdb_crc64.h"

#include <isa-l/crc64.h>

namespace layoutlab {

void RdbCrc64::update(const unsigned char* data, std::size_t size) {
    // crc64_jones_refl inverts the CRC on the way in and out (as CRC-64/XZ does); crc64.c inverts neither,
    // so the two inversions are undone around it.
    m_crc = ~crc64_jones_refl(~m_crc, data, size);
}

} // namespace layoutlab
