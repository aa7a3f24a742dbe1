// Whether the code under test opened a FIFO to read it. Opening a FIFO's writing end without
// blocking succeeds only while a reader has it open, so a thread that keeps trying sees any
// reader; its open also releases a reader blocked there, so a test fails instead of hanging.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace tessera_test {

class FifoReadWatchdog {
 public:
  // Starts watching the FIFO at `path` (made by the caller).
  explicit FifoReadWatchdog(std::string path)
      : path_(std::move(path)), thread_([this] { watch(); }) {}
  ~FifoReadWatchdog() { stop(); }
  FifoReadWatchdog(const FifoReadWatchdog&) = delete;
  FifoReadWatchdog& operator=(const FifoReadWatchdog&) = delete;

  // Stops watching; true when something had the FIFO open for reading meanwhile.
  bool stop() {
    if (thread_.joinable()) {
      done_ = true;
      thread_.join();
    }
    return opened_for_reading_;
  }

 private:
  void watch() {
    while (!done_) {
      const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) {
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) opened_for_reading_ = true;
        ::close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  std::string path_;
  std::atomic<bool> done_{false};
  std::atomic<bool> opened_for_reading_{false};
  std::thread thread_;  // last: starts once the members it reads exist
};

}  // namespace tessera_test
