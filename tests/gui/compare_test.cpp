// SPDX-License-Identifier: MIT
// The Compare view, offscreen: two runs point by point, runs of different layouts at the settings their
// engines ship with, and every layout run on a trace side by side.

#include "chart_panel.h"
#include "compare_page.h"
#include "gui_test_support.h"
#include "library_page.h"
#include "main_window.h"
#include "migration_view.h"
#include "sweep_page.h"
#include "task_runner.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarSet>

#include <memory>

using namespace layoutlab;
using namespace layoutlab::gui;

class CompareTest : public QObject {
    Q_OBJECT
private slots:
    void init() {
        m_dir = std::make_unique<QTemporaryDir>();
        test::useScratchSettings(*m_dir);
        m_db = m_dir->filePath(QStringLiteral("gui.db"));
    }
    void cleanup() { m_dir.reset(); }

    void compareShowsTwoRunsAndTheirDifferences() {
        MainWindow window(m_db);
        test::sweepSeed(window, QStringLiteral("64,128"), false); // valkey-9.1
        window.sweepPage()->layoutBox()->setCurrentText(QStringLiteral("valkey-8.1"));
        QString error;
        QVERIFY2(window.sweepPage()->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(60000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        const auto& runs = window.libraryPage()->runs().all();
        QCOMPARE(runs.size(), std::size_t(2));
        ComparePage* page = window.comparePage();
        QVERIFY(page->compare(runs[0].id, runs[1].id));
        page->metricBox()->setCurrentIndex(0); // bytes per key
        const auto& model = page->model();
        QAbstractItemModelTester tester(
            const_cast<CompareTableModel*>(&model), QAbstractItemModelTester::FailureReportingMode::Fatal);
        QCOMPARE(model.rowCount(), 2);
        // 16-byte keys, 96-byte values: Valkey 9.1 embeds them at 128 (141.37 bytes per key); 8.1 code does
        // not, whatever the threshold (165.37), as reference/LAYOUTS.md records.
        const auto valkey91 = runs[0].layout.find("threshold=128") != std::string::npos ? 0 : 1;
        QCOMPARE(model.threshold(0), 64u);
        QVERIFY(!model.differs(0));
        QVERIFY(model.differs(1));
        QVERIFY(std::abs(*model.value(1, valkey91 == 1) - 141.37) < 0.01);
        QVERIFY(std::abs(*model.value(1, valkey91 == 0) - 165.37) < 0.01);
        QVERIFY(model.data(model.index(1, CompareTableModel::Difference), Qt::BackgroundRole).isValid());
        QVERIFY(!model.data(model.index(0, CompareTableModel::Difference), Qt::BackgroundRole).isValid());
        QCOMPARE(page->chart()->chart()->series().size(), 2);
    }

    // Runs of different layouts meet at the settings their engines ship with (each sweep evaluates its own,
    // whatever the thresholds typed); a threshold one run lacks is not a difference; the engines side by
    // side show every layout run on the trace.
    void compareMeetsLayoutsAtTheirShippedSettings() {
        MainWindow window(m_db);
        // valkey-9.1, which ships with 128: a threshold within the range typed, added to it.
        test::sweepSeed(window, QStringLiteral("32:160:64"), false);
        for (const QString& layout : { QStringLiteral("redis-7.0"), QStringLiteral("memcached-1.6") }) {
            window.sweepPage()->layoutBox()->setCurrentText(layout);
            QString error;
            QVERIFY2(window.sweepPage()->startSweep(&error), qPrintable(error));
            QVERIFY(window.runner().waitForIdle(60000));
            QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        }
        const auto& runs = window.libraryPage()->runs().all();
        QCOMPARE(runs.size(), std::size_t(3));
        QCOMPARE(runs[0].layoutName, std::string("valkey-9.1"));
        QCOMPARE(runs[1].layoutName, std::string("redis-7.0"));
        QCOMPARE(runs[2].layoutName, std::string("memcached-1.6"));
        ComparePage* page = window.comparePage();
        QVERIFY(page->compare(runs[1].id, runs[0].id));
        page->metricBox()->setCurrentIndex(0); // bytes per key
        const auto& model = page->model();
        // Redis at 32, 44 (its own), 96, 160; Valkey 9.1 at 32, 96, 128 (its own), 160.
        QCOMPARE(model.rowCount(), 5);
        QCOMPARE(model.threshold(1), 44u);
        QVERIFY(model.inOneRunOnly(1) && !model.differs(1));
        QCOMPARE(model.threshold(3), 128u);
        QVERIFY(model.inOneRunOnly(3) && !model.differs(3));
        QVERIFY(model.differs(2)); // both at 96: Redis and Valkey differ
        QVERIFY2(page->shippedText().contains(QStringLiteral("embstr-limit 44"))
                && page->shippedText().contains(QStringLiteral("threshold 128")),
            qPrintable(page->shippedText()));

        // Every layout on the trace at its shipped setting, run A's first: figures as the CLI's side-by-side.
        const auto& table = page->migration()->model().table();
        QCOMPARE(table.rows.size(), std::size_t(3));
        QCOMPARE(table.rows[0].name, std::string("redis-7.0"));
        const auto cli = test::runCli(
            { QStringLiteral("sim"), test::seedTrace(), QStringLiteral("--layout"), QStringLiteral("redis-7.0"),
                QStringLiteral("--layout"), QStringLiteral("memcached-1.6"), QStringLiteral("--layout"),
                QStringLiteral("valkey-9.1"), QStringLiteral("--json"), QStringLiteral("--no-db") });
        QCOMPARE(cli.exitCode, 0);
        const QJsonArray rows = QJsonDocument::fromJson(cli.out).object()[QStringLiteral("rows")].toArray();
        QCOMPARE(rows.size(), 3);
        for (const auto& row : rows) {
            const auto o = row.toObject();
            const auto it = std::find_if(table.rows.begin(), table.rows.end(), [&](const MigrationRow& r) {
                return QString::fromStdString(r.name) == o[QStringLiteral("layout")].toString();
            });
            QVERIFY(it != table.rows.end());
            QVERIFY(std::abs(it->bytesPerKey - o[QStringLiteral("bytes_per_key")].toDouble()) < 1e-3);
            QCOMPARE(it->threshold, std::uint32_t(o[QStringLiteral("threshold")].toInt()));
        }
        QCOMPARE(page->migration()->model().rowCount(), 3);
        const auto series = page->migration()->chart()->chart()->series();
        QCOMPARE(series.size(), 1);
        QCOMPARE(qobject_cast<QAbstractBarSeries*>(series.front())->barSets().front()->count(), 3);

        // memcached has no threshold: it meets the sweep at its one setting only.
        QVERIFY(page->compare(runs[1].id, runs[2].id));
        QCOMPARE(model.rowCount(), 4); // Redis's 32, 44, 96, 160 alone
        for (int r = 0; r < model.rowCount(); ++r)
            QVERIFY(model.inOneRunOnly(r));
        QVERIFY2(page->shippedText().contains(QStringLiteral("its one setting")), qPrintable(page->shippedText()));
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_db;
};

QTEST_MAIN(CompareTest)
#include "compare_test.moc"
