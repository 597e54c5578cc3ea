#include <string>

#include "dtnn/class_targets.hpp"
#include "dtnn/error.hpp"
#include "dtnn/row_rule_loss.hpp"

namespace dtnn {

LossRows loss_rows(const Tensor& y, const Tensor& t, std::string_view who, bool per_sample,
                   bool class_ids, std::size_t weights) {
  LossRows s;
  if (y.numel() == 0) return s;
  if (per_sample) {
    s.rows = y.dim(0);
    s.m = y.numel() / s.rows;
  } else {
    s.m = y.shape()[y.shape().rank() - 1];
    s.rows = y.numel() / s.m;
  }
  if (t.numel() != y.numel()) {
    if (!class_ids || t.numel() != s.rows)
      throw Error(std::string(who) + ": targets " + t.shape().str() + " for predictions " +
                  y.shape().str() + ": expected targets of the predictions' shape" +
                  (class_ids ? " or one class id per row (" + std::to_string(s.rows) + ")" : ""));
    s.ids = true;
  }
  if (weights != 0 && static_cast<std::int64_t>(weights) != s.m)
    throw Error(std::string(who) + ": " + std::to_string(weights) + " class weights for " +
                std::to_string(s.m) + " classes: expected one weight per class");
  return s;
}

void throw_bad_class_id(const Tensor& y, const Tensor& t, std::string_view who, double ignored) {
  const Tensor host = t.to(Device::cpu);
  const ClassTargets targets(y, host, who, ignored);
  dispatch_dtype(host.dtype(), [&](auto z) {
    using T = decltype(z);
    for (std::int64_t r = 0; r < targets.rows(); ++r) targets.id(host.data<T>(), r);
  });
  throw Error(std::string(who) + ": a target is not a class id");
}

}  // namespace dtnn
