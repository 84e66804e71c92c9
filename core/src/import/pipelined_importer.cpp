// SPDX-License-Identifier: MIT
#include "pipelined_importer.h"

namespace layoutlab {

namespace {
constexpr std::size_t kBatches = 4; // parsed ahead while the caller resolves and works
} // namespace

PipelinedImporter::PipelinedImporter(std::unique_ptr<LineImporter> inner)
    : m_inner(std::move(inner))
    , m_name(m_inner->name())
    , m_formatName(m_inner->formatName())
    , m_batches(
          kBatches,
          [this](LineImporter::ParsedBatch& batch) {
              // Whoever has time to spare hashes the keys: the parser while the caller's thread is behind
              // (batches wait for it), the caller's thread while it keeps up and waits for the parser.
              m_inner->setHashLater(m_batches.readyCount() < kBatches / 2);
              const bool more = m_inner->parseBatch(batch);
              return more;
          },
          [this](LineImporter::ParsedBatch& batch) {
              m_inner->resolveBatch(batch);
              m_progress.store(batch.progress, std::memory_order_relaxed);
          }) { }

} // namespace layoutlab
