// SPDX-License-Identifier: MIT
#include "layoutlab/collect/element_commands.h"

#include "layoutlab/layout/collection_layout.h"

#include "layoutlab/trace/random.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <optional>

namespace layoutlab {

namespace {

// Wide enough for every count of integers of one length and class (a long long's whole range and more).
__extension__ typedef __int128 Wide;

struct Range {
    Wide low = 0;
    Wide high = -1; // empty when high < low
    Wide count() const { return high >= low ? high - low + 1 : 0; }
};

Range intersect(Range a, Range b) {
    return { std::max(a.low, b.low), std::min(a.high, b.high) };
}

Wide powerOfTen(std::uint32_t e) {
    Wide v = 1;
    for (std::uint32_t i = 0; i < e; ++i)
        v *= 10;
    return v;
}

// The integers of each class (value_kind.h integerClassOf, listpack.c lpEncodeIntegerGetType): the positive
// part, then the negative part.
std::array<Range, 2> classRanges(IntegerClass cls) {
    constexpr Wide kMin = std::numeric_limits<std::int64_t>::min();
    constexpr Wide kMax = std::numeric_limits<std::int64_t>::max();
    switch (cls) {
    case IntegerClass::Uint7:
        return { Range { 0, 127 }, Range {} };
    case IntegerClass::Int13:
        return { Range { 128, 4095 }, Range { -4096, -1 } };
    case IntegerClass::Int16:
        return { Range { 4096, 32767 }, Range { -32768, -4097 } };
    case IntegerClass::Int24:
        return { Range { 32768, 8388607 }, Range { -8388608, -32769 } };
    case IntegerClass::Int32:
        return { Range { 8388608, 2147483647 }, Range { -2147483648LL, -8388609 } };
    case IntegerClass::Int64:
        return { Range { 2147483648LL, kMax }, Range { kMin, -2147483649LL } };
    case IntegerClass::None:
        break;
    }
    return {};
}

// The integers printed in exactly `bytes` characters: positive (no leading zero), and negative.
std::array<Range, 2> lengthRanges(std::uint32_t bytes) {
    Range positive, negative;
    if (bytes >= 1 && bytes <= 19)
        positive = { bytes == 1 ? 0 : powerOfTen(bytes - 1), powerOfTen(bytes) - 1 };
    if (bytes >= 2 && bytes <= 20)
        negative = { -(powerOfTen(bytes - 1) - 1), bytes == 2 ? -1 : -powerOfTen(bytes - 2) };
    return { positive, negative };
}

std::string printed(Wide v) {
    return fmt::format("{}", static_cast<std::int64_t>(v));
}

constexpr std::string_view kLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
constexpr std::string_view kChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

// How many texts of `bytes` letters and digits, a letter first, there are (saturated).
Wide letterTexts(std::uint32_t bytes) {
    if (bytes == 0)
        return 1;
    Wide count = kLetters.size();
    for (std::uint32_t i = 1; i < bytes && count < Wide { UINT64_MAX }; ++i)
        count *= kChars.size();
    return std::min(count, Wide { UINT64_MAX });
}

// The `n`th such text: never an integer string2ll takes, nor a float strtold does.
std::string letterText(std::uint32_t bytes, Wide n) {
    std::string out(bytes, 'x');
    if (bytes == 0)
        return out;
    out[0] = kLetters[static_cast<std::size_t>(n % kLetters.size())];
    n /= kLetters.size();
    for (std::uint32_t i = 1; i < bytes && n; ++i) {
        out[i] = kChars[static_cast<std::size_t>(n % kChars.size())];
        n /= kChars.size();
    }
    return out;
}

} // namespace

bool elementText(std::uint32_t bytes, IntegerClass cls, std::uint64_t n, std::string& out, std::uint64_t first) {
    if (cls != IntegerClass::None) {
        const auto classes = classRanges(cls);
        const auto lengths = lengthRanges(bytes);
        const Range positive = intersect(classes[0], lengths[0]);
        const Range negative = intersect(classes[1], lengths[1]);
        const Wide total = positive.count() + negative.count();
        if (total > 0) {
            const Wide at = (Wide { first } + n) % total;
            out = printed(at < positive.count() ? positive.low + at : negative.low + (at - positive.count()));
            return Wide { n } < total;
        }
        // No integer of this class is this long: a string of the length.
        out = letterText(bytes, (Wide { first } + n) % letterTexts(bytes));
        return false;
    }
    const Wide total = letterTexts(bytes);
    out = letterText(bytes, (Wide { first } + n) % total);
    return Wide { n } < total; // else the name repeats one made before
}

namespace {
// Texts of `shortest` characters, digits around one point, whose number prints back as them (the shortest
// text that reads back) and in "%.17g" (Redis 7.0's util.c d2string) in `seventeen` characters: drawn from a
// fixed sequence, the first that fits remembered for each pair of lengths.
std::optional<std::string> printedInSeventeen(std::uint32_t shortest, std::uint32_t seventeen) {
    thread_local std::map<std::pair<std::uint32_t, std::uint32_t>, std::optional<std::string>> found;
    const auto [at, made] = found.try_emplace({ shortest, seventeen });
    if (!made || shortest < 3 || shortest > 18)
        return at->second;
    std::uint64_t state = std::uint64_t { shortest } << 32 | seventeen;
    auto digit = [&state](char from) { return static_cast<char>(from + Random::splitmix64(state) % ('9' - from + 1)); };
    for (int tries = 0; tries < 20000; ++tries) {
        const std::uint32_t point = 1 + static_cast<std::uint32_t>(Random::splitmix64(state) % (shortest - 2));
        std::string text(shortest, '.');
        for (std::uint32_t i = 0; i < shortest; ++i)
            if (i != point) // no leading zero but "0.", no trailing one
                text[i] = digit((i == 0 && point > 1) || i + 1 == shortest ? '1' : '0');
        const double v = std::strtod(text.c_str(), nullptr);
        std::array<char, 40> shortestText {}, printed {};
        const auto end = std::to_chars(shortestText.data(), shortestText.data() + shortestText.size(), v).ptr;
        const auto printedEnd // as "%.17g" prints it
            = std::to_chars(printed.data(), printed.data() + printed.size(), v, std::chars_format::general, 17).ptr;
        if (std::string_view(shortestText.data(), static_cast<std::size_t>(end - shortestText.data())) == text
            && printedEnd - printed.data() == static_cast<std::ptrdiff_t>(seventeen)) {
            at->second = text;
            break;
        }
    }
    return at->second;
}
// "1." and the digits of 2^-k, k = length - 2 (2^-k = 5^k / 10^k): a text of `length` characters, 3 to 18.
std::string onePlusPowerOfHalf(std::uint32_t length) {
    const std::uint32_t k = length - 2;
    std::uint64_t fivePower = 1;
    for (std::uint32_t i = 0; i < k; ++i)
        fivePower *= 5;
    return fmt::format("1.{:0>{}}", fivePower, k);
}
} // namespace

bool scoreText(std::uint32_t packed, IntegerClass cls, std::string& out) {
    const std::uint32_t bytes = shortestScoreBytes(packed), seventeen = seventeenDigitScoreBytes(packed);
    if (cls != IntegerClass::None)
        return elementText(bytes, cls, 0, out);
    if (bytes == 2) {
        out = "-0"; // the one score of two characters that is not an integer: d2string's negative zero
        return true;
    }
    // 1 + 2^-k prints in full in k fraction digits (2^-k = 5^k / 10^k), within the 17 significant digits
    // d2string keeps: from "1.5" (3 characters) to 16 fraction digits (18).
    constexpr std::uint32_t kShortest = 3, kLongest = 18;
    if (seventeen == 0 && bytes >= kShortest && bytes <= kLongest) {
        out = onePlusPowerOfHalf(bytes);
        return true;
    }
    const std::uint32_t printed = seventeen != 0 ? seventeen : bytes;
    if (auto text = printedInSeventeen(bytes, printed)) {
        out = std::move(*text);
        return true;
    }
    // A negative number's texts are a sign longer (a weighted sum's, a score given below 0).
    if (bytes > kShortest && printed > kShortest)
        if (auto text = printedInSeventeen(bytes - 1, printed - 1)) {
            out = "-" + *text;
            return true;
        }
    out = onePlusPowerOfHalf(std::clamp(bytes, kShortest, kLongest)); // the nearest length there is
    return false;
}

ElementCommandWriter::Key& ElementCommandWriter::keyOf(std::uint32_t keyId) {
    auto [at, made] = m_keys.try_emplace(keyId);
    if (made) {
        std::uint64_t seed = keyId;
        at->second.firstName = Random::splitmix64(seed);
    }
    return at->second;
}

std::string ElementCommandWriter::newName(Key& key, std::uint32_t bytes, IntegerClass cls) {
    std::string name;
    auto& made = key.made[shapeKey(bytes, cls)];
    if (!elementText(bytes, cls, made++, name, key.firstName))
        ++m_approximated;
    return name;
}

std::string ElementCommandWriter::take(Key& key, const Shape& shape) {
    const auto found = key.held.find(shape);
    if (found == key.held.end() || found->second.empty()) {
        ++m_unmatched;
        return {};
    }
    std::string name = std::move(found->second.back());
    found->second.pop_back();
    if (found->second.empty())
        key.held.erase(found);
    return name;
}

std::string ElementCommandWriter::value(std::uint32_t bytes, IntegerClass cls) {
    std::string text;
    if (!elementText(bytes, cls, 0, text))
        ++m_approximated;
    return text;
}

std::string ElementCommandWriter::score(std::uint32_t bytes, IntegerClass cls) {
    std::string text;
    if (!scoreText(bytes, cls, text))
        ++m_approximated;
    return text;
}

void ElementCommandWriter::add(
    std::uint32_t keyId, std::vector<std::string> words, Command whole, std::vector<Command>& out) {
    if (!m_pending || m_pending->keyId != keyId) {
        flush(out);
        out.push_back(std::move(whole));
        return;
    }
    Command& held = m_pending->command;
    if (held.empty())
        held = { whole[0], whole[1] }; // the verb and the key
    for (auto& w : words)
        held.push_back(std::move(w));
    if (--m_pending->remaining == 0)
        flush(out);
}

void ElementCommandWriter::removed(std::uint32_t keyId, Key& key) {
    if (key.elements > 0 && --key.elements == 0)
        m_keys.erase(keyId); // the server deletes a collection with its last element
}

void ElementCommandWriter::flush(std::vector<Command>& out) {
    sendUnion(out);
    if (m_pending && m_pending->intersection && !m_pending->command.empty())
        intersectionRebuilt(std::move(m_pending->command), out);
    else if (m_pending && !m_pending->command.empty())
        out.push_back(std::move(m_pending->command));
    m_pending.reset();
    sendRemovals(out);
}

void ElementCommandWriter::intersectionRebuilt(Command members, std::vector<Command>& out) {
    const std::string key = members[1];
    members.insert(members.begin() + 2, "~");
    out.push_back(std::move(members));
    out.push_back({ "SREM", key, "~" });
    out.push_back({ "SINTERSTORE", key, key });
}

void ElementCommandWriter::sendRemovals(std::vector<Command>& out) {
    if (!m_removals)
        return;
    Removals held = std::move(*m_removals);
    m_removals.reset();
    if (held.byRange) {
        Command mark { "ZADD", held.key, "XX" };
        for (auto& name : held.names) {
            mark.push_back("-inf");
            mark.push_back(std::move(name));
        }
        out.push_back(std::move(mark));
        out.push_back({ "ZREMRANGEBYSCORE", held.key, "-inf", "-inf" });
        return;
    }
    const char* verb = held.collection == CollectionKind::Hash ? "HDEL"
        : held.collection == CollectionKind::Set               ? "SREM"
                                                               : "ZREM";
    Command command { verb, std::move(held.key) };
    for (auto& name : held.names)
        command.push_back(std::move(name));
    out.push_back(std::move(command));
}

void ElementCommandWriter::before(const Request& r, std::vector<Command>& out) {
    flush(out);
    if (r.op == Op::Set || r.op == Op::Replace || r.op == Op::Delete)
        m_keys.erase(r.keyId);
}

void ElementCommandWriter::insertBesidePlace(
    const Request& r, const std::string& key, std::string element, std::vector<Command>& out) {
    // The pivot's text is made up, so it is marked first: LSET puts there a string of '~' whose listpack entry
    // is as long as the pivot's (listpack.c: a string of up to 63 bytes takes its length and two), in place;
    // LINSERT finds it from the head, the only one; LSET then gives the place a made-up text of the pivot's
    // length and class, the same entry again.
    const ElementOp op = r.elementOp();
    const std::uint64_t entry = listpack::entryBytes(r.valueBytes, op.value);
    const std::string mark = op.value == IntegerClass::None ? std::string(r.valueBytes, '~')
                                                            : std::string(entry - 2, '~'); // an integer's: 2 to 10
    const std::uint64_t pivot = r.priorBytes() - 1;
    out.push_back({ "LSET", key, std::to_string(pivot), mark });
    out.push_back({ "LINSERT", key, op.atHead ? "BEFORE" : "AFTER", mark, std::move(element) });
    out.push_back({ "LSET", key, std::to_string(op.atHead ? pivot + 1 : pivot), value(r.valueBytes, op.value) });
}

Status ElementCommandWriter::listCommand(const Request& r, const std::string& key, std::vector<Command>& out) {
    const ElementOp op = r.elementOp();
    Key& state = keyOf(r.keyId);
    switch (op.action) {
    case ElementAction::Add: {
        std::string text = value(r.elementBytes, op.element);
        ++state.elements;
        if (r.priorBytes() > 0) { // LINSERT beside the pivot priorBytes - 1 places from the head (request.h)
            m_pending.reset();
            insertBesidePlace(r, key, std::move(text), out);
            break;
        }
        add(r.keyId, { text }, { op.atHead ? "LPUSH" : "RPUSH", key, text }, out);
        break;
    }
    case ElementAction::Remove:
        flush(out);
        if (r.valueBytes > 0) {
            // request.h: the element valueBytes - 1 places from the head (LREM). Its text is made up, so it is
            // marked first: a one-byte string LSET puts there in place (lpReplace, a node no larger), which LREM
            // then finds from the head, the only one (no made-up element is "~").
            out.push_back({ "LSET", key, std::to_string(r.valueBytes - 1), "~" });
            out.push_back({ "LREM", key, "1", "~" });
        } else {
            out.push_back({ op.atHead ? "LPOP" : "RPOP", key });
        }
        removed(r.keyId, state);
        break;
    case ElementAction::Update: // request.h: the place from the head in valueBytes
        flush(out);
        out.push_back({ "LSET", key, std::to_string(r.valueBytes), value(r.elementBytes, op.element) });
        break;
    default:
        break;
    }
    return Ok {};
}

bool ElementCommandWriter::namedAgain(const Request& r, const std::string& key, std::vector<Command>& out) {
    const ElementOp op = r.elementOp();
    Key& state = keyOf(r.keyId);
    // Any held name of the member's length and class: its score, the one it was sent with, is kept, so the
    // server finds it unchanged, as the capture's did (t_zset.c zsetAdd; t_set.c setTypeAdd returns 0).
    for (auto at = state.held.lower_bound(Shape { r.elementBytes, 0, IntegerClass::None, IntegerClass::None });
         at != state.held.end() && at->first.bytes == r.elementBytes; ++at) {
        if (at->first.cls != op.element || at->second.empty())
            continue;
        const std::string name = at->second.back();
        if (op.collection == CollectionKind::Set)
            add(r.keyId, { name }, { "SADD", key, name }, out);
        else {
            std::string text = score(at->first.valueBytes, at->first.valueClass);
            add(r.keyId, { text, name }, { "ZADD", key, text, name }, out);
        }
        return true;
    }
    return false;
}

Status ElementCommandWriter::write(const Request& r, const std::string& key, std::vector<Command>& out) {
    const ElementOp op = r.elementOp();
    if (m_union) {
        const bool continues = r.keyId == m_union->keyId() && op.collection == CollectionKind::SortedSet
            && (op.action == ElementAction::Size || op.action == ElementAction::Add
                || (op.action == ElementAction::Read && r.valueBytes == kFoundForInsert));
        if (continues)
            return unionWrite(r, out);
        sendUnion(out);
    }
    if (op.action == ElementAction::Size)
        return Ok {}; // what the replay knows of an element (request.h): nothing for the server to do
    if (op.action == ElementAction::Load)
        return usageError("the trace holds keys loaded from a snapshot: drive the RDB file itself, which the server "
                          "loads as it would its own");
    if (op.action == ElementAction::Read) {
        // A lookup moves a rehashing table on by a step (dict.c _dictRehashStep, hashtable.c
        // rehashStepOnReadIfNeeded), and a table that is still rehashing is not resized: the lookups are sent
        // for that. Which element is looked up changes nothing; a list's read changes nothing at all.
        if (op.collection == CollectionKind::List)
            return Ok {};
        if (op.collection == CollectionKind::Set && r.valueBytes == kRandomDraw) {
            // A member drawn at random (SPOP's): SRANDMEMBER draws one as the server does, with its steps.
            flush(out);
            out.push_back({ "SRANDMEMBER", key });
            return Ok {};
        }
        if (m_removals && m_removals->keyId == r.keyId && !m_removals->byRange) {
            // A field or member a removal command names and the key does not hold (HDEL h a x b): looked up
            // within that command, by a name the key has not had (the next one of its shape).
            Key& state = keyOf(r.keyId);
            std::string absent;
            if (!elementText(r.elementBytes, op.element, state.made[shapeKey(r.elementBytes, op.element)], absent,
                    state.firstName))
                ++m_approximated;
            m_removals->names.push_back(std::move(absent));
            return Ok {};
        }
        const bool withinCommand = m_pending && m_pending->keyId == r.keyId;
        if (withinCommand && op.collection != CollectionKind::Hash && namedAgain(r, key, out))
            return Ok {};
        if (!withinCommand)
            flush(out);
        // Else a member the key does not hold (ZADD XX's): its lookup goes before the command, which is not split.
        std::string text;
        elementText(r.elementBytes, op.element, 0, text);
        const char* verb = op.collection == CollectionKind::Hash ? "HEXISTS"
            : op.collection == CollectionKind::Set               ? "SISMEMBER"
                                                                 : "ZSCORE";
        out.push_back({ verb, key, std::move(text) });
        if (withinCommand && --m_pending->remaining == 0)
            flush(out); // its last member was this one
        return Ok {};
    }
    if (op.action == ElementAction::Command) {
        flush(out);
        if (op.collection == CollectionKind::SortedSet && op.atHead) { // a ZUNIONSTORE's result (request.h)
            m_union.emplace(r.keyId, key,
                r.valueBytes > m_limits.zsetMaxListpackEntries || r.elementBytes > m_limits.zsetMaxListpackValue);
            return Ok {};
        }
        if (op.collection == CollectionKind::List && r.priorBytes() == kNoPivot) {
            // A LINSERT that found no pivot: its conversion for the element, nothing inserted. No element of
            // the server's is the pivot sent (made-up texts start with a letter or are integers).
            out.push_back({ "LINSERT", key, "AFTER", "~no pivot~", value(r.elementBytes, IntegerClass::None) });
            return Ok {};
        }
        if (r.valueBytes > 0) {
            // A SINTERSTORE's result (request.h): its smallest source an intset when it held integers only, within
            // the server's limit; then the SADD makes what the command made.
            const std::uint32_t source = op.collection == CollectionKind::Set ? r.priorBytes() : 0;
            m_pending = Pending { r.keyId, r.valueBytes, {},
                source != 0 && !intersectionOfIntset(source, m_limits.setMaxIntsetEntries) };
        }
        return Ok {};
    }
    if (op.collection == CollectionKind::List)
        return listCommand(r, key, out);
    Key& state = keyOf(r.keyId);
    const bool hash = op.collection == CollectionKind::Hash, set = op.collection == CollectionKind::Set;
    // A set's member has no value; a hash's value and a sorted set's score go with their field's shape.
    const Shape now { r.elementBytes, set ? 0 : r.valueBytes, op.element, set ? IntegerClass::None : op.value };
    const Shape prior { r.elementBytes, set ? 0 : r.priorBytes(), op.element, set ? IntegerClass::None : op.prior };
    std::string name;
    if (op.action == ElementAction::Add) {
        name = newName(state, r.elementBytes, op.element);
        ++state.elements;
    } else {
        name = take(state, prior);
        if (name.empty() && r.elementBytes != 0)
            return Ok {}; // nothing of that shape held: unmatched, counted
    }
    if (op.action == ElementAction::Remove) {
        const bool byRange = op.collection == CollectionKind::SortedSet && r.valueBytes == kRemovedByRange;
        if (!m_removals || m_removals->keyId != r.keyId || m_removals->byRange != byRange) {
            flush(out);
            m_removals = Removals { r.keyId, key, op.collection, byRange, {} };
        }
        m_removals->names.push_back(std::move(name));
        removed(r.keyId, state);
        if (!op.atHead) // the command's last (request.h)
            sendRemovals(out);
        return Ok {};
    }
    state.held[now].push_back(name);
    if (hash) {
        std::string text = value(r.valueBytes, op.value);
        add(r.keyId, { name, text }, { "HSET", key, name, text }, out);
    } else if (set) {
        add(r.keyId, { name }, { "SADD", key, name }, out);
    } else {
        std::string text = score(r.valueBytes, op.value);
        add(r.keyId, { text, name }, { "ZADD", key, text, name }, out);
    }
    return Ok {};
}

} // namespace layoutlab
