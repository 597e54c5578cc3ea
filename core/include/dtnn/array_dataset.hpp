// ArrayDataset: a dataset whose samples are held whole in memory as float rows, served in either
// layout. What datasets that load their arrays at once derive from (the npz plugin, the Python
// module's numpy arrays): they fill the parts, the shape and the classes; this reads batches.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/dataset.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT ArrayDataset : public Dataset {
 public:
  // sample_shape_ (H, W, C) is served as (C, H, W) to NCHW; any other rank as it is.
  Shape sample_shape(Layout layout) const override;
  std::int64_t num_classes() const override { return classes_; }
  bool value_labels() const override { return values_; }
  std::int64_t size(Split s) const override { return parts_[static_cast<int>(s)].count; }
  // Rows in parallel; an index outside the split is an internal error.
  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override;

 protected:
  struct Part {
    std::vector<float> x;  // [count][sample], a sample in HWC order (or features)
    std::vector<float> y;  // [count][classes]: one-hot rows, or target values
    std::int64_t count = 0;
  };
  Part& part(Split s) { return parts_[static_cast<int>(s)]; }

  Shape sample_shape_;  // per sample, HWC (or features)
  std::int64_t classes_ = 0;
  bool values_ = false;  // y holds target values, not one-hot rows

 private:
  Part parts_[2];
};

}  // namespace dtnn
