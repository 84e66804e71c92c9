// SPDX-License-Identifier: MIT
#include "layoutlab/spec.h"

#include "layoutlab/printable.h"

#include <cctype>
#include <charconv>
#include <fmt/format.h>

namespace layoutlab {

std::vector<std::string_view> splitString(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const auto end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos)
            break;
        start = end + 1;
    }
    return parts;
}

Expected<std::uint64_t> parseUnsigned(std::string_view text, std::string_view field) {
    std::uint64_t value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end)
        return usageError(fmt::format("'{}' is not a non-negative integer", text), std::string(field));
    return value;
}

Expected<std::uint64_t> parseMemorySize(std::string_view text, std::string_view field) {
    struct Unit {
        std::string_view suffix;
        std::uint64_t multiplier;
    };
    // util.c memtoll's units, longest first so that "kb" is not read as "b".
    constexpr Unit kUnits[] = { { "kb", 1024 }, { "mb", 1024 * 1024 }, { "gb", 1024ull * 1024 * 1024 }, { "k", 1000 },
        { "m", 1000 * 1000 }, { "g", 1000ull * 1000 * 1000 }, { "b", 1 } };
    std::string lower(text);
    for (char& c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::uint64_t multiplier = 1;
    std::string_view digits = lower;
    for (const auto& unit : kUnits)
        if (digits.size() > unit.suffix.size() && digits.ends_with(unit.suffix)) {
            multiplier = unit.multiplier;
            digits.remove_suffix(unit.suffix.size());
            break;
        }
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size())
        return usageError(fmt::format("'{}' is not a memory size (a whole number with an optional unit: b, k, kb, m, "
                                      "mb, g, gb, as the server reads maxmemory)",
                              text),
            std::string(field));
    if (value > UINT64_MAX / multiplier)
        return usageError(fmt::format("'{}' is too large", text), std::string(field));
    return value * multiplier;
}

Expected<double> parseReal(std::string_view text, std::string_view field) {
    double value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end)
        return usageError(fmt::format("'{}' is not a number", text), std::string(field));
    return value;
}

Expected<Spec> Spec::parse(std::string_view text, std::string_view what) {
    Spec spec;
    spec.m_what = std::string(what);
    const auto colon = text.find(':');
    spec.m_name = std::string(text.substr(0, colon));
    if (spec.m_name.empty())
        return usageError(fmt::format("empty {} name in '{}'", what, text), std::string(what));
    if (colon == std::string_view::npos)
        return spec;
    for (auto item : splitString(text.substr(colon + 1), ',')) {
        if (item.empty())
            continue;
        const auto eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0)
            return usageError(fmt::format("{} parameter '{}' is not KEY=VALUE", what, item), std::string(what));
        auto key = std::string(item.substr(0, eq));
        if (spec.m_params.count(key))
            return usageError(fmt::format("{} parameter '{}' given twice", what, key), std::string(what));
        spec.m_params.emplace(key, std::string(item.substr(eq + 1)));
    }
    return spec;
}

bool Spec::has(std::string_view key) const {
    return m_params.find(key) != m_params.end();
}

Expected<std::uint64_t> Spec::integer(
    std::string_view key, std::uint64_t fallback, std::uint64_t min, std::uint64_t max) {
    const auto it = m_params.find(key);
    if (it == m_params.end())
        return fallback;
    m_used[std::string(key)] = true;
    const auto field = fmt::format("{} {}:{}", m_what, m_name, key);
    auto value = parseUnsigned(it->second, field);
    if (!value)
        return value.error();
    if (*value < min || *value > max)
        return usageError(
            fmt::format("{} {} parameter {}={} is out of range [{}, {}]", m_what, m_name, key, *value, min, max),
            field);
    return *value;
}

Expected<double> Spec::real(std::string_view key, double fallback, double min, double max) {
    const auto it = m_params.find(key);
    if (it == m_params.end())
        return fallback;
    m_used[std::string(key)] = true;
    const auto field = fmt::format("{} {}:{}", m_what, m_name, key);
    auto value = parseReal(it->second, field);
    if (!value)
        return value.error();
    if (!(*value >= min && *value <= max))
        return usageError(
            fmt::format("{} {} parameter {}={} is out of range [{}, {}]", m_what, m_name, key, it->second, min, max),
            field);
    return *value;
}

std::string Spec::text(std::string_view key, std::string fallback) {
    const auto it = m_params.find(key);
    if (it == m_params.end())
        return fallback;
    m_used[std::string(key)] = true;
    return it->second;
}

Expected<bool> Spec::yesNo(std::string_view key, bool fallback) {
    const auto value = text(key, fallback ? "yes" : "no");
    if (value != "yes" && value != "no")
        return usageError(fmt::format("{} {} parameter {} must be yes or no, got '{}'", m_what, m_name, key, value),
            fmt::format("{} {}:{}", m_what, m_name, key));
    return value == "yes";
}

Status Spec::rejectUnused(std::string_view allowedList) const {
    for (const auto& [key, value] : m_params) {
        if (!m_used.count(key))
            return usageError(fmt::format("unknown {} parameter '{}' for '{}' (known: {})", m_what, key, m_name,
                                  allowedList.empty() ? "none" : allowedList),
                m_what);
    }
    return Ok {};
}

std::string Error::describe() const {
    std::string text;
    if (!file.empty())
        text += file + ": ";
    if (hasOffset)
        text += fmt::format("{} {}: ", offsetIsLine ? "line" : "offset", offset);
    if (!field.empty() && file.empty())
        text += field + ": ";
    text += message;
    // Files, fields and messages quote input: no control character of it reaches a terminal.
    return printable(text, true);
}

Error cancelledError() {
    Error e;
    e.code = ErrorCode::Cancelled;
    e.message = "cancelled";
    return e;
}

Error usageError(std::string message, std::string field) {
    Error e;
    e.code = ErrorCode::Usage;
    e.message = std::move(message);
    e.field = std::move(field);
    return e;
}

Error dataError(std::string message, std::string file, std::uint64_t offset, bool hasOffset) {
    Error e;
    e.code = ErrorCode::Data;
    e.message = std::move(message);
    e.file = std::move(file);
    e.offset = offset;
    e.hasOffset = hasOffset;
    return e;
}

Error dataErrorAtLine(std::string message, std::string file, std::uint64_t line) {
    Error e = dataError(std::move(message), std::move(file), line, true);
    e.offsetIsLine = true;
    return e;
}

Error ioError(std::string message, std::string file) {
    Error e;
    e.code = ErrorCode::Io;
    e.message = std::move(message);
    e.file = std::move(file);
    return e;
}

} // namespace layoutlab
