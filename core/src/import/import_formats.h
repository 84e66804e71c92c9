// SPDX-License-Identifier: MIT
#pragma once

// The importers' factories and content detectors (one importer per source file).

#include "layoutlab/import/importer.h"
#include "layoutlab/import/input_stream.h"

namespace layoutlab {

Expected<std::string> detectFormat(const std::string& path);

bool detectTwitter(std::string_view firstLine);
bool detectCachelib(std::string_view firstLine);
bool detectOracle(std::string_view head);
bool detectMonitor(std::string_view head);
bool detectWatch(std::string_view firstLine);
bool detectMetadump(std::string_view firstLine);
bool detectRdbCsv(std::string_view firstLine);

std::unique_ptr<Importer> makeTwitterImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeCachelibImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeOracleImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeMonitorImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeWatchImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeMetadumpImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);
std::unique_ptr<Importer> makeRdbCsvImporter(std::unique_ptr<InputStream> input, const ImportOptions& options);

} // namespace layoutlab
