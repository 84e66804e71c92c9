// SPDX-License-Identifier: MIT
#pragma once

// Input bytes shown back to a user (in an error, in --stats, in a table) pass through printable(): a
// trace or a file name can hold ESC, BEL or other control characters that a terminal would act on.

#include <string>
#include <string_view>

namespace layoutlab {

// `text` with C0 control characters, DEL and the UTF-8 encodings of C1 controls written as \xNN (and a
// backslash as itself): what a terminal shows, never what it obeys. Tabs are kept, and newlines when
// `keepNewlines` (a multi-line message of the tool's own).
std::string printable(std::string_view text, bool keepNewlines = false);

} // namespace layoutlab
