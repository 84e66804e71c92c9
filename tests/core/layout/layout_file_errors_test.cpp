// SPDX-License-Identifier: MIT
// Malformed layout files: each is refused whole, with the line, the field and why.
#include "layoutlab/layout/layout_file.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

// A small valid file; the tests below break one thing in it at a time.
const std::string kValid = R"([layout]
name = "tiny"

[threshold]
default = 64

[index]
structure = "valkey-hashtable"

[embed]
rule = "total-at-most-threshold"
into = "object"

[[allocation]]
name = "object"
indexed_by = "keyspace"
fields = [
  { name = "header", bytes = 8 },
  { name = "ptr", bytes = 8, pointer = true, points_to = "value", when = "not embedded" },
  { name = "key", string = "key", header_bytes = 1, terminator_bytes = 1 },
  { name = "value", string = "value", header_bytes = 3, terminator_bytes = 1, when = "embedded" },
]

[[allocation]]
name = "value"
purpose = "value"
when = "raw"
fields = [ { name = "value", string = "value", header_bytes = 3, terminator_bytes = 1 } ]
)";

std::string replaced(const std::string& from, const std::string& to) {
    std::string text = kValid;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// The one-line message of a file that must be refused.
std::string errorOf(const std::string& text) {
    auto def = parseLayoutDefinition(text, "bad.toml");
    EXPECT_FALSE(def) << "accepted:\n" << text;
    return def ? std::string() : def.error().describe();
}

TEST(LayoutFileErrors, TheValidFileLoads) {
    auto def = parseLayoutDefinition(kValid, "tiny.toml");
    ASSERT_TRUE(def) << def.error().describe();
    EXPECT_EQ(def->allocations.size(), 2u);
    EXPECT_EQ(def->allocations[0].fields[1].pointsTo, 1);
}

TEST(LayoutFileErrors, UnknownFieldNamesItsLine) {
    EXPECT_EQ(errorOf(replaced("rule = ", "colour = \"red\"\nrule = ")),
        "bad.toml: line 11: field embed.colour: unknown field (known here: rule, into, limit, max_value_bytes, "
        "client_value_limit, encoding)");
    EXPECT_EQ(errorOf(replaced("{ name = \"header\", bytes = 8 }", "{ name = \"header\", byte = 8 }")),
        "bad.toml: line 18: field allocation.object.fields.header: needs 'bytes' (a fixed size) or 'string' (\"key\" "
        "or "
        "\"value\")");
}

TEST(LayoutFileErrors, NegativeSize) {
    EXPECT_EQ(errorOf(replaced("name = \"header\", bytes = 8", "name = \"header\", bytes = -8")),
        "bad.toml: line 18: field allocation.object.fields.header.bytes: negative size -8");
}

TEST(LayoutFileErrors, EmbedRuleThatCanNeverHold) {
    EXPECT_EQ(errorOf(replaced("{ name = \"header\", bytes = 8 }", "{ name = \"header\", bytes = 2000 }")),
        "bad.toml: line 10: field embed.rule: the embed rule can never hold: even a 1-byte key with an empty value is "
        "not embedded at the largest threshold (1024 bytes, [threshold] max)");
    EXPECT_NE(errorOf(replaced("[threshold]\ndefault = 64\n", ""))
                  .find("field embed.rule: this rule compares with the "
                        "threshold, but the file has no [threshold] table"),
        std::string::npos);
}

TEST(LayoutFileErrors, CyclicPointer) {
    const auto text
        = replaced("fields = [ { name = \"value\", string = \"value\", header_bytes = 3, terminator_bytes = 1 } ]",
            "fields = [ { name = \"value\", string = \"value\", header_bytes = 3, terminator_bytes = 1 },\n"
            "  { name = \"back\", bytes = 8, pointer = true, points_to = \"object\" } ]");
    EXPECT_EQ(errorOf(text),
        "bad.toml: line 29: field allocation.value.fields.back.points_to: cyclic pointer: object.ptr -> value, "
        "value.back -> object");
}

TEST(LayoutFileErrors, NamesThatReferToNothing) {
    EXPECT_NE(errorOf(replaced("points_to = \"value\"", "points_to = \"valu\""))
                  .find("line 19: field "
                        "allocation.object.fields.ptr."
                        "points_to: no allocation is "
                        "named 'valu'"),
        std::string::npos);
    EXPECT_NE(
        errorOf(replaced("into = \"object\"", "into = \"objet\"")).find("line 12: field embed.into: no allocation"),
        std::string::npos);
    EXPECT_NE(errorOf(replaced("header_bytes = 1, terminator", "length_header = \"sds\", terminator"))
                  .find("no [length_headers.sds] table defines 'sds'"),
        std::string::npos);
}

TEST(LayoutFileErrors, StructuralMistakes) {
    // The value stored nowhere when it is not embedded.
    EXPECT_NE(errorOf(replaced("{ name = \"value\", string = \"value\", header_bytes = 3, terminator_bytes = 1 } ]",
                          "{ name = \"value\", bytes = 4 } ]"))
                  .find("raw value is stored in fields holding"),
        std::string::npos);
    EXPECT_NE(errorOf(replaced("{ name = \"value\", string = \"value\", header_bytes = 3, terminator_bytes = 1 } ]",
                          "{ name = \"value\", bytes = 4, header_bytes = 3 } ]"))
                  .find("field allocation.value.fields.value.header_bytes: applies to string fields only"),
        std::string::npos);
    // Nothing the keyspace points to.
    EXPECT_NE(errorOf(replaced("indexed_by = \"keyspace\"\n", "")).find("no allocation has indexed_by = \"keyspace\""),
        std::string::npos);
    // An allocation nothing reaches.
    EXPECT_NE(errorOf(replaced(", points_to = \"value\"", "")).find("field allocation.value: unreachable"),
        std::string::npos);
    // A bad condition, a wrong type, bad TOML.
    EXPECT_NE(errorOf(replaced("when = \"not embedded\"", "when = \"not embeded\"")).find("unknown atom 'embeded'"),
        std::string::npos);
    EXPECT_NE(errorOf(replaced("default = 64", "default = \"64\""))
                  .find("field threshold.default: must be a whole "
                        "number of bytes"),
        std::string::npos);
    EXPECT_NE(
        errorOf(replaced("name = \"tiny\"", "name = \"tiny")).find("bad.toml: line 2: not a valid TOML layout file"),
        std::string::npos);
    EXPECT_NE(errorOf("").find("needs a [layout] table"), std::string::npos);
    // The shrink limit takes one decimal (Valkey 8.0's 12.5), not two; [ttl] knows two choices.
    EXPECT_NE(
        errorOf(replaced("structure = \"valkey-hashtable\"", "structure = \"valkey-dict\"\nmin_fill_percent = 12.25"))
            .find("field index.min_fill_percent: 12.25 has more than one decimal"),
        std::string::npos);
    EXPECT_TRUE(parseLayoutDefinition(
        replaced("structure = \"valkey-hashtable\"", "structure = \"valkey-dict\"\nmin_fill_percent = 12.5"),
        "ok.toml"));
    EXPECT_NE(errorOf(replaced("[index]", "[ttl]\nstale_expire = \"forever\"\n\n[index]"))
                  .find("field ttl.stale_expire: unknown value 'forever' (one of: kept, dropped)"),
        std::string::npos);
}

TEST(LayoutFileErrors, ChunkedLayoutsLeaveRoomForTheirChunks) {
    std::string text = "[layout]\nname = \"many\"\nallocators = \"slabs\"\nallocator = \"memcached\"\n"
                       "[index]\nstructure = \"memcached-assoc\"\n[chunking]\n";
    text += "[[allocation]]\nname = \"a0\"\nindexed_by = \"keyspace\"\nfields = [ { name = \"key\", string = "
            "\"key\" }, { name = \"value\", string = \"value\" }, { name = \"p\", bytes = 8, pointer = true, "
            "points_to = \"a1\" } ]\n";
    for (int i = 1; i < 7; ++i)
        text += "[[allocation]]\nname = \"a" + std::to_string(i)
            + "\"\nfields = [ { name = \"p\", bytes = 8, pointer "
              "= true, points_to = \"a"
            + std::to_string(i + 1) + "\" } ]\n";
    text += "[[allocation]]\nname = \"a7\"\nfields = [ { name = \"x\", bytes = 8 } ]\n";
    EXPECT_NE(
        errorOf(text).find("field chunking: a chunked layout has at most 6 allocations per key"), std::string::npos)
        << errorOf(text);
}

TEST(LayoutFileErrors, MissingFileIsAnIoError) {
    auto layout = loadLayoutFile("/nonexistent/layout.toml");
    ASSERT_FALSE(layout);
    EXPECT_EQ(layout.error().code, ErrorCode::Io);
}

} // namespace
