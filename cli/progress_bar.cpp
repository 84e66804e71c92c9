// SPDX-License-Identifier: MIT
#include "progress_bar.h"

#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <string_view>
#include <unistd.h>

namespace layoutlab::cli {

namespace {
bool progressLines() {
    const char* mode = std::getenv("LAYOUTLAB_PROGRESS");
    return mode && std::string_view(mode) == "lines";
}
} // namespace

ProgressBar::ProgressBar(std::string label)
    : m_label(std::move(label))
    , m_enabled(::isatty(STDERR_FILENO) == 1 || progressLines())
    , m_lines(progressLines())
    , m_start(std::chrono::steady_clock::now()) { }

ProgressBar::~ProgressBar() {
    if (m_drawn && !m_lines)
        std::fputs("\r\033[K", stderr);
}

void ProgressBar::phase(std::string_view name) {
    if (m_drawn && !m_lines)
        std::fputs("\r\033[K", stderr);
    m_label = std::string(name);
    m_drawn = false;
    m_start = std::chrono::steady_clock::now();
}

void ProgressBar::progress(double fraction, std::uint64_t done) {
    if (!m_enabled)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (m_drawn && fraction < 1.0 && now - m_lastDraw < std::chrono::milliseconds(100))
        return;
    m_lastDraw = now;
    m_drawn = true;
    if (m_lines) {
        fmt::print(stderr, "progress {} {:.4f} {}\n", m_label, fraction, done);
        std::fflush(stderr);
        return;
    }
    const double seconds = std::chrono::duration<double>(now - m_start).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
    constexpr int kWidth = 30;
    std::string bar;
    if (fraction >= 0) {
        const int filled = static_cast<int>(fraction * kWidth);
        bar = std::string(static_cast<std::size_t>(filled), '#')
            + std::string(static_cast<std::size_t>(kWidth - filled), '.');
        const double eta = fraction > 0 ? seconds * (1.0 - fraction) / fraction : 0.0;
        fmt::print(stderr, "\r\033[K{} [{}] {:5.1f}%  {:.1f}M requests  {:.1f}M/s  ETA {:.0f}s", m_label, bar,
            100.0 * fraction, static_cast<double>(done) / 1e6, rate / 1e6, eta);
    } else {
        fmt::print(
            stderr, "\r\033[K{} {:.1f}M requests  {:.1f}M/s", m_label, static_cast<double>(done) / 1e6, rate / 1e6);
    }
    std::fflush(stderr);
}

} // namespace layoutlab::cli
