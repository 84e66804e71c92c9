// SPDX-License-Identifier: MIT
#include "line_importer.h"

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

Expected<std::size_t> LineImporter::read(std::span<Request> out) {
    std::size_t n = 0;
    while (n < out.size()) {
        if (m_queueHead < m_queue.size()) {
            out[n++] = m_queue[m_queueHead++];
            if (m_queueHead == m_queue.size())
                dropQueued();
            continue;
        }
        if (m_done)
            break;
        std::string_view line;
        auto result = m_lines.next(line);
        if (!result)
            return result.error();
        if (*result == LineReader::Result::End) {
            m_done = true;
            break;
        }
        if (*result == LineReader::Result::TooLong) {
            if (auto error = reject("line longer than 1 MiB", m_lines.lineNumber(), true, "line longer than 1 MiB"))
                return *error;
            continue;
        }
        if (line.empty())
            continue;
        if (auto problem = parseLine(line)) {
            dropQueued(); // a rejected line contributes nothing
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
