// SPDX-License-Identifier: MIT
#pragma once

// File → Generate Trace: the options of `layoutlab gen` in a form. The dialog only gathers them; the
// main window writes the trace on the task runner (runGenerateJob, as `gen` does) and opens it.

#include "layoutlab/trace/generator.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace layoutlab::gui {

class GenerateDialog final : public QDialog {
    Q_OBJECT
public:
    explicit GenerateDialog(QWidget* parent = nullptr);

    QString outputPath() const;
    // The generator configuration, or the error `layoutlab gen` would print for these options.
    Expected<GeneratorConfig> config() const;

    QLineEdit* outputEdit() const { return m_output; }
    QLineEdit* keySizeEdit() const { return m_keySize; }
    QLineEdit* valueSizeEdit() const { return m_valueSize; }
    QSpinBox* keysBox() const { return m_keys; }
    QSpinBox* opsBox() const { return m_ops; }
    // What every key holds: strings, hashes or sets (`gen --hash-fields`, `--set-members`), and for the
    // collections their element count and element size distributions.
    QComboBox* keyTypeBox() const { return m_keyType; }
    QLineEdit* elementsEdit() const { return m_elements; }
    QLineEdit* elementSizeEdit() const { return m_elementSize; }

    void accept() override; // refuses options `gen` would refuse, saying why
    void saveSettings() const;

private:
    QLineEdit* m_output;
    QSpinBox* m_keys;
    QSpinBox* m_ops;
    QCheckBox* m_noLoad;
    QLineEdit* m_keySize;
    QLineEdit* m_valueSize;
    QDoubleSpinBox* m_ttlFraction;
    QSpinBox* m_ttlSeconds;
    QDoubleSpinBox* m_intValues;
    QDoubleSpinBox* m_getFraction;
    QDoubleSpinBox* m_deleteFraction;
    QLineEdit* m_popularity;
    QSpinBox* m_seed;
    QComboBox* m_keyType;
    QLineEdit* m_elements;
    QLineEdit* m_elementSize;
};

} // namespace layoutlab::gui
