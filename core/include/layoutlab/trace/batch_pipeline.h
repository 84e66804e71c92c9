// SPDX-License-Identifier: MIT
#pragma once

// Two threads, one stream: a producer thread fills batches (decoding, parsing) while the consumer works
// on the batch before. A few batches circulate: the producer waits for a free one, the consumer for a
// filled one, in order. Destroying the pipeline stops and joins the producer.

#include "layoutlab/expected.h"
#include "layoutlab/trace/request.h"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

namespace layoutlab {

template <class Batch> class BatchPipeline {
public:
    // `produce` fills a batch on the producer thread and returns false when that batch was the last.
    BatchPipeline(std::size_t batches, std::function<bool(Batch&)> produce)
        : m_produce(std::move(produce)) {
        for (std::size_t i = 0; i < batches; ++i)
            m_free.push_back(std::make_unique<Batch>());
        m_thread = std::jthread([this](std::stop_token stop) { run(stop); });
    }
    ~BatchPipeline() {
        m_thread.request_stop();
        m_changed.notify_all();
        m_thread = {}; // joins
    }
    BatchPipeline(const BatchPipeline&) = delete;
    BatchPipeline& operator=(const BatchPipeline&) = delete;

    // The next filled batch, in production order; nullptr once the last one was taken.
    std::unique_ptr<Batch> next() {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return m_readyFront < m_ready.size() || m_producerDone; });
        if (m_readyFront == m_ready.size())
            return nullptr;
        auto batch = std::move(m_ready[m_readyFront++]);
        if (m_readyFront == m_ready.size()) {
            m_ready.clear();
            m_readyFront = 0;
        }
        return batch;
    }
    // Filled batches waiting for the consumer.
    std::size_t readyCount() {
        std::lock_guard lock(m_mutex);
        return m_ready.size() - m_readyFront;
    }
    // Gives a consumed batch back to the producer.
    void recycle(std::unique_ptr<Batch> batch) {
        {
            std::lock_guard lock(m_mutex);
            m_free.push_back(std::move(batch));
        }
        m_changed.notify_all();
    }

private:
    void run(std::stop_token stop) {
        for (;;) {
            std::unique_ptr<Batch> batch;
            {
                std::unique_lock lock(m_mutex);
                if (!m_changed.wait(lock, stop, [this] { return !m_free.empty(); }))
                    return; // stop requested
                batch = std::move(m_free.back());
                m_free.pop_back();
            }
            const bool more = m_produce(*batch);
            {
                std::lock_guard lock(m_mutex);
                m_ready.push_back(std::move(batch));
                m_producerDone = !more;
            }
            m_changed.notify_all();
            if (!more)
                return;
        }
    }

    std::function<bool(Batch&)> m_produce;
    std::mutex m_mutex;
    std::condition_variable_any m_changed;
    std::vector<std::unique_ptr<Batch>> m_free;
    std::vector<std::unique_ptr<Batch>> m_ready;
    std::size_t m_readyFront = 0;
    bool m_producerDone = false;
    std::jthread m_thread; // last: started once everything above exists
};

// Hands out the requests of consecutive batches as a TraceReader does: in order, a batch's error after
// its requests, then the end. Batch has `std::vector<Request> requests`, `std::optional<Error> error` and
// `bool last`. `next(previous)` gives the batch after `previous` (nullptr the first time; returning
// nullptr means there is none).
template <class Batch> class BatchCursor {
public:
    template <class Next> Expected<std::size_t> read(std::span<Request> out, Next&& next) {
        std::size_t n = 0;
        while (n < out.size()) {
            const State state = seek(next);
            if (state == State::End)
                break;
            if (state == State::Failed) {
                if (n > 0)
                    return n; // the error comes on the next call
                m_finished = true;
                return *m_current->error;
            }
            const std::size_t take = std::min(out.size() - n, m_current->requests.size() - m_offset);
            std::copy_n(m_current->requests.begin() + static_cast<std::ptrdiff_t>(m_offset), take, out.begin() + n);
            m_offset += take;
            n += take;
        }
        return n;
    }
    // As read(), but hands out up to `max` requests of the current batch in place.
    template <class Next> Expected<std::span<const Request>> borrow(std::size_t max, Next&& next) {
        const State state = seek(next);
        if (state == State::End)
            return std::span<const Request>();
        if (state == State::Failed) {
            m_finished = true;
            return *m_current->error;
        }
        const std::size_t take = std::min(max, m_current->requests.size() - m_offset);
        const std::span<const Request> out(m_current->requests.data() + m_offset, take);
        m_offset += take;
        return out;
    }

private:
    enum class State { Ready, Failed, End };
    // Moves on to a batch with requests left (Ready), or to what ends the stream: the current batch's
    // error (Failed) or the end (End).
    template <class Next> State seek(Next& next) {
        while (!m_finished) {
            if (m_current && m_offset < m_current->requests.size())
                return State::Ready;
            if (m_current && m_current->error)
                return State::Failed;
            if (m_current && m_current->last) {
                m_finished = true;
                break;
            }
            m_current = next(m_current);
            m_offset = 0;
            m_finished = m_current == nullptr;
        }
        return State::End;
    }

    Batch* m_current = nullptr; // the batch being handed out
    std::size_t m_offset = 0;
    bool m_finished = false;
};

// A BatchCursor over a BatchPipeline: `prepare` runs on the consumer thread for each batch as it is taken.
template <class Batch> class BatchReader {
public:
    BatchReader(std::size_t batches, std::function<bool(Batch&)> produce, std::function<void(Batch&)> prepare = {})
        : m_prepare(std::move(prepare))
        , m_pipeline(batches, std::move(produce)) { }

    Expected<std::size_t> read(std::span<Request> out) {
        return m_cursor.read(out, [this](Batch* previous) { return nextBatch(previous); });
    }
    Expected<std::span<const Request>> borrow(std::size_t max) {
        return m_cursor.borrow(max, [this](Batch* previous) { return nextBatch(previous); });
    }
    std::size_t readyCount() { return m_pipeline.readyCount(); }

private:
    Batch* nextBatch(Batch* previous) {
        if (previous)
            m_pipeline.recycle(std::move(m_taken));
        m_taken = m_pipeline.next();
        if (m_taken && m_prepare)
            m_prepare(*m_taken);
        return m_taken.get();
    }

    std::function<void(Batch&)> m_prepare;
    std::unique_ptr<Batch> m_taken; // owns the cursor's batch
    BatchCursor<Batch> m_cursor;
    BatchPipeline<Batch> m_pipeline; // last: destroyed (its thread joined) first
};

} // namespace layoutlab
