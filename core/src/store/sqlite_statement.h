// SPDX-License-Identifier: MIT
#pragma once

// The SQLite C API as the results database uses it: a prepared statement that finalises itself, and
// errors that carry SQLite's message and the database's path.

#include "layoutlab/expected.h"

#include <cstdint>
#include <fmt/format.h>
#include <sqlite3.h>
#include <string>
#include <utility>

namespace layoutlab::sqlite {

// A prepared statement that finalises itself.
class Statement {
public:
    Statement(sqlite3* db, const char* sql) { m_rc = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr); }
    ~Statement() { sqlite3_finalize(m_stmt); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement(Statement&& other) noexcept
        : m_stmt(std::exchange(other.m_stmt, nullptr))
        , m_rc(other.m_rc) { }
    Statement& operator=(Statement&&) = delete;
    bool ok() const { return m_rc == SQLITE_OK; }
    Statement& bind(int i, std::int64_t v) {
        sqlite3_bind_int64(m_stmt, i, v);
        return *this;
    }
    Statement& bind(int i, double v) {
        sqlite3_bind_double(m_stmt, i, v);
        return *this;
    }
    Statement& bind(int i, const std::string& v) {
        sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    Statement& bindNull(int i) {
        sqlite3_bind_null(m_stmt, i);
        return *this;
    }
    int step() { return sqlite3_step(m_stmt); }
    void reset() {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
    }
    std::int64_t integer(int col) const { return sqlite3_column_int64(m_stmt, col); }
    double real(int col) const { return sqlite3_column_double(m_stmt, col); }
    bool isNull(int col) const { return sqlite3_column_type(m_stmt, col) == SQLITE_NULL; }
    std::string text(int col) const {
        const auto* p = sqlite3_column_text(m_stmt, col);
        return p
            ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, col)))
            : std::string();
    }

private:
    sqlite3_stmt* m_stmt = nullptr;
    int m_rc = SQLITE_ERROR;
};

inline Error dbError(sqlite3* db, const std::string& path, const std::string& what) {
    Error e = ioError(fmt::format("{}: {}", what, db ? sqlite3_errmsg(db) : "out of memory"), path);
    return e;
}

inline std::int64_t toInt(std::uint64_t v) {
    return static_cast<std::int64_t>(v);
}

// The SQL that brings the results database's schema from `fromVersion` to fromVersion + 1.
const char* schemaMigration(int fromVersion);

} // namespace layoutlab::sqlite
