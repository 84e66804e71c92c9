// SPDX-License-Identifier: MIT
#pragma once

// A layout described by data instead of C++: the allocations a key costs, their fields, what is embedded
// under which rule, the index, and the GET path. A layout file (layout_file.h) is parsed into a
// LayoutDefinition; DeclaredLayout evaluates it for every key shape the way the built-in models do.
// The file format is documented in docs/layout-files.md.

#include "layoutlab/layout/layout_model.h"
#include "layoutlab/layout/value_framing.h"

#include <string>
#include <vector>

namespace layoutlab {

// What a condition can test: the key's shape, and the encoding the value got.
enum class ConditionAtom : std::uint8_t {
    Ttl, // the key has a TTL
    StaleExpire, // no TTL, but the object keeps the expire field of a removed one ([ttl] stale_expire)
    Embedded, // the value is embedded (the embed rule held)
    Raw, // the value is in a separate allocation
    Integer, // the value is an integer held in a pointer field (INT encoding)
    SharedInteger, // the value is a shared integer object (nothing allocated for it)
    Flags, // the value framing sets non-zero client flags (memcached)
    KeyAtLeast, // key length >= number
    ValueAtLeast, // value length >= number
};

// "ttl", "not embedded", "key >= 128", "ttl or key >= 128", "raw and not ttl": an OR of ANDs.
struct Condition {
    struct Term {
        ConditionAtom atom = ConditionAtom::Ttl;
        bool negated = false;
        std::uint64_t number = 0;
    };
    std::vector<std::vector<Term>> anyOf; // empty: always true
    std::string text; // as written, for messages
};

// Length headers that grow with the length (sds types 5/8/16/32): the smallest step whose limit holds.
struct LengthHeader {
    std::string name;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> steps; // (largest length, header bytes), ascending
    std::uint32_t otherwiseBytes = 0; // longer than every step
    std::int64_t emptyBytes = -1; // a zero-length string's header, when it differs (sds: type 8); -1: none
    std::uint32_t bytesFor(std::uint64_t length) const;
};

enum class FieldContent : std::uint8_t { Fixed, Key, Value };

struct FieldDefinition {
    std::string name;
    int line = 0;
    FieldContent content = FieldContent::Fixed;
    std::uint64_t bytes = 0; // Fixed: its size
    // Key/Value: [prefix][length header][bytes][terminator], at least minBytes in the allocation.
    std::uint32_t prefixBytes = 0;
    int lengthHeader = -1; // index into LayoutDefinition::lengthHeaders; -1: headerBytes
    std::uint32_t headerBytes = 0;
    std::uint32_t terminatorBytes = 0;
    std::uint64_t minBytes = 0; // not counted in the embed decision
    std::int64_t decisionHeaderBytes = -1; // the length header as the embed decision counts it; -1: as allocated
    bool pointer = false; // counts as pointer bytes
    int pointsTo = -1; // index of the allocation it points to; -1: none declared
    bool holdsInteger = false; // an integer value lives here (then it is not a pointer)
    Condition when; // present when it holds
    bool whenSlack = false; // also present when the allocation's size class has room for it
    bool hasAddedWhen = false;
    Condition addedWhen; // added afterwards when it holds, re-deciding the embedding (Valkey setExpire)
};

enum class IndexedBy : std::uint8_t { None, Keyspace, Expires };

struct AllocationDefinition {
    std::string name;
    int line = 0;
    Purpose purpose = Purpose::Object;
    Condition when;
    IndexedBy indexedBy = IndexedBy::None;
    std::vector<FieldDefinition> fields;
};

enum class EmbedRule : std::uint8_t { TotalAtMostThreshold, ValueAtMostThreshold, ValueAtMost, Always, Never };

struct LayoutDefinition {
    std::string path; // the file it came from
    std::string name;
    std::string description;
    std::string contentHash; // of the file's bytes, 16 hex digits
    std::string sourceText; // the file as read: stored with every run that uses it
    std::string defaultAllocator = "jemalloc:quantum=8,page=4096";
    enum class Allocators : std::uint8_t { Malloc, Slabs, Any } allocators = Allocators::Malloc;
    std::optional<ThresholdParam> threshold;
    IndexPolicy index;
    std::vector<LengthHeader> lengthHeaders;
    // Values that are integers of at most integerMaxChars characters get the INT encoding (0: never);
    // small ones ([0, 9999]) share one object when sharedSmallIntegers.
    std::uint32_t integerMaxChars = 0;
    bool sharedSmallIntegers = false;
    // [ttl] stale_expire = "kept": removing a TTL leaves the object as it was (KeyShape::staleExpire)
    // until an overwrite replaces the object, which the engine does unless neither the old object nor the
    // new value is embedded (Valkey db.c dbSetValue).
    bool keepsStaleExpire = false;
    Framing framing = Framing::Raw;
    std::uint32_t framingVersionBytes = 0;
    EmbedRule embedRule = EmbedRule::Never;
    int embedLine = 0; // where [embed] is, for messages
    int embedInto = -1; // the allocation the embedded value lives in
    std::uint64_t embedValueLimit = 0; // EmbedRule::ValueAtMost
    std::uint64_t maxEmbeddedValueBytes = UINT64_MAX;
    std::int64_t clientValueLimit = -1; // -1: none; -2: "auto" (as if the key and every optional field were absent)
    Encoding embeddedEncoding = Encoding::Embedded; // what an embedded key is called: embstr, or a memcached item
    // memcached-style chunked items (items.c do_item_alloc): an item above the slab allocator's largest
    // chunk is a header item (+ chunkHeaderBytes) and chunks of at most that size holding the value field.
    bool chunked = false;
    std::uint32_t chunkHeaderBytes = 0;
    std::uint32_t chunkPointerBytes = 0;
    std::vector<AllocationDefinition> allocations;
    std::vector<int> getPath; // allocations a GET reads, in order
    // [write]: how SET makes the key. `madeOrder`: allocations in the order the engine makes them (empty:
    // as a GET reads them); `arguments`: the client's argv the command holds while it runs
    // (KeyLayout::transients), made as Valkey does (the value copied into the key's object, or a RAW
    // argument's sds kept) or as a dict engine does (the value's argument stored as it is).
    enum class Arguments : std::uint8_t { None, Valkey, Dict };
    std::vector<int> madeOrder;
    Arguments arguments = Arguments::None;
    std::uint32_t argumentHeaderBytes = 16; // an EMBSTR argument's object header
    std::uint32_t argumentMinValueBytes = 0; // its least value area (9.1: a pointer, to unembed)
};

class DeclaredLayout final : public LayoutModel {
public:
    explicit DeclaredLayout(LayoutDefinition definition);

    // "file:PATH#HASH": parseLayout() reads PATH again; the hash tells two versions of a file apart.
    std::string spec() const override;
    std::string description() const override;
    std::optional<ThresholdParam> threshold() const override { return m_def.threshold; }
    std::string defaultAllocator() const override { return m_def.defaultAllocator; }
    Status checkAllocator(const AllocatorModel& allocator) const override;
    IndexPolicy indexPolicy() const override { return m_def.index; }
    KeyLayout describe(const KeyShape& shape, std::uint32_t threshold, const AllocatorModel& allocator) const override;
    bool tracksStaleExpire() const override { return m_def.keepsStaleExpire; }
    std::uint32_t staleExpireNewValueBound(const KeyShape& after, Op op) const override;
    // A layout whose object keeps its expire field is taken to be its keyspace entry, as Valkey's is
    // (objectEntryKeptPurposes); the others rewrite as the dict engines do.
    std::uint32_t keptPurposes(Encoding before, Encoding after, Op op, bool newValueUnembedded) const override {
        return tracksStaleExpire() ? objectEntryKeptPurposes(before, after, op, newValueUnembedded)
                                   : LayoutModel::keptPurposes(before, after, op, newValueUnembedded);
    }

    const LayoutDefinition& definition() const { return m_def; }

private:
    // Whether a client's value of this many bytes arrives embedded (the client EMBSTR limit).
    bool clientEmbeds(std::uint64_t storedValueBytes, std::uint32_t threshold) const;

    LayoutDefinition m_def;
    // What the embedding allocation holds with no key, no TTL and an empty value: the threshold less this is
    // the client EMBSTR limit of `client_value_limit = "auto"`.
    std::uint64_t m_autoLimitFixedBytes = 0;
};

} // namespace layoutlab
