// Dataset: sample shape, class count, split sizes, and reading samples by index into a batch.
#pragma once
#include <cstdint>
#include <span>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

enum class Split : std::uint8_t { train = 0, test = 1 };

class DTNN_CORE_EXPORT Dataset : public Plugin {
 public:
  ~Dataset() override;
  virtual Shape sample_shape(Layout layout) const = 0;  // e.g. {28, 28, 1} for NHWC
  virtual std::int64_t num_classes() const = 0;
  virtual std::int64_t size(Split split) const = 0;
  // Writes sample indices[i] of split into row i of x ([n, sample_shape]) and its one-hot
  // label into row i of y ([n, num_classes]); n = indices.size() <= x.dim(0). In-memory datasets
  // must not allocate; those that decode files may.
  virtual void read(Split split, std::span<const std::int64_t> indices, Tensor& x,
                    Tensor& y) const = 0;
  // A hint, given while the current batch trains: these samples are the next read. A dataset
  // that decodes (imagenet) starts on them in the background; the others ignore it.
  virtual void prefetch(Split split, std::span<const std::int64_t> indices) const {
    (void)split;
    (void)indices;
  }
};

}  // namespace dtnn
