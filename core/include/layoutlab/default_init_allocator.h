// SPDX-License-Identifier: MIT
#pragma once

// An allocator whose containers default-initialize the elements they add: a byte buffer resized to
// take data about to be written is then not filled with zeros first.

#include <memory>
#include <utility>
#include <vector>

namespace layoutlab {

template <class T> struct DefaultInitAllocator : std::allocator<T> {
    using value_type = T;
    DefaultInitAllocator() = default;
    template <class U> DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept { }
    template <class U> void construct(U* at) noexcept { ::new (static_cast<void*>(at)) U; }
    template <class U, class... Args> void construct(U* at, Args&&... args) {
        ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
    }
};

using ByteBuffer = std::vector<unsigned char, DefaultInitAllocator<unsigned char>>;

} // namespace layoutlab
