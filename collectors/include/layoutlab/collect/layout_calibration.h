// SPDX-License-Identifier: MIT
#pragma once

// Telling a Valkey or Redis build's layout by what it does. Where the version a server reports cannot
// decide the layout (a development build reports 255.255.255; forks and what-if builds report what
// they were forked from), a few thousand keys of each of a handful of known shapes are loaded into the
// empty server, one shape at a time, and its settled used_memory per key is compared with what every
// candidate layout predicts for the same keys. The first candidate that reproduces every shape is the
// build's layout; the server is left empty again.
//
// The shapes are chosen so that every parameter real builds differ in moves at least one of them by
// 8 bytes or more per key: the key's sds header (as sent or smallest), the object header (16 or 8), the
// embed threshold (64 or 128), the client EMBSTR limit (44, 108 or derived), the embed decision's key
// sizing (K + 3 or exact) and the keyspace's structure (8.0's dict or the hashtable).

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/layout/key_layout.h"

#include <optional>
#include <string>
#include <vector>

namespace layoutlab {

struct CalibrationShape {
    KeyShape shape;
    // Enough that the Valkey hashtable's child buckets, which fall where the server's hash seed puts the
    // keys, move a shape's bytes per key by about 0.2 (at 256 keys, 2.5 was seen).
    std::uint32_t keys = 2048;
};
// The shapes calibrateLayout() loads.
std::vector<CalibrationShape> calibrationShapes();
// The candidate layouts for an engine ("valkey", "redis"), most likely first.
std::vector<std::string> candidateLayouts(const std::string& engine);

struct CalibrationRow {
    CalibrationShape shape;
    double measuredBytesPerKey = 0; // settled Δused_memory / keys
    std::string encoding; // OBJECT ENCODING of one of the keys
};

struct CandidateFit {
    std::string layout; // as given
    double worstErrorBytesPerKey = 0; // the largest |predicted - measured| over the shapes
    bool matches = false; // every shape within kCalibrationToleranceBytes and with the same encoding
    std::string firstMismatch; // the first shape it does not reproduce, and how
};

// A candidate reproduces a shape when its prediction is within this many bytes per key of the server.
// Candidates differ by 8 bytes or more per key on the shape that tells them apart (the size classes are
// 8 bytes apart at least); the Valkey hashtable's child buckets, which fall where the keys hash, move a
// measurement of 2,048 keys by about 0.2 byte per key (one standard deviation, with a TTL's two tables).
inline constexpr double kCalibrationToleranceBytes = 2.0;

struct Calibration {
    std::vector<CalibrationRow> rows;
    std::vector<CandidateFit> fits; // in candidate order
    std::optional<std::string> chosen; // the first candidate that matches
    // One line: which layout was chosen and why, or that none reproduced the keys.
    std::string summary() const;
    // The shapes, measured beside the chosen layout's prediction (or the closest one's).
    std::string table() const;
};

// Loads the calibration shapes into the empty server `client` talks to and compares them with each
// candidate under `allocatorSpec`. Fails on a connection or server error (a server that died), never
// because nothing matched.
Expected<Calibration> calibrateLayout(
    RespClient& client, const std::vector<std::string>& candidates, const std::string& allocatorSpec);

} // namespace layoutlab
