// SPDX-License-Identifier: MIT
// HyperLogLogs as hyperloglog.c keeps them (hll::Sparse): the sparse form's length element by element against
// what Debian's Redis 7.0.15 reported (STRLEN after PFADD of "e1" to "eN", one a command, measured once), the
// opcodes' splits and merges, the promotion to dense; and the MONITOR importer's requests for PFADD, PFMERGE
// and PFCOUNT.

#include "hll_sparse.h"
#include "monitor_capture_import.h"

#include <gtest/gtest.h>
#include <string>

using namespace layoutlab;
using namespace layoutlab::hll;

namespace {

TEST(HllSparse, LengthsAreTheServersElementByElement) {
    // redis-cli PFADD h e1 ... eN; STRLEN h (Redis 7.0.15; the sparse algorithm is the same to Valkey 9.1).
    const std::pair<std::uint32_t, std::uint32_t> measured[] = { { 1, 21 }, { 10, 48 }, { 40, 130 }, { 100, 285 },
        { 300, 713 }, { 500, 1068 }, { 1000, 1906 }, { 1500, 2719 }, { 2000, kDenseBytes } };
    Sparse hll;
    EXPECT_EQ(hll.length(), kHyperLogLogCreatedBytes);
    std::uint32_t added = 0;
    for (const auto& [elements, length] : measured) {
        for (; added < elements; ++added) {
            const Pattern p = patternOf("e" + std::to_string(added + 1));
            hll.set(p.index, p.count);
        }
        EXPECT_EQ(hll.length(), length) << elements << " elements";
    }
    EXPECT_TRUE(hll.dense());
}

TEST(HllSparse, SplitsMergesAndPromotesAsHllSparseSetDoes) {
    Sparse hll; // one XZERO of 16,384 registers: 2 bytes
    EXPECT_EQ(hll.set(100, 3).changed, true); // XZERO(100) VAL(3) XZERO(16283): 2 + 1 + 2
    EXPECT_EQ(hll.length(), kHeaderBytes + 5);
    EXPECT_FALSE(hll.set(100, 2).changed); // case A: the register holds more
    EXPECT_EQ(hll.length(), kHeaderBytes + 5);
    hll.set(101, 3); // XZERO(100) VAL(3,1) VAL(3,1) XZERO -> merged: VAL(3,2)
    EXPECT_EQ(hll.length(), kHeaderBytes + 5);
    hll.set(50, 1); // the first XZERO split: ZERO(50) VAL(1) ZERO(49), all within 64: 3 bytes for 2
    EXPECT_EQ(hll.length(), kHeaderBytes + 6);
    Registers registers {};
    hll.addRegistersTo(registers);
    EXPECT_EQ(registers[50], 1);
    EXPECT_EQ(registers[100], 3);
    EXPECT_EQ(registers[101], 3);
    EXPECT_EQ(registers[102], 0);
    // A count above 32 is not representable sparse: promoted, whatever the length.
    const Sparse::Change change = hll.set(7, 33);
    EXPECT_TRUE(change.promoted);
    EXPECT_EQ(hll.length(), kDenseBytes);
    EXPECT_FALSE(hll.set(8, 1).changed); // dense: its length no longer moves
}

TEST(HllSparse, ASparseFormPastTheLimitIsPromoted) {
    Sparse hll;
    // Registers 0, 2, 4...: each set splits a run, growing the form until hll-sparse-max-bytes.
    bool promoted = false;
    for (std::uint32_t i = 0; i < kRegisters && !promoted; i += 2) {
        promoted = hll.set(i, 1 + i % 5).promoted;
        if (!promoted)
            EXPECT_LE(hll.length(), kSparseMaxBytes);
    }
    EXPECT_TRUE(promoted);
    EXPECT_TRUE(hll.dense());
}

TEST(HllSparse, PatternsAreTheRegistersTheServerSets) {
    // PFADD h ELEMENT into an empty key, then PFDEBUG GETREG h: the one register set and its value (Debian's Redis
    // 7.0.15, measured once). Lengths 1 to 16 cover MurmurHash64A's tail of 0 to 7 bytes after whole words.
    struct Measured {
        const char* element;
        std::uint32_t index;
        std::uint8_t count;
    };
    for (const Measured& m : { Measured { "a", 12711, 2 }, Measured { "ab", 719, 1 }, Measured { "abc", 9474, 1 },
             Measured { "abcdefg", 5634, 2 }, Measured { "abcdefgh", 1383, 1 }, Measured { "abcdefghi", 6903, 1 },
             Measured { "hello world, 17b", 12784, 1 }, Measured { "e1", 15949, 2 }, Measured { "e2000", 7583, 2 } }) {
        const Pattern p = patternOf(m.element);
        EXPECT_EQ(p.index, m.index) << m.element;
        EXPECT_EQ(p.count, m.count) << m.element;
    }
}

using test::MonitorCommandsTest;

TEST_F(MonitorCommandsTest, HyperLogLogsAreFollowedRegisterByRegister) {
    const auto requests = import({ { "PFADD", "h", "a", "b", "c" }, { "PFADD", "h", "a" }, { "PFADD", "empty" },
        { "PFCOUNT", "h", "empty" }, { "SET", "n", "12" }, { "PFADD", "n", "x" }, { "HSET", "hash", "f", "v" },
        { "PFADD", "hash", "x" }, { "SET", "s", "text" }, { "PFADD", "s", "x" } });
    std::vector<std::uint32_t> lengths;
    std::size_t gets = 0;
    for (const Request& r : requests) {
        if (r.op == Op::SetRange) {
            EXPECT_EQ(r.kind, kHyperLogLogKind);
            lengths.push_back(r.valueBytes);
        }
        gets += r.op == Op::Get;
    }
    // h created at 18 bytes, then three elements of three splits (their lengths as Sparse gives them); a
    // repeated element changes nothing, but hllSparseSet makes room at the length the last one left, which no
    // request has yet: one of the same length. "empty" created and nothing else.
    Sparse h;
    std::vector<std::uint32_t> expected { kHyperLogLogCreatedBytes };
    for (const char* e : { "a", "b", "c" }) {
        const Pattern p = patternOf(e);
        h.set(p.index, p.count);
        expected.push_back(h.length());
    }
    expected.push_back(h.length());
    expected.push_back(kHyperLogLogCreatedBytes);
    EXPECT_EQ(lengths, expected);
    EXPECT_EQ(gets, 2u); // PFCOUNT reads each key
    // A number and a hash are refused; a string SET wrote may be one (its bytes are not kept): not modelled.
    EXPECT_EQ(m_rejects.refusedTotal, 2u);
    EXPECT_EQ(m_rejects.notModelled.count("PFADD (of a string SET wrote)"), 1u);
}

TEST_F(MonitorCommandsTest, PfmergeTakesTheRegistersMaximumOrMakesItDense) {
    std::vector<std::string> many { "PFADD", "big" };
    for (int i = 0; i < 3000; ++i)
        many.push_back("m" + std::to_string(i));
    const auto requests
        = import({ { "PFADD", "a", "x", "y" }, { "PFADD", "b", "y", "z" }, { "PFMERGE", "dest", "a", "b" }, many,
            { "PFMERGE", "a", "big" }, { "SET", "b", "over" }, { "PFADD", "c", "q" }, { "APPEND", "c", "tail" } });
    std::vector<std::uint32_t> destLengths;
    std::uint32_t lastOfA = 0;
    for (const Request& r : requests)
        if (r.op == Op::SetRange && r.kind == kHyperLogLogKind && r.keyId == requests[0].keyId)
            lastOfA = r.valueBytes;
    EXPECT_EQ(lastOfA, kDenseBytes); // merged with a dense one
    // dest: created, then x, y, z's registers set in register order.
    Sparse dest;
    Registers max {};
    for (const char* e : { "x", "y", "z" }) {
        const Pattern p = patternOf(e);
        max[p.index] = std::max(max[p.index], p.count);
    }
    std::vector<std::uint32_t> expected { kHyperLogLogCreatedBytes };
    for (std::uint32_t i = 0; i < kRegisters; ++i)
        if (max[i] != 0) {
            dest.set(i, max[i]);
            expected.push_back(dest.length());
        }
    const std::uint32_t destId = [&] {
        for (const Request& r : requests)
            if (r.op == Op::SetRange && r.keyId != requests[0].keyId && r.keyBytes == 4)
                return r.keyId;
        return 0u;
    }();
    for (const Request& r : requests)
        if (r.op == Op::SetRange && r.keyId == destId)
            destLengths.push_back(r.valueBytes);
    EXPECT_EQ(destLengths, expected);
    // An HLL APPEND wrote to is a string of its length, no longer followed (a plain append request).
    EXPECT_EQ(requests.back().op, Op::Append);
}

} // namespace
