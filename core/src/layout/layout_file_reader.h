// SPDX-License-Identifier: MIT
#pragma once

// Reading a layout file's TOML tables field by field: every value is checked for type and range where
// it is read, every field not read is an error, and every error names the line and the field. Errors
// are thrown as LayoutFileError inside the parser and returned as values at its boundary.

#include <toml++/toml.h>

#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace layoutlab::layout_file {

struct LayoutFileError {
    std::uint64_t line = 0;
    std::string field;
    std::string why;
};

[[noreturn]] inline void fail(std::uint64_t line, std::string field, std::string why) {
    throw LayoutFileError { line, std::move(field), std::move(why) };
}

inline std::uint64_t lineOf(const toml::node& node) {
    return node.source().begin.line;
}

// One table of the file, named by its path ("embed", "allocation.object.fields.expire").
class TableReader {
public:
    TableReader(const toml::table& table, std::string name)
        : m_table(table)
        , m_name(std::move(name)) { }

    const std::string& name() const { return m_name; }
    const toml::table& raw() const { return m_table; }
    std::uint64_t line() const { return lineOf(m_table); }
    std::string fieldName(const std::string& key) const { return m_name.empty() ? key : m_name + "." + key; }

    const toml::node* find(const std::string& key) {
        m_used.insert(key);
        return m_table.get(key);
    }
    bool has(const std::string& key) const { return m_table.contains(key); }

    std::optional<std::string> text(const std::string& key) {
        const auto* node = find(key);
        if (!node)
            return std::nullopt;
        if (!node->is_string())
            fail(lineOf(*node), fieldName(key), "must be a string");
        return std::string(node->as_string()->get());
    }
    std::string requiredText(const std::string& key) {
        auto value = text(key);
        if (!value)
            fail(line(), fieldName(key), "is missing");
        return *value;
    }
    // A size or count: a non-negative integer of at most `max`.
    std::optional<std::uint64_t> size(const std::string& key, std::uint64_t max = std::uint64_t { 1 } << 32) {
        const auto* node = find(key);
        if (!node)
            return std::nullopt;
        return sizeValue(*node, fieldName(key), max);
    }
    std::uint64_t size(const std::string& key, std::uint64_t fallback, std::uint64_t max) {
        return size(key, max).value_or(fallback);
    }
    // A number with at most one decimal (12.5), in tenths: a share in percent read as per-mille.
    std::uint64_t tenths(const std::string& key, std::uint64_t fallback, std::uint64_t maxTenths) {
        const auto* node = find(key);
        if (!node)
            return fallback;
        double value = 0;
        if (node->is_integer())
            value = static_cast<double>(node->as_integer()->get());
        else if (node->is_floating_point())
            value = node->as_floating_point()->get();
        else
            fail(lineOf(*node), fieldName(key), "must be a number");
        const double scaled = value * 10;
        if (!(scaled >= 0) || scaled > static_cast<double>(maxTenths))
            fail(lineOf(*node), fieldName(key),
                fmt::format("{} is out of range [0, {}]", value, static_cast<double>(maxTenths) / 10));
        if (std::abs(scaled - std::round(scaled)) > 1e-9)
            fail(lineOf(*node), fieldName(key), fmt::format("{} has more than one decimal", value));
        return static_cast<std::uint64_t>(std::llround(scaled));
    }
    bool flag(const std::string& key, bool fallback) {
        const auto* node = find(key);
        if (!node)
            return fallback;
        if (!node->is_boolean())
            fail(lineOf(*node), fieldName(key), "must be true or false");
        return node->as_boolean()->get();
    }
    const toml::array* array(const std::string& key) {
        const auto* node = find(key);
        if (!node)
            return nullptr;
        if (!node->is_array())
            fail(lineOf(*node), fieldName(key), "must be an array");
        return node->as_array();
    }
    const toml::table* table(const std::string& key) {
        const auto* node = find(key);
        if (!node)
            return nullptr;
        if (!node->is_table())
            fail(lineOf(*node), fieldName(key), "must be a table");
        return node->as_table();
    }
    // One of `choices`, as written in the file.
    std::optional<std::string> choice(const std::string& key, const std::vector<std::string>& choices) {
        auto value = text(key);
        if (!value)
            return std::nullopt;
        for (const auto& c : choices)
            if (c == *value)
                return value;
        std::string list;
        for (const auto& c : choices)
            list += (list.empty() ? "" : ", ") + c;
        fail(lineOf(*find(key)), fieldName(key), "unknown value '" + *value + "' (one of: " + list + ")");
    }
    // Every field of the table must have been read.
    void rejectUnknown(const std::string& known) const {
        for (auto&& [key, node] : m_table)
            if (!m_used.count(std::string(key.str())))
                fail(key.source().begin.line ? key.source().begin.line : lineOf(node),
                    fieldName(std::string(key.str())), "unknown field (known here: " + known + ")");
    }

    static std::uint64_t sizeValue(const toml::node& node, const std::string& field, std::uint64_t max) {
        if (!node.is_integer())
            fail(lineOf(node), field, "must be a whole number of bytes");
        const std::int64_t value = node.as_integer()->get();
        if (value < 0)
            fail(lineOf(node), field, "negative size " + std::to_string(value));
        if (static_cast<std::uint64_t>(value) > max)
            fail(lineOf(node), field, std::to_string(value) + " is too large (at most " + std::to_string(max) + ")");
        return static_cast<std::uint64_t>(value);
    }

private:
    const toml::table& m_table;
    std::string m_name;
    std::set<std::string> m_used;
};

} // namespace layoutlab::layout_file
