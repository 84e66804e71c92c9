// SPDX-License-Identifier: MIT
#include "layoutlab/import/importer.h"

#include "layoutlab/printable.h"

#include <sched.h>

#include "import_formats.h"
#include "layoutlab/import/input_stream.h"
#include "layoutlab/trace/decode_ahead_reader.h"
#include "layoutlab/trace/trace_file.h"
#include "pipelined_importer.h"

#include <bit>
#include <cstring>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// The CPUs this process may run on (its affinity mask: `taskset`, cgroups' cpusets). With one, a second
// thread only takes turns with the first, and handing batches between them costs a context switch each:
// the work is then done on the caller's thread.
unsigned usableCpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 2; // unknown: assume a second thread helps
    return static_cast<unsigned>(CPU_COUNT(&set));
}
} // namespace

bool readsOnTwoThreads(const ImportOptions& options) {
    return options.decodeAhead && usableCpus() >= 2;
}

KeyInterner::KeyInterner(std::size_t reservedSlots)
    : m_reserved(reservedSlots * sizeof(Slot)) {
    resize(slotCount());
}

std::uint32_t KeyInterner::idFor(std::string_view key) {
    return idForHash(hashKey(key));
}

std::uint32_t KeyInterner::idForHash(std::uint64_t hash) {
    for (std::size_t i = homeOf(hash);; ++i) {
        const Slot& s = m_slots[i];
        if (!s.used) {
            if ((m_size + 1) * 4 > m_homes * 3) [[unlikely]] {
                grow(); // three quarters full: grow, then insert
                return idForHash(hash);
            }
            take(i, { hash, static_cast<std::uint32_t>(m_size), true });
            return static_cast<std::uint32_t>(m_size++);
        }
        if (s.hash == hash)
            return s.id;
    }
}

void KeyInterner::place(const Slot& slot) {
    std::size_t i = homeOf(slot.hash);
    while (m_slots[i].used)
        ++i;
    take(i, slot);
}

void KeyInterner::take(std::size_t i, const Slot& slot) {
    if (i + 1 == slotCount()) [[unlikely]]
        addOverflow(); // the last slot stays empty: it ends every probe
    m_slots[i] = slot;
}

void KeyInterner::resize(std::size_t slots) {
    if (m_reserved.reserved()) {
        if (m_reserved.grow(slots * sizeof(Slot))) {
            m_slots = static_cast<Slot*>(m_reserved.data());
            return;
        }
        // Past the reservation, or the memory was refused: the slots move to the heap.
        m_heap.assign(m_slots, m_slots + std::min(slots, m_reserved.usable() / sizeof(Slot)));
        m_reserved.release();
    }
    m_heap.resize(slots);
    m_slots = m_heap.data();
}

void KeyInterner::reserve(std::uint64_t keys) {
    if (m_size != 0)
        return;
    // Three quarters full at most, as idForHash keeps it; within the slots key ids can number.
    const std::uint64_t homes = std::bit_ceil(std::max<std::uint64_t>(keys / 3 * 4 + 4, kInitialHomes));
    if (homes <= m_homes || homes + m_overflow > kMaxReservedSlots)
        return;
    resize(homes + m_overflow);
    m_homes = homes;
}

void KeyInterner::grow() {
    const std::size_t oldHomes = m_homes;
    // The new slots read as empty. In reserved memory the old ones stay where they are; on the heap they
    // are copied once, as a vector's growth does, and the rehash below is the same.
    resize(2 * oldHomes + m_overflow);
    m_homes = 2 * oldHomes;
    // A key's new home is its old home h or h + oldHomes. Taking the old slots in order, each key is
    // lifted out and placed again from its new home:
    // - at h, it lands at or before its old slot, past only keys already placed again (every slot
    //   before it has been taken already);
    // - at h + oldHomes, it lands among keys already placed again only, once the old overflow slots
    //   (keys of homes near the old end, in what is now the upper half) have been emptied first.
    // So no key's probe ever passes a slot that is emptied later, and lookups find every key.
    std::vector<Slot> overflowed;
    for (std::size_t i = oldHomes; i < oldHomes + m_overflow; ++i)
        if (m_slots[i].used) {
            overflowed.push_back(m_slots[i]);
            m_slots[i] = {};
        }
    for (std::size_t i = 0; i < oldHomes; ++i) {
        if (!m_slots[i].used)
            continue;
        const Slot slot = m_slots[i];
        m_slots[i] = {};
        place(slot);
    }
    for (const Slot& slot : overflowed)
        place(slot);
}

std::optional<Error> Importer::reject(
    const std::string& reason, std::uint64_t where, bool isLine, const std::string& detail) {
    ++m_rejects.total;
    ++m_rejects.byReason[reason];
    if (m_rejects.examples.size() < RejectReport::kMaxExamples)
        m_rejects.examples.push_back( // input quoted back to a terminal: its control characters escaped
            printable(fmt::format("{}: {} {}: {}", m_path, isLine ? "line" : "offset", where, detail)));
    if (m_options.onError == OnError::Skip)
        return std::nullopt;
    Error e = isLine ? dataErrorAtLine(detail, m_path, where) : dataError(detail, m_path, where, true);
    e.message += fmt::format(" ({} input)", formatName());
    e.tag = kTagSkippableInput;
    return e;
}

void Importer::noteSkipped(const std::string& rawReason) {
    const std::string reason = printable(rawReason);
    auto it = m_rejects.skipped.find(reason);
    if (it != m_rejects.skipped.end())
        ++it->second;
    else if (m_rejects.skipped.size() < RejectReport::kMaxSkipReasons)
        m_rejects.skipped.emplace(reason, 1);
    else
        ++m_rejects.skipped["other"];
}

void Importer::noteRefused(const std::string& reason, std::uint64_t line, const std::string& detail) {
    ++m_rejects.refusedTotal;
    noteCommand(m_rejects.refused, reason);
    if (m_rejects.refusedExamples.size() < RejectReport::kMaxExamples)
        m_rejects.refusedExamples.push_back(printable(fmt::format("{}: line {}: {}", m_path, line, detail)));
}

void Importer::noteTruncated(std::uint64_t line, const std::string& detail) {
    ++m_rejects.truncatedRecords;
    m_rejects.truncatedExample = printable(fmt::format("{}: line {}: {}", m_path, line, detail));
}

void Importer::noteCommand(std::map<std::string, std::uint64_t>& counts, const std::string& rawName) {
    // Counted once per request: a name seen before is found as it is, without escaping it again.
    if (auto it = counts.find(rawName); it != counts.end()) {
        ++it->second;
        return;
    }
    const std::string name = printable(rawName); // a command name read from the capture
    auto it = counts.find(name);
    if (it != counts.end())
        ++it->second;
    else if (counts.size() < RejectReport::kMaxSkipReasons)
        counts.emplace(name, 1);
    else
        ++counts["other"];
}

std::vector<ImportFormatInfo> importFormats() {
    return {
        { "layoutlab", "layoutlab's own binary trace (read as it is)" },
        { "twitter", "Twitter cache-trace CSV: timestamp,key,key_size,value_size,client,op,ttl (.zst read directly)" },
        { "cachelib", "Meta CacheLib kvcache CSV with a header row (202206 and 202401 column sets)" },
        { "oracle", "libCacheSim oracleGeneral binary, 24-byte records (.zst read directly)" },
        { "monitor", "Redis/Valkey MONITOR output" },
        { "mc-watch", "memcached `watch fetchers mutations` log" },
        { "mc-metadump", "memcached `lru_crawler metadump` snapshot" },
        { "rdb-csv", "redis-rdb-tools or HDT3213/rdb memory CSV (string keys become a snapshot)" },
        { "rdb", "Redis or Valkey RDB file, RDB 1-11 and 80 (string keys become a snapshot)" },
    };
}

namespace {
// Reads the first bytes (decompressed) to recognise a format.
Expected<std::string> sniff(const std::string& path, std::size_t bytes) {
    auto input = InputStream::open(path);
    if (!input)
        return input.error();
    std::string head(bytes, '\0');
    std::size_t have = 0;
    while (have < bytes) {
        auto n = (*input)->read(head.data() + have, bytes - have);
        if (!n)
            return n.error();
        if (*n == 0)
            break;
        have += *n;
    }
    head.resize(have);
    return head;
}
} // namespace

Expected<std::string> detectFormat(const std::string& path) {
    auto head = sniff(path, 64 * 1024);
    if (!head)
        return head.error();
    const std::string& h = *head;
    if (h.rfind(std::string("LLTRACE\0", 8), 0) == 0)
        return std::string("layoutlab");
    if (detectRdb(h)) // before the text formats: a small RDB file can be nearly all printable
        return std::string("rdb");
    const auto firstLineEnd = h.find('\n');
    std::string_view first(h.data(), firstLineEnd == std::string::npos ? h.size() : firstLineEnd);
    if (!first.empty() && first.back() == '\r')
        first.remove_suffix(1);
    std::size_t printable = 0;
    for (const unsigned char c : h)
        printable += (c >= 32 && c < 127) || c == '\n' || c == '\r' || c == '\t';
    const bool text = !h.empty() && printable * 100 >= h.size() * 95;
    if (text) {
        if (detectMetadump(first))
            return std::string("mc-metadump");
        // A `watch` capture begins with the server's reply to the watch command (proto_text.c
        // process_watch_command: "OK"), as does MONITOR's: the format is on the line after it.
        std::string_view second;
        if (first == "OK" && firstLineEnd != std::string::npos) {
            const auto end = h.find('\n', firstLineEnd + 1);
            second = std::string_view(h).substr(
                firstLineEnd + 1, (end == std::string::npos ? h.size() : end) - firstLineEnd - 1);
            if (!second.empty() && second.back() == '\r')
                second.remove_suffix(1);
        }
        if (detectWatch(first) || (!second.empty() && detectWatch(second)))
            return std::string("mc-watch");
        if (detectMonitor(h))
            return std::string("monitor");
        if (detectRdbCsv(first))
            return std::string("rdb-csv");
        if (detectCachelib(first))
            return std::string("cachelib");
        if (detectTwitter(first))
            return std::string("twitter");
    } else if (!h.empty() && detectOracle(h)) {
        return std::string("oracle");
    }
    Error e = dataError("cannot tell the trace format from its content; name it (one of: twitter, cachelib, "
                        "oracle, monitor, mc-watch, mc-metadump, rdb-csv, rdb)",
        path);
    e.field = field::kFormat;
    e.tag = kTagFormatUnknown;
    return e;
}

Expected<std::unique_ptr<Importer>> openImporter(const std::string& path, const ImportOptions& options) {
    std::string format = options.format;
    if (format.empty()) {
        auto detected = detectFormat(path);
        if (!detected)
            return detected.error();
        format = *detected;
        if (format == "layoutlab")
            return usageError("this is already a layoutlab trace; nothing to import", field::kFormat);
    }
    auto input = InputStream::open(path);
    if (!input)
        return input.error();
    std::unique_ptr<Importer> importer;
    if (format == "twitter")
        importer = makeTwitterImporter(std::move(*input), options);
    else if (format == "cachelib")
        importer = makeCachelibImporter(std::move(*input), options);
    else if (format == "oracle")
        return makeOracleImporter(std::move(*input), options);
    else if (format == "monitor")
        importer = makeMonitorImporter(std::move(*input), options);
    else if (format == "mc-watch")
        importer = makeWatchImporter(std::move(*input), options);
    else if (format == "mc-metadump")
        importer = makeMetadumpImporter(std::move(*input), options);
    else if (format == "rdb-csv")
        importer = makeRdbCsvImporter(std::move(*input), options);
    else if (format == "rdb")
        return makeRdbImporter(std::move(*input), options);
    if (importer) {
        // Text formats parse on a second thread while this one resolves keys and goes on with the requests.
        if (!readsOnTwoThreads(options) || !dynamic_cast<LineImporter*>(importer.get()))
            return importer;
        std::unique_ptr<LineImporter> lines(static_cast<LineImporter*>(importer.release()));
        return std::unique_ptr<Importer>(std::make_unique<PipelinedImporter>(std::move(lines)));
    }
    return usageError(fmt::format("unknown trace format '{}' (known: twitter, cachelib, oracle, monitor, mc-watch, "
                                  "mc-metadump, rdb-csv, rdb, layoutlab)",
                          format),
        field::kFormat);
}

Expected<std::string> traceFormat(const std::string& path, const ImportOptions& options) {
    if (!options.format.empty())
        return options.format;
    return detectFormat(path);
}

Expected<std::unique_ptr<TraceFileReader>> openTraceFile(const std::string& path, const ImportOptions& options) {
    if (!options.format.empty() && options.format != "layoutlab")
        return std::unique_ptr<TraceFileReader>();
    auto head = sniff(path, 8);
    if (!head)
        return head.error();
    if (*head != std::string("LLTRACE\0", 8) && options.format != "layoutlab")
        return std::unique_ptr<TraceFileReader>();
    return TraceFileReader::open(path);
}

Expected<ImportOptions> importOptionsFrom(
    const std::string& format, const std::string& onError, std::uint32_t keyBytes) {
    ImportOptions options;
    options.format = format == "auto" ? std::string() : format;
    if (onError == "fail")
        options.onError = OnError::Fail;
    else if (onError == "skip")
        options.onError = OnError::Skip;
    else
        return usageError(
            fmt::format("bad input lines are handled by 'fail' or 'skip', got '{}'", onError), field::kOnError);
    if (keyBytes == 0 || keyBytes > kMaxKeyBytes)
        return usageError(fmt::format("the key size must be between 1 and {}", kMaxKeyBytes), field::kKeySize);
    options.oracleKeyBytes = keyBytes;
    return options;
}

Expected<std::unique_ptr<TraceReader>> openTrace(const std::string& path, const ImportOptions& options) {
    auto file = openTraceFile(path, options);
    if (!file)
        return file.error();
    if (*file) {
        if (!readsOnTwoThreads(options))
            return std::unique_ptr<TraceReader>(std::move(*file));
        // Decoding overlaps with whatever the caller does with the requests.
        return std::unique_ptr<TraceReader>(std::make_unique<DecodeAheadReader>(std::move(*file)));
    }
    auto importer = openImporter(path, options);
    if (!importer)
        return importer.error();
    return std::unique_ptr<TraceReader>(std::move(*importer));
}

} // namespace layoutlab
