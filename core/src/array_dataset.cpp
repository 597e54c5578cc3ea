#include "dtnn/array_dataset.hpp"

#include "dtnn/error.hpp"
#include "dtnn/parallel.hpp"

namespace dtnn {

Shape ArrayDataset::sample_shape(Layout layout) const {
  if (sample_shape_.rank() != 3 || layout == Layout::nhwc) return sample_shape_;
  return Shape{sample_shape_[2], sample_shape_[0], sample_shape_[1]};
}

void ArrayDataset::read(Split s, std::span<const std::int64_t> indices, Tensor& x,
                        Tensor& y) const {
  const Part& p = parts_[static_cast<int>(s)];
  const std::int64_t size = sample_shape_.numel();
  const bool planes = sample_shape_.rank() == 3 && x.layout() == Layout::nchw;
  const std::int64_t hw = sample_shape_.rank() == 3 ? sample_shape_[0] * sample_shape_[1] : size;
  const std::int64_t c = size / hw;
  for (const std::int64_t id : indices)
    DTNN_CHECK(id >= 0 && id < p.count, "dataset: sample index out of range");
  dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
      const std::int64_t id = indices[static_cast<std::size_t>(i)];
      const float* src = p.x.data() + id * size;  // HWC
      T* dst = x.data<T>() + i * size;
      for (std::int64_t q = 0; q < hw; ++q)
        for (std::int64_t ch = 0; ch < c; ++ch)
          dst[planes ? ch * hw + q : q * c + ch] = static_cast<T>(src[q * c + ch]);
      const float* label = p.y.data() + id * classes_;
      T* row = y.data<T>() + i * classes_;
      for (std::int64_t k = 0; k < classes_; ++k) row[k] = static_cast<T>(label[k]);
    });
  });
}

}  // namespace dtnn
