// SPDX-License-Identifier: MIT
#pragma once

// What a client's write allocates for the command alone (KeyLayout::transients): the argv array and the
// argument objects networking.c processMultibulkBuffer makes (object.c createStringObject), freed when the
// command ends (freeClientArgv). Shared by the built-in Valkey and dict layouts and by layout files'
// [write] arguments.

#include "layoutlab/layout/key_layout.h"

#include <functional>

namespace layoutlab::client_arguments {

// How the engine makes an argument of `len` bytes: an EMBSTR of `embstrHeader` + sdshdr8 + len + NUL (at
// least `minValueArea` after the header) up to `embstrLimit`, else a 16-byte robj and `sdsBytes(len)`.
struct Rules {
    std::uint64_t embstrHeader = 16;
    std::uint64_t minValueArea = 0;
    std::uint64_t embstrLimit = 44;
    std::function<std::uint64_t(std::uint64_t)> sdsBytes;
};

// What becomes of the value's argument.
enum class Value : std::uint8_t {
    Stored, // the argument is the stored value object (Redis 7.0, Valkey 8.0 dbAdd): nothing transient
    Copied, // copied into the key's object (Valkey objectSetKeyAndExpire of an EMBSTR): freed
    SdsKept, // a RAW argument's sds is kept as the value, its robj freed (objectSetKeyAndExpire)
    Integer, // replaced by an INT object (tryObjectEncodingEx) that objectSetKeyAndExpire copies
};

// SET key value [EX seconds] (the seconds taken as at most 4 digits): the argv array, "SET", the key (copied
// into the keyspace by every engine here), the value as `value` says, then "EX" and the seconds.
void addSetTransients(KeyLayout& out, const KeyShape& shape, const Rules& rules, Value value);

} // namespace layoutlab::client_arguments
