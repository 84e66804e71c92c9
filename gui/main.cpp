// SPDX-License-Identifier: MIT
// layoutlab-gui: the desktop application. For now a main window that shows which models the core
// offers; the workload, sweep, size-class, engine and compare views come with issue 6.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"

#include <QApplication>
#include <QLabel>
#include <QMainWindow>
#include <QSettings>
#include <QTreeWidget>
#include <QVBoxLayout>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("layoutlab"));
    QApplication::setApplicationName(QStringLiteral("layoutlab-gui"));

    QMainWindow window;
    window.setWindowTitle(QStringLiteral("layoutlab"));
    auto* central = new QWidget(&window);
    auto* layout = new QVBoxLayout(central);
    layout->addWidget(new QLabel(QStringLiteral("Layout and allocator models available in this build:"), central));
    auto* tree = new QTreeWidget(central);
    tree->setHeaderLabels({ QStringLiteral("Model"), QStringLiteral("Description") });
    auto* layouts = new QTreeWidgetItem(tree, { QStringLiteral("Layouts") });
    for (const auto& l : layoutlab::listLayouts())
        new QTreeWidgetItem(layouts, { QString::fromStdString(l.name), QString::fromStdString(l.description) });
    auto* allocators = new QTreeWidgetItem(tree, { QStringLiteral("Allocators") });
    for (const auto& a : layoutlab::listAllocators())
        new QTreeWidgetItem(allocators,
            { QString::fromStdString(a.name + (a.parameters.empty() ? std::string() : ":" + a.parameters)),
                QString::fromStdString(a.description) });
    tree->expandAll();
    tree->resizeColumnToContents(0);
    layout->addWidget(tree);
    window.setCentralWidget(central);

    QSettings settings;
    window.restoreGeometry(settings.value(QStringLiteral("mainWindow/geometry")).toByteArray());
    if (!settings.contains(QStringLiteral("mainWindow/geometry")))
        window.resize(1280, 800);
    window.show();
    const int rc = QApplication::exec();
    settings.setValue(QStringLiteral("mainWindow/geometry"), window.saveGeometry());
    return rc;
}
