// SPDX-License-Identifier: MIT
#pragma once

// memcached text protocol client (protocol.txt): pipelined `set` and the `stats` families.

#include "layoutlab/collect/trace_keys.h"
#include "layoutlab/expected.h"
#include "layoutlab/layout/value_framing.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

// The exptime a command carries for a TTL of `ttlSeconds` (0, and KEEPTTL: none).
std::uint32_t memcachedExptime(std::uint32_t ttlSeconds);

struct MemcachedSet {
    std::string key;
    std::uint32_t flags = 0;
    std::uint32_t exptime = 0;
    std::string value;
};

// One storage, delete or touch command (protocol.txt).
struct MemcachedCommand {
    enum class Verb { Set, Add, Replace, Append, Prepend, Delete, Touch };
    Verb verb = Verb::Set;
    std::string key;
    std::uint32_t flags = 0;
    std::uint32_t exptime = 0; // storage and touch
    std::string value; // storage
};

class MemcachedClient {
public:
    static Expected<MemcachedClient> connect(const std::string& host, std::uint16_t port);
    MemcachedClient(MemcachedClient&& other) noexcept;
    ~MemcachedClient();

    // Sends all sets pipelined and checks that every reply is STORED.
    Status setMany(const std::vector<MemcachedSet>& sets);
    // Sends the commands pipelined. NOT_STORED (add, replace), NOT_FOUND (delete, touch) are outcomes;
    // ERROR, CLIENT_ERROR and SERVER_ERROR (out of memory) fail with the server's words.
    Status apply(const std::vector<MemcachedCommand>& commands, std::size_t batch = 256);
    // The requests (`get`s, `delete`s, and `set`s of `valueBytes` through `framing`), written pipelined;
    // receiveRequests() then reads their replies and returns how many gets were hits, receiveOutcomes()
    // what each got (SERVER_ERROR out of memory is an outcome; any other error fails).
    Status sendRequests(std::span<const KeyRequest> requests, Framing framing);
    Expected<std::uint64_t> receiveRequests(std::span<const KeyRequest> requests);
    Expected<std::vector<RequestOutcome>> receiveOutcomes(std::span<const KeyRequest> requests);
    // "stats", "stats slabs", "stats items", "stats settings": name -> value.
    Expected<std::map<std::string, std::string>> stats(const std::string& group = {});

private:
    explicit MemcachedClient(int fd)
        : m_fd(fd) { }
    Status apply(const std::vector<MemcachedCommand>& commands, std::size_t batch, bool mustStore);
    Status sendAll(const std::string& data);
    Expected<std::string> readLine();
    Status skipBytes(std::size_t n);

    int m_fd = -1;
    std::string m_buffer;
};

} // namespace layoutlab
