// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/alloc/allocator_model.h"

#include <string_view>

namespace layoutlab {

struct AllocatorInfo {
    std::string name;
    std::string parameters; // "quantum=8|16,page=4096|16384|65536"
    std::string description;
    bool available = true;
};

// Parses "jemalloc", "jemalloc:quantum=8,page=4096", "memcached:min=48,factor=1.25", "glibc".
Expected<AllocatorPtr> parseAllocator(std::string_view spec);
std::vector<AllocatorInfo> listAllocators();

} // namespace layoutlab
