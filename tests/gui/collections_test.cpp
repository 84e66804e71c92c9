// SPDX-License-Identifier: MIT
// The Collections view, offscreen: a collection key's bytes per entry as it grows, one line per engine, the
// jump where the engine's limit makes the listpack a table, the limit moving the jump, the figures the same
// as `layoutlab layouts --type ... --json` prints, exportable, and kept across runs.

#include "chart_panel.h"
#include "collections_page.h"
#include "generate_dialog.h"
#include "gui_test_support.h"
#include "limit_sweep_panel.h"
#include "main_window.h"
#include "sweep_page.h"
#include "task_runner.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QListWidget>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>
#include <QtCharts/QLineSeries>

#include "layoutlab/store/results_db.h"
#include "layoutlab/store/stored_run.h"

using namespace layoutlab;
using namespace layoutlab::gui;

namespace {
// The row of `entries` in the page's table, or -1.
int rowOf(const QStandardItemModel& model, int entries) {
    for (int r = 0; r < model.rowCount(); ++r)
        if (model.item(r, 0)->text().toInt() == entries)
            return r;
    return -1;
}
double bytesAt(const QStandardItemModel& model, int entries, int layout) {
    return model.item(rowOf(model, entries), 1 + 2 * layout)->text().toDouble();
}
QString encodingAt(const QStandardItemModel& model, int entries, int layout) {
    return model.item(rowOf(model, entries), 2 + 2 * layout)->text();
}
} // namespace

class CollectionsTest : public QObject {
    Q_OBJECT
private slots:
    void theLineJumpsWhereTheLimitMakesATable() {
        test::Scratch scratch;
        MainWindow window(scratch.database());
        CollectionsPage* page = window.collectionsPage();
        page->typeBox()->setCurrentIndex(0); // hash
        page->elementBytesBox()->setValue(8);
        page->valueBytesBox()->setValue(20);
        page->maxEntriesBox()->setValue(1024);
        QCOMPARE(page->entriesLimitBox()->value(), 512); // hash-max-listpack-entries' default
        const auto& model = page->model();
        QAbstractItemModelTester tester(
            const_cast<QStandardItemModel*>(&model), QAbstractItemModelTester::FailureReportingMode::Fatal);
        // Redis 7.0 and Valkey 9.1 drawn by default: a line each.
        QCOMPARE(page->chart()->chart()->series().size(), 2);
        QVERIFY(rowOf(model, 512) >= 0 && rowOf(model, 513) >= 0);
        for (int layout = 0; layout < 2; ++layout) {
            QCOMPARE(encodingAt(model, 512, layout), QStringLiteral("listpack"));
            QCOMPARE(encodingAt(model, 513, layout), QStringLiteral("hashtable"));
            QVERIFY2(bytesAt(model, 513, layout) > 1.3 * bytesAt(model, 512, layout), "the table costs more");
        }
        // The figures are the CLI's for the same key.
        const auto cli = test::runCli(
            { QStringLiteral("layouts"), QStringLiteral("valkey-9.1"), QStringLiteral("--type"), QStringLiteral("hash"),
                QStringLiteral("--entries"), QStringLiteral("513"), QStringLiteral("--field-bytes"),
                QStringLiteral("8"), QStringLiteral("--value-bytes"), QStringLiteral("20"), QStringLiteral("--json") });
        QCOMPARE(cli.exitCode, 0);
        const double usable
            = QJsonDocument::fromJson(cli.out).object().value(QStringLiteral("usable_bytes")).toDouble();
        QVERIFY(std::abs(bytesAt(model, 513, 1) - usable / 513) < 0.01);
        // Raising the limit past the axis: no table anywhere on it.
        page->entriesLimitBox()->setValue(2048);
        QCOMPARE(encodingAt(model, 1024, 0), QStringLiteral("listpack"));
        QVERIFY(page->summary().contains(QStringLiteral("listpack")));
        // Every chart exports its data.
        const QString csv = scratch.path(QStringLiteral("collections.csv"));
        QVERIFY(page->chart()->exportCsv(csv));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().count('\n') >= model.rowCount());
    }

    void everyTypeAndEngineDraws() {
        test::Scratch scratch;
        MainWindow window(scratch.database());
        CollectionsPage* page = window.collectionsPage();
        for (int i = 0; i < page->layoutsList()->count(); ++i)
            page->layoutsList()->item(i)->setCheckState(Qt::Checked);
        page->maxEntriesBox()->setValue(3000);
        for (int type = 0; type < 4; ++type) {
            page->typeBox()->setCurrentIndex(type);
            QCOMPARE(page->chart()->chart()->series().size(), page->layoutsList()->count());
            for (QAbstractSeries* s : page->chart()->chart()->series())
                QVERIFY(static_cast<QLineSeries*>(s)->count() > 100);
            QVERIFY2(!page->summary().contains(QStringLiteral("error")), qPrintable(page->summary()));
        }
        // Lists: Redis 7.0's are quicklists from the first element, 7.2's a listpack first.
        page->typeBox()->setCurrentIndex(3);
        QCOMPARE(encodingAt(page->model(), 1, 0), QStringLiteral("quicklist"));
        QCOMPARE(encodingAt(page->model(), 1, 1), QStringLiteral("listpack"));
        // Integer members: an intset, under set-max-intset-entries.
        page->typeBox()->setCurrentIndex(1);
        page->elementBytesBox()->setValue(5);
        page->integersBox()->setChecked(true);
        QCOMPARE(page->entriesLimitBox()->value(), 512);
        QCOMPARE(encodingAt(page->model(), 512, 5), QStringLiteral("intset"));
        QCOMPARE(encodingAt(page->model(), 513, 5), QStringLiteral("hashtable"));
    }

    void theShapeIsKeptAcrossRuns() {
        test::Scratch scratch;
        {
            MainWindow window(scratch.database());
            CollectionsPage* page = window.collectionsPage();
            page->typeBox()->setCurrentIndex(2); // sorted set
            page->elementBytesBox()->setValue(16);
            page->entriesLimitBox()->setValue(256);
            page->oneByOneBox()->setChecked(true);
            page->layoutsList()->item(2)->setCheckState(Qt::Checked);
            window.close();
        }
        MainWindow window(scratch.database());
        CollectionsPage* page = window.collectionsPage();
        QCOMPARE(page->typeBox()->currentIndex(), 2);
        QCOMPARE(page->elementBytesBox()->value(), 16);
        QCOMPARE(page->entriesLimitBox()->value(), 256);
        QVERIFY(page->oneByOneBox()->isChecked());
        QCOMPARE(page->layoutsList()->item(2)->checkState(), Qt::Checked);
        QCOMPARE(page->chart()->chart()->series().size(), 3);
    }

    // File → Generate Trace makes hash and set workloads too: what `gen --set-members` writes for the same
    // options, and the choice kept for the next time.
    void theGenerateDialogMakesSetWorkloads() {
        test::Scratch scratch;
        MainWindow window(scratch.database());
        {
            GenerateDialog dialog(&window);
            dialog.keyTypeBox()->setCurrentIndex(dialog.keyTypeBox()->findData(QStringLiteral("set")));
            QVERIFY(dialog.elementsEdit()->isEnabled());
            dialog.elementsEdit()->setText(QStringLiteral("nonsense"));
            const auto refused = dialog.config();
            QVERIFY(!refused);
            QCOMPARE(refused.error().field, std::string(field::kSetMembers));
            dialog.keysBox()->setValue(500);
            dialog.opsBox()->setValue(3000);
            dialog.elementsEdit()->setText(QStringLiteral("uniform:1:300"));
            dialog.elementSizeEdit()->setText(QStringLiteral("uniform:2:10"));
            auto config = dialog.config();
            QVERIFY2(config, config ? "" : config.error().describe().c_str());
            QCOMPARE(config->collection, CollectionKind::Set);
            // Sorted sets and lists too, a list's elements named as such when refused.
            dialog.keyTypeBox()->setCurrentIndex(dialog.keyTypeBox()->findData(QStringLiteral("zset")));
            QVERIFY(dialog.valueSizeEdit()->isEnabled()); // the scores' digits
            auto zsets = dialog.config();
            QVERIFY2(zsets, zsets ? "" : zsets.error().describe().c_str());
            QCOMPARE(zsets->collection, CollectionKind::SortedSet);
            dialog.keyTypeBox()->setCurrentIndex(dialog.keyTypeBox()->findData(QStringLiteral("list")));
            QVERIFY(!dialog.valueSizeEdit()->isEnabled());
            dialog.elementsEdit()->setText(QStringLiteral("nonsense"));
            const auto noList = dialog.config();
            QVERIFY(!noList);
            QCOMPARE(noList.error().field, std::string(field::kListElements));
            dialog.elementsEdit()->setText(QStringLiteral("uniform:1:300"));
            dialog.keyTypeBox()->setCurrentIndex(dialog.keyTypeBox()->findData(QStringLiteral("set")));
            dialog.saveSettings();
            const QString generated = scratch.path(QStringLiteral("sets.lltrace"));
            QVERIFY(window.generateTrace(*config, generated));
            QVERIFY(window.runner().waitForIdle(60000));
            QVERIFY(window.runner().waitForIdle(60000));
            QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
            const QString byCli = scratch.path(QStringLiteral("by-cli.lltrace"));
            const auto cli = test::runCli({ QStringLiteral("gen"), QStringLiteral("-o"), byCli,
                QStringLiteral("--keys"), QStringLiteral("500"), QStringLiteral("--ops"), QStringLiteral("3000"),
                QStringLiteral("--key-size"), dialog.keySizeEdit()->text(), QStringLiteral("--value-size"),
                dialog.valueSizeEdit()->text(), QStringLiteral("--set-members"), QStringLiteral("uniform:1:300"),
                QStringLiteral("--member-size"), QStringLiteral("uniform:2:10"), QStringLiteral("--get-fraction"),
                QString::number(config->getFraction), QStringLiteral("--delete-fraction"),
                QString::number(config->deleteFraction), QStringLiteral("--int-values"),
                QString::number(config->intValueFraction), QStringLiteral("--popularity"), QStringLiteral("uniform"),
                QStringLiteral("--seed"), QString::number(config->seed) });
            QCOMPARE(cli.exitCode, 0);
            QFile a(generated), b(byCli);
            QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
            QVERIFY(a.readAll() == b.readAll());
        }
        GenerateDialog again(&window);
        QCOMPARE(again.keyTypeBox()->currentData().toString(), QStringLiteral("set"));
        QCOMPARE(again.elementsEdit()->text(), QStringLiteral("uniform:1:300"));
    }

    // A collection limit swept in the Sweep view: the bundled RDB file's hashes at each value of
    // hash-max-listpack-entries, bytes per key and lines per HGET charted as `sweep --param --json` gives them, the
    // advice under the chart, the run stored and shown again with its limit, the choice kept in the settings.
    void aSweptLimitIsChartedAsTheCliGivesIt() {
        test::Scratch scratch;
        const QString rdb = QStringLiteral(LAYOUTLAB_DATASETS_DIR "/samples/keyspace.rdb");
        MainWindow window(scratch.database());
        window.openTrace(rdb);
        QVERIFY(window.runner().waitForIdle(120000));
        SweepPage* sweep = window.sweepPage();
        QVERIFY(sweep->limitChart()->isHidden());
        sweep->layoutBox()->setCurrentText(QStringLiteral("valkey-9.1"));
        sweep->thresholdsEdit()->setText(QStringLiteral("64,128"));
        sweep->cacheBox()->setChecked(false);
        sweep->slabsBox()->setChecked(false);
        const QString values = QStringLiteral("2,4,8,16,64,512");
        sweep->limitControls()->limitBox()->setCurrentIndex(
            sweep->limitControls()->limitBox()->findData(QStringLiteral("hash-max-listpack-entries")));
        sweep->limitControls()->valuesEdit()->setText(values);
        QString error;
        QVERIFY2(sweep->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        QVERIFY(!sweep->limitChart()->isHidden());

        const auto cli = test::runCli({ QStringLiteral("sweep"), rdb, QStringLiteral("--layout"),
            QStringLiteral("valkey-9.1"), QStringLiteral("--thresholds"), QStringLiteral("64,128"),
            QStringLiteral("--param"), QStringLiteral("hash-max-listpack-entries=") + values, QStringLiteral("--json"),
            QStringLiteral("--no-db") });
        QCOMPARE(cli.exitCode, 0);
        const QJsonArray points = QJsonDocument::fromJson(cli.out)
                                      .object()
                                      .value(QStringLiteral("limit_sweep"))
                                      .toObject()
                                      .value(QStringLiteral("points"))
                                      .toArray();
        QCOMPARE(points.size(), 6);
        const auto* data = qobject_cast<QStandardItemModel*>(sweep->limitChart()->chart()->dataModel());
        QVERIFY(data);
        QCOMPARE(data->rowCount(), 6);
        for (int r = 0; r < 6; ++r) {
            const QJsonObject p = points[r].toObject();
            QCOMPARE(data->item(r, 0)->data(Qt::DisplayRole).toDouble(), p.value(QStringLiteral("value")).toDouble());
            QVERIFY(std::abs(data->item(r, 1)->data(Qt::DisplayRole).toDouble()
                        - p.value(QStringLiteral("usable_bytes_per_key")).toDouble())
                < 1e-9);
            // Lines per HGET: the hashes' rows' lookups over their fields.
            double lines = 0, fields = 0;
            for (const auto& row : p.value(QStringLiteral("collections")).toArray()) {
                const QJsonObject c = row.toObject();
                if (c.value(QStringLiteral("type")).toString() != QLatin1String("hash"))
                    continue;
                const double entries = c.value(QStringLiteral("entries")).toDouble();
                lines += c.value(QStringLiteral("lookup_lines_per_element")).toDouble() * entries;
                fields += entries;
            }
            QVERIFY(std::abs(data->item(r, 2)->data(Qt::DisplayRole).toDouble() - lines / fields) < 1e-3);
        }
        // These hashes are small: a table's bucket and entry cost more lines than their one- or two-line listpacks.
        QVERIFY(
            data->item(0, 2)->data(Qt::DisplayRole).toDouble() > data->item(5, 2)->data(Qt::DisplayRole).toDouble());
        QCOMPARE(sweep->limitChart()->chart()->chart()->series().size(), 3); // bytes, lines, the advised mark
        QVERIFY2(sweep->limitChart()->adviceText().startsWith(QStringLiteral("Advised at equal weights")),
            qPrintable(sweep->limitChart()->adviceText()));
        const QString png = scratch.path(QStringLiteral("limit.png"));
        QVERIFY(sweep->limitChart()->chart()->exportPng(png));
        QVERIFY(QFileInfo(png).size() > 1000);

        // The stored run, shown again: the form holds its limit, the chart its values.
        sweep->limitControls()->limitBox()->setCurrentIndex(0);
        auto db = ResultsDb::open(scratch.database().toStdString());
        QVERIFY(db);
        const auto stored = (*db)->listRuns();
        QVERIFY(stored && !stored->empty());
        auto run = loadStoredRun(**db, stored->back().id);
        QVERIFY(run);
        sweep->showStoredRun(*run);
        QCOMPARE(sweep->limitControls()->parameter(), QStringLiteral("hash-max-listpack-entries=") + values);
        QCOMPARE(qobject_cast<QStandardItemModel*>(sweep->limitChart()->chart()->dataModel())->rowCount(), 6);
        sweep->saveSettings();
        sweep->limitControls()->limitBox()->setCurrentIndex(0);
        sweep->restoreSettings();
        QCOMPARE(sweep->limitControls()->parameter(), QStringLiteral("hash-max-listpack-entries=") + values);
    }
};

QTEST_MAIN(CollectionsTest)
#include "collections_test.moc"
