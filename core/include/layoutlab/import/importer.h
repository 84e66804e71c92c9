// SPDX-License-Identifier: MIT
#pragma once

// Importers turn captured traces (Twitter CSV, CacheLib kvcache CSV, libCacheSim oracleGeneral, Redis
// MONITOR, memcached watch/metadump, RDB memory CSV) into layoutlab requests, streamed: an importer is a
// TraceReader, and its memory grows with the distinct keys it has seen, never with the file's size.
//
// Keys get dense ids in order of first appearance (a 64-bit hash of the key bytes identifies a key;
// two keys would merge only on a hash collision, about n^2 / 2^65 for n keys). For requests that report
// value size 0 on a miss (Twitter get/gets, CacheLib GET, memcached watch fetches), the importer
// remembers each key's last known value size and uses it.

#include "layoutlab/growable_memory.h"
#include "layoutlab/huge_page_allocator.h"
#include "layoutlab/trace/trace_reader.h"

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

class TraceFileReader;

enum class OnError { Fail, Skip };

struct ImportOptions {
    std::string format; // empty: detect from the content
    OnError onError = OnError::Fail;
    std::uint32_t oracleKeyBytes = 16; // oracleGeneral carries one size: this much of it is the key
    // oracleGeneral: a SET before each GET of an object not seen (or resized) since, as if the cache filled
    // it ahead; off, GETs only, for a replay that fills on its own misses (look-aside filling).
    bool oracleFills = true;
    // Binary traces are decoded, and text traces parsed, on a second thread while the caller works
    // (DecodeAheadReader, PipelinedImporter). Off where the process must run one thread only (the replay
    // cachegrind counts).
    bool decodeAhead = true;
    // RDB: the time (Unix seconds) the snapshot is loaded at, when it is loaded now rather than when it was
    // saved: a key whose expiry is before it is left out, as a primary loading the file then drops it
    // (rdbLoadRioWithLoadingCtx). Unset: the file's save time (its AUX ctime).
    std::optional<std::int64_t> snapshotLoadedAt;
};

// Import options from their words: a format name ("auto": detect), "fail" or "skip", the oracleGeneral key
// bytes. Errors name the field (field::kOnError, field::kKeySize).
Expected<ImportOptions> importOptionsFrom(
    const std::string& format, const std::string& onError, std::uint32_t keyBytes);

// Rejected input, by reason, with the first examples (file:line: reason).
struct RejectReport {
    std::uint64_t total = 0;
    std::map<std::string, std::uint64_t> byReason;
    std::vector<std::string> examples; // at most kMaxExamples
    // Input the format itself says to skip (zero-size oracle records, commands that touch no string
    // key): counted, never an error.
    std::map<std::string, std::uint64_t> skipped;
    // Commands the server answered with an error (wrong arity, INCR of a string, an overflow): they
    // changed nothing, so they are counted by reason and left out, never an error of the import.
    std::uint64_t refusedTotal = 0;
    std::map<std::string, std::uint64_t> refused;
    std::vector<std::string> refusedExamples; // file:line: detail, at most kMaxExamples
    // The input's last line when it has no line break and does not parse: a record cut short (a capture
    // stopped with Ctrl-C, or killed, mid-write). Left out and said once, whatever --on-error says.
    std::uint64_t truncatedRecords = 0;
    std::string truncatedExample; // file:line: detail
    // Commands that change the keyspace in a way the simulator does not model (PFADD, COPY of a collection
    // ...), by name: every figure misses their effect.
    std::map<std::string, std::uint64_t> notModelled;
    // Commands whose effect is a draw the server made and the capture does not show (SPOP's members), by
    // name: the importer made its own draw, so the figures are the server's in distribution.
    std::map<std::string, std::uint64_t> drawnByImporter;
    // Commands that read or change keys the capture never showed being written (APPEND, INCR,
    // SETRANGE, EXPIRE...): the simulator takes those keys as absent, as if the capture began on an
    // empty server.
    std::map<std::string, std::uint64_t> unseenKeys;
    static constexpr std::size_t kMaxExamples = 10;
    static constexpr std::size_t kMaxSkipReasons = 100;
};

// Dense key ids by first appearance.
class KeyInterner {
public:
    // Room for 2^32 homes, as many as key ids can be, and their overflow slots.
    static constexpr std::size_t kMaxReservedSlots = (std::size_t { 1 } << 32) + (std::size_t { 1 } << 16);
    // The table grows in place in address space reserved for `reservedSlots` slots (GrowableMemory),
    // then on the heap, each size allocated afresh: from the start where the reservation cannot be
    // had, or is 0.
    explicit KeyInterner(std::size_t reservedSlots = kMaxReservedSlots);
    // Returns the key's id, assigning the next one to a new key.
    std::uint32_t idFor(std::string_view key);
    std::uint32_t idForHash(std::uint64_t hash);
    // A hint that idForHash(hash) comes soon: fetches its first slot into the host's caches.
    void prefetch(std::uint64_t hash) const { __builtin_prefetch(&m_slots[homeOf(hash)]); }
    std::uint64_t size() const { return m_size; }
    // Room for `keys` keys at once, when none is held yet (an RDB file says how many it has): no growth and
    // rehashing of the table as they arrive. Ignored once a key is held.
    void reserve(std::uint64_t keys);
    // A 64-bit hash of the key: the interner keeps hashes, not keys. Among n keys, two share a hash
    // with a chance of about n^2 / 2^65: 1 in 10^7 for 2M keys, 1 in 40 for a billion. Eight bytes at
    // a time; the tail is one overlapping load, never a byte loop (bytes stored and reloaded as a word
    // stall on store forwarding). The length is mixed in first, so overlapping loads cannot make two
    // keys alike.
    static std::uint64_t hashKey(std::string_view key) {
        constexpr std::uint64_t kMul = 0x9e3779b97f4a7c15ULL;
        const char* p = key.data();
        const std::size_t n = key.size();
        std::uint64_t h = 0x243f6a8885a308d3ULL ^ (n * kMul);
        auto mix = [&h](std::uint64_t w) {
            h = (h ^ w) * kMul;
            h ^= h >> 32;
        };
        if (n >= 8) {
            for (std::size_t i = 0; i + 8 < n; i += 8)
                mix(load<std::uint64_t>(p + i));
            mix(load<std::uint64_t>(p + n - 8));
        } else if (n >= 4) {
            mix((std::uint64_t { load<std::uint32_t>(p) } << 32) | load<std::uint32_t>(p + n - 4));
        } else if (n > 0) {
            const auto byte = [p](std::size_t i) { return std::uint64_t { static_cast<unsigned char>(p[i]) }; };
            mix((byte(0) << 16) | (byte(n / 2) << 8) | byte(n - 1));
        }
        return finalize(h); // well-mixed low bits for the table
    }
    // splitmix64's finaliser (also what chains the hashes of a key read in pieces: the RDB importer).
    static std::uint64_t finalize(std::uint64_t h) {
        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebULL;
        return h ^ (h >> 31);
    }

private:
    template <class T> static T load(const char* p) {
        T v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    // Open addressing with linear probing that never wraps around: a key whose home slot is near the
    // end probes on into the overflow slots past the last home, the last of which is always empty (it
    // ends every probe; when a key would take it, there are made twice as many). So doubling the table
    // can rehash it in place (grow()).
    struct Slot {
        std::uint64_t hash = 0;
        std::uint32_t id = 0;
        bool used = false;
    };
    static constexpr std::size_t kInitialHomes = 1024;
    static constexpr std::size_t kInitialOverflow = 64;
    using HeapSlots = std::vector<Slot, HugePageAllocator<Slot>>;

    std::size_t homeOf(std::uint64_t hash) const {
        return static_cast<std::size_t>(hash ^ (hash >> 32)) & (m_homes - 1);
    }
    std::size_t slotCount() const { return m_homes + m_overflow; }
    // Puts a key where a lookup finds it.
    void place(const Slot& slot);
    // Puts a key in empty slot i, first adding overflow slots if i is the last.
    void take(std::size_t i, const Slot& slot);
    // Makes the slot count `slots`, the new slots empty, keeping every slot where it is.
    void resize(std::size_t slots);
    void addOverflow() { m_overflow *= 2, resize(slotCount()); }
    // Doubles the homes, rehashing every key where its slots are.
    void grow();

    GrowableMemory m_reserved;
    HeapSlots m_heap; // the slots when they do not live in m_reserved
    Slot* m_slots = nullptr;
    std::size_t m_homes = kInitialHomes;
    std::size_t m_overflow = kInitialOverflow;
    std::uint64_t m_size = 0;
};

class Importer : public TraceReader {
public:
    // The format's name as --format takes it.
    virtual std::string formatName() const = 0;
    virtual const RejectReport& rejects() const { return m_rejects; }
    // Progress through the source file, in [0, 1].
    virtual double progress() const = 0;

protected:
    // Records a rejected line; returns the error to stop with under OnError::Fail.
    std::optional<Error> reject(const std::string& reason, std::uint64_t line, bool isLine, const std::string& detail);
    void noteSkipped(const std::string& reason);
    // A command the server refused (RejectReport::refused) at `line`.
    void noteRefused(const std::string& reason, std::uint64_t line, const std::string& detail);
    // The input's unterminated last line did not parse (RejectReport::truncatedRecords).
    void noteTruncated(std::uint64_t line, const std::string& detail);
    // Counts `name` in one of the RejectReport's per-command maps.
    void noteCommand(std::map<std::string, std::uint64_t>& counts, const std::string& name);

    ImportOptions m_options;
    std::string m_path;
    RejectReport m_rejects;
};

struct ImportFormatInfo {
    std::string name;
    std::string description;
};
std::vector<ImportFormatInfo> importFormats();

// Opens an importer for the file: --format when given, else detected from the first bytes.
Expected<std::unique_ptr<Importer>> openImporter(const std::string& path, const ImportOptions& options);

// The format a trace would be opened as: --format when given, else the one its first bytes show
// ("layoutlab" for a binary trace).
Expected<std::string> traceFormat(const std::string& path, const ImportOptions& options);

// Opens any trace: a layoutlab trace as it is, anything else through its importer.
Expected<std::unique_ptr<TraceReader>> openTrace(const std::string& path, const ImportOptions& options = {});

// Whether reading a trace may take a second thread (ImportOptions::decodeAhead) and one would help: with
// one usable CPU, it only takes turns with the caller's.
bool readsOnTwoThreads(const ImportOptions& options);

// Opens the file as a layoutlab trace if it is one (or --format layoutlab says so); nullptr if it is a
// file for an importer.
Expected<std::unique_ptr<TraceFileReader>> openTraceFile(const std::string& path, const ImportOptions& options = {});

} // namespace layoutlab
