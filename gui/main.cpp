// SPDX-License-Identifier: MIT
// layoutlab-gui: the desktop application.
//
//   layoutlab-gui [TRACE] [--db DB]        opens TRACE (else the last trace, else the bundled seed dataset)
//   layoutlab-gui --screenshot DIR [--engine-source ARCHIVE] [--db DB] [TRACE]
//       renders every main view for the bundled seed dataset (or TRACE, when given) to DIR/*.png
//       offscreen and exits; it uses fresh settings, and a temporary results database unless --db is given.
//       With a Valkey source archive it also measures builds of it and renders the sweep with them.

#include "main_window.h"
#include "screenshot_tour.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <QTemporaryDir>

#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
    // --screenshot renders offscreen, with or without a display (the platform is chosen before the
    // application exists).
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]).starts_with("--screenshot") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("layoutlab"));
    QApplication::setApplicationName(QStringLiteral("layoutlab-gui"));
    QApplication::setApplicationVersion(QStringLiteral(LAYOUTLAB_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("layoutlab: explore embed-threshold trade-offs of key/value stores"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption db(QStringLiteral("db"),
        QStringLiteral("Results database (default: $LAYOUTLAB_DB, else the last one, else one in the app data "
                       "directory)"),
        QStringLiteral("PATH"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
        QStringLiteral("Render each main view for the bundled dataset to DIR/*.png and exit"), QStringLiteral("DIR"));
    const QCommandLineOption engineSource(QStringLiteral("engine-source"),
        QStringLiteral("With --screenshot: a Valkey source archive to build at four thresholds and measure, for the "
                       "sweep with measured points"),
        QStringLiteral("ARCHIVE"));
    parser.addOption(db);
    parser.addOption(screenshot);
    parser.addOption(engineSource);
    parser.addPositionalArgument(QStringLiteral("trace"), QStringLiteral("A trace to open (any importable format)"));
    parser.process(app);

    if (parser.isSet(screenshot)) {
        // Screenshots must not depend on (or change) the user's settings and database.
        QTemporaryDir scratch;
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, scratch.path());
        QSettings::setDefaultFormat(QSettings::IniFormat);
        layoutlab::gui::MainWindow window(
            parser.isSet(db) ? parser.value(db) : scratch.filePath(QStringLiteral("screenshots.db")));
        QString error;
        const QStringList traces = parser.positionalArguments();
        if (!layoutlab::gui::renderScreenshots(window, parser.value(screenshot), &error,
                traces.isEmpty() ? QString() : traces.front(), parser.value(engineSource))) {
            std::fprintf(stderr, "layoutlab-gui: error: %s\n", qPrintable(error));
            return 1;
        }
        return 0;
    }

    layoutlab::gui::MainWindow window(parser.value(db));
    window.show();
    if (const QStringList args = parser.positionalArguments(); !args.isEmpty())
        window.openTrace(args.front());
    else
        window.openInitialTrace();
    return QApplication::exec();
}
