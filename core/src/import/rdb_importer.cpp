// SPDX-License-Identifier: MIT
// RDB files (rdb_parser.h) read directly as a snapshot: each database's tables sized as its RESIZEDB says
// (Op::Resize, before its keys: rdb.c dbExpand; a key of a database other than 0 placed there first), then every string
// key becomes one SET at time 0, as the server that loads the file would hold it (rdb.c rdbLoadObject:
// tryObjectEncodingEx, so an integer of at most 20 digits is an integer, whether the file encodes it so or as text). A
// hash, set, sorted set or list becomes an element Load (its count, and whether the file holds it compact; a list's
// before each quicklist node) followed by an Add for each element, which the collection models take as the server's
// loader does (CollectionKeyModel::load). A key with an expire keeps a TTL for the whole replay (a snapshot
// has no clock; a collection's is set after its elements); one that had expired when the file was saved (its
// AUX ctime) is left out, as a primary loading the file then would drop it (rdbLoadRioWithLoadingCtx). Keys
// of other types (streams, modules, the encodings of Redis before 7.0, Valkey 9's hashes with field
// expiries) are counted as not modelled, by type and encoding.

#include "import_formats.h"
#include "rdb_parser.h"
#include "seen_key_hashes.h"

#include <array>
#include <fmt/format.h>
#include <utility>

namespace layoutlab {

namespace {

class RdbImporter final : public Importer {
public:
    RdbImporter(std::unique_ptr<InputStream> input, const ImportOptions& options)
        : m_input(std::move(input))
        , m_parser(*m_input, m_input->path()) {
        m_options = options;
        m_path = m_input->path();
        m_loadedAt = options.snapshotLoadedAt;
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
            if (m_queued < m_queue.size()) {
                out[n++] = m_queue[m_queued++];
                continue;
            }
            if (m_collection) {
                n += heldElementsInto(out.subspan(n));
                if (n == out.size())
                    break;
                if (auto error = queueElements()) {
                    if (n == 0)
                        return *error;
                    m_error = *error; // after the requests before it
                    break;
                }
                continue;
            }
            if (m_next == m_batch.size()) {
                if (m_error) // after the keys read before it
                    return *std::exchange(m_error, std::nullopt);
                if (m_ended || !fillBatch())
                    break;
                continue;
            }
            const RdbEntry& upcoming = m_batch[m_next];
            // A key of another database than 0 is placed in its tables first (the id the next key takes).
            if (upcoming.db != 0 && m_placed != std::pair { m_nextKeyId, upcoming.db }) {
                m_placed = { m_nextKeyId, upcoming.db };
                Request& r = out[n++];
                r = Request {};
                r.op = Op::Resize;
                r.keyId = m_nextKeyId;
                r.keyBytes = static_cast<std::uint32_t>(upcoming.keyBytes);
                r.valueBytes = kKeyDatabase;
                r.ttlSeconds = upcoming.db;
                continue;
            }
            if (m_tablesDb != upcoming.db) { // a database's first key: its tables as its RESIZEDB sizes them
                m_tablesDb = upcoming.db;
                const auto [keys, expires] = hintsOf(upcoming.db);
                if (keys > 0) {
                    Request& r = out[n++];
                    r = Request {};
                    r.op = Op::Resize;
                    r.keyId = m_nextKeyId; // the first key's (request.h)
                    r.keyBytes = static_cast<std::uint32_t>(upcoming.keyBytes);
                    r.valueBytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(keys, kMaxResizeKeys));
                    r.ttlSeconds = static_cast<std::uint32_t>(std::min(expires, keys));
                    continue;
                }
            }
            const RdbEntry& e = m_batch[m_next++];
            if (!m_seen.insert(e.keyHash)) {
                // The server refuses such a file ("Duplicated key found in RDB file"); here it can also be
                // two keys of one 64-bit hash (KeyInterner::hashKey).
                if (auto error
                    = reject("duplicate key", e.offset, false, fmt::format("a key of database {} appears twice", e.db)))
                    return *error;
                continue;
            }
            const std::uint32_t keyId = m_nextKeyId++; // each key once: ids in file order
            if (e.collection) {
                startCollection(e, keyId);
                continue;
            }
            Request& r = out[n];
            r = Request {};
            r.op = Op::Set;
            r.keyId = keyId;
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
            if (e.type != rdb_type::kString && !e.collection) {
                // Its memory is missing from every figure: said so, by type and encoding.
                ++m_notModelled[e.type];
                continue;
            }
            if (e.expireMs >= 0) {
                const auto loadedAt = m_loadedAt ? m_loadedAt : m_parser.savedAtSeconds();
                if (loadedAt && e.expireMs < *loadedAt * 1000) {
                    noteSkipped(m_loadedAt ? "expired when the file is loaded" : "expired when the file was saved");
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
            if (m_seen.size() == 0 && m_batch.empty())
                m_seen.reserve(keysHinted());
            if (e.collection && e.collectionKind != CollectionKind::List && e.elements == 0) {
                noteSkipped("empty collection"); // rdbLoadObject's emptykey: the server skips it
                continue;
            }
            if (e.elements > UINT32_MAX) {
                if (auto error = reject("size over 4 GiB", e.offset, false,
                        fmt::format("a collection of {} elements: over 4G", e.elements))) {
                    m_error = *error;
                    break;
                }
                continue;
            }
            m_seen.prefetch(e.keyHash);
            m_batch.push_back(e);
            if (e.collection) // its elements come from the parser next, before the next key
                break;
        }
        return !m_batch.empty() || m_error;
    }

    // The file's RESIZEDB, within what the file can hold (a key takes at least 3 bytes of it): a damaged hint
    // must not reserve memory for keys that are not there. A stream's size is not known: no hint taken.
    std::uint64_t keysHinted() const { return std::min(m_parser.keysHint(), m_parser.fileBytes() / 3); }
    // Database `db`'s RESIZEDB (keys, with an expire), its keys no more than the file could hold.
    std::pair<std::uint64_t, std::uint64_t> hintsOf(std::uint32_t db) const {
        const auto [keys, expires] = m_parser.hintsOf(db);
        return { std::min(keys, m_parser.fileBytes() / 3), expires };
    }

    // A collection key: its Load (a list's come with its nodes), its elements to follow.
    void startCollection(const RdbEntry& e, std::uint32_t keyId) {
        m_collection = true;
        m_collectionKey = e;
        m_collectionKeyId = keyId;
        m_queue.clear();
        m_queued = 0;
        if (e.collectionKind != CollectionKind::List)
            m_queue.push_back(loadRequest(e.elements, 0));
    }

    Request elementRequest(ElementOp op) const {
        Request r;
        r.op = Op::Element;
        r.keyId = m_collectionKeyId;
        r.keyBytes = static_cast<std::uint32_t>(m_collectionKey.keyBytes);
        op.collection = m_collectionKey.collectionKind;
        r.element = op.packed();
        return r;
    }

    Request loadRequest(std::uint64_t elements, std::uint64_t nodesAfter) const {
        ElementOp op;
        op.action = ElementAction::Load;
        op.element = m_collectionKey.intsetWidth;
        op.atHead = m_collectionKey.compact;
        Request r = elementRequest(op);
        r.valueBytes = static_cast<std::uint32_t>(elements);
        r.ttlSeconds = static_cast<std::uint32_t>(std::min<std::uint64_t>(nodesAfter, UINT32_MAX));
        return r;
    }

    Request addRequest(const RdbItem& element, const RdbItem& value) const {
        ElementOp op;
        op.action = ElementAction::Add;
        op.element = element.integer;
        op.value = value.integer;
        Request r = elementRequest(op);
        r.elementBytes = static_cast<std::uint32_t>(element.bytes);
        r.valueBytes = static_cast<std::uint32_t>(value.bytes);
        return r;
    }

    // The elements the parser holds decoded (RdbParser::heldItems), each an Add straight into `out`: a blob's
    // are within 1 GiB (rdb_collections.cpp kMaxBlobBytes), so within a request's 32-bit sizes.
    std::size_t heldElementsInto(std::span<Request> out) {
        const std::span<const RdbItem> items = m_parser.heldItems();
        const bool pairs = m_collectionKey.collectionKind == CollectionKind::Hash
            || m_collectionKey.collectionKind == CollectionKind::SortedSet;
        const std::size_t step = pairs ? 2 : 1;
        const std::size_t count = std::min(items.size() / step, out.size());
        for (std::size_t i = 0; i < count; ++i)
            out[i] = addRequest(items[i * step], pairs ? items[i * step + 1] : RdbItem {});
        m_parser.passHeldItems(count * step);
        return count;
    }

    // The collection's next elements read from the file (a table's, one string at a time, or a list node's
    // first) into m_queue until the parser holds the next ones decoded, and after its last its TTL; an error
    // ends the import.
    std::optional<Error> queueElements() {
        m_queue.clear();
        m_queued = 0;
        while (m_queue.size() < kQueuedElements && m_parser.heldItems().empty()) {
            auto element = m_parser.nextElement();
            if (!element)
                return element.error();
            if (!*element) {
                m_collection = false;
                if (m_collectionKey.expireMs >= 0) {
                    Request r;
                    r.op = Op::Expire;
                    r.keyId = m_collectionKeyId;
                    r.keyBytes = static_cast<std::uint32_t>(m_collectionKey.keyBytes);
                    r.ttlSeconds = kSnapshotTtlSeconds;
                    m_queue.push_back(r);
                }
                return std::nullopt;
            }
            const RdbElement& el = **element;
            if (el.element.bytes > UINT32_MAX || el.value.bytes > UINT32_MAX || el.nodeElements > UINT32_MAX)
                return dataError(fmt::format("a collection element of {} bytes, or a node of {} elements: over 4G "
                                             "(rdb input)",
                                     std::max(el.element.bytes, el.value.bytes), el.nodeElements),
                    m_path, m_parser.offset(), true);
            if (el.nodeElements > 0)
                m_queue.push_back(loadRequest(el.nodeElements, el.nodesAfter));
            m_queue.push_back(addRequest(el.element, el.value));
        }
        return std::nullopt;
    }

    static constexpr std::size_t kBatchKeys = 64;
    static constexpr std::size_t kQueuedElements = 256;
    std::array<std::uint64_t, 256> m_notModelled {};
    mutable RejectReport m_report; // m_rejects with m_notModelled named
    std::vector<RdbEntry> m_batch;
    std::size_t m_next = 0;
    std::optional<Error> m_error;
    bool m_ended = false;
    // The database whose tables the last Resize sized (none yet), and the key id last placed in a database
    // other than 0 with that database.
    std::optional<std::uint32_t> m_tablesDb;
    std::optional<std::pair<std::uint32_t, std::uint32_t>> m_placed;
    // The collection being read, and the requests made of it not yet handed out.
    bool m_collection = false;
    RdbEntry m_collectionKey;
    std::uint32_t m_collectionKeyId = 0;
    std::vector<Request> m_queue;
    std::size_t m_queued = 0;
    std::unique_ptr<InputStream> m_input;
    RdbParser m_parser;
    std::optional<std::int64_t> m_loadedAt; // ImportOptions::snapshotLoadedAt
    SeenKeyHashes m_seen;
    std::uint32_t m_nextKeyId = 0;
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
