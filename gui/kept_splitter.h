// SPDX-License-Identifier: MIT
#pragma once

// A two-pane splitter whose sizes are kept between sessions: MainWindow saves and restores every
// splitter in QSettings under its object name.

#include <QSplitter>

namespace layoutlab::gui {

// `first` and `second` stretch in the ratio firstStretch : secondStretch.
inline QSplitter* keptSplitter(Qt::Orientation orientation, const QString& name, QWidget* first, int firstStretch,
    QWidget* second, int secondStretch, QWidget* parent) {
    auto* splitter = new QSplitter(orientation, parent);
    splitter->setObjectName(name);
    splitter->addWidget(first);
    splitter->addWidget(second);
    splitter->setStretchFactor(0, firstStretch);
    splitter->setStretchFactor(1, secondStretch);
    return splitter;
}

} // namespace layoutlab::gui
