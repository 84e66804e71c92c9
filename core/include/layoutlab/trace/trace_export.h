// SPDX-License-Identifier: MIT
#pragma once

// Writes a trace in another tool's format: the Twitter cache-trace CSV, the CacheLib kvcache CSV
// (202401 column set) or libCacheSim's oracleGeneral binary. Keys are named "k<id>" padded with '0' to
// their length; GETs report value size 0 as real traces do on a miss. Used to make the sample datasets
// and to check that importers give back the same trace.

#include "layoutlab/trace/trace_reader.h"

namespace layoutlab {

Status exportTrace(TraceReader& trace, std::string_view format, const std::string& path);

} // namespace layoutlab
