// SPDX-License-Identifier: MIT
#include "line_importer.h"

#include <algorithm>
#include <fmt/format.h>

namespace layoutlab {

LineImporter::LineImporter(std::unique_ptr<InputStream> input, const ImportOptions& options)
    : m_input(std::move(input))
    , m_lines(*m_input) {
    m_options = options;
    m_path = m_input->path();
}

double LineImporter::progress() const {
    return m_input->sourceBytes() ? static_cast<double>(m_input->sourceBytesRead()) / m_input->sourceBytes() : 1.0;
}

std::uint64_t LineImporter::relativeMs(std::uint64_t absoluteMs) {
    if (!m_haveFirstTime) {
        m_haveFirstTime = true;
        m_firstTimeMs = absoluteMs;
    }
    return absoluteMs >= m_firstTimeMs ? absoluteMs - m_firstTimeMs : 0;
}

std::uint32_t LineImporter::valueSizeFor(std::uint32_t keyId, std::uint32_t reported, bool isRead) {
    if (keyId >= m_lastValueBytes.size())
        m_lastValueBytes.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_lastValueBytes.size() * 2));
    if (isRead && reported == 0)
        return m_lastValueBytes[keyId];
    m_lastValueBytes[keyId] = reported;
    return reported;
}

void LineImporter::resolveQueued() {
    // How far ahead of the request being resolved its successors' table slots are prefetched: enough
    // misses in flight to cover one's latency.
    constexpr std::size_t kPrefetchDistance = 16;
    const std::size_t end = m_queue.size();
    for (std::size_t i = m_resolved; i < end && i < m_resolved + kPrefetchDistance; ++i)
        if (m_pending[i].flags & kNeedsKey)
            m_keys.prefetch(m_pending[i].keyHash);
    for (std::size_t i = m_resolved; i < end; ++i) {
        if (i + kPrefetchDistance < end && (m_pending[i + kPrefetchDistance].flags & kNeedsKey))
            m_keys.prefetch(m_pending[i + kPrefetchDistance].keyHash);
        const Pending& p = m_pending[i];
        if (p.flags & kNeedsKey)
            m_queue[i].keyId = m_keys.idForHash(p.keyHash);
    }
    // Ids are known now: the last-size table is sized once for the batch, then read in order.
    if (m_lastValueBytes.size() < m_keys.size())
        m_lastValueBytes.resize(std::max<std::size_t>(m_keys.size(), m_lastValueBytes.size() * 2));
    for (std::size_t i = m_resolved; i < end && i < m_resolved + kPrefetchDistance; ++i)
        __builtin_prefetch(&m_lastValueBytes[m_queue[i].keyId]);
    for (std::size_t i = m_resolved; i < end; ++i) {
        if (i + kPrefetchDistance < end)
            __builtin_prefetch(&m_lastValueBytes[m_queue[i + kPrefetchDistance].keyId], 1);
        const Pending& p = m_pending[i];
        if (p.flags & kNeedsValue)
            m_queue[i].valueBytes = valueSizeFor(m_queue[i].keyId, p.reportedValue, p.flags & kIsRead);
    }
    m_resolved = end;
}

Expected<std::size_t> LineImporter::read(std::span<Request> out) {
    // Lines are parsed until a batch of requests is queued (or the input ends), the batch is resolved,
    // then handed out.
    constexpr std::size_t kBatchRequests = 1024;
    std::size_t n = 0;
    while (n < out.size()) {
        if (m_queueHead < m_resolved) {
            const std::size_t take = std::min(out.size() - n, m_resolved - m_queueHead);
            std::copy_n(m_queue.begin() + static_cast<std::ptrdiff_t>(m_queueHead), take, out.begin() + n);
            n += take;
            m_queueHead += take;
            if (m_queueHead == m_queue.size())
                dropQueued();
            continue;
        }
        if (m_done || m_queue.size() - m_resolved >= kBatchRequests) {
            if (m_resolved == m_queue.size())
                break; // the input has ended and everything was handed out
            resolveQueued();
            continue;
        }
        std::string_view line;
        auto result = m_lines.next(line);
        if (!result)
            return result.error();
        if (*result == LineReader::Result::End) {
            inputEnded();
            m_done = true;
            continue;
        }
        if (*result == LineReader::Result::TooLong) {
            if (auto error = reject("line longer than 1 MiB", m_lines.lineNumber(), true, "line longer than 1 MiB"))
                return *error;
            continue;
        }
        if (line.empty())
            continue;
        const std::size_t lineStart = m_queue.size();
        if (auto problem = parseLine(line)) {
            // A rejected line contributes nothing.
            m_queue.resize(lineStart);
            m_pending.resize(lineStart);
            if (auto error = reject(problem->reason, m_lines.lineNumber(), true, problem->detail))
                return *error;
        }
    }
    return n;
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
