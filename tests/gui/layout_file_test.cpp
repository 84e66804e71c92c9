// SPDX-License-Identifier: MIT
// Layout files in the GUI, offscreen: a file chosen on the sweep page sweeps as the CLI does, is swept
// again when it is saved, reports a malformed save in place, and is remembered across sessions.

#include "gui_test_support.h"
#include "main_window.h"
#include "sweep_page.h"
#include "task_runner.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTest>

using namespace layoutlab;
using namespace layoutlab::gui;

namespace {
const QString kLayouts = QStringLiteral(LAYOUTLAB_DATASETS_DIR "/layouts/");

// Replaces `to`'s content with `from`'s, as an editor saving in place does.
void overwrite(const QString& from, const QString& to) {
    QFile in(from);
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QByteArray text = in.readAll();
    QFile out(to);
    QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
    out.write(text);
}

double bytesPerKeyAt(const SimulationResult& result, std::uint32_t threshold) {
    for (const auto& p : result.points)
        if (p.threshold == threshold)
            return p.usableBytesPerKey;
    return -1;
}
} // namespace

class LayoutFileTest : public QObject {
    Q_OBJECT
private slots:
    void init() { m_scratch = std::make_unique<test::Scratch>(); }
    void cleanup() { m_scratch.reset(); }

    void layoutFileSweepsAndSweepsAgainWhenSaved() {
        const QString file = m_scratch->path(QStringLiteral("what-if.toml"));
        overwrite(kLayouts + QStringLiteral("valkey-9.1.toml"), file);
        MainWindow window(m_scratch->database());
        window.openTrace(test::seedTrace());
        QVERIFY(window.runner().waitForIdle(60000));
        SweepPage* sweep = window.sweepPage();
        sweep->setLayoutFile(file);
        QCOMPARE(sweep->layoutFile(), file);
        sweep->thresholdsEdit()->setText(QStringLiteral("64,128"));
        sweep->cacheBox()->setChecked(false);
        QString error;
        QVERIFY2(sweep->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(60000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        // The seed case as the built-in valkey-9.1 gives it.
        const auto builtIn
            = test::simulateForTest(test::seedTrace(), QStringLiteral("valkey-9.1"), QStringLiteral("64,128"), false);
        QCOMPARE(bytesPerKeyAt(sweep->model().result(), 128), bytesPerKeyAt(builtIn, 128));
        const std::string firstSpec = sweep->model().result().layoutSpec;

        // Saved as Valkey 8.1: the sweep runs again by itself and shows 8.1's numbers.
        QSignalSpy reloaded(sweep, &SweepPage::layoutFileReloaded);
        overwrite(kLayouts + QStringLiteral("valkey-8.1.toml"), file);
        QVERIFY(reloaded.wait(10000));
        QCOMPARE(reloaded.first().first().toString(), QString());
        QVERIFY(window.runner().waitForIdle(60000));
        const auto v81
            = test::simulateForTest(test::seedTrace(), QStringLiteral("valkey-8.1"), QStringLiteral("64,128"), false);
        QCOMPARE(bytesPerKeyAt(sweep->model().result(), 128), bytesPerKeyAt(v81, 128));
        QVERIFY(sweep->model().result().layoutSpec != firstSpec); // the content hash changed

        // A malformed save: no dialog, the reason in place, the last good result kept.
        reloaded.clear();
        QFile broken(file);
        QVERIFY(broken.open(QIODevice::WriteOnly | QIODevice::Append));
        broken.write("\n[extra]\nsize = 1\n");
        broken.close();
        QVERIFY(reloaded.wait(10000));
        const QString reason = reloaded.first().first().toString();
        QVERIFY2(reason.contains(QStringLiteral("field extra: unknown field")), qPrintable(reason));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        QCOMPARE(bytesPerKeyAt(sweep->model().result(), 128), bytesPerKeyAt(v81, 128));

        // With re-runs off, a save changes nothing.
        sweep->rerunOnChangeBox()->setChecked(false);
        reloaded.clear();
        overwrite(kLayouts + QStringLiteral("valkey-9.1.toml"), file);
        QVERIFY(!reloaded.wait(1500));
        window.close(); // saves the settings
        MainWindow again(m_scratch->database());
        QCOMPARE(again.sweepPage()->layoutFile(), file);
        QVERIFY(!again.sweepPage()->rerunOnChangeBox()->isChecked());
    }

private:
    std::unique_ptr<test::Scratch> m_scratch;
};

QTEST_MAIN(LayoutFileTest)
#include "layout_file_test.moc"
