// SPDX-License-Identifier: MIT
#include "layoutlab/trace/decode_ahead_reader.h"

namespace layoutlab {

namespace {
constexpr std::size_t kBatchRequests = 8192; // 256 KiB of requests: fits the host's L2 with its neighbour
constexpr std::size_t kBatches = 3; // one being handed out, one ready, one being decoded
} // namespace

DecodeAheadReader::DecodeAheadReader(std::unique_ptr<TraceReader> inner)
    : m_inner(std::move(inner))
    , m_totalRequests(m_inner->totalRequests())
    , m_keyIdLimit(m_inner->keyIdLimit())
    , m_name(m_inner->name())
    , m_batches(kBatches, [this](Batch& batch) { return decode(batch); }) { }

bool DecodeAheadReader::decode(Batch& batch) {
    batch.requests.resize(kBatchRequests);
    batch.error.reset();
    batch.last = false;
    // Fill the batch; the wrapped reader may hand out fewer requests per call than asked.
    std::size_t count = 0;
    while (count < kBatchRequests) {
        auto n = m_inner->read(std::span<Request>(batch.requests).subspan(count));
        if (!n)
            batch.error = n.error();
        if (!n || *n == 0) {
            batch.last = true;
            break;
        }
        count += *n;
    }
    batch.requests.resize(count);
    return !batch.last;
}

Expected<std::size_t> DecodeAheadReader::read(std::span<Request> out) {
    return m_batches.read(out);
}

} // namespace layoutlab
