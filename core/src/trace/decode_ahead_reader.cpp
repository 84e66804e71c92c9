// SPDX-License-Identifier: MIT
#include "layoutlab/trace/decode_ahead_reader.h"

#include <algorithm>

namespace layoutlab {

namespace {
constexpr std::size_t kBatchRequests = 8192; // 256 KiB of requests: fits the host's L2 with its neighbour
constexpr std::size_t kBatches = 3; // one being handed out, one ready, one being decoded
} // namespace

DecodeAheadReader::DecodeAheadReader(std::unique_ptr<TraceReader> inner)
    : m_inner(std::move(inner))
    , m_totalRequests(m_inner->totalRequests())
    , m_keyIdLimit(m_inner->keyIdLimit())
    , m_name(m_inner->name()) {
    for (std::size_t i = 0; i < kBatches; ++i) {
        auto batch = std::make_unique<Batch>();
        batch->requests.resize(kBatchRequests);
        m_free.push_back(std::move(batch));
    }
    m_thread = std::jthread([this](std::stop_token stop) { decode(stop); });
}

DecodeAheadReader::~DecodeAheadReader() {
    m_thread.request_stop();
    m_changed.notify_all();
    // jthread joins here, before the batches go.
    m_thread = {};
}

void DecodeAheadReader::decode(std::stop_token stop) {
    for (;;) {
        std::unique_ptr<Batch> batch;
        {
            std::unique_lock lock(m_mutex);
            if (!m_changed.wait(lock, stop, [this] { return !m_free.empty(); }))
                return; // stop requested
            batch = std::move(m_free.back());
            m_free.pop_back();
        }
        batch->count = 0;
        batch->error.reset();
        batch->last = false;
        // Fill the batch; the wrapped reader may hand out fewer requests per call than asked.
        while (batch->count < batch->requests.size()) {
            auto n = m_inner->read(std::span<Request>(batch->requests).subspan(batch->count));
            if (!n) {
                batch->error = n.error();
                batch->last = true;
                break;
            }
            if (*n == 0) {
                batch->last = true;
                break;
            }
            batch->count += *n;
        }
        const bool last = batch->last;
        {
            std::lock_guard lock(m_mutex);
            m_ready.push_back(std::move(batch));
        }
        m_changed.notify_all();
        if (last)
            return;
    }
}

Expected<std::size_t> DecodeAheadReader::read(std::span<Request> out) {
    std::size_t n = 0;
    while (n < out.size()) {
        if (m_current && m_offset < m_current->count) {
            const std::size_t take = std::min(out.size() - n, m_current->count - m_offset);
            std::copy_n(m_current->requests.begin() + static_cast<std::ptrdiff_t>(m_offset), take, out.begin() + n);
            m_offset += take;
            n += take;
            continue;
        }
        if (m_current) {
            // Everything of this batch was handed out: its error (if any) comes next, then the end.
            if (m_current->error) {
                if (n > 0)
                    return n;
                Error error = *m_current->error;
                m_current->error.reset();
                m_finished = true;
                return error;
            }
            if (m_current->last)
                m_finished = true;
            std::lock_guard lock(m_mutex);
            m_free.push_back(std::move(m_current));
        }
        m_changed.notify_all();
        if (m_finished)
            break;
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return m_readyFront < m_ready.size(); });
        m_current = std::move(m_ready[m_readyFront++]);
        if (m_readyFront == m_ready.size()) {
            m_ready.clear();
            m_readyFront = 0;
        }
        m_offset = 0;
    }
    return n;
}

} // namespace layoutlab
