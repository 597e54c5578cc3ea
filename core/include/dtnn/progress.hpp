// What a training run prints, on rank 0 only (and nothing with progress "none"): a bar that
// redraws itself on a terminal, or a plain line per epoch in a log, the test lines and the
// throughput line.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

class Communicator;

enum class ProgressStyle { automatic, bar, lines, none };

// 36102.4 -> "36,102"
DTNN_CORE_EXPORT std::string format_rate(double samples_per_second);
// "loss 0.4297  categorical_accuracy 0.8479", each name after prefix ("val_").
DTNN_CORE_EXPORT std::string format_metrics(const std::string& prefix, double loss,
                                            const std::map<std::string, double>& metrics);

class DTNN_CORE_EXPORT Progress {
 public:
  // automatic: a bar where rank 0's standard output is a terminal, else lines. The choice is
  // rank 0's for every rank (a collective: with several ranks the bar's values take one).
  Progress(ProgressStyle requested, Communicator& comm);

  bool bar() const { return bar_; }
  void print(const std::string& line) const;
  // Redraws the bar of epoch (from 0) at the end of step (from 0); at most every 0.2 s and at the
  // epoch's last step (draw() says when).
  bool draw_due(std::int64_t step, std::int64_t steps) const;
  void draw(std::int64_t epoch, std::int64_t epochs, std::int64_t step, std::int64_t steps,
            double samples, std::int64_t epoch_samples, double seconds, double loss,
            const std::map<std::string, double>& metrics);
  // "Epoch 2/5: 54000 samples in 1.51 s (35,843 samples/s)  loss ...  val_loss ...".
  void epoch_line(std::int64_t epoch, std::int64_t epochs, std::int64_t samples, double seconds,
                  const std::string& metrics) const;

 private:
  bool bar_ = false, quiet_ = false;
  int rank_ = 0;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace dtnn
