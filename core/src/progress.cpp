#include "dtnn/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "dtnn/communicator.hpp"
#include "format.hpp"

namespace dtnn {

std::string format_rate(double v) {
  return detail::group_thousands(static_cast<std::int64_t>(v + 0.5));
}

std::string format_metrics(const std::string& prefix, double loss,
                           const std::map<std::string, double>& metrics) {
  char b[64];
  std::snprintf(b, sizeof b, "%sloss %.4f", prefix.c_str(), loss);
  std::string s = b;
  for (const auto& [k, v] : metrics) {
    std::snprintf(b, sizeof b, "  %s%s %.4f", prefix.c_str(), k.c_str(), v);
    s += b;
  }
  return s;
}

Progress::Progress(ProgressStyle requested, Communicator& comm)
    : quiet_(requested == ProgressStyle::none), rank_(comm.rank()) {
  double bar_on_rank0 = requested == ProgressStyle::automatic
                            ? (isatty(STDOUT_FILENO) ? 1.0 : 0.0)
                            : (requested == ProgressStyle::bar ? 1.0 : 0.0);
  comm.broadcast(&bar_on_rank0, 1, DType::float64, 0, "progress style");
  bar_ = bar_on_rank0 != 0;
  last_draw_ = std::chrono::steady_clock::now();
}

void Progress::print(const std::string& line) const {
  if (rank_ != 0 || quiet_) return;
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

bool Progress::draw_due(std::int64_t step, std::int64_t steps) const {
  return bar_ &&
         (step + 1 == steps ||
          std::chrono::duration<double>(std::chrono::steady_clock::now() - last_draw_).count() >
              0.2);
}

void Progress::draw(std::int64_t epoch, std::int64_t epochs, std::int64_t step, std::int64_t steps,
                    double samples, std::int64_t epoch_samples, double seconds, double loss,
                    const std::map<std::string, double>& metrics) {
  last_draw_ = std::chrono::steady_clock::now();
  const int width = 30;
  const int done = static_cast<int>(width * (step + 1) / steps);
  char head[96];
  std::snprintf(head, sizeof head, "\rEpoch %lld/%lld [", static_cast<long long>(epoch + 1),
                static_cast<long long>(epochs));
  print(std::string(head) + std::string(static_cast<std::size_t>(done), '=') +
        std::string(static_cast<std::size_t>(width - done), ' ') + "] " +
        std::to_string(static_cast<std::int64_t>(samples)) + "/" + std::to_string(epoch_samples) +
        "  " + format_rate(seconds > 0 ? samples / seconds : 0.0) + " samples/s  " +
        format_metrics("", loss, metrics) + "\033[K");
}

void Progress::epoch_line(std::int64_t epoch, std::int64_t epochs, std::int64_t samples,
                          double seconds, const std::string& metrics) const {
  char head[160];
  std::snprintf(head, sizeof head, "Epoch %lld/%lld: %lld samples in %.2f s (%s samples/s)  ",
                static_cast<long long>(epoch + 1), static_cast<long long>(epochs),
                static_cast<long long>(samples), seconds,
                format_rate(seconds > 0 ? double(samples) / seconds : 0.0).c_str());
  print(std::string(bar_ ? "\r" : "") + head + metrics + (bar_ ? "\033[K\n" : "\n"));
}

}  // namespace dtnn
