#include <algorithm>

#include "dtnn/metric.hpp"

namespace dtnn {

void accumulate_binary_counts(const Tensor& y_pred, const Tensor& y_true, std::int64_t positive,
                              std::span<double> totals) {
  dispatch_dtype(y_pred.dtype(), [&](auto z) {
    using T = decltype(z);
    const std::int64_t n = y_pred.dim(0), m = y_pred.numel() / std::max<std::int64_t>(n, 1);
    const T *p = y_pred.data<T>(), *t = y_true.data<T>();
    auto is_positive = [&](const T* row) {
      return m == 1 ? row[0] >= T(0.5) : std::max_element(row, row + m) - row == positive;
    };
    for (std::int64_t r = 0; r < n; ++r) {
      const bool predicted = is_positive(p + r * m), actual = is_positive(t + r * m);
      totals[0] += predicted && actual;
      totals[1] += predicted && !actual;
      totals[2] += !predicted && actual;
    }
  });
}

}  // namespace dtnn
