// SPDX-License-Identifier: MIT
#include "line_importer.h"

#include <algorithm>
#include <fmt/format.h>

namespace layoutlab {

LineImporter::LineImporter(std::string formatName, std::unique_ptr<InputStream> input, const ImportOptions& options)
    : m_formatName(std::move(formatName))
    , m_input(std::move(input))
    , m_lines(*m_input) {
    m_options = options;
    m_path = m_input->path();
}

double LineImporter::progress() const {
    return m_input->sourceBytes() ? static_cast<double>(m_input->sourceBytesRead()) / m_input->sourceBytes() : 1.0;
}

void LineImporter::resolveBatch(ParsedBatch& batch) {
    // How far ahead of the request being resolved its successors' table slots are prefetched: enough
    // misses in flight to cover one's latency.
    constexpr std::size_t kPrefetchDistance = 48;
    auto& requests = batch.requests;
    auto& pending = batch.pending;
    const std::size_t end = requests.size();
    if (batch.hashLater) {
        std::size_t keyBegin = 0;
        for (Pending& p : pending) {
            if (!(p.flags & kHashLater))
                continue;
            const auto keyEnd = static_cast<std::size_t>(p.keyHash);
            p.keyHash = KeyInterner::hashKey(batch.keys.view(keyBegin, keyEnd));
            p.flags &= static_cast<std::uint8_t>(~kHashLater);
            keyBegin = keyEnd;
        }
    }
    for (std::size_t i = 0; i < end && i < kPrefetchDistance; ++i)
        if (pending[i].flags & kNeedsKey)
            m_keys.prefetch(pending[i].keyHash);
    for (std::size_t i = 0; i < end; ++i) {
        if (i + kPrefetchDistance < end && (pending[i + kPrefetchDistance].flags & kNeedsKey))
            m_keys.prefetch(pending[i + kPrefetchDistance].keyHash);
        if (pending[i].flags & kNeedsKey)
            requests[i].keyId = m_keys.idForHash(pending[i].keyHash);
    }
    // Ids are known now: the last-size table is sized once for the batch, then read in order.
    if (m_lastValueBytes.size() < m_keys.size())
        m_lastValueBytes.resize(std::max<std::size_t>(m_keys.size(), m_lastValueBytes.size() * 2));
    std::uint32_t* const lastValueBytes = m_lastValueBytes.data(); // held in a register, not reloaded
    for (std::size_t i = 0; i < end && i < kPrefetchDistance; ++i)
        __builtin_prefetch(&lastValueBytes[requests[i].keyId]);
    for (std::size_t i = 0; i < end; ++i) {
        if (i + kPrefetchDistance < end)
            __builtin_prefetch(&lastValueBytes[requests[i + kPrefetchDistance].keyId], 1);
        const Pending& p = pending[i];
        if (!(p.flags & kNeedsValue))
            continue;
        // A read that reports 0 (a miss) takes the key's last known size; anything else sets it.
        std::uint32_t& last = lastValueBytes[requests[i].keyId];
        if ((p.flags & kIsRead) && p.reportedValue == 0)
            requests[i].valueBytes = last;
        else
            last = requests[i].valueBytes = p.reportedValue;
    }
}

bool LineImporter::parseBatch(ParsedBatch& batch) {
    // Lines are parsed until a batch of requests is queued, the input ends, or a line stops the import.
    // As many as a block of the binary trace holds: a batch handed to the trace writer whole is encoded
    // where it is, not copied into the writer's block first.
    constexpr std::size_t kBatchRequests = 4096;
    batch.requests.clear();
    batch.pending.clear();
    batch.hashLater = m_hashLater;
    batch.keys.clear();
    batch.error.reset();
    batch.last = false;
    m_parsing = &batch;
    auto stopWith = [&](Error error) {
        batch.error = std::move(error);
        batch.last = true;
    };
    while (!batch.last && batch.requests.size() < kBatchRequests) {
        if (m_inputDone) {
            batch.last = true;
            break;
        }
        std::uint64_t wholeLines = 0;
        std::size_t lastLineStart = 0;
        if (const std::size_t bytes
            = parseWholeLines(m_lines.buffered(), kBatchRequests - batch.requests.size(), wholeLines, lastLineStart)) {
            m_lines.skipLines(bytes, wholeLines, lastLineStart);
            if (batch.requests.size() >= kBatchRequests)
                break;
        }
        std::string_view line;
        auto result = m_lines.next(line);
        if (!result) {
            stopWith(result.error());
            break;
        }
        if (*result == LineReader::Result::End) {
            inputEnded();
            m_inputDone = true;
            continue;
        }
        if (*result == LineReader::Result::TooLong) {
            if (auto error = reject("line longer than 1 MiB", m_lines.lineNumber(), true, "line longer than 1 MiB"))
                stopWith(*error);
            continue;
        }
        if (line.empty())
            continue;
        const std::size_t lineStart = batch.requests.size(), lineKeys = batch.keys.size();
        if (auto problem = parseLine(line)) {
            // A rejected line contributes nothing.
            batch.requests.resize(lineStart);
            batch.pending.resize(lineStart);
            batch.keys.resize(lineKeys);
            if (!m_lines.lineTerminated()) {
                // The input ends inside this line: a record cut short, not a bad one (a bad line in the
                // middle still follows --on-error).
                noteTruncated(m_lines.lineNumber(), problem->detail);
                continue;
            }
            if (auto error = reject(problem->reason, m_lines.lineNumber(), true, problem->detail))
                stopWith(*error);
        }
    }
    m_parsing = nullptr;
    batch.progress = progress();
    return !batch.last;
}

Expected<std::size_t> LineImporter::read(std::span<Request> out) {
    // On one thread: parse and resolve each batch as the previous one is used up.
    return m_cursor.read(out, [this](ParsedBatch*) {
        parseBatch(m_batch);
        resolveBatch(m_batch);
        return &m_batch;
    });
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const char x = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
        const char y = (b[i] >= 'A' && b[i] <= 'Z') ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
        if (x != y)
            return false;
    }
    return true;
}

} // namespace layoutlab
