// SPDX-License-Identifier: MIT
#include "client_arguments.h"

#include "layoutlab/layout/sds.h"

#include <algorithm>

namespace layoutlab::client_arguments {

namespace {
constexpr std::uint64_t kArgvPointerBytes = 8; // networking.c: robj **argv, one pointer per argument
constexpr std::uint64_t kRobjBytes = 16; // server.h robj / serverObject with its ptr
constexpr std::uint64_t kEmbstrSdsOverhead = sds::reqSize(0, sds::Type::Type8); // createEmbeddedStringObject
constexpr std::uint64_t kCommandNameBytes = 3; // "SET"
constexpr std::uint64_t kTtlOptionBytes = 2; // "EX"
constexpr std::uint64_t kTtlSecondsBytes = 4; // the seconds, taken as at most 4 digits
} // namespace

void addSetTransients(KeyLayout& out, const KeyShape& shape, const Rules& rules, Value value) {
    auto argument = [&](std::uint64_t len, bool sdsKept = false) {
        if (len <= rules.embstrLimit)
            return out.addTransient(rules.embstrHeader + std::max(len + kEmbstrSdsOverhead, rules.minValueArea));
        out.addTransient(kRobjBytes);
        if (!sdsKept)
            out.addTransient(rules.sdsBytes(len));
    };
    out.addTransient(kArgvPointerBytes * (shape.hasTtl ? 5 : 3));
    argument(kCommandNameBytes);
    out.keyArgumentAt = out.transientCount;
    argument(shape.keyBytes);
    out.keyArgumentCount = static_cast<std::uint8_t>(out.transientCount - out.keyArgumentAt);
    switch (value) {
    case Value::Stored:
        break;
    case Value::Copied:
        argument(shape.valueBytes);
        break;
    case Value::SdsKept:
        argument(shape.valueBytes, true);
        break;
    case Value::Integer:
        out.addTransient(kRobjBytes);
        break;
    }
    if (shape.hasTtl) {
        argument(kTtlOptionBytes);
        argument(kTtlSecondsBytes);
    }
}

} // namespace layoutlab::client_arguments
