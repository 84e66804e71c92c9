// SPDX-License-Identifier: MIT
#pragma once

// The screenshot tour (`layoutlab-gui --screenshot DIR [TRACE]`): drives a main window through every view
// and renders each to DIR/<view>.png at 1280x800.

#include <QString>

namespace layoutlab::gui {

class MainWindow;

// Opens the bundled seed dataset (or `trace`), sweeps it on Valkey 8.1 and then 9.1 (the compare view
// shows the two), drives it on Redis for the engine view when redis-server is on PATH, waits for each,
// and renders every view. With a Valkey source archive (`engineSource`), it then measures Valkey builds of
// it at four thresholds and renders the sweep with the measured points on it (sweep-measured.png), the
// Engine view's curve (engine-curve.png) and Compare of the two (compare-measured.png). Then the slab model
// on the bundled mixed trace (sweep-slabs.png), last the sweep of a bundled what-if layout file. Returns false with
// `error` set when something failed.
bool renderScreenshots(MainWindow& window, const QString& directory, QString* error, const QString& trace = {},
    const QString& engineSource = {});

} // namespace layoutlab::gui
