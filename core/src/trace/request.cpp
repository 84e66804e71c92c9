// SPDX-License-Identifier: MIT
#include "layoutlab/trace/request.h"

namespace layoutlab {

std::string_view opName(Op op) {
    switch (op) {
    case Op::Get:
        return "get";
    case Op::Set:
        return "set";
    case Op::Add:
        return "add";
    case Op::Replace:
        return "replace";
    case Op::Append:
        return "append";
    case Op::Prepend:
        return "prepend";
    case Op::Incr:
        return "incr";
    case Op::Decr:
        return "decr";
    case Op::Delete:
        return "delete";
    case Op::Expire:
        return "expire";
    case Op::Persist:
        return "persist";
    case Op::Other:
        return "other";
    case Op::SetRange:
        return "setrange";
    }
    return "?";
}

} // namespace layoutlab
