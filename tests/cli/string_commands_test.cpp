// SPDX-License-Identifier: MIT
// Every string command a MONITOR capture holds, against real servers: Debian's redis-server and the
// Valkey builds of tests/engines (skipped with the reason where there are none). For each command, keys
// are loaded and the command is run over them while a MONITOR connection captures what the server
// executed; the capture is then imported and simulated with the server's layout, and the simulated
// usable bytes (index tables included) must be within 1% of the settled server's Δused_memory. Client
// buffers are left out of both readings (used_memory - mem_clients_normal): the MONITOR connection's
// output is the test's, not the keyspace's.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/collect/server_process.h"
#include "layoutlab/import/importer.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "monitor_capture.h"
#include "resp_server_under_test.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <thread>

using namespace layoutlab;

namespace {

using Command = std::vector<std::string>;

using Server = test::EngineBuild;
// Keys of 6 to 30 bytes, values on both sides of every limit: sds types 5/8, EMBSTR 44, Valkey's 64 and
// 128 thresholds, and the 108 of a what-if build.
std::string key(std::uint32_t i) {
    return fmt::format("{}:{}", std::string(1 + i % 24, 'k'), i);
}
std::string value(std::uint32_t i, std::uint32_t salt = 0) {
    static const std::uint32_t sizes[]
        = { 1, 5, 8, 20, 31, 32, 40, 44, 45, 50, 60, 64, 72, 80, 100, 108, 120, 128, 200, 300 };
    return std::string(sizes[(i * 7 + salt) % std::size(sizes)], static_cast<char>('a' + i % 26));
}
// Loaded keys: a power of two (a full dict table) and one past it (a table just grown).
constexpr std::uint32_t kKeys = 16384;
constexpr std::uint32_t kKeyCounts[] = { kKeys, kKeys + 1 };
constexpr const char* kFarFuture = "100000";

std::vector<Command> load(std::uint32_t keys, bool ttlEvery3 = true) {
    std::vector<Command> out;
    for (std::uint32_t i = 0; i < keys; ++i)
        if (ttlEvery3 && i % 3 == 0)
            out.push_back({ "SET", key(i), value(i), "EX", kFarFuture });
        else
            out.push_back({ "SET", key(i), value(i) });
    return out;
}

struct Scenario {
    std::string name;
    std::function<std::vector<Command>(std::uint32_t)> commands;
};

std::vector<Scenario> scenarios() {
    std::vector<Scenario> out;
    out.push_back({ "set", [](std::uint32_t n) { return load(n); } });
    out.push_back({ "append", [](std::uint32_t n) {
                       auto c = load(n);
                       for (std::uint32_t i = 0; i < n; ++i)
                           c.push_back({ "APPEND", key(i), std::string(1 + i % 40, 'x') });
                       for (std::uint32_t i = 0; i < n; i += 2) // into the slack the first growth left, or past it
                           c.push_back({ "APPEND", key(i), std::string(1 + i % 90, 'y') });
                       for (std::uint32_t i = 0; i < n / 4; ++i) // APPEND creates missing keys
                           c.push_back({ "APPEND", "new:" + key(i), value(i, 3) });
                       return c;
                   } });
    out.push_back({ "incr", [](std::uint32_t n) {
                       std::vector<Command> c;
                       for (std::uint32_t i = 0; i < n; ++i) {
                           const auto k = "counter:" + key(i);
                           if (i % 4 == 0)
                               c.push_back({ "INCR", k }); // 1: a shared integer
                           else if (i % 4 == 1)
                               c.push_back({ "INCRBY", k, std::to_string(10000 + i * 977) });
                           else if (i % 4 == 2)
                               c.push_back({ "DECRBY", k, std::to_string(i) });
                           else
                               c.push_back({ "DECR", k });
                       }
                       for (std::uint32_t i = 0; i < n; i += 3) { // in place, into and out of the shared range
                           const auto k = "counter:" + key(i);
                           c.push_back({ "INCRBY", k, i % 2 ? "123456789012" : "-5" });
                       }
                       for (std::uint32_t i = 0; i < n; i += 5) { // integers a client SET, incremented
                           c.push_back({ "SET", "int:" + key(i), std::to_string(i * 31), "EX", kFarFuture });
                           c.push_back({ "INCRBY", "int:" + key(i), std::to_string(i) });
                       }
                       return c;
                   } });
    out.push_back({ "incrbyfloat", [](std::uint32_t n) {
                       std::vector<Command> c;
                       for (std::uint32_t i = 0; i < n; ++i) {
                           const auto k = "float:" + key(i);
                           c.push_back({ "INCRBYFLOAT", k, i % 3 ? fmt::format("{}.{}", i, i % 97) : "2" });
                           if (i % 2)
                               c.push_back({ "INCRBYFLOAT", k, "1e10" });
                       }
                       for (std::uint32_t i = 0; i < n; i += 4) { // an INT object becomes a string
                           c.push_back({ "SET", "int:" + key(i), std::to_string(i) });
                           c.push_back({ "INCRBYFLOAT", "int:" + key(i), "0.25" });
                       }
                       return c;
                   } });
    out.push_back({ "getdel", [](std::uint32_t n) {
                       auto c = load(n);
                       for (std::uint32_t i = 0; i < n; i += 2)
                           c.push_back({ "GETDEL", key(i) });
                       return c;
                   } });
    out.push_back({ "setrange", [](std::uint32_t n) {
                       auto c = load(n);
                       for (std::uint32_t i = 0; i < n; ++i)
                           if (i % 3 == 0) // inside the value: unshared, no growth
                               c.push_back({ "SETRANGE", key(i), "0", "zz" });
                           else // past its end: zero-filled growth
                               c.push_back({ "SETRANGE", key(i), std::to_string(20 + i % 150), "tail" });
                       for (std::uint32_t i = 0; i < n / 4; ++i) // creates an exact RAW value
                           c.push_back({ "SETRANGE", "new:" + key(i), std::to_string(i % 70), "abc" });
                       return c;
                   } });
    out.push_back({ "setbit", [](std::uint32_t n) {
                       auto c = load(n);
                       for (std::uint32_t i = 0; i < n; ++i)
                           if (i % 4 == 0) // inside the value: unshared, no growth
                               c.push_back({ "SETBIT", key(i), "3", "1" });
                           else // past its end: zero-filled growth to the bit's byte
                               c.push_back({ "SETBIT", key(i), std::to_string(8 * (20 + i % 300) + i % 8), "1" });
                       for (std::uint32_t i = 0; i < n / 4; ++i) // a bitmap made bit by bit
                           c.push_back({ "SETBIT", "bits:" + key(i % 64), std::to_string(i * 13), i % 5 ? "1" : "0" });
                       return c;
                   } });
    out.push_back({ "bitop", [](std::uint32_t n) {
                       auto c = load(n);
                       for (std::uint32_t i = 0; i + 2 < n; i += 3) {
                           static const char* const ops[] = { "AND", "OR", "XOR" };
                           // Into a key of its own (results of 1 to 300 bytes: embedded lengths made RAW)...
                           c.push_back({ "BITOP", ops[i % 3], "dest:" + key(i), key(i), key(i + 1), key(i + 2) });
                           // ...over a loaded key (its TTL removed), and from absent keys (deleted, or nothing)
                           if (i % 2 == 0)
                               c.push_back({ "BITOP", "NOT", key(i + 1), key(i + 2) });
                           else
                               c.push_back({ "BITOP", "OR", key(i + 1), "absent:" + key(i), "absent2:" + key(i) });
                       }
                       return c;
                   } });
    out.push_back({ "flushall", [](std::uint32_t n) {
                       // Every key deleted at once, then keys loaded again: a half of the names with other values
                       // and TTLs; FLUSHDB ASYNC over them; then a quarter again.
                       auto c = load(n);
                       c.push_back({ "FLUSHALL" });
                       for (std::uint32_t i = 0; i < n / 2; ++i)
                           c.push_back({ "SET", key(i), value(i, 5), "EX", kFarFuture });
                       c.push_back({ "FLUSHDB", "ASYNC" });
                       for (std::uint32_t i = 0; i < n / 4; ++i)
                           c.push_back({ "SET", "again:" + key(i), value(i, 6) });
                       return c;
                   } });
    out.push_back({ "hyperloglogs", [](std::uint32_t n) {
                       // HyperLogLogs of n / 32 keys (a power of two, or one past it): their sparse forms grown
                       // element by element, some past hll-sparse-max-bytes (dense); merged (PFMERGE of sparse
                       // sources, and of a dense one), copied and renamed then added to,
                       // counted; some written over by SET or APPEND (PFADD refused on a string: below).
                       static constexpr std::uint32_t kElements[]
                           = { 0, 1, 2, 3, 5, 8, 10, 12, 40, 70, 100, 150, 600, 900, 1200, 2500 };
                       std::vector<Command> c;
                       const std::uint32_t keys = n / 32 + n % 2;
                       auto hll = [](std::uint32_t i) { return fmt::format("hll:{}:{}", std::string(i % 13, 'h'), i); };
                       // At most 100 elements a command: a longer one grows the client's query buffer, which
                       // the server's count of its clients' memory (mem_clients_normal) follows only later.
                       for (std::uint32_t i = 0; i < keys; ++i) {
                           const std::uint32_t elements = kElements[(i * 7) % std::size(kElements)];
                           for (std::uint32_t e = 0; e == 0 || e < elements;) {
                               Command add { "PFADD", hll(i) };
                               for (std::uint32_t end = std::min(elements, e + 100); e < end; ++e)
                                   add.push_back(fmt::format("e{}-{}", i % 300, e));
                               c.push_back(std::move(add));
                               if (elements == 0)
                                   break;
                           }
                       }
                       for (std::uint32_t i = 0; i < keys; i += 9)
                           c.push_back({ "PFADD", hll(i), "more:" + std::to_string(i), "again:" + std::to_string(i) });
                       for (std::uint32_t i = 0; i + 2 < keys; i += 17)
                           c.push_back({ "PFMERGE", "merged:" + std::to_string(i), hll(i), hll(i + 1), hll(i + 2) });
                       for (std::uint32_t i = 3; i < keys; i += 50) // a sparse destination, then a dense source
                           c.push_back({ "PFMERGE", hll(i), hll(15) });
                       for (std::uint32_t i = 4; i < keys; i += 31) {
                           c.push_back({ "COPY", hll(i), "copy:" + std::to_string(i) });
                           c.push_back({ "PFADD", "copy:" + std::to_string(i), "x", "y", "z" });
                           c.push_back({ "RENAME", hll(i + 1), "renamed:" + std::to_string(i) });
                           c.push_back({ "PFADD", "renamed:" + std::to_string(i), "a", "b" });
                       }
                       for (std::uint32_t i = 0; i < keys; i += 10)
                           c.push_back({ "PFCOUNT", hll(i) });
                       for (std::uint32_t i = 6; i < keys; i += 70)
                           c.push_back({ "APPEND", hll(i), "tail" });
                       for (std::uint32_t i = 7; i < keys; i += 80)
                           c.push_back({ "SET", hll(i), value(i) });
                       return c;
                   } });
    out.push_back({ "databases", [](std::uint32_t n) {
                       // The first 3/8 of the names in database 1 (other values, half with TTLs) are other keys; a
                       // fifth of them deleted there, then database 0's written again (SELECT: the capture's
                       // "[1 ...]"), then keys moved between them. Each database has tables of its own, which one
                       // table of both keys would not be (at 16,384 keys a Redis dict of 32,768 buckets against
                       // two of 16,384 and 8,192).
                       auto c = load(n);
                       // One of database 0's keys deleted at once: at 16,384 keys its Valkey 8.0 dict would sit
                       // exactly full while database 1 loads, and the server's cron grows such a table at a tick
                       // of its own (a CI run's did, in a window shorter than the 100 ms the replay can be sure
                       // of: KeyspaceReplay::cronCheck).
                       c.push_back({ "DEL", key(n - 1) });
                       c.push_back({ "SELECT", "1" });
                       for (std::uint32_t i = 0; i < n * 3 / 8; ++i)
                           c.push_back(i % 2 ? Command { "SET", key(i), value(i, 7), "EX", kFarFuture }
                                             : Command { "SET", key(i), value(i, 8) });
                       for (std::uint32_t i = 0; i < n * 3 / 8; i += 5)
                           c.push_back({ "DEL", key(i) });
                       c.push_back({ "SELECT", "0" });
                       for (std::uint32_t i = 0; i < n; i += 3)
                           c.push_back({ "APPEND", key(i), "tail" });
                       // MOVE of half the names database 1 deleted (moved there), and of names it holds
                       // (nothing moved); SWAPDB, then APPENDs to what each database holds now.
                       for (std::uint32_t i = 0; i < n; i += 10)
                           c.push_back({ "MOVE", key(i), "1" });
                       for (std::uint32_t i = 1; i < n; i += 97)
                           c.push_back({ "MOVE", key(i), "1" });
                       c.push_back({ "SWAPDB", "0", "1" });
                       for (std::uint32_t i = 0; i < n; i += 7)
                           c.push_back({ "APPEND", key(i), "more" });
                       c.push_back({ "SELECT", "1" });
                       for (std::uint32_t i = 0; i < n; i += 11)
                           c.push_back({ "APPEND", key(i), "after" });
                       c.push_back({ "SELECT", "0" });
                       return c;
                   } });
    out.push_back({ "set-options", [](std::uint32_t n) {
                       std::vector<Command> c;
                       const std::string at = std::to_string(std::time(nullptr) + 100000);
                       for (std::uint32_t i = 0; i < n; ++i) {
                           const auto k = key(i);
                           switch (i % 10) {
                           case 0:
                               c.push_back({ "SET", k, value(i), "PX", "100000000" });
                               break;
                           case 1:
                               c.push_back({ "SET", k, value(i), "EXAT", at });
                               break;
                           case 2:
                               c.push_back({ "SET", k, value(i), "PXAT", at + "000" });
                               break;
                           case 3:
                               c.push_back({ "SETEX", k, kFarFuture, value(i) });
                               break;
                           case 4:
                               c.push_back({ "PSETEX", k, "100000000", value(i) });
                               break;
                           case 5:
                               c.push_back({ "SETNX", k, value(i) });
                               break;
                           case 6:
                               c.push_back({ "GETSET", k, value(i) });
                               break;
                           case 7:
                               c.push_back({ "MSET", k, value(i), "m:" + k, value(i, 1) });
                               break;
                           case 8:
                               c.push_back({ "MSETNX", k, value(i), "n:" + k, value(i, 2) });
                               break;
                           default:
                               c.push_back({ "SET", k, value(i), "NX", "GET" });
                               break;
                           }
                       }
                       for (std::uint32_t i = 0; i < n; ++i) { // and over them
                           const auto k = key(i);
                           switch (i % 5) {
                           case 0:
                               c.push_back({ "SET", k, value(i, 4), "KEEPTTL" });
                               break;
                           case 1:
                               c.push_back({ "SET", k, value(i, 5), "XX", "EX", kFarFuture });
                               break;
                           case 2:
                               c.push_back({ "SET", k, value(i, 6), "NX" });
                               break; // exists: nothing
                           case 3:
                               c.push_back({ "MSETNX", k, value(i, 7), "fresh:" + k, "v" });
                               break; // nothing
                           default:
                               c.push_back({ "SET", "xx:" + k, value(i), "XX" });
                               break; // absent: nothing
                           }
                       }
                       return c;
                   } });
    out.push_back({ "expire", [](std::uint32_t n) {
                       auto c = load(n);
                       const std::string at = std::to_string(std::time(nullptr) + 200000);
                       for (std::uint32_t i = 0; i < n; ++i) {
                           const auto k = key(i);
                           switch (i % 12) {
                           case 0:
                               c.push_back({ "EXPIRE", k, kFarFuture });
                               break;
                           case 1:
                               c.push_back({ "PEXPIRE", k, "100000000" });
                               break;
                           case 2:
                               c.push_back({ "EXPIREAT", k, at });
                               break;
                           case 3:
                               c.push_back({ "PEXPIREAT", k, at + "000" });
                               break;
                           case 4:
                               c.push_back({ "EXPIRE", k, kFarFuture, "NX" });
                               break;
                           case 5:
                               c.push_back({ "EXPIRE", k, kFarFuture, "XX" });
                               break;
                           case 6:
                               c.push_back({ "EXPIRE", k, "200000", "GT" });
                               break;
                           case 7:
                               c.push_back({ "EXPIRE", k, "50000", "LT" });
                               break;
                           case 8:
                               c.push_back({ "PERSIST", k });
                               break;
                           case 9:
                               c.push_back({ "GETEX", k, "EX", kFarFuture });
                               break;
                           case 10:
                               c.push_back({ "GETEX", k, "PERSIST" });
                               break;
                           default:
                               c.push_back({ i % 2 ? "DEL" : "UNLINK", k });
                               break;
                           }
                       }
                       for (std::uint32_t i = 0; i < n; i += 7) // in the past: deleted
                           c.push_back({ "EXPIRE", key(i), "-1" });
                       for (std::uint32_t i = 1; i < n; i += 4) // overwritten without a TTL
                           c.push_back({ "SET", key(i), value(i, 8) });
                       return c;
                   } });
    out.push_back({ "rename", [](std::uint32_t n) {
                       // RENAME and RENAMENX of every encoding (EMBSTR, RAW with an APPEND's room, INT), with
                       // and without a TTL, onto new names of other lengths and onto keys that exist.
                       auto c = load(n);
                       for (std::uint32_t i = 0; i < n; ++i) {
                           const auto k = key(i);
                           switch (i % 8) {
                           case 0:
                               c.push_back({ "RENAME", k, "renamed:" + k });
                               break;
                           case 1:
                               c.push_back({ "RENAME", k, key(i + 2) }); // onto a key that exists
                               break;
                           case 2:
                               c.push_back({ "RENAMENX", k, key(i + 3) }); // exists: nothing
                               break;
                           case 3:
                               c.push_back({ "RENAMENX", k, "n" + std::to_string(i) });
                               break;
                           case 4:
                               c.push_back({ "APPEND", k, std::string(1 + i % 60, 'x') });
                               c.push_back({ "RENAME", k, "r" + std::to_string(i) });
                               break;
                           case 5:
                               c.push_back({ "SET", "int:" + k, std::to_string(i * 7919), "EX", kFarFuture });
                               c.push_back({ "RENAME", "int:" + k, "i:" + std::to_string(i) });
                               break;
                           case 6:
                               c.push_back({ "RENAME", k, k }); // itself: nothing
                               break;
                           default:
                               c.push_back({ "RENAMENX", k, k }); // itself: nothing
                               break;
                           }
                       }
                       for (std::uint32_t i = 0; i < n; i += 16) // renamed again, TTLs and all
                           c.push_back({ "RENAME", "renamed:" + key(i), key(i) });
                       return c;
                   } });
    out.push_back({ "copy", [](std::uint32_t n) {
                       // COPY of every encoding (EMBSTR, RAW after an APPEND or a SETRANGE, INT and shared
                       // integers, with and without TTLs) onto new names, onto keys that exist (nothing, or
                       // REPLACE), with DB 0 named; onto itself, refused, with the other refusals below. (A copy
                       // into another database is a MOVE's case: the databases scenario.)
                       auto c = load(n);
                       for (std::uint32_t i = 0; i < n; ++i) {
                           const auto k = key(i);
                           switch (i % 8) {
                           case 0:
                               c.push_back({ "COPY", k, "copy:" + k });
                               break;
                           case 1:
                               c.push_back({ "COPY", k, key(i + 2) }); // exists: nothing
                               break;
                           case 2:
                               c.push_back({ "COPY", k, key(i + 3), "REPLACE" });
                               break;
                           case 3:
                               c.push_back({ "APPEND", k, std::string(1 + i % 60, 'x') });
                               c.push_back({ "COPY", k, "c" + std::to_string(i) });
                               break;
                           case 4:
                               c.push_back({ "SET", "int:" + k, std::to_string(i % 3 ? i * 7919 : i % 9000) });
                               c.push_back({ "COPY", "int:" + k, "i:" + std::to_string(i) });
                               break;
                           case 5:
                               c.push_back({ "SETRANGE", "range:" + k, std::to_string(i % 30), "abc" });
                               c.push_back({ "EXPIRE", "range:" + k, kFarFuture });
                               c.push_back({ "COPY", "range:" + k, "r" + std::to_string(i) });
                               break;
                           case 6:
                               c.push_back({ "COPY", k, "copy:" + k, "DB", "0" });
                               break;
                           default:
                               c.push_back({ "COPY", k, "new:" + k, "REPLACE" });
                               break;
                           }
                       }
                       return c;
                   } });
    out.push_back({ "mixed", [](std::uint32_t n) {
                       // Every command at once, interleaved over the same keys.
                       std::vector<Command> c = load(n);
                       const std::string at = std::to_string(std::time(nullptr) + 100000);
                       for (std::uint32_t round = 0; round < 3; ++round)
                           for (std::uint32_t i = 0; i < n; ++i) {
                               const auto k = key((i * 7919 + round * 104729) % n);
                               const auto counter = "c:" + key(i % (n / 2));
                               switch ((i + round) % 16) {
                               case 0:
                                   c.push_back({ "APPEND", k, std::string(1 + i % 33, 'a') });
                                   break;
                               case 1:
                                   c.push_back({ "INCRBY", counter, std::to_string(i) });
                                   break;
                               case 2:
                                   c.push_back({ "SETRANGE", k, std::to_string(i % 90), "r" });
                                   break;
                               case 3:
                                   c.push_back({ "GETDEL", k });
                                   break;
                               case 4:
                                   c.push_back({ "SET", k, value(i, round), "EX", kFarFuture });
                                   break;
                               case 5:
                                   c.push_back({ "PERSIST", k });
                                   break;
                               case 6:
                                   c.push_back({ "EXPIRE", k, kFarFuture, "NX" });
                                   break;
                               case 7:
                                   c.push_back({ "GETEX", k, "PXAT", at + "000" });
                                   break;
                               case 8:
                                   c.push_back({ "INCRBYFLOAT", "f:" + key(i % 1000), "1.5" });
                                   break;
                               case 9:
                                   c.push_back({ "SET", k, value(i, round + 1), "KEEPTTL" });
                                   break;
                               case 10:
                                   c.push_back({ "MSET", k, value(i, 9), "m:" + k, std::to_string(i) });
                                   break;
                               case 11:
                                   c.push_back({ "DECR", counter });
                                   break;
                               case 12:
                                   c.push_back({ "UNLINK", "m:" + k });
                                   break;
                               case 13:
                                   c.push_back({ "SETNX", k, value(i, 2) });
                                   break;
                               case 14:
                                   c.push_back({ "GET", k });
                                   break;
                               default:
                                   c.push_back({ "SET", k, std::to_string(i % 20000) });
                                   break;
                               }
                           }
                       return c;
                   } });
    return out;
}

class StringCommands : public ::testing::TestWithParam<std::size_t> { };

TEST_P(StringCommands, EveryCommandWithinOnePercentOfTheServer) {
    const auto all = test::respServers(LAYOUTLAB_ENGINE_MANIFEST);
    if (GetParam() >= all.size())
        GTEST_SKIP() << "no server " << GetParam() << ": Debian's redis-server and the Valkey builds of "
                     << "tests/engines are all there are here";
    const Server& server = all[GetParam()];
    auto under = test::startRespServer(server, { "--dir", ".", "--enable-debug-command", "local" });
    ASSERT_TRUE(under);
    auto& running = under->running;
    auto& client = under->client;
    const std::string& layoutName = under->layoutName;
    ASSERT_TRUE(warmUpCommands(*client));
    // A first load and flush: what a server allocates once, on its first keys (Valkey 8.0 keeps 128 KiB
    // from then on), is not the keyspace's.
    ASSERT_TRUE(client->pipeline(load(kKeys)));
    auto dir = makeTempDir("layoutlab-strings-");
    ASSERT_TRUE(dir);

    for (const std::uint32_t loaded : kKeyCounts)
        for (const auto& scenario : scenarios()) {
            ASSERT_TRUE(client->command({ "FLUSHALL", "SYNC" }));
            ASSERT_TRUE(waitUntilSettled(*client));
            std::string capture;
            double measured = 0;
            {
                const std::uint64_t before = test::keyspaceMemory(*client);
                test::MonitorCapture monitor(running->port);
                const auto commands = scenario.commands(loaded);
                ASSERT_TRUE(client->pipeline(commands)) << scenario.name;
                // Refused commands leave nothing: they are in the capture, and must change nothing there.
                (void)client->command({ "INCR", key(1) });
                (void)client->command({ "SET", key(2), "v", "EX", "0" });
                (void)client->command({ "RENAME", "absent:" + key(3), key(3) });
                (void)client->command({ "BITOP", "NOT", key(4), key(5), key(6) });
                (void)client->command({ "COPY", key(7), key(7) });
                (void)client->command({ "PFADD", key(8), "a" }); // not a HyperLogLog (where it holds a value)
                const std::string marker = "layoutlab-capture-end";
                ASSERT_TRUE(client->command({ "ECHO", marker }));
                monitor.waitFor(marker);
                monitor.close();
                capture = monitor.lines();
                // The MONITOR client is gone before the second reading, as it was not there for the first.
                ASSERT_TRUE(test::waitForOneClient(*client));
                ASSERT_TRUE(waitUntilSettled(*client));
                const std::uint64_t after = test::keyspaceMemory(*client);
                measured = static_cast<double>(after) - static_cast<double>(before);
            }

            const std::string path = fmt::format("{}/{}-{}.monitor", *dir, scenario.name, loaded);
            std::ofstream(path) << capture;
            if (const char* keep = std::getenv("LAYOUTLAB_KEEP_CAPTURES")) // for a look at a failing scenario
                std::ofstream(fmt::format("{}/{}-{}-{}.monitor", keep, server.label, scenario.name, loaded)) << capture;
            auto trace = openTrace(path, { "monitor", OnError::Fail, 16 });
            ASSERT_TRUE(trace) << trace.error().describe();
            auto result = simulate({ under->models.layout, under->models.allocator, {} }, **trace);
            ASSERT_TRUE(result) << result.error().describe();
            const auto& point = result->points.at(0);
            const double predicted = static_cast<double>(point.usableBytes);
            const double error = (predicted - measured) / measured;
            const auto keys = keyCountAllDatabases(*client);
            ASSERT_TRUE(keys);
            EXPECT_EQ(point.keys, *keys) << server.label << " " << scenario.name << ": live keys";
            EXPECT_LT(std::abs(error), 0.01) << server.label << " (" << layoutName << ") " << scenario.name
                                             << ": predicted " << predicted << " B, measured " << measured << " B";
            std::printf("%-14s %-12s keys %7llu  predicted %10.0f  measured %10.0f  (%+.3f%%)\n", server.label.c_str(),
                scenario.name.c_str(), static_cast<unsigned long long>(*keys), predicted, measured, 100 * error);
        }
    removeTree(*dir);
}

INSTANTIATE_TEST_SUITE_P(Servers, StringCommands, ::testing::Range<std::size_t>(0, 12),
    [](const auto& info) { return "server" + std::to_string(info.param); });

} // namespace
