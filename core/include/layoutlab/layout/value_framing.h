// SPDX-License-Identifier: MIT
#pragma once

// Client-side value framings (Dalli, Rails): how many bytes a V-byte string becomes on the wire and
// whether memcached's client flags end up non-zero (which costs the item 4 more bytes).

#include "layoutlab/expected.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

enum class Framing : std::uint8_t {
    Raw, // Dalli raw: true / string_fastpath with a BINARY string: stored as is, flags 0
    RawUtf8, // Dalli string_fastpath with a UTF-8 string: stored as is, flags = UTF8 (0x4)
    MarshalUtf8, // Dalli default: Marshal.dump of a UTF-8 String, flags = SERIALIZED
    MarshalBinary, // Dalli default: Marshal.dump of an ASCII-8BIT String, flags = SERIALIZED
    Rails70, // Rails 7.0 cache entry (Marshal of [value]) through default Dalli
    Rails71, // Rails 7.1 cache entry header + raw payload through default Dalli (binary Marshal)
    Rails71Raw, // Rails 7.1 cache entry through Dalli string_fastpath/raw: flags 0
};

struct FramedValue {
    std::uint64_t storedBytes = 0;
    bool nonZeroFlags = false;
};

// ruby marshal.c ruby_marshal_write_long(): bytes used to encode a length n.
std::uint64_t marshalLengthBytes(std::uint64_t n);
// versionBytes: the Rails cache entry's version string length (0: none).
FramedValue frameValue(Framing framing, std::uint64_t valueBytes, std::uint64_t versionBytes = 0);

std::string_view framingName(Framing framing);
Expected<Framing> parseFraming(std::string_view name);
std::vector<Framing> allFramings();

} // namespace layoutlab
