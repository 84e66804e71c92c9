// SPDX-License-Identifier: MIT
#include "layoutlab/collect/resp_client.h"

#include <algorithm>
#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <sstream>

namespace layoutlab {

namespace {

std::string replyText(const redisReply* reply) {
    switch (reply->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
        return std::string(reply->str, reply->len);
    case REDIS_REPLY_INTEGER:
        return std::to_string(reply->integer);
    case REDIS_REPLY_ARRAY: { // MEMORY STATS and the like: the elements, nested ones too, a line each
        std::string out;
        for (std::size_t i = 0; i < reply->elements; ++i)
            out += (i ? "\n" : "") + replyText(reply->element[i]);
        return out;
    }
    default:
        return {};
    }
}

void appendCommand(redisContext* c, const std::vector<std::string>& argv) {
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const auto& a : argv) {
        args.push_back(a.data());
        lens.push_back(a.size());
    }
    redisAppendCommandArgv(c, static_cast<int>(args.size()), args.data(), lens.data());
}
} // namespace

Expected<RespClient> RespClient::connect(const std::string& host, std::uint16_t port) {
    timeval timeout { 10, 0 };
    redisContext* c = redisConnectWithTimeout(host.c_str(), port, timeout);
    if (!c || c->err) {
        std::string why = c ? c->errstr : "out of memory";
        if (c)
            redisFree(c);
        return ioError(fmt::format("cannot connect to {}:{}: {}", host, port, why));
    }
    redisSetTimeout(c, timeout);
    return RespClient(c);
}

void RespClient::setReplyTimeout(std::chrono::seconds timeout) {
    redisSetTimeout(m_context, timeval { static_cast<time_t>(timeout.count()), 0 });
}

RespClient::RespClient(RespClient&& other) noexcept
    : m_context(other.m_context)
    , m_getBuffer(std::move(other.m_getBuffer)) {
    other.m_context = nullptr;
}

RespClient::~RespClient() {
    if (m_context)
        redisFree(m_context);
}

Expected<std::string> RespClient::command(const std::vector<std::string>& argv) {
    appendCommand(m_context, argv);
    void* raw = nullptr;
    if (redisGetReply(m_context, &raw) != REDIS_OK || !raw)
        return ioError(fmt::format("connection error on {}: {}", argv.empty() ? "" : argv[0], m_context->errstr));
    auto* reply = static_cast<redisReply*>(raw);
    const bool isError = reply->type == REDIS_REPLY_ERROR;
    std::string text = replyText(reply);
    freeReplyObject(reply);
    if (isError)
        return dataError(fmt::format("{} failed: {}", argv.empty() ? "" : argv[0], text));
    return text;
}

Status RespClient::pipeline(
    std::span<const std::vector<std::string>> commands, std::size_t batch, std::uint64_t* errorReplies) {
    batch = std::max<std::size_t>(batch, 1);
    for (std::size_t start = 0; start < commands.size(); start += batch) {
        const std::size_t end = std::min(commands.size(), start + batch);
        for (std::size_t i = start; i < end; ++i)
            appendCommand(m_context, commands[i]);
        for (std::size_t i = start; i < end; ++i) {
            void* raw = nullptr;
            if (redisGetReply(m_context, &raw) != REDIS_OK || !raw)
                return ioError(fmt::format("connection error: {}", m_context->errstr));
            auto* reply = static_cast<redisReply*>(raw);
            const bool isError = reply->type == REDIS_REPLY_ERROR;
            std::string text = isError ? replyText(reply) : std::string();
            freeReplyObject(reply);
            if (isError && errorReplies)
                ++*errorReplies;
            else if (isError)
                return dataError(fmt::format("{} failed: {}", commands[i][0], text));
        }
    }
    return Ok {};
}

Status RespClient::sendRequests(std::span<const KeyRequest> requests) {
    // The whole batch formatted once and handed to hiredis as one buffer (redisAppendFormattedCommand
    // appends raw protocol), instead of formatting each GET through its argv path; then written out.
    std::string& out = m_getBuffer;
    out.clear();
    for (const auto& r : requests) {
        const bool expiring = r.set && r.ttlSeconds != 0;
        out += expiring ? "*5\r\n$3\r\nSET\r\n$"
            : r.set     ? "*3\r\n$3\r\nSET\r\n$"
            : r.del     ? "*2\r\n$3\r\nDEL\r\n$"
                        : "*2\r\n$3\r\nGET\r\n$";
        out += std::to_string(r.key.size());
        out += "\r\n";
        out += r.key;
        out += "\r\n";
        if (r.set) {
            out += '$';
            out += std::to_string(r.valueBytes);
            out += "\r\n";
            out.append(r.valueBytes, 'a');
            out += "\r\n";
            if (expiring) {
                const std::string ttl = std::to_string(r.ttlSeconds);
                out += "$2\r\nEX\r\n$" + std::to_string(ttl.size()) + "\r\n" + ttl + "\r\n";
            }
        }
    }
    redisAppendFormattedCommand(m_context, out.data(), out.size());
    for (int done = 0; !done;)
        if (redisBufferWrite(m_context, &done) != REDIS_OK)
            return ioError(fmt::format("connection error: {}", m_context->errstr));
    return Ok {};
}

Expected<int> RespClient::nextReplyType(std::string& errorText) {
    void* raw = nullptr;
    if (redisGetReply(m_context, &raw) != REDIS_OK || !raw)
        return ioError(fmt::format("connection error: {}", m_context->errstr));
    auto* reply = static_cast<redisReply*>(raw);
    const int type = reply->type;
    errorText = type == REDIS_REPLY_ERROR ? replyText(reply) : std::string();
    freeReplyObject(reply);
    return type;
}

namespace {
std::string_view commandName(const KeyRequest& r) {
    return r.set ? "SET" : r.del ? "DEL" : "GET";
}
} // namespace

Expected<std::uint64_t> RespClient::receiveRequests(std::span<const KeyRequest> requests) {
    std::uint64_t hits = 0;
    std::string error;
    for (const auto& r : requests) {
        auto type = nextReplyType(error);
        if (!type)
            return type.error();
        if (*type == REDIS_REPLY_ERROR)
            return dataError(fmt::format("{} failed: {}", commandName(r), error));
        hits += *type == REDIS_REPLY_STRING ? 1 : 0; // a SET answers with a status
    }
    return hits;
}

Expected<std::vector<RespClient::Outcome>> RespClient::receiveOutcomes(std::span<const KeyRequest> requests) {
    std::vector<Outcome> out;
    out.reserve(requests.size());
    std::string error;
    for (const auto& r : requests) {
        auto type = nextReplyType(error);
        if (!type)
            return type.error();
        if (*type == REDIS_REPLY_ERROR) {
            // server.c processCommand: "-OOM command not allowed when used memory > 'maxmemory'."
            if (error.rfind("OOM", 0) != 0)
                return dataError(fmt::format("{} failed: {}", commandName(r), error));
            out.push_back(Outcome::OutOfMemory);
            continue;
        }
        out.push_back(*type == REDIS_REPLY_NIL ? Outcome::Nil : Outcome::Done);
    }
    return out;
}

Expected<std::map<std::string, std::string>> RespClient::info(const std::string& section) {
    auto text = command({ "INFO", section });
    if (!text)
        return text.error();
    std::map<std::string, std::string> out;
    std::istringstream lines(*text);
    std::string line;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        const auto colon = line.find(':');
        if (line.empty() || line[0] == '#' || colon == std::string::npos)
            continue;
        out[line.substr(0, colon)] = line.substr(colon + 1);
    }
    return out;
}

} // namespace layoutlab
