// SPDX-License-Identifier: MIT
#include "collections_page.h"

#include "chart_panel.h"
#include "kept_splitter.h"

#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/layout/layout_registry.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <set>

namespace layoutlab::gui {

namespace {
// The engine lines whose collections are modelled, oldest first.
const char* const kLayouts[] = { "redis-7.0", "redis-7.2", "valkey-8.0", "valkey-8.1", "valkey-9.0", "valkey-9.1" };
// Points along the entries axis: every count up to this many, else evenly spaced ones and the limit's two.
constexpr int kMaxPoints = 240;

CollectionType typeOf(int index) {
    switch (index) {
    case 1:
        return CollectionType::Set;
    case 2:
        return CollectionType::SortedSet;
    case 3:
        return CollectionType::List;
    default:
        return CollectionType::Hash;
    }
}
} // namespace

CollectionsPage::CollectionsPage(QWidget* parent)
    : QWidget(parent)
    , m_type(new QComboBox(this))
    , m_elementBytes(new QSpinBox(this))
    , m_valueBytes(new QSpinBox(this))
    , m_integers(new QCheckBox(tr("Integer fields, members or elements"), this))
    , m_oneByOne(new QCheckBox(tr("One entry per command"), this))
    , m_maxEntries(new QSpinBox(this))
    , m_entriesLimitLabel(new QLabel(this))
    , m_entriesLimit(new QSpinBox(this))
    , m_valueLimitLabel(new QLabel(this))
    , m_valueLimit(new QSpinBox(this))
    , m_layouts(new QListWidget(this))
    , m_summary(new QLabel(this))
    , m_chart(new ChartPanel(QStringLiteral("collection-bytes"), this)) {
    m_type->addItems({ tr("hash"), tr("set"), tr("sorted set"), tr("list") });
    m_elementBytes->setRange(1, 1 << 20);
    m_elementBytes->setValue(8);
    m_elementBytes->setSuffix(tr(" B"));
    m_elementBytes->setToolTip(tr("Each field, member or element's length (integers: their digits, 1 to 19)"));
    m_valueBytes->setRange(1, 1 << 20);
    m_valueBytes->setValue(20);
    m_valueBytes->setSuffix(tr(" B"));
    m_maxEntries->setRange(2, 20000); // drawn at once, on the GUI thread: 0.06 s at most for six engines
    m_maxEntries->setValue(1024);
    m_maxEntries->setToolTip(tr("The entries axis runs from 1 to this many (up to 20,000; `layoutlab layouts --type` "
                                "explains a key of any size)"));
    m_entriesLimit->setRange(-5, 1 << 20);
    m_valueLimit->setRange(0, 1 << 20);
    m_oneByOne->setToolTip(tr("The entries came one per HSET, SADD, ZADD or RPUSH: tables grow, and may still hold "
                              "their old half, rather than being sized for one command's count"));
    for (const char* name : kLayouts) {
        auto* item = new QListWidgetItem(QString::fromLatin1(name), m_layouts);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        const bool shown = std::string_view(name) == "redis-7.0" || std::string_view(name) == "valkey-9.1";
        item->setCheckState(shown ? Qt::Checked : Qt::Unchecked);
    }
    m_layouts->setMaximumHeight(m_layouts->sizeHintForRow(0) * 7);
    m_summary->setWordWrap(true);
    m_chart->setDataModel(&m_model);

    auto* form = new QFormLayout;
    form->addRow(tr("&Type:"), m_type);
    form->addRow(tr("&Entry bytes:"), m_elementBytes);
    form->addRow(tr("&Value or score bytes:"), m_valueBytes);
    form->addRow(m_integers);
    form->addRow(m_oneByOne);
    form->addRow(tr("Up to &entries:"), m_maxEntries);
    form->addRow(m_entriesLimitLabel, m_entriesLimit);
    form->addRow(m_valueLimitLabel, m_valueLimit);
    form->addRow(tr("&Engines:"), m_layouts);
    auto* side = new QWidget(this);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->addLayout(form);
    sideLayout->addWidget(m_summary);
    sideLayout->addStretch(1);
    auto* splitter = keptSplitter(Qt::Horizontal, QStringLiteral("collections-splitter"), side, 1, m_chart, 3, this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(splitter, 1);

    connect(m_type, &QComboBox::currentIndexChanged, this, [this] {
        typeChanged();
        redraw();
    });
    for (QSpinBox* box : { m_elementBytes, m_valueBytes, m_maxEntries, m_entriesLimit, m_valueLimit })
        connect(box, &QSpinBox::valueChanged, this, [this] { redraw(); });
    connect(m_integers, &QCheckBox::toggled, this, [this] {
        if (typeOf(m_type->currentIndex()) == CollectionType::Set)
            typeChanged(); // the limit shown is the intset's
        redraw();
    });
    connect(m_oneByOne, &QCheckBox::toggled, this, [this] { redraw(); });
    connect(m_layouts, &QListWidget::itemChanged, this, [this] { redraw(); });
    typeChanged();
    redraw();
}

// The type's limits, at their defaults (config.c), named as the engines name them.
void CollectionsPage::typeChanged() {
    const CollectionLimits defaults;
    const QSignalBlocker blockEntries(m_entriesLimit);
    const QSignalBlocker blockValue(m_valueLimit);
    const CollectionType type = typeOf(m_type->currentIndex());
    m_valueBytes->setEnabled(type == CollectionType::Hash || type == CollectionType::SortedSet);
    m_valueLimit->setEnabled(type != CollectionType::List);
    m_valueLimitLabel->setEnabled(type != CollectionType::List);
    // The labels are the engines' own names, as `CONFIG SET` takes them.
    const auto entriesName = entriesLimitName(type, m_integers->isChecked());
    m_entriesLimitLabel->setText(QString::fromLatin1(entriesName.data(), qsizetype(entriesName.size())) + u':');
    m_entriesLimit->setValue(int(collectionLimit(defaults, entriesName)));
    if (type == CollectionType::List) {
        m_valueLimitLabel->setText(tr("(no value limit)"));
        return;
    }
    const auto valueName = collectionLimitNames(type).back();
    m_valueLimitLabel->setText(QString::fromLatin1(valueName.data(), qsizetype(valueName.size())) + u':');
    m_valueLimit->setValue(int(collectionLimit(defaults, valueName)));
}

QString CollectionsPage::summary() const {
    return m_summary->text();
}

void CollectionsPage::redraw() {
    const CollectionType type = typeOf(m_type->currentIndex());
    CollectionShape shape;
    shape.type = type;
    shape.elementBytes = std::uint32_t(m_elementBytes->value());
    shape.integerElements = m_integers->isChecked();
    shape.valueBytes = std::uint32_t(m_valueBytes->value());
    shape.oneCommand = !m_oneByOne->isChecked();
    CollectionLimits limits; // 0 for list-max-listpack-size: the model says why it is refused
    setCollectionLimit(limits, entriesLimitName(type, shape.integerElements), m_entriesLimit->value());
    if (type != CollectionType::List)
        setCollectionLimit(limits, collectionLimitNames(type).back(), m_valueLimit->value());
    const int entriesLimit = std::max(0, m_entriesLimit->value());
    // The counts drawn: all of them, or evenly spaced ones with the limit and one past it.
    const int most = m_maxEntries->value();
    std::set<int> counts;
    const int step = std::max(1, (most + kMaxPoints - 1) / kMaxPoints);
    for (int n = 1; n <= most; n += step)
        counts.insert(n);
    counts.insert(most);
    if (type != CollectionType::List && entriesLimit >= 1 && int(entriesLimit) < most) {
        counts.insert(int(entriesLimit));
        counts.insert(int(entriesLimit) + 1);
    }

    QChart* chart = m_chart->freshChart();
    m_model.clear();
    QStringList headers { tr("entries") };
    std::vector<std::pair<QString, LayoutAndAllocator>> shown;
    for (int i = 0; i < m_layouts->count(); ++i) {
        const QListWidgetItem* item = m_layouts->item(i);
        if (item->checkState() != Qt::Checked)
            continue;
        auto models = parseLayoutAndAllocator(item->text().toStdString(), "");
        if (!models)
            continue;
        shown.emplace_back(item->text(), *models);
        headers << tr("%1 bytes per entry").arg(item->text()) << tr("%1 encoding").arg(item->text());
    }
    m_model.setHorizontalHeaderLabels(headers);
    for (int n : counts)
        m_model.appendRow(new QStandardItem(QString::number(n)));
    auto* x = new QValueAxis(chart);
    x->setTitleText(tr("entries (fields, members or elements) in the key"));
    x->setLabelFormat(QStringLiteral("%.0f"));
    auto* y = new QValueAxis(chart);
    y->setTitleText(tr("usable bytes per entry (the key's own allocations included)"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    double top = 0;
    QStringList atMost;
    QLocale locale;
    for (std::size_t l = 0; l < shown.size(); ++l) {
        const auto& [name, models] = shown[l];
        auto* series = new QLineSeries(chart);
        series->setName(name);
        int row = 0;
        QString lastEncoding;
        double lastBytes = 0;
        QString error;
        for (int n : counts) {
            shape.entries = std::uint64_t(n);
            auto key = describeCollection(*models.layout, shape, *models.allocator, limits);
            if (!key) {
                error = QString::fromStdString(key.error().message);
                break;
            }
            const double perEntry = key->usableBytes(*models.allocator) / double(n);
            series->append(n, perEntry);
            top = std::max(top, perEntry);
            m_model.setItem(row, int(1 + 2 * l), new QStandardItem(QString::number(perEntry, 'f', 2)));
            m_model.setItem(row, int(2 + 2 * l), new QStandardItem(QString::fromStdString(key->encoding)));
            lastEncoding = QString::fromStdString(key->encoding);
            lastBytes = perEntry;
            ++row;
        }
        chart->addSeries(series);
        series->attachAxis(x);
        series->attachAxis(y);
        m_chart->addHoverTips(series, tr("entries"), 1);
        atMost << (error.isEmpty()
                ? tr("%1: %2, %3 B an entry").arg(name, lastEncoding, locale.toString(lastBytes, 'f', 1))
                : tr("%1: %2").arg(name, error));
    }
    x->setRange(0, most);
    y->setRange(0, top > 0 ? top * 1.1 : 1);
    y->applyNiceNumbers();
    const QString typeName = m_type->currentText();
    chart->setTitle(tr("A %1 key's bytes per entry as it grows").arg(typeName));
    m_summary->setText(shown.empty()
            ? tr("Tick an engine to draw its line.")
            : tr("At %1 entries:\n%2").arg(locale.toString(most), atMost.join(QLatin1Char('\n'))));
}

void CollectionsPage::restoreSettings() {
    QSettings s;
    s.beginGroup(QStringLiteral("collections"));
    m_type->setCurrentIndex(s.value(QStringLiteral("type"), 0).toInt());
    typeChanged();
    m_elementBytes->setValue(s.value(QStringLiteral("elementBytes"), m_elementBytes->value()).toInt());
    m_valueBytes->setValue(s.value(QStringLiteral("valueBytes"), m_valueBytes->value()).toInt());
    m_integers->setChecked(s.value(QStringLiteral("integers"), false).toBool());
    m_oneByOne->setChecked(s.value(QStringLiteral("oneByOne"), false).toBool());
    m_maxEntries->setValue(s.value(QStringLiteral("maxEntries"), m_maxEntries->value()).toInt());
    m_entriesLimit->setValue(s.value(QStringLiteral("entriesLimit"), m_entriesLimit->value()).toInt());
    m_valueLimit->setValue(s.value(QStringLiteral("valueLimit"), m_valueLimit->value()).toInt());
    const QStringList checked = s.value(QStringLiteral("layouts")).toStringList();
    if (!checked.isEmpty())
        for (int i = 0; i < m_layouts->count(); ++i)
            m_layouts->item(i)->setCheckState(
                checked.contains(m_layouts->item(i)->text()) ? Qt::Checked : Qt::Unchecked);
    redraw();
}

void CollectionsPage::saveSettings() const {
    QSettings s;
    s.beginGroup(QStringLiteral("collections"));
    s.setValue(QStringLiteral("type"), m_type->currentIndex());
    s.setValue(QStringLiteral("elementBytes"), m_elementBytes->value());
    s.setValue(QStringLiteral("valueBytes"), m_valueBytes->value());
    s.setValue(QStringLiteral("integers"), m_integers->isChecked());
    s.setValue(QStringLiteral("oneByOne"), m_oneByOne->isChecked());
    s.setValue(QStringLiteral("maxEntries"), m_maxEntries->value());
    s.setValue(QStringLiteral("entriesLimit"), m_entriesLimit->value());
    s.setValue(QStringLiteral("valueLimit"), m_valueLimit->value());
    QStringList checked;
    for (int i = 0; i < m_layouts->count(); ++i)
        if (m_layouts->item(i)->checkState() == Qt::Checked)
            checked << m_layouts->item(i)->text();
    s.setValue(QStringLiteral("layouts"), checked);
}

} // namespace layoutlab::gui
