// SPDX-License-Identifier: MIT
// The Twitter importer parses lines of the common shape on a fast path (whole lines in the read buffer,
// parsed without being split into fields) and leaves every other line to the general parser. A line
// ended by "\r\n" always goes to the general parser, so the same lines ended both ways must import
// alike: requests, rejects by reason, and the lines the rejects name.

#include "layoutlab/import/importer.h"
#include "line_importer.h"
#include "scratch_dir.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <random>

using namespace layoutlab;

namespace {

struct Imported {
    std::vector<Request> requests;
    std::optional<std::string> error; // the path replaced by "FILE"
    RejectReport rejects;
};

std::string withoutPath(std::string text, const std::string& path) {
    for (std::size_t at; (at = text.find(path)) != std::string::npos;)
        text.replace(at, path.size(), "FILE");
    return text;
}

enum class Hashing { AsParsed, WhenResolved, Either };

// `hashing`: who hashes the keys. Either: the importer as users get it, on two threads where the host
// has two CPUs, hashing where there is time to spare; the others pin it down on one thread.
Imported importText(
    const std::filesystem::path& path, const std::string& content, OnError onError, Hashing hashing = Hashing::Either) {
    std::ofstream(path, std::ios::binary) << content;
    Imported out;
    ImportOptions options { "twitter", onError, 16 };
    options.decodeAhead = hashing == Hashing::Either;
    auto importer = openImporter(path.string(), options);
    if (!importer) {
        out.error = withoutPath(importer.error().describe(), path.string());
        return out;
    }
    if (hashing != Hashing::Either)
        static_cast<LineImporter&>(**importer).setHashLater(hashing == Hashing::WhenResolved);
    std::vector<Request> batch(700); // not a divisor of the importer's batches
    while (true) {
        auto n = (*importer)->read(batch);
        if (!n) {
            out.error = withoutPath(n.error().describe(), path.string());
            break;
        }
        if (*n == 0)
            break;
        out.requests.insert(out.requests.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*n));
    }
    out.rejects = (*importer)->rejects();
    for (auto& example : out.rejects.examples)
        example = withoutPath(example, path.string());
    return out;
}

// A number of `digits` digits (0: an empty field), sometimes with a sign or a letter in it.
std::string number(std::mt19937_64& random, int digits) {
    std::string text;
    for (int i = 0; i < digits; ++i)
        text += static_cast<char>('0' + random() % 10);
    switch (random() % 40) {
    case 0:
        return "-" + text;
    case 1:
        return "+" + text;
    case 2:
        return text + "x";
    default:
        return text;
    }
}

int someDigits(std::mt19937_64& random) {
    // Mostly short, as in real traces; now and then empty, 8 to 10 digits (the fast path's limit and
    // past it), or past 4 GiB.
    switch (random() % 30) {
    case 0:
        return 0;
    case 1:
        return 8;
    case 2:
        return 9;
    case 3:
        return 10 + static_cast<int>(random() % 12);
    default:
        return 1 + static_cast<int>(random() % 4);
    }
}

// Lines of every shape the format allows and many it does not.
std::vector<std::string> mixedLines(std::size_t count) {
    static const std::vector<std::string> ops { "get", "gets", "set", "add", "replace", "cas", "append", "prepend",
        "delete", "incr", "decr", "GET", "flip", "", "se", "sett" };
    std::mt19937_64 random(20261130);
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < count; ++i) {
        std::string key = "k" + std::to_string(random() % 500);
        switch (random() % 12) {
        case 0:
            key += ",with,commas";
            break;
        case 1:
            key = "";
            break;
        case 2:
            key += std::string(random() % 300, 'x'); // long keys: lines past one 16-byte scan
            break;
        case 3:
            key = "1,2,3,set,4"; // a key that looks like fields
            break;
        case 4:
            key += "\r";
            break;
        default:
            break;
        }
        const std::string& op = random() % 5 ? ops[random() % 3] : ops[random() % ops.size()];
        std::string line = fmt::format("{},{},{},{},{},{},{}", number(random, 1 + static_cast<int>(random() % 9)), key,
            number(random, someDigits(random)), number(random, someDigits(random)), number(random, someDigits(random)),
            op, number(random, someDigits(random)));
        switch (random() % 25) {
        case 0:
            line = line.substr(0, line.rfind(',')); // six fields
            break;
        case 1:
            line += ",9"; // eight fields: the key takes a comma
            break;
        case 2:
            line = "";
            break;
        case 3:
            line = line.substr(0, static_cast<std::size_t>(random() % (line.size() + 1)));
            if (!line.empty() && line.back() == '\r')
                line.pop_back(); // a line's own final "\r" is its ending's
            break;
        default:
            break;
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

std::string joined(const std::vector<std::string>& lines, const char* ending) {
    std::string text;
    for (const auto& line : lines)
        text += line + ending;
    return text;
}

class TwitterFastPathTest : public ScratchDirTest { };

void expectAlike(const Imported& fast, const Imported& general) {
    EXPECT_EQ(fast.error, general.error);
    ASSERT_EQ(fast.requests.size(), general.requests.size());
    for (std::size_t i = 0; i < fast.requests.size(); ++i)
        ASSERT_EQ(fast.requests[i], general.requests[i]) << "request " << i;
    EXPECT_EQ(fast.rejects.total, general.rejects.total);
    EXPECT_EQ(fast.rejects.byReason, general.rejects.byReason);
    EXPECT_EQ(fast.rejects.examples, general.rejects.examples);
}

} // namespace

TEST_F(TwitterFastPathTest, EveryLineImportsAsTheGeneralParserHasIt) {
    // 20,000 lines (over 1 MB: the read buffer is refilled many times, cutting lines anywhere).
    const auto lines = mixedLines(20000);
    const auto fast = importText(m_dir / "lf.csv", joined(lines, "\n"), OnError::Skip);
    const auto general = importText(m_dir / "crlf.csv", joined(lines, "\r\n"), OnError::Skip);
    ASSERT_FALSE(fast.error) << *fast.error;
    expectAlike(fast, general);
    // The mix has both kinds of line in earnest.
    EXPECT_GT(fast.requests.size(), 5000u);
    EXPECT_GT(fast.rejects.total, 1000u);
    EXPECT_GE(fast.rejects.byReason.size(), 5u);
}

TEST_F(TwitterFastPathTest, TheFirstBadLineStopsTheImportAtTheSameLine) {
    // Only valid lines up to one bad one deep in the file.
    std::vector<std::string> valid;
    for (std::size_t i = 0; valid.size() < 2500; ++i)
        valid.push_back(fmt::format(
            "{},key{},{},{},3,{},{}", i / 10, i % 700, 4 + i % 60, i % 5000, i % 3 ? "get" : "set", i % 7 ? 0 : 86400));
    valid.push_back("7,key1,16,12345678901,3,set,0");
    valid.push_back("8,key2,16,1,3,set,0");
    const auto fast = importText(m_dir / "lf.csv", joined(valid, "\n"), OnError::Fail);
    const auto general = importText(m_dir / "crlf.csv", joined(valid, "\r\n"), OnError::Fail);
    ASSERT_TRUE(fast.error);
    EXPECT_NE(fast.error->find("line 2501"), std::string::npos) << *fast.error;
    EXPECT_NE(fast.error->find("value_size"), std::string::npos) << *fast.error;
    expectAlike(fast, general);
}

TEST_F(TwitterFastPathTest, AFinalLineWithoutNewlineAndOneLongerThanTheBuffer) {
    // The last line has no "\n" (the general parser takes it); one key is longer than the 64 KiB the
    // reader starts with, so its line is whole in the buffer only once the buffer has grown.
    std::vector<std::string> lines;
    for (int i = 0; i < 100; ++i)
        lines.push_back(fmt::format("{},key{},5,{},1,set,0", i, i, i));
    lines.push_back("100," + std::string(100000, 'k') + ",5,10,1,set,0");
    lines.push_back("101,key1,5,0,1,get,0");
    std::string lf = joined(lines, "\n");
    lf.pop_back();
    std::string crlf = joined(lines, "\r\n");
    crlf.resize(crlf.size() - 2);
    const auto fast = importText(m_dir / "lf.csv", lf, OnError::Fail);
    const auto general = importText(m_dir / "crlf.csv", crlf, OnError::Fail);
    ASSERT_FALSE(fast.error) << *fast.error;
    ASSERT_EQ(fast.requests.size(), 102u);
    EXPECT_EQ(fast.requests.back().valueBytes, 1u); // key1's last size
    expectAlike(fast, general);
}

TEST_F(TwitterFastPathTest, KeysHashedAsParsedOrWhenResolvedImportAlike) {
    // On two threads, the keys of a batch are hashed by the parser or by the caller's thread, whichever
    // has time to spare; a key hashed later is copied into its batch, and a rejected line's keys are
    // taken out again. Both ways, through the fast path ("\n") and the general parser ("\r\n").
    const auto lines = mixedLines(20000);
    for (const char* ending : { "\n", "\r\n" }) {
        SCOPED_TRACE(ending[0] == '\n' ? "fast path" : "general parser");
        const auto text = joined(lines, ending);
        const auto asParsed = importText(m_dir / "a.csv", text, OnError::Skip, Hashing::AsParsed);
        const auto whenResolved = importText(m_dir / "b.csv", text, OnError::Skip, Hashing::WhenResolved);
        ASSERT_FALSE(asParsed.error) << *asParsed.error;
        EXPECT_GT(asParsed.requests.size(), 5000u);
        EXPECT_GT(asParsed.rejects.total, 1000u);
        expectAlike(asParsed, whenResolved);
    }
    // Keys are copied for later hashing up to 1 MiB a batch, the rest hashed as parsed: long keys, with
    // short ones between them, cross that limit within a batch.
    std::vector<std::string> longKeys;
    for (int i = 0; i < 60; ++i)
        longKeys.push_back(fmt::format(
            "{},{}{},5,{},1,{},0", i, std::string(i % 3 ? 20 : 100000, 'k'), i % 7, i, i % 4 ? "get" : "set"));
    const auto text = joined(longKeys, "\n");
    const auto asParsed = importText(m_dir / "a.csv", text, OnError::Fail, Hashing::AsParsed);
    const auto whenResolved = importText(m_dir / "b.csv", text, OnError::Fail, Hashing::WhenResolved);
    ASSERT_FALSE(asParsed.error) << *asParsed.error;
    EXPECT_EQ(asParsed.requests.size(), 60u);
    expectAlike(asParsed, whenResolved);
}

TEST_F(TwitterFastPathTest, KeysHeldForLaterHashingStayUnderTheirLimit) {
    // 60 keys of 100 KB in one batch: the first ten are held for the resolving thread to hash, the rest
    // are hashed as they are parsed, so the batch never holds more than 1 MiB of keys.
    std::vector<std::string> lines;
    for (int i = 0; i < 60; ++i)
        lines.push_back(fmt::format("{},{}{},5,{},1,get,0", i, std::string(100000, 'k'), i, i));
    const auto path = m_dir / "long.csv";
    std::ofstream(path, std::ios::binary) << joined(lines, "\n");
    ImportOptions options { "twitter", OnError::Fail, 16 };
    options.decodeAhead = false;
    auto importer = openImporter(path.string(), options);
    ASSERT_TRUE(importer) << importer.error().describe();
    auto& lineImporter = static_cast<LineImporter&>(**importer);
    lineImporter.setHashLater(true);
    LineImporter::ParsedBatch batch;
    lineImporter.parseBatch(batch);
    ASSERT_EQ(batch.requests.size(), 60u);
    EXPECT_LE(batch.keys.size(), LineImporter::HeldKeys::kLimit);
    const auto heldBack = std::count_if(batch.pending.begin(), batch.pending.end(),
        [](const LineImporter::Pending& p) { return (p.flags & LineImporter::kHashLater) != 0; });
    EXPECT_EQ(heldBack, 10);
}

TEST(LineReaderTest, FindNewlinesGivesEveryNewlineAsAByteScanDoes) {
    // Buffers from empty to a few kilobytes, with newlines from none to every byte (blocks of 64 bytes
    // holding 0 to 64 of them), at every alignment, asked for up to various limits.
    std::mt19937_64 random(7);
    for (int round = 0; round < 3000; ++round) {
        const std::size_t size = random() % 3000;
        const unsigned everyNth = 1 + static_cast<unsigned>(random() % 80); // newline density
        std::string buffer(size + 1, 'x');
        for (auto& c : buffer)
            if (random() % everyNth == 0)
                c = '\n';
        const char* const begin = buffer.data() + 1 - round % 2; // odd and even starts
        const std::size_t limit = 1 + random() % 300;
        std::vector<std::uint32_t> expected;
        for (std::size_t i = 0; i < size; ++i)
            if (begin[i] == '\n')
                expected.push_back(static_cast<std::uint32_t>(i));
        std::vector<std::uint32_t> offsets(limit + LineReader::kNewlineSlack);
        const std::size_t found = LineReader::findNewlines(begin, begin + size, offsets.data(), limit);
        // At least `limit` where there are that many, all of them otherwise; each one right.
        ASSERT_GE(found, std::min(limit, expected.size())) << "round " << round;
        ASSERT_LE(found, expected.size()) << "round " << round;
        ASSERT_LE(found, limit + LineReader::kNewlineSlack) << "round " << round;
        for (std::size_t i = 0; i < found; ++i)
            ASSERT_EQ(offsets[i], expected[i]) << "round " << round << ", newline " << i;
    }
}
