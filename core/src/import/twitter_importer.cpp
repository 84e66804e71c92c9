// SPDX-License-Identifier: MIT
// Twitter cache-trace CSV (twitter/cache-trace README): no header, 7 fields
//   timestamp(s),anonymized key,key size,value size,client id,operation,ttl(s)
// Keys may contain commas, so the first field is split from the left and the last five from the right.
// Sizes are the original key's and the value's; a get/gets miss reports value size 0.

#include "import_formats.h"
#include "line_importer.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// A field of a line. Unlike std::string_view it has no default value, so an array of them is not
// zeroed before each line is split (a `rep stos` per line).
struct Field {
    const char* data;
    std::size_t size;
    Field& operator=(std::string_view v) {
        data = v.data();
        size = v.size();
        return *this;
    }
    operator std::string_view() const { return { data, size }; }
};
using TwitterFields = std::array<Field, 7>;

// Splits "ts,key...,ks,vs,cid,op,ttl" into its 7 fields; false if there are fewer than 7.
bool splitTwitter(std::string_view line, TwitterFields& f) {
    const char* const data = line.data();
    const char* const lineEnd = data + line.size();
    // The timestamp is a few digits: a plain scan beats a memchr call.
    const char* comma0 = data;
    while (comma0 < lineEnd && *comma0 != ',')
        ++comma0;
    if (comma0 == lineEnd)
        return false;
    f[0] = std::string_view(data, static_cast<std::size_t>(comma0 - data));
    const char* const begin = comma0 + 1;
#if defined(__SSE2__)
    // The last five fields are short numbers and an op name, nearly always within the line's last 32
    // bytes: find their commas with two 16-byte compares and take them from the mask's top bits.
    if (line.size() >= 32) {
        const char* const window = lineEnd - 32;
        const __m128i comma = _mm_set1_epi8(',');
        const auto lo = static_cast<std::uint32_t>(
            _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(window)), comma)));
        const auto hi = static_cast<std::uint32_t>(
            _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(window + 16)), comma)));
        std::uint64_t mask = lo | (std::uint64_t { hi } << 16);
        if (begin > window) // only commas after the first one count
            mask &= ~((std::uint64_t { 1 } << (begin - window)) - 1);
        // Five set bits at least (without std::popcount: baseline x86-64 has no POPCNT instruction).
        std::uint64_t fifth = mask;
        for (int i = 0; i < 4; ++i)
            fifth &= fifth - 1; // clears the lowest set bit
        if (fifth != 0) {
            const char* end = lineEnd;
            for (std::size_t i = 6; i >= 2; --i) {
                const int bit = 63 - std::countl_zero(mask);
                const char* const c = window + bit;
                f[i] = std::string_view(c + 1, static_cast<std::size_t>(end - c - 1));
                end = c;
                mask &= ~(std::uint64_t { 1 } << bit);
            }
            f[1] = std::string_view(begin, static_cast<std::size_t>(end - begin));
            return true;
        }
    }
#endif
    const char* end = lineEnd;
    for (std::size_t i = 6; i >= 2; --i) {
        const char* comma = end;
        while (comma > begin && comma[-1] != ',')
            --comma;
        if (comma == begin)
            return false;
        f[i] = std::string_view(comma, static_cast<std::size_t>(end - comma));
        end = comma - 1;
    }
    f[1] = std::string_view(begin, static_cast<std::size_t>(end - begin));
    return true;
}

// Parsing a line of the common shape in one pass, without splitting it into fields first: the first
// field from the left, then the last five from the right (where a key's commas cannot reach), each
// number summed as its digits are read.
class FastTwitterLine {
public:
    // The line [begin, newline), not empty.
    FastTwitterLine(const char* begin, const char* newline)
        : m_begin(begin)
        , m_cursor(newline) { }

    // False for anything parseLine() would reject or treat differently. Numbers of more than 8 digits
    // are left to it too: none of them can then exceed its limits.
    bool parse() {
        // The timestamp, from the left: digits up to the first comma.
        const char* p = m_begin;
        if (!digitsForward(p, seconds) || *p != ',')
            return false;
        keyBegin = p + 1;
        // From the right: ttl, op, client, value size, key size; each is preceded by a comma.
        std::uint64_t client = 0;
        if (!digitsBackward(ttl) || !opBackward() || !digitsBackward(client) || !digitsBackward(valueBytes)
            || !digitsBackward(keyBytes))
            return false;
        keyEnd = m_cursor; // at the comma after the key
        return keyEnd > keyBegin && keyBytes != 0 && keyBytes <= kMaxKeyBytes; // else the slow path says why
    }

    std::uint64_t seconds = 0, keyBytes = 0, valueBytes = 0, ttl = 0;
    const OpName* op = nullptr;
    const char* keyBegin = nullptr;
    const char* keyEnd = nullptr;

private:
    static constexpr std::ptrdiff_t kMaxDigits = 8;
    static bool digitsForward(const char*& p, std::uint64_t& out) {
        const char* const start = p;
        std::uint64_t v = 0;
        for (auto d = static_cast<unsigned>(*p - '0'); d <= 9; d = static_cast<unsigned>(*++p - '0'))
            v = v * 10 + d;
        out = v;
        return p != start && p - start <= kMaxDigits;
    }
    // The field that ends at the cursor (a comma or the line's end), preceded by a comma: the cursor
    // moves to that comma. The first field's comma stops every scan, so none leaves the line.
    bool digitsBackward(std::uint64_t& out) {
        const char* const end = m_cursor;
        const char* p = end - 1;
        std::uint64_t v = 0, scale = 1;
        for (auto d = static_cast<unsigned>(*p - '0'); d <= 9; d = static_cast<unsigned>(*--p - '0')) {
            v += d * scale;
            scale *= 10;
        }
        out = v;
        m_cursor = p;
        return *p == ',' && p != end - 1 && end - 1 - p <= kMaxDigits && p >= keyBegin;
    }
    bool opBackward() {
        // The two common ops are compared whole with their comma: ",get" and ",set" as one word.
        const char* const end = m_cursor;
        if (end - 4 >= keyBegin) {
            std::uint32_t word;
            std::memcpy(&word, end - 4, sizeof word);
            if (word == wordOf(",get") || word == wordOf(",set")) {
                op = word == wordOf(",get") ? &kTwitterOps[0] : &kTwitterOps[2];
                m_cursor = end - 4;
                return true;
            }
        }
        const char* p = end - 1;
        while (p >= keyBegin && *p != ',')
            --p;
        if (p < keyBegin)
            return false;
        op = findOp({ p + 1, static_cast<std::size_t>(end - p - 1) });
        m_cursor = p;
        return op != nullptr;
    }
    static constexpr std::uint32_t wordOf(const char (&text)[5]) {
        return static_cast<std::uint32_t>(static_cast<unsigned char>(text[0]))
            | static_cast<std::uint32_t>(static_cast<unsigned char>(text[1])) << 8
            | static_cast<std::uint32_t>(static_cast<unsigned char>(text[2])) << 16
            | static_cast<std::uint32_t>(static_cast<unsigned char>(text[3])) << 24;
    }

    const char* m_begin;
    const char* m_cursor;
};

class TwitterImporter final : public LineImporter {
public:
    using LineImporter::LineImporter;

protected:
    // Lines of the common shape (FastTwitterLine) are parsed here, "\n"-ended and at most
    // kMaxLineBytes long. Anything else stops the run and is left to parseLine(), which names what is
    // wrong with it.
    std::size_t parseWholeLines(
        std::string_view buffered, std::size_t maxLines, std::uint64_t& lines, std::size_t& lastLineStart) override {
        // A file with "\r\n" endings would have every line declined here after its newline was found:
        // once one such line is seen, the rest are left to parseLine() without trying.
        if (m_carriageReturns)
            return 0;
        const char* const begin = buffered.data();
        const char* const end = begin + buffered.size();
        const char* p = begin;
        std::size_t taken = 0;
        // The lines' ends are found a few hundred at a time, ahead of their parsing: not many more than
        // are parsed when a line stops the run early.
        constexpr std::size_t kLinesAhead = 256;
        std::uint32_t newlines[kLinesAhead + LineReader::kNewlineSlack];
        while (taken < maxLines) {
            const char* const from = p;
            const std::size_t found
                = LineReader::findNewlines(from, end, newlines, std::min(kLinesAhead, maxLines - taken));
            for (std::size_t i = 0; i < found && taken < maxLines; ++i, ++taken) {
                const char* const newline = from + newlines[i];
                if (newline == p || static_cast<std::size_t>(newline - p) > kMaxLineBytes)
                    return done(begin, p, taken, lines);
                if (newline[-1] == '\r') {
                    m_carriageReturns = true;
                    return done(begin, p, taken, lines);
                }
                FastTwitterLine line(p, newline);
                if (!line.parse())
                    return done(begin, p, taken, lines);
                push(line.seconds, { line.keyBegin, static_cast<std::size_t>(line.keyEnd - line.keyBegin) },
                    line.keyBytes, line.valueBytes, line.ttl, *line.op);
                lastLineStart = static_cast<std::size_t>(p - begin);
                p = newline + 1;
            }
            if (found < kLinesAhead)
                break; // the buffered bytes hold no more whole lines (or maxLines were taken)
        }
        return done(begin, p, taken, lines);
    }
    static std::size_t done(const char* begin, const char* p, std::size_t taken, std::uint64_t& lines) {
        lines = taken;
        return static_cast<std::size_t>(p - begin);
    }

    std::optional<LineError> parseLine(std::string_view line) override {
        TwitterFields f;
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
            return LineError { "unknown op",
                "field op: unknown operation '" + std::string(std::string_view(f[5]).substr(0, 40)) + "'" };
        if (f[1].size == 0)
            return LineError { "empty key", "field key is empty" };
        if (keyBytes == 0)
            return LineError { "impossible size", "field key_size is 0" };
        if (keyBytes > kMaxKeyBytes)
            return LineError { "impossible size",
                fmt::format("field key_size is {}, over the {}-byte limit on keys", keyBytes, kMaxKeyBytes) };
        push(seconds, f[1], keyBytes, valueBytes, ttl, *op);
        return std::nullopt;
    }

private:
    bool m_carriageReturns = false; // a line ended by "\r\n" was seen: the fast path is off
    // Queues the request of a valid line. Inlined into the fast path's loop: called there once a line,
    // with six arguments, it spent more on saving and restoring registers than on its own work.
    [[gnu::always_inline]] void push(std::uint64_t seconds, std::string_view key, std::uint64_t keyBytes,
        std::uint64_t valueBytes, std::uint64_t ttl, const OpName& op) {
        const std::uint64_t timeMs = relativeMs(seconds * 1000);
        Request& r = pushKeyed<true>(key, static_cast<std::uint32_t>(valueBytes), op.isRead, true);
        r.timeMs = timeMs;
        r.keyBytes = static_cast<std::uint32_t>(keyBytes);
        r.op = op.op;
        r.ttlSeconds = op.isRead ? 0 : static_cast<std::uint32_t>(ttl);
        if (r.op == Op::Incr || r.op == Op::Decr)
            r.kind = ValueKind::Integer;
    }
};

} // namespace

bool detectTwitter(std::string_view firstLine) {
    TwitterFields f;
    if (!splitTwitter(firstLine, f))
        return false;
    std::uint64_t n = 0;
    std::uint32_t m = 0;
    return !parseField(f[0], "", n) && !parseField(f[2], "", m) && !parseField(f[3], "", m) && findOp(f[5]);
}

std::unique_ptr<Importer> makeTwitterImporter(std::unique_ptr<InputStream> input, const ImportOptions& options) {
    return std::make_unique<TwitterImporter>("twitter", std::move(input), options);
}

} // namespace layoutlab
