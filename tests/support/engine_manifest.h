// SPDX-License-Identifier: MIT
#pragma once

// The Valkey and Redis builds the engines.build test fixture made (tests/engines/build-test-engines.sh):
// one line per build, "binary<TAB>layout<TAB>label<TAB>engine", the layout being what the build is, read
// from its source, and the engine `drive --engine` takes for it.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace layoutlab::test {

struct EngineBuild {
    std::string binary;
    std::string layout; // empty when not known
    std::string label;
    std::string engine = "valkey";
};

inline std::vector<EngineBuild> readEngineManifest(const std::string& path) {
    std::vector<EngineBuild> out;
    std::ifstream lines(path);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        EngineBuild b;
        std::getline(fields, b.binary, '\t');
        std::getline(fields, b.layout, '\t');
        std::getline(fields, b.label, '\t');
        if (std::string engine; std::getline(fields, engine, '\t') && !engine.empty())
            b.engine = engine;
        if (!b.binary.empty())
            out.push_back(std::move(b));
    }
    return out;
}

} // namespace layoutlab::test
