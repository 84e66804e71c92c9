// SPDX-License-Identifier: MIT
#include "layoutlab/collect/memcached_client.h"

#include <ctime>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace layoutlab {

namespace {
constexpr std::size_t kPipelineBatch = 256;
constexpr time_t kTimeoutSeconds = 10;
} // namespace

Expected<MemcachedClient> MemcachedClient::connect(const std::string& host, std::uint16_t port) {
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res)
        return ioError(fmt::format("cannot resolve {}", host));
    const int fd = ::socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    const bool ok = fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0;
    freeaddrinfo(res);
    if (!ok) {
        const int err = errno;
        if (fd >= 0)
            ::close(fd);
        return ioError(fmt::format("cannot connect to memcached at {}:{}: {}", host, port, std::strerror(err)));
    }
    // A server that stops answering is an error after this long, not a hang (as hiredis's timeout does
    // for RESP).
    const timeval timeout { kTimeoutSeconds, 0 };
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    return MemcachedClient(fd);
}

MemcachedClient::MemcachedClient(MemcachedClient&& other) noexcept
    : m_fd(other.m_fd)
    , m_buffer(std::move(other.m_buffer)) {
    other.m_fd = -1;
}

MemcachedClient::~MemcachedClient() {
    if (m_fd >= 0)
        ::close(m_fd);
}

Status MemcachedClient::sendAll(const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = ::send(m_fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n <= 0)
            return ioError(fmt::format("memcached send failed: {}", std::strerror(errno)));
        sent += static_cast<std::size_t>(n);
    }
    return Ok {};
}

Expected<std::string> MemcachedClient::readLine() {
    while (true) {
        const auto pos = m_buffer.find("\r\n");
        if (pos != std::string::npos) {
            std::string line = m_buffer.substr(0, pos);
            m_buffer.erase(0, pos + 2);
            return line;
        }
        char chunk[65536];
        const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return ioError(fmt::format("memcached did not answer within {} s", kTimeoutSeconds));
        if (n <= 0)
            return ioError("memcached closed the connection");
        m_buffer.append(chunk, static_cast<std::size_t>(n));
    }
}

Status MemcachedClient::setMany(const std::vector<MemcachedSet>& sets) {
    std::vector<MemcachedCommand> commands;
    commands.reserve(sets.size());
    for (const auto& s : sets)
        commands.push_back({ MemcachedCommand::Verb::Set, s.key, s.flags, s.exptime, s.value });
    return apply(commands, kPipelineBatch, true);
}

Status MemcachedClient::apply(const std::vector<MemcachedCommand>& commands, std::size_t batch) {
    return apply(commands, batch, false);
}

Status MemcachedClient::apply(const std::vector<MemcachedCommand>& commands, std::size_t batch, bool mustStore) {
    batch = std::max<std::size_t>(batch, 1);
    using Verb = MemcachedCommand::Verb;
    static constexpr std::string_view kVerbs[] = { "set", "add", "replace", "append", "prepend", "delete", "touch" };
    for (std::size_t start = 0; start < commands.size(); start += batch) {
        const std::size_t end = std::min(commands.size(), start + batch);
        std::string out;
        for (std::size_t i = start; i < end; ++i) {
            const auto& c = commands[i];
            const auto verb = kVerbs[static_cast<std::size_t>(c.verb)];
            if (c.verb == Verb::Delete)
                out += fmt::format("delete {}\r\n", c.key);
            else if (c.verb == Verb::Touch)
                out += fmt::format("touch {} {}\r\n", c.key, c.exptime);
            else
                out += fmt::format(
                    "{} {} {} {} {}\r\n{}\r\n", verb, c.key, c.flags, c.exptime, c.value.size(), c.value);
        }
        if (auto ok = sendAll(out); !ok)
            return ok;
        for (std::size_t i = start; i < end; ++i) {
            auto line = readLine();
            if (!line)
                return line.error();
            const bool outcome = *line == "STORED" || *line == "DELETED" || *line == "TOUCHED"
                || (!mustStore && (*line == "NOT_STORED" || *line == "NOT_FOUND"));
            if (!outcome)
                return dataError(fmt::format("memcached refused {} of '{}': {}",
                    kVerbs[static_cast<std::size_t>(commands[i].verb)], commands[i].key, *line));
        }
    }
    return Ok {};
}

Status MemcachedClient::skipBytes(std::size_t n) {
    while (m_buffer.size() < n) {
        char chunk[65536];
        const ssize_t got = ::recv(m_fd, chunk, sizeof chunk, 0);
        if (got <= 0)
            return ioError("memcached closed the connection");
        m_buffer.append(chunk, static_cast<std::size_t>(got));
    }
    m_buffer.erase(0, n);
    return Ok {};
}

std::uint32_t memcachedExptime(std::uint32_t ttlSeconds) {
    // memcached.c realtime(): an exptime above 30 days is an absolute Unix time.
    constexpr std::uint32_t kMaxRelativeExptime = 60 * 60 * 24 * 30;
    if (ttlSeconds == 0 || ttlSeconds == kKeepTtl)
        return 0;
    if (ttlSeconds <= kMaxRelativeExptime)
        return ttlSeconds;
    return static_cast<std::uint32_t>(std::time(nullptr) + ttlSeconds);
}

Status MemcachedClient::sendRequests(std::span<const KeyRequest> requests, Framing framing) {
    std::string out;
    for (const auto& r : requests) {
        if (r.del) {
            out += fmt::format("delete {}\r\n", r.key);
            continue;
        }
        if (!r.set) {
            out += fmt::format("get {}\r\n", r.key);
            continue;
        }
        const auto framed = frameValue(framing, r.valueBytes);
        out += fmt::format("set {} {} {} {}\r\n", r.key, framed.nonZeroFlags ? 1 : 0, memcachedExptime(r.ttlSeconds),
            framed.storedBytes);
        out.append(framed.storedBytes, 'v');
        out += "\r\n";
    }
    return sendAll(out);
}

Expected<std::vector<RequestOutcome>> MemcachedClient::receiveOutcomes(std::span<const KeyRequest> requests) {
    std::vector<RequestOutcome> outcomes;
    outcomes.reserve(requests.size());
    for (const KeyRequest& r : requests) {
        if (r.set || r.del) {
            auto line = readLine();
            if (!line)
                return line.error();
            if (*line == "STORED" || *line == "DELETED")
                outcomes.push_back(RequestOutcome::Done);
            else if (*line == "NOT_FOUND")
                outcomes.push_back(RequestOutcome::Nil);
            else if (line->rfind("SERVER_ERROR out of memory", 0) == 0) // proto_text.c process_update_command
                outcomes.push_back(RequestOutcome::OutOfMemory);
            else
                return dataError(
                    fmt::format("memcached refused {} of '{}': {}", r.set ? "set" : "delete", r.key, *line));
            continue;
        }
        RequestOutcome outcome = RequestOutcome::Nil;
        while (true) { // VALUE <key> <flags> <bytes>\r\n<data>\r\n ... END\r\n
            auto line = readLine();
            if (!line)
                return line.error();
            if (*line == "END")
                break;
            if (line->rfind("VALUE ", 0) != 0)
                return dataError(fmt::format("unexpected reply to get: {}", line->substr(0, 200)));
            const auto lastSpace = line->rfind(' ');
            const std::string bytes = line->substr(lastSpace + 1);
            if (bytes.empty() || bytes.find_first_not_of("0123456789") != std::string::npos)
                return dataError(fmt::format("unexpected reply to get: {}", line->substr(0, 200)));
            if (auto ok = skipBytes(std::stoull(bytes) + 2); !ok)
                return ok.error();
            outcome = RequestOutcome::Done;
        }
        outcomes.push_back(outcome);
    }
    return outcomes;
}

Expected<std::uint64_t> MemcachedClient::receiveRequests(std::span<const KeyRequest> requests) {
    auto outcomes = receiveOutcomes(requests);
    if (!outcomes)
        return outcomes.error();
    std::uint64_t hits = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (requests[i].set && (*outcomes)[i] != RequestOutcome::Done)
            return dataError(fmt::format("memcached refused set of '{}': out of memory", requests[i].key));
        hits += !requests[i].set && !requests[i].del && (*outcomes)[i] == RequestOutcome::Done ? 1 : 0;
    }
    return hits;
}

Expected<std::map<std::string, std::string>> MemcachedClient::stats(const std::string& group) {
    if (auto ok = sendAll(group.empty() ? "stats\r\n" : "stats " + group + "\r\n"); !ok)
        return ok.error();
    std::map<std::string, std::string> out;
    while (true) {
        auto line = readLine();
        if (!line)
            return line.error();
        if (*line == "END")
            return out;
        if (line->rfind("STAT ", 0) != 0)
            return dataError(fmt::format("unexpected reply to stats {}: {}", group, *line));
        const auto space = line->find(' ', 5);
        out[line->substr(5, space - 5)] = space == std::string::npos ? "" : line->substr(space + 1);
    }
}

} // namespace layoutlab
