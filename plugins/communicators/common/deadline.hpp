// How long a wait on the network may last: a point in time and the seconds it was set from, for
// the message that says it passed. Zero seconds: no limit.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

namespace dtnn_net {

struct Deadline {
  std::chrono::steady_clock::time_point at{};
  double seconds = 0;

  static Deadline after(double seconds) {
    return {std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(seconds)),
            seconds};
  }
  bool limited() const { return seconds > 0; }
  // Milliseconds left for poll(): -1 without a limit, 0 once passed.
  int poll_ms() const {
    if (!limited()) return -1;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(at - std::chrono::steady_clock::now())
            .count();
    return left <= 0 ? 0 : left > 1 << 30 ? 1 << 30 : static_cast<int>(left);
  }
  bool passed() const { return limited() && std::chrono::steady_clock::now() >= at; }
  // The seconds it was set from, as messages say them ("0.3", "60").
  std::string seconds_text() const {
    char text[32];
    std::snprintf(text, sizeof text, "%g", seconds);
    return text;
  }
};

}  // namespace dtnn_net
