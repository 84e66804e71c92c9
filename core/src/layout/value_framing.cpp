// SPDX-License-Identifier: MIT
#include "layoutlab/layout/value_framing.h"

#include <array>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// marshal.c: "\x04\x08" version, '"' type byte; the UTF-8 form wraps it in 'I' ... 0x06 ':' 0x06 'E' 'T'.
constexpr std::uint64_t kMarshalBinaryOverhead = 3; // 04 08 22
constexpr std::uint64_t kMarshalUtf8Overhead = 9; // 04 08 49 22 ... 06 3a 06 45 54
// activesupport cache/coder.rb: "\x00\x11" signature, type, expires_at float64, version length int32.
constexpr std::uint64_t kRails71HeaderBytes = 15;
// Rails 7.0 (Marshal70WithFallback): 00 + Marshal.dump([value]) = 00 04 08 5B 06 + UTF-8 string body.
constexpr std::uint64_t kRails70Overhead = 12;

struct FramingName {
    Framing framing;
    std::string_view name;
};
constexpr std::array kFramingNames {
    FramingName { Framing::Raw, "raw" },
    FramingName { Framing::RawUtf8, "raw-utf8" },
    FramingName { Framing::MarshalUtf8, "marshal-utf8" },
    FramingName { Framing::MarshalBinary, "marshal-binary" },
    FramingName { Framing::Rails70, "rails-7.0" },
    FramingName { Framing::Rails71, "rails-7.1" },
    FramingName { Framing::Rails71Raw, "rails-7.1-raw" },
};
} // namespace

std::uint64_t marshalLengthBytes(std::uint64_t n) {
    // ruby_marshal_write_long(): 0 and 1..122 take one byte; otherwise a count byte and the
    // little-endian bytes of n.
    if (n < 123)
        return 1;
    std::uint64_t bytes = 0;
    while (n != 0) {
        ++bytes;
        n >>= 8;
    }
    return 1 + bytes;
}

FramedValue frameValue(Framing framing, std::uint64_t v, std::uint64_t versionBytes) {
    switch (framing) {
    case Framing::Raw:
        return { v, false };
    case Framing::RawUtf8:
        return { v, true };
    case Framing::MarshalUtf8:
        return { v + kMarshalUtf8Overhead + marshalLengthBytes(v), true };
    case Framing::MarshalBinary:
        return { v + kMarshalBinaryOverhead + marshalLengthBytes(v), true };
    case Framing::Rails70: {
        const std::uint64_t entry = v + kRails70Overhead + marshalLengthBytes(v);
        return { entry + kMarshalBinaryOverhead + marshalLengthBytes(entry), true };
    }
    case Framing::Rails71: {
        const std::uint64_t entry = kRails71HeaderBytes + versionBytes + v;
        return { entry + kMarshalBinaryOverhead + marshalLengthBytes(entry), true };
    }
    case Framing::Rails71Raw:
        return { kRails71HeaderBytes + versionBytes + v, false };
    }
    return { v, false };
}

std::string_view framingName(Framing framing) {
    for (const auto& entry : kFramingNames)
        if (entry.framing == framing)
            return entry.name;
    return "?";
}

Expected<Framing> parseFraming(std::string_view name) {
    for (const auto& entry : kFramingNames)
        if (entry.name == name)
            return entry.framing;
    return usageError(fmt::format("unknown framing '{}' (known: raw, raw-utf8, marshal-utf8, marshal-binary, "
                                  "rails-7.0, rails-7.1, rails-7.1-raw)",
                          name),
        "framing");
}

std::vector<Framing> allFramings() {
    std::vector<Framing> out;
    for (const auto& entry : kFramingNames)
        out.push_back(entry.framing);
    return out;
}

} // namespace layoutlab
