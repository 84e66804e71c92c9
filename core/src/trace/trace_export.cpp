// SPDX-License-Identifier: MIT
#include "layoutlab/trace/trace_export.h"

#include "layoutlab/output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <vector>

namespace layoutlab {

namespace {

// "k" + base-36 id, padded with '0' after the "k" to the key's length when that is longer.
std::string keyName(std::uint32_t id, std::uint32_t keyBytes) {
    std::string digits;
    do {
        digits.push_back("0123456789abcdefghijklmnopqrstuvwxyz"[id % 36]);
        id /= 36;
    } while (id);
    std::string name = "k";
    if (keyBytes > digits.size() + 1)
        name.append(keyBytes - digits.size() - 1, '0');
    name.append(digits.rbegin(), digits.rend());
    return name;
}

// The Twitter trace names its operations as layoutlab does; these have no Twitter counterpart.
bool twitterExpressible(Op op) {
    return op != Op::Expire && op != Op::Persist && op != Op::Other && op != Op::Resize && op != Op::Rename;
}

const char* cachelibOp(Op op) {
    switch (op) {
    case Op::Get:
        return "GET";
    case Op::Set:
        return "SET";
    case Op::Delete:
        return "DELETE";
    default:
        return nullptr;
    }
}

void putLe(std::string& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
        out.push_back(static_cast<char>(v >> (8 * i)));
}

} // namespace

Status exportTrace(TraceReader& trace, std::string_view format, const std::string& path) {
    if (format != "twitter" && format != "cachelib" && format != "oracle")
        return usageError(
            fmt::format("cannot export to '{}' (formats: twitter, cachelib, oracle)", format), field::kFormat);
    auto output = OutputFile::open(path);
    if (!output)
        return output.error();
    std::string out;
    if (format == "cachelib")
        out = "op_time,key,key_size,op,op_count,size,cache_hits,ttl\n";
    std::vector<std::uint32_t> objectSize; // oracle: the last size of each object
    std::vector<Request> batch(4096);
    std::uint64_t unexportable = 0;
    Status status = Ok {};
    while (status) {
        auto n = trace.read(batch);
        if (!n) {
            status = n.error();
            break;
        }
        if (*n == 0)
            break;
        for (std::size_t i = 0; i < *n; ++i) {
            const Request& r = batch[i];
            const std::uint64_t seconds = r.timeMs / 1000;
            if (r.op == Op::Rename) { // no format here moves a key
                ++unexportable;
                continue;
            }
            const bool write = r.op != Op::Get && r.op != Op::Delete;
            const std::uint32_t ttl = r.ttlSeconds == kKeepTtl ? 0 : r.ttlSeconds;
            if (format == "twitter") {
                if (!twitterExpressible(r.op)) {
                    ++unexportable;
                    continue;
                }
                const auto op = opName(r.op);
                out += fmt::format("{},{},{},{},0,{},{}\n", seconds, keyName(r.keyId, r.keyBytes), r.keyBytes,
                    write ? r.valueBytes : 0, op, write ? ttl : 0);
            } else if (format == "cachelib") {
                const char* op = cachelibOp(r.op);
                if (!op) {
                    ++unexportable;
                    continue;
                }
                out += fmt::format("{},{},{},{},1,{},0,{}\n", seconds, keyName(r.keyId, r.keyBytes), r.keyBytes, op,
                    write ? r.valueBytes : 0, write ? ttl : 0);
            } else {
                if (r.keyId >= objectSize.size())
                    objectSize.resize(std::max<std::size_t>(std::size_t { r.keyId } + 1, objectSize.size() * 2));
                if (write)
                    objectSize[r.keyId] = r.keyBytes + r.valueBytes;
                if (r.op == Op::Delete || objectSize[r.keyId] == 0) {
                    ++unexportable;
                    continue;
                }
                putLe(out, seconds, 4);
                putLe(out, r.keyId, 8);
                putLe(out, objectSize[r.keyId], 4);
                putLe(out, ~std::uint64_t { 0 }, 8); // next_access_vtime: -1 (not computed)
            }
        }
        status = (*output)->write(out);
        out.clear();
    }
    if (!status)
        return status; // the output file removes its temporary file
    (void)unexportable;
    return (*output)->commit();
}

} // namespace layoutlab
