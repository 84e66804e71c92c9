// SPDX-License-Identifier: MIT
#pragma once

// memcached text protocol client (protocol.txt): pipelined `set` and the `stats` families.

#include "layoutlab/expected.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace layoutlab {

struct MemcachedSet {
    std::string key;
    std::uint32_t flags = 0;
    std::uint32_t exptime = 0;
    std::string value;
};

class MemcachedClient {
public:
    static Expected<MemcachedClient> connect(const std::string& host, std::uint16_t port);
    MemcachedClient(MemcachedClient&& other) noexcept;
    ~MemcachedClient();

    // Sends all sets pipelined and checks that every reply is STORED.
    Status setMany(const std::vector<MemcachedSet>& sets);
    // "stats", "stats slabs", "stats items", "stats settings": name -> value.
    Expected<std::map<std::string, std::string>> stats(const std::string& group = {});

private:
    explicit MemcachedClient(int fd)
        : m_fd(fd) { }
    Status sendAll(const std::string& data);
    Expected<std::string> readLine();

    int m_fd = -1;
    std::string m_buffer;
};

} // namespace layoutlab
