// SPDX-License-Identifier: MIT
#pragma once

// A trace's blocks encoded and written on a thread of their own (TraceFileWriter), while the caller makes
// the next requests: encoding a block and copying it to the kernel were a fifth of an RDB import's time on
// the thread that parses. The writer hands whole blocks over and gets an empty one back; a few are in
// flight at once, so neither side waits for the other but when one is the slower.

#include "layoutlab/default_init_allocator.h"
#include "layoutlab/expected.h"
#include "layoutlab/trace/request.h"

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace layoutlab {

class BlockEncoder {
public:
    // Writes to `file` (an OutputFile's stream, named `path` in errors); the header is written already.
    BlockEncoder(std::FILE* file, std::string path);
    // Stops the thread, whatever is queued left unwritten (an abandoned output).
    ~BlockEncoder();
    BlockEncoder(const BlockEncoder&) = delete;
    BlockEncoder& operator=(const BlockEncoder&) = delete;

    // Queues `block` (its requests, in trace order) and gives an empty one in its place, waiting while
    // the queue is full. The first error the thread met, if any: nothing after it is written.
    Status hand(std::vector<Request>& block);

    struct Totals {
        std::uint64_t recordBytes = 0; // the blocks' bytes, as the trailer counts them
        std::uint64_t keyIdLimit = 0; // one past the largest key id written
    };
    // Encodes and writes everything queued, then stops the thread; the file is flushed to the stream.
    Expected<Totals> finish();

private:
    void run(std::stop_token stop);
    Status encode(const std::vector<Request>& block); // on the thread
    Status flush(); // on the thread: m_buffer to the stream

    std::FILE* m_file;
    std::string m_path;
    // The thread's own: the encoding state and the bytes not yet written.
    ByteBuffer m_buffer;
    std::uint64_t m_lastTimeMs = 0;
    Totals m_totals;
    // Shared, under m_mutex.
    std::mutex m_mutex;
    std::condition_variable_any m_changed;
    std::vector<std::vector<Request>> m_queued; // in order; the thread takes them all at once
    std::vector<std::vector<Request>> m_free;
    bool m_finishing = false;
    // Who waits on m_changed, so that a side is woken only when it waits.
    bool m_writerWaiting = false;
    bool m_encoderWaiting = false;
    bool m_done = false; // the thread has written everything queued before finish(), or stopped at an error
    std::optional<Error> m_error;
    std::jthread m_thread; // last: started once everything above exists
};

} // namespace layoutlab
