// SPDX-License-Identifier: MIT
#include "trace_block.h"

#define XXH_STATIC_LINKING_ONLY // XXH3_state_t on the stack: no allocation per block
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <utility>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace layoutlab::trace_block {

// Columns are read and written as whole little-endian words.
static_assert(std::endian::native == std::endian::little, "the trace codec assumes a little-endian host");

namespace {
constexpr unsigned kOpMask = 0x0f;
constexpr unsigned kKindShift = 4;
constexpr unsigned kKindMask = 0x3;
constexpr unsigned kMaxKind = 2;
// Value kind 3 is a HyperLogLog's, on a setrange only (request.h kHyperLogLogKind).
constexpr unsigned kHyperLogLogTagKind = static_cast<unsigned>(kHyperLogLogKind);
constexpr unsigned kHasTtlShift = 6;
constexpr unsigned kReservedBit = 0x80;

// An op byte that names no operation, no value kind, or sets the reserved bit. Bitwise, not short-circuit:
// the check over a block's op bytes then compiles to vector instructions.
inline unsigned badTag(unsigned tag) {
    const unsigned kind = (tag >> kKindShift) & kKindMask;
    return static_cast<unsigned>((tag & kOpMask) >= static_cast<unsigned>(kOpCount))
        | (static_cast<unsigned>(kind == kHyperLogLogTagKind)
            & static_cast<unsigned>((tag & kOpMask) != static_cast<unsigned>(Op::SetRange)))
        | ((tag & kReservedBit) >> 7);
}
// The widest value each column can need: 32-bit fields, 64-bit time steps.
constexpr std::array<std::uint8_t, kColumns> kMaxWidths { 4, 4, 4, 4, 8 };

unsigned widthOf(std::uint64_t maxValue) {
    return static_cast<unsigned>((std::bit_width(maxValue) + 7) / 8);
}

void putLe(unsigned char* p, std::uint64_t v, unsigned width) {
    for (unsigned i = 0; i < width; ++i)
        p[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint32_t load32(const unsigned char* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v; // the formats are little-endian, as are the hosts layoutlab builds for
}
std::uint64_t load64(const unsigned char* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
// The low `width` bytes of a word.
constexpr std::uint64_t maskOf(std::size_t width) {
    return width >= 8 ? ~std::uint64_t { 0 } : (std::uint64_t { 1 } << (8 * width)) - 1;
}

} // namespace

std::uint32_t encode(std::span<const Request> requests, std::uint64_t& baseTimeMs, ByteBuffer& out) {
    const std::size_t n = requests.size();
    const std::size_t start = out.size();
    // Room for the widest block, plus 8 bytes of slack: every value is stored as a whole 8-byte word and
    // the write position advances by the column's width (no byte loop per value). The buffer's new bytes
    // are not zeroed first (ByteBuffer); the block is cut to its size at the end.
    constexpr std::size_t kWidestRecord = 1 + 4 + 4 + 4 + 4 + 8 + 4 + kElementOpBytes;
    const std::size_t widest = kHeaderBytes + n * kWidestRecord + 8;
    // After that room, the time steps as the first pass finds them, for the last to store.
    out.resize(start + widest + n * sizeof(std::uint64_t));
    unsigned char* const header = out.data() + start;
    unsigned char* const tags = header + kHeaderBytes;
    unsigned char* const stepsFound = header + widest;
    // One pass writes the op bytes and finds the widths. A column's width is that of the OR of its values,
    // whose highest bit is their maximum's; the key ids' maximum is returned as well.
    std::uint64_t maxKeyId = 0, keySizeBits = 0, valueSizeBits = 0, ttlBits = 0, stepBits = 0;
    std::uint64_t elementSizeBits = 0, priorBits = 0;
    std::size_t ttlCount = 0, elementCount = 0;
    std::uint64_t time = baseTimeMs;
    for (std::size_t i = 0; i < n; ++i) {
        const Request& r = requests[i];
        // An element request's TTL field is its prior bytes, stored in its own column.
        const bool element = r.op == Op::Element;
        const unsigned hasTtl = !element && r.ttlSeconds != 0;
        elementCount += element;
        elementSizeBits |= element ? r.elementBytes : 0;
        priorBits |= element ? r.ttlSeconds : 0;
        tags[i] = static_cast<unsigned char>(
            static_cast<unsigned>(r.op) | (static_cast<unsigned>(r.kind) << kKindShift) | (hasTtl << kHasTtlShift));
        ttlCount += hasTtl;
        maxKeyId = std::max<std::uint64_t>(maxKeyId, r.keyId);
        keySizeBits |= r.keyBytes;
        valueSizeBits |= r.valueBytes;
        ttlBits |= hasTtl ? r.ttlSeconds : 0;
        const std::uint64_t step = r.timeMs >= time ? r.timeMs - time : 0;
        time += step;
        stepBits |= step;
        std::memcpy(stepsFound + i * sizeof step, &step, sizeof step);
    }
    std::array<unsigned, kColumns> widths {};
    widths[KeyId] = widthOf(maxKeyId);
    widths[KeyBytes] = widthOf(keySizeBits);
    widths[ValueBytes] = widthOf(valueSizeBits);
    widths[TtlSeconds] = widthOf(ttlBits);
    widths[TimeDelta] = widthOf(stepBits);
    const std::array<unsigned, 2> elementWidths { widthOf(elementSizeBits), widthOf(priorBits) };
    std::size_t payload = n; // the op column
    for (std::size_t c = 0; c < kColumns; ++c)
        payload += (c == TtlSeconds ? ttlCount : n) * widths[c];
    payload += elementCount * (elementWidths[0] + elementWidths[1] + kElementOpBytes);
    putLe(header, n, 4);
    putLe(header + 4, payload, 4);
    putLe(header + 8, baseTimeMs, 8);
    putLe(header + 16, ttlCount, 4);
    for (std::size_t c = 0; c < kColumns; ++c)
        header[20 + c] = static_cast<unsigned char>(widths[c]);
    std::memset(header + 20 + kColumns, 0, kHeaderBytes - 20 - kColumns);
    static_assert(20 + kColumns == kElementWidthsAt, "the element widths follow the others");
    header[kElementWidthsAt] = static_cast<unsigned char>(elementWidths[0]);
    header[kElementWidthsAt + 1] = static_cast<unsigned char>(elementWidths[1]);
    // Then the columns, one after another: a value's word spills past its column's end only into the
    // next column, written after it.
    unsigned char* p = tags + n;
    auto store = [&p](std::uint64_t v, unsigned width) {
        std::memcpy(p, &v, 8); // little-endian hosts: the low `width` bytes are the value
        p += width;
    };
    for (const auto& r : requests)
        store(r.keyId, widths[KeyId]);
    for (const auto& r : requests)
        store(r.keyBytes, widths[KeyBytes]);
    for (const auto& r : requests)
        store(r.valueBytes, widths[ValueBytes]);
    for (const auto& r : requests)
        if (r.ttlSeconds != 0 && r.op != Op::Element)
            store(r.ttlSeconds, widths[TtlSeconds]);
    for (std::size_t i = 0; i < n; ++i)
        store(load64(stepsFound + i * sizeof(std::uint64_t)), widths[TimeDelta]);
    if (elementCount != 0) {
        for (const auto& r : requests)
            if (r.op == Op::Element)
                store(r.elementBytes, elementWidths[0]);
        for (const auto& r : requests)
            if (r.op == Op::Element)
                store(r.ttlSeconds, elementWidths[1]);
        for (const auto& r : requests)
            if (r.op == Op::Element)
                store(r.element, kElementOpBytes);
    }
    out.resize(start + kHeaderBytes + payload);
    putLe(out.data() + start + kChecksumAt, checksumOf(out.data() + start, out.data() + start + kHeaderBytes, payload),
        4);
    baseTimeMs = time;
    return static_cast<std::uint32_t>(maxKeyId);
}

std::uint32_t checksumOf(const unsigned char* header, const unsigned char* payload, std::size_t payloadBytes) {
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, header, kChecksumAt);
    XXH3_64bits_update(&state, payload, payloadBytes);
    return static_cast<std::uint32_t>(XXH3_64bits_digest(&state));
}

const char* parseHeader(const unsigned char* bytes, Header& header, std::uint32_t version) {
    header.records = load32(bytes);
    header.payloadBytes = load32(bytes + 4);
    header.baseTimeMs = load64(bytes + 8);
    header.ttlCount = load32(bytes + 16);
    std::uint64_t perRecord = 1;
    for (std::size_t c = 0; c < kColumns; ++c) {
        header.widths[c] = bytes[20 + c];
        if (header.widths[c] > kMaxWidths[c])
            return "damaged block header (a column wider than its field)";
        perRecord += c == TtlSeconds ? 0 : header.widths[c];
    }
    const unsigned char* reservedEnd = version >= 3 ? bytes + kChecksumAt : bytes + kHeaderBytes;
    const unsigned char* reservedStart = bytes + kElementWidthsAt + (version >= 4 ? 2 : 0);
    if (std::any_of(reservedStart, reservedEnd, [](unsigned char b) { return b != 0; }))
        return "damaged block header (reserved bytes are not zero)";
    header.elementWidths = { 0, 0 };
    if (version >= 4) {
        header.elementWidths = { bytes[kElementWidthsAt], bytes[kElementWidthsAt + 1] };
        if (header.elementWidths[0] > 4 || header.elementWidths[1] > 4)
            return "damaged block header (a column wider than its field)";
    }
    header.checksum = version >= 3 ? load32(bytes + kChecksumAt) : 0;
    if (header.records == 0 || header.records > kMaxBlockRecords)
        return "damaged block header (record count out of range)";
    if (header.ttlCount > header.records)
        return "damaged block header (more TTLs than records)";
    // What the element columns take beyond the others is a whole number of element requests (checked
    // against the op bytes as they are read).
    const std::uint64_t columns
        = perRecord * header.records + std::uint64_t { header.ttlCount } * header.widths[TtlSeconds];
    const std::uint64_t perElement = header.elementWidths[0] + header.elementWidths[1] + kElementOpBytes;
    const std::uint64_t rest = header.payloadBytes >= columns ? header.payloadBytes - columns : UINT64_MAX;
    header.elementCount = version >= 4 && rest != UINT64_MAX && rest % perElement == 0
        ? static_cast<std::uint32_t>(rest / perElement)
        : 0;
    if (rest == UINT64_MAX || (version < 4 && rest != 0) || rest % perElement != 0
        || header.elementCount > header.records)
        return "damaged block header (payload size does not match its columns)";
    return nullptr;
}

namespace {

// An op byte's op and value kind, as the two bytes Request holds them in. Op bytes are checked before
// they are looked up: the reserved bit is clear, so 128 entries cover them.
// The element fields after them are zero: a request's last eight bytes are stored from it as one word, and an
// element request's are filled in after (decodeElements).
static_assert(offsetof(Request, kind) == offsetof(Request, op) + 1
        && offsetof(Request, element) == offsetof(Request, op) + 2
        && offsetof(Request, elementBytes) == offsetof(Request, op) + 4 && sizeof(Request) == offsetof(Request, op) + 8,
    "op, kind and the element fields are the request's last eight bytes");
constexpr std::array<std::array<unsigned char, 8>, 128> kOpAndKind = [] {
    std::array<std::array<unsigned char, 8>, 128> table {};
    for (unsigned tag = 0; tag < 128; ++tag)
        table[tag] = { static_cast<unsigned char>(tag & kOpMask),
            static_cast<unsigned char>((tag >> kKindShift) & kKindMask), 0, 0, 0, 0, 0, 0 };
    return table;
}();
// All ones for an op byte that flags a TTL, else 0: a mask for the TTL and for its column's step.
constexpr std::array<std::uint64_t, 128> kAllOnesIfTtl = [] {
    std::array<std::uint64_t, 128> table {};
    for (unsigned tag = 0; tag < 128; ++tag)
        table[tag] = (tag >> kHasTtlShift) & 1 ? ~std::uint64_t { 0 } : 0;
    return table;
}();

// Where each field's column starts in a block's payload: past the op bytes, one after another in file order.
std::array<const unsigned char*, kColumns> columnStarts(const Header& header, const unsigned char* payload) {
    std::array<const unsigned char*, kColumns> starts {};
    const unsigned char* p = payload + header.records; // past the op bytes
    for (std::size_t c = 0; c < kColumns; ++c) {
        starts[c] = p;
        p += std::size_t { c == TtlSeconds ? header.ttlCount : header.records } * header.widths[c];
    }
    return starts;
}

// Every request of a block in one pass, written whole; returns the largest key id. Each column is read as
// one word masked to its width (reads run at most kPaddingBytes past the payload), so no column needs a
// branch. KeyIdWidth, KeySizeWidth and ValueSizeWidth are the block's widths of those columns when known
// at compile time, 0 when read from the header; without TimeSteps the block has no time-step column. A
// loop with widths in its code has those masks and steps as constants, which frees registers the general
// loop spills to the stack (docs/performance.md has the instruction counts).
template <unsigned KeyIdWidth, unsigned KeySizeWidth, unsigned ValueSizeWidth, bool TimeSteps>
std::uint64_t decodeRecordsWith(const Header& header, const unsigned char* tags, Request* out) {
    const std::size_t n = header.records;
    // The widths are bytes, and a byte may alias anything: read through the header they would be loaded
    // again after every store to `out`. Held in locals they stay in registers.
    const std::size_t keyIdWidth = KeyIdWidth ? KeyIdWidth : header.widths[KeyId];
    const std::size_t keySizeWidth = KeySizeWidth ? KeySizeWidth : header.widths[KeyBytes];
    const std::size_t valueSizeWidth = ValueSizeWidth ? ValueSizeWidth : header.widths[ValueBytes];
    const std::size_t ttlWidth = header.widths[TtlSeconds];
    const std::size_t stepWidth = TimeSteps ? header.widths[TimeDelta] : 0;
    const auto starts = columnStarts(header, tags);
    const unsigned char* keyIds = starts[KeyId];
    const unsigned char* keySizes = starts[KeyBytes];
    const unsigned char* valueSizes = starts[ValueBytes];
    const unsigned char* ttls = starts[TtlSeconds];
    const unsigned char* steps = starts[TimeDelta];
    const std::uint64_t keyIdMask = maskOf(keyIdWidth), keySizeMask = maskOf(keySizeWidth),
                        valueSizeMask = maskOf(valueSizeWidth), ttlMask = maskOf(ttlWidth),
                        stepMask = maskOf(stepWidth);
    std::uint64_t maxKeyId = 0;
    std::uint64_t time = header.baseTimeMs;
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned tag = tags[i];
        const std::uint64_t hasTtl = kAllOnesIfTtl[tag];
        const std::uint64_t keyId = load64(keyIds) & keyIdMask;
        maxKeyId = std::max(maxKeyId, keyId);
        time += load64(steps) & stepMask;
        Request& r = out[i];
        r.timeMs = time;
        r.keyId = static_cast<std::uint32_t>(keyId);
        r.keyBytes = static_cast<std::uint32_t>(load64(keySizes) & keySizeMask);
        r.valueBytes = static_cast<std::uint32_t>(load64(valueSizes) & valueSizeMask);
        r.ttlSeconds = static_cast<std::uint32_t>(load64(ttls) & ttlMask & hasTtl);
        // Op and kind, and the element fields (zero), are looked up together and stored as one word.
        std::memcpy(&r.op, &kOpAndKind[tag], 8);
        keyIds += keyIdWidth;
        keySizes += keySizeWidth;
        valueSizes += valueSizeWidth;
        ttls += hasTtl & ttlWidth;
        steps += stepWidth;
    }
    return maxKeyId;
}

using RecordDecoder = std::uint64_t (*)(const Header&, const unsigned char*, Request*);

// Loops with their widths built in for the usual blocks: key ids of 2 to 4 bytes (256 to 4G keys), key
// sizes of 1 byte, value sizes of 1 to 4 bytes; each in two kinds, for blocks whose requests all share
// one time (no time-step column: traces timed in seconds, at more than a block's requests a second)
// and for the others. Any other block takes the general loop.
template <bool TimeSteps, unsigned KeyIdWidth, unsigned... ValueSizeWidths>
constexpr std::array<RecordDecoder, sizeof...(ValueSizeWidths)> decodersFor(
    std::integer_sequence<unsigned, ValueSizeWidths...>) {
    return { &decodeRecordsWith<KeyIdWidth, 1, ValueSizeWidths + 1, TimeSteps>... };
}
template <bool TimeSteps> constexpr std::array<std::array<RecordDecoder, 4>, 3> decodersFor() {
    constexpr auto valueSizeWidths = std::make_integer_sequence<unsigned, 4>();
    return { decodersFor<TimeSteps, 2>(valueSizeWidths), decodersFor<TimeSteps, 3>(valueSizeWidths),
        decodersFor<TimeSteps, 4>(valueSizeWidths) };
}
// The element columns' starts (version 4), after the others: element bytes, prior bytes, packed ElementOps.
std::array<const unsigned char*, 3> elementColumnStarts(const Header& header, const unsigned char* payload) {
    const unsigned char* p
        = columnStarts(header, payload)[TimeDelta] + std::size_t { header.records } * header.widths[TimeDelta];
    const unsigned char* prior = p + std::size_t { header.elementCount } * header.elementWidths[0];
    return { p, prior, prior + std::size_t { header.elementCount } * header.elementWidths[1] };
}

// Fills in the block's element requests from the element columns (decodeRecordsWith left their element
// fields zero and their TTL field 0, as no element request flags a TTL).
DecodeFailure decodeElements(const Header& header, const unsigned char* payload, Request* out) {
    if (header.elementCount == 0)
        return {};
    const auto starts = elementColumnStarts(header, payload);
    const std::uint64_t sizeMask = maskOf(header.elementWidths[0]), priorMask = maskOf(header.elementWidths[1]);
    std::size_t j = 0;
    for (std::size_t i = 0; i < header.records; ++i) {
        Request& r = out[i];
        if (r.op != Op::Element)
            continue;
        const auto bits = static_cast<std::uint16_t>(load64(starts[2] + j * kElementOpBytes) & 0xffff);
        if (!ElementOp::valid(bits) || (payload[i] >> kHasTtlShift) & 1)
            return { "damaged record (unknown element operation)", i };
        r.element = bits;
        r.elementBytes = static_cast<std::uint32_t>(load64(starts[0] + j * header.elementWidths[0]) & sizeMask);
        r.ttlSeconds = static_cast<std::uint32_t>(load64(starts[1] + j * header.elementWidths[1]) & priorMask);
        ++j;
    }
    return {};
}

// [whether the block's time steps are not all 0][key-id width - 2][value-size width - 1]
constexpr std::array<std::array<std::array<RecordDecoder, 4>, 3>, 2> kBuiltInWidths { decodersFor<false>(),
    decodersFor<true>() };

std::uint64_t decodeRecords(const Header& header, const unsigned char* tags, Request* out) {
    const unsigned keyIdWidth = header.widths[KeyId], valueSizeWidth = header.widths[ValueBytes];
    if (keyIdWidth >= 2 && header.widths[KeyBytes] == 1 && valueSizeWidth >= 1)
        return kBuiltInWidths[header.widths[TimeDelta] != 0][keyIdWidth - 2][valueSizeWidth - 1](header, tags, out);
    return decodeRecordsWith<0, 0, 0, true>(header, tags, out);
}

// Checks a block's op bytes: each names an op and a kind, and as many flag a TTL as the header says. One
// test per request, folded so the loop has no branch.
DecodeFailure checkOpBytes(const Header& header, const unsigned char* tags) {
    const std::size_t n = header.records;
    unsigned bad = 0;
    std::uint32_t ttlFlags = 0, elements = 0;
    std::size_t first = 0;
#if defined(__SSE2__)
    // Sixteen op bytes at a time: each test is a byte compare, and the masks' set bits are counted.
    static_assert(kOpCount <= 16 && kMaxKind == 2 && kHyperLogLogTagKind == 3,
        "the vector tests below assume 4-bit ops, kinds 0..2, and kind 3 on a setrange only");
    const __m128i opMask = _mm_set1_epi8(kOpMask), lastOp = _mm_set1_epi8(kOpCount - 1);
    const __m128i kindBits = _mm_set1_epi8(static_cast<char>(kKindMask << kKindShift));
    const __m128i ttlBit = _mm_set1_epi8(static_cast<char>(1u << kHasTtlShift));
    const __m128i elementOp = _mm_set1_epi8(static_cast<char>(Op::Element)), one = _mm_set1_epi8(1);
    const __m128i setRangeOp = _mm_set1_epi8(static_cast<char>(Op::SetRange));
    __m128i ttlSums = _mm_setzero_si128(); // two 64-bit counts
    __m128i elementSums = _mm_setzero_si128();
    for (; first + 16 <= n; first += 16) {
        const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + first));
        const __m128i badOp = _mm_cmpgt_epi8(_mm_and_si128(t, opMask), lastOp);
        const __m128i badKind = _mm_andnot_si128(_mm_cmpeq_epi8(_mm_and_si128(t, opMask), setRangeOp),
            _mm_cmpeq_epi8(_mm_and_si128(t, kindBits), kindBits)); // kind 3 but on a setrange
        bad |= static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(badOp, badKind)) | _mm_movemask_epi8(t));
        // Each byte's TTL flag moved to its bit 0 and the bytes summed: baseline x86-64 has no POPCNT
        // instruction, and std::popcount's library call costs more.
        const __m128i flags = _mm_srli_epi16(_mm_and_si128(t, ttlBit), kHasTtlShift);
        ttlSums = _mm_add_epi64(ttlSums, _mm_sad_epu8(flags, _mm_setzero_si128()));
        const __m128i isElement = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(t, opMask), elementOp), one);
        elementSums = _mm_add_epi64(elementSums, _mm_sad_epu8(isElement, _mm_setzero_si128()));
    }
    elements = static_cast<std::uint32_t>(
        _mm_cvtsi128_si32(elementSums) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(elementSums, elementSums)));
    ttlFlags = static_cast<std::uint32_t>(
        _mm_cvtsi128_si32(ttlSums) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(ttlSums, ttlSums)));
#endif
    for (std::size_t i = first; i < n; ++i) {
        const unsigned tag = tags[i];
        bad |= badTag(tag);
        ttlFlags += (tag >> kHasTtlShift) & 1;
        elements += (tag & kOpMask) == static_cast<unsigned>(Op::Element);
    }
    if (bad) {
        for (std::size_t i = 0; i < n; ++i)
            if (badTag(tags[i]))
                return { "damaged record (unknown operation or value kind)", i };
    }
    if (ttlFlags != header.ttlCount)
        return { "damaged block (its requests flag a different number of TTLs than its header)", 0 };
    if (elements != header.elementCount)
        return { "damaged block (its element requests do not match its element columns)", 0 };
    return {};
}

// A flagged request's TTL is never 0 (0 means none, and is not stored): checked so that a reader of the op
// bytes alone counts the same TTLs as a reader of the requests.
DecodeFailure checkTtls(const Header& header, const unsigned char* tags) {
    if (header.ttlCount == 0)
        return {};
    const std::size_t n = header.records;
    const unsigned char* const ttls = columnStarts(header, tags)[TtlSeconds];
    const std::size_t width = header.widths[TtlSeconds];
    auto ttl = [&](std::size_t j) { return load64(ttls + j * width) & maskOf(width); };
    bool zero = width == 0;
    for (std::size_t j = 0; j < header.ttlCount && !zero; ++j)
        zero = ttl(j) == 0;
    if (!zero)
        return {};
    for (std::size_t i = 0, j = 0; i < n; ++i)
        if ((tags[i] >> kHasTtlShift) & 1 && ttl(j++) == 0)
            return { "damaged record (a TTL of 0 seconds is flagged)", i };
    return {};
}

// Folds a column's n values of Width bytes with `fold` (max or +), in four independent lanes: one lane's
// chain of dependent instructions would take a cycle or two per value.
template <unsigned Width, class Fold> std::uint64_t foldColumn(const unsigned char* values, std::size_t n, Fold fold) {
    // Four locals, not an array: GCC keeps an array's lanes in memory.
    std::uint64_t lane0 = 0, lane1 = 0, lane2 = 0, lane3 = 0;
    auto value = [values](std::size_t i) { return load64(values + i * Width) & maskOf(Width); };
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        lane0 = fold(lane0, value(i));
        lane1 = fold(lane1, value(i + 1));
        lane2 = fold(lane2, value(i + 2));
        lane3 = fold(lane3, value(i + 3));
    }
    for (; i < n; ++i)
        lane0 = fold(lane0, value(i));
    return fold(fold(lane0, lane1), fold(lane2, lane3));
}
// The same, for a width known only at run time: the loop for that width.
template <class Fold, unsigned... Widths>
std::uint64_t foldColumn(
    unsigned width, const unsigned char* values, std::size_t n, Fold fold, std::integer_sequence<unsigned, Widths...>) {
    std::uint64_t result = 0;
    ((width == Widths ? (result = foldColumn<Widths>(values, n, fold), 0) : 0), ...);
    return result;
}
constexpr auto kMax = [](std::uint64_t a, std::uint64_t b) { return std::max(a, b); };
constexpr auto kSum = [](std::uint64_t a, std::uint64_t b) { return a + b; };
// The first record whose key id is at or beyond the limit, if any.
DecodeFailure checkKeyIds(std::uint64_t maxKeyId, std::uint64_t keyIdLimit, std::size_t n, auto keyIdOf) {
    if (maxKeyId >= keyIdLimit) {
        for (std::size_t i = 0; i < n; ++i)
            if (keyIdOf(i) >= keyIdLimit)
                return { "damaged record (key id beyond the trailer's key-id limit)", i };
    }
    return {};
}
} // namespace

DecodeFailure decode(const Header& header, const unsigned char* payload, std::uint64_t keyIdLimit, Request* out) {
    if (const auto failure = checkOpBytes(header, payload); failure.reason)
        return failure;
    if (const auto failure = checkTtls(header, payload); failure.reason)
        return failure;
    const std::uint64_t maxKeyId = decodeRecords(header, payload, out);
    if (const auto failure = decodeElements(header, payload, out); failure.reason)
        return failure;
    return checkKeyIds(maxKeyId, keyIdLimit, header.records, [out](std::size_t i) { return out[i].keyId; });
}

DecodeFailure columns(const Header& header, const unsigned char* payload, std::uint64_t keyIdLimit, RequestColumns& out,
    std::uint64_t& lastTimeMs) {
    if (const auto failure = checkOpBytes(header, payload); failure.reason)
        return failure;
    if (const auto failure = checkTtls(header, payload); failure.reason)
        return failure;
    const std::size_t n = header.records;
    out.count = n;
    out.opBytes = payload;
    const auto starts = columnStarts(header, payload);
    out.keyIds = { starts[KeyId], header.widths[KeyId] };
    out.keyBytes = { starts[KeyBytes], header.widths[KeyBytes] };
    out.valueBytes = { starts[ValueBytes], header.widths[ValueBytes] };
    const std::uint64_t maxKeyId
        = foldColumn(out.keyIds.width, out.keyIds.data, n, kMax, std::make_integer_sequence<unsigned, 5>());
    lastTimeMs = header.baseTimeMs
        + foldColumn(header.widths[TimeDelta], starts[TimeDelta], n, kSum, std::make_integer_sequence<unsigned, 9>());
    return checkKeyIds(maxKeyId, keyIdLimit, n, [&out](std::size_t i) { return out.keyIds.at(i); });
}

} // namespace layoutlab::trace_block
