// SPDX-License-Identifier: MIT
#pragma once

// The checks a layout file passes as a whole, once every table is read: one allocation the keyspace
// indexes, no pointer cycles, every allocation reachable, a GET path that follows pointers, an embed
// rule that can hold, and every key and value byte stored in some field. Failures throw
// layout_file::LayoutFileError (layout_file_reader.h).

#include "layoutlab/layout/declared_layout.h"

namespace layoutlab::layout_file {

void checkDefinition(const LayoutDefinition& def);

} // namespace layoutlab::layout_file
