// SPDX-License-Identifier: MIT
#pragma once

// The importers' factories and content detectors (one importer per source file).

#include "layoutlab/import/importer.h"
#include "layoutlab/import/input_stream.h"

namespace layoutlab {

// The TTL a snapshot's key with an expiry gets (memcached metadump, RDB files and their memory reports): a
// snapshot has no clock, so the key keeps its expire field through the whole replay, and a real server
// driven with the trace keeps the key.
inline constexpr std::uint32_t kSnapshotTtlSeconds = 10u * 365 * 86400;

Expected<std::string> detectFormat(const std::string& path);

bool detectTwitter(std::string_view firstLine);
bool detectCachelib(std::string_view firstLine);
bool detectOracle(std::string_view head);
bool detectMonitor(std::string_view head);
bool detectWatch(std::string_view firstLine);
bool detectMetadump(std::string_view firstLine);
bool detectRdbCsv(std::string_view firstLine);
bool detectRdb(std::string_view head);
// A sorted set's score as the engines write it in a listpack (util.c d2string: an integer within +-2^62 as its
// digits, else the shortest text that reads back; monitor_zsets.cpp).
std::string zsetScoreText(double score);
// A score's lengths as a request carries them (request.h packScoreBytes): its text's, `shortest`, and as Redis
// 7.0's d2string writes it (an integer within +-2^52 as its digits, else "%.17g").
std::uint32_t packedScoreBytes(double score, std::size_t shortest);

std::unique_ptr<Importer> makeTwitterImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeCachelibImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeOracleImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeMonitorImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeWatchImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeMetadumpImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeRdbCsvImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeRdbImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);

} // namespace layoutlab
