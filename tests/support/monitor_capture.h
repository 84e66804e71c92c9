// SPDX-License-Identifier: MIT
#pragma once

// A MONITOR connection to a server under test, collecting what the server executed on a thread of its own
// (the capture a user makes with redis-cli monitor), for the tests that import real captures.

#include "layoutlab/collect/resp_client.h"

#include <arpa/inet.h>
#include <chrono>
#include <mutex>
#include <netinet/in.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace layoutlab::test {

// A MONITOR connection that collects the server's lines on a thread of its own.
class MonitorCapture {
public:
    explicit MonitorCapture(std::uint16_t port) {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr {};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error("cannot connect the MONITOR client");
        const std::string monitor = "MONITOR\r\n";
        if (::write(m_fd, monitor.data(), monitor.size()) != static_cast<ssize_t>(monitor.size()))
            throw std::runtime_error("cannot send MONITOR");
        m_reader = std::thread([this] {
            char buffer[1 << 16];
            for (;;) {
                const ssize_t n = ::read(m_fd, buffer, sizeof buffer);
                if (n <= 0)
                    break;
                std::lock_guard lock(m_mutex);
                m_text.append(buffer, static_cast<std::size_t>(n));
            }
        });
        waitFor("+OK\r\n");
    }
    ~MonitorCapture() { close(); }

    // Waits until the capture holds `marker` (a command's line, or MONITOR's +OK).
    void waitFor(const std::string& marker) {
        for (int i = 0; i < 3000; ++i) {
            {
                std::lock_guard lock(m_mutex);
                if (m_text.find(marker) != std::string::npos)
                    return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        throw std::runtime_error("the MONITOR capture never showed " + marker);
    }
    void close() {
        if (m_fd >= 0) {
            ::shutdown(m_fd, SHUT_RDWR);
            m_reader.join();
            ::close(m_fd);
            m_fd = -1;
        }
    }
    // The capture as redis-cli monitor prints it: one line per command, without RESP's '+'.
    std::string lines() {
        std::lock_guard lock(m_mutex);
        std::string out;
        std::size_t pos = 0;
        while (pos < m_text.size()) {
            const auto end = m_text.find("\r\n", pos);
            if (end == std::string::npos)
                break;
            if (m_text[pos] == '+')
                out.append(m_text, pos + 1, end - pos - 1).append("\n");
            pos = end + 2;
        }
        return out;
    }

private:
    int m_fd = -1;
    std::thread m_reader;
    std::mutex m_mutex;
    std::string m_text;
};

// Waits until the test's own connection is the only client left (a MONITOR connection closed, its buffers
// freed), so that a reading after it compares with one before it.
inline bool waitForOneClient(RespClient& client) {
    for (int i = 0; i < 500; ++i) {
        auto info = client.info("clients");
        if (info && info->at("connected_clients") == "1")
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

} // namespace layoutlab::test
