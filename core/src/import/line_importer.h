// SPDX-License-Identifier: MIT
#pragma once

// Shared machinery of the text importers: lines in, requests out, through a queue (one line can give
// several requests: CacheLib's op_count, MSET), with the --on-error policy applied per line.
//
// Requests queued with pushKeyed() get their key id and value size later, a batch at a time and in
// order: the key table and the last-size table are far larger than the host's caches, and resolving a
// batch lets their cache misses overlap (prefetched) instead of stalling line by line.

#include "layoutlab/import/importer.h"
#include "layoutlab/import/input_stream.h"
#include "layoutlab/trace/batch_pipeline.h"

#include <charconv>
#include <deque>
#include <limits>
#include <optional>

namespace layoutlab {

// Why a line was refused: a short category for counting, and details for the message.
struct LineError {
    std::string reason;
    std::string detail;
};

// The value of a hexadecimal digit, or -1 (the %HH escapes of memcached keys, the \xHH of MONITOR).
inline int hexDigit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

class LineImporter : public Importer {
public:
    // `formatName`: the format's name, as --format and the statistics give it.
    LineImporter(std::string formatName, std::unique_ptr<InputStream> input, const ImportOptions& options);
    std::string formatName() const final { return m_formatName; }
    Expected<std::size_t> read(std::span<Request> out) override;
    std::uint64_t totalRequests() const override { return 0; }
    std::uint64_t keyIdLimit() const override { return 0; }
    std::string name() const override { return m_path; }
    double progress() const override;

    static constexpr std::uint8_t kNeedsKey = 1;
    static constexpr std::uint8_t kNeedsValue = 2;
    static constexpr std::uint8_t kIsRead = 4;
    static constexpr std::uint8_t kHashLater = 8; // keyHash is where the key ends in the batch's `keys`
    struct Pending {
        std::uint64_t keyHash = 0;
        std::uint32_t reportedValue = 0;
        std::uint8_t flags = 0; // 0: nothing to resolve
    };
    // Keys held for hashing later, one after another, up to kLimit bytes; with room past that for a key
    // copied in whole 64-byte blocks.
    class HeldKeys {
    public:
        static constexpr std::size_t kLimit = std::size_t { 1 } << 20;
        std::size_t size() const { return m_size; }
        bool fits(std::size_t bytes) const { return m_size + bytes <= kLimit; }
        // Appends `key`. kFromReadBuffer: it lies in a LineReader's buffered bytes, which are followed
        // by LineReader::kReadSlack more, so it is copied in 64-byte blocks, the first one whatever the
        // key's length: no branch on the length for all but keys over 64 bytes (a memcpy's branches
        // on it mispredict about once a key).
        template <bool kFromReadBuffer> void append(std::string_view key) {
            if (!m_bytes)
                m_bytes = std::make_unique_for_overwrite<char[]>(kLimit + kBlock);
            char* const out = m_bytes.get() + m_size;
            if constexpr (kFromReadBuffer) {
                static_assert(LineReader::kReadSlack >= kBlock);
                for (std::size_t i = 0;;) {
                    std::memcpy(out + i, key.data() + i, kBlock);
                    if ((i += kBlock) >= key.size()) [[likely]]
                        break;
                }
            } else {
                std::memcpy(out, key.data(), key.size());
            }
            m_size += key.size();
        }
        std::string_view view(std::size_t begin, std::size_t end) const {
            return { m_bytes.get() + begin, end - begin };
        }
        void resize(std::size_t bytes) { m_size = bytes; } // to a size it had
        void clear() { m_size = 0; }

    private:
        static constexpr std::size_t kBlock = 64;
        std::unique_ptr<char[]> m_bytes; // kLimit + kBlock: the last key's final block may pass kLimit
        std::size_t m_size = 0;
    };
    // Parsed lines: requests, what is left to resolve of each, and what ended the batch.
    struct ParsedBatch {
        std::vector<Request> requests;
        std::vector<Pending> pending; // beside requests
        // Keys hashed when the batch is resolved rather than as it is parsed: `keys` holds them, each
        // flagged kHashLater, up to HeldKeys::kLimit bytes (keys after that are hashed as they are
        // parsed: a batch of long keys must not hold megabytes of them).
        bool hashLater = false;
        HeldKeys keys;
        std::optional<Error> error; // stops the import after these requests
        bool last = false;
        double progress = 0; // through the input when the batch was parsed
    };
    // Parsing and resolving are separate steps, so that PipelinedImporter can run them on two threads:
    // parseBatch() fills a batch from the next lines (the parser's state only); resolveBatch() gives its
    // requests their key ids and value sizes, in order (the key tables only).
    bool parseBatch(ParsedBatch& batch);
    void resolveBatch(ParsedBatch& batch);
    // Whether the batches parseBatch() fills from now on leave their keys to be hashed by
    // resolveBatch(): on two threads, the one with time to spare should do it (PipelinedImporter).
    void setHashLater(bool later) { m_hashLater = later; }

protected:
    // Parses one line into requests (push()). Returns a LineError for a line to reject.
    virtual std::optional<LineError> parseLine(std::string_view line) = 0;
    // The input has ended: push whatever is still held back (mc-watch's reordering window).
    virtual void inputEnded() { }
    // A format's fast path: parses the whole lines at the start of `buffered` that it can, each into
    // exactly one request, at most `maxLines` of them, with the result parseLine() would give. It stops
    // before the first line it leaves to parseLine() (any it would reject, for one). Returns the bytes
    // taken; `lines` is their line count and `lastLineStart` where the last of them starts.
    virtual std::size_t parseWholeLines(
        std::string_view buffered, std::size_t maxLines, std::uint64_t& lines, std::size_t& lastLineStart) {
        (void)buffered, (void)maxLines, (void)lines, (void)lastLineStart;
        return 0;
    }

    // Queues a request that is complete as it is.
    void push(const Request& r) {
        m_parsing->requests.push_back(r);
        m_parsing->pending.push_back({});
    }
    // Queues a request whose keyId is the id of the key whose name hashes to `keyHash` (KeyInterner::hashKey):
    // a key the importer knows by its hash alone.
    void pushHashed(const Request& r, std::uint64_t keyHash) {
        m_parsing->requests.push_back(r);
        m_parsing->pending.push_back({ keyHash, 0, kNeedsKey });
    }
    // Queues a request whose keyId is the id of `key`, and whose valueBytes (when `resolveValue`) is
    // `reportedValue`, except for a read reporting 0 (a miss), which takes the key's last known size;
    // both are resolved when its batch is.
    void pushKeyed(
        const Request& r, std::string_view key, std::uint32_t reportedValue, bool isRead, bool resolveValue) {
        pushKeyed<false>(key, reportedValue, isRead, resolveValue) = r;
    }
    // As above, returning the queued request for the caller to fill in place: a request built on the
    // stack field by field and then copied whole is reloaded before its stores retire (a store-forwarding
    // stall on every line). kKeyInReadBuffer: `key` lies in the LineReader's buffered bytes.
    template <bool kKeyInReadBuffer>
    Request& pushKeyed(std::string_view key, std::uint32_t reportedValue, bool isRead, bool resolveValue) {
        ParsedBatch& batch = *m_parsing;
        std::uint64_t keyHash;
        std::uint8_t flags = kNeedsKey | (resolveValue ? kNeedsValue : 0) | (isRead ? kIsRead : 0);
        if (batch.hashLater && batch.keys.fits(key.size())) {
            batch.keys.append<kKeyInReadBuffer>(key);
            keyHash = batch.keys.size();
            flags |= kHashLater;
        } else {
            keyHash = KeyInterner::hashKey(key);
        }
        batch.pending.push_back({ keyHash, reportedValue, flags });
        return batch.requests.emplace_back();
    }
    // Milliseconds since the first timestamp of the trace (earlier ones clamp to 0).
    std::uint64_t relativeMs(std::uint64_t absoluteMs) {
        if (!m_haveFirstTime) [[unlikely]] {
            m_haveFirstTime = true;
            m_firstTimeMs = absoluteMs;
        }
        return absoluteMs >= m_firstTimeMs ? absoluteMs - m_firstTimeMs : 0;
    }
    std::uint64_t lineNumber() const { return m_lines.lineNumber(); }

private:
    // Parser side.
    std::string m_formatName;
    std::unique_ptr<InputStream> m_input;
    LineReader m_lines;
    ParsedBatch* m_parsing = nullptr; // the batch parseBatch() is filling
    bool m_haveFirstTime = false;
    std::uint64_t m_firstTimeMs = 0;
    bool m_inputDone = false;
    bool m_hashLater = false;
    // Resolver side.
    KeyInterner m_keys;
    std::vector<std::uint32_t> m_lastValueBytes;
    // read() without a pipeline: the batch being handed out.
    ParsedBatch m_batch;
    BatchCursor<ParsedBatch> m_cursor;
};

// Field parsing helpers shared by the importers. Each returns nullopt on success.
// Digits only, at most 19 of them: the common case, without building an error.
inline bool parseDigits(std::string_view text, std::uint64_t& out) {
    if (text.empty() || text.size() > 19)
        return false;
    std::uint64_t v = 0;
    for (const char c : text) {
        const auto d = static_cast<unsigned>(c - '0');
        if (d > 9)
            return false;
        v = v * 10 + d;
    }
    out = v;
    return true;
}

template <class T> std::optional<LineError> parseField(std::string_view text, std::string_view field, T& out) {
    if (std::uint64_t fast = 0; parseDigits(text, fast) && fast <= std::numeric_limits<T>::max()) [[likely]] {
        out = static_cast<T>(fast);
        return std::nullopt;
    }
    if (text.empty())
        return LineError { "empty number", "field " + std::string(field) + " is empty" };
    if (text.front() == '-')
        return LineError { "negative number", "field " + std::string(field) + " is negative: " + std::string(text) };
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && value > std::numeric_limits<T>::max()))
        return LineError { "size over 4 GiB",
            "field " + std::string(field) + " is too large: " + std::string(text.substr(0, 40)) };
    if (ec != std::errc() || ptr != text.data() + text.size())
        return LineError { "not a number",
            "field " + std::string(field) + " is not a non-negative integer: '" + std::string(text.substr(0, 40))
                + "'" };
    out = static_cast<T>(value);
    return std::nullopt;
}

// Case-insensitive ASCII equality.
bool equalsIgnoreCase(std::string_view a, std::string_view b);

} // namespace layoutlab
