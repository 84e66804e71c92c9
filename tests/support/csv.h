// SPDX-License-Identifier: MIT
#pragma once

// A minimal CSV reader for the reference tables under datasets/ (no quoted fields there).

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace layoutlab::test {

using CsvRow = std::map<std::string, std::string>;

inline std::vector<CsvRow> readCsv(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot open " + path);
    auto split = [](const std::string& line) {
        std::vector<std::string> cells;
        std::stringstream s(line);
        std::string cell;
        while (std::getline(s, cell, ','))
            cells.push_back(cell);
        if (!line.empty() && line.back() == ',')
            cells.emplace_back();
        return cells;
    };
    std::string line;
    std::getline(in, line);
    const auto header = split(line);
    std::vector<CsvRow> rows;
    while (std::getline(in, line)) {
        if (line.empty())
            continue;
        const auto cells = split(line);
        CsvRow row;
        for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i)
            row[header[i]] = cells[i];
        rows.push_back(std::move(row));
    }
    return rows;
}

inline std::vector<std::uint64_t> splitPlus(const std::string& text) {
    std::vector<std::uint64_t> out;
    std::stringstream s(text);
    std::string part;
    while (std::getline(s, part, '+'))
        out.push_back(std::stoull(part));
    return out;
}

} // namespace layoutlab::test
