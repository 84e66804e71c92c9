// SPDX-License-Identifier: MIT
#pragma once

// Placeholder text that stays readable whatever the palette: a dark palette that sets its window, base
// and text colours but not its placeholder colour keeps the light palette's, dark grey on a dark field.

#include <QPalette>
#include <QWidget>

#include <cmath>

namespace layoutlab::gui {

// The colour `over` shows as when drawn over `under` (its alpha blended).
inline QColor blended(const QColor& over, const QColor& under) {
    const double a = over.alphaF();
    return QColor::fromRgbF(float(over.redF() * a + under.redF() * (1 - a)),
        float(over.greenF() * a + under.greenF() * (1 - a)), float(over.blueF() * a + under.blueF() * (1 - a)));
}

// Whether `widget`'s placeholder text stands out from its fields' background.
inline bool placeholderReadable(const QWidget& widget) {
    const QPalette& p = widget.palette();
    const QColor base = p.color(QPalette::Base);
    return std::abs(blended(p.color(QPalette::PlaceholderText), base).lightnessF() - base.lightnessF()) >= 0.3;
}

// Gives `widget` (and so its children) a placeholder colour between its text and its fields' background
// when the palette's own is not readable.
inline void keepPlaceholdersReadable(QWidget& widget) {
    if (placeholderReadable(widget))
        return;
    QPalette p = widget.palette();
    for (const auto group : { QPalette::Active, QPalette::Inactive, QPalette::Disabled }) {
        const QColor text = p.color(group, QPalette::Text), base = p.color(group, QPalette::Base);
        p.setColor(group, QPalette::PlaceholderText,
            QColor::fromRgbF(float(text.redF() * 0.6 + base.redF() * 0.4),
                float(text.greenF() * 0.6 + base.greenF() * 0.4), float(text.blueF() * 0.6 + base.blueF() * 0.4)));
    }
    widget.setPalette(p);
}

} // namespace layoutlab::gui
