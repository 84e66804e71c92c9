// SPDX-License-Identifier: MIT
#include "generate_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace layoutlab::gui {

namespace {
QDoubleSpinBox* fractionBox(double value, QWidget* parent) {
    auto* box = new QDoubleSpinBox(parent);
    box->setRange(0, 1);
    box->setDecimals(3);
    box->setSingleStep(0.05);
    box->setValue(value);
    return box;
}
} // namespace

GenerateDialog::GenerateDialog(QWidget* parent)
    : QDialog(parent)
    , m_output(new QLineEdit(this))
    , m_keys(new QSpinBox(this))
    , m_ops(new QSpinBox(this))
    , m_noLoad(new QCheckBox(tr("Skip the initial load (every key written once)"), this))
    , m_keySize(new QLineEdit(this))
    , m_valueSize(new QLineEdit(this))
    , m_ttlFraction(fractionBox(0, this))
    , m_ttlSeconds(new QSpinBox(this))
    , m_intValues(fractionBox(0, this))
    , m_getFraction(fractionBox(0.9, this))
    , m_deleteFraction(fractionBox(0, this))
    , m_popularity(new QLineEdit(this))
    , m_seed(new QSpinBox(this))
    , m_keyType(new QComboBox(this))
    , m_elements(new QLineEdit(this))
    , m_elementSize(new QLineEdit(this)) {
    setWindowTitle(tr("Generate Trace"));
    QSettings s;
    m_output->setText(
        s.value(QStringLiteral("generate/output"), QDir::home().filePath(QStringLiteral("synthetic.lltrace")))
            .toString());
    m_keys->setRange(1, 2000000000);
    m_keys->setGroupSeparatorShown(true);
    m_keys->setValue(s.value(QStringLiteral("generate/keys"), 100000).toInt());
    m_ops->setRange(0, 2000000000);
    m_ops->setGroupSeparatorShown(true);
    m_ops->setValue(s.value(QStringLiteral("generate/ops"), 1000000).toInt());
    m_keySize->setText(s.value(QStringLiteral("generate/keySize"), QStringLiteral("16")).toString());
    m_valueSize->setText(s.value(QStringLiteral("generate/valueSize"), QStringLiteral("96")).toString());
    const QString sizeHelp = tr("N, uniform:A:B, normal:MU:SD, lognormal:MU:SIGMA[:MIN:MAX] or hist:FILE");
    m_keySize->setToolTip(sizeHelp);
    m_valueSize->setToolTip(sizeHelp);
    m_ttlFraction->setValue(s.value(QStringLiteral("generate/ttlFraction"), 0.0).toDouble());
    m_ttlSeconds->setRange(1, 1000000000);
    m_ttlSeconds->setValue(s.value(QStringLiteral("generate/ttlSeconds"), 86400).toInt());
    m_ttlSeconds->setSuffix(tr(" s"));
    m_intValues->setValue(s.value(QStringLiteral("generate/intValues"), 0.0).toDouble());
    m_getFraction->setValue(s.value(QStringLiteral("generate/getFraction"), 0.9).toDouble());
    m_deleteFraction->setValue(s.value(QStringLiteral("generate/deleteFraction"), 0.0).toDouble());
    m_popularity->setText(s.value(QStringLiteral("generate/popularity"), QStringLiteral("uniform")).toString());
    m_popularity->setToolTip(tr("uniform, or zipf:A (e.g. zipf:0.99)"));
    m_seed->setRange(0, 2147483647);
    m_seed->setValue(s.value(QStringLiteral("generate/seed"), 1).toInt());
    m_keyType->addItem(tr("Strings (SET, GET, DEL)"), QStringLiteral("string"));
    m_keyType->addItem(tr("Hashes (HSET, HGET, HDEL of one field)"), QStringLiteral("hash"));
    m_keyType->addItem(tr("Sets (SADD, SISMEMBER, SREM of one member)"), QStringLiteral("set"));
    m_keyType->addItem(tr("Sorted sets (ZADD, ZSCORE, ZREM of one member)"), QStringLiteral("zset"));
    m_keyType->addItem(tr("Lists (RPUSH, LINDEX, LPOP of one element)"), QStringLiteral("list"));
    m_keyType->setCurrentIndex(
        std::max(0, m_keyType->findData(s.value(QStringLiteral("generate/keyType"), QStringLiteral("string")))));
    m_elements->setText(s.value(QStringLiteral("generate/elements"), QStringLiteral("uniform:1:100")).toString());
    m_elementSize->setText(s.value(QStringLiteral("generate/elementSize"), QStringLiteral("8")).toString());
    m_elements->setToolTip(tr("Fields, members or elements per key, drawn once per key: ") + sizeHelp);
    m_elementSize->setToolTip(tr("Field, member or element length: ") + sizeHelp);
    auto followKeyType = [this, sizeHelp] {
        const QString type = m_keyType->currentData().toString();
        const bool collection = type != QStringLiteral("string");
        // A set's member and a list's element have no value; a sorted set's is its score, of that many digits.
        m_valueSize->setEnabled(type != QStringLiteral("set") && type != QStringLiteral("list"));
        m_valueSize->setToolTip(
            type == QStringLiteral("zset") ? tr("Digits of each member's integer score: ") + sizeHelp : sizeHelp);
        m_intValues->setEnabled(type == QStringLiteral("string") || type == QStringLiteral("set"));
        m_intValues->setToolTip(type == QStringLiteral("set") ? tr("Share of sets whose members are all integers")
                                                              : tr("Share of values that are decimal integers"));
        m_elements->setEnabled(collection);
        m_elementSize->setEnabled(collection);
        m_ttlFraction->setEnabled(!collection); // TTLs are for string keys (`gen`)
        m_ttlSeconds->setEnabled(!collection);
    };
    followKeyType();
    connect(m_keyType, &QComboBox::currentIndexChanged, this, followKeyType);

    auto* browse = new QPushButton(tr("Browse…"), this);
    auto* outputRow = new QHBoxLayout;
    outputRow->addWidget(m_output, 1);
    outputRow->addWidget(browse);
    auto* form = new QFormLayout;
    // A row holding a layout gets no buddy from QFormLayout, so its mnemonic would show as a literal '&'.
    auto* outputLabel = new QLabel(tr("&Output trace:"), this);
    outputLabel->setBuddy(m_output);
    form->addRow(outputLabel, outputRow);
    form->addRow(tr("Distinct &keys:"), m_keys);
    form->addRow(tr("&Operations after the load:"), m_ops);
    form->addRow(QString(), m_noLoad);
    form->addRow(tr("Keys &hold:"), m_keyType);
    form->addRow(tr("&Fields or members per key:"), m_elements);
    form->addRow(tr("Field or &member size (bytes):"), m_elementSize);
    form->addRow(tr("Key &size (bytes):"), m_keySize);
    form->addRow(tr("&Value size (bytes):"), m_valueSize);
    form->addRow(tr("Share of writes with a &TTL:"), m_ttlFraction);
    form->addRow(tr("TTL:"), m_ttlSeconds);
    form->addRow(tr("Share of &integer values:"), m_intValues);
    form->addRow(tr("Share of &GETs:"), m_getFraction);
    form->addRow(tr("Share of &DELETEs:"), m_deleteFraction);
    form->addRow(tr("&Popularity:"), m_popularity);
    form->addRow(tr("S&eed:"), m_seed);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Generate"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &GenerateDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Output Trace"), m_output->text(), tr("layoutlab traces (*.lltrace)"));
        if (!path.isEmpty())
            m_output->setText(path);
    });
}

QString GenerateDialog::outputPath() const {
    return m_output->text().trimmed();
}

Expected<GeneratorConfig> GenerateDialog::config() const {
    auto config = makeGeneratorConfig(std::uint64_t(m_keys->value()), std::uint64_t(m_ops->value()),
        m_keySize->text().trimmed().toStdString(), m_valueSize->text().trimmed().toStdString(), m_ttlFraction->value(),
        m_intValues->value(), m_getFraction->value(), m_deleteFraction->value(),
        m_popularity->text().trimmed().toStdString(), std::uint64_t(m_seed->value()));
    if (!config)
        return config.error();
    config->load = !m_noLoad->isChecked();
    config->ttlSeconds = std::uint32_t(m_ttlSeconds->value());
    if (!config->load && config->ops == 0)
        return usageError("--no-load without --ops would write an empty trace", "--no-load");
    const QString keyType = m_keyType->currentData().toString();
    if (keyType != QStringLiteral("string")) {
        config->ttlFraction = 0;
        const auto kind = keyType == QStringLiteral("set") ? CollectionKind::Set
            : keyType == QStringLiteral("zset")            ? CollectionKind::SortedSet
            : keyType == QStringLiteral("list")            ? CollectionKind::List
                                                           : CollectionKind::Hash;
        if (auto ok = setCollectionElements(*config, kind, m_elements->text().trimmed().toStdString(),
                m_elementSize->text().trimmed().toStdString());
            !ok)
            return ok.error();
    }
    return config;
}

void GenerateDialog::accept() {
    if (outputPath().isEmpty()) {
        QMessageBox::warning(this, windowTitle(), tr("Say where the trace goes."));
        return;
    }
    if (auto c = config(); !c) {
        QMessageBox::warning(this, windowTitle(), QString::fromStdString(c.error().describe()));
        return;
    }
    saveSettings();
    QDialog::accept();
}

void GenerateDialog::saveSettings() const {
    QSettings s;
    s.setValue(QStringLiteral("generate/output"), m_output->text());
    s.setValue(QStringLiteral("generate/keys"), m_keys->value());
    s.setValue(QStringLiteral("generate/ops"), m_ops->value());
    s.setValue(QStringLiteral("generate/keySize"), m_keySize->text());
    s.setValue(QStringLiteral("generate/valueSize"), m_valueSize->text());
    s.setValue(QStringLiteral("generate/ttlFraction"), m_ttlFraction->value());
    s.setValue(QStringLiteral("generate/ttlSeconds"), m_ttlSeconds->value());
    s.setValue(QStringLiteral("generate/intValues"), m_intValues->value());
    s.setValue(QStringLiteral("generate/getFraction"), m_getFraction->value());
    s.setValue(QStringLiteral("generate/deleteFraction"), m_deleteFraction->value());
    s.setValue(QStringLiteral("generate/popularity"), m_popularity->text());
    s.setValue(QStringLiteral("generate/seed"), m_seed->value());
    s.setValue(QStringLiteral("generate/keyType"), m_keyType->currentData());
    s.setValue(QStringLiteral("generate/elements"), m_elements->text());
    s.setValue(QStringLiteral("generate/elementSize"), m_elementSize->text());
}

} // namespace layoutlab::gui
