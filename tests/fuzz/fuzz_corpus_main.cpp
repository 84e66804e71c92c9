// SPDX-License-Identifier: MIT
// Runs a fuzz target over every file of the corpus directories given on the command line, plus
// truncations and single-byte corruptions of each, so compilers without libFuzzer still exercise it.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
    std::size_t inputs = 0;
    for (int i = 1; i < argc; ++i) {
        for (const auto& entry : std::filesystem::directory_iterator(argv[i])) {
            std::ifstream in(entry.path(), std::ios::binary);
            const std::vector<std::uint8_t> bytes(
                (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
            ++inputs;
            for (std::size_t cut = 0; cut < bytes.size(); cut += 1 + bytes.size() / 64) {
                LLVMFuzzerTestOneInput(bytes.data(), cut);
                auto damaged = bytes;
                damaged[cut] ^= 0xa5;
                LLVMFuzzerTestOneInput(damaged.data(), damaged.size());
                inputs += 2;
            }
        }
    }
    std::printf("%zu inputs, no crash\n", inputs);
    return inputs > 0 ? 0 : 1;
}
