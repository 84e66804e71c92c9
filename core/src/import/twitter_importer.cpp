// SPDX-License-Identifier: MIT
// Twitter cache-trace CSV (twitter/cache-trace README): no header, 7 fields
//   timestamp(s),anonymized key,key size,value size,client id,operation,ttl(s)
// Keys may contain commas, so the first field is split from the left and the last five from the right.
// Sizes are the original key's and the value's; a get/gets miss reports value size 0.

#include "import_formats.h"
#include "line_importer.h"

#include <array>
#include <cstring>

namespace layoutlab {

namespace {

struct OpName {
    std::string_view name;
    Op op;
    bool isRead;
};
// The 11 memcached operations of the README. cas stores like set; gets reads like get.
constexpr std::array kTwitterOps { OpName { "get", Op::Get, true }, OpName { "gets", Op::Get, true },
    OpName { "set", Op::Set, false }, OpName { "add", Op::Add, false }, OpName { "replace", Op::Replace, false },
    OpName { "cas", Op::Set, false }, OpName { "append", Op::Append, false }, OpName { "prepend", Op::Prepend, false },
    OpName { "delete", Op::Delete, false }, OpName { "incr", Op::Incr, false }, OpName { "decr", Op::Decr, false } };

const OpName* findOp(std::string_view name) {
    // The common names first, compared whole; the rest by a scan.
    if (name.size() == 3 && name[0] == 'g' && name[1] == 'e' && name[2] == 't')
        return &kTwitterOps[0];
    if (name.size() == 3 && name[0] == 's' && name[1] == 'e' && name[2] == 't')
        return &kTwitterOps[2];
    for (const auto& o : kTwitterOps)
        if (o.name == name)
            return &o;
    return nullptr;
}

// Splits "ts,key...,ks,vs,cid,op,ttl" into its 7 fields; false if there are fewer than 7.
bool splitTwitter(std::string_view line, std::array<std::string_view, 7>& f) {
    const auto* comma0 = static_cast<const char*>(std::memchr(line.data(), ',', line.size()));
    if (!comma0)
        return false;
    const auto firstComma = static_cast<std::size_t>(comma0 - line.data());
    f[0] = line.substr(0, firstComma);
    const char* const begin = line.data() + firstComma + 1;
    const char* end = line.data() + line.size();
    // The last five fields are short numbers and an op name: a plain backward scan beats memrchr calls.
    for (int i = 6; i >= 2; --i) {
        const char* comma = end;
        while (comma > begin && comma[-1] != ',')
            --comma;
        if (comma == begin)
            return false;
        f[static_cast<std::size_t>(i)] = std::string_view(comma, static_cast<std::size_t>(end - comma));
        end = comma - 1;
    }
    f[1] = std::string_view(begin, static_cast<std::size_t>(end - begin));
    return true;
}

class TwitterImporter final : public LineImporter {
public:
    using LineImporter::LineImporter;
    std::string formatName() const override { return "twitter"; }

protected:
    std::optional<LineError> parseLine(std::string_view line) override {
        std::array<std::string_view, 7> f;
        if (!splitTwitter(line, f))
            return LineError { "wrong field count",
                "expected 7 comma-separated fields (timestamp,key,key_size,"
                "value_size,client,op,ttl)" };
        std::uint64_t seconds = 0, keyBytes = 0, valueBytes = 0, ttl = 0, client = 0;
        if (!(parseDigits(f[0], seconds) && parseDigits(f[2], keyBytes) && keyBytes <= UINT32_MAX
                && parseDigits(f[3], valueBytes) && valueBytes <= UINT32_MAX && parseDigits(f[4], client)
                && parseDigits(f[6], ttl) && ttl <= UINT32_MAX)) [[unlikely]] {
            // Slow path, only to name the bad field.
            std::uint64_t s64 = 0;
            std::uint32_t u32 = 0;
            if (auto e = parseField(f[0], "timestamp", s64))
                return e;
            if (auto e = parseField(f[2], "key_size", u32))
                return e;
            if (auto e = parseField(f[3], "value_size", u32))
                return e;
            if (auto e = parseField(f[4], "client_id", u32))
                return e;
            if (auto e = parseField(f[6], "ttl", u32))
                return e;
        }
        const OpName* op = findOp(f[5]);
        if (!op)
            return LineError { "unknown op", "field op: unknown operation '" + std::string(f[5].substr(0, 40)) + "'" };
        if (f[1].empty())
            return LineError { "empty key", "field key is empty" };
        if (keyBytes == 0)
            return LineError { "impossible size", "field key_size is 0" };
        Request r;
        r.timeMs = relativeMs(seconds * 1000);
        r.keyBytes = static_cast<std::uint32_t>(keyBytes);
        r.op = op->op;
        r.ttlSeconds = op->isRead ? 0 : static_cast<std::uint32_t>(ttl);
        if (r.op == Op::Incr || r.op == Op::Decr)
            r.kind = ValueKind::Integer;
        pushKeyed(r, f[1], static_cast<std::uint32_t>(valueBytes), op->isRead, true);
        return std::nullopt;
    }
};

} // namespace

bool detectTwitter(std::string_view firstLine) {
    std::array<std::string_view, 7> f;
    if (!splitTwitter(firstLine, f))
        return false;
    std::uint64_t n = 0;
    std::uint32_t m = 0;
    return !parseField(f[0], "", n) && !parseField(f[2], "", m) && !parseField(f[3], "", m) && findOp(f[5]);
}

std::unique_ptr<Importer> makeTwitterImporter(std::unique_ptr<InputStream> input, const ImportOptions& options) {
    return std::make_unique<TwitterImporter>(std::move(input), options);
}

} // namespace layoutlab
