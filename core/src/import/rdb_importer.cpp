// SPDX-License-Identifier: MIT
// RDB files (rdb_parser.h) read directly as a snapshot: every string key becomes one SET at time 0, as
// the server that loads the file would hold it (rdb.c rdbLoadObject: tryObjectEncodingEx, so an integer
// of at most 20 digits is an integer, whether the file encodes it so or as text). A key with an expire
// keeps a TTL for the whole replay (a snapshot has no clock); one that had expired when the file was
// saved (its AUX ctime) is left out, as a primary loading the file then would drop it
// (rdbLoadRioWithLoadingCtx). Keys of other types are counted as not modelled, by type and encoding.

#include "import_formats.h"
#include "rdb_parser.h"

#include <array>
#include <fmt/format.h>
#include <utility>

namespace layoutlab {

namespace {

class RdbImporter final : public Importer {
public:
    RdbImporter(std::unique_ptr<InputStream> input, const ImportOptions& options)
        : m_input(std::move(input))
        , m_parser(*m_input, m_input->path(), readsOnTwoThreads(options)) {
        m_options = options;
        m_path = m_input->path();
    }

    std::string formatName() const override { return "rdb"; }
    std::uint64_t totalRequests() const override { return 0; }
    std::uint64_t keyIdLimit() const override { return 0; }
    std::string name() const override { return m_path; }
    const RejectReport& rejects() const override {
        // The keys of each type not modelled, counted in an array (a map's string compare for every one of a
        // million hashes was a hundredth of the import) and named when asked for.
        m_report = m_rejects;
        for (std::size_t type = 0; type < m_notModelled.size(); ++type)
            if (m_notModelled[type] != 0)
                m_report.notModelled[rdbTypeName(static_cast<std::uint8_t>(type))] += m_notModelled[type];
        return m_report;
    }
    double progress() const override {
        return m_parser.fileBytes() ? static_cast<double>(m_parser.bytesRead()) / m_parser.fileBytes() : 1.0;
    }

    Expected<std::size_t> read(std::span<Request> out) override {
        std::size_t n = 0;
        while (n < out.size()) {
            if (m_next == m_batch.size()) {
                if (m_error) // after the keys read before it
                    return *std::exchange(m_error, std::nullopt);
                if (m_ended || !fillBatch())
                    break;
                continue;
            }
            const RdbEntry& e = m_batch[m_next++];
            const std::uint64_t keysBefore = m_keys.size();
            Request& r = out[n];
            r = Request {};
            r.op = Op::Set;
            r.keyId = m_keys.idForHash(e.keyHash);
            if (m_keys.size() == keysBefore) {
                // The server refuses such a file ("Duplicated key found in RDB file"); here it can also be
                // two keys of one 64-bit hash (KeyInterner).
                if (auto error
                    = reject("duplicate key", e.offset, false, fmt::format("a key of database {} appears twice", e.db)))
                    return *error;
                continue;
            }
            r.keyBytes = static_cast<std::uint32_t>(e.keyBytes);
            r.valueBytes = static_cast<std::uint32_t>(e.valueBytes);
            r.kind = e.kind;
            r.ttlSeconds = e.expireMs >= 0 ? kSnapshotTtlSeconds : 0;
            ++n;
        }
        return n;
    }

private:
    // Reads the next string keys into m_batch, each one's slot in the key table fetched ahead: the table is
    // far larger than the host's caches, and a batch lets the misses overlap (a third of the import's time
    // when each key waited for its own). An error stops the batch, to be returned after its keys.
    bool fillBatch() {
        m_batch.clear();
        m_next = 0;
        while (m_batch.size() < kBatchKeys) {
            // A damaged RDB cannot be read on past the damage (the lengths after it mean nothing): every
            // error of the parser ends the import, whatever --on-error says.
            auto next = m_parser.next();
            if (!next) {
                m_error = next.error();
                break;
            }
            if (!*next) {
                m_ended = true;
                break;
            }
            const RdbEntry& e = **next;
            if (e.type != rdb_type::kString) {
                // Its memory is missing from every figure: said so, by type and encoding.
                ++m_notModelled[e.type];
                continue;
            }
            if (e.expireMs >= 0) {
                if (const auto saved = m_parser.savedAtSeconds(); saved && e.expireMs < *saved * 1000) {
                    noteSkipped("expired when the file was saved");
                    continue;
                }
            }
            if (e.keyBytes > UINT32_MAX || e.valueBytes > UINT32_MAX) {
                if (auto error = reject("size over 4 GiB", e.offset, false,
                        fmt::format("a key of {} bytes with a value of {}: over 4 GiB", e.keyBytes, e.valueBytes))) {
                    m_error = *error;
                    break;
                }
                continue;
            }
            if (m_keys.size() == 0 && m_batch.empty()) {
                // The file's RESIZEDB, within what the file can hold (a key takes at least 3 bytes of it): a
                // damaged hint must not reserve memory for keys that are not there. A stream's size is not
                // known: no hint taken.
                const std::uint64_t hint = std::min(m_parser.keysHint(), m_parser.fileBytes() / 3);
                m_keys.reserve(hint);
            }
            m_keys.prefetch(e.keyHash);
            m_batch.push_back(e);
        }
        return !m_batch.empty() || m_error;
    }

    static constexpr std::size_t kBatchKeys = 64;
    std::array<std::uint64_t, 256> m_notModelled {};
    mutable RejectReport m_report; // m_rejects with m_notModelled named
    std::vector<RdbEntry> m_batch;
    std::size_t m_next = 0;
    std::optional<Error> m_error;
    bool m_ended = false;
    std::unique_ptr<InputStream> m_input;
    RdbParser m_parser;
    KeyInterner m_keys;
};

} // namespace

bool detectRdb(std::string_view head) {
    // rdb.c rdbLoadRioWithLoadingCtx: "REDIS0" or "VALKEY", then the version's three digits.
    if (head.size() < 9 || !(head.starts_with("REDIS0") || head.starts_with("VALKEY")))
        return false;
    for (std::size_t i = 6; i < 9; ++i)
        if (head[i] < '0' || head[i] > '9')
            return false;
    return true;
}

std::unique_ptr<Importer> makeRdbImporter(std::unique_ptr<InputStream> input, const ImportOptions& options) {
    return std::make_unique<RdbImporter>(std::move(input), options);
}

} // namespace layoutlab
