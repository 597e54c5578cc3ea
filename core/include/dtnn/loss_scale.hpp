// Loss scaling for fp16 products (training.precision "fp16", training.loss_scale): backward starts
// from the loss's gradient times the scale, so that small gradients stay above fp16's smallest
// values while rounded; the optimizer sees them divided by it again. Dynamic scaling (the
// default) halves the scale and skips the step whenever a gradient overflowed (is not finite),
// and doubles it after `growth_interval` finite steps in a row; a fixed scale never changes (its
// overflowing steps are still skipped).
#pragma once
#include <cstdint>

#include "dtnn/core_export.hpp"

namespace dtnn {

struct LossScaleOptions {
  bool enabled = false;
  double initial = 65536.0;  // 2^16, as PyTorch's GradScaler starts
  bool dynamic = true;
  std::int64_t growth_interval = 2000;
  std::int64_t good_steps = 0;  // finite steps in a row already counted (a resumed run's)
};

class DTNN_CORE_EXPORT LossScale {
 public:
  explicit LossScale(const LossScaleOptions& options);
  // What the loss's gradient is multiplied by this step (1 when disabled).
  double value() const { return options_.enabled ? scale_ : 1.0; }
  // After a step: whether every gradient was finite. Returns false when the step must be skipped
  // (an overflow under scaling).
  bool update(bool gradients_finite);
  std::int64_t overflows() const { return overflows_; }
  std::int64_t good_steps() const { return good_steps_; }
  bool enabled() const { return options_.enabled; }

 private:
  LossScaleOptions options_;
  double scale_;
  std::int64_t good_steps_ = 0, overflows_ = 0;
};

}  // namespace dtnn
