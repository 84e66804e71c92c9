// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/layout/layout_model.h"

#include <string_view>
#include <vector>

namespace layoutlab {

// What a built-in model has been checked against (docs/validation.md): measured on a real engine build,
// or predicted from the engine's source only.
struct LayoutValidation {
    bool measured = false;
    std::string detail; // which builds, what was compared, the worst error; or why it cannot be measured here
};

struct LayoutInfo {
    std::string name; // as given to --layout
    std::string spec; // the full parameter set it stands for
    std::string description;
    LayoutValidation validation;
};

// Parses "valkey", "valkey-9.1", "valkey:threshold=128,header=8,embstr-limit=auto", "redis-7.0",
// "memcached-1.6:framing=marshal-utf8". Presets take parameter overrides too.
Expected<LayoutPtr> parseLayout(std::string_view spec);

struct LayoutAndAllocator {
    LayoutPtr layout;
    AllocatorPtr allocator;
};
// A layout and its allocator; an empty allocator spec means the layout's engine default. Fails when the
// allocator cannot serve the layout.
Expected<LayoutAndAllocator> parseLayoutAndAllocator(std::string_view layoutSpec, std::string_view allocatorSpec);
// The layout a server that loaded its keys from an RDB file has, given the spec of one that got them from
// clients: the layouts whose entries embed a key with the header it arrived with (valkey-8.0, and
// valkey-8.1:key-header=as-sent) hold a loaded key with sdsnewlen's smallest header (rdb.c
// rdbGenericLoadStringObject(RDB_LOAD_SDS)); every other layout holds keys alike either way.
std::string layoutSpecForLoadedKeys(const std::string& canonicalSpec);
std::vector<LayoutInfo> listLayouts();
// How the layout `name` (as given to --layout) was validated: a preset as listLayouts() says; the variants
// that were driven too (memcached's framings, the Valkey what-if build, the 2025-01-27 key headers) as
// measured; any other parameters or a layout file as predicted from source.
LayoutValidation layoutValidation(const std::string& name);
// The name a stored run's canonical spec goes by: the preset it is ("valkey-8.1", not
// "valkey-8.1:threshold=64,header=16,..."; a versioned preset before the family's own name), or the nearest
// preset of its family with the parameters that differ ("valkey-8.1:threshold=128"); a layout file by its
// file name; any other spec as it is.
std::string presetName(std::string_view spec);
// The name a layout goes by when a run of it is kept: a layout file's own `name`, or presetName(spec).
std::string layoutName(const LayoutModel& layout);

} // namespace layoutlab
