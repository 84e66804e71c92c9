// SPDX-License-Identifier: MIT
// A cache budget in the Sweep view, offscreen: with maxmemory given, the sweep replays each threshold under
// it, the table gains the hit ratio and evictions, and the last chart draws them, with the CLI's figures
// for the same sweep; the budget is kept in the settings and comes back with a stored run.

#include "chart_panel.h"
#include "gui_test_support.h"
#include "main_window.h"
#include "result_models.h"
#include "sweep_page.h"
#include "task_runner.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QTest>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <nlohmann/json.hpp>

#include <memory>

using namespace layoutlab;
using namespace layoutlab::gui;

class BudgetTest : public QObject {
    Q_OBJECT
private slots:
    void init() { m_scratch = std::make_unique<test::Scratch>(); }
    void cleanup() { m_scratch.reset(); }

    void aBudgetChartsTheHitRatioTheCliGives() {
        const QString trace = m_scratch->path(QStringLiteral("zipf.lltrace"));
        const auto gen = test::runCli({ QStringLiteral("gen"), QStringLiteral("-o"), trace, QStringLiteral("--keys"),
            QStringLiteral("20000"), QStringLiteral("--ops"), QStringLiteral("100000"),
            QStringLiteral("--get-fraction"), QStringLiteral("1"), QStringLiteral("--popularity"),
            QStringLiteral("zipf:0.99"), QStringLiteral("--seed"), QStringLiteral("3") });
        QCOMPARE(gen.exitCode, 0);
        MainWindow window(m_scratch->database());
        window.openTrace(trace);
        QVERIFY(window.runner().waitForIdle(60000));
        SweepPage* sweep = window.sweepPage();
        QVERIFY(!sweep->policyBox()->isEnabled()); // no budget yet
        sweep->layoutBox()->setCurrentText(QStringLiteral("valkey-9.1"));
        sweep->allocatorBox()->setCurrentText(QString());
        sweep->thresholdsEdit()->setText(QStringLiteral("64:128:32"));
        sweep->maxmemoryEdit()->setText(QStringLiteral("1mb,2mb"));
        QString error;
        QVERIFY(!sweep->startSweep(&error)); // one budget here; a curve is the Cache curve view's
        QVERIFY2(error.contains(QStringLiteral("one budget")) && error.contains(QStringLiteral("Cache curve")),
            qPrintable(error));
        sweep->maxmemoryEdit()->setText(QStringLiteral("1mb"));
        QVERIFY(sweep->policyBox()->isEnabled());
        sweep->policyBox()->setCurrentText(QStringLiteral("allkeys-lfu"));
        sweep->fillOnMissBox()->setChecked(true);
        QVERIFY2(sweep->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));

        const auto cli
            = test::runCli({ QStringLiteral("sweep"), trace, QStringLiteral("--layout"), QStringLiteral("valkey-9.1"),
                QStringLiteral("--thresholds"), QStringLiteral("64:128:32"), QStringLiteral("--maxmemory"),
                QStringLiteral("1mb"), QStringLiteral("--policy"), QStringLiteral("allkeys-lfu"),
                QStringLiteral("--fill-on-miss"), QStringLiteral("--json"), QStringLiteral("--no-db") });
        QCOMPARE(cli.exitCode, 0);
        const auto j = nlohmann::json::parse(cli.out.toStdString());
        const auto& model = sweep->model();
        const int hit = model.columnOf(QStringLiteral("hit_ratio"));
        const int evicted = model.columnOf(QStringLiteral("evicted_keys"));
        QVERIFY2(hit > 0 && evicted > 0, "the table has the hit ratio and the evictions");
        QCOMPARE(model.rowCount(), int(j["points"].size()));
        for (int r = 0; r < model.rowCount(); ++r) {
            QVERIFY(std::abs(model.value(r, hit) - 100 * j["points"][r]["hit_ratio"].get<double>())
                < 0.01); // JSON: 4 decimals
            QCOMPARE(model.value(r, evicted), j["points"][r]["evicted_keys"].get<double>());
        }
        QChart* chart = sweep->charts()[3]->chart();
        QVERIFY2(chart->title().contains(QStringLiteral("allkeys-lfu")), qPrintable(chart->title()));
        bool hitLine = false;
        for (QAbstractSeries* s : chart->series())
            if (auto* line = qobject_cast<QLineSeries*>(s); line && line->name() == QStringLiteral("hit ratio"))
                hitLine = line->count() == int(j["points"].size());
        QVERIFY(hitLine);

        sweep->saveSettings();
        sweep->maxmemoryEdit()->clear();
        sweep->restoreSettings();
        QCOMPARE(sweep->maxmemoryEdit()->text(), QStringLiteral("1mb"));
        QCOMPARE(sweep->policyBox()->currentText(), QStringLiteral("allkeys-lfu"));
    }

    void aMemcachedLayoutTakesTheBudgetAsItsMemoryLimit() {
        const QString trace = m_scratch->path(QStringLiteral("mc.lltrace"));
        const auto gen = test::runCli({ QStringLiteral("gen"), QStringLiteral("-o"), trace, QStringLiteral("--keys"),
            QStringLiteral("20000"), QStringLiteral("--ops"), QStringLiteral("60000"), QStringLiteral("--get-fraction"),
            QStringLiteral("1"), QStringLiteral("--popularity"), QStringLiteral("zipf:0.99"), QStringLiteral("--seed"),
            QStringLiteral("3") });
        QCOMPARE(gen.exitCode, 0);
        MainWindow window(m_scratch->database());
        window.openTrace(trace);
        QVERIFY(window.runner().waitForIdle(60000));
        SweepPage* sweep = window.sweepPage();
        sweep->layoutBox()->setCurrentText(QStringLiteral("memcached-1.6"));
        sweep->allocatorBox()->setCurrentText(QString());
        sweep->thresholdsEdit()->clear();
        sweep->maxmemoryEdit()->setText(QStringLiteral("2mb"));
        sweep->fillOnMissBox()->setChecked(true);
        QString error;
        QVERIFY2(sweep->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        const auto cli = test::runCli({ QStringLiteral("sim"), trace, QStringLiteral("--layout"),
            QStringLiteral("memcached-1.6"), QStringLiteral("--memory-limit"), QStringLiteral("2mb"),
            QStringLiteral("--fill-on-miss"), QStringLiteral("--json"), QStringLiteral("--no-db") });
        QCOMPARE(cli.exitCode, 0);
        const auto j = nlohmann::json::parse(cli.out.toStdString());
        const auto& model = sweep->model();
        const int hit = model.columnOf(QStringLiteral("hit_ratio"));
        QVERIFY(hit > 0);
        QCOMPARE(model.rowCount(), 1);
        QVERIFY(std::abs(model.value(0, hit) - 100 * j["points"][0]["hit_ratio"].get<double>()) < 0.01);
        QVERIFY2(sweep->charts()[3]->chart()->title().contains(QStringLiteral("memcached")),
            qPrintable(sweep->charts()[3]->chart()->title()));
    }

private:
    std::unique_ptr<test::Scratch> m_scratch;
};

QTEST_MAIN(BudgetTest)
#include "budget_test.moc"
