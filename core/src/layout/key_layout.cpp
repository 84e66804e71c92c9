// SPDX-License-Identifier: MIT
#include "layoutlab/layout/key_layout.h"

namespace layoutlab {

std::string_view encodingName(Encoding encoding) {
    switch (encoding) {
    case Encoding::Embedded:
        return "embstr";
    case Encoding::Raw:
        return "raw";
    case Encoding::Integer:
        return "int";
    case Encoding::SharedInteger:
        return "shared-int";
    case Encoding::Item:
        return "item";
    case Encoding::ChunkedItem:
        return "chunked";
    }
    return "?";
}

std::string_view purposeName(Purpose purpose) {
    switch (purpose) {
    case Purpose::Object:
        return "object";
    case Purpose::Key:
        return "key";
    case Purpose::Value:
        return "value";
    case Purpose::Entry:
        return "dict-entry";
    case Purpose::ExpireEntry:
        return "expire-entry";
    case Purpose::Item:
        return "item";
    case Purpose::ItemHeader:
        return "item-header";
    case Purpose::ItemChunk:
        return "item-chunk";
    }
    return "?";
}

} // namespace layoutlab
