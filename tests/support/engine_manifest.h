// SPDX-License-Identifier: MIT
#pragma once

// The Valkey builds the engines.build test fixture made (tests/engines/build-test-engines.sh): one line
// per build, "binary<TAB>layout<TAB>label", the layout being what the build is, read from its source.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace layoutlab::test {

struct EngineBuild {
    std::string binary;
    std::string layout; // empty when not known
    std::string label;
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
        if (!b.binary.empty())
            out.push_back(std::move(b));
    }
    return out;
}

} // namespace layoutlab::test
