// SPDX-License-Identifier: MIT
#include "block_encoder.h"

#include "trace_block.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// Blocks queued or being filled at once: enough that a burst on one side (a large collection parsed, a
// write the kernel makes wait) does not stall the other; each is 128 KiB of requests.
constexpr std::size_t kBlocksInFlight = 8;
// The blocks queued before the thread is woken: a wake-up costs the writer a system call and the other core
// an interrupt (3% of an RDB import's time when each block woke it).
constexpr std::size_t kWakeBlocks = 4;
// Encoded bytes gathered before a write to the stream.
constexpr std::size_t kWriteBytes = 1 << 20;
} // namespace

BlockEncoder::BlockEncoder(std::FILE* file, std::string path)
    : m_file(file)
    , m_path(std::move(path)) {
    for (std::size_t i = 0; i + 1 < kBlocksInFlight; ++i) { // the writer holds one
        m_free.emplace_back();
        m_free.back().reserve(trace_block::kBlockRecords);
    }
    m_thread = std::jthread([this](std::stop_token stop) { run(stop); });
}

BlockEncoder::~BlockEncoder() {
    m_thread.request_stop();
    m_changed.notify_all();
    m_thread = {}; // joins
}

Status BlockEncoder::hand(std::vector<Request>& block) {
    std::unique_lock lock(m_mutex);
    if (m_free.empty() && !m_error) {
        m_writerWaiting = true;
        m_changed.wait(lock, [this] { return !m_free.empty() || m_error; });
        m_writerWaiting = false;
    }
    if (m_error)
        return *m_error;
    m_queued.push_back(std::move(block));
    block = std::move(m_free.back());
    m_free.pop_back();
    const bool wake = m_encoderWaiting && m_queued.size() >= kWakeBlocks;
    lock.unlock();
    if (wake)
        m_changed.notify_all();
    block.clear();
    return Ok {};
}

Expected<BlockEncoder::Totals> BlockEncoder::finish() {
    {
        std::unique_lock lock(m_mutex);
        m_finishing = true;
        m_changed.notify_all();
        m_changed.wait(lock, [this] { return m_done; });
    }
    m_thread = {}; // joins: the totals are the thread's no more
    if (m_error)
        return *m_error;
    return m_totals;
}

void BlockEncoder::run(std::stop_token stop) {
    std::vector<std::vector<Request>> taken; // the blocks queued when the thread last looked, in order
    for (;;) {
        {
            std::unique_lock lock(m_mutex);
            // Woken for a few blocks at a time, and takes them all.
            const auto ready = [this] { return m_queued.size() >= kWakeBlocks || m_finishing; };
            if (!ready()) {
                m_encoderWaiting = true;
                const bool woken = m_changed.wait(lock, stop, ready);
                m_encoderWaiting = false;
                if (!woken)
                    return; // abandoned
            }
            if (m_queued.empty()) { // finishing, and everything before it written
                lock.unlock();
                Status flushed = flush();
                lock.lock();
                if (!flushed && !m_error)
                    m_error = flushed.error();
                m_done = true;
                m_changed.notify_all();
                return;
            }
            taken.swap(m_queued);
        }
        for (std::vector<Request>& block : taken) {
            Status encoded = m_error ? Status { Ok {} } : encode(block);
            block.clear();
            bool wake = false;
            {
                std::lock_guard lock(m_mutex);
                if (!encoded && !m_error)
                    m_error = encoded.error();
                m_free.push_back(std::move(block));
                wake = m_writerWaiting;
            }
            if (wake)
                m_changed.notify_all();
        }
        taken.clear();
    }
}

Status BlockEncoder::encode(const std::vector<Request>& block) {
    if (block.empty())
        return Ok {};
    const std::uint32_t maxKeyId = trace_block::encode(block, m_lastTimeMs, m_buffer);
    m_totals.keyIdLimit = std::max<std::uint64_t>(m_totals.keyIdLimit, std::uint64_t { maxKeyId } + 1);
    return m_buffer.size() >= kWriteBytes ? flush() : Status { Ok {} };
}

Status BlockEncoder::flush() {
    if (!m_buffer.empty() && std::fwrite(m_buffer.data(), 1, m_buffer.size(), m_file) != m_buffer.size())
        return ioError(fmt::format("write failed: {}", std::strerror(errno)), m_path);
    m_totals.recordBytes += m_buffer.size();
    m_buffer.clear();
    return Ok {};
}

} // namespace layoutlab
